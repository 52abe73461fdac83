#![doc = include_str!("../docs/polymorphic.md")]

use crate::query::{IntoFilter, IntoUpdate};
use pattern_derive::operation;
use std::marker::PhantomData;

use bson::{Bson, Document};
use futures_util::TryStreamExt;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{check_size, Error, Result};
use crate::index::IndexSpec;
pub use crate::model::Projection;
use crate::model::{Model, ModelCollection};
use crate::schema::{Fields, IndexesNeeded, ModelSchema, PatternSpec};
use crate::writes::{Updated, Written};

/// An enum model: `#[derive(Model)]` on a serde internally tagged enum implements it.
pub trait Polymorphic: Model {
    /// The tag's BSON key (`#[serde(tag = "type")]`).
    const TAG: &'static str;
    /// The tag value of each variant with fields, in declaration order.
    const TAGS: &'static [&'static str];
    /// Whether a `#[serde(other)]` variant reads documents with any other tag.
    const CATCH_ALL: bool;
    /// The generated fieldless enum of the variants (`NotificationKind`).
    type Kind: Copy + Eq + std::fmt::Debug + Send + Sync + 'static;
    /// The generated struct of the tag (`kind`) and the common fields (`NotificationCommon`).
    type Common: Fields + DeserializeOwned + Send + Sync + Unpin + 'static;

    /// The variant of this value.
    fn kind(&self) -> Self::Kind;
}

/// The generated struct of one variant of a polymorphic model (`NotificationPush`): what its
/// handle, [`VariantCollection`], reads and writes.
pub trait Variant:
    Fields + Serialize + DeserializeOwned + Send + Sync + Unpin + Sized + 'static
{
    /// The enum.
    type Model: Polymorphic + From<Self>;
    /// The tag value of this variant's documents.
    const TAG_VALUE: &'static str;
}

/// The polymorphic pattern's static data on an enum model: the index on the tag, created with
/// the model's unless one of the model's own indexes begins with the tag.
#[derive(Debug)]
pub struct PolymorphicSpec {
    tag_index: &'static IndexSpec,
}

impl PolymorphicSpec {
    #[doc(hidden)]
    pub const fn from_parts(tag_index: &'static IndexSpec) -> Self {
        PolymorphicSpec { tag_index }
    }

    /// The index on the tag (`type_1`).
    pub fn tag_index(&self) -> &'static IndexSpec {
        self.tag_index
    }
}

impl PatternSpec for PolymorphicSpec {
    fn indexes(&'static self, model: &'static ModelSchema) -> IndexesNeeded {
        vec![(model.collection(), self.tag_index)]
    }
}

impl<M: Polymorphic> ModelCollection<M> {
    /// The handle on one variant's documents, `V::collection(&db)`, reached from the enum's
    /// handle: every operation adds `{tag: value}` itself. In the caller's transaction when this
    /// handle is ([`in_transaction`](ModelCollection::in_transaction)).
    pub fn variant<V: Variant<Model = M>>(&self) -> VariantCollection<V> {
        VariantCollection {
            db: self.database().clone(),
            raw: self.database().collection(M::SCHEMA.collection()),
            tx: self.transaction().cloned(),
            _variant: PhantomData,
        }
    }

    /// The documents of every variant matching `filter`, projected to the tag and the common
    /// fields (the generated `Common` struct).
    #[operation(polymorphic.find_common, level = "debug", no_err)]
    pub async fn find_common(&self, filter: impl IntoFilter) -> Result<Vec<M::Common>> {
        let filter = filter.into_filter()?;
        let projection = crate::model::projection_of(<M::Common as Fields>::KEYS);
        let cursor = self
            .database()
            .collection::<M::Common>(M::SCHEMA.collection())
            .find(filter)
            .projection(projection)
            .await?;
        read_all(cursor).await
    }
}

/// Why a stored document does not read as the enum `M`: its tag names no variant
/// ([`Error::UnknownVariant`]), or a known variant has a field of the wrong shape (serde's
/// error). For generated code ([`Model::unreadable`](crate::Model::unreadable)).
#[doc(hidden)]
pub fn unreadable_variant<M: Polymorphic>(doc: &Document, e: bson::error::Error) -> Error {
    let value = doc.get_str(M::TAG).ok();
    if value.is_some_and(|v| M::TAGS.contains(&v)) {
        // A known variant with a field of the wrong shape: serde's error says which.
        return Error::from(e);
    }
    Error::UnknownVariant {
        model: M::SCHEMA.name(),
        collection: M::SCHEMA.collection().to_owned(),
        tag: M::TAG,
        value: value.map(str::to_owned),
        id: doc.get("_id").cloned().map(Box::new),
        known: M::TAGS,
    }
}

/// The documents of one variant of a polymorphic model: from [`ModelCollection::variant`].
/// Every filter gets `{tag: value}`, every inserted document the tag, and no update may change
/// the tag (that would move a document to another variant behind the types' back).
#[derive_where::derive_where(Clone)]
pub struct VariantCollection<V: Variant> {
    db: mongodb::Database,
    raw: mongodb::Collection<Document>,
    /// The caller's transaction, when the model's handle is bound to one.
    tx: Option<crate::txn::Transaction>,
    _variant: PhantomData<fn() -> V>,
}

crate::span::spanned!(impl<V: Variant> VariantCollection<V> =>
    V::Model::SCHEMA,
    V::Model::SCHEMA.collection()
);

impl<V: Variant> std::fmt::Debug for VariantCollection<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VariantCollection")
            .field("model", &V::Model::SCHEMA.name())
            .field("tag", &V::TAG_VALUE)
            .field("namespace", &self.raw.namespace())
            .finish()
    }
}

impl<V: Variant> VariantCollection<V> {
    /// The handle on `V`'s documents in `db`: what the generated `V::collection(&db)` returns
    /// (`NotificationEmail::collection(&db)`), and the same handle as
    /// [`ModelCollection::variant`] from the enum's.
    pub fn new(db: &mongodb::Database) -> Self {
        VariantCollection {
            db: db.clone(),
            raw: db.collection(V::Model::SCHEMA.collection()),
            tx: None,
            _variant: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same handle in the caller's transaction `tx`: its reads and writes run in it, and
        /// commit or abort with it (see [`Transaction`](crate::Transaction)).
    }

    /// `filter` restricted to this variant: `{tag: value, ...filter}`.
    /// [`Error::InvalidKey`] if `filter` names the tag at its top level. A condition on the tag
    /// inside `$or` or `$and` is sent as written: beside the variant's own tag, it matches
    /// nothing of another variant.
    pub fn filter(&self, filter: impl IntoFilter) -> Result<Document> {
        let filter = filter.into_filter()?;
        let tag = <V::Model as Polymorphic>::TAG;
        if filter.contains_key(tag) {
            return Err(Error::InvalidKey {
                key: tag.to_owned(),
                reason: "a variant's handle adds the tag to every filter itself; query across \
                         variants through the model's collection",
            });
        }
        let mut out = Document::new();
        out.insert(tag, V::TAG_VALUE);
        out.extend(filter);
        Ok(out)
    }

    /// The variant's document with this `_id`, if there is one (`None` for a document of
    /// another variant).
    pub fn get<'a>(
        &'a self,
        id: impl crate::model::IntoId<<V::Model as Model>::Id>,
    ) -> crate::model::Pending<'a, Result<Option<V>>> {
        let id = id.into_id();
        crate::model::Pending::new(async move {
            let id = crate::literal::typed_id("_id", id)?;
            self.find_one(bson::doc! { "_id": id }).await
        })
    }

    /// The variant's documents matching `filter`.
    #[operation(polymorphic.find, level = "debug", no_err, variant = V::TAG_VALUE)]
    pub async fn find(&self, filter: impl IntoFilter) -> Result<Vec<V>> {
        let filter = self.filter(filter)?;
        let cursor = self.raw.clone_with_type::<V>().find(filter).await?;
        read_all(cursor).await
    }

    /// The first of the variant's documents matching `filter`.
    #[operation(polymorphic.find_one, level = "debug", no_err, variant = V::TAG_VALUE)]
    pub async fn find_one(&self, filter: impl IntoFilter) -> Result<Option<V>> {
        let filter = self.filter(filter)?;
        Ok(self.raw.clone_with_type::<V>().find_one(filter).await?)
    }

    /// The variant's documents matching `filter`, projected to `P`'s fields: `P` is a
    /// `#[derive(Deserialize, Fields)]` struct declared `#[projection(of = V)]`, so every field of
    /// `P` is known at compile time to be a field of the variant. The server adds `_id` unless
    /// asked not to, and `P` may leave it out.
    #[operation(polymorphic.find_as, level = "debug", no_err, variant = V::TAG_VALUE)]
    pub async fn find_as<P: Projection<V>>(&self, filter: impl IntoFilter) -> Result<Vec<P>> {
        let filter = self.filter(filter)?;
        let cursor = self
            .raw
            .clone_with_type::<P>()
            .find(filter)
            .projection(crate::model::projection_of(P::KEYS))
            .await?;
        read_all(cursor).await
    }

    /// How many of the variant's documents match `filter`.
    #[operation(polymorphic.count, level = "debug", no_err, variant = V::TAG_VALUE)]
    pub async fn count(&self, filter: impl IntoFilter) -> Result<u64> {
        let filter = self.filter(filter)?;
        Ok(self.raw.count_documents(filter).await?)
    }

    /// The stored form of `value`: the tag first, then the variant's fields.
    pub fn document(&self, value: &V) -> Result<Document> {
        let tag = <V::Model as Polymorphic>::TAG;
        let mut out = Document::new();
        out.insert(tag, V::TAG_VALUE);
        out.extend(bson::serialize_to_document(value)?);
        // A key starting with `$`, holding `.` or NUL is refused, as in every insert.
        crate::literal::check_document(<V::Model as Model>::SCHEMA.name(), &out)?;
        crate::derived::check_written(<V::Model as Model>::SCHEMA, &out)?;
        check_size(&out, <V::Model as Model>::SCHEMA.name())?;
        Ok(out)
    }

    /// Inserts `value` with its tag; returns its `_id` (the server's, if `value` has none).
    /// Stored literally, as every value the toolkit writes: a key with `$`, `.` or NUL, or an
    /// operator document as the `_id`, is [`Error::InvalidValue`] before anything is sent (see
    /// [safety](crate::guide::safety)); a taken `_id` is [`Error::DuplicateKey`].
    #[operation(polymorphic.insert, variant = V::TAG_VALUE)]
    pub async fn insert(&self, value: &V) -> Result<Written> {
        let doc = self.document(value)?;
        self.writes().insert(doc).await
    }

    /// Inserts every value with its tag, in order, all or nothing (one transaction for
    /// several); returns their `_id`s. Every document is serialized and checked before the
    /// first is written.
    #[operation(polymorphic.insert_many, variant = V::TAG_VALUE, count = values.len())]
    pub async fn insert_many(&self, values: &[V]) -> Result<Vec<Written>> {
        let docs = values
            .iter()
            .map(|v| self.document(v))
            .collect::<Result<Vec<_>>>()?;
        self.writes().insert_many(docs).await
    }

    /// Replaces the variant's stored document with `value`'s `_id` by `value` (its tag first),
    /// keeping what derives from it. [`Error::NotFound`] when the variant has no document with
    /// that `_id` (a document of another variant is not replaced: change a document's variant
    /// through the enum's handle); [`Error::KeptField`] when `value` changes a field another
    /// pattern keeps. Nothing is written then.
    #[operation(polymorphic.replace, variant = V::TAG_VALUE)]
    pub async fn replace(&self, value: &V) -> Result<Written> {
        let doc = self.document(value)?;
        let id = crate::derived::replaced_id(&doc)?;
        let tag = <V::Model as Polymorphic>::TAG;
        let scope = bson::doc! { tag: V::TAG_VALUE };
        self.writes().replace(doc, id, scope).await
    }

    /// Applies an operator update (a typed [`Update`](crate::query::Update), or an update
    /// document, checked) to the variant's document `id`, keeping what derives from it.
    /// [`Error::InvalidKey`] (nothing written) if `update` would set, unset or rename the tag;
    /// [`Error::NotFound`] when the variant has no document `id`.
    pub fn update<'a>(
        &'a self,
        id: impl crate::model::IntoId<<V::Model as Model>::Id>,
        update: impl IntoUpdate,
    ) -> crate::model::Pending<'a, Result<Written>> {
        let (id, update) = (id.into_id(), update.into_update());
        crate::model::Pending::new(async move {
            let id = crate::literal::typed_id("_id", id)?;
            self.update_one_op(id, update?).await
        })
    }

    #[operation(polymorphic.update, variant = V::TAG_VALUE, later(id))]
    async fn update_one_op(&self, id: Bson, update: Document) -> Result<Written> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let result = self
            .write(bson::doc! { "_id": id.clone() }, update, false)
            .await?;
        if result.matched == 0 {
            return Err(Error::NotFound {
                collection: <V::Model as Model>::SCHEMA.collection().to_owned(),
                missing: Box::new(crate::error::Missing::Document { id }),
            });
        }
        Ok(Written::new(id, None))
    }

    /// Applies an operator update to every one of the variant's documents matching `filter`;
    /// checked as [`update`](Self::update) is.
    #[operation(polymorphic.update_many, variant = V::TAG_VALUE)]
    pub async fn update_many(
        &self,
        filter: impl IntoFilter,
        update: impl IntoUpdate,
    ) -> Result<Updated> {
        self.write(filter.into_filter()?, update.into_update()?, true)
            .await
    }

    /// `update` or `update_many`, inside the caller's span.
    async fn write(&self, filter: Document, update: Document, many: bool) -> Result<Updated> {
        let filter = self.filter(filter)?;
        check_update::<V>(&update)?;
        crate::derived::check_update(V::Model::SCHEMA, &update)?;
        let modifications = mongodb::options::UpdateModifications::Document(update.clone());
        let fields = crate::derived::updated_fields(&modifications);
        let fields: Option<Vec<&str>> = fields
            .as_ref()
            .map(|f| f.iter().map(String::as_str).collect());
        let model = V::Model::SCHEMA;
        let tx = self.tx.as_ref();
        crate::derived::update_kept(&self.db, tx, model, filter, update, fields.as_deref(), many)
            .await
    }

    /// Deletes the variant's document `id`, keeping what derives from it.
    /// [`Error::NotFound`] when the variant has no document `id`.
    pub fn delete<'a>(
        &'a self,
        id: impl crate::model::IntoId<<V::Model as Model>::Id>,
    ) -> crate::model::Pending<'a, Result<()>> {
        let id = id.into_id();
        crate::model::Pending::new(async move {
            let id = crate::literal::typed_id("_id", id)?;
            if self.remove(bson::doc! { "_id": id.clone() }).await? == 0 {
                return Err(Error::NotFound {
                    collection: <V::Model as Model>::SCHEMA.collection().to_owned(),
                    missing: Box::new(crate::error::Missing::Document { id }),
                });
            }
            Ok(())
        })
    }

    /// Deletes the variant's documents matching `filter`, keeping what derives from them;
    /// returns how many.
    pub async fn delete_many(&self, filter: impl IntoFilter) -> Result<u64> {
        self.remove(filter.into_filter()?).await
    }

    #[operation(polymorphic.delete, variant = V::TAG_VALUE)]
    async fn remove(&self, filter: Document) -> Result<u64> {
        let filter = self.filter(filter)?;
        self.writes().delete_many(filter).await
    }

    /// The model's write bodies, on this handle's transaction: a variant's documents are the
    /// model's.
    fn writes(&self) -> crate::computed::write::Writes {
        crate::computed::write::Writes::new(&self.db, V::Model::SCHEMA, self.tx.as_ref())
    }
}

/// Refuses an update that touches the tag, that is not made of update operators, or that sets
/// a value that could not be stored as given.
fn check_update<V: Variant>(update: &Document) -> Result<()> {
    crate::literal::check_not_empty(update)?;
    let tag = <V::Model as Polymorphic>::TAG;
    for (op, fields) in update {
        if !op.starts_with('$') {
            return Err(Error::InvalidKey {
                key: op.clone(),
                reason: "an update through a variant's handle is made of update operators \
                         (`$set`, `$inc`, ...); a replacement would drop the tag",
            });
        }
        let touches = |key: &str| key == tag || key.starts_with(&format!("{tag}."));
        let named = match fields {
            Bson::Document(d) => d.iter().any(|(k, v)| {
                touches(k) || (op == "$rename" && matches!(v, Bson::String(to) if touches(to)))
            }),
            _ => false,
        };
        if named {
            return Err(Error::InvalidKey {
                key: tag.to_owned(),
                reason: "an update through a variant's handle cannot change the tag: that would \
                         move documents to another variant behind the types' back; write the \
                         other variant instead",
            });
        }
    }
    // The checks of every handle's update: operators of named fields, `_id` left alone, stored
    // values as given.
    crate::literal::touched_fields(
        update,
        "a document's `_id` never changes: insert another document instead",
    )?;
    Ok(())
}

/// Every document of `cursor`, with a `DEBUG` event of how many.
async fn read_all<T>(cursor: mongodb::Cursor<T>) -> Result<Vec<T>>
where
    T: serde::de::DeserializeOwned + Send + Sync,
{
    let found: Vec<T> = cursor.try_collect().await?;
    tracing::debug!(read = found.len(), "documents read");
    Ok(found)
}

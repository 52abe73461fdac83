#![doc = include_str!("../../docs/polymorphic.md")]

use crate::typed::{IntoFilter, IntoUpdate};
use std::marker::PhantomData;

use bson::{Bson, Document};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{check_size, Error, Result};
use crate::index::IndexSpec;
use crate::model::writes::{Updated, Written};
pub use crate::model::Projection;
use crate::model::{Model, ModelCollection};
use crate::schema::{Fields, IndexesNeeded, ModelSchema, PatternSpec};

mod read;
mod spec;
mod write;

pub use spec::PolymorphicSpec;

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

/// Why a stored document does not read as the enum `M`: its tag names no variant
/// ([`Error::UnknownVariant`]), or a known variant has a field of the wrong shape (serde's
/// error). For generated code ([`Model::unreadable`](crate::model::Model::unreadable)).
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
        /// commit or abort with it (see [`Transaction`](crate::txn::Transaction)).
    }

    /// `filter` restricted to this variant: `{tag: value, ...filter}`.
    /// [`Error::InvalidKey`] if `filter` names the tag at its top level. A condition on the tag
    /// inside `$or` or `$and` is sent as written: beside the variant's own tag, it matches
    /// nothing of another variant.
    pub fn filter(&self, filter: impl IntoFilter<V>) -> Result<Document> {
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
}

/// The documents a read found, with a `DEBUG` event of how many.
fn read<T>(found: Vec<T>) -> Vec<T> {
    tracing::debug!(read = found.len(), "documents read");
    found
}

//! The writes of one variant's documents: the tag added to each, never changed by an update.

use super::*;
use crate::span::Spanned as _;

impl<V: Variant> VariantCollection<V> {
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

    /// Inserts `value` with its tag; returns what it wrote ([`Written`]: its `_id`, the server's
    /// if `value` has none).
    /// Stored literally, as every value the toolkit writes: a key with `$`, `.` or NUL, or an
    /// operator document as the `_id`, is [`Error::InvalidValue`] before anything is sent (see
    /// [safety](crate::guide::safety)); a taken `_id` is [`Error::DuplicateKey`].
    pub async fn insert(&self, value: &V) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.insert",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
            async move {
                let doc = self.document(value)?;
                self.writes().insert(doc).await
            },
        )
        .await
    }

    /// Inserts every value with its tag, in order, all or nothing (one transaction for
    /// several); returns their `_id`s. Every document is serialized and checked before the
    /// first is written.
    pub async fn insert_many(&self, values: &[V]) -> Result<Vec<Written>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.insert_many",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE,
                count = values.len()
            ),
            async move {
                let docs = values
                    .iter()
                    .map(|v| self.document(v))
                    .collect::<Result<Vec<_>>>()?;
                self.writes().insert_many(docs).await
            },
        )
        .await
    }

    /// Replaces the variant's stored document with `value`'s `_id` by `value` (its tag first),
    /// keeping what derives from it. [`Error::NotFound`] when the variant has no document with
    /// that `_id` (a document of another variant is not replaced: change a document's variant
    /// through the enum's handle); [`Error::KeptField`] when `value` changes a field another
    /// pattern keeps. Nothing is written then.
    pub async fn replace(&self, value: &V) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.replace",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
            async move {
                let doc = self.document(value)?;
                let id = crate::derived::replaced_id(&doc)?;
                let tag = <V::Model as Polymorphic>::TAG;
                let scope = bson::doc! { tag: V::TAG_VALUE };
                self.writes().replace(doc, id, scope).await
            },
        )
        .await
    }

    /// Applies an operator update (a typed [`Update`](crate::typed::Update), or an update
    /// document, checked) to the variant's document `id`, keeping what derives from it.
    /// [`Error::InvalidKey`] (nothing written) if `update` would set, unset or rename the tag;
    /// [`Error::NotFound`] when the variant has no document `id`.
    pub fn update<'a>(
        &'a self,
        id: impl crate::model::IntoId<<V::Model as Model>::Id>,
        update: impl IntoUpdate<V>,
    ) -> crate::model::Pending<'a, Result<Written>> {
        let (id, update) = (id.into_id(), update.into_update());
        crate::model::Pending::new(async move {
            let id = crate::literal::typed_id("_id", id)?;
            self.update_one_op(id, update?).await
        })
    }

    async fn update_one_op(&self, id: Bson, update: Document) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.update",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE,
                id = tracing::field::Empty
            ),
            async move {
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
            },
        )
        .await
    }

    /// Applies an operator update to every one of the variant's documents matching `filter`;
    /// checked as [`update`](Self::update) is.
    pub async fn update_many(
        &self,
        filter: impl IntoFilter<V>,
        update: impl IntoUpdate<V>,
    ) -> Result<Updated> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.update_many",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
            async move {
                self.write(filter.into_filter()?, update.into_update()?, true)
                    .await
            },
        )
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
            .map(Updated::from)
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
    pub async fn delete_many(&self, filter: impl IntoFilter<V>) -> Result<u64> {
        self.remove(filter.into_filter()?).await
    }

    async fn remove(&self, filter: Document) -> Result<u64> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::polymorphic.delete",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
            async move {
                let filter = self.filter(filter)?;
                self.writes().delete_many(filter).await
            },
        )
        .await
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

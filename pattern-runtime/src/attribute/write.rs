//! Writing attributes: one item per key, set or unset in one pipeline update.

use super::*;
use crate::span::Spanned as _;

impl<M: Model, I: AttributeItem> Attributes<M, I> {
    /// Sets `item` on document `id`: replaces the item with the same key where it is (dropping
    /// any later duplicate of it), or appends it, in one atomic pipeline update.
    /// [`Error::NotFound`] when there is no such document.
    pub fn set<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        item: &'a I,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.set_op(id.into_id(), item))
    }

    async fn set_op(&self, id: M::Id, item: &I) -> Result<()> {
        crate::span::operation(tracing::info_span!("pattern_runtime::attribute.set", model = self.span_model(), collection = self.span_collection(), id = tracing::field::Empty), async move {
        let id = crate::literal::span_id(id)?;
        let key = Self::key_str(item.key())?;
        let item = bson::serialize_to_document(item)?;
        crate::literal::check_document(self.spec.field(), &item)?;
        check_size(&item, "the attribute item")?;
        // The item and the key are data: `$literal` keeps the pipeline from reading a string
        // starting with `$` as a field path or a document as an expression.
        let item = crate::literal::literal(item);
        let key_value = crate::literal::literal(key.as_str());
        let f = format!("${}", self.spec.field());
        // The keys through `$map`, not `$$a.<key>`: not every server traverses arrays in
        // expression paths (the embedded test server does not).
        let names = doc! { "$map": { "input": "$$a", "in": format!("$$this.{}", I::KEY) } };
        let this_key = format!("$$this.{}", I::KEY);
        // a: the items (none yet: []); i: the first with the key, or -1.
        let value = doc! {
            "$let": {
                "vars": { "a": { "$ifNull": [&f, []] } },
                "in": { "$let": {
                    "vars": { "i": { "$indexOfArray": [&names, &key_value] } },
                    "in": { "$cond": [
                        { "$eq": ["$$i", -1] },
                        { "$concatArrays": ["$$a", [item.clone()]] },
                        { "$concatArrays": [
                            { "$slice": ["$$a", "$$i"] },
                            [item],
                            { "$filter": {
                                "input": { "$slice": ["$$a", { "$subtract": [{ "$add": ["$$i", 1] }, { "$size": "$$a" }] }] },
                                "cond": { "$ne": [&this_key, &key_value] },
                            } },
                        ] },
                    ] },
                } },
            }
        };
        let pipeline = vec![doc! { "$set": { self.spec.field(): value } }];
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            doc! { "_id": id.clone() },
            pipeline,
            &[self.spec.field()],
        )
        .await?;
        if result.matched_count == 0 {
            return Err(Self::not_found(id));
        }
        tracing::debug!(key, modified = result.modified_count, "attribute set");
        Ok(())
    })
        .await
    }

    /// Removes every item with `key` from document `id` (nothing to remove is not an error).
    /// [`Error::NotFound`] when there is no such document.
    pub fn unset<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        key: impl IntoId<I::Key>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.unset_op(id.into_id(), key.into_id()))
    }

    async fn unset_op(&self, id: M::Id, key: I::Key) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::attribute.unset",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let key = Self::key_str(&key)?;
                let result = crate::derived::update_one(
                    &self.db,
                    self.tx.as_ref(),
                    M::SCHEMA,
                    doc! { "_id": id.clone() },
                    doc! { "$pull": { self.spec.field(): { I::KEY: &key } } },
                    &[self.spec.field()],
                )
                .await?;
                if result.matched_count == 0 {
                    return Err(Self::not_found(id));
                }
                tracing::debug!(key, removed = result.modified_count, "attribute unset");
                Ok(())
            },
        )
        .await
    }
}

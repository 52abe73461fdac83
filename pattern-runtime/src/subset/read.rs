//! Reading a subset: the full items past the embedded ones, and the count, in the subset's
//! transaction when it is bound to one.

use super::*;
use crate::span::Spanned as _;
use crate::txn::{collect_in, in_session};

impl<P, F, E> Subset<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    /// Items of the full collection in the subset's order: `skip` of them, then at most `limit`
    /// (no item for a limit of 0; past the last item, fewer or none). The pages after the
    /// embedded one start at `skip = limit of the subset`. In the subset's transaction if it
    /// has one.
    pub fn page<'a>(
        &'a self,
        parent_id: impl IntoId<P::Id>,
        skip: u64,
        limit: u64,
    ) -> crate::model::Pending<'a, Result<Vec<F>>> {
        crate::model::Pending::new(self.page_op(parent_id.into_id(), skip, limit))
    }

    async fn page_op(&self, parent_id: P::Id, skip: u64, limit: u64) -> Result<Vec<F>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::subset.page",
                model = self.span_model(),
                collection = self.span_collection(),
                items_collection = self.spec.full_collection(),
                field = self.spec.field(),
                skip,
                limit,
                id = tracing::field::Empty
            ),
            async move {
                let parent_id = crate::literal::typed_id("_id", parent_id)?;
                tracing::Span::current().record("id", tracing::field::display(&parent_id));
                // The server reads a limit of 0 as no limit at all, and takes neither a skip nor a
                // limit past `i64::MAX`: a skip that large is past every collection's last item.
                if limit == 0 || i64::try_from(skip).is_err() {
                    return Ok(Vec::new());
                }
                let filter = doc! { self.spec.parts.parent_key: parent_id };
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let fulls = self
                    .db
                    .collection::<bson::RawDocumentBuf>(self.spec.full_collection());
                let find = fulls
                    .find(filter)
                    .sort(self.spec.sort_document())
                    .skip(skip)
                    .limit(i64::try_from(limit).unwrap_or(i64::MAX));
                // Bound: the cursor's batches are read through the transaction's session.
                let raws = collect_in!(find, session.as_deref_mut())?;
                crate::model::read::decode_read(&raws)
            },
        )
        .await
    }

    /// How many items the parent has: its count field when one is declared (one read of one
    /// field), else a count of the full collection. In the subset's transaction if it has one.
    pub fn count<'a>(
        &'a self,
        parent_id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<i64>> {
        crate::model::Pending::new(self.count_op(parent_id.into_id()))
    }

    async fn count_op(&self, parent_id: P::Id) -> Result<i64> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::subset.count",
                model = self.span_model(),
                collection = self.span_collection(),
                items_collection = self.spec.full_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let parent_id = crate::literal::typed_id("_id", parent_id)?;
                tracing::Span::current().record("id", tracing::field::display(&parent_id));
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let Some(field) = self.spec.count_field() else {
                    let filter = doc! { self.spec.parts.parent_key: parent_id };
                    let fulls = self.fulls();
                    let count = fulls.count_documents(filter);
                    let n = in_session!(count, session.as_deref_mut())?;
                    return Ok(i64::try_from(n).unwrap_or(i64::MAX));
                };
                let parents = self.parents();
                let find = parents
                    .find_one(doc! { "_id": parent_id.clone() })
                    .projection(doc! { field: 1 });
                let parent = in_session!(find, session.as_deref_mut())?
                    .ok_or_else(|| self.parent_not_found(parent_id))?;
                Ok(match parent.get(field) {
                    Some(Bson::Int32(i)) => i64::from(*i),
                    Some(Bson::Int64(i)) => *i,
                    #[allow(clippy::cast_possible_truncation)]
                    Some(Bson::Double(d)) => *d as i64,
                    _ => 0,
                })
            },
        )
        .await
    }
}

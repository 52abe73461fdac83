//! Reading an outlier field's items: the main document's, then the overflow documents' in order.

use super::*;
use crate::span::Spanned as _;

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> Outlier<P, T> {
    /// Reads the main document's flag, count and embedded items, in `session` when there is
    /// one.
    async fn read_main(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
    ) -> Result<(bool, i64, Vec<T>)> {
        let spec = self.spec;
        let main = self.main();
        let find = main
            .find_one(doc! { "_id": id.clone() })
            .projection(doc! { spec.flag(): 1, spec.count(): 1, spec.field(): 1 });
        let main = in_session!(find, session)?.ok_or_else(|| self.not_found(id.clone()))?;
        Ok((
            main.get_bool(spec.flag()).unwrap_or(false),
            int(main.get(spec.count())),
            items_in(&main, spec.field())?,
        ))
    }

    /// Every item of the document `id` as a stream, in push order: the embedded ones (read
    /// with the main document), then (for an outlier only) each overflow document's as the
    /// cursor brings it, so a long list is never all in memory. [`Error::NotFound`] when there
    /// is no such document.
    ///
    /// On a handle bound to a transaction ([`in_transaction`](Self::in_transaction)), the
    /// overflow documents are read in its session before the stream is returned, then yielded
    /// from memory: the session is the caller's other operations' too, and cannot stay with a
    /// stream that outlives this call.
    pub fn stream<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<BoxStream<'static, Result<T>>>> {
        crate::model::Pending::new(self.stream_op(id.into_id()))
    }

    async fn stream_op(&self, id: P::Id) -> Result<BoxStream<'static, Result<T>>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::outlier.stream",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                self.stream_at(id).await
            },
        )
        .await
    }

    /// [`stream`](Self::stream) of an id already checked.
    async fn stream_at(&self, id: Bson) -> Result<BoxStream<'static, Result<T>>> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let (outlier, _, items) = self.read_main(session.as_deref_mut(), &id).await?;
        let embedded = stream::iter(items.into_iter().map(Ok));
        if !outlier {
            return Ok(embedded.boxed());
        }
        let field = self.spec.field();
        let overflow = self.overflow();
        let find = overflow
            .find(doc! { self.spec.parent(): parent_is(&id) })
            .projection(doc! { field: 1 })
            .sort(doc! { SEQ: 1 });
        if session.is_some() {
            // In the caller's transaction: read in its session now, yielded from memory.
            let docs: Vec<Document> = collect_in!(find, session.as_deref_mut())?;
            let overflowed = stream::iter(docs)
                .map(move |d| items_in::<T>(&d, field))
                .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
                .try_flatten();
            return Ok(embedded.chain(overflowed).boxed());
        }
        let overflowed = find
            .await?
            .map_err(Error::from)
            .and_then(move |d| async move { items_in::<T>(&d, field) })
            .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
            .try_flatten();
        Ok(embedded.chain(overflowed).boxed())
    }

    /// Every item of the document `id`, in the order they were pushed: the embedded ones, then
    /// (for an outlier only) the overflow documents' in `seq` order. [`Error::NotFound`] when
    /// there is no such document.
    pub fn items<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<Vec<T>>> {
        crate::model::Pending::new(self.items_op(id.into_id()))
    }

    async fn items_op(&self, id: P::Id) -> Result<Vec<T>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::outlier.items",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                self.stream_at(id).await?.try_collect().await
            },
        )
        .await
    }

    /// The items of the document `id` in push order: `skip` of them, then at most `limit` (no
    /// item for a limit of 0; past the last item, fewer or none). Reads the main document, and for an outlier whose page reaches past it, the overflow documents' sizes
    /// (one aggregation) and only the overflow documents holding the page.
    pub fn page<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
        skip: u64,
        limit: u64,
    ) -> crate::model::Pending<'a, Result<Vec<T>>> {
        crate::model::Pending::new(self.page_op(id.into_id(), skip, limit))
    }

    async fn page_op(&self, id: P::Id, skip: u64, limit: u64) -> Result<Vec<T>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::outlier.page",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                skip,
                limit,
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let (outlier, _, embedded) = self.read_main(session.as_deref_mut(), &id).await?;
                let (skip, limit) = (
                    usize::try_from(skip).unwrap_or(usize::MAX),
                    usize::try_from(limit).unwrap_or(usize::MAX),
                );
                let embedded_len = embedded.len();
                let end = skip.saturating_add(limit);
                let mut page: Vec<T> = embedded.into_iter().skip(skip).take(limit).collect();
                if !outlier || end <= embedded_len || limit == 0 {
                    return Ok(page);
                }
                // Overflow item k is item `embedded_len + k`: the page wants overflow items from..to.
                let (from, to) = (skip.saturating_sub(embedded_len), end - embedded_len);
                let mut wanted: Vec<i64> = Vec::new();
                let mut skip_in_first = 0;
                let mut at = 0usize;
                for (seq, n) in self.overflow_sizes(session.as_deref_mut(), &id).await? {
                    if at + n > from && at < to {
                        if wanted.is_empty() {
                            skip_in_first = from.saturating_sub(at);
                        }
                        wanted.push(seq);
                    }
                    at += n;
                    if at >= to {
                        break;
                    }
                }
                if wanted.is_empty() {
                    return Ok(page);
                }
                let overflow = self.overflow();
                let find = overflow
                    .find(doc! { self.spec.parent(): parent_is(&id), SEQ: { "$in": wanted } })
                    .projection(doc! { self.spec.field(): 1 })
                    .sort(doc! { SEQ: 1 });
                let mut items = Vec::new();
                for d in collect_in!(find, session.as_deref_mut())? {
                    items.extend(items_in(&d, self.spec.field())?);
                }
                let room = limit - page.len();
                page.extend(items.into_iter().skip(skip_in_first).take(room));
                Ok(page)
            },
        )
        .await
    }

    /// The overflow documents of `id`: `(seq, items)`, in `seq` order (one aggregation), in
    /// `session` when there is one.
    async fn overflow_sizes(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
    ) -> Result<Vec<(i64, usize)>> {
        let overflow = self.overflow();
        let sizes = overflow.aggregate([
            doc! { "$match": { self.spec.parent(): parent_is(id) } },
            doc! { "$sort": { SEQ: 1 } },
            doc! { "$project": { SEQ: 1, "n": { "$size": format!("${}", self.spec.field()) } } },
        ]);
        let docs: Vec<Document> = collect_in!(sizes, session)?;
        Ok(docs
            .iter()
            .map(|d| {
                (
                    int(d.get(SEQ)),
                    usize::try_from(int(d.get("n"))).unwrap_or(0),
                )
            })
            .collect())
    }

    /// How many items the document `id` has: its count field (one read of one field).
    pub fn count<'a>(&'a self, id: impl IntoId<P::Id>) -> crate::model::Pending<'a, Result<i64>> {
        crate::model::Pending::new(self.count_op(id.into_id()))
    }

    async fn count_op(&self, id: P::Id) -> Result<i64> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::outlier.count",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let main = self.main();
                let find = main
                    .find_one(doc! { "_id": id.clone() })
                    .projection(doc! { self.spec.count(): 1 });
                let main =
                    in_session!(find, session.as_deref_mut())?.ok_or_else(|| self.not_found(id))?;
                Ok(int(main.get(self.spec.count())))
            },
        )
        .await
    }
}

//! Writing a source: its update or replace, and every `propagate` copy of the fields written.

use super::*;
use crate::schema_version::upgrade::upgrade_matching_in;
use pattern_derive::operation;

// The writes take `Referenced` on each method, not on the block: a model without it (a
// `#[versioned]` source) is then `Referenced`'s own error, with its message, at the call.
impl<M: Model> References<M> {
    /// Applies an operator update (`{ "$set": { "name": "Ada L." } }`) to the document `id`, and
    /// carries the copied fields it touches to every copy in `propagate` mode, in one transaction.
    ///
    /// A copied field counts as touched when an update key is that field or a path below it
    /// (`address.city` touches `address`). Updates touching no copied field send one `update`
    /// and nothing else. Keys are checked before anything is sent: only operators at the top, no
    /// `$` or empty segments in field paths, and never `_id` ([`Error::InvalidKey`]). A missing
    /// document is [`Error::NotFound`], with nothing written.
    pub fn update<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        update: impl crate::query::IntoUpdate,
    ) -> crate::model::Pending<'a, Result<Propagation>>
    where
        M: Referenced,
    {
        let (id, update) = (id.into_id(), update.into_update());
        crate::model::Pending::new(async move { self.update_op(id, update?).await })
    }

    #[operation(extended_ref.update, later(id, embeddings))]
    async fn update_op(&self, id: M::Id, update: Document) -> Result<Propagation>
    where
        M: Referenced,
    {
        let id = crate::literal::typed_id("_id", id)?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let touched = touched_fields(
            &update,
            "an extended reference's `_id` never changes: the copies are found by it",
        )?;
        derived::check_update(M::SCHEMA, &update)?;
        let one = doc! { "_id": id.clone() };
        upgrade_matching_in(&self.db, self.tx.as_ref(), M::SCHEMA, &one).await?;
        let targets = self.targets(&|f| touched.contains(f));
        span.record("embeddings", targets.len());
        // The other data derived from the fields it touches (counts, ...), kept through the map.
        let touched_list: Vec<&str> = touched.iter().map(String::as_str).collect();
        let others = !derived::reading(M::SCHEMA, Some(&touched_list), &not_copies).is_empty();
        if targets.is_empty() && !others && self.tx.is_none() {
            let result = match self.raw().update_one(one.clone(), update.clone()).await {
                Ok(result) => result,
                Err(e) => {
                    let e = derived::own_overflow(&self.db, M::SCHEMA, &one, &update, e).await;
                    return Err(e.into());
                }
            };
            tracing::debug!(
                matched = result.matched_count,
                modified = result.modified_count,
                "source updated; it touched no copied field, so no copy to update"
            );
            if result.matched_count == 0 {
                return Err(self.not_found(id));
            }
            return Ok(Propagation::default());
        }
        let projection = Self::projection(&targets);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let filter = doc! { "_id": id.clone() };
            let watch = self
                .watch_others(s.as_deref_mut(), Some(&touched_list), &filter)
                .await?;
            let find = raw
                .find_one_and_update(filter, update.clone())
                .return_document(ReturnDocument::After)
                .projection(projection.clone());
            let source = match in_session!(find, s.as_deref_mut()) {
                Ok(source) => source,
                Err(e) => {
                    return Err(derived::own_overflow(&self.db, M::SCHEMA, &one, &update, e).await)
                }
            };
            if source.is_some() {
                source_written(s.is_some());
            }
            let step = self
                .copy_from(s.as_deref_mut(), &id, source, &targets)
                .await?;
            self.after_copies(watch, step, s).await
        })?;
        self.finish(id, step)
    }

    /// Replaces the stored document with `doc` (matched by its `_id`) and carries the copied
    /// fields whose values changed to every copy in `propagate` mode, in one transaction.
    ///
    /// [`Error::DocumentTooLarge`] over 16 MiB and [`Error::NotFound`] when no document has that
    /// `_id`; [`Error::InvalidKey`] when `doc` changes a field another pattern keeps (a tree
    /// node's key or parent, a holder's node, a computed value, an outlier's count: read the
    /// document first and change it through that pattern); nothing is written then. The kept
    /// fields ride in the replace's filter, so this costs nothing when none changes.
    #[operation(extended_ref.replace, later(id, embeddings))]
    pub async fn replace(&self, doc: &M) -> Result<Propagation>
    where
        M: Referenced,
    {
        let (new, id) = crate::derived::replacement(M::SCHEMA, doc)?;
        crate::literal::check_id("_id", &id)?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let all = self.targets(&|_| true);
        let projection = Self::projection(&all);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let filter = doc! { "_id": id.clone() };
            let watch = self.watch_others(s.as_deref_mut(), None, &filter).await?;
            let mut kept = filter.clone();
            kept.extend(derived::kept_filter(M::SCHEMA, &new));
            let find = raw
                .find_one_and_replace(kept, new.clone())
                .return_document(ReturnDocument::Before)
                .projection(projection.clone());
            let Some(old) = in_session!(find, s.as_deref_mut())? else {
                let refused =
                    derived::kept_refusal(&self.db, s.as_deref_mut(), M::SCHEMA, &id, &new).await?;
                if let Some(refused) = refused {
                    return Err(crate::error::refusal(refused));
                }
                tracing::debug!("no document with this _id: nothing written");
                return Ok(Step::Missing);
            };
            source_written(s.is_some());
            let changed = |f: &str| old.get(f) != new.get(f);
            let targets = self.targets(&changed);
            span.record("embeddings", targets.len());
            let step = self
                .write_copies(s.as_deref_mut(), &id, &new, &targets)
                .await?;
            self.after_copies(watch, step, s).await
        })?;
        self.finish(id, step)
    }

    /// Before a write of the source (`filter`): the watch of the dependents reading `fields`
    /// (`None`: any) other than the copies, which the write keeps itself.
    async fn watch_others(
        &self,
        session: Option<&mut ClientSession>,
        fields: Option<&[&str]>,
        filter: &Document,
    ) -> mongodb::error::Result<Option<derived::Watch>>
    where
        M: Referenced,
    {
        derived::watch_except(&self.db, session, M::SCHEMA, fields, filter, &not_copies).await
    }

    /// After the write of the source and its copies: the other dependents, once `step` is done.
    async fn after_copies(
        &self,
        watch: Option<derived::Watch>,
        step: Step,
        session: Option<&mut ClientSession>,
    ) -> mongodb::error::Result<Step>
    where
        M: Referenced,
    {
        if let (Some(watch), Step::Done(_)) = (watch, &step) {
            watch.after(&self.db, session).await?;
        }
        Ok(step)
    }
}

impl<M: Model> References<M> {
    /// [`Self::write_copies`] from the source as read, or `Missing`.
    pub(super) async fn copy_from(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: Option<Document>,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        match source {
            None => {
                tracing::debug!("no document with this _id: no copy to update");
                Ok(Step::Missing)
            }
            Some(source) => self.write_copies(session, id, &source, targets).await,
        }
    }

    /// One `updateMany` per target. In a transaction an error aborts everything; without one,
    /// it is reported as a partial propagation.
    pub(super) async fn write_copies(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: &Document,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        let writes = targets
            .iter()
            .map(|(embedding, fields)| {
                let (filter, update, array_filters) = embedding.copy_update(id, source, fields);
                CopyWrite {
                    model: embedding.schema(),
                    path: embedding.path(),
                    fields: fields.clone(),
                    filter,
                    update: update.into(),
                    array_filters,
                }
            })
            .collect();
        Ok(match write_copies(&self.db, session, writes).await? {
            Ok(propagation) => Step::Done(propagation),
            Err(partial) => Step::Partial(partial),
        })
    }
}

//! Writing a versioned document: each write conditional on the version the caller read, the
//! old revision archived in the same transaction, and the history trimmed to `keep`.

use super::*;
use crate::span::Spanned as _;
use crate::stored::upgrade::upgrade_matching_in;

/// A transaction's reason to abort: the updated document would be too large to archive as a
/// revision later (its size).
#[derive(Debug, Clone, Copy)]
struct TooLargeToArchive(usize);

/// What a revision adds around a snapshot (`docId`, `version`, `archivedAt`, `deleted` and
/// their keys), beyond the `_id` it copies: generous.
const REVISION_OVERHEAD: usize = 128;

/// The largest a versioned document may be: small enough that its revision (the snapshot, its
/// `_id` again and the revision's fields) stays within 16 MiB, so the next save can always
/// archive it.
fn archivable(id: &Bson) -> usize {
    let id_bytes = bson::RawDocumentBuf::try_from(&doc! { "_id": id.clone() })
        .map(|r| r.as_bytes().len())
        .unwrap_or(1024);
    crate::error::MAX_DOCUMENT_SIZE - REVISION_OVERHEAD - id_bytes
}

/// [`Error::DocumentTooLarge`] for a versioned document of `size` bytes over [`archivable`].
fn too_large_to_archive(name: &str, size: usize, limit: usize) -> Error {
    Error::DocumentTooLarge {
        what: format!(
            "the `{name}` document (a versioned document must stay small enough to be archived \
             as a revision: at most {limit} bytes)"
        ),
        size: Some(size),
        limit,
    }
}

/// The size of `doc`, or [`too_large_to_archive`].
fn check_archivable<M: Model>(doc: &Document) -> Result<()> {
    if let Some(id) = doc.get("_id") {
        crate::literal::check_id("_id", id)?;
    }
    derived::check_written(M::SCHEMA, doc)?;
    let size = check_size(doc, M::SCHEMA.name())?;
    let limit = archivable(doc.get("_id").unwrap_or(&Bson::Null));
    if size > limit {
        return Err(too_large_to_archive(M::SCHEMA.name(), size, limit));
    }
    Ok(())
}

/// [`Error::InvalidValue`] when the version after `current` does not fit `M`'s version field
/// (an `i32` or `u32` one at its maximum): the server would widen it to a long the field cannot
/// read back, or the document would keep its version.
fn check_next_version<M: Versioned>(current: i64) -> Result<()> {
    let next = current.checked_add(1);
    let field = spec::<M>().version_field();
    let max = match crate::schema::shape::declared_type(M::SCHEMA, field).as_deref() {
        Some("i32") => i64::from(i32::MAX),
        Some("u32") => i64::from(u32::MAX),
        _ => i64::MAX,
    };
    if next.is_none_or(|next| next > max) {
        return Err(Error::InvalidValue {
            field: field.to_owned(),
            reason: format!(
                "the version after {current} does not fit the version field (at most \
                 {max}): declare it `i64`, or keep the document under a new `_id`"
            ),
        });
    }
    Ok(())
}

impl<M: Versioned> Writes<M> for Revised {
    type Doc<'a> = &'a mut M;
    type Target = At<M::Id>;

    fn insert<'a>(on: &'a ModelCollection<M>, doc: &'a mut M) -> Pending<'a, Result<Written>> {
        Pending::new(on.insert_revised(doc))
    }

    fn replace<'a>(on: &'a ModelCollection<M>, doc: &'a mut M) -> Pending<'a, Result<Written>> {
        Pending::new(on.save(doc))
    }

    fn update<'a>(
        on: &'a ModelCollection<M>,
        At(id, version): At<M::Id>,
        update: Result<Document>,
    ) -> Pending<'a, Result<Written>> {
        Pending::new(async move { on.update_op(id, version, update?).await })
    }

    fn delete<'a>(on: &'a ModelCollection<M>, id: M::Id) -> Pending<'a, Result<()>> {
        Pending::new(on.delete_op(id))
    }
}

impl<M: Versioned> ModelCollection<M> {
    /// Inserts a new document at version 1 (and sets `doc`'s version to 1). An `_id` whose
    /// earlier document was deleted keeps that document's history, and the new one goes on from
    /// it: it is inserted at the version after the last revision, so that one `_id`'s revisions
    /// stay one gapless sequence and every later `save` can archive its version. One
    /// transaction: the last revision's version (read on the history's unique `{docId,
    /// version}` index), the insert, and what derives from the document. [`Error::DuplicateKey`]
    /// when a document with this `_id` exists; [`Error::InvalidValue`] when the next version
    /// does not fit the version field's type; nothing is written then.
    async fn insert_revised(&self, doc: &mut M) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::versioning.insert",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                doc.set_version(1);
                let d = bson::serialize_to_document(&*doc)?;
                let id = d.get("_id").cloned().unwrap_or(Bson::Null);
                tracing::Span::current().record("id", tracing::field::display(&id));
                crate::literal::check_stored_id(&d)?;
                check_archivable::<M>(&d)?;
                let raw = self.documents();
                // In one transaction, so that the history read is the one the insert goes with: a
                // `delete` of the same `_id` committing in between is a write conflict, and the
                // transaction runs again.
                let version = transact!(self.database(), self.transaction(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let (v, d) = self.at_next_version(s.as_deref_mut(), &id, &d).await?;
                    let insert = raw.insert_one(d.clone());
                    in_session!(insert, s.as_deref_mut())?;
                    derived::inserted(self.database(), s, M::SCHEMA, std::slice::from_ref(&d))
                        .await?;
                    Ok::<_, mongodb::error::Error>(v)
                })?;
                doc.set_version(version);
                tracing::debug!(inserted = 1, version, "document inserted");
                Ok(Written::new(id, Some(version)))
            },
        )
        .await
    }

    /// `d` at the version a new document of `_id` `id` starts at: 1, or the one after the last
    /// revision an earlier document of this `_id` left in the history.
    async fn at_next_version(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        d: &Document,
    ) -> mongodb::error::Result<(i64, Document)> {
        let history = self.history_coll();
        let last = history
            .find_one(doc! { "docId": id.clone() })
            .sort(doc! { "version": -1 })
            .projection(doc! { "_id": 0, "version": 1 });
        let last = match session {
            Some(s) => last.session(s).await?,
            None => last.await?,
        };
        let Some(last) = last.as_ref().and_then(|r| version_of(r, "version")) else {
            return Ok((1, d.clone()));
        };
        check_next_version::<M>(last).map_err(crate::error::refusal)?;
        let v = last + 1;
        tracing::debug!(
            last_revision = last,
            version = v,
            "an earlier document of this _id left revisions: the new one goes on from them"
        );
        let field = spec::<M>().version_field();
        let mut d = d.clone();
        d.insert(
            field,
            crate::schema::shape::integer_for(M::SCHEMA, field, v),
        );
        Ok((v, d))
    }

    /// Loads the document `id`, lets `change` modify it, and saves it; when someone saved it in
    /// between ([`Error::VersionConflict`]), loads it again and reapplies `change`, for at most
    /// `attempts` tries (`0` counts as `1`). Returns the document as saved, at its new version.
    /// [`Error::NotFound`] when there is no such document; after the last try, its conflict.
    ///
    /// `change` runs once per try on a freshly loaded document, so it must derive its edit from
    /// the document it is given (increment the loaded counter, not a value computed before), and
    /// it must not have other side effects. To refuse a change, use [`try_modify`](Self::try_modify).
    ///
    /// In a caller's transaction (a bound handle), the document is loaded in the transaction,
    /// so a second `modify` of it there builds on the first. A writer outside the transaction
    /// that saves the document first makes the server answer a write conflict, which is
    /// transient and ends the transaction ([`Error::is_transient`]): `attempts` do not apply
    /// then; run the whole transaction again.
    ///
    /// ```no_run
    /// # use pattern_runtime::Model;
    /// # #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// # #[versioned(history = "article_revisions")]
    /// # struct Article { #[serde(rename = "_id")] id: u32, #[version] version: i64, views: i64, title: String }
    /// # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
    /// let articles = Article::collection(&db);
    /// // Read, change, save; on a conflict read again and retry, up to 5 tries.
    /// let saved = articles.modify(1, 5, |a| a.views += 1).await?;
    /// println!("views {} at version {}", saved.views, saved.version);
    /// # Ok(()) }
    /// ```
    pub fn modify<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        attempts: u32,
        change: impl FnMut(&mut M) + Send + 'a,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.modify_op(id.into_id(), attempts, change))
    }

    async fn modify_op(
        &self,
        id: M::Id,
        attempts: u32,
        mut change: impl FnMut(&mut M) + Send,
    ) -> Result<M> {
        self.try_modify(id, attempts, |doc| {
            change(doc);
            Ok::<(), Error>(())
        })
        .await
    }

    /// [`modify`](Self::modify) whose `change` may refuse: its error is returned as it is and
    /// nothing is written. `E` is the caller's error type, which holds the toolkit's errors too.
    ///
    /// ```no_run
    /// # use pattern_runtime::Model;
    /// # #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// # #[versioned(history = "stock_revisions")]
    /// # struct Stock { #[serde(rename = "_id")] id: u32, #[version] version: i64, available: i64 }
    /// #[derive(Debug)]
    /// enum BookingError { SoldOut, Db(pattern_runtime::Error) }
    /// impl From<pattern_runtime::Error> for BookingError {
    ///     fn from(e: pattern_runtime::Error) -> Self { BookingError::Db(e) }
    /// }
    ///
    /// # async fn run(db: mongodb::Database) -> Result<(), BookingError> {
    /// let stock = Stock::collection(&db);
    /// stock
    ///     .try_modify(7, 10, |s| {
    ///         if s.available == 0 {
    ///             return Err(BookingError::SoldOut);
    ///         }
    ///         s.available -= 1;
    ///         Ok(())
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn try_modify<E: From<Error>>(
        &self,
        id: impl IntoId<M::Id>,
        attempts: u32,
        mut change: impl FnMut(&mut M) -> std::result::Result<(), E> + Send,
    ) -> std::result::Result<M, E> {
        tracing::Instrument::instrument(
            async move {
                let id: Bson = crate::literal::typed_id("_id", id.into_id())?;
                tracing::Span::current().record("id", tracing::field::display(&id));
                let attempts = attempts.max(1);
                let mut attempt = 1;
                loop {
                    let found = self.current(&id).await?;
                    let Some(mut doc) = found.map(crate::model::read::decode::<M>).transpose()?
                    else {
                        tracing::debug!("no such document");
                        return Err(Error::NotFound {
                            collection: M::SCHEMA.collection().to_owned(),
                            missing: Box::new(crate::error::Missing::Document { id }),
                        }
                        .into());
                    };
                    change(&mut doc)?;
                    match self.save(&mut doc).await {
                        Ok(_) => return Ok(doc),
                        Err(e) if e.is_conflict() && attempt < attempts => {
                            tracing::debug!(
                        attempt,
                        attempts,
                        "version conflict: someone saved the document since it was loaded; \
                         loading it again"
                    );
                            attempt += 1;
                        }
                        Err(e) => {
                            if e.is_conflict() {
                                tracing::info!(attempts, "still conflicting after the last try");
                            }
                            return Err(e.into());
                        }
                    }
                }
            },
            tracing::info_span!(
                "pattern_runtime::versioning.modify",
                model = self.span_model(),
                collection = self.span_collection(),
                attempts,
                id = tracing::field::Empty
            ),
        )
        .await
    }

    /// Saves `doc` over the stored version it was read at: the stored document goes to history,
    /// `doc` becomes version `v + 1` (set on `doc` too), in one transaction. Returns the new
    /// version. [`Error::VersionConflict`] when someone saved since, [`Error::NotFound`] when the
    /// document is gone; nothing is written then.
    async fn save(&self, doc: &mut M) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::versioning.replace",
                model = self.span_model(),
                collection = self.span_collection(),
                expected_version = doc.version(),
                id = tracing::field::Empty
            ),
            async move {
                let v = doc.version();
                check_next_version::<M>(v)?;
                doc.set_version(v + 1);
                let result = self.save_document(doc, v).await;
                if result.is_err() {
                    doc.set_version(v);
                }
                result
            },
        )
        .await
    }

    async fn save_document(&self, doc: &M, v: i64) -> Result<Written> {
        let new = bson::serialize_to_document(doc)?;
        crate::literal::check_stored_id(&new)?;
        check_archivable::<M>(&new)?;
        let id = new.get("_id").cloned().unwrap_or(Bson::Null);
        tracing::Span::current().record("id", tracing::field::display(&id));
        let attempt = Attempt::new();
        let outcome = transact!(self.database(), self.transaction(), |s| self.write_change(
            s,
            &id,
            v,
            Change::Replace(&new),
            &attempt
        ))?;
        let version = self.outcome(id.clone(), v, outcome)?;
        Ok(Written::new(id, Some(version)))
    }

    /// Applies an operator update (`{ "$set": {..} }`) to the document at `expected_version`,
    /// archiving the stored version first, in one transaction; returns the new version. The
    /// update may not touch the version field or `_id`.
    async fn update_op(
        &self,
        id: M::Id,
        expected_version: i64,
        update: Document,
    ) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::versioning.update",
                model = self.span_model(),
                collection = self.span_collection(),
                expected_version,
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                check_next_version::<M>(expected_version)?;
                let field = spec::<M>().version_field();
                let mut update = update;
                check_size(&update, "the update")?;
                // Operators of named fields only, `$rename` targets included; never `_id` or the
                // version.
                let touched = crate::literal::touched_fields(
                    &update,
                    "the toolkit sets the version and never changes `_id`",
                )?;
                if let Some(key) = touched.iter().find(|k| k.as_str() == field) {
                    return Err(Error::KeptField {
                        field: key.clone(),
                        reason: "the version is the toolkit's: each versioned write sets it",
                    });
                }
                derived::check_update(M::SCHEMA, &update)?;
                let one = doc! { "_id": id.clone() };
                upgrade_matching_in(self.database(), self.transaction(), M::SCHEMA, &one).await?;
                let mut inc = update.get_document("$inc").cloned().unwrap_or_default();
                inc.insert(field, 1);
                update.insert("$inc", inc);
                let attempt = Attempt::new();
                let outcome = transact!(self.database(), self.transaction(), |s| self
                    .write_change(s, &id, expected_version, Change::Update(&update), &attempt));
                let outcome = match outcome {
                    Err(Error::Driver { source, .. })
                        if source.get_custom::<TooLargeToArchive>().is_some() =>
                    {
                        let size = source.get_custom::<TooLargeToArchive>().map_or(0, |t| t.0);
                        return Err(too_large_to_archive(
                            M::SCHEMA.name(),
                            size,
                            archivable(&id),
                        ));
                    }
                    other => other?,
                };
                let version = self.outcome(id.clone(), expected_version, outcome)?;
                Ok(Written::new(id, Some(version)))
            },
        )
        .await
    }

    fn revision_doc(
        &self,
        attempt: &Attempt,
        id: &Bson,
        version: i64,
        snapshot: Document,
        deleted: bool,
    ) -> Document {
        let mut d = doc! {
            "_id": attempt.revision.clone(),
            "docId": id.clone(),
            "version": version,
            "snapshot": snapshot,
            "archivedAt": DateTime::now(),
        };
        if deleted {
            d.insert("deleted", true);
        }
        d
    }

    /// The stored document `id`, read in the handle's transaction when it is bound to one (so
    /// that a second `modify` in it reads the first one's write).
    async fn current(&self, id: &Bson) -> Result<Option<Document>> {
        let mut session = crate::txn::Transaction::session_of(self.transaction()).await?;
        let documents = self.documents();
        let find = documents.find_one(doc! { "_id": id.clone() });
        Ok(in_session!(find, session.as_deref_mut())?)
    }

    /// Why a conditional write on `{_id, version: v}` matched nothing.
    async fn why_not(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<Option<i64>> {
        let field = spec::<M>().version_field();
        let raw = self.documents();
        let find = raw
            .find_one(doc! { "_id": id.clone() })
            .projection(doc! { field: 1 });
        let found = match session {
            Some(s) => find.session(s).await?,
            None => find.await?,
        };
        Ok(found.map(|d| version_of(&d, field).unwrap_or(0)))
    }

    async fn archive(
        &self,
        session: Option<&mut ClientSession>,
        revision: Document,
    ) -> mongodb::error::Result<()> {
        let history = self.history_coll();
        let in_transaction = session.is_some();
        match session {
            Some(s) => history.insert_one(revision).session(s).await?,
            None => history.insert_one(revision).await?,
        };
        tracing::debug!(
            history = spec::<M>().history(),
            archived = 1,
            in_transaction,
            "revision archived"
        );
        Ok(())
    }

    async fn trim(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        newest_archived: i64,
    ) -> mongodb::error::Result<()> {
        let Some(keep) = spec::<M>().keep() else {
            return Ok(());
        };
        let filter =
            doc! { "docId": id.clone(), "version": { "$lte": newest_archived - i64::from(keep) } };
        let history = self.history_coll();
        let in_transaction = session.is_some();
        let r = match session {
            Some(s) => history.delete_many(filter).session(s).await?,
            None => history.delete_many(filter).await?,
        };
        tracing::debug!(
            history = spec::<M>().history(),
            keep,
            deleted = r.deleted_count,
            in_transaction,
            "old revisions trimmed"
        );
        Ok(())
    }

    /// After a run of `attempt`'s body found the document changed or gone: whether an earlier
    /// run's commit went through (its revision is there), for a run after the first (none
    /// sent otherwise).
    async fn committed_before(
        &self,
        session: Option<&mut ClientSession>,
        attempt: &Attempt,
        rerun: bool,
    ) -> mongodb::error::Result<bool> {
        if !rerun {
            return Ok(false);
        }
        let history = self.history_coll();
        let find = history
            .find_one(doc! { "_id": attempt.revision.clone() })
            .projection(doc! { "_id": 1 });
        let found = in_session!(find, session)?.is_some();
        if found {
            tracing::info!(
                "an earlier run of this write committed though its result was lost: \
                 it is not applied again"
            );
        }
        Ok(found)
    }

    async fn missing_or_stale<T>(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<Outcome<T>> {
        Ok(match self.why_not(session, id).await? {
            None => {
                tracing::debug!("no document with this _id: nothing written");
                Outcome::Missing
            }
            Some(found) => {
                tracing::debug!(found, "the document is at another version: nothing written");
                Outcome::Stale(found)
            }
        })
    }

    /// The one write of `save` and `update`: change the document under `{_id, version: v}` and
    /// archive what it was as revision `v`.
    async fn write_change(
        &self,
        mut session: Option<&mut ClientSession>,
        id: &Bson,
        v: i64,
        change: Change<'_>,
        attempt: &Attempt,
    ) -> mongodb::error::Result<Outcome<i64>> {
        let rerun = attempt.rerun();
        let field = spec::<M>().version_field();
        let filter = doc! { "_id": id.clone(), field: v };
        let raw = self.documents();
        // What other models derive from the fields it changes (copies, counts): kept from the
        // document as it was, which both ways below read anyway.
        let fields = match change {
            Change::Replace(_) => None,
            Change::Update(update) => derived::updated_fields(&update.clone().into()),
        };
        let fields: Option<Vec<&str>> = fields
            .as_ref()
            .map(|f| f.iter().map(String::as_str).collect());
        let watch = match session.as_deref_mut() {
            Some(s) => {
                // One transaction: change the document, then archive what it was.
                let old = match change {
                    Change::Replace(new) => {
                        raw.find_one_and_replace(filter, new.clone())
                            .return_document(ReturnDocument::Before)
                            .session(&mut *s)
                            .await?
                    }
                    Change::Update(update) => {
                        let old = raw
                            .find_one_and_update(filter.clone(), update.clone())
                            .return_document(ReturnDocument::Before)
                            .session(&mut *s)
                            .await;
                        let old = match old {
                            Ok(old) => old,
                            Err(e) => {
                                let db = self.database();
                                return Err(derived::own_overflow(
                                    db,
                                    M::SCHEMA,
                                    &filter,
                                    update,
                                    e,
                                )
                                .await);
                            }
                        };
                        // What the update made of it must stay archivable: one read of its
                        // size, in the transaction, which aborts when it is over.
                        if old.is_some() {
                            let read = raw.aggregate([
                                doc! { "$match": { "_id": id.clone() } },
                                doc! { "$project": { "_id": 0, "n": { "$bsonSize": "$$ROOT" } } },
                            ]);
                            let sizes: Vec<Document> = collect_in!(read, Some(&mut *s))?;
                            let size = sizes
                                .first()
                                .and_then(|d| d.get("n"))
                                .and_then(|n| match n {
                                    Bson::Int32(n) => usize::try_from(*n).ok(),
                                    Bson::Int64(n) => usize::try_from(*n).ok(),
                                    _ => None,
                                })
                                .unwrap_or(0);
                            if size > archivable(id) {
                                return Err(mongodb::error::Error::custom(TooLargeToArchive(size)));
                            }
                        }
                        old
                    }
                };
                let Some(old) = old else {
                    if self.committed_before(Some(&mut *s), attempt, rerun).await? {
                        return Ok(Outcome::Done(v + 1));
                    }
                    return self.missing_or_stale(Some(s), id).await;
                };
                document_written(change, v, true);
                let watch =
                    derived::watch_read(M::SCHEMA, fields.as_deref(), std::slice::from_ref(&old));
                self.archive(Some(s), self.revision_doc(attempt, id, v, old, false))
                    .await?;
                watch
            }
            None => {
                // No transactions: the revision first, under the unique {docId, version} index,
                // which stops a writer racing for the same version.
                let Some(old) = raw.find_one(filter.clone()).await? else {
                    return self.missing_or_stale(None, id).await;
                };
                let watch =
                    derived::watch_read(M::SCHEMA, fields.as_deref(), std::slice::from_ref(&old));
                match self
                    .archive(None, self.revision_doc(attempt, id, v, old, false))
                    .await
                {
                    // Another writer archived this version first; unless the revision is this
                    // call's own (an insert the driver sent again, whose first answer was lost).
                    Err(e)
                        if crate::error::server_code(&e) == Some(crate::error::DUPLICATE_KEY) =>
                    {
                        if !self.committed_before(None, attempt, true).await? {
                            return self.missing_or_stale(None, id).await;
                        }
                    }
                    other => other?,
                }
                let matched = match change {
                    Change::Replace(new) => raw.replace_one(filter, new.clone()).await?,
                    Change::Update(update) => {
                        match raw.update_one(filter.clone(), update.clone()).await {
                            Ok(r) => r,
                            Err(e) => {
                                let db = self.database();
                                return Err(derived::own_overflow(
                                    db,
                                    M::SCHEMA,
                                    &filter,
                                    update,
                                    e,
                                )
                                .await);
                            }
                        }
                    }
                }
                .matched_count;
                if matched == 0 {
                    return self.missing_or_stale(None, id).await;
                }
                document_written(change, v, false);
                watch
            }
        };
        if let Some(watch) = watch {
            match change {
                // A replacement is what the document is now: nothing to read again.
                Change::Replace(new) => {
                    let now = vec![new.clone()];
                    watch
                        .after_known(self.database(), session.as_deref_mut(), now)
                        .await?;
                }
                Change::Update(_) => {
                    watch.after(self.database(), session.as_deref_mut()).await?;
                }
            }
        }
        self.trim(session, id, v).await?;
        Ok(Outcome::Done(v + 1))
    }

    /// Makes revision `v` the current document again, as a new version (history keeps every
    /// version in between). Returns the new version. [`Error::NotFound`] when there is no
    /// revision `v` ([`Missing::Revision`](crate::error::Missing::Revision)) or no document
    /// ([`Missing::Document`](crate::error::Missing::Document)); nothing is written then.
    pub fn revert<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        v: i64,
    ) -> crate::model::Pending<'a, Result<i64>> {
        crate::model::Pending::new(self.revert_op(id.into_id(), v))
    }

    async fn revert_op(&self, id: M::Id, v: i64) -> Result<i64> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::versioning.revert",
                model = self.span_model(),
                collection = self.span_collection(),
                version = v,
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let mut old = self.revision_at(id.clone(), v).await?;
                let current = self
                    .current(&id)
                    .await?
                    .map(crate::model::read::decode::<M>)
                    .transpose()?
                    .ok_or_else(|| Error::NotFound {
                        collection: M::SCHEMA.collection().to_owned(),
                        missing: Box::new(crate::error::Missing::Document { id }),
                    })?;
                old.set_version(current.version());
                Ok(self.save(&mut old).await?.version.unwrap_or_default())
            },
        )
        .await
    }

    async fn delete_op(&self, id: M::Id) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::versioning.delete",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let attempt = Attempt::new();
                let outcome = transact!(self.database(), self.transaction(), |s| self
                    .write_delete(s, &id, &attempt))?;
                self.outcome(id, 0, outcome)
            },
        )
        .await
    }

    async fn write_delete(
        &self,
        mut session: Option<&mut ClientSession>,
        id: &Bson,
        attempt: &Attempt,
    ) -> mongodb::error::Result<Outcome<()>> {
        let rerun = attempt.rerun();
        let field = spec::<M>().version_field();
        let filter = doc! { "_id": id.clone() };
        let removed = match session.as_deref_mut() {
            Some(s) => {
                self.documents()
                    .find_one_and_delete(filter)
                    .session(s)
                    .await?
            }
            None => self.documents().find_one_and_delete(filter).await?,
        };
        let Some(old) = removed else {
            if self
                .committed_before(session.as_deref_mut(), attempt, rerun)
                .await?
            {
                return Ok(Outcome::Done(()));
            }
            tracing::debug!("no document with this _id: nothing written");
            return Ok(Outcome::Missing);
        };
        let v = version_of(&old, field).unwrap_or(0);
        tracing::debug!(
            deleted = 1,
            version = v,
            in_transaction = session.is_some(),
            "document deleted"
        );
        // What derives from it goes with it: the document as it was is all it needs.
        let gone = std::slice::from_ref(&old);
        derived::appeared_or_gone(
            self.database(),
            session.as_deref_mut(),
            M::SCHEMA,
            gone,
            false,
            &|_| false,
        )
        .await?;
        self.archive(session, self.revision_doc(attempt, id, v, old, true))
            .await?;
        Ok(Outcome::Done(()))
    }
}

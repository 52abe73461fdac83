//! The writes of a model's own documents without `#[versioned]` (the model handle's `insert`,
//! `replace`, `update`, `delete` and their `_many` forms: [`Plain`]), each keeping every field
//! computed from the model exact, and what else derives from it.

use super::*;
use crate::model::writes::{Plain, Updated, Writes as ModelWrites, WritesMany, Written};
use crate::model::{ModelCollection, Pending};
use crate::span::Spanned as _;
use crate::stored::upgrade::upgrade_matching_in;

/// The bodies of a model's writes, on stored documents: one copy of each, whatever the model
/// (the generic verbs serialize the caller's value and call them).
#[derive(Clone)]
pub(crate) struct Writes {
    db: Database,
    schema: &'static ModelSchema,
    /// Every dependent of the model in the [map of derived data](crate::derived): the fields
    /// computed from it and the other patterns' (copies of its fields, ...).
    dependents: Vec<&'static dyn Dependent>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
}

impl crate::span::Spanned for Writes {
    fn span_model(&self) -> &'static str {
        self.schema.name()
    }
    fn span_collection(&self) -> &str {
        self.schema.collection()
    }
}

impl<M: Model> ModelWrites<M> for Plain {
    type Doc<'a> = &'a M;
    type Target = M::Id;

    fn insert<'a>(on: &'a ModelCollection<M>, doc: &'a M) -> Pending<'a, Result<Written>> {
        let w = Writes::of(on);
        let new = bson::serialize_to_document(doc).map_err(Error::from);
        Pending::new(async move { w.insert(new?).await })
    }

    fn replace<'a>(on: &'a ModelCollection<M>, doc: &'a M) -> Pending<'a, Result<Written>> {
        let w = Writes::of(on);
        let new = crate::derived::replacement(M::SCHEMA, doc);
        Pending::new(async move {
            let (new, id) = new?;
            w.replace(new, id, Document::new()).await
        })
    }

    fn update<'a>(
        on: &'a ModelCollection<M>,
        id: M::Id,
        update: Result<Document>,
    ) -> Pending<'a, Result<Written>> {
        let w = Writes::of(on);
        let id = crate::literal::typed_id("_id", id);
        Pending::new(async move { w.update(id?, update?).await })
    }

    fn delete<'a>(on: &'a ModelCollection<M>, id: M::Id) -> Pending<'a, Result<()>> {
        let w = Writes::of(on);
        let id = crate::literal::typed_id("_id", id);
        Pending::new(async move { w.delete(id?).await })
    }
}

impl<M: Model> WritesMany<M> for Plain {
    fn insert_many<'a>(
        on: &'a ModelCollection<M>,
        docs: Result<Vec<Document>>,
    ) -> Pending<'a, Result<Vec<Written>>> {
        let w = Writes::of(on);
        Pending::new(async move { w.insert_many(docs?).await })
    }

    fn update_many<'a>(
        on: &'a ModelCollection<M>,
        filter: Result<Document>,
        update: Result<Document>,
    ) -> Pending<'a, Result<Updated>> {
        let w = Writes::of(on);
        Pending::new(async move { w.update_many(filter?, update?).await })
    }

    fn delete_many<'a>(
        on: &'a ModelCollection<M>,
        filter: Result<Document>,
    ) -> Pending<'a, Result<u64>> {
        let w = Writes::of(on);
        Pending::new(async move { w.delete_many(filter?).await })
    }
}

impl Writes {
    /// The bodies for the handle `on`.
    fn of<M: Model>(on: &ModelCollection<M>) -> Writes {
        Writes::new(on.database(), M::SCHEMA, on.transaction())
    }

    /// The bodies for `schema`'s documents in `db`, in the caller's transaction `tx` if any
    /// (another handle on the same documents: a polymorphic model's variant).
    pub(crate) fn new(
        db: &Database,
        schema: &'static ModelSchema,
        tx: Option<&Transaction>,
    ) -> Writes {
        Writes {
            db: db.clone(),
            schema,
            dependents: derived::dependents_of(schema),
            tx: tx.cloned(),
        }
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(self.schema.collection())
    }

    /// The fields any dependent reads: the projection of the documents read back.
    fn projection(&self) -> Document {
        let mut p = doc! { "_id": 1 };
        for field in self.dependents.iter().flat_map(|d| d.reads()) {
            p.insert(field, 1);
        }
        p
    }

    /// What a feed of these writes cannot keep in `after` (see [`Feed::refused`]).
    fn refused(&self, after: &Document) -> Option<Abort> {
        registered_models()
            .into_iter()
            .flat_map(|target| {
                Feed::group(
                    target,
                    target
                        .specs::<ComputedFromSpec>()
                        .filter(|s| std::ptr::eq(s.source(), self.schema)),
                )
            })
            .find_map(|f| f.refused(after))
    }

    /// Whether a dependent reads the top-level field `field`.
    fn read(&self, field: &str) -> bool {
        self.dependents.iter().any(|d| d.reads().contains(&field))
    }

    fn finish<T>(&self, id: Option<Bson>, result: Result<T>) -> Result<T> {
        match result {
            Err(Error::Driver { source, .. }) if source.get_custom::<Abort>().is_some() => {
                Err(Error::NotFound {
                    collection: self.schema.collection().to_owned(),
                    missing: Box::new(crate::error::Missing::Document {
                        id: id.unwrap_or(Bson::Null),
                    }),
                })
            }
            other => other,
        }
    }

    /// `insert` of the serialized document: one `insert` when nothing derives from the model
    /// and no transaction is bound, otherwise in a transaction with what derives from it.
    pub(crate) async fn insert(&self, new: Document) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.insert",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                let new = with_id(new);
                let id = new.get("_id").cloned().unwrap_or(Bson::Null);
                tracing::Span::current().record("id", tracing::field::display(&id));
                crate::literal::check_document(self.schema.name(), &new)?;
                derived::check_document_write(self.schema, "insert", Some(&new))?;
                check_size(&new, self.schema.name())?;
                let raw = self.raw();
                if self.tx.is_none() && !derived::has_insert_dependents(self.schema) {
                    raw.insert_one(new).await?;
                    tracing::debug!(inserted = 1, "document inserted");
                    return Ok(Written::new(id, None));
                }
                let result = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let insert = raw.insert_one(new.clone());
                    in_session!(insert, s.as_deref_mut())?;
                    self.apply(s, None, Some(&new)).await
                });
                self.finish(Some(id.clone()), result)?;
                tracing::debug!(inserted = 1, "document inserted, derived data kept");
                Ok(Written::new(id, None))
            },
        )
        .await
    }

    /// `insert_many` of the serialized documents, every one checked before the first is sent.
    pub(crate) async fn insert_many(&self, new: Vec<Document>) -> Result<Vec<Written>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.insert_many",
                model = self.span_model(),
                collection = self.span_collection(),
                count = new.len()
            ),
            async move {
                if new.is_empty() {
                    return Ok(Vec::new());
                }
                let new: Vec<Document> = new.into_iter().map(with_id).collect();
                for d in &new {
                    crate::literal::check_document(self.schema.name(), d)?;
                    derived::check_document_write(self.schema, "insert", Some(d))?;
                    check_size(d, self.schema.name())?;
                }
                let written: Vec<Written> = new
                    .iter()
                    .map(|d| Written::new(d.get("_id").cloned().unwrap_or(Bson::Null), None))
                    .collect();
                let raw = self.raw();
                // One document alone is all or nothing; several are, in a transaction (the driver's
                // `insert` would keep those before a taken `_id`).
                if self.tx.is_none()
                    && new.len() == 1
                    && !derived::has_insert_dependents(self.schema)
                {
                    raw.insert_many(new).await?;
                } else {
                    let result = transact!(self.db, self.tx.as_ref(), |s| async {
                        let mut s: Option<&mut ClientSession> = s;
                        let insert = raw.insert_many(new.clone());
                        in_session!(insert, s.as_deref_mut())?;
                        derived::inserted(&self.db, s, self.schema, &new).await
                    });
                    self.finish(None, result)?;
                }
                tracing::debug!(inserted = written.len(), "documents inserted");
                Ok(written)
            },
        )
        .await
    }

    /// `replace` of the serialized document, whose `_id` is `id`, where the stored one also
    /// meets `scope` (a variant's tag; empty for any document): one `replace` when nothing
    /// derives from the model and no transaction is bound.
    pub(crate) async fn replace(
        &self,
        new: Document,
        id: Bson,
        scope: Document,
    ) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.replace",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                crate::literal::check_id("_id", &id)?;
                tracing::Span::current().record("id", tracing::field::display(&id));
                crate::literal::check_document(self.schema.name(), &new)?;
                let raw = self.raw();
                if self.tx.is_none() && !derived::has_dependents(self.schema, None) {
                    let mut filter = doc! { "_id": id.clone() };
                    filter.extend(scope.clone());
                    filter.extend(derived::kept_filter(self.schema, &new));
                    let result = raw.replace_one(filter, new.clone()).await?;
                    if result.matched_count == 0 {
                        let refused =
                            derived::kept_refusal(&self.db, None, self.schema, &id, &new).await?;
                        return Err(match refused {
                            Some(refused) => crate::error::refusal(refused).into(),
                            None => self.not_found(id),
                        });
                    }
                    tracing::debug!(replaced = 1, "document replaced");
                    return Ok(Written::new(id, None));
                }
                let projection = self.projection();
                let result = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let mut filter = doc! { "_id": id.clone() };
                    filter.extend(scope.clone());
                    filter.extend(derived::kept_filter(self.schema, &new));
                    let replace = raw
                        .find_one_and_replace(filter, new.clone())
                        .projection(projection.clone())
                        .return_document(ReturnDocument::Before);
                    let Some(before) = in_session!(replace, s.as_deref_mut())? else {
                        let refused = derived::kept_refusal(
                            &self.db,
                            s.as_deref_mut(),
                            self.schema,
                            &id,
                            &new,
                        )
                        .await?;
                        return Err(match refused {
                            Some(refused) => crate::error::refusal(refused),
                            None => abort(Abort::NoSource),
                        });
                    };
                    self.apply(s, Some(&before), Some(&new)).await
                });
                self.finish(Some(id.clone()), result)?;
                tracing::debug!(replaced = 1, "document replaced, derived data kept");
                Ok(Written::new(id, None))
            },
        )
        .await
    }

    /// `update` of the document `id`: one `update` when nothing derives from the fields it
    /// touches and no transaction is bound.
    async fn update(&self, id: Bson, update: Document) -> Result<Written> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.update",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                tracing::Span::current().record("id", tracing::field::display(&id));
                let touched = touched_fields(
                    &update,
                    "a document's `_id` never changes: insert another document instead",
                )?;
                derived::check_update(self.schema, &update)?;
                let one = doc! { "_id": id.clone() };
                upgrade_matching_in(&self.db, self.tx.as_ref(), self.schema, &one).await?;
                let relevant = touched.iter().any(|f| self.read(f));
                let raw = self.raw();
                if !relevant && self.tx.is_none() {
                    let result = match raw.update_one(one.clone(), update.clone()).await {
                        Ok(result) => result,
                        Err(e) => {
                            let e = derived::own_overflow(&self.db, self.schema, &one, &update, e)
                                .await;
                            return Err(e.into());
                        }
                    };
                    tracing::debug!(
                        matched = result.matched_count,
                        "the update touches no field a computed field reads: one plain update"
                    );
                    if result.matched_count == 0 {
                        return Err(self.not_found(id));
                    }
                    return Ok(Written::new(id, None));
                }
                let projection = self.projection();
                let result = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let write = raw
                        .find_one_and_update(one.clone(), update.clone())
                        .projection(projection.clone())
                        .return_document(ReturnDocument::Before);
                    let before = match in_session!(write, s.as_deref_mut()) {
                        Ok(before) => before,
                        Err(e) => {
                            return Err(derived::own_overflow(
                                &self.db,
                                self.schema,
                                &one,
                                &update,
                                e,
                            )
                            .await)
                        }
                    };
                    let Some(before) = before else {
                        return Err(abort(Abort::NoSource));
                    };
                    let after = match self.after_locally(&before, &update) {
                        Some(after) => Some(after),
                        None => {
                            let read = raw
                                .find_one(doc! { "_id": id.clone() })
                                .projection(projection.clone());
                            in_session!(read, s.as_deref_mut())?
                        }
                    };
                    // What only the write could tell (a `$mul` to infinity): it was sent, so a caller's
                    // transaction it ran in is ended, not left holding it.
                    if let Some(a) = after.as_ref().and_then(|after| self.refused(after)) {
                        return Err(crate::error::after_write(abort(a)));
                    }
                    self.apply(s, Some(&before), after.as_ref()).await
                });
                self.finish(Some(id.clone()), result)?;
                Ok(Written::new(id, None))
            },
        )
        .await
    }

    /// The fields the dependents read after `update`, computed from `before` when every key they read
    /// is a top-level `$set`, `$unset` or numeric `$inc` (no read back then); `None` otherwise.
    fn after_locally(&self, before: &Document, update: &Document) -> Option<Document> {
        let read = |key: &str| {
            let top = key.split('.').next().unwrap_or(key);
            self.read(top)
        };
        let mut after = before.clone();
        for (op, fields) in update {
            let Bson::Document(fields) = fields else {
                return None;
            };
            for (key, value) in fields {
                if op == "$rename" && matches!(value, Bson::String(to) if read(to)) {
                    return None;
                }
                if !read(key) {
                    continue;
                }
                if key.contains('.') {
                    return None;
                }
                match op.as_str() {
                    "$set" => {
                        after.insert(key, value.clone());
                    }
                    "$unset" => {
                        after.remove(key);
                    }
                    "$inc" => {
                        let sum = inc_as_the_server(after.get(key), value)?;
                        after.insert(key, sum);
                    }
                    _ => return None,
                }
            }
        }
        Some(after)
    }

    /// `delete` of the document `id`: one `delete` when nothing derives from the model and no
    /// transaction is bound.
    async fn delete(&self, id: Bson) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.delete",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                tracing::Span::current().record("id", tracing::field::display(&id));
                derived::check_document_write(self.schema, "delete", None)?;
                let raw = self.raw();
                if self.tx.is_none() && !derived::has_dependents(self.schema, None) {
                    if raw
                        .delete_one(doc! { "_id": id.clone() })
                        .await?
                        .deleted_count
                        == 0
                    {
                        return Err(self.not_found(id));
                    }
                    tracing::debug!(deleted = 1, "document deleted");
                    return Ok(());
                }
                let projection = self.projection();
                let result = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let delete = raw
                        .find_one_and_delete(doc! { "_id": id.clone() })
                        .projection(projection.clone());
                    let Some(before) = in_session!(delete, s.as_deref_mut())? else {
                        return Err(abort(Abort::NoSource));
                    };
                    self.apply(s, Some(&before), None).await
                });
                self.finish(Some(id), result)
            },
        )
        .await
    }

    /// `update_many` of the documents matching `filter`: one `update` when nothing derives from
    /// the fields it touches and no transaction is bound; otherwise a `find` before and after,
    /// in a transaction, for what derives from them.
    async fn update_many(&self, filter: Document, update: Document) -> Result<Updated> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.update_many",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let touched = touched_fields(&update, "an update never changes `_id`")?;
                derived::check_update(self.schema, &update)?;
                let fields: Vec<&str> = touched.iter().map(String::as_str).collect();
                let tx = self.tx.as_ref();
                derived::update_kept(
                    &self.db,
                    tx,
                    self.schema,
                    filter,
                    update,
                    Some(&fields),
                    true,
                )
                .await
                .map(Updated::from)
            },
        )
        .await
    }

    /// `delete_many` of the documents matching `filter`: one `delete` when nothing derives from
    /// the model and no transaction is bound.
    pub(crate) async fn delete_many(&self, filter: Document) -> Result<u64> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::model.delete_many",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                derived::check_document_write(self.schema, "delete", None)?;
                let deleted = if self.tx.is_none() && !derived::has_dependents(self.schema, None) {
                    self.raw().delete_many(filter).await?.deleted_count
                } else {
                    transact!(self.db, self.tx.as_ref(), |s| derived::delete(
                        &self.db,
                        s,
                        self.schema,
                        filter.clone(),
                        true,
                    ))?
                };
                tracing::debug!(deleted, "documents deleted");
                Ok(deleted)
            },
        )
        .await
    }

    fn not_found(&self, id: Bson) -> Error {
        Error::NotFound {
            collection: self.schema.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Document { id }),
        }
    }

    /// Moves a source's contribution from `before` to `after` (either missing for an insert or
    /// a delete), through the [map of derived data](crate::derived): every field computed from
    /// `M`, and every other dependent of the fields that changed.
    async fn apply(
        &self,
        s: Option<&mut ClientSession>,
        before: Option<&Document>,
        after: Option<&Document>,
    ) -> mongodb::error::Result<()> {
        let Some(id) = before.or(after).and_then(|d| d.get("_id")).cloned() else {
            return Ok(());
        };
        let change = Change {
            id,
            before: before.cloned(),
            after: after.cloned(),
        };
        derived::dispatch(&self.db, s, &self.dependents, std::slice::from_ref(&change)).await
    }
}

/// `doc` with an `_id` first: its own, or a new `ObjectId` (as the driver would add), so that
/// what derives from it and the caller know it.
fn with_id(doc: Document) -> Document {
    if doc.contains_key("_id") {
        return doc;
    }
    let mut out = doc! { "_id": bson::oid::ObjectId::new() };
    out.extend(doc);
    out
}

/// What the server stores for `$inc: {field: by}` on `current` (missing: `by` itself), with the
/// server's type: two `Int32`s stay an `Int32` while they fit, an `Int64` makes an `Int64`, a
/// double a double. `None` where it cannot say (an overflow, which the server widens; a
/// decimal; not a number): the caller reads the document back instead.
fn inc_as_the_server(current: Option<&Bson>, by: &Bson) -> Option<Bson> {
    Num::of(Some(by))?;
    let Some(current) = current else {
        return Some(by.clone());
    };
    Some(match (current, by) {
        (Bson::Int32(a), Bson::Int32(b)) => Bson::Int32(a.checked_add(*b)?),
        (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
            let sum = Num::of(Some(current))?.plus(Num::of(Some(by))?)?;
            match sum {
                Num::Int(n) => Bson::Int64(n),
                Num::Float(_) => return None,
            }
        }
        _ => match Num::of(Some(current))?.plus(Num::of(Some(by))?)? {
            Num::Float(f) => Bson::Double(f),
            Num::Int(_) => return None,
        },
    })
}

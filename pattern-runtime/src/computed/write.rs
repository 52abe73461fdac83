//! `Computing`: the writes of a source model (insert, replace, update, delete), each keeping
//! every field computed from it exact.

use super::*;
use crate::schema_version::upgrade::upgrade_matching_in;
use pattern_derive::operation;

/// The writes of a source model that keep every field computed from it exact: from
/// `Order::computing(&db)`. See the [module documentation](super).
#[derive_where::derive_where(Clone)]
pub struct Computing<M> {
    w: Writes,
    _model: PhantomData<fn() -> M>,
}

/// The bodies of [`Computing`]'s writes, on stored documents: one copy of each, whatever the
/// model (the generic handle serializes the caller's value and calls them).
#[derive(Clone)]
struct Writes {
    db: Database,
    schema: &'static ModelSchema,
    feeds: Vec<Feed>,
    /// Every dependent of the model in the [map of derived data](crate::derived): the feeds and
    /// the other patterns' (copies of its fields, ...).
    dependents: Vec<&'static dyn Dependent>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
}

crate::span::spanned!(impl<M: Model> Computing<M> => M::SCHEMA, M::SCHEMA.collection());

impl<M: Model> fmt::Debug for Computing<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept: Vec<String> = self
            .w
            .feeds
            .iter()
            .flat_map(|feed| {
                feed.specs
                    .iter()
                    .map(move |s| format!("{}.{}", feed.target.name(), s.field()))
            })
            .collect();
        f.debug_struct("Computing")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.w.db.name())
            .field("keeps", &kept)
            .finish()
    }
}

impl<M: Model + Serialize> Computing<M> {
    /// The writes of `M` in `db`, keeping every field of every registered model computed from
    /// `M`.
    pub fn new(db: &Database) -> Self
    where
        M: Unversioned,
    {
        let feeds = registered_models()
            .into_iter()
            .flat_map(|target| {
                Feed::group(
                    target,
                    target
                        .specs::<ComputedFromSpec>()
                        .filter(|s| std::ptr::eq(s.source(), M::SCHEMA)),
                )
            })
            .collect();
        Computing {
            w: Writes {
                db: db.clone(),
                schema: M::SCHEMA,
                feeds,
                dependents: derived::dependents_of(M::SCHEMA),
                tx: None,
            },
            _model: PhantomData,
        }
    }

    /// The same writes in the caller's transaction `tx`: they commit or abort with it (see
    /// [`Transaction`](crate::Transaction)).
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        let mut bound = self.clone();
        bound.w.tx = Some(tx.clone());
        bound
    }

    /// The fields kept by these writes, as `(target model, its field)`.
    pub fn keeps(&self) -> Vec<(&'static ModelSchema, &'static ComputedFromSpec)> {
        self.w
            .feeds
            .iter()
            .flat_map(|f| f.specs.iter().map(move |s| (f.target, *s)))
            .collect()
    }

    /// Inserts `doc` and adds it to every field computed from it, in one transaction.
    /// [`Error::NotFound`] when a target it points at does not exist, [`Error::InvalidValue`]
    /// for a NaN or infinite summed field, [`Error::DocumentTooLarge`] over 16 MiB,
    /// [`Error::DuplicateKey`] for an `_id` already there: nothing is written then.
    #[operation(computed.insert)]
    pub async fn insert(&self, doc: &M) -> Result<()> {
        let new = bson::serialize_to_document(doc)?;
        self.w.insert(new).await
    }

    /// Replaces the stored document with `doc` (found by its `_id`) and moves its contribution
    /// from the old values to the new ones, in one transaction. [`Error::NotFound`] when no
    /// document has that `_id` or a new target does not exist; [`Error::InvalidKey`] when `doc`
    /// changes a field another pattern keeps (a tree node's parent, a holder's node, a computed
    /// value: read the document first); nothing is written then.
    #[operation(computed.replace, later(id))]
    pub async fn replace(&self, doc: &M) -> Result<()> {
        let (new, id) = crate::derived::replacement(M::SCHEMA, doc)?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        self.w.replace(new, id).await
    }

    /// Applies an operator update to the document `id` and moves its contribution from the old
    /// values to the new ones, in one transaction. An update touching neither a `by` field nor a
    /// summed field is one plain `update`. Keys are checked first ([`Error::InvalidKey`]: only
    /// operators at the top, no `$` or empty segment in a path, never `_id`);
    /// [`Error::NotFound`] when there is no such document or a new target does not exist.
    pub fn update<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        update: impl crate::query::IntoUpdate,
    ) -> crate::model::Pending<'a, Result<()>> {
        let (id, update) = (id.into_id(), update.into_update());
        crate::model::Pending::new(async move { self.update_op(id, update?).await })
    }

    #[operation(computed.update, later(id))]
    async fn update_op(&self, id: M::Id, update: Document) -> Result<()> {
        let id = crate::literal::span_id(id)?;
        self.w.update(id, update).await
    }

    /// Deletes the document `id` and removes its contribution, in one transaction.
    /// [`Error::NotFound`] when there is no such document.
    pub fn delete<'a>(&'a self, id: impl IntoId<M::Id>) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.delete_op(id.into_id()))
    }

    #[operation(computed.delete, later(id))]
    async fn delete_op(&self, id: M::Id) -> Result<()> {
        derived::check_document_write(M::SCHEMA, "delete", None)?;
        let id = crate::literal::span_id(id)?;
        self.w.delete(id).await
    }
}

impl Writes {
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
        self.feeds.iter().find_map(|f| f.refused(after))
    }

    /// Whether a dependent reads the top-level field `field`.
    fn read(&self, field: &str) -> bool {
        self.dependents.iter().any(|d| d.reads().contains(&field))
    }

    fn finish(&self, id: Option<Bson>, result: Result<()>) -> Result<()> {
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

    /// [`Computing::insert`] of the serialized document.
    async fn insert(&self, new: Document) -> Result<()> {
        derived::check_document_write(self.schema, "insert", Some(&new))?;
        check_size(&new, self.schema.name())?;
        let raw = self.raw();
        let result = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let insert = raw.insert_one(new.clone());
            in_session!(insert, s.as_deref_mut())?;
            self.apply(s, None, Some(&new)).await
        });
        self.finish(new.get("_id").cloned(), result)
    }

    /// [`Computing::replace`] of the serialized document, whose `_id` is `id`.
    async fn replace(&self, new: Document, id: Bson) -> Result<()> {
        let raw = self.raw();
        let projection = self.projection();
        let result = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let mut filter = doc! { "_id": id.clone() };
            filter.extend(derived::kept_filter(self.schema, &new));
            let replace = raw
                .find_one_and_replace(filter, new.clone())
                .projection(projection.clone())
                .return_document(ReturnDocument::Before);
            let Some(before) = in_session!(replace, s.as_deref_mut())? else {
                let refused =
                    derived::kept_refusal(&self.db, s.as_deref_mut(), self.schema, &id, &new)
                        .await?;
                return Err(match refused {
                    Some(refused) => crate::error::refusal(refused),
                    None => abort(Abort::NoSource),
                });
            };
            self.apply(s, Some(&before), Some(&new)).await
        });
        self.finish(Some(id), result)
    }

    /// [`Computing::update`] of the document `id`.
    async fn update(&self, id: Bson, update: Document) -> Result<()> {
        let touched = touched_fields(
            &update,
            "a source's `_id` never changes: replace the document instead",
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
                    let e = derived::own_overflow(&self.db, self.schema, &one, &update, e).await;
                    return Err(e.into());
                }
            };
            tracing::debug!(
                matched = result.matched_count,
                "the update touches no field a computed field reads: one plain update"
            );
            if result.matched_count == 0 {
                return Err(Error::NotFound {
                    collection: self.schema.collection().to_owned(),
                    missing: Box::new(crate::error::Missing::Document { id }),
                });
            }
            return Ok(());
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
                    return Err(
                        derived::own_overflow(&self.db, self.schema, &one, &update, e).await,
                    )
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
        self.finish(Some(id), result)
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

    /// [`Computing::delete`] of the document `id`.
    async fn delete(&self, id: Bson) -> Result<()> {
        let raw = self.raw();
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

#![doc = include_str!("../../docs/subset.md")]

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use mongodb::{ClientSession, Database};
use serde::Serialize;

use crate::derived;
use crate::error::{check_size, validate_key, Error, Result};
use crate::finding::{compare, examples, id_key, number, Bounded, Check, Finding};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{transact, Transaction};

mod check;
mod read;
mod spec;
mod write;

pub use spec::{
    ProbeNoRebuild, ProbeRebuild, RebuildProbe, SubsetParts, SubsetSpec, Summary, SummaryKind,
};

/// The parent, full item and embedded item types of a [`Subset`], without owning any.
type Types<P, F, E> = PhantomData<fn() -> (P, F, E)>;

/// The operations of one subset: the parent model `P`, the full item `F` and the embedded
/// form `E` (built from `&F`). Get one from the model handle:
/// `Product::collection(&db).subset(Product::FIELDS.recent_reviews)`.
#[derive_where::derive_where(Clone)]
pub struct Subset<P, F, E> {
    db: Database,
    spec: &'static SubsetSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _types: Types<P, F, E>,
}

crate::span::spanned!(impl<P: Model, F, E> Subset<P, F, E> => P::SCHEMA, P::SCHEMA.collection());

crate::txn::bound!(impl<P, F, E> Subset<P, F, E>);

crate::model::field_handle! {
    /// A `#[subset(..)]` field's typed name: what [`ModelCollection::subset`](crate::model::ModelCollection::subset) takes.
    pub trait SubsetField {
        message = "`{Self}` is not a `#[subset(..)]` field of `{M}`",
        label = "not a subset field of `{M}`",
        note = "pass one of `{M}::FIELDS`' fields declared with `#[subset(..)]`",
    }
    /// The subset `field` of `M`'s documents: `push`, `remove`, `page`, `rebuild`, `check`,
    /// `repair` (see [`Subset`]).
    ///
    /// Bound to this handle's transaction when it has one
    /// ([`in_transaction`](crate::model::ModelCollection::in_transaction)).
    pub fn subset;
}

impl<P, F, E> std::fmt::Debug for Subset<P, F, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subset").field("spec", self.spec).finish()
    }
}

impl<P, F, E> Subset<P, F, E> {
    // Without bounds: what the types must satisfy is checked, at the user's tokens, by the
    // assertions the derive generates; a bound here would repeat each error at the derive.
    #[doc(hidden)]
    pub fn new(db: &Database, spec: &'static SubsetSpec) -> Self {
        Subset {
            db: db.clone(),
            spec,
            tx: None,
            _types: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same subset in the caller's transaction `tx`: its pushes, rebuilds and removals run
        /// in it and commit or abort with it (see [`Transaction`]). Its reads
        /// ([`page`](Subset::page), [`count`](Subset::count)) run in it too, and see its
        /// uncommitted writes: a bound handle reads and writes in its transaction.
    }

    /// The subset's static description.
    pub fn spec(&self) -> &'static SubsetSpec {
        self.spec
    }
}

impl<P, F, E> Subset<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    fn parents(&self) -> mongodb::Collection<Document> {
        self.db.collection(P::SCHEMA.collection())
    }

    fn fulls(&self) -> mongodb::Collection<Document> {
        self.db.collection(self.spec.full_collection())
    }

    /// Before a write of the parent's subset and counters: what other patterns keep from them
    /// (an extended-reference copy of a count, a sum over the counters), as stored now. `None`
    /// (nothing sent) when nothing derives from them.
    async fn watch_parent(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Option<derived::Watch>> {
        let parts = &self.spec.parts;
        let mut fields: Vec<&str> = vec![parts.field];
        fields.extend(parts.summaries.iter().map(|c| c.field));
        derived::watch(
            &self.db,
            session,
            P::SCHEMA,
            Some(&fields),
            &doc! { "_id": parent_id.clone() },
        )
        .await
    }

    /// `write` of the parent `parent_id` in a transaction, then what derives from the parent's
    /// subset and counters: `None` when `write` did not find what it writes, else the documents
    /// it changed (a push or a removal counts 1).
    async fn write_parent(&self, parent_id: &Bson, write: ParentWrite<'_>) -> Result<Option<u64>> {
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            if !matches!(write, ParentWrite::Rebuild) {
                // A parent stored in an older schema version is rewritten at the current one
                // first, as before every toolkit update: an upgrade after the write would not
                // know the subset's array and counters.
                crate::stored::upgrade::upgrade_matching(
                    &self.db,
                    s.as_deref_mut(),
                    P::SCHEMA,
                    &doc! { "_id": parent_id.clone() },
                )
                .await?;
            }
            let watch = self.watch_parent(s.as_deref_mut(), parent_id).await?;
            let done = match write {
                ParentWrite::Push { full, update } => self
                    .write_push(s.as_deref_mut(), parent_id, full, update)
                    .await?
                    .then_some(1),
                ParentWrite::Remove { item_id } => self
                    .write_remove(s.as_deref_mut(), parent_id, item_id)
                    .await?
                    .then_some(1),
                ParentWrite::Rebuild => self.write_rebuild(s.as_deref_mut(), parent_id).await?,
            };
            match (watch, write) {
                (None, _) => {}
                // The counters before may have been written around the toolkit: what derives
                // from them is rebuilt, not moved by the difference.
                (Some(watch), ParentWrite::Rebuild) => watch.rebuilt(&self.db, s).await?,
                (Some(watch), _) => watch.after(&self.db, s).await?,
            }
            Ok(done)
        })
    }

    fn parent_not_found(&self, id: Bson) -> Error {
        Error::NotFound {
            collection: P::SCHEMA.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Document { id }),
        }
    }
}

/// A write of one parent's subset and counters, as [`Subset::write_parent`] runs it.
#[derive(Clone, Copy)]
enum ParentWrite<'a> {
    /// The full items inserted, the parent's `update`.
    Push {
        full: &'a [Document],
        update: &'a Document,
    },
    /// The full item `item_id` deleted, the parent's array refilled.
    Remove { item_id: &'a Bson },
    /// The parent's array and counters rebuilt from the full items.
    Rebuild,
}

/// `DEBUG`: the parent's update (array, counts and sums, the caller's `$set`).
fn parent_updated(r: &mongodb::results::UpdateResult, in_transaction: bool) {
    updated(r, in_transaction, "parent updated");
}

/// `DEBUG`: an update of the parent, the event's message saying what it wrote.
fn updated(r: &mongodb::results::UpdateResult, in_transaction: bool, what: &str) {
    tracing::debug!(
        matched = r.matched_count,
        modified = r.modified_count,
        in_transaction,
        "{what}"
    );
}

/// `DEBUG`: the full items written.
fn items_inserted(inserted: usize, in_transaction: bool) {
    tracing::debug!(inserted, in_transaction, "full items inserted");
}

/// `DEBUG`: the averages recomputed from their sums and counts.
fn averages_updated(r: &mongodb::results::UpdateResult, in_transaction: bool) {
    updated(r, in_transaction, "averages recomputed");
}

/// A pending [`Subset::push`] or [`Subset::push_many`]: `.set(..)` adds parent fields to the same
/// update; `.await` runs it.
#[must_use = "a push does nothing until it is awaited"]
pub struct Push<'a, P, F, E> {
    subset: &'a Subset<P, F, E>,
    /// Serialized and checked when built; an error is returned when awaited.
    parent_id: Result<Bson>,
    items: Vec<F>,
    set: Result<Document>,
}

impl<P, F, E> Push<'_, P, F, E> {
    /// Also `$set` these parent fields in the same update (`updatedAt`, say): a typed
    /// [`Update`](crate::typed::Update) made of `set`s
    /// (`.set(Update::new().set(Product::FIELDS.updated_at, now))`), or a document of fields
    /// (`.set(doc! { "updatedAt": now })`, the explicit escape). Keys are checked before
    /// anything is written; an `Update` holding another operator is [`Error::InvalidKey`].
    pub fn set(mut self, fields: impl ParentFields<P>) -> Self {
        self.set = match (self.set, fields.parent_fields()) {
            (Ok(mut set), Ok(more)) => {
                set.extend(more);
                Ok(set)
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        self
    }
}

/// What [`Push::set`] takes: a typed [`Update`](crate::typed::Update) of `set`s of the parent
/// model `P`'s fields only, or a `bson::Document` of fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an update of the parent model `{P}`",
    label = "an update of another model",
    note = "a push's `.set(..)` takes an `Update<{P}>` of `set`s, built from `{P}::FIELDS`, or a `bson::Document`"
)]
pub trait ParentFields<P> {
    /// The fields to `$set`, or the error a typed value met.
    fn parent_fields(self) -> Result<Document>;
}

impl<P> ParentFields<P> for Document {
    fn parent_fields(self) -> Result<Document> {
        Ok(self)
    }
}

impl<P> ParentFields<P> for crate::typed::Update<P> {
    fn parent_fields(self) -> Result<Document> {
        let mut fields = Document::new();
        for (op, body) in self.into_document()? {
            match (op.as_str(), body) {
                ("$set", Bson::Document(body)) => fields.extend(body),
                _ => {
                    return Err(Error::InvalidKey {
                        key: op,
                        reason: "a push's `.set(..)` adds `$set`s to the push's own update: \
                                 give it `Update::new().set(..)` only, and run other operators \
                                 as an update of their own",
                    })
                }
            }
        }
        Ok(fields)
    }
}

impl<'a, P, F, E> IntoFuture for Push<'a, P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'b> From<&'b F> + Send + Sync + 'a,
{
    type Output = Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        let (subset, parent_id, items) = (self.subset, self.parent_id, self.items);
        match self.set {
            Ok(set) => Box::pin(subset.run_push(parent_id, items, set)),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

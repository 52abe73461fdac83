//! Fields computed from another collection (the computed pattern): a user's `totalSpent`, the
//! sum of the `amount` of the user's orders, kept in the user document so that reading it costs
//! nothing.
//!
//! The subset pattern's `#[computed(..)]` fields summarise the items of a subset; this module's
//! summarise the documents of another model that point back at this one. Declare them on the
//! model that holds the value (the target), naming the source model, its field and the source's
//! field that holds the target's `_id`:
//!
//! | form | keeps | kept by |
//! | --- | --- | --- |
//! | `#[computed(sum = Order.amount, by = user_id)]` | the sum of `amount` over the orders whose `user_id` is this document's `_id` | `$inc` |
//! | `#[computed(count = Order, by = user_id)]` | how many such orders | `$inc` |
//! | `#[computed(max = Order.amount, by = user_id)]` (`min`) | the largest (smallest) `amount`, `null` without orders | `$max` (`$min`) when an order is added; recomputed from the orders when one is removed or lowered |
//!
//! The checks at compile time: the source is a model (`Order: Model`), the summed field and the
//! kept field are numbers, a sum of a float is kept in a float, a count in an integer, a min or
//! max in an `Option` (there may be no orders), and `by` holds the target's `_id` type
//! (`String` for a `String` `_id`, `Option<String>`, or `Ref<User>`, `Option<Ref<User>>`).
//! The source's `by` field gets an index (`userId_1`), synced with the target model: the
//! recomputations and the min/max repairs read through it.
//!
//! ```
//! use pattern_runtime::computed::Computing;
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[computed(sum = Order.amount, by = user_id)]
//!     total_spent: i64,
//!     #[computed(count = Order, by = user_id)]
//!     order_count: i64,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     user_id: String,
//!     amount: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! User::collection(&db)
//!     .raw()
//!     .insert_one(User { id: "u1".into(), total_spent: 0, order_count: 0 })
//!     .await?;
//! // Each write of an order and the `$inc` of its user, in one transaction.
//! let orders = Computing::<Order>::new(&db);
//! orders.insert(&Order { id: 1, user_id: "u1".into(), amount: 1200 }).await?;
//! orders.insert(&Order { id: 2, user_id: "u1".into(), amount: 3000 }).await?;
//! orders.update(2, bson::doc! { "$set": { Order::FIELDS.amount: 2500 } }).await?;
//! orders.delete(1).await?;
//!
//! // Repairs: what was written around the toolkit.
//! let users = User::computed(&db);
//! assert!(users.verify().await?.is_empty());
//! users.recompute("u1").await?;
//! # Ok(()) }
//! ```
//!
//! # Writes of the source
//!
//! [`Computing`] writes the source model and keeps every field computed from it exact: it finds
//! them in the registry of the program's models (every `#[derive(Model)]`), so the source model
//! declares nothing. [`insert`](Computing::insert), [`replace`](Computing::replace),
//! [`update`](Computing::update) (an operator update; one that touches neither `by` nor a summed
//! field is a plain `update`, no transaction; one that changes them by top-level `$set`,
//! `$unset` or `$inc` needs no read back, others one `find`) and [`delete`](Computing::delete)
//! each write the source (one command that also returns the old values), then one update per
//! target document concerned (the old and the new one when an order
//! moves to another user), in one transaction retried on transient errors: concurrent writers
//! leave every value exact. A write that points a source at a target that does not exist (an
//! insert, a `by` changed) is [`Error::NotFound`] and nothing is written, whichever pattern's
//! handle writes the source (a slot booked for a holder counted per holder, a variant
//! inserted); a source that already pointed at a target since deleted can still be written
//! (an outlier push, an attribute set, an update of other fields), its contribution kept
//! nowhere: a deleted target must not make its sources unwritable. A source whose `by` is
//! `null` or missing counts for nobody. A NaN or infinite value
//! in a field a sum, a min or a max reads is [`Error::InvalidValue`], before anything is written
//! (the computed value would keep it for good).
//!
//! Without transactions (a standalone server) the same writes run in the same order, source
//! first: a failure in between leaves the computed value behind its source, and
//! [`ComputedFields::recompute`] repairs it. Writes made around [`Computing`] (the driver, the
//! shell, another program) are not seen: [`ComputedFields::verify`] reports the drift and
//! [`ComputedFields::recompute_all`] repairs it, or a [`Refresher`] does so on an interval (for
//! values whose freshness need is low, such as a dashboard's totals).
//!
//! # Recomputing
//!
//! [`ComputedFields::recompute_all`] reads the targets' `_id`s in pages of [`BATCH`]; for each
//! page, one transaction reads the page's stored values, runs one aggregation per source (a
//! `$group` of the sources whose `by` is in the page) and sends one `update` command with a
//! statement per document that differs. Each statement's filter carries the value it replaces,
//! so without transactions a value changed meanwhile is left alone (and counted as skipped)
//! rather than overwritten with an older one. Sums are compared exactly between integers, and
//! to a relative 1e-9 where a double is involved (a sum of doubles depends on the order of the
//! additions).
//!
//! # Tracing
//!
//! Every operation runs in an `INFO` span `pattern_runtime::computed.<operation>` with the
//! fields `model` and `collection` (the source's for [`Computing`], the target's for
//! [`ComputedFields`]) and `id` where there is one. Each target update is a `DEBUG` event (its
//! collection, `_id`, the update); each recomputed page an `INFO` event (documents checked,
//! repaired, skipped so far); each failed [`Refresher`] run an `ERROR` event.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection, Database};
use serde::Serialize;

use crate::derived::{self, Change, Dependent};
use crate::error::{check_size, Error, Result};
use crate::finding::{id_key, Check, Finding};
use crate::index::IndexSpec;
use crate::literal::touched_fields;
use crate::model::{IntoId, Model, Unversioned};
use crate::periodic::{Periodic, Stopped};
use crate::schema::{registered_models, ModelSchema, PatternSpec, Sample};
use crate::txn::{collect_in, in_session, transact, Transaction};

/// How many target documents [`ComputedFields::recompute_all`] and
/// [`ComputedFields::verify`] read, aggregate and write per round.
pub const BATCH: usize = 1000;

/// What a computed field keeps of its sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// How many sources point at the document.
    Count,
    /// The sum of a numeric field of the sources (0 without sources).
    Sum,
    /// The smallest value of the field (`null` without sources).
    Min,
    /// The largest value of the field (`null` without sources).
    Max,
}

impl Aggregate {
    /// The `$group` accumulator of the source field `field`.
    fn accumulator(self, field: &str) -> Document {
        let path = format!("${field}");
        match self {
            Aggregate::Count => doc! { "$sum": 1 },
            Aggregate::Sum => doc! { "$sum": path },
            Aggregate::Min => doc! { "$min": path },
            Aggregate::Max => doc! { "$max": path },
        }
    }

    /// The value without any source.
    fn empty(self) -> Bson {
        match self {
            Aggregate::Count | Aggregate::Sum => Bson::Int32(0),
            Aggregate::Min | Aggregate::Max => Bson::Null,
        }
    }
}

/// One field computed from another model's documents, as `#[computed(.., by = ..)]` declares it.
pub struct ComputedFromSpec {
    parts: ComputedFromParts,
    index: OnceLock<IndexSpec>,
}

/// The parts of a [`ComputedFromSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ComputedFromParts {
    /// The kept field's BSON name.
    pub field: &'static str,
    pub aggregate: Aggregate,
    /// The source model's schema (a function: schemas may name each other).
    pub source: fn() -> &'static ModelSchema,
    /// The source's summed field (empty for a count).
    pub source_field: &'static str,
    /// The source's field holding the target's `_id`.
    pub by: &'static str,
}

impl fmt::Debug for ComputedFromSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComputedFromSpec")
            .field("field", &self.parts.field)
            .field("aggregate", &self.parts.aggregate)
            .field("source", &self.source().name())
            .field("source_field", &self.parts.source_field)
            .field("by", &self.parts.by)
            .finish()
    }
}

impl ComputedFromSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: ComputedFromParts) -> Self {
        ComputedFromSpec {
            parts,
            index: OnceLock::new(),
        }
    }

    /// The kept field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// What it keeps.
    pub fn aggregate(&self) -> Aggregate {
        self.parts.aggregate
    }

    /// The source model.
    pub fn source(&self) -> &'static ModelSchema {
        (self.parts.source)()
    }

    /// The source's summed field (`None` for a count).
    pub fn source_field(&self) -> Option<&'static str> {
        (!self.parts.source_field.is_empty()).then_some(self.parts.source_field)
    }

    /// The source's field holding the target's `_id`.
    pub fn by(&self) -> &'static str {
        self.parts.by
    }

    /// The index on the source's `by` field, named as MongoDB names it by default (`userId_1`),
    /// so that the same index declared elsewhere counts once.
    pub fn index(&'static self) -> &'static IndexSpec {
        self.index
            .get_or_init(|| IndexSpec::ascending_leaked(self.parts.by))
    }
}

impl PatternSpec for ComputedFromSpec {
    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(self.source().collection(), self.index())]
    }

    /// The computed field: written by the source's writes through `Computing`.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        vec![(
            self.field(),
            "a computed field follows its sources: write the sources through `Computing`, or \
             repair it with `recompute`",
        )]
    }

    /// The fields of `model` computed from the same source through the same `by` as this one,
    /// listed once (by the first of them): one update of a target per source change.
    fn dependents(&'static self, model: &'static ModelSchema) -> Vec<Box<dyn Dependent>> {
        Feed::group(model, model.computed_from())
            .into_iter()
            .filter(|f| f.specs.first().is_some_and(|s| std::ptr::eq(*s, self)))
            .map(|f| Box::new(f) as Box<dyn Dependent>)
            .collect()
    }

    /// The sampled documents whose value disagrees with their sources: one aggregation of the
    /// source collection, as `verify` runs it.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(audit_computed(self, sample)))
    }
}

async fn audit_computed(
    spec: &'static ComputedFromSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    if sample.documents.is_empty() {
        return Ok(Vec::new());
    }
    let feeds = Feed::group(sample.model, std::iter::once(spec));
    let Some(feed) = feeds.first() else {
        return Ok(Vec::new());
    };
    let found =
        aggregate_many_within(sample.db, None, feed, &sample.ids(), Some(sample.max_time)).await?;
    let mut drifted = Vec::new();
    let mut first = None;
    for target in sample.documents {
        let Some(id) = target.get("_id") else {
            continue;
        };
        let values = feed.values(found.get(&id_key(id)));
        let computed = values.get(spec.field()).cloned().unwrap_or(Bson::Null);
        let stored = target.get(spec.field());
        if !agrees(spec.aggregate(), stored, &computed) {
            first.get_or_insert_with(|| {
                let stored = stored.map_or_else(|| "missing".to_owned(), ToString::to_string);
                format!("`_id` {id} holds {stored}, its sources say {computed}")
            });
            drifted.push(id.clone());
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            Check::ComputedDrift,
            spec.field(),
            format!(
                "{} of {} sampled documents disagree with their `{}` documents; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.source().name()
            ),
            format!(
                "`{model}::computed(&db).repair()` (or `recompute(id)` for each); writes through \
             `Computing::<{source}>` keep it exact",
                model = sample.model.name(),
                source = spec.source().name()
            ),
        )
        .about(drifted)])
}

impl ModelSchema {
    /// The fields of this model computed from other models.
    pub fn computed_from(&self) -> impl Iterator<Item = &'static ComputedFromSpec> {
        self.specs::<ComputedFromSpec>()
    }
}

/// The computed fields of one target model fed by one source model through one `by` field: what
/// one source document contributes to, and what one aggregation recomputes.
#[derive(Debug, Clone)]
struct Feed {
    target: &'static ModelSchema,
    source: &'static ModelSchema,
    by: &'static str,
    specs: Vec<&'static ComputedFromSpec>,
}

impl Feed {
    /// The feeds of `specs`, grouped by source and `by`.
    fn group(
        target: &'static ModelSchema,
        specs: impl Iterator<Item = &'static ComputedFromSpec>,
    ) -> Vec<Feed> {
        let mut feeds: Vec<Feed> = Vec::new();
        for spec in specs {
            let source = spec.source();
            match feeds
                .iter_mut()
                .find(|f| std::ptr::eq(f.source, source) && f.by == spec.by())
            {
                Some(f) => f.specs.push(spec),
                None => feeds.push(Feed {
                    target,
                    source,
                    by: spec.by(),
                    specs: vec![spec],
                }),
            }
        }
        feeds
    }

    /// The source fields this feed reads.
    fn source_fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.specs.iter().filter_map(|s| s.source_field())
    }

    /// The `$group` stage of this feed's sources, one accumulator per spec (`f0`, `f1`, ...).
    fn group_stage(&self) -> Document {
        let mut group = doc! { "_id": format!("${}", self.by) };
        for (i, spec) in self.specs.iter().enumerate() {
            group.insert(
                format!("f{i}"),
                spec.aggregate()
                    .accumulator(spec.source_field().unwrap_or_default()),
            );
        }
        doc! { "$group": group }
    }
}

// ----- numbers -----

/// A BSON number, as the sums and comparisons need it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(value: Option<&Bson>) -> Option<Num> {
        match value? {
            Bson::Int32(n) => Some(Num::Int(i64::from(*n))),
            Bson::Int64(n) => Some(Num::Int(*n)),
            Bson::Double(n) => Some(Num::Float(*n)),
            _ => None,
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(n) => n as f64,
            Num::Float(n) => n,
        }
    }

    fn minus(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.wrapping_sub(b)),
            (a, b) => Num::Float(a.as_f64() - b.as_f64()),
        }
    }

    /// `self + other`; `None` when integers overflow (the server would widen them).
    fn plus(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_add(b).map(Num::Int),
            (a, b) => Some(Num::Float(a.as_f64() + b.as_f64())),
        }
    }

    fn negated(self) -> Num {
        match self {
            Num::Int(n) => Num::Int(n.wrapping_neg()),
            Num::Float(n) => Num::Float(-n),
        }
    }

    fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    fn bson(self) -> Bson {
        match self {
            Num::Int(n) => Bson::Int64(n),
            Num::Float(n) => Bson::Double(n),
        }
    }
}

/// Whether a stored value equals the computed one: numbers by value (to a relative 1e-9 when a
/// double is involved), `null` and missing alike only for a min or max.
fn agrees(aggregate: Aggregate, stored: Option<&Bson>, computed: &Bson) -> bool {
    match (Num::of(stored), Num::of(Some(computed))) {
        (Some(Num::Int(a)), Some(Num::Int(b))) => a == b,
        (Some(a), Some(b)) => {
            let (a, b) = (a.as_f64(), b.as_f64());
            (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
        }
        (None, None) => {
            matches!(aggregate, Aggregate::Min | Aggregate::Max)
                && matches!(stored, None | Some(Bson::Null))
                && matches!(computed, Bson::Null)
        }
        _ => false,
    }
}

/// A `by` value that points at a target (not `null`, not missing).
fn pointer(doc: Option<&Document>, by: &str) -> Option<Bson> {
    doc?.get(by).filter(|b| !matches!(b, Bson::Null)).cloned()
}

// ----- the writes of a source -----

/// Why a transaction body gave up: returned as its error, so the transaction is aborted and
/// nothing it wrote is kept.
#[derive(Debug, Clone)]
enum Abort {
    /// The source document to change does not exist.
    NoSource,
    /// A target a source points at does not exist.
    NoTarget {
        collection: &'static str,
        id: Box<Bson>,
    },
    /// A summed field is NaN or infinite.
    NotFinite { field: &'static str },
    /// A `by` pointer (given, or stored by someone else) that cannot name one target: an
    /// operator document, a regex, ...
    BadPointer { field: &'static str, reason: String },
}

/// The driver error that aborts the transaction: a typed [`Error`] (through
/// [`refusal`](crate::error::refusal)) for everything but a missing source, which only the
/// caller can name.
fn abort(a: Abort) -> mongodb::error::Error {
    let error = match a {
        Abort::NoSource => return mongodb::error::Error::custom(Abort::NoSource),
        Abort::NoTarget { collection, id } => Error::NotFound {
            collection: collection.to_owned(),
            id,
        },
        Abort::BadPointer { field, reason } => Error::InvalidValue {
            field: field.to_owned(),
            reason,
        },
        Abort::NotFinite { field } => Error::InvalidValue {
            field: field.to_owned(),
            reason: "a field computed from it (a sum, a min or a max) would keep a NaN or an \
                     infinity for good"
                .to_owned(),
        },
    };
    crate::error::refusal(error)
}

/// The writes of a source model that keep every field computed from it exact: from
/// `Computing::<Order>::new(&db)`. See the [module documentation](self).
pub struct Computing<M> {
    db: Database,
    feeds: Vec<Feed>,
    /// Every dependent of `M` in the [map of derived data](crate::derived): the feeds and the
    /// other patterns' (copies of `M`'s fields, ...).
    dependents: Vec<&'static dyn Dependent>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for Computing<M> {
    fn clone(&self) -> Self {
        Computing {
            db: self.db.clone(),
            feeds: self.feeds.clone(),
            dependents: self.dependents.clone(),
            tx: self.tx.clone(),
            _model: PhantomData,
        }
    }
}

impl<M: Model> fmt::Debug for Computing<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept: Vec<String> = self
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
            .field("database", &self.db.name())
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
                        .computed_from()
                        .filter(|s| std::ptr::eq(s.source(), M::SCHEMA)),
                )
            })
            .collect();
        Computing {
            db: db.clone(),
            feeds,
            dependents: derived::dependents_of(M::SCHEMA),
            tx: None,
            _model: PhantomData,
        }
    }

    /// The same writes in the caller's transaction `tx`: they commit or abort with it (see
    /// [`Transaction`]).
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        Computing {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    /// The fields kept by these writes, as `(target model, its field)`.
    pub fn keeps(&self) -> Vec<(&'static ModelSchema, &'static ComputedFromSpec)> {
        self.feeds
            .iter()
            .flat_map(|f| f.specs.iter().map(move |s| (f.target, *s)))
            .collect()
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// The fields any dependent reads: the projection of the documents read back.
    fn projection(&self) -> Document {
        let mut p = doc! { "_id": 1 };
        for field in self.dependents.iter().flat_map(|d| d.reads()) {
            p.insert(field, 1);
        }
        p
    }

    /// Whether a dependent reads the top-level field `field`.
    fn read(&self, field: &str) -> bool {
        self.dependents.iter().any(|d| d.reads().contains(&field))
    }

    fn check_finite(&self, doc: &Document) -> std::result::Result<(), Abort> {
        for feed in &self.feeds {
            for field in feed.source_fields() {
                if let Some(Bson::Double(v)) = doc.get(field) {
                    if !v.is_finite() {
                        return Err(Abort::NotFinite { field });
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&self, id: Option<Bson>, result: Result<()>) -> Result<()> {
        match result {
            Err(Error::Driver { source, .. }) if source.get_custom::<Abort>().is_some() => {
                Err(Error::NotFound {
                    collection: M::SCHEMA.collection().to_owned(),
                    id: Box::new(id.unwrap_or(Bson::Null)),
                })
            }
            other => other,
        }
    }

    /// Inserts `doc` and adds it to every field computed from it, in one transaction.
    /// [`Error::NotFound`] when a target it points at does not exist, [`Error::InvalidValue`]
    /// for a NaN or infinite summed field, [`Error::DocumentTooLarge`] over 16 MiB,
    /// [`Error::DuplicateKey`] for an `_id` already there: nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::computed.insert",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn insert(&self, doc: &M) -> Result<()> {
        let new = bson::serialize_to_document(doc)?;
        derived::check_document_write(M::SCHEMA, "insert", Some(&new))?;
        check_size(&new, M::SCHEMA.name())?;
        let result = if let Err(a) = self.check_finite(&new) {
            Err(Error::from(abort(a)))
        } else {
            let raw = self.raw();
            transact!(self.db, self.tx.as_ref(), |s| async {
                let mut s: Option<&mut ClientSession> = s;
                let insert = raw.insert_one(new.clone());
                in_session!(insert, s.as_deref_mut())?;
                self.apply(s, None, Some(&new)).await
            })
        };
        self.finish(new.get("_id").cloned(), result)
    }

    /// Replaces the stored document with `doc` (found by its `_id`) and moves its contribution
    /// from the old values to the new ones, in one transaction. [`Error::NotFound`] when no
    /// document has that `_id` or a new target does not exist; [`Error::InvalidKey`] when `doc`
    /// changes a field another pattern keeps (a tree node's parent, a holder's node, a computed
    /// value: read the document first); nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::computed.replace",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn replace(&self, doc: &M) -> Result<()> {
        let new = bson::serialize_to_document(doc)?;
        derived::check_document_write(M::SCHEMA, "replace", Some(&new))?;
        check_size(&new, M::SCHEMA.name())?;
        let Some(id) = new.get("_id").cloned() else {
            return Err(Error::InvalidKey {
                key: "_id".to_owned(),
                reason:
                    "`replace` finds the stored document by the new one's `_id`, and it has none",
            });
        };
        tracing::Span::current().record("id", tracing::field::display(&id));
        let result = if let Err(a) = self.check_finite(&new) {
            Err(Error::from(abort(a)))
        } else {
            let raw = self.raw();
            let projection = self.projection();
            transact!(self.db, self.tx.as_ref(), |s| async {
                let mut s: Option<&mut ClientSession> = s;
                let mut filter = doc! { "_id": id.clone() };
                filter.extend(derived::kept_filter(M::SCHEMA, &new));
                let replace = raw
                    .find_one_and_replace(filter, new.clone())
                    .projection(projection.clone())
                    .return_document(ReturnDocument::Before);
                let Some(before) = in_session!(replace, s.as_deref_mut())? else {
                    let refused =
                        derived::kept_refusal(&self.db, s.as_deref_mut(), M::SCHEMA, &id, &new)
                            .await?;
                    return Err(match refused {
                        Some(refused) => crate::error::refusal(refused),
                        None => abort(Abort::NoSource),
                    });
                };
                self.apply(s, Some(&before), Some(&new)).await
            })
        };
        self.finish(Some(id), result)
    }

    /// Applies an operator update to the document `id` and moves its contribution from the old
    /// values to the new ones, in one transaction. An update touching neither a `by` field nor a
    /// summed field is one plain `update`. Keys are checked first ([`Error::InvalidKey`]: only
    /// operators at the top, no `$` or empty segment in a path, never `_id`);
    /// [`Error::NotFound`] when there is no such document or a new target does not exist.
    #[tracing::instrument(
        name = "pattern_runtime::computed.update",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn update(&self, id: impl IntoId<M::Id>, update: Document) -> Result<()> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let touched = touched_fields(
            &update,
            "a source's `_id` never changes: replace the document instead",
        )?;
        derived::check_kept(
            M::SCHEMA,
            derived::update_paths(&update).iter().map(String::as_str),
        )?;
        // A `by` value the update sets names the target to count in: an equality in its
        // filters, so it is checked as an id.
        for feed in &self.feeds {
            for (op, fields) in &update {
                if let (true, Bson::Document(fields)) = (op == "$set", fields) {
                    if let Some(value) = fields.get(feed.by) {
                        crate::literal::check_id(feed.by, value)?;
                    }
                }
            }
        }
        let relevant = touched.iter().any(|f| self.read(f));
        let raw = self.raw();
        if !relevant && self.tx.is_none() {
            let result = raw.update_one(doc! { "_id": id.clone() }, update).await?;
            tracing::debug!(
                matched = result.matched_count,
                "the update touches no field a computed field reads: one plain update"
            );
            if result.matched_count == 0 {
                return Err(Error::NotFound {
                    collection: M::SCHEMA.collection().to_owned(),
                    id: Box::new(id),
                });
            }
            return Ok(());
        }
        let projection = self.projection();
        let result = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let write = raw
                .find_one_and_update(doc! { "_id": id.clone() }, update.clone())
                .projection(projection.clone())
                .return_document(ReturnDocument::Before);
            let Some(before) = in_session!(write, s.as_deref_mut())? else {
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
            if let Some(after) = &after {
                self.check_finite(after).map_err(abort)?;
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
                        let by = Num::of(Some(value))?;
                        let current = match after.get(key) {
                            None => Num::Int(0),
                            v => Num::of(v)?,
                        };
                        after.insert(key, current.plus(by)?.bson());
                    }
                    _ => return None,
                }
            }
        }
        Some(after)
    }

    /// Deletes the document `id` and removes its contribution, in one transaction.
    /// [`Error::NotFound`] when there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::computed.delete",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn delete(&self, id: impl IntoId<M::Id>) -> Result<()> {
        derived::check_document_write(M::SCHEMA, "delete", None)?;
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
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

impl Dependent for Feed {
    fn source(&self) -> &'static ModelSchema {
        self.source
    }

    fn pattern(&self) -> &'static str {
        "computed"
    }

    fn reads(&self) -> Vec<&'static str> {
        std::iter::once(self.by)
            .chain(self.source_fields())
            .collect()
    }

    fn describe(&self) -> String {
        let fields: Vec<&str> = self.specs.iter().map(|s| s.field()).collect();
        format!(
            "{}.{} (computed from {} by `{}`)",
            self.target.name(),
            fields.join(", "),
            self.source.name(),
            self.by
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        mut session: Option<&'a mut ClientSession>,
        changes: &'a [Change],
    ) -> BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            // What other models keep from the computed fields (a copy of a count): the targets
            // touched, watched around the writes, so a copy of a computed value follows it.
            let mut targets: Vec<Bson> = Vec::new();
            for c in changes {
                for d in [&c.before, &c.after].into_iter().flatten() {
                    match d.get(self.by) {
                        None | Some(Bson::Null) => {}
                        Some(Bson::Array(ids)) => targets.extend(ids.iter().cloned()),
                        Some(id) => targets.push(id.clone()),
                    }
                }
            }
            let fields: Vec<&str> = self.specs.iter().map(|s| s.field()).collect();
            let watch = if targets.is_empty() {
                None
            } else {
                crate::derived::watch(
                    db,
                    session.as_deref_mut(),
                    self.target,
                    Some(&fields),
                    &doc! { "_id": { "$in": targets } },
                )
                .await?
            };
            for c in changes {
                self.move_contribution(
                    db,
                    session.as_deref_mut(),
                    c.before.as_ref(),
                    c.after.as_ref(),
                )
                .await?;
            }
            if let Some(watch) = watch {
                watch.after(db, session).await?;
            }
            Ok(())
        })
    }

    fn rebuild<'a>(
        &'a self,
        db: &'a Database,
        session: Option<&'a mut ClientSession>,
        changes: &'a [Change],
    ) -> BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(self.rebuild_targets(db, session, changes))
    }
}

impl Feed {
    /// [`Dependent::rebuild`]: the targets `changes` point at (before and after), their fields
    /// recomputed from the sources as stored now and written (`$set`) where they exist.
    async fn rebuild_targets(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        changes: &[Change],
    ) -> mongodb::error::Result<()> {
        let mut targets: Vec<Bson> = Vec::new();
        for c in changes {
            for d in [&c.before, &c.after].into_iter().flatten() {
                if let Some(p) = pointer(Some(d), self.by) {
                    if crate::literal::check_id(self.by, &p).is_ok()
                        && !targets.iter().any(|t| id_key(t) == id_key(&p))
                    {
                        targets.push(p);
                    }
                }
            }
        }
        let all: Vec<&'static ComputedFromSpec> = self.specs.clone();
        for target in targets {
            self.recompute_target(
                db,
                s.as_deref_mut(),
                &target,
                &all,
                "a repair of the sources",
            )
            .await?;
        }
        Ok(())
    }

    /// Recomputes `specs` of the target `target` from its sources (one `$group`) and writes
    /// them (`$set`), what derives from them following; `why` goes into the event.
    async fn recompute_target(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        target: &Bson,
        specs: &[&'static ComputedFromSpec],
        why: &'static str,
    ) -> mongodb::error::Result<()> {
        let values = aggregate_one(db, s.as_deref_mut(), self, target, specs).await?;
        let extremes = specs
            .iter()
            .all(|spec| matches!(spec.aggregate(), Aggregate::Min | Aggregate::Max));
        let watch = self
            .watch_target(db, s.as_deref_mut(), target, extremes)
            .await?;
        let collection = self.target_collection(db);
        let write = collection.update_one(
            doc! { "_id": target.clone() },
            doc! { "$set": values.clone() },
        );
        let result = in_session!(write, s.as_deref_mut())?;
        if let Some(watch) = watch {
            watch.after(db, s).await?;
        }
        tracing::debug!(
            target_collection = self.target.collection(),
            target_id = %target,
            values = %values,
            matched = result.matched_count,
            after = why,
            "computed fields recomputed from their sources"
        );
        Ok(())
    }

    /// Moves one source's contribution from `before` to `after` (either missing for an insert
    /// or a delete): the update of the old target and of the new one (one when they are the
    /// same), then a recomputation of the min and max fields a removal may have changed.
    async fn move_contribution(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        before: Option<&Document>,
        after: Option<&Document>,
    ) -> mongodb::error::Result<()> {
        let feed = self;
        if let Some(after) = after {
            for field in feed.source_fields() {
                if let Some(Bson::Double(v)) = after.get(field) {
                    if !v.is_finite() {
                        return Err(abort(Abort::NotFinite { field }));
                    }
                }
            }
        }
        let old = pointer(before, feed.by);
        let new = pointer(after, feed.by);
        // A pointer is an equality in the targets' filters: one that would match another
        // target (stored that way by someone else, or moved in by `$rename`) is refused,
        // and the transaction writes nothing.
        for p in old.iter().chain(new.iter()) {
            if let Err(Error::InvalidValue { reason, .. }) = crate::literal::check_id(feed.by, p) {
                return Err(abort(Abort::BadPointer {
                    field: feed.by,
                    reason,
                }));
            }
        }
        let moved = old.as_ref().map(id_key) != new.as_ref().map(id_key);
        let targets = feed.target_collection(db);
        // Per target: the update, whether the target must exist, the min/max to recompute.
        let mut writes: Vec<(Bson, Update, bool, Vec<&'static ComputedFromSpec>)> = Vec::new();
        if let Some(old) = &old {
            let (update, redo) = if moved {
                contribution(feed, before, None)
            } else {
                contribution(feed, before, after)
            };
            // A target the source already pointed at may be gone: nothing to keep there.
            writes.push((old.clone(), update, false, redo));
        }
        if let (Some(new), true) = (&new, moved) {
            let (update, redo) = contribution(feed, None, after);
            writes.push((new.clone(), update, true, redo));
        }
        for (target, update, must_exist, redo) in writes {
            if !update.is_empty() {
                let write = targets.update_one(doc! { "_id": target.clone() }, update.clone());
                let fields: Vec<&str> = feed.specs.iter().map(|s| s.field()).collect();
                let what = format!("{}.{} of `{target}`", feed.target.name(), fields.join(", "));
                let result = in_session!(write, s.as_deref_mut())
                    .map_err(|e| crate::error::inc_overflow(e, &fields, &what))?;
                tracing::debug!(
                    target_collection = feed.target.collection(),
                    target_id = %target,
                    update = %update,
                    matched = result.matched_count,
                    "computed fields updated"
                );
                if result.matched_count == 0 && must_exist {
                    return Err(abort(Abort::NoTarget {
                        collection: feed.target.collection(),
                        id: Box::new(target),
                    }));
                }
            }
            if !redo.is_empty() {
                self.recompute_target(db, s.as_deref_mut(), &target, &redo, "a removal")
                    .await?;
            }
        }
        Ok(())
    }
}

impl Feed {
    /// Before an update of the target `id`'s computed fields (its min and max only, when
    /// `extremes`): what the target's own dependents read, when one reads them.
    async fn watch_target(
        &self,
        db: &Database,
        s: Option<&mut ClientSession>,
        id: &Bson,
        extremes: bool,
    ) -> mongodb::error::Result<Option<derived::Watch>> {
        let fields: Vec<&str> = self
            .specs
            .iter()
            .filter(|spec| !extremes || matches!(spec.aggregate(), Aggregate::Min | Aggregate::Max))
            .map(|spec| spec.field())
            .collect();
        derived::watch(
            db,
            s,
            self.target,
            Some(&fields),
            &doc! { "_id": id.clone() },
        )
        .await
    }

    fn target_collection(&self, db: &Database) -> Collection<Document> {
        db.collection(self.target.collection())
    }

    fn source_collection(&self, db: &Database) -> Collection<Document> {
        db.collection(self.source.collection())
    }
}

/// The update that moves one source's contribution to one target from `before` to `after`
/// (both pointing at that target; either missing), and the min/max specs to recompute because a
/// value left or moved away from the extreme.
fn contribution(
    feed: &Feed,
    before: Option<&Document>,
    after: Option<&Document>,
) -> (Update, Vec<&'static ComputedFromSpec>) {
    let mut inc = Document::new();
    let mut max = Document::new();
    let mut min = Document::new();
    let mut redo = Vec::new();
    let value = |d: Option<&Document>, spec: &ComputedFromSpec| {
        d.and_then(|d| Num::of(d.get(spec.source_field().unwrap_or_default())))
    };
    for spec in &feed.specs {
        let (old, new) = (value(before, spec), value(after, spec));
        match spec.aggregate() {
            Aggregate::Count => {
                let delta = i64::from(after.is_some()) - i64::from(before.is_some());
                if delta != 0 {
                    inc.insert(spec.field(), Bson::Int64(delta));
                }
            }
            Aggregate::Sum => {
                let delta = match (old, new) {
                    (Some(o), Some(n)) => Some(n.minus(o)),
                    (Some(o), None) => Some(o.negated()),
                    (None, Some(n)) => Some(n),
                    (None, None) => None,
                };
                if let Some(d) = delta.filter(|d| !d.is_zero()) {
                    inc.insert(spec.field(), d.bson());
                }
            }
            Aggregate::Max | Aggregate::Min => {
                let lowered = match (old, new) {
                    (Some(o), Some(n)) => {
                        let (o, n) = (o.as_f64(), n.as_f64());
                        if spec.aggregate() == Aggregate::Max {
                            n < o
                        } else {
                            n > o
                        }
                    }
                    (Some(_), None) => true,
                    _ => false,
                };
                if lowered {
                    redo.push(*spec);
                } else if let Some(n) = new {
                    let ops = if spec.aggregate() == Aggregate::Max {
                        &mut max
                    } else {
                        &mut min
                    };
                    ops.insert(spec.field(), n.bson());
                }
            }
        }
    }
    if min.is_empty() {
        let mut update = Document::new();
        for (op, fields) in [("$inc", inc), ("$max", max)] {
            if !fields.is_empty() {
                update.insert(op, fields);
            }
        }
        return (Update::Operators(update), redo);
    }
    // `$min` keeps a `null` (it sorts before numbers): a pipeline's `$min` ignores it.
    let mut set = Document::new();
    for (field, delta) in inc {
        let current = doc! { "$ifNull": [format!("${field}"), 0] };
        set.insert(field, doc! { "$add": [current, delta] });
    }
    for (op, fields) in [("$max", max), ("$min", min)] {
        for (field, value) in fields {
            let current = format!("${field}");
            set.insert(field, doc! { op: [current, value] });
        }
    }
    (Update::Pipeline(vec![doc! { "$set": set }]), redo)
}

/// The update of one target: operators, or a pipeline when a `$min` must ignore a `null`.
#[derive(Debug, Clone)]
enum Update {
    Operators(Document),
    Pipeline(Vec<Document>),
}

impl Update {
    fn is_empty(&self) -> bool {
        match self {
            Update::Operators(d) => d.is_empty(),
            Update::Pipeline(_) => false,
        }
    }
}

impl fmt::Display for Update {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Update::Operators(d) => write!(f, "{d}"),
            Update::Pipeline(p) => write!(f, "{}", Bson::from(p.clone())),
        }
    }
}

impl From<Update> for mongodb::options::UpdateModifications {
    fn from(u: Update) -> Self {
        match u {
            Update::Operators(d) => d.into(),
            Update::Pipeline(p) => p.into(),
        }
    }
}

/// The values of `specs` for one target, aggregated from its sources: `{field: value}`.
async fn aggregate_one(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    target: &Bson,
    specs: &[&'static ComputedFromSpec],
) -> mongodb::error::Result<Document> {
    let sub = Feed {
        specs: specs.to_vec(),
        ..feed.clone()
    };
    let found = aggregate_many(db, s, &sub, std::slice::from_ref(target)).await?;
    Ok(sub.values(found.get(&id_key(target))))
}

impl Feed {
    /// `{field: value}` of every spec from a `$group` result (the values without sources when
    /// there is none).
    fn values(&self, group: Option<&Document>) -> Document {
        self.specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let value = group
                    .and_then(|g| g.get(format!("f{i}")))
                    .cloned()
                    .unwrap_or_else(|| spec.aggregate().empty());
                (spec.field().to_owned(), value)
            })
            .collect()
    }
}

/// One aggregation of the sources of `targets`: their `$group` results, by target key.
async fn aggregate_many(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    targets: &[Bson],
) -> mongodb::error::Result<HashMap<String, Document>> {
    aggregate_many_within(db, s, feed, targets, None).await
}

/// [`aggregate_many`] bounded by `max_time` (`maxTimeMS`) when given.
async fn aggregate_many_within(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    targets: &[Bson],
    max_time: Option<Duration>,
) -> mongodb::error::Result<HashMap<String, Document>> {
    let pipeline = vec![
        doc! { "$match": { feed.by: { "$in": targets.to_vec() } } },
        feed.group_stage(),
    ];
    let sources = feed.source_collection(db);
    let action = match max_time {
        Some(limit) => sources.aggregate(pipeline).max_time(limit),
        None => sources.aggregate(pipeline),
    };
    let found = collect_in!(action, s)?
        .into_iter()
        .map(|d| (id_key(d.get("_id").unwrap_or(&Bson::Null)), d))
        .collect();
    Ok(found)
}

// ----- the target's side: verify and recompute -----

/// A computed value that disagrees with its sources.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The target model.
    pub model: &'static str,
    /// The target document's `_id`.
    pub id: Bson,
    /// The computed field's BSON name.
    pub field: &'static str,
    /// The stored value (`None` when the field is missing).
    pub stored: Option<Bson>,
    /// The value computed from the sources.
    pub computed: Bson,
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stored = self
            .stored
            .as_ref()
            .map_or_else(|| "missing".to_owned(), ToString::to_string);
        write!(
            f,
            "{} {}: `{}` is {stored}, its sources say {}",
            self.model, self.id, self.field, self.computed
        )
    }
}

/// What a recomputation did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recomputed {
    /// Target documents read.
    pub checked: u64,
    /// Documents whose computed fields were rewritten (they had drifted).
    pub repaired: u64,
    /// Documents left alone because their value changed between the read and the write (only
    /// without transactions: a later run sees them again).
    pub skipped: u64,
}

impl std::ops::AddAssign for Recomputed {
    fn add_assign(&mut self, other: Recomputed) {
        self.checked += other.checked;
        self.repaired += other.repaired;
        self.skipped += other.skipped;
    }
}

/// Where a long recomputation is: passed to the callback of
/// [`ComputedFields::recompute_all_with`] after each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// What was done so far.
    pub done: Recomputed,
    /// The number of target documents when the run started (an estimate: the collection's
    /// count).
    pub total: u64,
}

/// The operations on the computed fields of a target model: `User::computed(&db)`. See the
/// [module documentation](self).
pub struct ComputedFields<M> {
    db: Database,
    feeds: Vec<Feed>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for ComputedFields<M> {
    fn clone(&self) -> Self {
        ComputedFields {
            db: self.db.clone(),
            feeds: self.feeds.clone(),
            tx: self.tx.clone(),
            _model: PhantomData,
        }
    }
}

impl<M: Model> fmt::Debug for ComputedFields<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<&str> = self
            .feeds
            .iter()
            .flat_map(|feed| feed.specs.iter().map(|s| s.field()))
            .collect();
        f.debug_struct("ComputedFields")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.db.name())
            .field("fields", &fields)
            .finish()
    }
}

/// One batch's findings.
struct Batch {
    drifts: Vec<Drift>,
    done: Recomputed,
}

impl<M: Model> ComputedFields<M> {
    /// The computed fields of `M` in `db`.
    pub fn new(db: &Database) -> Self {
        ComputedFields {
            db: db.clone(),
            feeds: Feed::group(M::SCHEMA, M::SCHEMA.computed_from()),
            tx: None,
            _model: PhantomData,
        }
    }

    /// The same computed fields in the caller's transaction `tx`: each batch of
    /// [`recompute`](Self::recompute), [`recompute_all`](Self::recompute_all),
    /// [`verify`](Self::verify) and [`repair`](Self::repair) reads and writes in `tx`'s
    /// session (one transaction for the whole run: keep it to a few documents). See
    /// [`Transaction`].
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        ComputedFields {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// Recomputes the computed fields of the document `id` from its sources and writes those
    /// that differ, in one transaction. [`Error::NotFound`] when there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::computed.recompute",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn recompute(&self, id: impl IntoId<M::Id>) -> Result<Recomputed> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let batch = self.batch(vec![id.clone()], true).await?;
        if batch.done.checked == 0 {
            return Err(Error::NotFound {
                collection: M::SCHEMA.collection().to_owned(),
                id: Box::new(id),
            });
        }
        Ok(batch.done)
    }

    /// Recomputes the computed fields of every document of the model, [`BATCH`] documents per
    /// transaction, and writes those that differ.
    pub async fn recompute_all(&self) -> Result<Recomputed> {
        self.recompute_all_with(|_| {}).await
    }

    /// [`recompute_all`](Self::recompute_all), calling `progress` after each batch.
    #[tracing::instrument(
        name = "pattern_runtime::computed.recompute_all",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn recompute_all_with(
        &self,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<Recomputed> {
        let mut done = Recomputed::default();
        self.each_batch(true, |batch, total| {
            done += batch.done;
            tracing::info!(
                checked = done.checked,
                repaired = done.repaired,
                skipped = done.skipped,
                total,
                "recomputing"
            );
            progress(Progress { done, total });
        })
        .await?;
        Ok(done)
    }

    /// Reads every document of the model, a page at a time, and reports the computed values
    /// that disagree with their sources ([`Check::ComputedDrift`], one finding per field and
    /// page, listing the documents), as the [doctor](mod@crate::doctor) does over a sample.
    /// Writes nothing. [`verify`](Self::verify) lists each value with what it should be.
    #[tracing::instrument(
        name = "pattern_runtime::computed.check",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        let targets = crate::maintenance::targets::<ComputedFromSpec>(M::SCHEMA);
        crate::maintenance::check(&self.db, &targets).await
    }

    /// [`check`](Self::check), then a recomputation of each document it lists ([`BATCH`] per
    /// transaction, as [`recompute`](Self::recompute)), then a check again.
    #[tracing::instrument(
        name = "pattern_runtime::computed.repair",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        let targets = crate::maintenance::targets::<ComputedFromSpec>(M::SCHEMA);
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let mut repaired = 0;
        for ids in found.documents().chunks(BATCH) {
            repaired += self.batch(ids.to_vec(), true).await?.done.repaired;
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// Every computed value of every document that disagrees with its sources; writes nothing.
    /// Reads [`BATCH`] documents per round, each round a consistent snapshot where transactions
    /// exist.
    #[tracing::instrument(
        name = "pattern_runtime::computed.verify",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn verify(&self) -> Result<Vec<Drift>> {
        let mut drifts = Vec::new();
        self.each_batch(false, |batch, _| drifts.extend(batch.drifts))
            .await?;
        Ok(drifts)
    }

    /// Runs `batch` over every document's `_id`, in pages of [`BATCH`] by `_id`.
    async fn each_batch(&self, write: bool, mut each: impl FnMut(Batch, u64) + Send) -> Result<()> {
        let raw = self.raw();
        let total = raw.estimated_document_count().await?;
        let mut last: Option<Bson> = None;
        loop {
            let filter = match &last {
                Some(l) => doc! { "_id": { "$gt": l.clone() } },
                None => Document::new(),
            };
            let find = raw
                .find(filter)
                .projection(doc! { "_id": 1 })
                .sort(doc! { "_id": 1 })
                .limit(BATCH as i64)
                .batch_size(BATCH as u32 + 1);
            let read = {
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                collect_in!(find, session.as_deref_mut())?
            };
            let page: Vec<Bson> = read
                .into_iter()
                .filter_map(|d| d.get("_id").cloned())
                .collect();
            let Some(end) = page.last().cloned() else {
                return Ok(());
            };
            let full = page.len() == BATCH;
            each(self.batch(page, write).await?, total);
            if !full {
                return Ok(());
            }
            last = Some(end);
        }
    }

    /// Reads the targets `ids`, aggregates their sources, and (when `write`) rewrites what
    /// differs: one transaction.
    async fn batch(&self, ids: Vec<Bson>, write: bool) -> Result<Batch> {
        let raw = self.raw();
        let mut projection = doc! { "_id": 1 };
        for feed in &self.feeds {
            for spec in &feed.specs {
                projection.insert(spec.field(), 1);
            }
        }
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let read = raw
                .find(doc! { "_id": { "$in": ids.clone() } })
                .projection(projection.clone())
                .batch_size(ids.len() as u32 + 1);
            let stored: Vec<Document> = collect_in!(read, s.as_deref_mut())?;
            let mut drifts = Vec::new();
            // Per target: `$set` of the recomputed values, filter on the values replaced.
            let mut fixes: Vec<(Bson, Document, Document)> = Vec::new();
            for feed in &self.feeds {
                let found = aggregate_many(&self.db, s.as_deref_mut(), feed, &ids).await?;
                for target in &stored {
                    let Some(id) = target.get("_id") else {
                        continue;
                    };
                    let values = feed.values(found.get(&id_key(id)));
                    for spec in &feed.specs {
                        let computed = values.get(spec.field()).cloned().unwrap_or(Bson::Null);
                        let current = target.get(spec.field());
                        if agrees(spec.aggregate(), current, &computed) {
                            continue;
                        }
                        drifts.push(Drift {
                            model: M::SCHEMA.name(),
                            id: id.clone(),
                            field: spec.field(),
                            stored: current.cloned(),
                            computed: computed.clone(),
                        });
                        let fix = match fixes.iter_mut().find(|(i, _, _)| id_key(i) == id_key(id)) {
                            Some(fix) => fix,
                            None => {
                                fixes.push((
                                    id.clone(),
                                    doc! { "_id": id.clone() },
                                    Document::new(),
                                ));
                                fixes.last_mut().expect("just pushed")
                            }
                        };
                        let was = match current {
                            Some(v) => v.clone(),
                            None => Bson::Document(doc! { "$exists": false }),
                        };
                        fix.1.insert(spec.field(), was);
                        fix.2.insert(spec.field(), computed);
                    }
                }
            }
            let mut done = Recomputed {
                checked: stored.len() as u64,
                ..Recomputed::default()
            };
            if write && !fixes.is_empty() {
                let updates: Vec<Document> = fixes
                    .iter()
                    .map(|(_, q, set)| doc! { "q": q.clone(), "u": { "$set": set.clone() } })
                    .collect();
                let command = doc! {
                    "update": M::SCHEMA.collection(),
                    "updates": updates,
                    "ordered": false,
                };
                let run = self.db.run_command(command);
                let reply = in_session!(run, s)?;
                let matched = match reply.get("n") {
                    Some(Bson::Int32(n)) => *n as u64,
                    Some(Bson::Int64(n)) => *n as u64,
                    _ => 0,
                };
                done.repaired = matched;
                done.skipped = fixes.len() as u64 - matched.min(fixes.len() as u64);
                tracing::debug!(
                    repaired = done.repaired,
                    skipped = done.skipped,
                    "computed values rewritten"
                );
            }
            Ok(Batch { drifts, done })
        })
    }

    /// Recomputes every document every `interval`, in a background task, starting now: for
    /// values whose freshness need is low (a dashboard's totals). Each run's outcome is kept
    /// until read ([`Refresher::next`]) or returned by [`Refresher::stop`]; a failed run is
    /// also an `ERROR` event. Needs a Tokio runtime.
    pub fn refresh_every(&self, interval: Duration) -> Refresher
    where
        M: Send + Sync + 'static,
    {
        let fields = self.clone();
        Periodic::start(
            "computed.recompute_all",
            M::SCHEMA.name(),
            interval,
            move || {
                let fields = fields.clone();
                async move { fields.recompute_all().await }
            },
        )
    }
}

/// A background recomputation from [`ComputedFields::refresh_every`]: a [`Periodic`] whose
/// runs are [`ComputedFields::recompute_all`].
pub type Refresher = Periodic<Recomputed>;

/// What a [`Refresher`] did, from [`Periodic::stop`].
pub type Refreshed = Stopped<Recomputed>;

//! The subset pattern, with computed summary fields.
//!
//! A parent document keeps the first N items of a collection, by a fixed order, in an embedded
//! array (`recentReviews`: the 10 newest reviews of a product), while every item lives in its own
//! collection (`product_reviews`). Computed fields next to the array (`ratingCount`, `ratingSum`,
//! `ratingAvg`) summarise *all* items, not only the embedded ones.
//!
//! ```
//! use pattern_runtime::{Fields, Model};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[model(collection = "products")]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
//!     recent_reviews: Vec<ReviewExcerpt>,
//!     #[computed(count = recent_reviews)]
//!     rating_count: i64,
//!     #[computed(sum = recent_reviews.stars)]
//!     rating_sum: i64,
//!     #[computed(avg = recent_reviews.stars)]
//!     rating_avg: Option<f64>,
//! }
//!
//! /// A review, as stored in `product_reviews`.
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[model(collection = "product_reviews")]
//! struct Review {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     product_id: String,
//!     stars: i32,
//!     content: String,
//!     created_at: bson::DateTime,
//! }
//!
//! /// A review as the product embeds it: an excerpt (`Fields`: it carries the sort field).
//! #[derive(Serialize, Deserialize, Fields)]
//! #[serde(rename_all = "camelCase")]
//! struct ReviewExcerpt {
//!     review_id: String,
//!     stars: i32,
//!     excerpt: String,
//!     created_at: bson::DateTime,
//! }
//!
//! impl From<&Review> for ReviewExcerpt {
//!     fn from(r: &Review) -> Self {
//!         ReviewExcerpt {
//!             review_id: r.id.clone(),
//!             stars: r.stars,
//!             excerpt: r.content.chars().take(40).collect(),
//!             created_at: r.created_at,
//!         }
//!     }
//! }
//!
//! # async fn run(db: mongodb::Database, review: Review) -> pattern_runtime::Result<()> {
//! let reviews = Product::recent_reviews_subset(&db);
//! reviews
//!     .push("prod_123", review)
//!     .set(bson::doc! { "updatedAt": bson::DateTime::now() })
//!     .await?;
//! let older = reviews.page("prod_123", 10, 20).await?; // items 11 to 30, from product_reviews
//! let count = reviews.count("prod_123").await?;         // from ratingCount
//! # Ok(()) }
//! ```
//!
//! # The embedded type
//!
//! The embedded type carries each sort field under the same serialized name as the full item,
//! with `#[derive(Fields)]`: `$push`'s `$sort` orders the embedded items by their own keys, while
//! the index on the full collection uses the full item's names. A missing field or a different
//! name is a compile error at the sort field.
//!
//! # Non-finite values
//!
//! A NaN or an infinity in an item field that a computed sum or average adds up is
//! [`Error::InvalidValue`], and nothing is written: `$inc` would make the sum NaN or infinite for
//! good. Counts and the embedded items themselves are not affected by the rule.
//!
//! # Consistency
//!
//! `push` writes the full item and updates the parent (`$push` with `$each/$sort/$slice`, `$inc`
//! of every count and sum, and the caller's `$set`) in one transaction where the deployment has
//! transactions (a replica set or a sharded cluster); an average is then recomputed from its sum
//! and count by a second update in the same transaction. Transient errors are retried by the
//! driver's transaction loop. On a standalone server the full item is written first, so no item
//! is ever lost: a crash between the two writes leaves the parent behind, and
//! [`Subset::rebuild`] repairs it.
//!
//! The subset is in the [map of derived data](crate::derived): a full item inserted, updated or
//! deleted through another handle ([`Computing`](crate::Computing), a polymorphic variant, a
//! two-way `assign` moving it to another parent) rebuilds the subset of its parent, before and
//! after, in that write's transaction (one read of the first items and one `$group` per
//! parent). The parent's array and counters are the subset's own: another handle's update of
//! them, or a push's `set` of another pattern's field, is refused ([`Error::InvalidKey`]).
//!
//! # Tracing
//!
//! `push` (and `push_many`), `rebuild` and `remove` run in `INFO` spans named
//! `pattern_runtime::subset.<operation>`, `page` and `count` in `DEBUG` spans, with the fields
//! `model` and `collection` (the parent's), `items_collection`, `field` and `id` (the parent's
//! `_id`). Every write is followed by a `DEBUG` event with what it matched, modified, inserted or
//! deleted; an error returned is a `DEBUG` event of the span.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use mongodb::{ClientSession, Database};
use serde::Serialize;

use crate::derived;
use crate::error::{check_finite, check_size, validate_key, Error, Result};
use crate::finding::{compare, examples, id_key, number, Bounded, Check, Finding};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{transact, Transaction};

/// What a computed field summarises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComputedKind {
    /// The number of items.
    Count,
    /// The sum of an item field (BSON name in the full item).
    Sum {
        /// The item field.
        item_field: &'static str,
    },
    /// The mean of an item field: its sum divided by the count, `null` while there are no items.
    Avg {
        /// The item field.
        item_field: &'static str,
        /// The parent field holding the sum of that item field.
        sum_field: &'static str,
        /// The parent field holding the count.
        count_field: &'static str,
    },
}

/// A parent field computed from a subset's items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Computed {
    /// The parent field's BSON name.
    pub field: &'static str,
    /// What it holds.
    pub kind: ComputedKind,
}

/// A `#[subset(...)]` field, as static data.
#[derive(Debug, Clone, Copy)]
pub struct SubsetSpec {
    parts: SubsetParts,
}

/// A subset's embedded items and counters, kept from the full items: one entry of the
/// [map of derived data](crate::derived). A full item inserted, written or deleted through
/// another handle ([`Computing`](crate::Computing), a polymorphic variant) rebuilds the subset
/// of its parent (before and after), in the same transaction.
#[derive(Debug)]
struct SubsetItems {
    spec: &'static SubsetSpec,
    parent: &'static ModelSchema,
    full: &'static ModelSchema,
}

impl crate::schema::Dependent for SubsetItems {
    fn source(&self) -> &'static ModelSchema {
        self.full
    }

    /// Every field of the full item: the embedded form is the application's `From`, which may
    /// read any of them.
    fn reads(&self) -> Vec<&'static str> {
        self.full.fields().iter().map(|f| f.bson_name()).collect()
    }

    fn pattern(&self) -> &'static str {
        "subset"
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} (subset of {})",
            self.parent.name(),
            self.spec.field(),
            self.full.name()
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        mut session: Option<&'a mut ClientSession>,
        changes: &'a [crate::schema::Change],
    ) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            let key = self.spec.parts.parent_key;
            let mut parents: Vec<Bson> = Vec::new();
            for c in changes {
                for d in [&c.before, &c.after].into_iter().flatten() {
                    if let Some(p) = d.get(key).filter(|p| !matches!(p, Bson::Null)) {
                        if !parents.iter().any(|q| id_key(q) == id_key(p)) {
                            parents.push(p.clone());
                        }
                    }
                }
            }
            if parents.is_empty() {
                return Ok(());
            }
            // What derives from the parents' subsets (a copy of a count) follows too.
            let mut fields: Vec<&str> = vec![self.spec.parts.field];
            fields.extend(self.spec.parts.computed.iter().map(|c| c.field));
            let watch = derived::watch(
                db,
                session.as_deref_mut(),
                self.parent,
                Some(&fields),
                &doc! { "_id": { "$in": parents.clone() } },
            )
            .await?;
            for p in &parents {
                ((self.spec.parts.rebuild)())(db, self.spec, session.as_deref_mut(), p).await?;
            }
            if let Some(watch) = watch {
                watch.after(db, session).await?;
            }
            Ok(())
        })
    }
}

impl PatternSpec for SubsetSpec {
    /// The subset's items, kept from the full model's documents.
    fn dependents(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        match derived::model_named(self.parts.full_model, self.full_collection()) {
            Some(full) => vec![Box::new(SubsetItems {
                spec: self,
                parent: model,
                full,
            })],
            None => Vec::new(),
        }
    }

    /// The embedded array and its counters: pushes, removals and rebuilds write them.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        let why = "the subset keeps it from its full items: `push`, `remove` or `rebuild` \
                   through the field's `Subset` handle";
        std::iter::once(self.parts.field)
            .chain(self.parts.computed.iter().map(|c| c.field))
            .map(|f| (f, why))
            .collect()
    }

    /// The full collection's `{parent key, sort fields}` index.
    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(self.full_collection(), self.full_index())]
    }

    fn bounded_arrays(&'static self) -> Vec<Bounded> {
        vec![Bounded {
            field: self.field(),
            by: "`#[subset]`",
        }]
    }

    /// The sampled parents whose subset is over its limit, out of its order, or (with a
    /// computed count) disagrees with the full collection: a count that differs, or fewer items
    /// than the full collection could fill. One aggregation of the full collection.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(audit_subset(self, sample)))
    }
}

async fn audit_subset(spec: &'static SubsetSpec, sample: &Sample<'_>) -> Result<Vec<Finding>> {
    let limit = spec.limit() as usize;
    let (mut over, mut unordered, mut miscounted) = (Vec::new(), Vec::new(), Vec::new());
    let mut largest = 0;
    let mut first_miscount: Option<String> = None;
    // The sums kept beside the subset, each compared with the full items' (like the count).
    let sums: Vec<(&'static str, &'static str)> = spec
        .computed()
        .iter()
        .filter_map(|c| match c.kind {
            ComputedKind::Sum { item_field } => Some((c.field, item_field)),
            _ => None,
        })
        .collect();
    let counts = match (spec.count_field(), sums.is_empty()) {
        (None, true) => None,
        _ if sample.documents.is_empty() => None,
        _ => {
            let mut group = doc! { "_id": format!("${}", spec.parent_key()), "n": { "$sum": 1 } };
            for (i, (_, item_field)) in sums.iter().enumerate() {
                group.insert(format!("s{i}"), doc! { "$sum": format!("${item_field}") });
            }
            let pipeline = vec![
                doc! { "$match": { spec.parent_key(): { "$in": sample.ids() } } },
                doc! { "$group": group },
            ];
            let found: Vec<Document> = sample
                .db
                .collection::<Document>(spec.full_collection())
                .aggregate(pipeline)
                .max_time(sample.max_time)
                .await?
                .try_collect()
                .await?;
            Some(found)
        }
    };
    for parent in sample.documents {
        let Some(id) = parent.get("_id") else {
            continue;
        };
        let items: Vec<&Document> = match parent.get(spec.field()) {
            Some(Bson::Array(a)) => a.iter().filter_map(Bson::as_document).collect(),
            _ => Vec::new(),
        };
        largest = largest.max(items.len());
        if items.len() > limit {
            over.push(id.clone());
        }
        if items.windows(2).any(|w| out_of_order(spec, w[0], w[1])) {
            unordered.push(id.clone());
        }
        let totals = counts.as_ref().and_then(|c| {
            c.iter()
                .find(|c| c.get("_id").map(id_key) == Some(id_key(id)))
        });
        let sums_differ = counts.is_some()
            && sums.iter().enumerate().any(|(i, (field, _))| {
                let full = totals
                    .and_then(|t| t.get(format!("s{i}")))
                    .and_then(number)
                    .unwrap_or(0.0);
                let stored = parent.get(*field).and_then(number);
                !stored.is_some_and(|s| (s - full).abs() <= 1e-9 * s.abs().max(full.abs()).max(1.0))
            });
        if sums_differ {
            first_miscount.get_or_insert_with(|| {
                let fields: Vec<&str> = sums.iter().map(|(f, _)| *f).collect();
                format!(
                    "`_id` {id}: `{}` disagrees with the items of `{}`",
                    fields.join("`, `"),
                    spec.full_collection()
                )
            });
            miscounted.push(id.clone());
        }
        if let (Some(_), Some(field), false) = (&counts, spec.count_field(), sums_differ) {
            let full = totals
                .and_then(|c| c.get("n"))
                .and_then(number)
                .unwrap_or(0.0);
            let stored = parent.get(field).and_then(number);
            #[allow(clippy::cast_precision_loss)]
            let short = (items.len() as f64) < full.min(limit as f64);
            if stored != Some(full) || short {
                first_miscount.get_or_insert_with(|| {
                    let stored = parent
                        .get(field)
                        .map_or_else(|| "no".to_owned(), ToString::to_string);
                    format!(
                        "`_id` {id} holds {} items and `{field}` {stored}, `{}` has {full} of \
                         its items",
                        items.len(),
                        spec.full_collection()
                    )
                });
                miscounted.push(id.clone());
            }
        }
    }
    let rust = sample
        .model
        .field_by_bson_name(spec.field())
        .map_or(spec.field(), |f| f.rust_name());
    let fix = format!(
        "`{model}::{rust}_subset(&db).repair()` (or `rebuild(parent_id)` for each), which \
         refills the subset and its computed fields from `{}`",
        spec.full_collection(),
        model = sample.model.name(),
    );
    let n = sample.documents.len();
    let mut findings = Vec::new();
    for (ids, what) in [
        (
            &over,
            format!("over the limit of {limit} (largest {largest})"),
        ),
        (
            &unordered,
            format!("out of the order {}", spec.sort_document()),
        ),
        (
            &miscounted,
            format!(
                "disagreeing with `{}` (a count that differs, or fewer items than it could \
                 fill)",
                spec.full_collection()
            ),
        ),
    ] {
        if ids.is_empty() {
            continue;
        }
        let example = if std::ptr::eq(ids, &miscounted) {
            first_miscount.clone().unwrap_or_default()
        } else {
            examples(ids)
        };
        findings.push(
            sample
                .finding(
                    Check::SubsetDrift,
                    spec.field(),
                    format!("{} of {n} sampled documents {what}; {example}", ids.len()),
                    fix.clone(),
                )
                .about(ids.iter().cloned()),
        );
    }
    Ok(findings)
}

/// Whether two stored values hold the same data as the server compares it: numbers by value
/// whatever their width (an `Int32` written where `E` writes an `Int64`), documents field by
/// field, arrays item by item, anything else as the same bytes.
fn same_stored(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_stored(v, w)))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_stored(v, w))
        }
        (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
            let int = |v: &Bson| match v {
                Bson::Int32(n) => i64::from(*n),
                Bson::Int64(n) => *n,
                _ => 0,
            };
            int(a) == int(b)
        }
        _ => match (number(a), number(b)) {
            #[allow(clippy::float_cmp)] // the same number, as the server compares it
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => crate::finding::same_value(Some(a), Some(b)),
        },
    }
}

/// Whether `b` comes before `a` in the subset's order (values the check cannot compare are
/// taken as in order).
fn out_of_order(spec: &SubsetSpec, a: &Document, b: &Document) -> bool {
    for (field, direction) in spec.sort() {
        let (Some(x), Some(y)) = (a.get(*field), b.get(*field)) else {
            return false;
        };
        match compare(x, y) {
            Some(std::cmp::Ordering::Equal) => {}
            Some(o) => return (o == std::cmp::Ordering::Greater) == (*direction > 0),
            None => return false,
        }
    }
    false
}

impl ModelSchema {
    /// The model's `#[subset(...)]` fields.
    pub fn subsets(&self) -> Vec<&'static SubsetSpec> {
        self.specs().collect()
    }
}

/// The parts of a [`SubsetSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SubsetParts {
    pub field: &'static str,
    pub limit: u32,
    pub sort: &'static [(&'static str, i32)],
    pub parent_key: &'static str,
    pub full_collection: fn() -> &'static str,
    pub full_model: &'static str,
    pub full_index: IndexSpec,
    pub computed: &'static [Computed],
    /// Rebuilds the subset of one parent from the full collection, in a session: what the map
    /// of derived data calls when a full item is written through another handle. A function
    /// giving it, so that generated code picks it by autoref (`RebuildProbe`) and a wrong type
    /// is reported once, by the derive's own check.
    pub rebuild: fn() -> Rebuild,
}

/// Picks `Subset::<P, F, E>::rebuild_in` when the types allow it (generated code:
/// `(&&RebuildProbe::<P, F, E>::new()).rebuild()`), a function that rebuilds nothing otherwise
/// (the derive reports the types' error itself).
#[allow(clippy::type_complexity)] // a marker of three types
pub struct RebuildProbe<P, F, E>(PhantomData<fn() -> (P, F, E)>);

impl<P, F, E> RebuildProbe<P, F, E> {
    /// The probe.
    #[allow(clippy::new_without_default)] // built in generated code only
    pub const fn new() -> Self {
        RebuildProbe(PhantomData)
    }
}

/// The rebuild of a subset whose types are right.
pub trait ProbeRebuild {
    /// `Subset::<P, F, E>::rebuild_in`.
    fn rebuild(&self) -> Rebuild;
}
impl<P, F, E> ProbeRebuild for &RebuildProbe<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    fn rebuild(&self) -> Rebuild {
        Subset::<P, F, E>::rebuild_in
    }
}

/// The rebuild of a subset whose types are wrong (never called: the code does not compile).
pub trait ProbeNoRebuild {
    /// Rebuilds nothing.
    fn rebuild(&self) -> Rebuild {
        |_, _, _, _| Box::pin(async { Ok(false) })
    }
}
impl<P, F, E> ProbeNoRebuild for RebuildProbe<P, F, E> {}

/// `Subset::<P, F, E>::rebuild_in` for one field, as generated code names it.
pub type Rebuild = for<'a> fn(
    &'a Database,
    &'static SubsetSpec,
    Option<&'a mut ClientSession>,
    &'a Bson,
) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<bool>>;

impl SubsetSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: SubsetParts) -> Self {
        SubsetSpec { parts }
    }

    /// The parent's array field (BSON name).
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// How many items the parent keeps.
    pub fn limit(&self) -> u32 {
        self.parts.limit
    }

    /// The order of the items: item fields (BSON names) with `1` or `-1`.
    pub fn sort(&self) -> &'static [(&'static str, i32)] {
        self.parts.sort
    }

    /// The field of the full item that holds the parent's `_id`.
    pub fn parent_key(&self) -> &'static str {
        self.parts.parent_key
    }

    /// The collection of the full items.
    pub fn full_collection(&self) -> &'static str {
        (self.parts.full_collection)()
    }

    /// The index the full collection needs: `{parent key, sort fields}`. Synced with the parent.
    pub fn full_index(&'static self) -> &'static IndexSpec {
        &self.parts.full_index
    }

    /// The computed fields of the parent that summarise this subset.
    pub fn computed(&self) -> &'static [Computed] {
        self.parts.computed
    }

    /// The model name of the full items.
    pub fn full_model(&self) -> &'static str {
        self.parts.full_model
    }

    /// The `$sort` document (`{ "createdAt": -1 }`).
    pub fn sort_document(&self) -> Document {
        self.parts
            .sort
            .iter()
            .map(|(k, d)| ((*k).to_owned(), Bson::Int32(*d)))
            .collect()
    }

    fn count_field(&self) -> Option<&'static str> {
        self.parts
            .computed
            .iter()
            .find(|c| c.kind == ComputedKind::Count)
            .map(|c| c.field)
    }
}

/// The parent, full item and embedded item types of a [`Subset`], without owning any.
type Types<P, F, E> = PhantomData<fn() -> (P, F, E)>;

/// The operations of one subset: the parent model `P`, the full item `F` and the embedded
/// form `E` (built from `&F`). Get one from the generated `P::<field>_subset(&db)`.
pub struct Subset<P, F, E> {
    db: Database,
    spec: &'static SubsetSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _types: Types<P, F, E>,
}

impl<P, F, E> Clone for Subset<P, F, E> {
    fn clone(&self) -> Self {
        Subset {
            db: self.db.clone(),
            spec: self.spec,
            tx: self.tx.clone(),
            _types: PhantomData,
        }
    }
}

impl<P, F, E> std::fmt::Debug for Subset<P, F, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subset").field("spec", self.spec).finish()
    }
}

/// Sums of the items' fields, as one `$inc` value per computed sum.
fn sum_of(item: &Document, field: &str) -> Bson {
    match item.get(field) {
        Some(Bson::Int32(i)) => Bson::Int64(i64::from(*i)),
        Some(v @ (Bson::Int64(_) | Bson::Double(_))) => v.clone(),
        // `$sum` ignores missing and non-numeric values; so does the running sum.
        _ => Bson::Int64(0),
    }
}

/// An integer as the shell writes it: `Int32` when it fits (the server promotes a `$inc` that
/// overflows 32 bits to a long).
fn small(v: Bson) -> Bson {
    match v {
        Bson::Int64(i) => i32::try_from(i).map_or(Bson::Int64(i), Bson::Int32),
        other => other,
    }
}

fn add(a: Bson, b: Bson) -> Bson {
    match (a, b) {
        (Bson::Int64(x), Bson::Int64(y)) => Bson::Int64(x.wrapping_add(y)),
        (x, y) => Bson::Double(as_f64(&x) + as_f64(&y)),
    }
}

fn as_f64(v: &Bson) -> f64 {
    match v {
        #[allow(clippy::cast_precision_loss)]
        Bson::Int64(i) => *i as f64,
        Bson::Int32(i) => f64::from(*i),
        Bson::Double(d) => *d,
        _ => 0.0,
    }
}

fn negate(v: Bson) -> Bson {
    match v {
        Bson::Int64(i) => Bson::Int64(i.wrapping_neg()),
        Bson::Double(d) => Bson::Double(-d),
        other => other,
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

    /// The same subset in the caller's transaction `tx`: its pushes, rebuilds and removals run
    /// in it and commit or abort with it (see [`Transaction`]).
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        Subset {
            tx: Some(tx.clone()),
            ..self.clone()
        }
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
    /// Rebuilds the subset of `parent_id` from the full collection in `session`: the
    /// [`SubsetParts::rebuild`] generated code names. Whether the parent exists.
    #[doc(hidden)]
    pub fn rebuild_in<'a>(
        db: &'a Database,
        spec: &'static SubsetSpec,
        session: Option<&'a mut ClientSession>,
        parent_id: &'a Bson,
    ) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<bool>> {
        Box::pin(async move {
            Subset::<P, F, E>::new(db, spec)
                .write_rebuild(session, parent_id)
                .await
        })
    }

    /// Writes `item` to the full collection and adds it to the parent's subset and computed
    /// fields. Chain `.set(doc! { .. })` to set more parent fields in the same update.
    ///
    /// Errors: [`Error::NotFound`] when no parent has this `_id` (nothing is written);
    /// [`Error::DocumentTooLarge`] when the item, or the parent with it, is over 16 MiB (nothing is
    /// written); [`Error::InvalidKey`] for a `.set()` key that cannot be a field or that the
    /// subset already writes; [`Error::DuplicateKey`] when an item with this `_id` exists.
    pub fn push(&self, parent_id: impl IntoId<P::Id>, item: F) -> Push<'_, P, F, E> {
        Push {
            subset: self,
            parent_id: crate::literal::typed_id("_id", parent_id.into_id()),
            items: vec![item],
            set: Document::new(),
        }
    }

    /// [`push`](Subset::push) for many items at once: one insert of the full items and one update
    /// of the parent, whatever their number.
    pub fn push_many(&self, parent_id: impl IntoId<P::Id>, items: Vec<F>) -> Push<'_, P, F, E> {
        Push {
            subset: self,
            parent_id: crate::literal::typed_id("_id", parent_id.into_id()),
            items,
            set: Document::new(),
        }
    }

    /// The update [`push`](Subset::push) sends to the parent for these full items (before the
    /// average, which a second, pipeline update recomputes): `$push` with `$each`, `$sort` and
    /// `$slice`, `$inc` of every count and sum, and `set` as `$set`.
    pub fn push_update(&self, items: &[F], set: Document) -> Result<Document> {
        self.validate_set(&set)?;
        let mut embedded = Vec::with_capacity(items.len());
        let mut full = Vec::with_capacity(items.len());
        for item in items {
            let doc = bson::serialize_to_document(item)?;
            self.check_summed(&doc)?;
            full.push(doc);
            embedded.push(Bson::Document(bson::serialize_to_document(&E::from(item))?));
        }
        Ok(self.update_from_docs(&full, embedded, set))
    }

    /// [`Error::InvalidValue`] when a field the computed sums and averages add up is NaN or
    /// infinite: one such value would spoil the running sum for good.
    fn check_summed(&self, item: &Document) -> Result<()> {
        for c in self.spec.parts.computed {
            if let ComputedKind::Sum { item_field } | ComputedKind::Avg { item_field, .. } = c.kind
            {
                check_finite(item, item_field, "a computed sum or average")?;
            }
        }
        Ok(())
    }

    fn update_from_docs(&self, full: &[Document], embedded: Vec<Bson>, set: Document) -> Document {
        let spec = &self.spec.parts;
        let mut inc = Document::new();
        for c in spec.computed {
            match c.kind {
                ComputedKind::Count => {
                    inc.insert(
                        c.field,
                        small(Bson::Int64(i64::try_from(full.len()).unwrap_or(i64::MAX))),
                    );
                }
                ComputedKind::Sum { item_field } => {
                    let total = full
                        .iter()
                        .map(|d| sum_of(d, item_field))
                        .fold(Bson::Int64(0), add);
                    inc.insert(c.field, small(total));
                }
                ComputedKind::Avg { .. } => {}
            }
        }
        let mut update = Document::new();
        if !inc.is_empty() {
            update.insert("$inc", inc);
        }
        if !set.is_empty() {
            update.insert("$set", set);
        }
        update.insert(
            "$push",
            doc! {
                spec.field: {
                    "$each": embedded,
                    "$sort": self.spec.sort_document(),
                    "$slice": small(Bson::Int64(i64::from(spec.limit))),
                }
            },
        );
        update
    }

    /// The pipeline update that recomputes every average from its sum and count, or `None`.
    fn average_update(&self) -> Option<Vec<Document>> {
        let mut set = Document::new();
        for c in self.spec.parts.computed {
            if let ComputedKind::Avg {
                sum_field,
                count_field,
                ..
            } = c.kind
            {
                let count = format!("${count_field}");
                let sum = format!("${sum_field}");
                set.insert(
                    c.field,
                    doc! { "$cond": [
                        { "$gt": [&count, 0] },
                        { "$divide": [sum, &count] },
                        Bson::Null,
                    ] },
                );
            }
        }
        (!set.is_empty()).then(|| vec![doc! { "$set": set }])
    }

    /// The checks [`push`](Subset::push) makes before writing anything.
    fn validate_set(&self, set: &Document) -> Result<()> {
        crate::error::check_encodable("the `set` of a push", set)?;
        let spec = &self.spec.parts;
        for (key, value) in set {
            validate_key(key)?;
            // Stored as given: no `$` or `.` keys inside, as in the items.
            crate::literal::check_value(key, value)?;
            if key == "_id" || key.starts_with("_id.") {
                return Err(Error::InvalidKey {
                    key: key.clone(),
                    reason: "a document's `_id` never changes",
                });
            }
            if key == spec.field || spec.computed.iter().any(|c| c.field == key) {
                return Err(Error::InvalidKey {
                    key: key.clone(),
                    reason: "the subset already writes this field in the same update",
                });
            }
        }
        // Nor what another pattern keeps in the parent (a tree's parent, a computed value).
        derived::check_kept(P::SCHEMA, set.keys().map(String::as_str))?;
        Ok(())
    }

    /// `e` from the parent's update: an `$inc` of the counters past the 64-bit range as
    /// [`Error::InvalidValue`] naming them.
    fn overflow(&self, e: mongodb::error::Error) -> mongodb::error::Error {
        let fields: Vec<&str> = self.spec.parts.computed.iter().map(|c| c.field).collect();
        let what = format!("{}.{}", P::SCHEMA.name(), fields.join(", "));
        crate::error::inc_overflow(e, &fields, &what)
    }

    /// Whether `d` is this subset's own entry in the map (its writes keep it themselves).
    fn is_mine(&self, d: &dyn crate::schema::Dependent) -> bool {
        d.pattern() == "subset"
            && d.describe()
                == format!(
                    "{}.{} (subset of {})",
                    P::SCHEMA.name(),
                    self.spec.field(),
                    F::SCHEMA.name()
                )
    }

    fn parents(&self) -> mongodb::Collection<Document> {
        self.db.collection(P::SCHEMA.collection())
    }

    fn fulls(&self) -> mongodb::Collection<Document> {
        self.db.collection(self.spec.full_collection())
    }

    async fn write_push(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
        full: &[Document],
        update: &Document,
    ) -> mongodb::error::Result<bool> {
        let parents = self.parents();
        let fulls = self.fulls();
        let filter = doc! { "_id": parent_id.clone() };
        let average = self.average_update();
        match session {
            Some(s) => {
                // The parent first: a missing parent aborts before the item is written.
                let r = parents
                    .update_one(filter.clone(), update.clone())
                    .session(&mut *s)
                    .await
                    .map_err(|e| self.overflow(e))?;
                if r.matched_count == 0 {
                    tracing::debug!("no parent with this _id: nothing written");
                    return Ok(false);
                }
                parent_updated(&r, true);
                if let [one] = full {
                    fulls.insert_one(one).session(&mut *s).await?;
                } else {
                    fulls.insert_many(full).session(&mut *s).await?;
                }
                items_inserted(full.len(), true);
                // What other models derive from the full items (a count of them elsewhere).
                derived::inserted_except(&self.db, Some(&mut *s), F::SCHEMA, full, &|d| {
                    self.is_mine(d)
                })
                .await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
            }
            None => {
                // Without transactions: is the parent there, then the full items, then the parent.
                if parents.count_documents(filter.clone()).limit(1).await? == 0 {
                    tracing::debug!("no parent with this _id: nothing written");
                    return Ok(false);
                }
                if let [one] = full {
                    fulls.insert_one(one).await?;
                } else {
                    fulls.insert_many(full).await?;
                }
                items_inserted(full.len(), false);
                derived::inserted_except(&self.db, None, F::SCHEMA, full, &|d| self.is_mine(d))
                    .await?;
                let r = parents
                    .update_one(filter.clone(), update.clone())
                    .await
                    .map_err(|e| self.overflow(e))?;
                parent_updated(&r, false);
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).await?;
                    averages_updated(&r, false);
                }
            }
        }
        Ok(true)
    }

    #[tracing::instrument(
        name = "pattern_runtime::subset.push",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            items_collection = self.spec.full_collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
            items = items.len(),
        ),
        err(level = "debug")
    )]
    async fn run_push(&self, parent_id: Result<Bson>, items: Vec<F>, set: Document) -> Result<()> {
        let parent_id = parent_id?;
        tracing::Span::current().record("id", tracing::field::display(&parent_id));
        if items.is_empty() {
            return Ok(());
        }
        self.validate_set(&set)?;
        let what = format!("the {} item", F::SCHEMA.name());
        let mut full = Vec::with_capacity(items.len());
        let mut embedded = Vec::with_capacity(items.len());
        for item in &items {
            let mut doc = bson::serialize_to_document(item)?;
            check_size(&doc, &what)?;
            self.check_summed(&doc)?;
            // The item belongs to this parent, whatever the caller set.
            doc.insert(self.spec.parts.parent_key, parent_id.clone());
            full.push(doc);
            let e = bson::serialize_to_document(&E::from(item))?;
            check_size(&e, &format!("the embedded form of {what}"))?;
            for (key, _) in self.spec.parts.sort {
                if !e.contains_key(key) {
                    return Err(Error::InvalidKey {
                        key: (*key).to_owned(),
                        reason: "the embedded item has no such field, yet the subset sorts by it: \
                                 serialize it under the same name as in the full item",
                    });
                }
            }
            embedded.push(Bson::Document(e));
        }
        let update = self.update_from_docs(&full, embedded, set);
        let found = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_parent(s.as_deref_mut(), &parent_id).await?;
            let done = self
                .write_push(s.as_deref_mut(), &parent_id, &full, &update)
                .await?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok(done)
        })?;
        if found {
            Ok(())
        } else {
            Err(self.parent_not_found(parent_id))
        }
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
        fields.extend(parts.computed.iter().map(|c| c.field));
        derived::watch(
            &self.db,
            session,
            P::SCHEMA,
            Some(&fields),
            &doc! { "_id": parent_id.clone() },
        )
        .await
    }

    fn parent_not_found(&self, id: Bson) -> Error {
        Error::NotFound {
            collection: P::SCHEMA.collection().to_owned(),
            id: Box::new(id),
        }
    }

    /// Items of the full collection in the subset's order, `skip` then at most `limit`: the
    /// pages after the embedded one start at `skip = limit of the subset`.
    #[tracing::instrument(
        name = "pattern_runtime::subset.page",
        level = "debug",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            items_collection = self.spec.full_collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
            skip,
            limit,
        ),
        err(level = "debug")
    )]
    pub async fn page(
        &self,
        parent_id: impl IntoId<P::Id>,
        skip: u64,
        limit: i64,
    ) -> Result<Vec<F>> {
        let parent_id = crate::literal::typed_id("_id", parent_id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&parent_id));
        let filter = doc! { self.spec.parts.parent_key: parent_id };
        let cursor = self
            .db
            .collection::<F>(self.spec.full_collection())
            .find(filter)
            .sort(self.spec.sort_document())
            .skip(skip)
            .limit(limit)
            .await?;
        let items: Vec<F> = cursor.try_collect().await?;
        tracing::debug!(read = items.len(), "items read");
        Ok(items)
    }

    /// How many items the parent has: its count field when one is declared (one read of one
    /// field), else a count of the full collection.
    #[tracing::instrument(
        name = "pattern_runtime::subset.count",
        level = "debug",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            items_collection = self.spec.full_collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn count(&self, parent_id: impl IntoId<P::Id>) -> Result<i64> {
        let parent_id = crate::literal::typed_id("_id", parent_id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&parent_id));
        let Some(field) = self.spec.count_field() else {
            let filter = doc! { self.spec.parts.parent_key: parent_id };
            let n = self.fulls().count_documents(filter).await?;
            return Ok(i64::try_from(n).unwrap_or(i64::MAX));
        };
        let parent = self
            .parents()
            .find_one(doc! { "_id": parent_id.clone() })
            .projection(doc! { field: 1 })
            .await?
            .ok_or_else(|| self.parent_not_found(parent_id))?;
        Ok(match parent.get(field) {
            Some(Bson::Int32(i)) => i64::from(*i),
            Some(Bson::Int64(i)) => *i,
            #[allow(clippy::cast_possible_truncation)]
            Some(Bson::Double(d)) => *d as i64,
            _ => 0,
        })
    }

    /// Reads every parent, a page at a time, and reports those whose subset is over its
    /// limit, out of order, or whose count or sums disagree with the full collection
    /// ([`Check::SubsetDrift`], listing them), as the [doctor](mod@crate::doctor) does over a
    /// sample; then those whose embedded items are not what `E::from` makes of the first full
    /// items now (one indexed `find` per parent; the doctor, which has no `E`, cannot see
    /// this). Writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::subset.check",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        let mut report =
            crate::maintenance::check(&self.db, &[(P::SCHEMA, self.spec as &dyn PatternSpec)])
                .await?;
        if let Some(stale) = self.stale_items(&report.documents()).await? {
            report.findings.push(stale);
        }
        Ok(report)
    }

    /// The parents (not already listed in `listed`) whose embedded items are not what
    /// `E::from` makes of the first items of the full collection now (a full item changed
    /// around the toolkit), as a finding; one indexed `find` of the first items per parent.
    /// What the doctor cannot see: it has no `E` to convert with.
    async fn stale_items(&self, listed: &[Bson]) -> Result<Option<Finding>> {
        let field = self.spec.field();
        let listed: std::collections::HashSet<String> = listed.iter().map(id_key).collect();
        let mut parents = self
            .parents()
            .find(doc! {})
            .projection(doc! { "_id": 1, field: 1 })
            .sort(doc! { "_id": 1 })
            .await?;
        let (mut examined, mut stale) = (0usize, Vec::new());
        while let Some(parent) = parents.try_next().await? {
            let Some(id) = parent.get("_id") else {
                continue;
            };
            if listed.contains(&id_key(id)) {
                continue;
            }
            examined += 1;
            let expected = self.first_items(None, id).await?;
            let agrees = match parent.get(field) {
                Some(Bson::Array(items)) => {
                    items.len() == expected.len()
                        && items.iter().zip(&expected).all(|(a, b)| same_stored(a, b))
                }
                None | Some(Bson::Null) => expected.is_empty(),
                Some(_) => false,
            };
            if !agrees {
                stale.push(id.clone());
            }
        }
        if stale.is_empty() {
            return Ok(None);
        }
        let rust = P::SCHEMA
            .field_by_bson_name(field)
            .map_or(field, |f| f.rust_name());
        Ok(Some(Finding {
            check: Check::SubsetDrift,
            model: Some(P::SCHEMA.name()),
            collection: P::SCHEMA.collection().to_owned(),
            subject: field.to_owned(),
            figure: format!(
                "{} of {examined} documents embed items that are not the first items of `{}` \
                 as they are now; {}",
                stale.len(),
                self.spec.full_collection(),
                examples(&stale)
            ),
            fix: format!(
                "`{}::{rust}_subset(&db).repair()` (or `rebuild(parent_id)` for each), which \
                 refills the subset from `{}`",
                P::SCHEMA.name(),
                self.spec.full_collection()
            ),
            documents: stale,
        }))
    }

    /// [`check`](Self::check), then [`rebuild`](Self::rebuild) of each parent it lists, then a
    /// check again.
    #[tracing::instrument(
        name = "pattern_runtime::subset.repair",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        let found = self.check().await?;
        let mut repaired = 0;
        for id in found.documents() {
            match self.rebuild_at(id).await {
                Ok(()) => repaired += 1,
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        let left = self.check().await?.findings;
        tracing::info!(repaired, left = left.len(), "repaired");
        Ok(crate::finding::RepairReport { repaired, left })
    }

    /// Recomputes the embedded array and every computed field from the full collection: the repair
    /// after manual edits or a crash between two non-transactional writes. Reads the first N items
    /// through the `{parent, sort}` index and sums the rest with one `$group`.
    #[tracing::instrument(
        name = "pattern_runtime::subset.rebuild",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            items_collection = self.spec.full_collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn rebuild(&self, parent_id: impl IntoId<P::Id>) -> Result<()> {
        let parent_id = crate::literal::typed_id("_id", parent_id.into_id())?;
        self.rebuild_at(parent_id).await
    }

    /// [`rebuild`](Self::rebuild) of an id already checked.
    async fn rebuild_at(&self, parent_id: Bson) -> Result<()> {
        tracing::Span::current().record("id", tracing::field::display(&parent_id));
        let found = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_parent(s.as_deref_mut(), &parent_id).await?;
            let done = self.write_rebuild(s.as_deref_mut(), &parent_id).await?;
            if let Some(watch) = watch {
                // The counters before may have been written around the toolkit: what derives
                // from them is rebuilt, not moved by the difference.
                watch.rebuilt(&self.db, s).await?;
            }
            Ok(done)
        })?;
        if found {
            Ok(())
        } else {
            Err(self.parent_not_found(parent_id))
        }
    }

    /// Deletes the full item `item_id` of the parent and keeps the subset and computed fields
    /// right: the counters go down by the item, and the embedded array is refilled from the full
    /// collection. [`Error::NotFound`] when the parent has no such item.
    #[tracing::instrument(
        name = "pattern_runtime::subset.remove",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            items_collection = self.spec.full_collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
            item_id = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn remove(
        &self,
        parent_id: impl IntoId<P::Id>,
        item_id: impl IntoId<F::Id>,
    ) -> Result<()> {
        let parent_id = crate::literal::typed_id("_id", parent_id.into_id())?;
        let item_id = crate::literal::typed_id("_id", item_id.into_id())?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&parent_id));
        span.record("item_id", tracing::field::display(&item_id));
        let removed = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_parent(s.as_deref_mut(), &parent_id).await?;
            let done = self
                .write_remove(s.as_deref_mut(), &parent_id, &item_id)
                .await?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok(done)
        })?;
        if removed {
            Ok(())
        } else {
            Err(Error::NotFound {
                collection: self.spec.full_collection().to_owned(),
                id: Box::new(item_id),
            })
        }
    }

    async fn first_items(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Vec<Bson>> {
        let coll = self.db.collection::<F>(self.spec.full_collection());
        let find = coll
            .find(doc! { self.spec.parts.parent_key: parent_id.clone() })
            .sort(self.spec.sort_document())
            .limit(i64::from(self.spec.parts.limit));
        let items: Vec<F> = match session {
            Some(s) => find.session(&mut *s).await?.stream(s).try_collect().await?,
            None => find.await?.try_collect().await?,
        };
        items
            .iter()
            .map(|f| {
                bson::serialize_to_document(&E::from(f))
                    .map(Bson::Document)
                    .map_err(mongodb::error::Error::custom)
            })
            .collect()
    }

    async fn write_rebuild(
        &self,
        mut session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<bool> {
        let spec = &self.spec.parts;
        let first = self.first_items(session.as_deref_mut(), parent_id).await?;
        let mut group = doc! { "_id": Bson::Null };
        for c in spec.computed {
            match c.kind {
                ComputedKind::Count => group.insert(c.field, doc! { "$sum": 1 }),
                ComputedKind::Sum { item_field } => {
                    group.insert(c.field, doc! { "$sum": format!("${item_field}") })
                }
                ComputedKind::Avg { .. } => None,
            };
        }
        let pipeline = vec![
            doc! { "$match": { spec.parent_key: parent_id.clone() } },
            doc! { "$group": group },
        ];
        let fulls = self.fulls();
        let totals: Vec<Document> = match session.as_deref_mut() {
            Some(s) => {
                let mut agg = fulls.aggregate(pipeline).session(&mut *s).await?;
                agg.stream(s).try_collect().await?
            }
            None => fulls.aggregate(pipeline).await?.try_collect().await?,
        };
        let totals = totals.into_iter().next().unwrap_or_default();
        let first_len = first.len();
        let mut set = doc! { spec.field: first };
        for c in spec.computed {
            match c.kind {
                ComputedKind::Count | ComputedKind::Sum { .. } => {
                    let v = totals.get(c.field).cloned().unwrap_or(Bson::Int64(0));
                    set.insert(c.field, v);
                }
                ComputedKind::Avg { .. } => {}
            }
        }
        let parents = self.parents();
        let filter = doc! { "_id": parent_id.clone() };
        let update = doc! { "$set": set };
        let average = self.average_update();
        let embedded = first_len;
        let in_transaction = session.is_some();
        let r = match session {
            Some(s) => {
                let r = parents
                    .update_one(filter.clone(), update)
                    .session(&mut *s)
                    .await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
                r
            }
            None => {
                let r = parents.update_one(filter.clone(), update).await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).await?;
                    averages_updated(&r, false);
                }
                r
            }
        };
        tracing::debug!(
            embedded,
            matched = r.matched_count,
            modified = r.modified_count,
            in_transaction,
            "parent rebuilt from the full collection"
        );
        Ok(r.matched_count > 0)
    }

    async fn write_remove(
        &self,
        mut session: Option<&mut ClientSession>,
        parent_id: &Bson,
        item_id: &Bson,
    ) -> mongodb::error::Result<bool> {
        let spec = &self.spec.parts;
        let fulls = self.fulls();
        let filter = doc! { "_id": item_id.clone(), spec.parent_key: parent_id.clone() };
        let removed = match session.as_deref_mut() {
            Some(s) => fulls.find_one_and_delete(filter).session(s).await?,
            None => fulls.find_one_and_delete(filter).await?,
        };
        let Some(removed) = removed else {
            tracing::debug!("the parent has no such item: nothing written");
            return Ok(false);
        };
        tracing::debug!(
            deleted = 1,
            in_transaction = session.is_some(),
            "full item deleted"
        );
        derived::deleted_except(
            &self.db,
            session.as_deref_mut(),
            F::SCHEMA,
            std::slice::from_ref(&removed),
            &|d| self.is_mine(d),
        )
        .await?;
        let mut inc = Document::new();
        for c in spec.computed {
            match c.kind {
                ComputedKind::Count => {
                    inc.insert(c.field, -1i32);
                }
                ComputedKind::Sum { item_field } => {
                    inc.insert(c.field, small(negate(sum_of(&removed, item_field))));
                }
                ComputedKind::Avg { .. } => {}
            }
        }
        let first = self.first_items(session.as_deref_mut(), parent_id).await?;
        let mut update = doc! { "$set": { spec.field: first } };
        if !inc.is_empty() {
            update.insert("$inc", inc);
        }
        let parents = self.parents();
        let pfilter = doc! { "_id": parent_id.clone() };
        let average = self.average_update();
        match session {
            Some(s) => {
                let r = parents
                    .update_one(pfilter.clone(), update)
                    .session(&mut *s)
                    .await?;
                parent_updated(&r, true);
                if let Some(avg) = average {
                    let r = parents.update_one(pfilter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
            }
            None => {
                let r = parents.update_one(pfilter.clone(), update).await?;
                parent_updated(&r, false);
                if let Some(avg) = average {
                    let r = parents.update_one(pfilter, avg).await?;
                    averages_updated(&r, false);
                }
            }
        }
        Ok(true)
    }
}

/// `DEBUG`: the parent's update (array, counts and sums, the caller's `$set`).
fn parent_updated(r: &mongodb::results::UpdateResult, in_transaction: bool) {
    tracing::debug!(
        matched = r.matched_count,
        modified = r.modified_count,
        in_transaction,
        "parent updated"
    );
}

/// `DEBUG`: the full items written.
fn items_inserted(inserted: usize, in_transaction: bool) {
    tracing::debug!(inserted, in_transaction, "full items inserted");
}

/// `DEBUG`: the averages recomputed from their sums and counts.
fn averages_updated(r: &mongodb::results::UpdateResult, in_transaction: bool) {
    tracing::debug!(
        matched = r.matched_count,
        modified = r.modified_count,
        in_transaction,
        "averages recomputed"
    );
}

/// A pending [`Subset::push`] or [`Subset::push_many`]: `.set(..)` adds parent fields to the same
/// update; `.await` runs it.
#[must_use = "a push does nothing until it is awaited"]
pub struct Push<'a, P, F, E> {
    subset: &'a Subset<P, F, E>,
    /// Serialized and checked when built; an error is returned when awaited.
    parent_id: Result<Bson>,
    items: Vec<F>,
    set: Document,
}

impl<P, F, E> Push<'_, P, F, E> {
    /// Also `$set` these parent fields in the same update (`updatedAt`, say). Keys are checked
    /// before anything is written.
    pub fn set(mut self, fields: Document) -> Self {
        self.set.extend(fields);
        self
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
        Box::pin(self.subset.run_push(self.parent_id, self.items, self.set))
    }
}

//! Splitting array buckets that hold more than `max_count` measurements: the repair the
//! doctor's [`Check::BucketOverCap`](crate::finding::Check::BucketOverCap) names.

use crate::span::Spanned as _;
use std::cmp::Ordering;

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use mongodb::ClientSession;

use super::numbers::{extreme, numbers, small_int, sum};
use super::{fields, Measurement, Series, SeriesSpec, Storage};
use crate::error::Result;
use crate::finding::{CheckReport, RepairReport};
use crate::schema::PatternSpec;
use crate::txn::{in_session, transact};

/// What [`Series::split_overfull`] did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SplitReport {
    /// Buckets found holding more than `max_count` measurements and split.
    pub buckets: usize,
    /// Buckets inserted to hold the measurements over the cap.
    pub new_buckets: usize,
    /// Measurements moved out of the buckets split.
    pub moved: usize,
    /// Buckets over the cap left as they are, each `_id` with the reason: a measurement that is
    /// not a document or has no date in the series' time field cannot be placed.
    pub left: Vec<(Bson, String)>,
}

impl<M: Measurement> Series<M> {
    /// Reads every bucket of an array-bucket series, a page at a time, and reports those over
    /// `max_count` ([`Check::BucketOverCap`](crate::doctor::Check::BucketOverCap), listing
    /// them); for a native series, whether the collection's `expireAfterSeconds` is the
    /// declared `expire_after` (no document is read). Other layouts keep no cap: nothing to
    /// check. Writes nothing.
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::bucket.check",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let targets = [(M::SCHEMA, M::SERIES as &dyn PatternSpec)];
                match M::SERIES.storage() {
                    Storage::Buckets { .. } => {
                        crate::maintenance::check(&self.db, self.tx.as_ref(), &targets).await
                    }
                    Storage::Native { .. } => {
                        crate::maintenance::check_settings(&self.db, &targets).await
                    }
                    Storage::Rollup { .. } | Storage::Slots { .. } => Ok(CheckReport::default()),
                }
            },
        )
        .await
    }

    /// [`split_overfull`](Self::split_overfull) (array buckets), then [`check`](Self::check)
    /// again: `repaired` counts the buckets split. A native series' expiry is left (sync the
    /// series' indexes with the drop-and-recreate options, or `collMod` it).
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::bucket.repair",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let split = self.split_overfull().await?;
                let left = self.check().await?.findings;
                Ok(RepairReport {
                    repaired: split.buckets as u64,
                    left,
                })
            },
        )
        .await
    }

    /// Splits every array bucket holding more than `max_count` measurements (written by other
    /// code: the toolkit's own writes never pass the cap) into buckets of at most `max_count`,
    /// in time order: the bucket keeps the earliest `max_count` measurements and its `_id`, new
    /// buckets of the same key and window take the rest. Counts, `first`, `last` and the declared
    /// summaries are computed again for each; other fields of the bucket are copied as they are.
    ///
    /// One query finds the buckets (`{"measurements.<max_count>": {$exists: true}}`, a scan of
    /// the collection); each is then read again and split in its own transaction, so concurrent
    /// writers and concurrent splits lose and duplicate nothing (a bucket already split is left
    /// alone). Without transactions (a standalone server) the new buckets are inserted first and
    /// the bucket is replaced only if its array is unchanged, else the new buckets are deleted
    /// again: a failure between the two leaves measurements twice, never lost, and a reader may
    /// see them twice meanwhile.
    ///
    /// Other layouts (`rollup`, `slots`, `native`) have no cap: nothing is read or written.
    ///
    /// # Errors
    /// The driver's errors; buckets split before the error stay split.
    ///
    /// # Tracing
    /// A span `pattern_runtime::bucket.split_overfull`; an `INFO` event per bucket split, a
    /// `WARN` event per bucket left (see [`SplitReport::left`]).
    pub async fn split_overfull(&self) -> Result<SplitReport> {
        crate::span::operation(tracing::info_span!("pattern_runtime::bucket.split_overfull", model = self.span_model(), collection = self.span_collection()), async move {
        let Storage::Buckets { max_count, .. } = M::SERIES.storage() else {
            return Ok(SplitReport::default());
        };
        let max = (max_count as usize).max(1);
        let over = format!("{}.{max}", fields::MEASUREMENTS);
        let ids: Vec<Bson> = self
            .collection
            .find(doc! { over: { "$exists": true } })
            .projection(doc! { "_id": 1 })
            .await?
            .try_collect::<Vec<Document>>()
            .await?
            .into_iter()
            .filter_map(|mut d| d.remove("_id"))
            .collect();
        tracing::debug!(found = ids.len(), max_count, "buckets over the cap");
        let mut report = SplitReport::default();
        for id in ids {
            let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
                let mut s: Option<&mut ClientSession> = s;
                let transaction = s.is_some();
                let find = self.collection.find_one(doc! { "_id": id.clone() });
                let Some(bucket) = in_session!(find, s.as_deref_mut())? else {
                    return Ok(Outcome::WithinCap);
                };
                let plan = match plan(M::SERIES, max, bucket) {
                    Ok(Some(plan)) => plan,
                    Ok(None) => return Ok(Outcome::WithinCap),
                    Err(reason) => return Ok(Outcome::Malformed(reason)),
                };
                let new_ids: Vec<Bson> = plan
                    .new
                    .iter()
                    .filter_map(|d| d.get("_id"))
                    .cloned()
                    .collect();
                in_session!(self.collection.insert_many(&plan.new), s.as_deref_mut())?;
                // The array as it was read: in a transaction a change meanwhile is a write
                // conflict; without one, it is seen here.
                let unchanged = doc! {
                    "_id": id.clone(),
                    format!("{}.{}", fields::MEASUREMENTS, plan.held - 1): { "$exists": true },
                    format!("{}.{}", fields::MEASUREMENTS, plan.held): { "$exists": false },
                };
                let replace = self.collection.replace_one(unchanged, &plan.kept);
                let replaced = in_session!(replace, s.as_deref_mut())?;
                if replaced.matched_count == 0 && !transaction {
                    let undo = self
                        .collection
                        .delete_many(doc! { "_id": { "$in": new_ids } });
                    in_session!(undo, s)?;
                    return Ok(Outcome::WithinCap);
                }
                Ok(Outcome::Split {
                    held: plan.held,
                    new_buckets: plan.new.len(),
                    moved: plan.held - max,
                })
            })?;
            match outcome {
                Outcome::Split {
                    held,
                    new_buckets,
                    moved,
                } => {
                    tracing::info!(id = %id, held, new_buckets, moved, "bucket split");
                    report.buckets += 1;
                    report.new_buckets += new_buckets;
                    report.moved += moved;
                }
                Outcome::WithinCap => {
                    tracing::debug!(id = %id, "bucket already within its cap")
                }
                Outcome::Malformed(reason) => {
                    tracing::warn!(id = %id, reason, "bucket over its cap left as it is");
                    report.left.push((id, reason));
                }
            }
        }
        Ok(report)
    })
        .await
    }
}

/// What happened to one bucket.
enum Outcome {
    Split {
        held: usize,
        new_buckets: usize,
        moved: usize,
    },
    /// Gone, split by someone else, or never over the cap (a field named like an index).
    WithinCap,
    Malformed(String),
}

/// A bucket's split: the bucket as it is replaced, and the new buckets.
struct Plan {
    kept: Document,
    new: Vec<Document>,
    /// The measurements the bucket held.
    held: usize,
}

/// The split of `bucket` in buckets of at most `max` measurements, in time order (stable: equal
/// times keep their stored order); `None` when it is within the cap; `Err` with the reason when
/// a measurement cannot be placed.
fn plan(
    spec: &SeriesSpec,
    max: usize,
    mut bucket: Document,
) -> std::result::Result<Option<Plan>, String> {
    let items = match bucket.remove(fields::MEASUREMENTS) {
        Some(Bson::Array(items)) => items,
        _ => return Ok(None),
    };
    if items.len() <= max {
        return Ok(None);
    }
    let held = items.len();
    let mut timed = items
        .into_iter()
        .enumerate()
        .map(|(i, m)| match m {
            Bson::Document(d) => match d.get(spec.time()) {
                Some(&Bson::DateTime(t)) => Ok((d, t)),
                _ => Err(format!(
                    "measurement {i} has no date in `{}`: its place is unknown",
                    spec.time()
                )),
            },
            _ => Err(format!("measurement {i} is not a document")),
        })
        .collect::<std::result::Result<Vec<(Document, DateTime)>, String>>()?;
    timed.sort_by_key(|(_, t)| *t);
    let id = bucket.remove("_id");
    let mut chunks = timed.chunks(max).map(|items| filled(spec, &bucket, items));
    let mut kept = chunks.next().unwrap_or_default();
    if let Some(id) = id {
        kept.insert("_id", id);
    }
    let new = chunks
        .map(|mut d| {
            d.insert("_id", ObjectId::new());
            d
        })
        .collect();
    Ok(Some(Plan { kept, new, held }))
}

/// `base` (the bucket without `_id` and measurements) holding `items`, with its count, times and
/// summaries as the toolkit's writes keep them.
fn filled(spec: &SeriesSpec, base: &Document, items: &[(Document, DateTime)]) -> Document {
    let mut d = base.clone();
    d.insert(
        fields::MEASUREMENTS,
        items
            .iter()
            .map(|(m, _)| Bson::Document(m.clone()))
            .collect::<Vec<_>>(),
    );
    d.insert(fields::COUNT, small_int(items.len() as i64));
    let bytes: usize = items
        .iter()
        .map(|(m, _)| crate::error::element_cost(m).unwrap_or(0))
        .sum();
    d.insert(
        fields::BYTES,
        small_int(i64::try_from(bytes).unwrap_or(i64::MAX)),
    );
    if let (Some(first), Some(last)) = (
        items.iter().map(|i| i.1).min(),
        items.iter().map(|i| i.1).max(),
    ) {
        d.insert(fields::FIRST, first);
        d.insert(fields::LAST, last);
    }
    let mut summary = Document::new();
    for s in spec.summaries() {
        let values = numbers(items, s.field);
        if values.is_empty() {
            continue;
        }
        let mut one = Document::new();
        if s.min
            && let Some(v) = extreme(&values, Ordering::Less)
        {
            one.insert("min", v.clone());
        }
        if s.max
            && let Some(v) = extreme(&values, Ordering::Greater)
        {
            one.insert("max", v.clone());
        }
        if s.sum {
            one.insert("sum", sum(&values));
        }
        summary.insert(s.field, one);
    }
    d.remove(fields::SUMMARY);
    if !summary.is_empty() {
        d.insert(fields::SUMMARY, summary);
    }
    d
}

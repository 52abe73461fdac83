//! The bucket pattern for time series, and native time-series collections.
//!
//! A measurement struct derives [`Measurement`] and says how its measurements are grouped:
//!
//! ```
//! use bson::DateTime;
//! use pattern_runtime::Measurement;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Measurement)]
//! #[serde(rename_all = "camelCase")]
//! #[bucket(
//!     collection = "sensor_buckets",
//!     key = device_id,
//!     time = timestamp,
//!     max_count = 200,
//!     span = "1h",
//!     summary(value(min, max, sum)),
//!     expire_after = "30d",
//! )]
//! struct Reading {
//!     device_id: String,
//!     timestamp: DateTime,
//!     value: f64,
//!     unit: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! use futures_util::TryStreamExt;
//!
//! pattern_runtime::sync_indexes(&db).await?; // {deviceId: 1, start: 1} and the TTL on `end`
//! let series = Reading::series(&db);
//! let now = DateTime::now();
//! series
//!     .insert(&Reading { device_id: "sensor-001".into(), timestamp: now, value: 25.6, unit: "°C".into() })
//!     .await?;
//! let hour_ago = DateTime::from_millis(now.timestamp_millis() - 3_600_000);
//! let last_hour: Vec<Reading> = series.range("sensor-001", hour_ago, now).await?.try_collect().await?;
//! let summary = series.summary("sensor-001", hour_ago, now).await?;
//! let max: Option<f64> = summary.max(Reading::FIELDS.value)?;
//! # Ok(()) }
//! ```
//!
//! # Bucket documents
//!
//! With `#[bucket(...)]`, measurements of one key are stored together, one document per aligned
//! window of `span` (the window of a measurement is its time rounded down to a multiple of the
//! span since the Unix epoch) holding at most `max_count` of them:
//!
//! ```text
//! { _id: ObjectId, deviceId: "sensor-001",            // the key field(s)
//!   start: ISODate("…T10:00Z"), end: ISODate("…T11:00Z"),  // the window
//!   count: 200, first: ISODate(…), last: ISODate(…),  // how many, earliest and latest time
//!   measurements: [ { timestamp, value, unit }, … ],  // the measurements, without the key
//!   summary: { value: { min, max, sum } } }           // the declared summaries
//! ```
//!
//! [`Series::insert`] is one upsert: `{deviceId, start, count: {$lt: max_count}}` with `$push`,
//! `$inc`, `$min`, `$max` and `$setOnInsert`. Late and out-of-order measurements go to the window
//! that covers their time. A bucket never holds more than `max_count` measurements, even with many
//! concurrent writers: the count is checked and incremented in the same single-document update.
//! Concurrent writers that find no bucket with room may each open one, so a window can hold
//! several partly filled buckets; that is the price of not reading before writing.
//!
//! # Native time-series collections
//!
//! `#[bucket(native, ...)]` stores each measurement as a document of a MongoDB time-series
//! collection (5.0+), with the key as its `metaField`, and lets the server do the bucketing.
//! The collection is created with the declared options by [`sync_indexes`](crate::sync_indexes),
//! or by the first write through a [`Series`] handle: an existing normal collection of that name
//! is an [`Error::CollectionConflict`], never a silent fallback to one document per measurement.
//! The same [`Series`] operations work on both.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bson::{doc, Bson, DateTime, Document};
use futures_util::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
use mongodb::error::ErrorKind;
use mongodb::options::{
    TimeseriesGranularity, TimeseriesOptions, UpdateModifications, UpdateOneModel, WriteModel,
};
use mongodb::{Collection, Database};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::OnceCell;

use crate::error::{check_size, server_code, validate_key, Error, Result};
use crate::model::{FieldName, ModelSchema};

/// The bucket document's own fields. Key fields may not use these names (checked by the derive).
pub mod fields {
    /// The start of the bucket's window (inclusive).
    pub const START: &str = "start";
    /// The end of the bucket's window (exclusive); the TTL index is on it.
    pub const END: &str = "end";
    /// How many measurements the bucket holds.
    pub const COUNT: &str = "count";
    /// The earliest measurement time in the bucket.
    pub const FIRST: &str = "first";
    /// The latest measurement time in the bucket.
    pub const LAST: &str = "last";
    /// The measurements, without their key fields.
    pub const MEASUREMENTS: &str = "measurements";
    /// The declared summaries: `summary.<field>.{min, max, sum}`.
    pub const SUMMARY: &str = "summary";
    /// Every reserved name, `_id` included.
    pub const RESERVED: &[&str] = &["_id", START, END, COUNT, FIRST, LAST, MEASUREMENTS, SUMMARY];
}

/// A struct whose values are measurements of a time series, declared with
/// `#[derive(Measurement)]` and `#[bucket(...)]`. See the [module documentation](self).
pub trait Measurement:
    Serialize + DeserializeOwned + Send + Sync + Unpin + Sized + 'static
{
    /// What groups measurements: the key field's type, or a tuple of the key fields' types in
    /// declaration order.
    type Key: Serialize + Send + Sync;

    /// The registry entry: the bucket (or time-series) collection and its indexes.
    const SCHEMA: &'static ModelSchema;

    /// How the series is stored.
    const SERIES: &'static SeriesSpec;

    /// The measurement's time.
    fn time(&self) -> DateTime;

    /// The handle on this series in `db`.
    fn series(db: &Database) -> Series<Self> {
        Series::new(db)
    }
}

/// How a series is stored, as `#[bucket(...)]` declares it.
#[derive(Debug, Clone, Copy)]
pub struct SeriesSpec {
    parts: SeriesParts,
}

/// The parts of a [`SeriesSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SeriesParts {
    pub collection: &'static str,
    pub keys: &'static [&'static str],
    pub time: &'static str,
    pub summaries: &'static [SummarySpec],
    pub expire_after_seconds: Option<u64>,
    pub storage: Storage,
}

/// Where the measurements go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Storage {
    /// Bucket documents written by the toolkit.
    Buckets {
        /// The most measurements one bucket holds.
        max_count: u32,
        /// The window of one bucket, in seconds.
        span_seconds: u64,
    },
    /// A native time-series collection.
    Native {
        /// The declared granularity, if any.
        granularity: Option<Granularity>,
        /// The declared bucket span (`bucketMaxSpanSeconds` = `bucketRoundingSeconds`), if any.
        span_seconds: Option<u64>,
    },
}

/// A native time-series collection's granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// `"seconds"`.
    Seconds,
    /// `"minutes"`.
    Minutes,
    /// `"hours"`.
    Hours,
}

impl Granularity {
    fn driver(self) -> TimeseriesGranularity {
        match self {
            Granularity::Seconds => TimeseriesGranularity::Seconds,
            Granularity::Minutes => TimeseriesGranularity::Minutes,
            Granularity::Hours => TimeseriesGranularity::Hours,
        }
    }
}

/// One summarised numeric field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummarySpec {
    /// The field's BSON name.
    pub field: &'static str,
    /// Whether the minimum is kept.
    pub min: bool,
    /// Whether the maximum is kept.
    pub max: bool,
    /// Whether the sum is kept.
    pub sum: bool,
}

impl SeriesSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: SeriesParts) -> Self {
        SeriesSpec { parts }
    }

    /// The bucket (or time-series) collection.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// The BSON names of the key fields.
    pub fn keys(&self) -> &'static [&'static str] {
        self.parts.keys
    }

    /// The BSON name of the time field.
    pub fn time(&self) -> &'static str {
        self.parts.time
    }

    /// The summarised fields.
    pub fn summaries(&self) -> &'static [SummarySpec] {
        self.parts.summaries
    }

    /// The declared expiry, in seconds.
    pub fn expire_after_seconds(&self) -> Option<u64> {
        self.parts.expire_after_seconds
    }

    /// How the series is stored.
    pub fn storage(&self) -> Storage {
        self.parts.storage
    }

    /// Whether this is a native time-series collection.
    pub fn is_native(&self) -> bool {
        matches!(self.parts.storage, Storage::Native { .. })
    }

    /// The options a native time-series collection is created with.
    fn timeseries_options(&self) -> TimeseriesOptions {
        let (granularity, span) = match self.parts.storage {
            Storage::Native {
                granularity,
                span_seconds,
            } => (granularity, span_seconds),
            Storage::Buckets { .. } => (None, None),
        };
        let mut options = TimeseriesOptions::builder()
            .time_field(self.parts.time.to_owned())
            .meta_field(self.parts.keys.first().map(|k| (*k).to_owned()))
            .granularity(granularity.map(Granularity::driver))
            .build();
        options.bucket_max_span = span.map(Duration::from_secs);
        options.bucket_rounding = span.map(Duration::from_secs);
        options
    }
}

/// The handle on a series: [`Measurement::series`].
pub struct Series<M: Measurement> {
    db: Database,
    collection: Collection<Document>,
    /// Native mode: the time-series collection was checked (or created) by this handle.
    ready: Arc<OnceCell<()>>,
    /// `false` once the server refused the `bulkWrite` command (MongoDB < 8.0).
    bulk_write: Arc<AtomicBool>,
    _measurement: std::marker::PhantomData<fn() -> M>,
}

impl<M: Measurement> Clone for Series<M> {
    fn clone(&self) -> Self {
        Series {
            db: self.db.clone(),
            collection: self.collection.clone(),
            ready: self.ready.clone(),
            bulk_write: self.bulk_write.clone(),
            _measurement: std::marker::PhantomData,
        }
    }
}

impl<M: Measurement> fmt::Debug for Series<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Series")
            .field("measurement", &M::SCHEMA.name())
            .field("namespace", &self.collection.namespace())
            .field("storage", &M::SERIES.storage())
            .finish()
    }
}

/// What [`Series::insert_many`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct BatchReport {
    /// Measurements written.
    pub measurements: usize,
    /// Write statements sent: one per (key, window) group chunk in bucket mode, one per
    /// measurement in native mode. They travel in as few commands as the server allows.
    pub writes: usize,
    /// Buckets opened (bucket mode).
    pub new_buckets: usize,
}

impl<M: Measurement> Series<M> {
    /// The handle on `M`'s series in `db`. No I/O.
    pub fn new(db: &Database) -> Self {
        Series {
            db: db.clone(),
            collection: db.collection(M::SERIES.collection()),
            ready: Arc::new(OnceCell::new()),
            bulk_write: Arc::new(AtomicBool::new(true)),
            _measurement: std::marker::PhantomData,
        }
    }

    /// The driver's collection of bucket documents (or of measurements, in native mode).
    pub fn collection(&self) -> &Collection<Document> {
        &self.collection
    }

    /// The series' storage declaration.
    pub fn spec(&self) -> &'static SeriesSpec {
        M::SERIES
    }

    /// Stores one measurement: one upsert into the bucket of its key and window that still has
    /// room (a new bucket when none has), or one insert in native mode.
    ///
    /// # Errors
    /// [`Error::DocumentTooLarge`] before anything is written when the measurement is over
    /// 16 MiB (or when the bucket would be: the server refuses the update); [`Error::InvalidKey`]
    /// when a key value is a document with a `$` or `.` in a field name; the driver's errors.
    pub async fn insert(&self, measurement: &M) -> Result<()> {
        let prepared = prepare::<M>(measurement)?;
        match M::SERIES.storage() {
            Storage::Native { .. } => {
                self.ensure_native().await?;
                self.collection.insert_one(prepared.document).await?;
            }
            Storage::Buckets {
                max_count,
                span_seconds,
            } => {
                let group = Group::new(prepared, span_seconds);
                let (filter, update) = group.statement(M::SERIES, max_count, span_seconds, ..);
                self.collection
                    .update_one(filter, update)
                    .upsert(true)
                    .await?;
            }
        }
        Ok(())
    }

    /// Stores many measurements with the fewest writes: grouped by key and window, each group
    /// split into chunks of at most `max_count`, one upsert with `$push: {$each: [...]}` per
    /// chunk, all of them in one `bulkWrite` command where the server has it (MongoDB 8.0+), else
    /// sent concurrently. A chunk goes to a bucket with room for the whole chunk, else opens one.
    /// In native mode, one `insertMany`.
    ///
    /// Every measurement is checked before anything is sent.
    ///
    /// # Errors
    /// As [`insert`](Self::insert); when the server refuses some writes after others succeeded,
    /// [`Error::Incomplete`] says how many measurements were written.
    pub async fn insert_many(&self, measurements: &[M]) -> Result<BatchReport> {
        if measurements.is_empty() {
            return Ok(BatchReport::default());
        }
        let prepared = measurements
            .iter()
            .map(prepare::<M>)
            .collect::<Result<Vec<_>>>()?;
        match M::SERIES.storage() {
            Storage::Native { .. } => {
                self.ensure_native().await?;
                let docs: Vec<Document> = prepared.into_iter().map(|p| p.document).collect();
                let n = docs.len();
                match self.collection.insert_many(docs).ordered(false).await {
                    Ok(_) => Ok(BatchReport {
                        measurements: n,
                        writes: n,
                        new_buckets: 0,
                    }),
                    Err(e) => Err(match e.kind.as_ref() {
                        ErrorKind::InsertMany(m) => {
                            let failed = m.write_errors.as_ref().map_or(0, Vec::len);
                            Error::Incomplete {
                                written: n.saturating_sub(failed),
                                failed,
                                source: Box::new(Error::from(e)),
                            }
                        }
                        _ => Error::from(e),
                    }),
                }
            }
            Storage::Buckets {
                max_count,
                span_seconds,
            } => self.insert_buckets(prepared, max_count, span_seconds).await,
        }
    }

    async fn insert_buckets(
        &self,
        prepared: Vec<Prepared>,
        max_count: u32,
        span_seconds: u64,
    ) -> Result<BatchReport> {
        // Group by (key, window), in order of first appearance.
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<(Vec<u8>, i64), usize> = HashMap::new();
        for p in prepared {
            let window = window_start(p.time, span_seconds);
            let id = (key_bytes(&p.key)?, window);
            match index.get(&id) {
                Some(&i) => groups[i].items.push((p.element, p.time)),
                None => {
                    index.insert(id, groups.len());
                    groups.push(Group::new(p, span_seconds));
                }
            }
        }
        let chunk = max_count as usize;
        let mut statements: Vec<(Document, Document, usize)> = Vec::new();
        for group in &groups {
            for range in (0..group.items.len()).step_by(chunk.max(1)) {
                let end = (range + chunk).min(group.items.len());
                let (filter, update) =
                    group.statement(M::SERIES, max_count, span_seconds, range..end);
                statements.push((filter, update, end - range));
            }
        }
        let total: usize = statements.iter().map(|s| s.2).sum();
        let writes = statements.len();

        if self.bulk_write.load(AtomicOrdering::Relaxed) {
            let namespace = self.collection.namespace();
            let models: Vec<WriteModel> = statements
                .iter()
                .map(|(filter, update, _)| {
                    WriteModel::UpdateOne(
                        UpdateOneModel::builder()
                            .namespace(namespace.clone())
                            .filter(filter.clone())
                            .update(UpdateModifications::Document(update.clone()))
                            .upsert(true)
                            .build(),
                    )
                })
                .collect();
            match self.db.client().bulk_write(models).ordered(false).await {
                Ok(result) => {
                    return Ok(BatchReport {
                        measurements: total,
                        writes,
                        new_buckets: usize::try_from(result.upserted_count).unwrap_or(usize::MAX),
                    })
                }
                Err(e) if matches!(e.kind.as_ref(), ErrorKind::IncompatibleServer { .. }) => {
                    // MongoDB < 8.0: nothing was sent; fall back to one update per statement.
                    self.bulk_write.store(false, AtomicOrdering::Relaxed);
                }
                Err(e) => {
                    let failed: usize = match e.kind.as_ref() {
                        ErrorKind::BulkWrite(b) => {
                            b.write_errors.keys().map(|i| statements[*i].2).sum()
                        }
                        _ => total,
                    };
                    return Err(incomplete(total, failed, Error::from(e)));
                }
            }
        }

        // One update per statement, a few at a time, every one attempted.
        let results: Vec<(usize, Result<bool>)> = stream::iter(statements)
            .map(|(filter, update, n)| async move {
                let result = self
                    .collection
                    .update_one(filter, update)
                    .upsert(true)
                    .await
                    .map(|r| r.upserted_id.is_some())
                    .map_err(Error::from);
                (n, result)
            })
            .buffer_unordered(8)
            .collect()
            .await;
        let mut report = BatchReport {
            measurements: 0,
            writes,
            new_buckets: 0,
        };
        let mut first_error = None;
        let mut failed = 0;
        for (n, result) in results {
            match result {
                Ok(new) => {
                    report.measurements += n;
                    report.new_buckets += usize::from(new);
                }
                Err(e) => {
                    failed += n;
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            None => Ok(report),
            Some(e) => Err(incomplete(total, failed, e)),
        }
    }

    /// The measurements of `key` with a time in `[from, to)`, in time order. Measurements with
    /// equal times come in an unspecified order.
    ///
    /// Only the buckets whose window overlaps the range are read (through the `{key, start}`
    /// index), and measurements outside the range are dropped by the server. The buckets of one
    /// window are merged on the client, so memory holds one window at a time, never the range.
    pub async fn range(
        &self,
        key: impl Into<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> Result<Measurements<M>> {
        let key = key_filter::<M>(&key.into())?;
        let spec = M::SERIES;
        let time = spec.time();
        match spec.storage() {
            Storage::Native { .. } => {
                let mut filter = key;
                filter.insert(time, doc! { "$gte": from, "$lt": to });
                let cursor = self
                    .collection
                    .find(filter)
                    .sort(doc! { time: 1 })
                    .projection(doc! { "_id": 0 })
                    .await?;
                let inner = cursor
                    .map(|d| {
                        d.map_err(Error::from)
                            .and_then(|d| Ok(bson::deserialize_from_document::<M>(d)?))
                    })
                    .boxed();
                Ok(Measurements { inner })
            }
            Storage::Buckets { span_seconds, .. } => {
                let in_range = doc! { "$and": [
                    { "$gte": [format!("$$this.{time}"), from] },
                    { "$lt": [format!("$$this.{time}"), to] },
                ] };
                let mut merge_keys = Document::new();
                for k in spec.keys() {
                    merge_keys.insert(*k, format!("${k}"));
                }
                let pipeline = vec![
                    doc! { "$match": overlap(key, from, to, span_seconds) },
                    doc! { "$sort": { fields::START: 1 } },
                    doc! { "$project": {
                        "_id": 0,
                        fields::START: 1,
                        "m": { "$map": {
                            "input": { "$filter": {
                                "input": format!("${}", fields::MEASUREMENTS),
                                "cond": in_range,
                            } },
                            "in": { "$mergeObjects": [merge_keys, "$$this"] },
                        } },
                    } },
                ];
                let cursor = self.collection.aggregate(pipeline).await?;
                let state = WindowMerge {
                    cursor: cursor.boxed(),
                    pending: None,
                    ready: VecDeque::new(),
                    time,
                };
                let inner = stream::try_unfold(state, WindowMerge::next)
                    .and_then(|d| async move { Ok(bson::deserialize_from_document::<M>(d)?) })
                    .boxed();
                Ok(Measurements { inner })
            }
        }
    }

    /// The count, first and last time, and the declared summaries of the measurements of `key`
    /// with a time in `[from, to)`, computed by the server in one aggregation.
    ///
    /// A bucket that lies wholly inside the range contributes its stored summary and count; only
    /// the buckets across the range's edges are filtered measurement by measurement, and no
    /// bucket is unwound. In native mode the summary is computed from the measurements.
    pub async fn summary(
        &self,
        key: impl Into<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> Result<Summary> {
        let key = key_filter::<M>(&key.into())?;
        let spec = M::SERIES;
        let time = spec.time();
        let pipeline = match spec.storage() {
            Storage::Native { .. } => {
                let mut filter = key;
                filter.insert(time, doc! { "$gte": from, "$lt": to });
                let mut group = doc! {
                    "_id": Bson::Null,
                    "n": { "$sum": 1 },
                    "first": { "$min": format!("${time}") },
                    "last": { "$max": format!("${time}") },
                };
                for (i, s) in spec.summaries().iter().enumerate() {
                    let path = format!("${}", s.field);
                    for (op, on) in [("min", s.min), ("max", s.max), ("sum", s.sum)] {
                        if on {
                            group.insert(format!("{op}{i}"), doc! { format!("${op}"): &path });
                        }
                    }
                }
                vec![doc! { "$match": filter }, doc! { "$group": group }]
            }
            Storage::Buckets { span_seconds, .. } => {
                let this_time = format!("$$this.{time}");
                let selected = doc! { "$cond": [
                    "$inside",
                    [],
                    { "$filter": {
                        "input": format!("${}", fields::MEASUREMENTS),
                        "cond": { "$and": [
                            { "$gte": [&this_time, from] },
                            { "$lt": [&this_time, to] },
                        ] },
                    } },
                ] };
                let values = |path: &str| doc! { "$map": { "input": "$sel", "in": format!("$$this.{path}") } };
                let pick = |stored: String, computed: Document| {
                    doc! { "$cond": ["$inside", stored, computed] }
                };
                let mut group = doc! {
                    "_id": Bson::Null,
                    "n": { "$sum": pick(format!("${}", fields::COUNT), doc! { "$size": "$sel" }) },
                    "first": { "$min": pick(format!("${}", fields::FIRST), doc! { "$min": values(time) }) },
                    "last": { "$max": pick(format!("${}", fields::LAST), doc! { "$max": values(time) }) },
                };
                for (i, s) in spec.summaries().iter().enumerate() {
                    for (op, on) in [("min", s.min), ("max", s.max), ("sum", s.sum)] {
                        if on {
                            let stored = format!("${}.{}.{op}", fields::SUMMARY, s.field);
                            let computed = doc! { format!("${op}"): values(s.field) };
                            group.insert(
                                format!("{op}{i}"),
                                doc! { format!("${op}"): pick(stored, computed) },
                            );
                        }
                    }
                }
                vec![
                    doc! { "$match": overlap(key, from, to, span_seconds) },
                    doc! { "$addFields": { "inside": { "$and": [
                        { "$gte": [format!("${}", fields::FIRST), from] },
                        { "$lt": [format!("${}", fields::LAST), to] },
                    ] } } },
                    doc! { "$addFields": { "sel": selected } },
                    doc! { "$group": group },
                ]
            }
        };
        let mut cursor = self.collection.aggregate(pipeline).await?;
        // No measurement in range: no row; every declared summary is then null.
        let row = cursor.try_next().await?.unwrap_or_default();
        let count = match row.get("n") {
            Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Double(n)) if *n >= 0.0 => *n as u64,
            _ => 0,
        };
        let mut fields = Document::new();
        for (i, s) in spec.summaries().iter().enumerate() {
            let mut one = Document::new();
            for (op, on) in [("min", s.min), ("max", s.max), ("sum", s.sum)] {
                if on {
                    one.insert(
                        op,
                        row.get(format!("{op}{i}")).cloned().unwrap_or(Bson::Null),
                    );
                }
            }
            fields.insert(s.field, one);
        }
        Ok(Summary {
            count,
            first: row.get_datetime("first").ok().copied(),
            last: row.get_datetime("last").ok().copied(),
            fields,
        })
    }

    /// Native mode: makes sure the time-series collection exists, once per handle.
    async fn ensure_native(&self) -> Result<()> {
        self.ready
            .get_or_try_init(|| ensure_timeseries(&self.db, M::SERIES))
            .await
            .map(|_| ())
    }
}

/// `[from, to)` overlaps a bucket's window `[start, start + span)`: `start` in `(from - span, to)`,
/// an index range on `{key, start}`; `first`/`last` then skip buckets with nothing in range.
fn overlap(mut key: Document, from: DateTime, to: DateTime, span_seconds: u64) -> Document {
    let span_ms = span_millis(span_seconds);
    let lowest = DateTime::from_millis(from.timestamp_millis().saturating_sub(span_ms));
    key.insert(fields::START, doc! { "$gt": lowest, "$lt": to });
    key.insert(fields::FIRST, doc! { "$lt": to });
    key.insert(fields::LAST, doc! { "$gte": from });
    key
}

fn incomplete(total: usize, failed: usize, source: Error) -> Error {
    if failed >= total {
        return source;
    }
    Error::Incomplete {
        written: total - failed,
        failed,
        source: Box::new(source),
    }
}

/// Reads the buckets of one window at a time and yields their measurements in time order.
struct WindowMerge {
    cursor: BoxStream<'static, mongodb::error::Result<Document>>,
    pending: Option<Document>,
    ready: VecDeque<Document>,
    time: &'static str,
}

impl WindowMerge {
    async fn next(mut self) -> Result<Option<(Document, Self)>> {
        loop {
            if let Some(d) = self.ready.pop_front() {
                return Ok(Some((d, self)));
            }
            let first = match self.pending.take() {
                Some(b) => b,
                None => match self.cursor.try_next().await? {
                    Some(b) => b,
                    None => return Ok(None),
                },
            };
            let start = first.get(fields::START).cloned();
            let mut items = take_items(first);
            loop {
                match self.cursor.try_next().await? {
                    Some(b) if b.get(fields::START) == start.as_ref() => {
                        items.extend(take_items(b));
                    }
                    Some(b) => {
                        self.pending = Some(b);
                        break;
                    }
                    None => break,
                }
            }
            let time = self.time;
            items.sort_by_key(|d| {
                d.get_datetime(time)
                    .map_or(i64::MIN, |t| t.timestamp_millis())
            });
            self.ready = items.into();
        }
    }
}

fn take_items(mut bucket: Document) -> Vec<Document> {
    match bucket.remove("m") {
        Some(Bson::Array(items)) => items
            .into_iter()
            .filter_map(|b| match b {
                Bson::Document(d) => Some(d),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A stream of measurements, from [`Series::range`].
pub struct Measurements<M> {
    inner: BoxStream<'static, Result<M>>,
}

impl<M> Stream for Measurements<M> {
    type Item = Result<M>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl<M> fmt::Debug for Measurements<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Measurements { .. }")
    }
}

/// The count, time bounds and declared summaries of a range, from [`Series::summary`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    count: u64,
    first: Option<DateTime>,
    last: Option<DateTime>,
    fields: Document,
}

impl Summary {
    /// How many measurements.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The earliest measurement time; `None` when there is none.
    pub fn first(&self) -> Option<DateTime> {
        self.first
    }

    /// The latest measurement time; `None` when there is none.
    pub fn last(&self) -> Option<DateTime> {
        self.last
    }

    /// Every summary as BSON: `{ <field>: { min, max, sum } }`, with only the declared ones.
    pub fn fields(&self) -> &Document {
        &self.fields
    }

    /// The minimum of a field declared with `summary(field(min))`; `None` when no measurement in
    /// the range has a value.
    ///
    /// # Errors
    /// [`Error::InvalidKey`] when the field has no `min` summary.
    pub fn min<T: DeserializeOwned>(&self, field: FieldName<T>) -> Result<Option<T>> {
        self.get(field, "min")
    }

    /// The maximum of a field declared with `summary(field(max))`.
    ///
    /// # Errors
    /// [`Error::InvalidKey`] when the field has no `max` summary.
    pub fn max<T: DeserializeOwned>(&self, field: FieldName<T>) -> Result<Option<T>> {
        self.get(field, "max")
    }

    /// The sum of a field declared with `summary(field(sum))`, in the field's type (an `i32`
    /// sum past `i32::MAX` is an [`Error::Bson`]: declare the field `i64`).
    ///
    /// # Errors
    /// [`Error::InvalidKey`] when the field has no `sum` summary.
    pub fn sum<T: DeserializeOwned>(&self, field: FieldName<T>) -> Result<Option<T>> {
        self.get(field, "sum")
    }

    fn get<T: DeserializeOwned>(&self, field: FieldName<T>, op: &'static str) -> Result<Option<T>> {
        let value = self
            .fields
            .get_document(field.as_str())
            .ok()
            .and_then(|d| d.get(op))
            .ok_or_else(|| Error::InvalidKey {
                key: format!("{}.{op}", field.as_str()),
                reason: "this summary is not declared in `#[bucket(summary(...))]`",
            })?;
        if matches!(value, Bson::Null) || (self.count == 0 && op == "sum") {
            return Ok(None);
        }
        Ok(Some(bson::deserialize_from_bson(value.clone())?))
    }
}

/// A measurement, serialized and split for writing.
struct Prepared {
    /// The whole measurement (native mode).
    document: Document,
    /// The key fields, by BSON name.
    key: Document,
    /// The measurement without its key fields (bucket mode).
    element: Document,
    time: DateTime,
}

fn prepare<M: Measurement>(measurement: &M) -> Result<Prepared> {
    let document = bson::serialize_to_document(measurement)?;
    check_size(&document, "the measurement")?;
    let mut key = Document::new();
    let mut element = document.clone();
    for k in M::SERIES.keys() {
        let value = element.remove(*k).unwrap_or(Bson::Null);
        check_key_value(&value)?;
        key.insert(*k, value);
    }
    Ok(Prepared {
        document,
        key,
        element,
        time: measurement.time(),
    })
}

/// A key value is used in a filter: a document in it must not read as an operator.
fn check_key_value(value: &Bson) -> Result<()> {
    match value {
        Bson::Document(d) => d.iter().try_for_each(|(k, v)| {
            validate_key(k)?;
            check_key_value(v)
        }),
        Bson::Array(a) => a.iter().try_for_each(check_key_value),
        _ => Ok(()),
    }
}

fn key_bytes(key: &Document) -> Result<Vec<u8>> {
    Ok(bson::RawDocumentBuf::try_from(key)?.into_bytes())
}

/// The filter on the key fields for a `Key` value.
fn key_filter<M: Measurement>(key: &M::Key) -> Result<Document> {
    let names = M::SERIES.keys();
    let value = bson::serialize_to_bson(key)?;
    let values = match (names.len(), value) {
        (1, v) => vec![v],
        (n, Bson::Array(items)) if items.len() == n => items,
        (n, _) => {
            return Err(Error::InvalidKey {
                key: names.join(", "),
                reason: if n == 0 {
                    "the series has no key field"
                } else {
                    "the key must be a tuple with one value per key field"
                },
            })
        }
    };
    let mut filter = Document::new();
    for (name, value) in names.iter().zip(values) {
        check_key_value(&value)?;
        filter.insert(*name, value);
    }
    Ok(filter)
}

fn span_millis(span_seconds: u64) -> i64 {
    i64::try_from(span_seconds.saturating_mul(1000))
        .unwrap_or(i64::MAX)
        .max(1)
}

/// The start of the window of `time`: rounded down to a multiple of the span since the epoch
/// (times before 1970 included).
pub fn window_start(time: DateTime, span_seconds: u64) -> i64 {
    let span = span_millis(span_seconds);
    time.timestamp_millis().div_euclid(span) * span
}

/// The measurements of one (key, window), to be written together.
struct Group {
    key: Document,
    window: i64,
    items: Vec<(Document, DateTime)>,
}

impl Group {
    fn new(first: Prepared, span_seconds: u64) -> Self {
        Group {
            window: window_start(first.time, span_seconds),
            key: first.key,
            items: vec![(first.element, first.time)],
        }
    }

    /// The upsert of `items[range]`: its filter and update.
    fn statement(
        &self,
        spec: &SeriesSpec,
        max_count: u32,
        span_seconds: u64,
        range: impl std::slice::SliceIndex<[(Document, DateTime)], Output = [(Document, DateTime)]>,
    ) -> (Document, Document) {
        let items = &self.items[range];
        let n = items.len();
        let mut filter = self.key.clone();
        filter.insert(fields::START, DateTime::from_millis(self.window));
        // Room for the whole chunk: `count <= max - n`, i.e. `count < max - n + 1`.
        let room = i64::from(max_count) - n as i64 + 1;
        filter.insert(fields::COUNT, doc! { "$lt": small_int(room) });

        let first = items.iter().map(|i| i.1).min().unwrap_or(DateTime::MAX);
        let last = items.iter().map(|i| i.1).max().unwrap_or(DateTime::MIN);
        let elements: Vec<Bson> = items.iter().map(|i| Bson::Document(i.0.clone())).collect();
        let push = if n == 1 {
            elements.into_iter().next().unwrap_or(Bson::Null)
        } else {
            Bson::Document(doc! { "$each": elements })
        };
        let mut inc = doc! { fields::COUNT: small_int(n as i64) };
        let mut min = doc! { fields::FIRST: first };
        let mut max = doc! { fields::LAST: last };
        for s in spec.summaries() {
            let values: Vec<&Bson> = items
                .iter()
                .filter_map(|i| i.0.get(s.field))
                .filter(|v| number(v).is_some())
                .collect();
            if values.is_empty() {
                continue;
            }
            let path = |op: &str| format!("{}.{}.{op}", fields::SUMMARY, s.field);
            if s.min {
                if let Some(v) = extreme(&values, Ordering::Less) {
                    min.insert(path("min"), v.clone());
                }
            }
            if s.max {
                if let Some(v) = extreme(&values, Ordering::Greater) {
                    max.insert(path("max"), v.clone());
                }
            }
            if s.sum {
                inc.insert(path("sum"), sum(&values));
            }
        }
        let end = DateTime::from_millis(self.window.saturating_add(span_millis(span_seconds)));
        let update = doc! {
            "$push": { fields::MEASUREMENTS: push },
            "$inc": inc,
            "$min": min,
            "$max": max,
            "$setOnInsert": { fields::END: end },
        };
        (filter, update)
    }
}

/// An Int32 when it fits (what the shell sends), else an Int64.
fn small_int(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) if !n.is_nan() => Some(*n),
        _ => None,
    }
}

fn extreme<'a>(values: &[&'a Bson], want: Ordering) -> Option<&'a Bson> {
    values
        .iter()
        .copied()
        .reduce(|best, v| match (number(v), number(best)) {
            (Some(a), Some(b)) if a.partial_cmp(&b) == Some(want) => v,
            _ => best,
        })
}

/// The sum of a chunk's values: exact in integers (as the server's `$inc` would be), a double as
/// soon as one value is.
fn sum(values: &[&Bson]) -> Bson {
    if let [one] = values {
        return (*one).clone();
    }
    let mut int: Option<i64> = Some(0);
    let mut float = 0.0;
    for v in values {
        match v {
            Bson::Int32(n) => int = int.and_then(|s| s.checked_add(i64::from(*n))),
            Bson::Int64(n) => int = int.and_then(|s| s.checked_add(*n)),
            _ => int = None,
        }
        float += number(v).unwrap_or(0.0);
    }
    match int {
        Some(s) => Bson::Int64(s),
        None => Bson::Double(float),
    }
}

/// Creates the native time-series collection of `spec`, or checks the existing one.
pub(crate) async fn ensure_timeseries(db: &Database, spec: &'static SeriesSpec) -> Result<()> {
    let name = spec.collection();
    for _ in 0..2 {
        let existing: Vec<_> = db
            .list_collections()
            .filter(doc! { "name": name })
            .await?
            .try_collect()
            .await?;
        if let Some(found) = existing.first() {
            return check_timeseries(spec, found);
        }
        let mut create = db
            .create_collection(name)
            .timeseries(spec.timeseries_options());
        if let Some(secs) = spec.expire_after_seconds() {
            create = create.expire_after_seconds(Duration::from_secs(secs));
        }
        match create.await {
            Ok(()) => return Ok(()),
            // Created concurrently (or exists as something else): check what is there.
            Err(e) if server_code(&e) == Some(crate::error::NAMESPACE_EXISTS) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::CollectionConflict {
        collection: name.to_owned(),
        reason: "it could neither be created nor found".to_owned(),
    })
}

fn check_timeseries(
    spec: &SeriesSpec,
    found: &mongodb::results::CollectionSpecification,
) -> Result<()> {
    let conflict = |reason: String| {
        Err(Error::CollectionConflict {
            collection: spec.collection().to_owned(),
            reason,
        })
    };
    let Some(ts) = found.options.timeseries.as_ref() else {
        let what = match found.collection_type {
            mongodb::results::CollectionType::View => "a view",
            _ => "a normal collection",
        };
        return conflict(format!(
            "it exists as {what}, not a time-series collection, and cannot be converted: drop \
             or rename it (or copy its documents into a new time-series collection)"
        ));
    };
    let declared = spec.timeseries_options();
    let mut differences = Vec::new();
    if ts.time_field != declared.time_field {
        differences.push(format!(
            "timeField is `{}`, declared `{}`",
            ts.time_field, declared.time_field
        ));
    }
    if ts.meta_field != declared.meta_field {
        differences.push(format!(
            "metaField is {:?}, declared {:?}",
            ts.meta_field, declared.meta_field
        ));
    }
    if declared.granularity.is_some() && ts.granularity != declared.granularity {
        differences.push(format!(
            "granularity is {:?}, declared {:?}",
            ts.granularity, declared.granularity
        ));
    }
    if declared.bucket_max_span.is_some() && ts.bucket_max_span != declared.bucket_max_span {
        differences.push(format!(
            "bucketMaxSpanSeconds is {:?}, declared {:?}",
            ts.bucket_max_span, declared.bucket_max_span
        ));
    }
    let expire = spec.expire_after_seconds().map(Duration::from_secs);
    if found.options.expire_after_seconds != expire {
        differences.push(format!(
            "expireAfterSeconds is {:?}, declared {:?} (change it with `collMod`)",
            found.options.expire_after_seconds.map(|d| d.as_secs()),
            expire.map(|d| d.as_secs())
        ));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        conflict(format!(
            "the time-series collection exists with other options: {}",
            differences.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_aligned() {
        let hour = 3600;
        assert_eq!(window_start(DateTime::from_millis(3_599_999), hour), 0);
        assert_eq!(
            window_start(DateTime::from_millis(3_600_000), hour),
            3_600_000
        );
        assert_eq!(window_start(DateTime::from_millis(-1), hour), -3_600_000);
    }

    #[test]
    fn sums_stay_exact() {
        let (a, b) = (Bson::Int32(i32::MAX), Bson::Int32(1));
        assert_eq!(sum(&[&a, &b]), Bson::Int64(i64::from(i32::MAX) + 1));
        let c = Bson::Double(0.5);
        assert_eq!(sum(&[&b, &c]), Bson::Double(1.5));
        assert_eq!(sum(&[&b]), Bson::Int32(1));
    }

    #[test]
    fn extremes() {
        let v = [Bson::Int32(3), Bson::Double(-1.5), Bson::Int64(7)];
        let refs: Vec<&Bson> = v.iter().collect();
        assert_eq!(extreme(&refs, Ordering::Less), Some(&Bson::Double(-1.5)));
        assert_eq!(extreme(&refs, Ordering::Greater), Some(&Bson::Int64(7)));
    }
}

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
//! # The `#[bucket]` attribute
//!
//! Field names are Rust names; the stored keys are serde's names for them.
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `key = device_id` or `key(site, device_id)` | the field(s) measurements are grouped by (bucket mode: copied into each bucket; native: the `metaField`, one field) | required |
//! | `time = timestamp` | the measurement's time, a `bson::DateTime` | required |
//! | `max_count = 200` | the most measurements in one bucket (bucket mode) | required in bucket mode; refused with `native`, `rollup` and `slots` |
//! | `span = "1h"` | the window of one bucket, aligned on the Unix epoch (`s`, `m`, `h`, `d`, `w`); with `native`, `bucketMaxSpanSeconds` | required, but with `native` |
//! | `summary(value(min, max, sum), ..)` | summaries of numeric fields: array buckets and `rollup` keep them per window with `$min`, `$max`, `$inc` in the same update; `slots` and `native` compute them when read | none (the count is always kept); at least one with `rollup` |
//! | `expire_after = "30d"` | bucket mode: a TTL on `end`; `rollup` and `slots`: a TTL of `expire_after + span` on the window's start; native: `expireAfterSeconds` | never |
//! | `native` | a native time-series collection instead of bucket documents | off |
//! | `rollup` | one document per key and window holding only counts and the declared summaries ([below](#rollups-and-slots)) | off |
//! | `slots = "1s"` | one document per key and window, each value stored at the slot of its time ([below](#rollups-and-slots)) | off |
//! | `nest = "1m"` | with `slots`: the slots grouped in inner maps of this width | flat |
//! | `granularity = "seconds"` | native only: `seconds`, `minutes` or `hours` (instead of `span`) | the server's |
//! | `collection = "name"` | the collection | `<type>_buckets` (`reading_buckets`); native: `<type>s` |
//! | `group = "name"` | the group [`sync_group`](crate::sync_group) syncs | none |
//! | `crate = "path"` | where generated code finds this crate | `::pattern_runtime` |
//!
//! A summarised value must be a finite number: a NaN or an infinity in a summarised field is
//! [`Error::InvalidValue`] and nothing is written (a batch containing one is refused whole), since
//! one such value would make the sum NaN or infinite for good, and NaN sorts below every number
//! in `$min`. Fields that are not summarised are stored as they are, NaN included.
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
//! Buckets written by other code may hold more than `max_count` (the
//! [doctor](crate::doctor()) reports them as [`Check::BucketOverCap`](crate::doctor::Check::BucketOverCap)):
//! [`Series::split_overfull`] splits each into buckets within the cap, in one transaction per
//! bucket.
//!
//! With `expire_after`, a TTL index on `end` deletes a bucket that long after its window closed:
//! backfilling measurements older than the expiry writes buckets the server deletes within a
//! minute.
//!
//! # Rollups and slots
//!
//! Two more layouts keep one document per key and window, found through a unique `{key..,
//! time}` index (the window's start is stored under the time field's name); both are written
//! with one upsert per key and window (per batch: per window the batch touches), so a write never
//! grows an array. They are the layouts of a highway's speed sensors, one reading a second:
//!
//! ```text
//! rollup, span = "1m", summary(speed(sum)):
//!   { segId: "I80_mile23", ts: ISODate("…T22:07:00"), speed_num: 18, speed_sum: 1134 }
//! slots = "1s", span = "1m":
//!   { segId: "I80_mile23", ts: ISODate("…T22:07:00"), speed: { "0": 63, "1": 58, …, "59": 64 } }
//! slots = "1s", span = "1h":
//!   { segId: "I80_mile23", ts: ISODate("…T22:00:00"), speed: { "0": 63, …, "3599": 55 } }
//! slots = "1s", nest = "1m", span = "1h":
//!   { segId: "I80_mile23", ts: ISODate("…T22:00:00"), speed: { "0": { "0": 47, …, "59": 45 }, …, "59": { … } } }
//! ```
//!
//! - **`rollup`** keeps, per summarised field, its count (`<field>_num`) and the declared
//!   `<field>_sum`, `<field>_min`, `<field>_max`, added with `$inc`, `$min` and `$max`. The
//!   measurements themselves are not kept: [`Series::range`] does not compile on a rollup (it
//!   needs [`KeepsMeasurements`]), and [`Series::summary`] takes a range on window boundaries
//!   ([`Error::RangeNotAligned`] otherwise), with no [`first`](Summary::first) or
//!   [`last`](Summary::last) time; its count is the largest of the summarised fields' counts, so
//!   a measurement none of whose summarised fields is set (all `None`) is not counted. Sending a
//!   measurement twice counts it twice. An integer sum that would leave the 64-bit range is
//!   [`Error::InvalidValue`], nothing written for that window (a batch's other windows may be
//!   written: [`Error::Incomplete`] says how many). A NaN or an infinity is refused, but finite
//!   floats add up as `f64` does: a sum past `f64::MAX` is stored as infinity.
//! - **`slots`** stores each field other than the key and the time as a map from the slot of the
//!   measurement's time (its offset in the window divided by the slot width) to the value,
//!   written with `$set: {"speed.7": 63}` (`"speed.0.7"` nested). Sending a measurement again
//!   overwrites its slot instead of adding a copy, and a field the new one lacks (an `Option`
//!   skipped when `None`) is unset. A time that is not on a slot boundary is
//!   [`Error::InvalidValue`] and nothing is written: a slot holds one value, so the layout suits
//!   regular samples. [`Series::range`] gives each stored slot back as a measurement whose time
//!   is the slot's; [`Series::summary`] reads the windows and adds up on the client.
//!   Nesting (`nest = "1m"`) answers a flat map's cost: a field of a 3 600-key
//!   document is found by walking up to 3 599 keys; nested 60 by 60, by walking at most 59 + 59.
//!
//! Concurrent writers opening the same window meet at the unique index, so **both layouts need
//! [`sync_indexes`](crate::sync_indexes)** (or [`sync_group`](crate::sync_group)) before they
//! are written: without the index two writers can open two documents for one window, and a slot
//! sent again would then update one of them. The server lets one upsert insert the window; an
//! upsert that loses with a duplicate key is sent again (once, or twice from a `bulkWrite`), and
//! then matches. MongoDB itself retries such upserts since 4.2.
//!
//! A `slots` window holds `span / slots` keys per field: the derive refuses a layout whose
//! numbers alone would pass half of the 16 MiB document limit (`span = "1w", slots = "1s"`), and
//! a measurement whose every value is absent (all `None`, skipped) is [`Error::InvalidValue`]:
//! it would leave no trace in its window.
//!
//! # Native time-series collections
//!
//! `#[bucket(native, ...)]` stores each measurement as a document of a MongoDB time-series
//! collection (5.0+), with the key as its `metaField`, and lets the server do the bucketing.
//! The collection is created with the declared options by [`sync_indexes`](crate::sync_indexes),
//! or by the first write through a [`Series`] handle: an existing normal collection of that name
//! is an [`Error::CollectionConflict`], never a silent fallback to one document per measurement.
//! The same [`Series`] operations work on both.
//!
//! # Tracing
//!
//! [`Series::insert`] and [`Series::insert_many`] run in `INFO` spans named
//! `pattern_runtime::bucket.<operation>`, [`Series::range`] (until its stream is returned) and
//! [`Series::summary`] in `DEBUG` spans, with the fields `model` (the measurement type),
//! `collection` and `key` (the key fields, a small document); the writes' spans also have
//! `storage` (`buckets` or `native`), the reads' `from` and `to`.
//! Each write is followed by a `DEBUG` event: the bucket's window and whether the upsert opened a
//! new bucket, or a batch's measurements, writes and new buckets. Creating or checking a native
//! time-series collection is a `DEBUG` span `pattern_runtime::bucket.ensure_timeseries`.
//! [`Series::split_overfull`] runs in an `INFO` span of that name, with an `INFO` event per bucket
//! split.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bson::{Bson, DateTime, Document};
use mongodb::{Collection, Database};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::OnceCell;

use crate::error::{validate_key, Error, Result};
use crate::schema::ModelSchema;

mod keyed;
mod native;
mod numbers;
mod read;
mod spec;
mod split;
mod write;

pub use keyed::rollup_name;
pub(crate) use native::ensure_timeseries;
pub use read::{Measurements, Summary};
pub use spec::{Granularity, SeriesParts, SeriesSpec, Storage, SummarySpec};
pub use split::SplitReport;
pub use write::{window_start, BatchReport};

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
    /// What the measurements add to an array bucket, in bytes (at most): a bucket is full at
    /// `max_count` measurements or at its byte budget, whichever comes first.
    pub const BYTES: &str = "bytes";
    /// Every reserved name, `_id` included.
    pub const RESERVED: &[&str] = &[
        "_id",
        START,
        END,
        COUNT,
        FIRST,
        LAST,
        MEASUREMENTS,
        SUMMARY,
        BYTES,
    ];
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

/// A [`Measurement`] whose layout keeps the measurements themselves, so that
/// [`Series::range`] can read them back: every layout but `rollup`. Implemented by the derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is stored as rollups (`#[bucket(rollup, ..)]`): only per-window counts and \
               sums are kept, so its measurements cannot be read back",
    label = "`range` reads measurements",
    note = "read a rollup with `Series::summary`, or store the measurements with another layout \
            (remove `rollup`, or use `slots = \"1s\"`)"
)]
pub trait KeepsMeasurements: Measurement {}

/// The handle on a series: [`Measurement::series`].
#[derive_where::derive_where(Clone)]
pub struct Series<M: Measurement> {
    db: Database,
    collection: Collection<Document>,
    /// Native mode: the time-series collection was checked (or created) by this handle.
    ready: Arc<OnceCell<()>>,
    /// `false` once the server refused the `bulkWrite` command (MongoDB < 8.0).
    bulk_write: Arc<AtomicBool>,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
    _measurement: std::marker::PhantomData<fn() -> M>,
}

crate::span::spanned!(impl<M: Measurement> Series<M> => M::SCHEMA, M::SERIES.collection());

impl<M: Measurement> fmt::Debug for Series<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Series")
            .field("measurement", &M::SCHEMA.name())
            .field("namespace", &self.collection.namespace())
            .field("storage", &M::SERIES.storage())
            .finish()
    }
}

impl<M: Measurement> Series<M> {
    /// The handle on `M`'s series in `db`. No I/O.
    pub fn new(db: &Database) -> Self {
        Series {
            db: db.clone(),
            collection: db.collection(M::SERIES.collection()),
            ready: Arc::new(OnceCell::new()),
            bulk_write: Arc::new(AtomicBool::new(true)),
            tx: None,
            _measurement: std::marker::PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same series in the caller's transaction `tx`: [`insert`](Self::insert) and
        /// [`insert_many`](Self::insert_many) send their statements one by one in `tx`'s session
        /// (no `bulkWrite`, no retry of a duplicate key: any error is returned as it is, and the
        /// caller's abort keeps nothing); committing, aborting and retrying are the caller's. See
        /// [`Transaction`](crate::Transaction). The server refuses writes to a native time-series
        /// collection inside a transaction on some versions: that error is returned as it is.
    }

    /// The driver's collection of bucket documents (or of measurements, in native mode).
    pub fn collection(&self) -> &Collection<Document> {
        &self.collection
    }

    /// The series' storage declaration.
    pub fn spec(&self) -> &'static SeriesSpec {
        M::SERIES
    }

    /// Native mode: makes sure the time-series collection exists, once per handle.
    async fn ensure_native(&self) -> Result<()> {
        self.ready
            .get_or_try_init(|| ensure_timeseries(&self.db, M::SERIES))
            .await
            .map(|_| ())
    }
}

/// A key value is used in a filter as an equality: a document with `$` keys would read as an
/// operator, a regex would match by pattern. [`Error::InvalidValue`] for all of it, as for every
/// id-like value ([safety](crate::guide::safety)): a `$`, `.`, NUL or empty key at any
/// depth, and what [`check_id`](crate::literal) refuses.
pub(crate) fn check_key_value(value: &Bson) -> Result<()> {
    fn keys(value: &Bson) -> Result<()> {
        match value {
            Bson::Document(d) => d.iter().try_for_each(|(k, v)| {
                if let Err(Error::InvalidKey { reason, .. }) = validate_key(k) {
                    return Err(Error::InvalidValue {
                        field: "key".to_owned(),
                        reason: format!("key `{k}`: {reason}"),
                    });
                }
                keys(v)
            }),
            Bson::Array(a) => a.iter().try_for_each(keys),
            _ => Ok(()),
        }
    }
    keys(value)?;
    match value {
        // A key may be an array value stored as is (a tuple key is split before this).
        Bson::Array(a) => a
            .iter()
            .try_for_each(|v| crate::literal::check_id("key", v)),
        v => crate::literal::check_id("key", v),
    }
}

/// The filter on the key fields for a `Key` value.
pub(crate) fn key_filter<M: Measurement>(key: &M::Key) -> Result<Document> {
    let names = M::SERIES.keys();
    let value = bson::serialize_to_bson(key)?;
    let values = match (names.len(), value) {
        (1, v) => vec![v],
        (n, Bson::Array(items)) if items.len() == n => items,
        (n, _) => {
            return Err(Error::InvalidValue {
                field: names.join(", "),
                reason: if n == 0 {
                    "the series has no key field".to_owned()
                } else {
                    "the key must be a tuple with one value per key field".to_owned()
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

pub(crate) fn span_millis(span_seconds: u64) -> i64 {
    i64::try_from(span_seconds.saturating_mul(1000))
        .unwrap_or(i64::MAX)
        .max(1)
}

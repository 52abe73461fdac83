#![doc = include_str!("../../docs/bucket.md")]

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
        /// caller's abort keeps nothing), and its reads, [`range`](Self::range) and
        /// [`summary`](Self::summary), run in it too and see what it wrote before its commit (a
        /// bound `range` reads its documents whole, then streams them from memory); committing,
        /// aborting and retrying are the caller's. See [`Transaction`](crate::txn::Transaction). The
        /// server refuses writes to a native time-series collection inside a transaction on some
        /// versions: that error is returned as it is.
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
            return Err(crate::literal::invalid(
                &names.join(", "),
                if n == 0 {
                    "the series has no key field"
                } else {
                    "the key must be a tuple with one value per key field"
                },
            ))
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

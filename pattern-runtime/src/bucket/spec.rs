//! What `#[bucket(...)]` declares ([`SeriesSpec`]: the collection, keys, time, summaries and
//! layout), and what the registry does with it: the validator of the stored documents, the
//! native collection created before its indexes, and the doctor's checks.

use std::time::Duration;

use bson::Bson;
use mongodb::options::{TimeseriesGranularity, TimeseriesOptions};
use mongodb::Database;

use super::{fields, native};
use crate::error::Result;
use crate::finding::{Check, Finding};
use crate::schema::shape::{Property, Shape};
use crate::schema::{spec, PatternSpec, Sample};

impl PatternSpec for SeriesSpec {
    /// An array bucket: `{_id, <keys>, start, end, first, last, count, bytes?, summary?,
    /// measurements: [at most max_count measurements without their keys]}`; a `slots` window:
    /// `{_id, <keys>, <time>, <value>?: object}`; a `rollup` window: `{_id, <keys>, <time>,
    /// <field>_num, <field>_sum?, <field>_min?, <field>_max?}`. None for a native series: the
    /// server refuses a validator on a time-series collection.
    fn stored_shape(&'static self, shape: Shape) -> std::result::Result<Shape, &'static str> {
        let Shape::Object(properties) = shape else {
            return Err("the measurement is not an object of known fields");
        };
        let max_count = match self.storage() {
            Storage::Buckets { max_count, .. } => max_count,
            Storage::Slots { .. } => return Ok(self.slots_shape(properties)),
            Storage::Rollup { .. } => return Ok(self.rollup_shape(properties)),
            Storage::Native { .. } => {
                return Err(
                    "the server accepts no validator on a time-series collection (it checks \
                     the time and meta fields itself)",
                );
            }
        };
        let (keys, element): (Vec<Property>, Vec<Property>) = properties
            .into_iter()
            .partition(|p| self.keys().contains(&&*p.name));
        let property = Property::new;
        let date = || Shape::of("date");
        let mut bucket = vec![property("_id", Shape::of("objectId"), true)];
        bucket.extend(keys);
        bucket.extend([
            property(fields::START, date(), true),
            property(fields::END, date(), true),
            property(fields::FIRST, date(), true),
            property(fields::LAST, date(), true),
            property(
                fields::COUNT,
                Shape::Integer {
                    types: vec!["int", "long"],
                    min: 0,
                    max: Some(i64::from(max_count)),
                },
                true,
            ),
            property(fields::BYTES, Shape::Types(vec!["int", "long"]), false),
            property(fields::SUMMARY, Shape::of("object"), false),
            property(
                fields::MEASUREMENTS,
                Shape::BoundedArray {
                    items: Box::new(Shape::Object(element)),
                    max: max_count,
                },
                true,
            ),
        ]);
        Ok(Shape::Object(bucket))
    }

    /// A native time-series collection is created (or checked) before its indexes are synced:
    /// an index would create a normal collection of that name.
    fn prepare<'a>(
        &'static self,
        db: &'a Database,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<()>>> {
        self.is_native()
            .then(|| Box::pin(native::ensure_timeseries(db, self)) as _)
    }

    /// Array buckets holding more than `max_count` measurements (written by other code: the
    /// toolkit's writes never pass the cap); a native collection whose `expireAfterSeconds` is
    /// not the declared `expire_after` (the other layouts' expiry is a TTL index, which the
    /// doctor's index checks cover).
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<Finding>>>> {
        let max_count = match self.storage() {
            Storage::Buckets { max_count, .. } => max_count,
            Storage::Native { .. } => {
                let secs = self.expire_after_seconds()?;
                return Some(Box::pin(native::audit_expiry(sample, self, secs)));
            }
            Storage::Rollup { .. } | Storage::Slots { .. } => return None,
        };
        let over: Vec<(usize, Bson)> = sample
            .documents
            .iter()
            .filter_map(|d| {
                let n = match d.get(fields::MEASUREMENTS) {
                    Some(Bson::Array(a)) => a.len(),
                    _ => 0,
                };
                (n > max_count as usize).then(|| (n, d.get("_id").cloned().unwrap_or(Bson::Null)))
            })
            .collect();
        let findings = over
            .iter()
            .map(|(n, _)| *n)
            .max()
            .map(|largest| {
                let ids: Vec<Bson> = over.iter().map(|(_, id)| id.clone()).collect();
                sample
                    .finding(
                        Check::BucketOverCap,
                        fields::MEASUREMENTS,
                        format!(
                            "{} of {} sampled buckets hold more than {max_count} measurements \
                         (largest {largest}); {}",
                            over.len(),
                            sample.documents.len(),
                            crate::finding::examples(&ids)
                        ),
                        format!(
                            "`{}::series(&db).repair()` (it runs `split_overfull`) splits each \
                         into buckets of at most {max_count}, in time order, in one transaction \
                         per bucket; then find the code that writes buckets without the \
                         toolkit (its writes never pass the cap)",
                            sample.model.name()
                        ),
                    )
                    .about(ids)
            })
            .into_iter()
            .collect();
        Some(Box::pin(async move { Ok(findings) }))
    }
}

spec! {
    /// How a series is stored, as `#[bucket(...)]` declares it.
    #[derive(Debug, Clone, Copy)]
    pub struct SeriesSpec { parts: SeriesParts }
    pub struct SeriesParts {
        pub collection: &'static str,
        pub keys: &'static [&'static str],
        pub time: &'static str,
        pub summaries: &'static [SummarySpec],
        /// The BSON names of the fields that are neither key nor time (the slot maps of `slots`).
        pub values: &'static [&'static str],
        pub expire_after_seconds: Option<u64>,
        pub storage: Storage,
    }
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
    /// One document per key and window holding only per-field counts and sums (a road
    /// segment's `{segId, ts, speed_num, speed_sum}`): `#[bucket(rollup, ..)]`. The measurements
    /// themselves are not kept.
    Rollup {
        /// The window of one document, in seconds.
        span_seconds: u64,
    },
    /// One document per key and window, each value field a map from the slot of the
    /// measurement's time to its value (a segment's `speed: {0: 63, .., 59: 64}`), nested when
    /// `nest_seconds` is set (`speed: {0: {0: 47, ..}, ..}`): `#[bucket(slots = "1s", ..)]`.
    Slots {
        /// The window of one document, in seconds.
        span_seconds: u64,
        /// The width of one slot, in seconds.
        slot_seconds: u64,
        /// The width of one inner map, in seconds, when the slots are nested.
        nest_seconds: Option<u64>,
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

    /// The BSON names of the fields that are neither key nor time.
    pub fn values(&self) -> &'static [&'static str] {
        self.parts.values
    }

    /// The declared expiry, in seconds.
    pub fn expire_after_seconds(&self) -> Option<u64> {
        self.parts.expire_after_seconds
    }

    /// How the series is stored.
    pub fn storage(&self) -> Storage {
        self.parts.storage
    }

    /// A `slots` window's shape: the keys as the measurement has them, the window's start, and
    /// each value field a map of slots (absent until a measurement sets one).
    fn slots_shape(&self, properties: Vec<Property>) -> Shape {
        let mut window = vec![Property::new("_id", Shape::of("objectId"), true)];
        window.extend(
            properties
                .into_iter()
                .filter(|p| self.keys().contains(&&*p.name)),
        );
        window.push(Property::new(self.time(), Shape::of("date"), true));
        window.extend(
            self.values()
                .iter()
                .map(|v| Property::new(*v, Shape::of("object"), false)),
        );
        Shape::Object(window)
    }

    /// A `rollup` window's shape: the keys as the measurement has them, the window's start, and
    /// per summarised field its count (`_num`, always written) and the declared `_sum`, `_min`
    /// and `_max` (absent until a measurement has the field). The extremes are values of the
    /// field; a sum of integers is an `Int32` or, past its range, an `Int64`.
    fn rollup_shape(&self, properties: Vec<Property>) -> Shape {
        let mut window = vec![Property::new("_id", Shape::of("objectId"), true)];
        let mut summarised = Vec::new();
        for p in properties {
            if self.keys().contains(&&*p.name) {
                window.push(p);
            } else if let Some(s) = self.summaries().iter().find(|s| s.field == p.name) {
                summarised.push((s, p.shape));
            }
        }
        window.push(Property::new(self.time(), Shape::of("date"), true));
        for s in self.summaries() {
            let value = summarised
                .iter()
                .find(|(spec, _)| spec.field == s.field)
                .map_or(Shape::Any, |(_, shape)| match shape {
                    Shape::Nullable(inner) => (**inner).clone(),
                    other => other.clone(),
                });
            let count = Shape::Integer {
                types: vec!["int", "long"],
                min: 0,
                max: None,
            };
            window.push(Property::new(
                super::rollup_name(s.field, "num"),
                count,
                true,
            ));
            let sum = match &value {
                Shape::Integer { .. } => Shape::Types(vec!["int", "long"]),
                Shape::Types(types) if types.iter().all(|t| matches!(*t, "int" | "long")) => {
                    Shape::Types(vec!["int", "long"])
                }
                other => other.clone(),
            };
            for (kept, op, shape) in [
                (s.sum, "sum", sum),
                (s.min, "min", value.clone()),
                (s.max, "max", value.clone()),
            ] {
                if kept {
                    window.push(Property::new(super::rollup_name(s.field, op), shape, false));
                }
            }
        }
        Shape::Object(window)
    }

    /// Whether this is a native time-series collection.
    pub fn is_native(&self) -> bool {
        matches!(self.parts.storage, Storage::Native { .. })
    }

    /// The options a native time-series collection is created with.
    pub(super) fn timeseries_options(&self) -> TimeseriesOptions {
        let (granularity, span) = match self.parts.storage {
            Storage::Native {
                granularity,
                span_seconds,
            } => (granularity, span_seconds),
            Storage::Buckets { .. } | Storage::Rollup { .. } | Storage::Slots { .. } => {
                (None, None)
            }
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

//! Reading measurements back: a time-ordered stream of a range, and a range's summary.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bson::{doc, Bson, DateTime, Document};
use futures_util::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;

use super::{fields, key_filter, span_millis, Measurement, Series, Storage};
use crate::error::{Error, Result};
use crate::schema::FieldName;

impl<M: Measurement> Series<M> {
    /// The measurements of `key` with a time in `[from, to)`, in time order. Measurements with
    /// equal times come in an unspecified order.
    ///
    /// Only the buckets whose window overlaps the range are read (one `find` through the `{key,
    /// start}` index); the buckets come whole, and the measurements outside the range (in the
    /// buckets across its edges) are dropped on the client, which was faster than asking the
    /// server to filter them. The buckets of one window are merged on the client, so memory
    /// holds one window at a time, never the range.
    #[tracing::instrument(
        name = "pattern_runtime::bucket.range",
        level = "debug",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SERIES.collection(),
            key = tracing::field::Empty,
            from = %from,
            to = %to,
        ),
        err(level = "debug")
    )]
    pub async fn range(
        &self,
        key: impl Into<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> Result<Measurements<M>> {
        let key = key_filter::<M>(&key.into())?;
        tracing::Span::current().record("key", tracing::field::display(&key));
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
                // The buckets as stored, their measurements filtered and given the key fields
                // here: the same work as a `$filter`/`$map` stage, which on the embedded server
                // took about twice as long for a sensor-hour (`bucket_bench`, median hour read
                // 55 ms over 3 runs with the stage, 25 ms over 4 runs without).
                let keys: Vec<&'static str> = spec.keys().to_vec();
                let mut projection = doc! { "_id": 0, fields::START: 1, fields::MEASUREMENTS: 1 };
                for k in &keys {
                    projection.insert(*k, 1);
                }
                let (from_ms, to_ms) = (from.timestamp_millis(), to.timestamp_millis());
                let cursor = self
                    .collection
                    .find(overlap(key, from, to, span_seconds))
                    .sort(doc! { fields::START: 1 })
                    .projection(projection)
                    .await?
                    .map_ok(move |bucket| in_window(bucket, &keys, time, from_ms, to_ms))
                    .boxed();
                let state = WindowMerge {
                    cursor,
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
    #[tracing::instrument(
        name = "pattern_runtime::bucket.summary",
        level = "debug",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SERIES.collection(),
            key = tracing::field::Empty,
            from = %from,
            to = %to,
        ),
        err(level = "debug")
    )]
    pub async fn summary(
        &self,
        key: impl Into<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> Result<Summary> {
        let key = key_filter::<M>(&key.into())?;
        tracing::Span::current().record("key", tracing::field::display(&key));
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
        tracing::debug!(count, "range summarised");
        Ok(Summary {
            count,
            first: row.get_datetime("first").ok().copied(),
            last: row.get_datetime("last").ok().copied(),
            fields,
        })
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

/// A stored bucket as `{start, m}`: its measurements with a time in `[from_ms, to_ms)`, each with
/// the bucket's key fields (a measurement's own field of the same name wins).
fn in_window(
    mut bucket: Document,
    keys: &[&'static str],
    time: &str,
    from_ms: i64,
    to_ms: i64,
) -> Document {
    let key_fields: Vec<(&'static str, Bson)> = keys
        .iter()
        .filter_map(|k| bucket.get(*k).map(|v| (*k, v.clone())))
        .collect();
    let items: Vec<Bson> = match bucket.remove(fields::MEASUREMENTS) {
        Some(Bson::Array(items)) => items
            .into_iter()
            .filter_map(|m| {
                let Bson::Document(mut d) = m else {
                    return None;
                };
                let t = d.get_datetime(time).ok()?.timestamp_millis();
                if t < from_ms || t >= to_ms {
                    return None;
                }
                for (k, v) in &key_fields {
                    if !d.contains_key(*k) {
                        d.insert(*k, v.clone());
                    }
                }
                Some(Bson::Document(d))
            })
            .collect(),
        _ => Vec::new(),
    };
    doc! {
        fields::START: bucket.remove(fields::START).unwrap_or(Bson::Null),
        "m": items,
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

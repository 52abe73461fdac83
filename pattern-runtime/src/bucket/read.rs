//! Reading measurements back: a time-ordered stream of a range, and a range's summary.

use crate::span::Spanned as _;
use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bson::raw::{CStr, RawBsonRef, RawDocumentBuf};
use bson::{doc, Bson, DateTime, Document};
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;

use super::{fields, key_filter, KeepsMeasurements, Measurement, Series, Storage};
use crate::error::{Error, Result};
use crate::model::IntoId;
use crate::schema::FieldName;
use crate::txn::{collect_in, Transaction};

impl<M: Measurement> Series<M> {
    /// The measurements of `key` with a time in `[from, to)`, in time order. Measurements with
    /// equal times come in an unspecified order.
    ///
    /// Only the buckets whose window overlaps the range are read (one `find` through the `{key,
    /// start}` index); the buckets come whole, and the measurements outside the range (in the
    /// buckets across its edges) are dropped on the client, which was faster than asking the
    /// server to filter them. The buckets of one window are merged on the client, so memory
    /// holds one window at a time, never the range.
    ///
    /// A `slots` series reads its windows the same way (one `find` through the unique `{key,
    /// time}` index) and gives each slot back as a measurement whose time is the slot's.
    /// A `rollup` series does not keep its measurements: calling `range` on one does not compile.
    ///
    /// Bound to the caller's transaction ([`in_transaction`](Self::in_transaction)), `range` reads
    /// in its session and sees what the transaction wrote before its commit: the documents of the
    /// range are then read whole (the same `find`) and streamed from memory, since a stream
    /// cannot hold the session, which the transaction's other operations wait for.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] when a key value is a document with a `$` or `.` in a field name
    /// (or anything else an id cannot be, see the crate docs);
    /// [`Error::Malformed`] (in the stream) when a stored window of a `slots` series is not a
    /// map of slots; the driver's errors.
    pub fn range(
        &self,
        key: impl IntoId<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> BoxFuture<'_, Result<Measurements<M>>>
    where
        M: KeepsMeasurements,
    {
        // A boxed future rather than an `async fn`: the bound above is then checked once, at the
        // call, and a `rollup` series gets one error there instead of three.
        Box::pin(self.read_range(key.into_id(), from, to))
    }

    // `range` without the bound, which only the call needs.
    async fn read_range(
        &self,
        key: M::Key,
        from: DateTime,
        to: DateTime,
    ) -> Result<Measurements<M>> {
        crate::span::operation(tracing::debug_span!("pattern_runtime::bucket.range", model = self.span_model(), collection = self.span_collection(), from = %from, to = %to, key = tracing::field::Empty), async move {
        let key = key_filter::<M>(&key)?;
        tracing::Span::current().record("key", tracing::field::display(&key));
        let spec = M::SERIES;
        let time = spec.time();
        match spec.storage() {
            Storage::Native { .. } => {
                let mut filter = key;
                filter.insert(time, doc! { "$gte": from, "$lt": to });
                // Deserialized by the driver straight from the reply's bytes.
                let typed = self.collection.clone_with_type::<M>();
                let find = typed
                    .find(filter)
                    .sort(doc! { time: 1 })
                    .projection(doc! { "_id": 0 });
                let inner = find_in(find, self.tx.as_ref())
                    .await?
                    .map_err(Error::from)
                    .boxed();
                Ok(Measurements { inner })
            }
            Storage::Slots { .. } => self.range_slots(key, from, to).await,
            Storage::Rollup { .. } => Err(Error::Unsupported {
                operation: "range".to_owned(),
                reason: "a rollup series does not keep its measurements: read it with `summary`",
            }),
            Storage::Buckets { span_seconds, .. } => {
                // The buckets as stored, their measurements filtered and given the key fields
                // here: the same work as a `$filter`/`$map` stage, which on the embedded server
                // took about twice as long for a sensor-hour (`bucket_bench`, median hour read
                // 55 ms over 3 runs with the stage, 25 ms over 4 runs without). In raw BSON: with
                // a `Document` per measurement, converting took 12 of a sensor-hour's 15 ms
                // (`bucket_bench` with `BENCH_BREAKDOWN=1`).
                let keys: Vec<&'static str> = spec.keys().to_vec();
                let (from_ms, to_ms) = (from.timestamp_millis(), to.timestamp_millis());
                let raw = self.collection.clone_with_type::<RawDocumentBuf>();
                let find = raw
                    .find(overlap(key, from, to, span_seconds))
                    .sort(doc! { fields::START: 1 });
                let cursor = find_in(find, self.tx.as_ref())
                    .await?
                    .map_ok(move |bucket| in_window(bucket, &keys, time, from_ms, to_ms))
                    .boxed();
                let state = WindowMerge {
                    cursor,
                    pending: None,
                    ready: VecDeque::new(),
                };
                let inner = stream::try_unfold(state, WindowMerge::next)
                    .and_then(
                        |d| async move { Ok(bson::deserialize_from_slice::<M>(d.as_bytes())?) },
                    )
                    .boxed();
                Ok(Measurements { inner })
            }
        }
    })
        .await
    }

    /// The count, first and last time, and the declared summaries of the measurements of `key`
    /// with a time in `[from, to)`, computed by the server in one aggregation.
    ///
    /// A bucket that lies wholly inside the range contributes its stored summary and count; only
    /// the buckets across the range's edges are filtered measurement by measurement, and no
    /// bucket is unwound. In native mode the summary is computed from the measurements.
    ///
    /// A `slots` series: one `find` of the windows, the summary computed on the client.
    /// A `rollup` series: one aggregation over the stored sums; its count is the largest of the
    /// summarised fields' counts (a field that is `None` in a measurement is not counted), and [`Summary::first`] and [`Summary::last`] are `None` (no time finer
    /// than the window is kept).
    ///
    /// Bound to the caller's transaction ([`in_transaction`](Self::in_transaction)), it reads in
    /// its session (the same query) and counts what the transaction wrote before its commit.
    ///
    /// # Errors
    /// [`Error::RangeNotAligned`] on a `rollup` series when `from` or `to` is not on a window
    /// boundary; [`Error::Malformed`] when a stored window of a `slots` series is not a map of
    /// slots.
    pub fn summary<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
        from: DateTime,
        to: DateTime,
    ) -> crate::model::Pending<'a, Result<Summary>> {
        crate::model::Pending::new(self.summary_op(key.into_id(), from, to))
    }

    async fn summary_op(&self, key: M::Key, from: DateTime, to: DateTime) -> Result<Summary> {
        crate::span::operation(tracing::debug_span!("pattern_runtime::bucket.summary", model = self.span_model(), collection = self.span_collection(), from = %from, to = %to, key = tracing::field::Empty), async move {
        let key = key_filter::<M>(&key)?;
        tracing::Span::current().record("key", tracing::field::display(&key));
        let spec = M::SERIES;
        let time = spec.time();
        let pipeline = match spec.storage() {
            Storage::Rollup { span_seconds } => {
                return self.summary_rollup(key, from, to, span_seconds).await
            }
            Storage::Slots { .. } => return self.summary_slots(key, from, to).await,
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
        // No measurement in range: no row; every declared summary is then null.
        let row = self.aggregate_row(pipeline).await?;
        let count = match row.get("n") {
            Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Double(n)) if *n >= 0.0 => *n as u64,
            _ => 0,
        };
        tracing::debug!(count, "range summarised");
        Ok(Summary {
            count,
            first: row.get_datetime("first").ok().copied(),
            last: row.get_datetime("last").ok().copied(),
            fields: summary_fields(spec, &row),
        })
    })
        .await
    }
}

impl<M: Measurement> Series<M> {
    /// The one row of an aggregation ending in a `$group` on `null` (an empty document without
    /// one), in the caller's transaction when the handle is bound to one.
    pub(super) async fn aggregate_row(&self, pipeline: Vec<Document>) -> Result<Document> {
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let rows = collect_in!(self.collection.aggregate(pipeline), session.as_deref_mut())?;
        Ok(rows.into_iter().next().unwrap_or_default())
    }
}

/// The documents `find` reads, as a stream: from the server's cursor, a batch at a time; in the
/// caller's transaction `tx`, read whole in its session first (a stream cannot hold the session,
/// which the transaction's other operations wait for), then from memory.
pub(super) async fn find_in<T>(
    find: mongodb::action::Find<'_, T>,
    tx: Option<&Transaction>,
) -> Result<BoxStream<'static, mongodb::error::Result<T>>>
where
    T: DeserializeOwned + Send + Sync + 'static,
{
    let mut session = Transaction::session_of(tx).await?;
    Ok(match session.as_deref_mut() {
        Some(s) => stream::iter(collect_in!(find, Some(s))?.into_iter().map(Ok)).boxed(),
        None => find.await?.boxed(),
    })
}

/// The declared summaries from an aggregation's row, where `<op><i>` is summary `op` of the
/// `i`th summarised field: `{ <field>: { min, max, sum } }`, null where the row has none.
pub(super) fn summary_fields(spec: &super::SeriesSpec, row: &Document) -> Document {
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
    fields
}

/// `[from, to)` overlaps a bucket's window `[start, start + span)`: windows are aligned, so
/// `start` is in `[window_start(from), to)`, an index range on `{key, start}`; `first`/`last`
/// then skip buckets with nothing in range.
fn overlap(mut key: Document, from: DateTime, to: DateTime, span_seconds: u64) -> Document {
    let lowest = DateTime::from_millis(super::window_start(from, span_seconds));
    key.insert(fields::START, doc! { "$gte": lowest, "$lt": to });
    key.insert(fields::FIRST, doc! { "$lt": to });
    key.insert(fields::LAST, doc! { "$gte": from });
    key
}

/// One bucket's measurements in the range: the bucket's window start, and each measurement
/// with its time.
type InWindow = (Option<i64>, Vec<(i64, RawDocumentBuf)>);

/// Reads the buckets of one window at a time and yields their measurements in time order.
struct WindowMerge {
    cursor: BoxStream<'static, mongodb::error::Result<InWindow>>,
    pending: Option<InWindow>,
    ready: VecDeque<RawDocumentBuf>,
}

impl WindowMerge {
    async fn next(mut self) -> Result<Option<(RawDocumentBuf, Self)>> {
        loop {
            if let Some(d) = self.ready.pop_front() {
                return Ok(Some((d, self)));
            }
            let (start, mut items) = match self.pending.take() {
                Some(b) => b,
                None => match self.cursor.try_next().await? {
                    Some(b) => b,
                    None => return Ok(None),
                },
            };
            loop {
                match self.cursor.try_next().await? {
                    Some((s, more)) if s == start => items.extend(more),
                    Some(b) => {
                        self.pending = Some(b);
                        break;
                    }
                    None => break,
                }
            }
            // Stable: measurements of equal times keep their stored order.
            items.sort_by_key(|(t, _)| *t);
            self.ready = items.into_iter().map(|(_, d)| d).collect();
        }
    }
}

/// A stored bucket's measurements with a time in `[from_ms, to_ms)`, each with the bucket's key
/// fields (a measurement's own field of the same name wins), in raw BSON.
fn in_window(
    bucket: RawDocumentBuf,
    keys: &[&'static str],
    time: &str,
    from_ms: i64,
    to_ms: i64,
) -> InWindow {
    let start = bucket
        .get_datetime(fields::START)
        .ok()
        .map(|d| d.timestamp_millis());
    let key_fields: Vec<(&CStr, RawBsonRef<'_>)> = keys
        .iter()
        .filter_map(|k| {
            let name = <&CStr>::try_from(*k).ok()?;
            bucket.get(k).ok().flatten().map(|v| (name, v))
        })
        .collect();
    let Ok(Some(RawBsonRef::Array(items))) = bucket.get(fields::MEASUREMENTS) else {
        return (start, Vec::new());
    };
    let items = items
        .into_iter()
        .filter_map(|m| {
            let Ok(RawBsonRef::Document(m)) = m else {
                return None;
            };
            let t = m.get_datetime(time).ok()?.timestamp_millis();
            if t < from_ms || t >= to_ms {
                return None;
            }
            let mut d = m.to_owned();
            for (k, v) in &key_fields {
                if !matches!(m.get(k.as_str()), Ok(Some(_))) {
                    d.append(*k, *v);
                }
            }
            Some((t, d))
        })
        .collect();
    (start, items)
}

/// A stream of measurements, from [`Series::range`].
pub struct Measurements<M> {
    inner: BoxStream<'static, Result<M>>,
}

impl<M> Measurements<M> {
    pub(super) fn new(inner: BoxStream<'static, Result<M>>) -> Self {
        Measurements { inner }
    }
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
    pub(super) count: u64,
    pub(super) first: Option<DateTime>,
    pub(super) last: Option<DateTime>,
    pub(super) fields: Document,
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
    /// [`Error::Unsupported`] when the field has no `min` summary.
    pub fn min<T: DeserializeOwned, K, M, const I: usize>(
        &self,
        field: FieldName<T, K, M, I>,
    ) -> Result<Option<T>> {
        self.get(field, "min")
    }

    /// The maximum of a field declared with `summary(field(max))`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when the field has no `max` summary.
    pub fn max<T: DeserializeOwned, K, M, const I: usize>(
        &self,
        field: FieldName<T, K, M, I>,
    ) -> Result<Option<T>> {
        self.get(field, "max")
    }

    /// The sum of a field declared with `summary(field(sum))`, in the field's type (an `i32`
    /// sum past `i32::MAX` is an [`Error::Bson`]: declare the field `i64`).
    ///
    /// # Errors
    /// [`Error::Unsupported`] when the field has no `sum` summary.
    pub fn sum<T: DeserializeOwned, K, M, const I: usize>(
        &self,
        field: FieldName<T, K, M, I>,
    ) -> Result<Option<T>> {
        self.get(field, "sum")
    }

    fn get<T: DeserializeOwned, K, M, const I: usize>(
        &self,
        field: FieldName<T, K, M, I>,
        op: &'static str,
    ) -> Result<Option<T>> {
        let value = self
            .fields
            .get_document(field.as_str())
            .ok()
            .and_then(|d| d.get(op))
            .ok_or_else(|| Error::Unsupported {
                operation: format!("the `{op}` of `{}`", field.as_str()),
                reason: "this summary is not declared: add it to `#[bucket(summary(...))]` \
                         on the measurement",
            })?;
        if matches!(value, Bson::Null) || (self.count == 0 && op == "sum") {
            return Ok(None);
        }
        Ok(Some(bson::deserialize_from_bson(value.clone())?))
    }
}

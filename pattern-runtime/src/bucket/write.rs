//! Writing measurements: one upsert per measurement, or one per (key, window) chunk.

use crate::span::Spanned as _;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::Ordering as AtomicOrdering;

use bson::{doc, Bson, DateTime, Document};
use futures_util::stream::{self, StreamExt};
use mongodb::error::{ErrorKind, PartialBulkWriteResult};
use mongodb::options::{UpdateModifications, UpdateOneModel, WriteModel};

use super::numbers::{align, checked_sum, extreme, numbers, small_int};
use super::{check_key_value, fields, span_millis, Measurement, Series, SeriesSpec, Storage};
use crate::error::{
    bytes_left, check_finite, check_size, element_cost, Error, Result, BYTE_BUDGET,
};

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
    /// Stores one measurement: one upsert into the bucket of its key and window that still has
    /// room (a new bucket when none has), or one insert in native mode.
    ///
    /// # Errors
    /// [`Error::DocumentTooLarge`] before anything is written when the measurement is over
    /// 16 MiB (or when the bucket would be: the server refuses the update);
    /// [`Error::InvalidValue`] when a key value is a document with a `$` or `.` in a field name
    /// (or anything else an id cannot be, see the crate docs); with `slots`,
    /// [`Error::InvalidValue`] when the time is not on a slot or the measurement has no value;
    /// the driver's errors.
    pub async fn insert(&self, measurement: &M) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::bucket.insert",
                model = self.span_model(),
                collection = self.span_collection(),
                storage = storage_name(M::SERIES),
                key = tracing::field::Empty
            ),
            async move {
                if self.tx.is_some() {
                    return self
                        .insert_many(std::slice::from_ref(measurement))
                        .await
                        .map(|_| ());
                }
                let prepared = prepare::<M>(measurement)?;
                tracing::Span::current().record("key", tracing::field::display(&prepared.key));
                match M::SERIES.storage() {
                    Storage::Native { .. } => {
                        self.ensure_native().await?;
                        self.collection.insert_one(prepared.document).await?;
                        tracing::debug!(inserted = 1, "measurement inserted");
                    }
                    Storage::Rollup { span_seconds } | Storage::Slots { span_seconds, .. } => {
                        let group = Group::new(prepared, span_seconds);
                        let (filter, update) = super::keyed::statement(
                            M::SERIES,
                            &group.key,
                            group.window,
                            &group.items,
                        )?;
                        let new = self.upsert(filter, update).await?;
                        tracing::debug!(
                            window = %DateTime::from_millis(group.window),
                            new_window = new,
                            "measurement written to its window"
                        );
                    }
                    Storage::Buckets {
                        max_count,
                        span_seconds,
                    } => {
                        let group = Group::new(prepared, span_seconds);
                        let (filter, update) = group.statement(
                            M::SERIES,
                            max_count,
                            span_seconds,
                            0..group.items.len(),
                        )?;
                        let r = self
                            .collection
                            .update_one(filter, update)
                            .upsert(true)
                            .await
                            .map_err(|e| refused_sum(M::SERIES, e))?;
                        tracing::debug!(
                            window = %DateTime::from_millis(group.window),
                            matched = r.matched_count,
                            modified = r.modified_count,
                            new_bucket = r.upserted_id.is_some(),
                            "measurement added to its bucket"
                        );
                    }
                }
                Ok(())
            },
        )
        .await
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
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::bucket.insert_many",
                model = self.span_model(),
                collection = self.span_collection(),
                storage = storage_name(M::SERIES),
                measurements = measurements.len()
            ),
            async move {
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
                        let docs: Vec<Document> =
                            prepared.into_iter().map(|p| p.document).collect();
                        let n = docs.len();
                        if let Some(tx) = &self.tx {
                            let insert = self.collection.insert_many(docs);
                            let mut session = crate::txn::Transaction::session_of(Some(tx)).await?;
                            crate::txn::in_session!(insert, session.as_deref_mut())?;
                            tracing::debug!(
                                inserted = n,
                                in_transaction = true,
                                "measurements inserted"
                            );
                            return Ok(BatchReport {
                                measurements: n,
                                writes: n,
                                new_buckets: 0,
                            });
                        }
                        match self.collection.insert_many(docs).ordered(false).await {
                            Ok(_) => {
                                tracing::debug!(inserted = n, "measurements inserted");
                                Ok(BatchReport {
                                    measurements: n,
                                    writes: n,
                                    new_buckets: 0,
                                })
                            }
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
                    } => {
                        self.insert_buckets(prepared, Some(max_count), span_seconds)
                            .await
                    }
                    Storage::Rollup { span_seconds } | Storage::Slots { span_seconds, .. } => {
                        self.insert_buckets(prepared, None, span_seconds).await
                    }
                }
            },
        )
        .await
    }

    /// One upsert; a duplicate key (two writers opening the same window of a `rollup` or `slots`
    /// series at once, through its unique index) is sent once more, and then matches.
    async fn upsert(&self, filter: Document, update: Document) -> Result<bool> {
        let once = |filter: Document, update: Document| async move {
            self.collection
                .update_one(filter, update)
                .upsert(true)
                .await
                .map(|r| r.upserted_id.is_some())
                .map_err(|e| refused_sum(M::SERIES, e))
        };
        match once(filter.clone(), update.clone()).await {
            Err(e) if e.is_duplicate_key() => {
                tracing::debug!("another writer opened the window meanwhile: sent again");
                once(filter, update).await
            }
            other => other,
        }
    }

    /// Array buckets (`max_count` given: chunks of at most that many) or keyed windows (`None`:
    /// one statement per key and window).
    async fn insert_buckets(
        &self,
        prepared: Vec<Prepared>,
        max_count: Option<u32>,
        span_seconds: u64,
    ) -> Result<BatchReport> {
        // Group by (key, window), in order of first appearance.
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<(Vec<u8>, i64), usize> = HashMap::new();
        for p in prepared {
            let window = window_start(p.time, span_seconds);
            let id = (key_bytes(&p.key)?, window);
            match index.get(&id) {
                Some(&i) => {
                    groups[i].items.push((p.element, p.time));
                    groups[i].bytes.push(p.bytes);
                }
                None => {
                    index.insert(id, groups.len());
                    groups.push(Group::new(p, span_seconds));
                }
            }
        }
        let mut statements: Vec<(Document, Document, usize)> = Vec::new();
        for group in &groups {
            let Some(max_count) = max_count else {
                let (filter, update) =
                    super::keyed::statement(M::SERIES, &group.key, group.window, &group.items)?;
                statements.push((filter, update, group.items.len()));
                continue;
            };
            // Chunks of at most `max_count` measurements and the byte budget (at least one).
            let mut start = 0;
            while start < group.items.len() {
                let mut bytes = 0usize;
                let end = start
                    + group.bytes[start..]
                        .iter()
                        .take(max_count.max(1) as usize)
                        .take_while(|b| {
                            bytes = bytes.saturating_add(**b);
                            bytes <= BYTE_BUDGET
                        })
                        .count()
                        .max(1);
                let (filter, update) =
                    group.statement(M::SERIES, max_count, span_seconds, start..end)?;
                statements.push((filter, update, end - start));
                start = end;
            }
        }
        let total: usize = statements.iter().map(|s| s.2).sum();
        let writes = statements.len();
        if let Some(tx) = &self.tx {
            // In the caller's transaction: one upsert after another in its session.
            if let Some(how) = tx.ended() {
                return Err(Error::TransactionEnded { how });
            }
            let mut session = tx.session().await;
            let mut new_buckets = 0;
            for (filter, update, _) in statements {
                let upsert = self.collection.update_one(filter, update).upsert(true);
                let r = upsert
                    .session(&mut *session)
                    .await
                    .map_err(|e| refused_sum(M::SERIES, e))?;
                new_buckets += usize::from(r.upserted_id.is_some());
            }
            let report = BatchReport {
                measurements: total,
                writes,
                new_buckets,
            };
            batch_written(&report, "update in the caller's transaction");
            return Ok(report);
        }

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
                    let report = BatchReport {
                        measurements: total,
                        writes,
                        new_buckets: usize::try_from(result.upserted_count).unwrap_or(usize::MAX),
                    };
                    batch_written(&report, "bulkWrite");
                    return Ok(report);
                }
                Err(e) if matches!(e.kind.as_ref(), ErrorKind::IncompatibleServer { .. }) => {
                    // MongoDB < 8.0: nothing was sent; fall back to one update per statement.
                    tracing::debug!(
                        "the server has no bulkWrite command (MongoDB < 8.0): one update per \
                         bucket, for this handle from now on"
                    );
                    self.bulk_write.store(false, AtomicOrdering::Relaxed);
                }
                Err(e) => {
                    // Duplicate keys (a window opened by another writer meanwhile) are sent
                    // again, one by one; any other failure is reported.
                    let (mut retry, mut failed, mut other) = (Vec::new(), 0usize, false);
                    match e.kind.as_ref() {
                        ErrorKind::BulkWrite(b) => {
                            for (i, w) in &b.write_errors {
                                if w.code == crate::error::DUPLICATE_KEY && max_count.is_none() {
                                    retry.push(*i);
                                } else {
                                    failed += statements[*i].2;
                                    other = true;
                                }
                            }
                            other |=
                                !b.write_concern_errors.is_empty() || b.write_errors.is_empty();
                        }
                        _ => {
                            failed = total;
                            other = true;
                        }
                    }
                    if other {
                        // Nothing is sent again: the duplicates count as not written too.
                        failed += retry.iter().map(|i| statements[*i].2).sum::<usize>();
                        return Err(incomplete(total, failed, refused_sum(M::SERIES, e)));
                    }
                    let upserted = e.kind.as_ref();
                    let mut new_buckets = match upserted {
                        ErrorKind::BulkWrite(b) => match &b.partial_result {
                            Some(PartialBulkWriteResult::Summary(r)) => {
                                usize::try_from(r.upserted_count).unwrap_or(0)
                            }
                            Some(PartialBulkWriteResult::Verbose(r)) => {
                                usize::try_from(r.summary.upserted_count).unwrap_or(0)
                            }
                            _ => 0,
                        },
                        _ => 0,
                    };
                    tracing::debug!(
                        statements = retry.len(),
                        "windows opened by another writer meanwhile: sent again"
                    );
                    // Every one is attempted; what fails is counted, as below.
                    let mut first_error = None;
                    for i in retry {
                        let (filter, update, n) = &statements[i];
                        match self.upsert(filter.clone(), update.clone()).await {
                            Ok(new) => new_buckets += usize::from(new),
                            Err(e) => {
                                failed += n;
                                first_error.get_or_insert(e);
                            }
                        }
                    }
                    let report = BatchReport {
                        measurements: total - failed,
                        writes,
                        new_buckets,
                    };
                    batch_written(&report, "bulkWrite");
                    return match first_error {
                        None => Ok(report),
                        Some(e) => Err(incomplete(total, failed, e)),
                    };
                }
            }
        }

        // One update per statement, a few at a time, every one attempted.
        let results: Vec<(usize, Result<bool>)> = stream::iter(statements)
            .map(|(filter, update, n)| async move { (n, self.upsert(filter, update).await) })
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
        batch_written(&report, "update");
        match first_error {
            None => Ok(report),
            Some(e) => Err(incomplete(total, failed, e)),
        }
    }
}

/// `DEBUG`: what a batch wrote, and through which command.
fn batch_written(report: &BatchReport, command: &'static str) {
    tracing::debug!(
        command,
        measurements = report.measurements,
        writes = report.writes,
        new_buckets = report.new_buckets,
        "measurements written to buckets"
    );
}

/// The storage, for a span's field.
fn storage_name(spec: &SeriesSpec) -> &'static str {
    match spec.storage() {
        Storage::Native { .. } => "native",
        Storage::Rollup { .. } => "rollup",
        Storage::Slots { .. } => "slots",
        Storage::Buckets { .. } => "buckets",
    }
}

/// `e` from the upserts of a series: the server's refusal (`BadValue`) of an `$inc` that would
/// take a stored sum out of the 64-bit range as [`Error::InvalidValue`] naming the summed
/// fields (through [`inc_overflow`](crate::error::inc_overflow)); any other error as it is.
fn refused_sum(spec: &SeriesSpec, e: mongodb::error::Error) -> Error {
    let fields: Vec<&str> = spec
        .summaries()
        .iter()
        .filter(|s| s.sum)
        .map(|s| s.field)
        .collect();
    Error::from(crate::error::inc_overflow(e, &fields, "a window's sum"))
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

/// A measurement, serialized and split for writing.
struct Prepared {
    /// The whole measurement (native mode).
    document: Document,
    /// The key fields, by BSON name.
    key: Document,
    /// The measurement without its key fields (bucket mode).
    element: Document,
    time: DateTime,
    /// What the element adds to a bucket.
    bytes: usize,
}

fn prepare<M: Measurement>(measurement: &M) -> Result<Prepared> {
    let document = bson::serialize_to_document(measurement)?;
    // A caller's values are data: a key the server would read as an operator or a path is
    // refused before anything is sent.
    crate::literal::check_document("the measurement", &document)?;
    check_size(&document, "the measurement")?;
    for s in M::SERIES.summaries() {
        check_finite(&document, s.field, "the bucket's summary")?;
    }
    let mut key = Document::new();
    let mut element = document.clone();
    for k in M::SERIES.keys() {
        let value = element.remove(*k).unwrap_or(Bson::Null);
        check_key_value(&value)?;
        key.insert(*k, value);
    }
    Ok(Prepared {
        bytes: element_cost(&element)?,
        document,
        key,
        element,
        time: measurement.time(),
    })
}

fn key_bytes(key: &Document) -> Result<Vec<u8>> {
    Ok(bson::RawDocumentBuf::try_from(key)?.into_bytes())
}

/// The start of the window of `time`: rounded down to a multiple of the span since the epoch
/// (times before 1970 included).
pub fn window_start(time: DateTime, span_seconds: u64) -> i64 {
    align(time.timestamp_millis(), span_millis(span_seconds))
}

/// The measurements of one (key, window), to be written together.
struct Group {
    key: Document,
    window: i64,
    items: Vec<(Document, DateTime)>,
    /// What each item adds to a bucket, in bytes.
    bytes: Vec<usize>,
}

impl Group {
    fn new(first: Prepared, span_seconds: u64) -> Self {
        Group {
            window: window_start(first.time, span_seconds),
            key: first.key,
            items: vec![(first.element, first.time)],
            bytes: vec![first.bytes],
        }
    }

    /// The upsert of `items[range]`: its filter and update.
    fn statement(
        &self,
        spec: &SeriesSpec,
        max_count: u32,
        span_seconds: u64,
        range: std::ops::Range<usize>,
    ) -> Result<(Document, Document)> {
        let bytes: usize = self.bytes[range.clone()].iter().sum();
        let items = &self.items[range];
        let n = items.len();
        let mut filter = self.key.clone();
        filter.insert(fields::START, DateTime::from_millis(self.window));
        // Room for the whole chunk: `count <= max - n`, i.e. `count < max - n + 1`.
        let room = i64::from(max_count) - n as i64 + 1;
        filter.insert(fields::COUNT, doc! { "$lt": small_int(room) });
        // And by bytes: a bucket of large measurements is full before its count, and the chunk
        // opens the next one instead of failing on 16 MiB for good. `$not: {$gt}` also matches
        // a bucket written before the toolkit counted bytes (an upsert takes no `$expr`).
        filter.insert(
            fields::BYTES,
            doc! { "$not": { "$gt": bytes_left(BYTE_BUDGET, bytes) } },
        );

        let first = items.iter().map(|i| i.1).min().unwrap_or(DateTime::MAX);
        let last = items.iter().map(|i| i.1).max().unwrap_or(DateTime::MIN);
        let elements: Vec<Bson> = items.iter().map(|i| Bson::Document(i.0.clone())).collect();
        let push = if n == 1 {
            elements.into_iter().next().unwrap_or(Bson::Null)
        } else {
            Bson::Document(doc! { "$each": elements })
        };
        let mut inc = doc! {
            fields::COUNT: small_int(n as i64),
            fields::BYTES: small_int(i64::try_from(bytes).unwrap_or(i64::MAX)),
        };
        let mut min = doc! { fields::FIRST: first };
        let mut max = doc! { fields::LAST: last };
        for s in spec.summaries() {
            let values = numbers(items, s.field);
            if values.is_empty() {
                continue;
            }
            let path = |op: &str| format!("{}.{}.{op}", fields::SUMMARY, s.field);
            if s.min
                && let Some(v) = extreme(&values, Ordering::Less)
            {
                min.insert(path("min"), v.clone());
            }
            if s.max
                && let Some(v) = extreme(&values, Ordering::Greater)
            {
                max.insert(path("max"), v.clone());
            }
            if s.sum {
                inc.insert(path("sum"), checked_sum(&values, s.field)?);
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
        Ok((filter, update))
    }
}

#[cfg(test)]
mod tests {
    use super::super::numbers::sum;
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
        assert_eq!(window_start(DateTime::MIN, hour), i64::MIN);
        assert_eq!(
            window_start(DateTime::MAX, hour),
            i64::MAX.div_euclid(3_600_000) * 3_600_000
        );
    }

    #[test]
    fn sums_stay_exact() {
        let (a, b) = (Bson::Int32(i32::MAX), Bson::Int32(1));
        assert_eq!(sum(&[&a, &b]), Bson::Int64(i64::from(i32::MAX) + 1));
        let c = Bson::Double(0.5);
        assert_eq!(sum(&[&b, &c]), Bson::Double(1.5));
        assert_eq!(sum(&[&b]), Bson::Int32(1));
        assert_eq!(sum(&[&b, &b]), Bson::Int32(2));
        assert_eq!(sum(&[&b, &Bson::Int64(1)]), Bson::Int64(2));
    }

    #[test]
    fn extremes() {
        let v = [Bson::Int32(3), Bson::Double(-1.5), Bson::Int64(7)];
        let refs: Vec<&Bson> = v.iter().collect();
        assert_eq!(extreme(&refs, Ordering::Less), Some(&Bson::Double(-1.5)));
        assert_eq!(extreme(&refs, Ordering::Greater), Some(&Bson::Int64(7)));
    }

    #[test]
    fn an_integer_sum_past_the_64_bit_range_is_refused() {
        use super::super::numbers::checked_sum;
        let max = Bson::Int64(i64::MAX);
        let one = Bson::Int32(1);
        assert!(matches!(
            checked_sum(&[&max, &one], "big"),
            Err(Error::InvalidValue { field, .. }) if field == "big"
        ));
        // Floats add up as `f64` does, as the server's `$inc` of a stored sum would.
        let huge = Bson::Double(f64::MAX);
        assert_eq!(
            checked_sum(&[&huge, &huge], "speed").unwrap(),
            Bson::Double(f64::INFINITY)
        );
    }
}

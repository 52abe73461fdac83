//! The two layouts keyed by (key, window) alone, one document each: `rollup` (per-field counts and
//! sums, the measurements dropped) and `slots` (each value at a path computed from its time).
//!
//! Both are written with one upsert per (key, window) whose filter is the unique `{key.., time}`
//! index: a `rollup` adds with `$inc`, `$min` and `$max`; a `slots` series sets each value with
//! `$set: {"speed.7": 63}` (or `"speed.0.7"` nested), so a write never grows an array and sending
//! a measurement again overwrites it.

use std::collections::BTreeMap;

use bson::raw::{CStr, RawBsonRef, RawDocument, RawDocumentBuf};
use bson::{doc, Bson, DateTime, Document};
use futures_util::stream::{self, StreamExt, TryStreamExt};

use super::numbers::{align, checked_sum, extreme, number, numbers, small_int};
use super::read::Measurements;
use super::{span_millis, Measurement, Series, SeriesSpec, Storage};
use crate::error::{Error, Result};

/// The geometry of a `slots` series, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slots {
    span: i64,
    slot: i64,
    /// Slots per inner map, when nested.
    per_nest: Option<i64>,
}

impl Slots {
    /// The geometry of `Storage::Slots`, `None` for another layout.
    pub(super) fn of(storage: Storage) -> Option<Slots> {
        let Storage::Slots {
            span_seconds,
            slot_seconds,
            nest_seconds,
        } = storage
        else {
            return None;
        };
        Some(Slots {
            span: span_millis(span_seconds),
            slot: span_millis(slot_seconds),
            per_nest: nest_seconds.map(|n| (span_millis(n) / span_millis(slot_seconds)).max(1)),
        })
    }

    /// The slot of `time` in the window starting at `window`, or why the time has none.
    fn slot(&self, window: i64, time: DateTime) -> std::result::Result<i64, String> {
        let offset = time.timestamp_millis() - window;
        if offset % self.slot != 0 {
            return Err(format!(
                "{time} is not on a slot of {} s: a slot series keeps one value per slot; round \
                 the time down to a whole slot (`DateTime::from_millis(pattern_runtime::bucket::\
                 window_start(time, {}))`)",
                self.slot / 1000,
                self.slot / 1000
            ));
        }
        Ok(offset / self.slot)
    }

    /// The path of `slot` under the field `field`: `speed.7`, or `speed.0.7` when nested.
    fn path(&self, field: &str, slot: i64) -> String {
        match self.per_nest {
            Some(per) => format!("{field}.{}.{}", slot / per, slot % per),
            None => format!("{field}.{slot}"),
        }
    }
}

/// The upsert of a (key, window)'s measurements in a `rollup` or `slots` series: its filter (the
/// unique index's fields) and update.
pub(super) fn statement(
    spec: &SeriesSpec,
    key: &Document,
    window: i64,
    items: &[(Document, DateTime)],
) -> Result<(Document, Document)> {
    let mut filter = key.clone();
    filter.insert(spec.time(), DateTime::from_millis(window));
    let update = match Slots::of(spec.storage()) {
        Some(slots) => {
            // The last measurement of a slot wins, as it would over two writes.
            let mut by_slot: BTreeMap<i64, &Document> = BTreeMap::new();
            for (element, time) in items {
                if !spec.values().iter().any(|f| element.contains_key(*f)) {
                    return Err(Error::InvalidValue {
                        field: spec.values().join(", "),
                        reason: "a slot series stores a measurement as its values, and this one \
                                 has none (every field skipped as `None`): it would not be stored"
                            .to_owned(),
                    });
                }
                let slot = slots
                    .slot(window, *time)
                    .map_err(|reason| Error::InvalidValue {
                        field: spec.time().to_owned(),
                        reason,
                    })?;
                by_slot.insert(slot, element);
            }
            let mut set = Document::new();
            let mut unset = Document::new();
            for (slot, element) in by_slot {
                for field in spec.values() {
                    match element.get(*field) {
                        Some(v) => set.insert(slots.path(field, slot), v.clone()),
                        // A field the measurement does not have (skipped when `None`): any value
                        // sent before for this slot goes too.
                        None => unset.insert(slots.path(field, slot), ""),
                    };
                }
            }
            let mut update = Document::new();
            if !set.is_empty() {
                update.insert("$set", set);
            }
            if !unset.is_empty() {
                update.insert("$unset", unset);
            }
            if update.is_empty() {
                // A measurement with no value field at all: the window's document still exists.
                update.insert(
                    "$setOnInsert",
                    doc! { spec.time(): DateTime::from_millis(window) },
                );
            }
            update
        }
        None => {
            let mut inc = Document::new();
            let mut min = Document::new();
            let mut max = Document::new();
            for s in spec.summaries() {
                let values = numbers(items, s.field);
                inc.insert(rollup_name(s.field, "num"), small_int(values.len() as i64));
                if values.is_empty() {
                    continue;
                }
                if s.sum {
                    inc.insert(rollup_name(s.field, "sum"), checked_sum(&values, s.field)?);
                }
                if s.min
                    && let Some(v) = extreme(&values, std::cmp::Ordering::Less)
                {
                    min.insert(rollup_name(s.field, "min"), v.clone());
                }
                if s.max
                    && let Some(v) = extreme(&values, std::cmp::Ordering::Greater)
                {
                    max.insert(rollup_name(s.field, "max"), v.clone());
                }
            }
            let mut update = doc! { "$inc": inc };
            if !min.is_empty() {
                update.insert("$min", min);
            }
            if !max.is_empty() {
                update.insert("$max", max);
            }
            update
        }
    };
    Ok((filter, update))
}

/// A stored window of `spec` that is not as declared, as [`Error::Malformed`].
fn malformed(spec: &SeriesSpec) -> impl Fn(String) -> Error + '_ {
    move |reason| Error::Malformed {
        collection: spec.collection().to_owned(),
        reason,
    }
}

/// A rollup's stored name for a field's `op`: `speed_num`, `speed_sum`, `speed_min`, `speed_max`.
pub fn rollup_name(field: &str, op: &str) -> String {
    format!("{field}_{op}")
}

/// The filter of the windows overlapping `[from, to)`: windows are aligned, so their start is in
/// `[window_start(from), to)`, a range of the unique `{key.., time}` index.
fn overlap(mut key: Document, time: &str, from: DateTime, to: DateTime, span: i64) -> Document {
    let lowest = align(from.timestamp_millis(), span);
    key.insert(
        time,
        doc! { "$gte": DateTime::from_millis(lowest), "$lt": to },
    );
    key
}

impl<M: Measurement> Series<M> {
    /// `slots`: the measurements of the windows overlapping `[from, to)`, in time order.
    pub(super) async fn range_slots(
        &self,
        key: Document,
        from: DateTime,
        to: DateTime,
    ) -> Result<Measurements<M>> {
        let spec = M::SERIES;
        let Some(slots) = Slots::of(spec.storage()) else {
            return Err(Error::Unsupported {
                operation: spec.collection().to_owned(),
                reason: "not a slot series",
            });
        };
        // Raw BSON throughout: each slot becomes a small raw document deserialized as `M`. With
        // a `Document` per slot, converting took 7 of a sensor-hour's 8 ms. And no projection:
        // the embedded server rebuilt the 3 600-key window to drop its `_id`, 4 of the 5.5 ms the
        // `find` took (`bucket_bench` with `BENCH_BREAKDOWN=1`).
        let raw = self.collection.clone_with_type::<RawDocumentBuf>();
        let find = raw
            .find(overlap(key, spec.time(), from, to, slots.span))
            .sort(doc! { spec.time(): 1 });
        let cursor = super::read::find_in(find, self.tx.as_ref()).await?;
        let (from_ms, to_ms) = (from.timestamp_millis(), to.timestamp_millis());
        let inner = cursor
            .map(move |window| {
                let items: Vec<Result<M>> = match window.map_err(Error::from).and_then(|w| {
                    measurements::<M>(spec, slots, &w, from_ms, to_ms).map_err(malformed(spec))
                }) {
                    Ok(items) => items,
                    Err(e) => vec![Err(e)],
                };
                stream::iter(items)
            })
            .flatten()
            .boxed();
        Ok(Measurements::new(inner))
    }

    /// `slots`: the summary of `[from, to)`, computed on the client from one `find` of the
    /// windows (the values are stored under keys, which the server's accumulators cannot reach
    /// without an `$objectToArray` per window).
    pub(super) async fn summary_slots(
        &self,
        key: Document,
        from: DateTime,
        to: DateTime,
    ) -> Result<super::Summary> {
        let spec = M::SERIES;
        let Some(slots) = Slots::of(spec.storage()) else {
            return Err(Error::Unsupported {
                operation: spec.collection().to_owned(),
                reason: "not a slot series",
            });
        };
        let raw = self.collection.clone_with_type::<RawDocumentBuf>();
        let find = raw.find(overlap(key, spec.time(), from, to, slots.span));
        let mut cursor = super::read::find_in(find, self.tx.as_ref()).await?;
        let (from_ms, to_ms) = (from.timestamp_millis(), to.timestamp_millis());
        let mut acc: Vec<Acc> = spec.summaries().iter().map(|_| Acc::default()).collect();
        // For each value field, its summary's accumulator, if it is summarised.
        let acc_of: Vec<Option<usize>> = spec
            .values()
            .iter()
            .map(|v| spec.summaries().iter().position(|s| s.field == *v))
            .collect();
        let (mut count, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
        while let Some(window) = cursor.try_next().await? {
            let cells = cells(spec, slots, &window).map_err(malformed(spec))?;
            let mut previous = None;
            for (t, field, value) in cells {
                if t < from_ms || t >= to_ms {
                    continue;
                }
                // A slot exists when one of its fields does.
                if previous != Some(t) {
                    count += 1;
                    first = first.min(t);
                    last = last.max(t);
                    previous = Some(t);
                }
                if let (Some(a), Some(v)) = (acc_of[field], numeric(value)) {
                    acc[a].add(&v);
                }
            }
        }
        let mut fields = Document::new();
        for (a, s) in acc.into_iter().zip(spec.summaries()) {
            let mut one = Document::new();
            if s.min {
                one.insert("min", a.min.clone().unwrap_or(Bson::Null));
            }
            if s.max {
                one.insert("max", a.max.clone().unwrap_or(Bson::Null));
            }
            if s.sum {
                one.insert("sum", a.sum());
            }
            fields.insert(s.field, one);
        }
        tracing::debug!(count, "range summarised on the client");
        Ok(super::Summary {
            count,
            first: (count > 0).then(|| DateTime::from_millis(first)),
            last: (count > 0).then(|| DateTime::from_millis(last)),
            fields,
        })
    }

    /// `rollup`: the sums of the windows in `[from, to)`, in one aggregation; the range must start
    /// and end on window boundaries.
    pub(super) async fn summary_rollup(
        &self,
        key: Document,
        from: DateTime,
        to: DateTime,
        span_seconds: u64,
    ) -> Result<super::Summary> {
        let spec = M::SERIES;
        let span = span_millis(span_seconds);
        if from.timestamp_millis().rem_euclid(span) != 0
            || to.timestamp_millis().rem_euclid(span) != 0
        {
            return Err(Error::RangeNotAligned {
                span_seconds,
                from,
                to,
            });
        }
        let mut filter = key;
        filter.insert(spec.time(), doc! { "$gte": from, "$lt": to });
        let mut group = doc! { "_id": Bson::Null };
        for (i, s) in spec.summaries().iter().enumerate() {
            group.insert(
                format!("num{i}"),
                doc! { "$sum": format!("${}", rollup_name(s.field, "num")) },
            );
            for (op, on) in [("min", s.min), ("max", s.max), ("sum", s.sum)] {
                if on {
                    group.insert(
                        format!("{op}{i}"),
                        doc! { format!("${op}"): format!("${}", rollup_name(s.field, op)) },
                    );
                }
            }
        }
        let pipeline = vec![doc! { "$match": filter }, doc! { "$group": group }];
        let row = self.aggregate_row(pipeline).await?;
        // The count: the largest of the fields' counts (a field that is `None` in every
        // measurement counts none). A field with no value has no sum either.
        let mut row = row;
        let mut count = 0u64;
        for (i, s) in spec.summaries().iter().enumerate() {
            let n = row
                .get(format!("num{i}"))
                .and_then(number)
                .map_or(0, |n| n as u64);
            count = count.max(n);
            if n == 0 && s.sum {
                row.insert(format!("sum{i}"), Bson::Null);
            }
        }
        tracing::debug!(count, "rollup windows summarised");
        Ok(super::Summary {
            count,
            first: None,
            last: None,
            fields: super::read::summary_fields(spec, &row),
        })
    }
}

/// The values of a stored window of a `slots` series as `(time, field, value)`, in time order
/// (then field order), `field` an index into [`SeriesSpec::values`].
fn cells<'a>(
    spec: &SeriesSpec,
    slots: Slots,
    window: &'a RawDocument,
) -> std::result::Result<Vec<(i64, usize, RawBsonRef<'a>)>, String> {
    let time = spec.time();
    let start = window
        .get_datetime(time)
        .map_err(|_| format!("a window has no date `{time}`"))?
        .timestamp_millis();
    let at = || DateTime::from_millis(start);
    let mut cells = Vec::new();
    for (i, field) in spec.values().iter().enumerate() {
        let map = match window.get(field) {
            Ok(Some(RawBsonRef::Document(map))) => map,
            Ok(None) => continue,
            Ok(Some(_)) | Err(_) => {
                return Err(format!(
                    "`{field}` of the window {} is not a map of slots",
                    at()
                ))
            }
        };
        let number = |k: &str| {
            k.parse::<i64>().map_err(|_| {
                format!(
                    "`{field}` of the window {}: `{k}` is not a slot number",
                    at()
                )
            })
        };
        for entry in map.iter() {
            let (k, v) = entry.map_err(|e| format!("`{field}` of the window {}: {e}", at()))?;
            let outer = number(k.as_str())?;
            // A slot past the window (a corrupt key) is `Malformed`, never an overflow.
            let time_of = |slot: Option<i64>| {
                slot.filter(|s| (0..slots.span / slots.slot).contains(s))
                    .and_then(|s| start.checked_add(s * slots.slot))
                    .ok_or_else(|| format!("`{field}.{k}` of the window {}: no such slot", at()))
            };
            match (slots.per_nest, v) {
                (None, v) => cells.push((time_of(Some(outer))?, i, v)),
                (Some(per), RawBsonRef::Document(inner)) => {
                    for entry in inner.iter() {
                        let (j, v) =
                            entry.map_err(|e| format!("`{field}` of the window {}: {e}", at()))?;
                        let inner_slot = number(j.as_str())?;
                        let slot = (0..per)
                            .contains(&inner_slot)
                            .then(|| outer.checked_mul(per)?.checked_add(inner_slot))
                            .flatten();
                        cells.push((time_of(slot)?, i, v));
                    }
                }
                (Some(_), _) => {
                    return Err(format!(
                        "`{field}.{k}` of the window {} is not a map of slots",
                        at()
                    ))
                }
            }
        }
    }
    // Usually in order already (slots are written in time order); sorting makes any order right.
    cells.sort_by_key(|c| (c.0, c.1));
    Ok(cells)
}

/// A stored window of a `slots` series as the measurements with a time in `[from, to)`, in time
/// order: each slot as the window's key fields, the slot's time and each field's value there.
fn measurements<M: Measurement>(
    spec: &SeriesSpec,
    slots: Slots,
    window: &RawDocument,
    from: i64,
    to: i64,
) -> std::result::Result<Vec<Result<M>>, String> {
    let cstr = |name: &'static str| {
        <&CStr>::try_from(name).map_err(|e| format!("the field name `{name}`: {e}"))
    };
    let mut keys: Vec<(&CStr, RawBsonRef<'_>)> = Vec::new();
    for k in spec.keys() {
        if let Ok(Some(v)) = window.get(k) {
            keys.push((cstr(k)?, v));
        }
    }
    let time = cstr(spec.time())?;
    let names = spec
        .values()
        .iter()
        .map(|v| cstr(v))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let cells = cells(spec, slots, window)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        let t = cells[i].0;
        let mut j = i;
        while j < cells.len() && cells[j].0 == t {
            j += 1;
        }
        if t >= from && t < to {
            let mut d = RawDocumentBuf::new();
            for (k, v) in &keys {
                d.append(*k, *v);
            }
            d.append(time, DateTime::from_millis(t));
            for (_, field, v) in &cells[i..j] {
                d.append(names[*field], *v);
            }
            out.push(bson::deserialize_from_slice::<M>(d.as_bytes()).map_err(Error::from));
        }
        i = j;
    }
    Ok(out)
}

/// A numeric value as `Bson`, for the accumulators.
fn numeric(v: RawBsonRef<'_>) -> Option<Bson> {
    match v {
        RawBsonRef::Int32(n) => Some(Bson::Int32(n)),
        RawBsonRef::Int64(n) => Some(Bson::Int64(n)),
        RawBsonRef::Double(n) => Some(Bson::Double(n)),
        _ => None,
    }
}

/// A running min, max and sum of BSON numbers, as the server's accumulators keep them: sums exact
/// in integers, a double from the first double on.
#[derive(Default)]
struct Acc {
    min: Option<Bson>,
    max: Option<Bson>,
    int: Option<i64>,
    float: f64,
    any_float: bool,
    any_int64: bool,
    overflow: bool,
}

impl Acc {
    fn add(&mut self, v: &Bson) {
        let Some(x) = number(v) else {
            return;
        };
        if self.min.as_ref().and_then(number).is_none_or(|m| x < m) {
            self.min = Some(v.clone());
        }
        if self.max.as_ref().and_then(number).is_none_or(|m| x > m) {
            self.max = Some(v.clone());
        }
        self.float += x;
        match v {
            Bson::Int32(n) => self.add_int(i64::from(*n)),
            Bson::Int64(n) => {
                self.any_int64 = true;
                self.add_int(*n);
            }
            _ => self.any_float = true,
        }
    }

    fn add_int(&mut self, n: i64) {
        match self.int.unwrap_or(0).checked_add(n) {
            Some(s) => self.int = Some(s),
            None => self.overflow = true,
        }
    }

    fn sum(&self) -> Bson {
        match (self.any_float || self.overflow, self.int) {
            (false, Some(n)) if !self.any_int64 => small_int(n),
            (false, Some(n)) => Bson::Int64(n),
            (false, None) => Bson::Int32(0),
            (true, _) => Bson::Double(self.float),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_paths() {
        let flat = Slots {
            span: 3_600_000,
            slot: 1000,
            per_nest: None,
        };
        assert_eq!(flat.path("speed", 3599), "speed.3599");
        let nested = Slots {
            per_nest: Some(60),
            ..flat
        };
        assert_eq!(nested.path("speed", 3599), "speed.59.59");
        assert_eq!(nested.path("speed", 61), "speed.1.1");
        assert_eq!(nested.slot(0, DateTime::from_millis(61_000)), Ok(61));
        assert!(nested.slot(0, DateTime::from_millis(61_500)).is_err());
    }

    #[test]
    fn sums_as_the_server_keeps_them() {
        let mut a = Acc::default();
        a.add(&Bson::Int32(2));
        a.add(&Bson::Int64(3));
        assert_eq!(a.sum(), Bson::Int64(5));
        a.add(&Bson::Double(0.5));
        assert_eq!(a.sum(), Bson::Double(5.5));
        assert_eq!(a.min, Some(Bson::Double(0.5)));
        assert_eq!(a.max, Some(Bson::Int64(3)));
    }
}

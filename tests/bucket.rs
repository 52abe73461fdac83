//! The bucket pattern against a real server: IoT readings bucketed per device and hour (seed
//! 001, 5.2), out-of-order data, summaries, concurrent writers, and the same struct stored in a
//! native time-series collection.

use std::collections::{BTreeMap, HashSet};

use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{sync::list_indexes, Error, Measurement};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

const HOUR: i64 = 3_600_000;
/// The start of an hour a day ago (recent: the buckets' 30-day TTL would delete the seed's 2023
/// hours while a test runs).
fn t0() -> i64 {
    static T0: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *T0.get_or_init(|| (DateTime::now().timestamp_millis() / HOUR - 24) * HOUR)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    collection = "sensor_data",
    key = device_id,
    time = timestamp,
    max_count = 200,
    span = "1h",
    summary(value(min, max, sum), seq(sum)),
    expire_after = "30d"
)]
struct Reading {
    device_id: String,
    timestamp: DateTime,
    value: f64,
    seq: i64,
    unit: String,
}

/// The same readings, in a native time-series collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(native, collection = "sensor_ts", key = device_id, time = timestamp, granularity = "minutes", summary(value(min, max, sum)))]
struct NativeReading {
    device_id: String,
    timestamp: DateTime,
    value: f64,
    seq: i64,
    unit: String,
}

/// Out of order and late: 10:30, 10:05, 11:10, 09:59:59.999, 10:00 (with t0 = 10:00).
fn out_of_order_times() -> [i64; 5] {
    [
        t0() + HOUR / 2,
        t0() + 300_000,
        t0() + HOUR + 600_000,
        t0() - 1,
        t0(),
    ]
}

fn reading(device: &str, ms: i64, seq: i64) -> Reading {
    Reading {
        device_id: device.to_owned(),
        timestamp: DateTime::from_millis(ms),
        value: (seq % 97) as f64 / 4.0,
        seq,
        unit: "°C".to_owned(),
    }
}

async fn buckets(db: &mongodb::Database) -> Vec<Document> {
    db.collection::<Document>("sensor_data")
        .find(doc! {})
        .sort(doc! { "deviceId": 1, "start": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test]
async fn one_insert_is_one_upsert_into_the_aligned_window() {
    let db = test_db("bucket_insert").await;
    let series = Reading::series(&db);
    let times = out_of_order_times();
    for (i, t) in times.iter().enumerate() {
        series
            .insert(&reading("sensor-001", *t, i as i64))
            .await
            .unwrap();
    }
    let all = buckets(&db).await;
    let windows: Vec<(i64, i64, i32)> = all
        .iter()
        .map(|b| {
            (
                b.get_datetime("start").unwrap().timestamp_millis(),
                b.get_datetime("end").unwrap().timestamp_millis(),
                b.get_i32("count").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        windows,
        vec![
            (t0() - HOUR, t0(), 1),
            (t0(), t0() + HOUR, 3),
            (t0() + HOUR, t0() + 2 * HOUR, 1)
        ]
    );
    let ten = &all[1];
    assert_eq!(ten.get_datetime("first").unwrap().timestamp_millis(), t0());
    assert_eq!(
        ten.get_datetime("last").unwrap().timestamp_millis(),
        t0() + HOUR / 2
    );
    assert_eq!(ten.get_str("deviceId").unwrap(), "sensor-001");
    // The measurements are stored without their key.
    let m = ten.get_array("measurements").unwrap();
    assert_eq!(m.len(), 3);
    assert!(m
        .iter()
        .all(|e| e.as_document().is_some_and(|d| !d.contains_key("deviceId"))));
    let summary = ten.get_document("summary").unwrap();
    assert_eq!(
        summary.get_document("seq").unwrap().get("sum"),
        Some(&Bson::Int64(1 + 4))
    );
    assert!(summary.get_document("value").unwrap().contains_key("min"));

    // range returns them in time order, with the key back.
    let got: Vec<Reading> = series
        .range(
            "sensor-001",
            DateTime::from_millis(t0() - HOUR),
            DateTime::from_millis(t0() + 2 * HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut sorted = times.to_vec();
    sorted.sort();
    assert_eq!(
        got.iter()
            .map(|r| r.timestamp.timestamp_millis())
            .collect::<Vec<_>>(),
        sorted
    );
    assert!(got.iter().all(|r| r.device_id == "sensor-001"));
}

/// Spreads `n` readings of `keys` devices over `hours` hours, shuffled (deterministically).
fn scattered(n: usize, keys: usize, hours: i64, first_seq: i64) -> Vec<Reading> {
    let mut out: Vec<Reading> = (0..n)
        .map(|i| {
            let seq = first_seq + i as i64;
            // A pseudo-random time in the span, from the sequence number.
            let t = t0() + (seq.wrapping_mul(2_654_435_761) % (hours * HOUR)).abs();
            reading(&format!("sensor-{:03}", i % keys), t, seq)
        })
        .collect();
    // Out of order: reverse every other chunk.
    for chunk in out.chunks_mut(7).step_by(2) {
        chunk.reverse();
    }
    out
}

async fn read_all(
    series: &pattern_runtime::Series<Reading>,
    device: &str,
    from: i64,
    to: i64,
) -> Vec<Reading> {
    series
        .range(
            device.to_owned(),
            DateTime::from_millis(from),
            DateTime::from_millis(to),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_overfill_a_bucket_and_lose_nothing() {
    let db = test_db("bucket_concurrent").await;
    pattern_runtime::sync(&db).await.unwrap();
    let series = Reading::series(&db);
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let series = series.clone();
            tokio::spawn(async move {
                // 8 x 150 over 3 devices x 1 hour: about 400 per window, twice a bucket's
                // 200, so every window fills at least two buckets.
                for r in scattered(150, 3, 1, task * 1000) {
                    series.insert(&r).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let all = buckets(&db).await;
    let total: i64 = all
        .iter()
        .map(|b| i64::from(b.get_i32("count").unwrap()))
        .sum();
    assert_eq!(total, 1200, "sum of bucket counts");
    assert!(
        all.len() >= 6,
        "{} buckets for 3 windows of about 400: a window did not fill two",
        all.len()
    );
    for b in &all {
        let count = b.get_i32("count").unwrap();
        assert!(count <= 200, "a bucket holds {count} > 200 measurements");
        assert_eq!(b.get_array("measurements").unwrap().len(), count as usize);
        let start = b.get_datetime("start").unwrap().timestamp_millis();
        assert_eq!(start % HOUR, 0, "windows are aligned to the hour");
        for m in b.get_array("measurements").unwrap() {
            let t = m
                .as_document()
                .unwrap()
                .get_datetime("timestamp")
                .unwrap()
                .timestamp_millis();
            assert!(
                (start..start + HOUR).contains(&t),
                "a measurement outside its window"
            );
        }
    }
    // Every measurement comes back from `range` exactly once, in time order.
    let mut seen = HashSet::new();
    for k in 0..3 {
        let device = format!("sensor-{k:03}");
        let got = read_all(&series, &device, t0() - HOUR, t0() + 7 * HOUR).await;
        assert!(
            got.windows(2).all(|w| w[0].timestamp <= w[1].timestamp),
            "range is in time order"
        );
        for r in got {
            assert_eq!(r.device_id, device);
            assert!(seen.insert(r.seq), "measurement {} returned twice", r.seq);
        }
    }
    assert_eq!(seen.len(), 1200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_batches_never_overfill_a_bucket() {
    let db = test_db("bucket_concurrent_batches").await;
    let series = Reading::series(&db);
    let tasks: Vec<_> = (0..4)
        .map(|task| {
            let series = series.clone();
            tokio::spawn(async move {
                let all = scattered(1500, 3, 2, task * 1500);
                for batch in all.chunks(250) {
                    series.insert_many(batch).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let all = buckets(&db).await;
    let total: i64 = all
        .iter()
        .map(|b| i64::from(b.get_i32("count").unwrap()))
        .sum();
    assert_eq!(total, 6000);
    assert!(all.iter().all(|b| b.get_i32("count").unwrap() <= 200));
    let mut seen = HashSet::new();
    for k in 0..3 {
        for r in read_all(&series, &format!("sensor-{k:03}"), t0(), t0() + 2 * HOUR).await {
            assert!(seen.insert(r.seq));
        }
    }
    assert_eq!(seen.len(), 6000);
}

#[tokio::test]
async fn insert_many_sends_one_write_per_group_chunk() {
    let db = test_db("bucket_insert_many").await;
    let series = Reading::series(&db);
    // 450 readings of one device in one hour, 30 of another, 10 of the first in the next hour.
    let mut batch: Vec<Reading> = (0..450).map(|i| reading("a", t0() + i * 1000, i)).collect();
    batch.extend((0..30).map(|i| reading("b", t0() + i * 1000, 1000 + i)));
    batch.extend((0..10).map(|i| reading("a", t0() + HOUR + i, 2000 + i)));
    let report = series.insert_many(&batch).await.unwrap();
    assert_eq!(report.measurements, 490);
    // a/10h: 200 + 200 + 50; b/10h: 30; a/11h: 10.
    assert_eq!(report.writes, 5);
    assert_eq!(report.new_buckets, 5);
    let counts: Vec<(String, i64, i32)> = buckets(&db)
        .await
        .iter()
        .map(|b| {
            (
                b.get_str("deviceId").unwrap().to_owned(),
                b.get_datetime("start").unwrap().timestamp_millis() - t0(),
                b.get_i32("count").unwrap(),
            )
        })
        .collect();
    let mut counts = counts;
    counts.sort();
    assert_eq!(
        counts,
        vec![
            ("a".into(), 0, 50),
            ("a".into(), 0, 200),
            ("a".into(), 0, 200),
            ("a".into(), HOUR, 10),
            ("b".into(), 0, 30)
        ]
    );
    // A small batch tops up a bucket with room instead of opening one.
    let more: Vec<Reading> = (0..20)
        .map(|i| reading("b", t0() + 500_000 + i, 3000 + i))
        .collect();
    let report = series.insert_many(&more).await.unwrap();
    assert_eq!((report.writes, report.new_buckets), (1, 0));
    let got = read_all(&series, "b", t0(), t0() + HOUR).await;
    assert_eq!(got.len(), 50);
    assert_eq!(series.insert_many(&[]).await.unwrap().writes, 0);
}

/// min, max, sum and count of `seq` and `value` over `[from, to)`, from the raw readings.
fn expected(readings: &[Reading], device: &str, from: i64, to: i64) -> (u64, f64, f64, f64, i64) {
    let sel: Vec<&Reading> = readings
        .iter()
        .filter(|r| r.device_id == device)
        .filter(|r| (from..to).contains(&r.timestamp.timestamp_millis()))
        .collect();
    (
        sel.len() as u64,
        sel.iter().map(|r| r.value).fold(f64::INFINITY, f64::min),
        sel.iter()
            .map(|r| r.value)
            .fold(f64::NEG_INFINITY, f64::max),
        sel.iter().map(|r| r.value).sum(),
        sel.iter().map(|r| r.seq).sum(),
    )
}

#[tokio::test]
async fn summary_equals_the_raw_measurements_and_uses_stored_summaries_inside() {
    let db = test_db("bucket_summary").await;
    let series = Reading::series(&db);
    let readings = scattered(3000, 2, 5, 0);
    for batch in readings.chunks(300) {
        series.insert_many(batch).await.unwrap();
    }
    // Ranges cutting windows in the middle, whole windows, and nothing at all.
    let ranges = [
        (t0() + HOUR / 3, t0() + 4 * HOUR + 123_456),
        (t0(), t0() + 5 * HOUR),
        (t0() + HOUR, t0() + 2 * HOUR),
        (t0() + 10 * HOUR, t0() + 11 * HOUR),
    ];
    for (from, to) in ranges {
        let s = series
            .summary(
                "sensor-001",
                DateTime::from_millis(from),
                DateTime::from_millis(to),
            )
            .await
            .unwrap();
        let (count, min, max, sum, seq_sum) = expected(&readings, "sensor-001", from, to);
        assert_eq!(s.count(), count, "count over {from}..{to}");
        if count == 0 {
            assert_eq!(s.min(Reading::FIELDS.value).unwrap(), None);
            assert_eq!(s.sum(Reading::FIELDS.seq).unwrap(), None);
            assert_eq!(s.first(), None);
            continue;
        }
        assert_eq!(s.min(Reading::FIELDS.value).unwrap(), Some(min));
        assert_eq!(s.max(Reading::FIELDS.value).unwrap(), Some(max));
        // Quarters: every partial sum is exact in f64.
        assert_eq!(s.sum(Reading::FIELDS.value).unwrap(), Some(sum));
        assert_eq!(s.sum(Reading::FIELDS.seq).unwrap(), Some(seq_sum));
        let times: Vec<i64> = readings
            .iter()
            .filter(|r| r.device_id == "sensor-001")
            .map(|r| r.timestamp.timestamp_millis())
            .filter(|t| (from..to).contains(t))
            .collect();
        assert_eq!(
            s.first().map(|t| t.timestamp_millis()),
            times.iter().min().copied()
        );
        assert_eq!(
            s.last().map(|t| t.timestamp_millis()),
            times.iter().max().copied()
        );
        // An undeclared summary is an error, not a silent `None`: it does not apply to this
        // series as declared.
        assert!(matches!(
            s.max(Reading::FIELDS.seq),
            Err(Error::Unsupported { .. })
        ));
    }

    // A bucket wholly inside the range contributes its stored summary (no unwinding): change
    // one stored sum and the summary follows it; a range cutting that bucket does not.
    let buckets = db.collection::<Document>("sensor_data");
    let inside = doc! { "deviceId": "sensor-001", "start": DateTime::from_millis(t0() + HOUR) };
    let before = buckets.find_one(inside.clone()).await.unwrap().unwrap();
    buckets
        .update_one(
            before.clone(),
            doc! { "$inc": { "summary.seq.sum": 1_000_000_i64 } },
        )
        .await
        .unwrap();
    let whole = series
        .summary(
            "sensor-001",
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + 5 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(
        whole.sum(Reading::FIELDS.seq).unwrap(),
        Some(expected(&readings, "sensor-001", t0(), t0() + 5 * HOUR).4 + 1_000_000)
    );
    let first = before.get_datetime("first").unwrap().timestamp_millis();
    let cut = series
        .summary(
            "sensor-001",
            DateTime::from_millis(first + 1),
            DateTime::from_millis(t0() + 5 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(
        cut.sum(Reading::FIELDS.seq).unwrap(),
        Some(expected(&readings, "sensor-001", first + 1, t0() + 5 * HOUR).4)
    );
}

#[tokio::test]
async fn range_is_half_open_and_filters_on_the_server() {
    let db = test_db("bucket_range").await;
    let series = Reading::series(&db);
    let batch: Vec<Reading> = (0..120)
        .map(|i| reading("a", t0() + i * 60_000, i))
        .collect();
    series.insert_many(&batch).await.unwrap();
    let got = read_all(&series, "a", t0() + 30 * 60_000, t0() + 90 * 60_000).await;
    let seqs: Vec<i64> = got.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (30..90).collect::<Vec<_>>());
    assert!(read_all(&series, "b", t0(), t0() + 2 * HOUR)
        .await
        .is_empty());
    assert!(read_all(&series, "a", t0() + 5 * HOUR, t0() + 6 * HOUR)
        .await
        .is_empty());
}

#[tokio::test]
async fn sync_creates_the_bucket_indexes() {
    let db = test_db("bucket_indexes").await;
    let report = pattern_runtime::sync(&db).await.unwrap();
    assert!(report.indexes.iter().any(|i| i.collection == "sensor_data"));
    let indexes = list_indexes(&db, "sensor_data").await.unwrap();
    let by_name: BTreeMap<String, &Document> = indexes
        .iter()
        .map(|d| (d.get_str("name").unwrap().to_owned(), d))
        .collect();
    let key = by_name["deviceId_1_start_1"];
    assert_eq!(
        key.get_document("key").unwrap(),
        &doc! { "deviceId": 1, "start": 1 }
    );
    let ttl = by_name["end_1"];
    assert_eq!(ttl.get_document("key").unwrap(), &doc! { "end": 1 });
    assert_eq!(
        ttl.get("expireAfterSeconds").map(|v| match v {
            Bson::Int32(n) => i64::from(*n),
            Bson::Int64(n) => *n,
            Bson::Double(n) => *n as i64,
            _ => -1,
        }),
        Some(30 * 86_400)
    );
    // Again: nothing to do.
    let again = pattern_runtime::sync(&db).await.unwrap();
    assert!(again
        .indexes
        .iter()
        .all(|i| i.status == pattern_runtime::sync::IndexStatus::InSync
            || i.collection != "sensor_data"));
}

#[tokio::test]
async fn bad_input_is_a_typed_error_before_anything_is_written() {
    let db = test_db("bucket_bad_input").await;
    let series = Reading::series(&db);
    let mut big = reading("a", t0(), 1);
    big.unit = "x".repeat(17 * 1024 * 1024);
    let err = series.insert(&big).await.unwrap_err();
    assert!(
        matches!(err, Error::DocumentTooLarge { size: Some(_), .. }),
        "{err}"
    );
    let err = series
        .insert_many(&[reading("a", t0(), 2), big])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DocumentTooLarge { .. }), "{err}");
    assert!(buckets(&db).await.is_empty(), "nothing was written");
}

/// Two key fields (the seed's highway segment and lane); the key is a tuple.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(key(seg_id, lane), time = ts, max_count = 60, span = "1m", summary(speed(sum)))]
struct Speed {
    seg_id: String,
    lane: i32,
    ts: DateTime,
    speed: i32,
}

#[tokio::test]
async fn several_key_fields() {
    let db = test_db("bucket_keys").await;
    assert_eq!(Speed::SERIES.collection(), "speed_buckets");
    let series = Speed::series(&db);
    let batch: Vec<Speed> = (0..180)
        .map(|i| Speed {
            seg_id: "I80_mile23".into(),
            lane: i % 2,
            ts: DateTime::from_millis(t0() + i64::from(i) * 1000),
            speed: 40 + i % 30,
        })
        .collect();
    let report = series.insert_many(&batch).await.unwrap();
    // Two lanes x three minutes, 30 readings each.
    assert_eq!(report.writes, 6);
    let lane1: Vec<Speed> = series
        .range(
            ("I80_mile23".to_owned(), 1),
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(lane1.len(), 90);
    assert!(lane1
        .iter()
        .all(|s| s.lane == 1 && s.seg_id == "I80_mile23"));
    let s = series
        .summary(
            ("I80_mile23".to_owned(), 0),
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + 60_000),
        )
        .await
        .unwrap();
    let expected: i32 = batch
        .iter()
        .filter(|s| s.lane == 0 && s.ts.timestamp_millis() < t0() + 60_000)
        .map(|s| s.speed)
        .sum();
    assert_eq!(s.sum(Speed::FIELDS.speed).unwrap(), Some(expected));
    assert_eq!(s.count(), 30);
}

fn native(device: &str, ms: i64, seq: i64) -> NativeReading {
    let r = reading(device, ms, seq);
    NativeReading {
        device_id: r.device_id,
        timestamp: r.timestamp,
        value: r.value,
        seq,
        unit: r.unit,
    }
}

#[tokio::test]
async fn native_time_series_collection() {
    let db = test_db("bucket_native").await;
    pattern_runtime::sync(&db).await.unwrap();
    let specs: Vec<_> = db
        .list_collections()
        .filter(doc! { "name": "sensor_ts" })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let ts = specs[0]
        .options
        .timeseries
        .as_ref()
        .expect("a time-series collection");
    assert_eq!(ts.time_field, "timestamp");
    assert_eq!(ts.meta_field.as_deref(), Some("deviceId"));
    // Syncing again finds it as declared.
    pattern_runtime::sync(&db).await.unwrap();

    let series = NativeReading::series(&db);
    let times = out_of_order_times();
    for (i, t) in times.iter().enumerate() {
        series
            .insert(&native("sensor-001", *t, i as i64))
            .await
            .unwrap();
    }
    let batch: Vec<NativeReading> = (0..500)
        .map(|i| native(&format!("sensor-{:03}", i % 5), t0() + i * 7_000, 100 + i))
        .collect();
    let report = series.insert_many(&batch).await.unwrap();
    assert_eq!(report.measurements, 500);
    let got: Vec<NativeReading> = series
        .range(
            "sensor-001",
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut want: Vec<i64> = times
        .iter()
        .copied()
        .filter(|t| (t0()..t0() + HOUR).contains(t))
        .collect();
    want.extend(
        batch
            .iter()
            .filter(|r| r.device_id == "sensor-001")
            .map(|r| r.timestamp.timestamp_millis())
            .filter(|t| (t0()..t0() + HOUR).contains(t)),
    );
    want.sort();
    assert_eq!(
        got.iter()
            .map(|r| r.timestamp.timestamp_millis())
            .collect::<Vec<_>>(),
        want
    );
    let s = series
        .summary(
            "sensor-001",
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + HOUR),
        )
        .await
        .unwrap();
    assert_eq!(s.count(), want.len() as u64);
    let values: Vec<f64> = got.iter().map(|r| r.value).collect();
    assert_eq!(
        s.max(NativeReading::FIELDS.value).unwrap(),
        values.iter().copied().reduce(f64::max)
    );
    assert_eq!(
        s.sum(NativeReading::FIELDS.value).unwrap(),
        Some(values.iter().sum())
    );
}

#[tokio::test]
async fn a_normal_collection_is_not_silently_used_for_a_native_series() {
    let db = test_db("bucket_native_conflict").await;
    db.collection::<Document>("sensor_ts")
        .insert_one(doc! { "x": 1 })
        .await
        .unwrap();
    let err = pattern_runtime::sync(&db).await.unwrap_err();
    assert!(
        matches!(&err, Error::CollectionConflict { collection, .. } if collection == "sensor_ts"),
        "{err}"
    );
    let err = NativeReading::series(&db)
        .insert(&native("a", t0(), 1))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::CollectionConflict { .. }), "{err}");
    assert_eq!(
        db.collection::<Document>("sensor_ts")
            .count_documents(doc! {})
            .await
            .unwrap(),
        1
    );

    // A time-series collection with another time field is refused as well.
    let db = test_db("bucket_native_options").await;
    db.create_collection("sensor_ts")
        .timeseries(
            mongodb::options::TimeseriesOptions::builder()
                .time_field("ts".to_owned())
                .meta_field(Some("deviceId".to_owned()))
                .build(),
        )
        .await
        .unwrap();
    let err = NativeReading::series(&db)
        .insert(&native("a", t0(), 1))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::CollectionConflict { reason, .. } if reason.contains("timeField")),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// The highway case (seed 004, 物联网时序数据库建模): the same speed events in every layout.
// ---------------------------------------------------------------------------------------------

/// One speed event of a road segment, declared once per layout.
macro_rules! speed_event {
    ($(#[$doc:meta])* $name:ident, $($layout:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
        #[serde(rename_all = "camelCase")]
        #[bucket(key = seg_id, time = ts, $($layout)*)]
        struct $name {
            seg_id: String,
            ts: DateTime,
            speed: i32,
        }
    };
}

speed_event!(
    /// (b) one document per minute holding only `speed_num` and `speed_sum`.
    SpeedMinuteSums, rollup, collection = "speed_minute_sums", span = "1m", summary(speed(sum))
);
speed_event!(
    /// (b) with every summary, for comparing summaries across layouts.
    SpeedMinuteRollup, rollup, collection = "speed_minute_rollup", span = "1m", summary(speed(min, max, sum))
);
speed_event!(
    /// (c) one document per minute, the seconds as keys.
    SpeedMinuteSlots, slots = "1s", collection = "speed_minute_slots", span = "1m", summary(speed(min, max, sum))
);
speed_event!(
    /// (d) one document per hour, 3 600 keys.
    SpeedHourSlots, slots = "1s", collection = "speed_hour_slots", span = "1h", summary(speed(min, max, sum))
);
speed_event!(
    /// (e) one document per hour, 60 minutes of 60 seconds.
    SpeedHourNested, slots = "1s", nest = "1m", collection = "speed_hour_nested", span = "1h", summary(speed(min, max, sum))
);
speed_event!(
    /// The array buckets, for comparison.
    SpeedBuckets, collection = "speed_buckets", max_count = 200, span = "1h", summary(speed(min, max, sum))
);
speed_event!(
    /// A native time-series collection, for comparison.
    SpeedNative, native, collection = "speed_native", granularity = "seconds", summary(speed(min, max, sum))
);

/// 2013-10-16T22:00:00-05:00, the hour of the seed's documents.
const SEED_HOUR: i64 = 1_381_978_800_000;
const SEG: &str = "I80_mile23";

/// The speed at second `i` of the seed's hour; the seed's own values where it gives them.
fn seed_speed(i: i64) -> i32 {
    match i {
        420 => 63, // 22:07:00, the minute document's `0: 63`
        421 => 58,
        478 => 66,
        479 => 64,
        3598 => 54,
        3599 => 55,
        _ => 40 + ((i * 37) % 31) as i32,
    }
}

/// The same event in every layout's struct.
macro_rules! events {
    ($ty:ident, $list:expr) => {
        $list
            .iter()
            .map(|(seg, ms, speed): &(String, i64, i32)| $ty {
                seg_id: seg.clone(),
                ts: DateTime::from_millis(*ms),
                speed: *speed,
            })
            .collect::<Vec<$ty>>()
    };
}

async fn stored(db: &mongodb::Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .projection(doc! { "_id": 0 })
        .sort(doc! { "ts": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_seeds_layouts_are_stored_as_the_seed_shows_them() {
    let db = test_db("bucket_seed_layouts").await;
    pattern_runtime::sync(&db).await.unwrap();
    let hour: Vec<(String, i64, i32)> = (0..3600)
        .map(|i| (SEG.to_owned(), SEED_HOUR + i * 1000, seed_speed(i)))
        .collect();
    let minute = &hour[420..480]; // 22:07

    // (b): one at a time, as the seed's updates.
    let sums = SpeedMinuteSums::series(&db);
    for e in events!(SpeedMinuteSums, minute) {
        sums.insert(&e).await.unwrap();
    }
    let minute_sum: i32 = minute.iter().map(|e| e.2).sum();
    assert_eq!(
        stored(&db, "speed_minute_sums").await,
        vec![doc! {
            "segId": SEG,
            "ts": DateTime::from_millis(SEED_HOUR + 7 * 60_000),
            "speed_num": 60,
            "speed_sum": minute_sum,
        }]
    );

    // (c): the minute's seconds as keys.
    let slots = SpeedMinuteSlots::series(&db);
    let report = slots
        .insert_many(&events!(SpeedMinuteSlots, minute))
        .await
        .unwrap();
    assert_eq!(
        (report.measurements, report.writes, report.new_buckets),
        (60, 1, 1)
    );
    let mut seconds = Document::new();
    for (i, e) in minute.iter().enumerate() {
        seconds.insert(i.to_string(), e.2);
    }
    assert_eq!(seconds.get_i32("0").unwrap(), 63);
    assert_eq!(seconds.get_i32("59").unwrap(), 64);
    let c = stored(&db, "speed_minute_slots").await;
    assert_eq!(
        c,
        vec![
            doc! { "segId": SEG, "ts": DateTime::from_millis(SEED_HOUR + 7 * 60_000), "speed": seconds }
        ]
    );

    // (d): 3 600 keys in one document.
    let hourly = SpeedHourSlots::series(&db);
    for chunk in events!(SpeedHourSlots, hour).chunks(1000) {
        hourly.insert_many(chunk).await.unwrap();
    }
    let mut all = Document::new();
    for (i, e) in hour.iter().enumerate() {
        all.insert(i.to_string(), e.2);
    }
    let d = stored(&db, "speed_hour_slots").await;
    assert_eq!(
        d,
        vec![doc! { "segId": SEG, "ts": DateTime::from_millis(SEED_HOUR), "speed": all }]
    );
    assert_eq!(
        d[0].get_document("speed").unwrap().get_i32("3599").unwrap(),
        55
    );

    // (e): 60 minutes of 60 seconds.
    let nested = SpeedHourNested::series(&db);
    nested
        .insert_many(&events!(SpeedHourNested, hour))
        .await
        .unwrap();
    let mut minutes = Document::new();
    for m in 0..60 {
        let mut inner = Document::new();
        for s in 0..60 {
            inner.insert(s.to_string(), hour[m * 60 + s].2);
        }
        minutes.insert(m.to_string(), inner);
    }
    let e = stored(&db, "speed_hour_nested").await;
    assert_eq!(
        e,
        vec![doc! { "segId": SEG, "ts": DateTime::from_millis(SEED_HOUR), "speed": minutes }]
    );

    // Each reads back as the events it was given.
    let from = DateTime::from_millis(SEED_HOUR);
    let to = DateTime::from_millis(SEED_HOUR + HOUR);
    let back: Vec<SpeedHourNested> = nested
        .range(SEG, from, to)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, events!(SpeedHourNested, hour));
    let back: Vec<SpeedHourSlots> = hourly
        .range(SEG, from, to)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, events!(SpeedHourSlots, hour));
    let back: Vec<SpeedMinuteSlots> = slots
        .range(SEG, from, to)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, events!(SpeedMinuteSlots, minute));

    // The unique `{segId, ts}` index the upserts rely on, and nothing else.
    let indexes = list_indexes(&db, "speed_hour_nested").await.unwrap();
    let names: Vec<&str> = indexes.iter().map(|i| i.get_str("name").unwrap()).collect();
    assert_eq!(names, ["_id_", "segId_1_ts_1"]);
    assert_eq!(indexes[1].get("unique"), Some(&Bson::Boolean(true)));
}

/// `n_segs` segments over `hours` hours from the seed's hour, one event per second with every
/// 7th second of a segment missing (so slots are sparse), interleaved, in time order.
fn highway(n_segs: usize, hours: i64, step_secs: usize) -> Vec<(String, i64, i32)> {
    let mut out = Vec::new();
    for i in (0..hours * 3600).step_by(step_secs) {
        for s in 0..n_segs {
            if (i + s as i64) % 7 == 3 {
                continue;
            }
            let speed = 30 + ((i * 13 + s as i64 * 101) % 61) as i32;
            out.push((format!("I80_mile{}", 20 + s), SEED_HOUR + i * 1000, speed));
        }
    }
    out
}

#[tokio::test]
async fn every_layout_reads_back_and_summarises_the_same_events() {
    let db = test_db("bucket_layouts_agree").await;
    pattern_runtime::sync(&db).await.unwrap();
    // One event every 5 s (less every 7th): sparse slots, still one inside the one-second range.
    let events = highway(2, 2, 5);
    for chunk in events.chunks(1000) {
        SpeedMinuteRollup::series(&db)
            .insert_many(&events!(SpeedMinuteRollup, chunk))
            .await
            .unwrap();
        SpeedMinuteSlots::series(&db)
            .insert_many(&events!(SpeedMinuteSlots, chunk))
            .await
            .unwrap();
        SpeedHourSlots::series(&db)
            .insert_many(&events!(SpeedHourSlots, chunk))
            .await
            .unwrap();
        SpeedHourNested::series(&db)
            .insert_many(&events!(SpeedHourNested, chunk))
            .await
            .unwrap();
        SpeedBuckets::series(&db)
            .insert_many(&events!(SpeedBuckets, chunk))
            .await
            .unwrap();
        SpeedNative::series(&db)
            .insert_many(&events!(SpeedNative, chunk))
            .await
            .unwrap();
    }
    // Whole hours, a range across window edges, one second, an empty range, and past the data.
    let ranges: [(i64, i64); 5] = [
        (0, 2 * HOUR),
        (13 * 60_000 + 7_000, HOUR + 47 * 60_000 + 31_500),
        (HOUR + 5_000, HOUR + 6_000),
        (HOUR, HOUR),
        (2 * HOUR - 60_000, 3 * HOUR),
    ];
    for seg in ["I80_mile20", "I80_mile21"] {
        for (a, b) in ranges {
            let (from, to) = (
                DateTime::from_millis(SEED_HOUR + a),
                DateTime::from_millis(SEED_HOUR + b),
            );
            let want: Vec<(String, i64, i32)> = events
                .iter()
                .filter(|e| e.0 == seg && e.1 >= SEED_HOUR + a && e.1 < SEED_HOUR + b)
                .cloned()
                .collect();
            macro_rules! same {
                ($ty:ident) => {{
                    let got: Vec<$ty> = $ty::series(&db)
                        .range(seg, from, to)
                        .await
                        .unwrap()
                        .try_collect()
                        .await
                        .unwrap();
                    assert_eq!(
                        got,
                        events!($ty, want),
                        "{} over [{a}, {b})",
                        stringify!($ty)
                    );
                    let s = $ty::series(&db).summary(seg, from, to).await.unwrap();
                    let f = $ty::FIELDS.speed;
                    (
                        s.count(),
                        s.min(f).unwrap(),
                        s.max(f).unwrap(),
                        s.sum(f).unwrap().map(i64::from),
                        s.first(),
                        s.last(),
                    )
                }};
            }
            let expected = (
                want.len() as u64,
                want.iter().map(|e| e.2).min(),
                want.iter().map(|e| e.2).max(),
                (!want.is_empty()).then(|| want.iter().map(|e| i64::from(e.2)).sum::<i64>()),
                want.first().map(|e| DateTime::from_millis(e.1)),
                want.last().map(|e| DateTime::from_millis(e.1)),
            );
            assert_eq!(
                same!(SpeedMinuteSlots),
                expected,
                "minute slots over [{a}, {b})"
            );
            assert_eq!(
                same!(SpeedHourSlots),
                expected,
                "hour slots over [{a}, {b})"
            );
            assert_eq!(
                same!(SpeedHourNested),
                expected,
                "nested slots over [{a}, {b})"
            );
            assert_eq!(same!(SpeedBuckets), expected, "buckets over [{a}, {b})");
            assert_eq!(same!(SpeedNative), expected, "native over [{a}, {b})");

            // The rollup answers ranges on minute boundaries, with no time below the minute.
            let rollup = SpeedMinuteRollup::series(&db).summary(seg, from, to).await;
            if a % 60_000 == 0 && b % 60_000 == 0 {
                let s = rollup.unwrap();
                let f = SpeedMinuteRollup::FIELDS.speed;
                assert_eq!(
                    (
                        s.count(),
                        s.min(f).unwrap(),
                        s.max(f).unwrap(),
                        s.sum(f).unwrap().map(i64::from),
                        s.first(),
                        s.last()
                    ),
                    (expected.0, expected.1, expected.2, expected.3, None, None),
                    "rollup over [{a}, {b})"
                );
            } else {
                assert!(
                    matches!(
                        rollup,
                        Err(Error::RangeNotAligned {
                            span_seconds: 60,
                            ..
                        })
                    ),
                    "rollup over [{a}, {b}): {rollup:?}"
                );
            }
        }
    }
    // Everything, from the earliest time to the latest a date can hold.
    for seg in ["I80_mile20", "I80_mile21"] {
        let n = events.iter().filter(|e| e.0 == seg).count();
        let (from, to) = (DateTime::MIN, DateTime::MAX);
        macro_rules! all {
            ($ty:ident) => {{
                let got: Vec<$ty> = $ty::series(&db)
                    .range(seg, from, to)
                    .await
                    .unwrap()
                    .try_collect()
                    .await
                    .unwrap();
                assert_eq!(got.len(), n, "{} over everything", stringify!($ty));
                assert_eq!(
                    $ty::series(&db)
                        .summary(seg, from, to)
                        .await
                        .unwrap()
                        .count(),
                    n as u64
                );
            }};
        }
        all!(SpeedMinuteSlots);
        all!(SpeedHourNested);
        all!(SpeedBuckets);
        all!(SpeedNative);
    }
    // The rollup's documents: one per segment and minute, 120 each.
    let minutes = db
        .collection::<Document>("speed_minute_rollup")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(minutes, 2 * 120);
    let hours = db
        .collection::<Document>("speed_hour_nested")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(hours, 2 * 2);
}

#[tokio::test]
async fn a_slot_sent_again_is_overwritten_and_a_time_between_slots_is_refused() {
    let db = test_db("bucket_slot_overwrite").await;
    pattern_runtime::sync(&db).await.unwrap();
    let series = SpeedHourNested::series(&db);
    let at = |ms: i64, speed: i32| SpeedHourNested {
        seg_id: SEG.to_owned(),
        ts: DateTime::from_millis(SEED_HOUR + ms),
        speed,
    };
    series.insert(&at(1000, 50)).await.unwrap();
    series.insert(&at(1000, 70)).await.unwrap();
    // In one batch, the last one of a slot wins, as over two writes.
    series
        .insert_many(&[at(2000, 1), at(2000, 2), at(3000, 3)])
        .await
        .unwrap();
    let from = DateTime::from_millis(SEED_HOUR);
    let to = DateTime::from_millis(SEED_HOUR + HOUR);
    let back: Vec<SpeedHourNested> = series
        .range(SEG, from, to)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, vec![at(1000, 70), at(2000, 2), at(3000, 3)]);
    let summary = series.summary(SEG, from, to).await.unwrap();
    assert_eq!(summary.count(), 3);
    assert_eq!(
        summary.sum(SpeedHourNested::FIELDS.speed).unwrap(),
        Some(75)
    );

    let before = stored(&db, "speed_hour_nested").await;
    let between = series.insert_many(&[at(4000, 4), at(4500, 5)]).await;
    assert!(
        matches!(&between, Err(Error::InvalidValue { field, .. }) if field == "ts"),
        "{between:?}"
    );
    assert_eq!(
        stored(&db, "speed_hour_nested").await,
        before,
        "nothing written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_the_same_windows_lose_nothing() {
    let db = test_db("bucket_layouts_concurrent").await;
    pattern_runtime::sync(&db).await.unwrap();
    // 8 writers, each owning every 8th second of two minutes, all opening the same windows at
    // once: one document per window survives the unique index, with every event in it.
    let events = highway(1, 1, 1)
        .into_iter()
        .filter(|e| e.1 < SEED_HOUR + 120_000)
        .collect::<Vec<_>>();
    let mut tasks = Vec::new();
    for w in 0..8 {
        let db = db.clone();
        let mine: Vec<(String, i64, i32)> = events.iter().skip(w).step_by(8).cloned().collect();
        tasks.push(tokio::spawn(async move {
            for (i, e) in mine.iter().enumerate() {
                if i % 2 == 0 {
                    SpeedMinuteRollup::series(&db)
                        .insert(&events!(SpeedMinuteRollup, [e.clone()])[0])
                        .await
                        .unwrap();
                    SpeedMinuteSlots::series(&db)
                        .insert(&events!(SpeedMinuteSlots, [e.clone()])[0])
                        .await
                        .unwrap();
                } else {
                    SpeedMinuteRollup::series(&db)
                        .insert_many(&events!(SpeedMinuteRollup, [e.clone()]))
                        .await
                        .unwrap();
                    SpeedMinuteSlots::series(&db)
                        .insert_many(&events!(SpeedMinuteSlots, [e.clone()]))
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let seg = "I80_mile20";
    let (from, to) = (
        DateTime::from_millis(SEED_HOUR),
        DateTime::from_millis(SEED_HOUR + 120_000),
    );
    let sum: i64 = events.iter().map(|e| i64::from(e.2)).sum();
    let rollup = SpeedMinuteRollup::series(&db)
        .summary(seg, from, to)
        .await
        .unwrap();
    assert_eq!(rollup.count(), events.len() as u64);
    assert_eq!(
        rollup
            .sum(SpeedMinuteRollup::FIELDS.speed)
            .unwrap()
            .map(i64::from),
        Some(sum)
    );
    let back: Vec<SpeedMinuteSlots> = SpeedMinuteSlots::series(&db)
        .range(seg, from, to)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, events!(SpeedMinuteSlots, events));
    for c in ["speed_minute_rollup", "speed_minute_slots"] {
        let n = db
            .collection::<Document>(c)
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(n, 2, "{c}: one document per minute");
    }
}

/// A rollup of two fields, one of them often absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(rollup, collection = "sparse_rollup", key = seg_id, time = ts, span = "1m", summary(temp(sum), speed(sum)))]
struct SparseRollup {
    seg_id: String,
    ts: DateTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp: Option<f64>,
    speed: i32,
}

/// Slots of a value that may be absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(slots = "1s", collection = "sparse_slots", key = seg_id, time = ts, span = "1m")]
struct SparseSlots {
    seg_id: String,
    ts: DateTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp: Option<f64>,
}

#[tokio::test]
async fn absent_values_neither_hide_other_sums_nor_vanish() {
    let db = test_db("bucket_sparse").await;
    pattern_runtime::sync(&db).await.unwrap();
    let at = |s: i64| DateTime::from_millis(SEED_HOUR + s * 1000);
    // `temp` is never measured: the rollup still counts and sums the speeds.
    let rollup = SparseRollup::series(&db);
    let events: Vec<SparseRollup> = (0..10)
        .map(|s| SparseRollup {
            seg_id: SEG.into(),
            ts: at(s),
            temp: None,
            speed: 50 + s as i32,
        })
        .collect();
    rollup.insert_many(&events).await.unwrap();
    let summary = rollup.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 10);
    assert_eq!(summary.sum(SparseRollup::FIELDS.speed).unwrap(), Some(545));
    assert_eq!(summary.sum(SparseRollup::FIELDS.temp).unwrap(), None);

    // A slot measurement with no value would leave no trace: refused, nothing written.
    let slots = SparseSlots::series(&db);
    slots
        .insert(&SparseSlots {
            seg_id: SEG.into(),
            ts: at(1),
            temp: Some(1.5),
        })
        .await
        .unwrap();
    let empty = SparseSlots {
        seg_id: SEG.into(),
        ts: at(2),
        temp: None,
    };
    let refused = slots.insert(&empty).await;
    assert!(
        matches!(refused, Err(Error::InvalidValue { .. })),
        "{refused:?}"
    );
    let back: Vec<SparseSlots> = slots
        .range(SEG, at(0), at(60))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        back,
        vec![SparseSlots {
            seg_id: SEG.into(),
            ts: at(1),
            temp: Some(1.5)
        }]
    );
}

/// A bucket over its cap (written by other code, 450 measurements for a cap of 200, newest
/// first) is split by `split_overfull` into 200 + 200 + 50, in time order, with counts, times
/// and summaries recomputed; four concurrent splits and a concurrent writer on the same window
/// lose and duplicate nothing, and exactly one split does the work.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_overfull_bucket_is_split_once_and_nothing_is_lost() {
    let db = test_db_unvalidated("bucket_split").await;
    pattern_runtime::sync(&db).await.unwrap();
    let series = Reading::series(&db);
    // A toolkit-written bucket of another device: left alone.
    for seq in 0..3 {
        series
            .insert(&reading("sensor-ok", t0() + seq * 1000, 10_000 + seq))
            .await
            .unwrap();
    }
    let over: Vec<Reading> = (0..450)
        .rev()
        .map(|i| reading("sensor-over", t0() + i * 7_000, i))
        .collect();
    let elements: Vec<Bson> = over
        .iter()
        .map(|r| {
            let mut d = bson::serialize_to_document(r).unwrap();
            d.remove("deviceId");
            Bson::Document(d)
        })
        .collect();
    let raw = db.collection::<Document>("sensor_data");
    raw.insert_one(doc! {
        "deviceId": "sensor-over",
        "start": DateTime::from_millis(t0()),
        "end": DateTime::from_millis(t0() + HOUR),
        "count": 450,
        "first": DateTime::from_millis(t0()),
        "last": DateTime::from_millis(t0() + 449 * 7_000),
        "measurements": elements,
        "summary": { "value": { "min": -1.0, "max": 1e9, "sum": 0.0 }, "seq": { "sum": 0 } },
    })
    .await
    .unwrap();

    let splitters: Vec<_> = (0..4)
        .map(|_| {
            let series = series.clone();
            tokio::spawn(async move { series.split_overfull().await.unwrap() })
        })
        .collect();
    let writer = {
        let series = series.clone();
        tokio::spawn(async move {
            for i in 0..100 {
                series
                    .insert(&reading("sensor-over", t0() + i * 7_000 + 1, 1_000 + i))
                    .await
                    .unwrap();
            }
        })
    };
    let mut split = (0, 0, 0);
    for s in splitters {
        let r = s.await.unwrap();
        assert!(r.left.is_empty(), "{r:?}");
        split = (
            split.0 + r.buckets,
            split.1 + r.new_buckets,
            split.2 + r.moved,
        );
    }
    writer.await.unwrap();
    assert_eq!(split, (1, 2, 250), "exactly one split did the work");

    let all = buckets(&db).await;
    let mut total = 0;
    for b in &all {
        let items = b.get_array("measurements").unwrap();
        let count = b.get_i32("count").unwrap();
        assert!(count <= 200, "a bucket holds {count} > 200 measurements");
        assert_eq!(items.len(), count as usize);
        total += items.len();
        let times: Vec<i64> = items
            .iter()
            .map(|m| {
                let d = m.as_document().unwrap();
                d.get_datetime("timestamp").unwrap().timestamp_millis()
            })
            .collect();
        let (first, last) = (*times.iter().min().unwrap(), *times.iter().max().unwrap());
        assert_eq!(b.get_datetime("first").unwrap().timestamp_millis(), first);
        assert_eq!(b.get_datetime("last").unwrap().timestamp_millis(), last);
        let values: Vec<f64> = items
            .iter()
            .map(|m| m.as_document().unwrap().get_f64("value").unwrap())
            .collect();
        let seqs: i64 = items
            .iter()
            .map(|m| m.as_document().unwrap().get_i64("seq").unwrap())
            .sum();
        let summary = b.get_document("summary").unwrap();
        let value = summary.get_document("value").unwrap();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(value.get_f64("min").unwrap(), min, "{b}");
        assert_eq!(value.get_f64("max").unwrap(), max, "{b}");
        assert!((value.get_f64("sum").unwrap() - values.iter().sum::<f64>()).abs() < 1e-6);
        assert_eq!(
            summary.get_document("seq").unwrap().get_i64("sum").unwrap(),
            seqs,
            "{b}"
        );
    }
    assert_eq!(total, 3 + 450 + 100, "every measurement is stored once");
    // The split bucket keeps its earliest 200 measurements, in time order.
    let kept = all
        .iter()
        .find(|b| {
            b.get_str("deviceId").unwrap() == "sensor-over" && b.get_i32("count").unwrap() == 200
        })
        .expect("a full bucket");
    assert!(kept.get_array("measurements").is_ok());
    let mut seen = HashSet::new();
    for r in read_all(&series, "sensor-over", t0(), t0() + HOUR).await {
        assert!(seen.insert(r.seq), "measurement {} returned twice", r.seq);
    }
    assert_eq!(seen.len(), 550);
    assert_eq!(
        read_all(&series, "sensor-ok", t0(), t0() + HOUR)
            .await
            .len(),
        3
    );

    // Nothing is over the cap any more: a second split finds nothing.
    let again = series.split_overfull().await.unwrap();
    assert_eq!((again.buckets, again.moved), (0, 0), "{again:?}");
}

/// A bucket over its cap whose measurements have no time cannot be placed: it is left as it is
/// and reported, and nothing is written.
#[tokio::test]
async fn an_overfull_bucket_without_times_is_left_and_reported() {
    let db = test_db_unvalidated("bucket_split_malformed").await;
    pattern_runtime::sync(&db).await.unwrap();
    let raw = db.collection::<Document>("sensor_data");
    let items: Vec<Bson> = (0..201)
        .map(|i| Bson::Document(doc! { "value": f64::from(i) }))
        .collect();
    raw.insert_one(doc! {
        "_id": 7, "deviceId": "x", "start": DateTime::from_millis(t0()),
        "count": 201, "measurements": items,
    })
    .await
    .unwrap();
    let report = Reading::series(&db).split_overfull().await.unwrap();
    assert_eq!(report.buckets, 0);
    assert_eq!(report.left.len(), 1, "{report:?}");
    assert_eq!(report.left[0].0, Bson::Int32(7));
    assert!(report.left[0].1.contains("timestamp"), "{report:?}");
    assert_eq!(
        raw.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing written"
    );
}

/// Large measurements: a bucket is full by bytes (half of 16 MiB) before its count, so a series
/// of 1 MiB readings opens new buckets instead of failing on 16 MiB for good.
#[tokio::test]
async fn large_measurements_open_new_buckets_instead_of_failing() {
    let db = test_db("bucket_large").await;
    let series = Reading::series(&db);
    let big = |i: i64| Reading {
        device_id: "big".into(),
        timestamp: DateTime::from_millis(t0() + i * 1000),
        value: i as f64,
        seq: i,
        unit: "x".repeat(1024 * 1024),
    };
    // One at a time, then a batch: 40 MiB into one window, 200 to a bucket by count.
    for i in 0..20 {
        series.insert(&big(i)).await.unwrap();
    }
    let batch: Vec<Reading> = (20..40).map(big).collect();
    series.insert_many(&batch).await.unwrap();
    let buckets: Vec<Document> = db
        .collection::<Document>("sensor_data")
        .find(doc! { "deviceId": "big" })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(buckets.len() >= 5, "{} buckets", buckets.len());
    let mut seen = Vec::new();
    for b in &buckets {
        let size = bson::RawDocumentBuf::try_from(b).unwrap().as_bytes().len();
        assert!(size <= 8 * 1024 * 1024 + 1024, "a bucket of {size} bytes");
        let m = b.get_array("measurements").unwrap();
        assert_eq!(b.get_i32("count").unwrap() as usize, m.len());
        seen.extend(
            m.iter()
                .map(|x| x.as_document().unwrap().get_i64("seq").unwrap()),
        );
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
    let read = series
        .range(
            "big".to_owned(),
            DateTime::from_millis(t0()),
            DateTime::from_millis(t0() + HOUR),
        )
        .await
        .unwrap();
    let read: Vec<Reading> = read.try_collect().await.unwrap();
    assert_eq!(read.len(), 40);
}

/// A series bound to a transaction reads in it: `range` and `summary` of array buckets, slots
/// and rollups see the measurements it recorded, which no handle outside it sees before the
/// commit.
#[tokio::test]
async fn a_bound_series_reads_its_transactions_writes() {
    let db = test_db("bucket_in_transaction").await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let (from, to) = (
        DateTime::from_millis(t0()),
        DateTime::from_millis(t0() + HOUR),
    );
    let readings = Reading::series(&db).in_transaction(&tx);
    let recorded = [reading("tx-1", t0() + 1000, 1), reading("tx-1", t0(), 2)];
    readings.insert(&recorded[0]).await.unwrap();
    readings.insert_many(&recorded[1..]).await.unwrap();
    let at = |s: i64| DateTime::from_millis(SEED_HOUR + s * 1000);
    let rollup = SparseRollup::series(&db).in_transaction(&tx);
    rollup
        .insert(&SparseRollup {
            seg_id: SEG.into(),
            ts: at(1),
            temp: None,
            speed: 50,
        })
        .await
        .unwrap();
    let slots = SparseSlots::series(&db).in_transaction(&tx);
    let slot = SparseSlots {
        seg_id: SEG.into(),
        ts: at(1),
        temp: Some(1.5),
    };
    slots.insert(&slot).await.unwrap();

    // Every read of the bound series sees the transaction's own measurements...
    let back = read_all(&readings, "tx-1", t0(), t0() + HOUR).await;
    assert_eq!(back, [recorded[1].clone(), recorded[0].clone()]);
    let summary = readings.summary("tx-1", from, to).await.unwrap();
    assert_eq!(summary.count(), 2);
    assert_eq!(summary.sum(Reading::FIELDS.seq).unwrap(), Some(3));
    let summary = rollup.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 1);
    assert_eq!(summary.sum(SparseRollup::FIELDS.speed).unwrap(), Some(50));
    let back: Vec<SparseSlots> = slots
        .range(SEG, at(0), at(60))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(back, std::slice::from_ref(&slot));
    assert_eq!(slots.summary(SEG, at(0), at(60)).await.unwrap().count(), 1);

    // ... which no handle outside it sees before the commit.
    let outside = Reading::series(&db);
    assert!(read_all(&outside, "tx-1", t0(), t0() + HOUR)
        .await
        .is_empty());
    assert_eq!(outside.summary("tx-1", from, to).await.unwrap().count(), 0);
    let rollup_outside = SparseRollup::series(&db);
    let summary = rollup_outside.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 0);
    let slots_outside = SparseSlots::series(&db);
    let summary = slots_outside.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 0);
    tx.commit().await.unwrap();
    assert_eq!(read_all(&outside, "tx-1", t0(), t0() + HOUR).await.len(), 2);
    assert_eq!(outside.summary("tx-1", from, to).await.unwrap().count(), 2);
    let summary = rollup_outside.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 1);
    let summary = slots_outside.summary(SEG, at(0), at(60)).await.unwrap();
    assert_eq!(summary.count(), 1);
}

//! The bucket pattern against a real server: IoT readings bucketed per device and hour (seed
//! 001, 5.2), out-of-order data, summaries, concurrent writers, and the same struct stored in a
//! native time-series collection.

use std::collections::HashMap;

use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{list_indexes, Error, Measurement, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

const HOUR: i64 = 3_600_000;
/// 2023-10-25T10:00:00Z, the seed's hour.
const T0: i64 = 1_698_228_000_000;

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
    // Out of order and late: 10:30, 10:05, 11:10, 09:59:59.999, 10:00.
    let times = [T0 + HOUR / 2, T0 + 300_000, T0 + HOUR + 600_000, T0 - 1, T0];
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
            (T0 - HOUR, T0, 1),
            (T0, T0 + HOUR, 3),
            (T0 + HOUR, T0 + 2 * HOUR, 1)
        ]
    );
    let ten = &all[1];
    assert_eq!(ten.get_datetime("first").unwrap().timestamp_millis(), T0);
    assert_eq!(
        ten.get_datetime("last").unwrap().timestamp_millis(),
        T0 + HOUR / 2
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
        Some(&Bson::Int64(0 + 1 + 4))
    );
    assert!(summary.get_document("value").unwrap().contains_key("min"));

    // range returns them in time order, with the key back.
    let got: Vec<Reading> = series
        .range(
            "sensor-001",
            DateTime::from_millis(T0 - HOUR),
            DateTime::from_millis(T0 + 2 * HOUR),
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

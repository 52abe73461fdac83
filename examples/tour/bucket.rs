//! Chapter 4: the bucket pattern for time series, and a native time-series collection.
//!
//! The seeds' IoT readings (001, 5.2): one document per device and hour instead of one per
//! reading, a compound `{deviceId, start}` index, a 30-day TTL; then the same readings in a
//! native time-series collection (000, 分桶模式).

use bson::{doc, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{Measurement, SyncOptions};
use serde::{Deserialize, Serialize};

const HOUR: i64 = 3_600_000;

/// A temperature reading, bucketed per device and hour, at most 200 per bucket.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    group = "bucket",
    collection = "sensor_data",
    key = device_id,
    time = timestamp,
    max_count = 200,
    span = "1h",
    summary(value(min, max, sum)),
    expire_after = "30d"
)]
pub struct Reading {
    pub device_id: String,
    pub timestamp: DateTime,
    pub value: f64,
    pub unit: String,
}

/// The same reading in a native time-series collection, `deviceId` as its metaField.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(native, group = "bucket", collection = "sensor_ts", key = device_id, time = timestamp, granularity = "seconds", summary(value(min, max, sum)), expire_after = "30d")]
pub struct NativeReading {
    pub device_id: String,
    pub timestamp: DateTime,
    pub value: f64,
    pub unit: String,
}

fn value(device: usize, second: i64) -> f64 {
    // Quarter degrees: sums stay exact.
    20.0 + ((second * 7 + device as i64 * 13) % 40) as f64 / 4.0
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 4: the bucket pattern, time series");
    let db = crate::chapter_db(client, "bucket").await?;
    // Creates {deviceId: 1, start: 1}, the TTL on `end`, and the native time-series collection.
    pattern_runtime::sync_group(&db, "bucket", &SyncOptions::new()).await?;
    // Only this chapter's group: no other chapter's collections appear in `tour_bucket`.
    let mut collections = db.list_collection_names().await?;
    collections.sort();
    println!("  collections of tour_bucket after sync_group: {collections:?}");
    for index in pattern_runtime::list_indexes(&db, "sensor_data").await? {
        println!("  sensor_data index: {index}");
    }

    // Two hours ago, on the hour: 2 devices, one reading every 5 s for two hours, in one batch.
    let hour = (DateTime::now().timestamp_millis() / HOUR - 2) * HOUR;
    let readings: Vec<Reading> = (0..2 * 720)
        .flat_map(|i| {
            (0..2).map(move |d| Reading {
                device_id: format!("sensor-00{}", d + 1),
                timestamp: DateTime::from_millis(hour + i * 5_000),
                value: value(d, i),
                unit: "°C".into(),
            })
        })
        .collect();
    let series = Reading::series(&db);
    let report = series.insert_many(&readings).await?;
    println!(
        "\ninsert_many: {} readings in {} upserts, {} buckets opened (2 devices x 2 hours, 200 per bucket)",
        report.measurements, report.writes, report.new_buckets
    );

    // A late reading lands in the window that covers its time, not in the newest bucket.
    let late = Reading {
        device_id: "sensor-001".into(),
        timestamp: DateTime::from_millis(hour + 1_234),
        value: 19.5,
        unit: "°C".into(),
    };
    series.insert(&late).await?;
    let bucket = db
        .collection::<Document>("sensor_data")
        .find_one(doc! { "deviceId": "sensor-001", "start": DateTime::from_millis(hour), "first": late.timestamp })
        .await?
        .ok_or("the late reading's bucket")?;
    println!(
        "a late reading at +1.234 s: one upsert into the {} bucket, now {} readings, summary {}",
        bucket.get_datetime("start")?.try_to_rfc3339_string()?,
        bucket.get_i32("count")?,
        bucket.get_document("summary")?
    );

    let from = DateTime::from_millis(hour + HOUR / 2);
    let to = DateTime::from_millis(hour + HOUR / 2 + HOUR);
    let hour_read: Vec<Reading> = series
        .range("sensor-001", from, to)
        .await?
        .try_collect()
        .await?;
    println!(
        "\nrange(sensor-001, one hour across two windows): {} readings, in time order, from {} to {}",
        hour_read.len(),
        hour_read.first().ok_or("readings")?.timestamp.try_to_rfc3339_string()?,
        hour_read.last().ok_or("readings")?.timestamp.try_to_rfc3339_string()?
    );
    let summary = series
        .summary(
            "sensor-001",
            DateTime::from_millis(hour),
            DateTime::from_millis(hour + 2 * HOUR),
        )
        .await?;
    println!(
        "summary(sensor-001, both hours) from the stored bucket summaries: count {}, min {:?}, max {:?}, sum {:?}",
        summary.count(),
        summary.min(Reading::FIELDS.value)?,
        summary.max(Reading::FIELDS.value)?,
        summary.sum(Reading::FIELDS.value)?
    );
    let buckets = db
        .collection::<Document>("sensor_data")
        .count_documents(doc! {})
        .await?;
    println!(
        "{} readings stored in {buckets} bucket documents",
        readings.len() + 1
    );

    // The same readings in a native time-series collection: the server buckets them.
    let native = NativeReading::series(&db);
    let as_native: Vec<NativeReading> = readings
        .iter()
        .map(|r| NativeReading {
            device_id: r.device_id.clone(),
            timestamp: r.timestamp,
            value: r.value,
            unit: r.unit.clone(),
        })
        .collect();
    native.insert_many(&as_native).await?;
    let hour_read = native
        .range("sensor-001", from, to)
        .await?
        .try_collect::<Vec<_>>()
        .await?;
    let summary = native
        .summary(
            "sensor-001",
            DateTime::from_millis(hour),
            DateTime::from_millis(hour + 2 * HOUR),
        )
        .await?;
    println!(
        "\nnative time-series `sensor_ts`: the same hour read returns {} readings; summary count {}, max {:?}",
        hour_read.len(),
        summary.count(),
        summary.max(NativeReading::FIELDS.value)?
    );

    // A normal collection where a native one is declared is an error, never a silent fallback.
    let other = client.database("tour_bucket_conflict");
    other.drop().await?;
    other
        .collection::<Document>("sensor_ts")
        .insert_one(doc! { "legacy": true })
        .await?;
    match NativeReading::series(&other).insert(&as_native[0]).await {
        Err(e) => println!("a normal `sensor_ts` collection already there: {e}"),
        Ok(()) => println!("unexpected: the reading was written into a normal collection"),
    }
    other.drop().await?;
    Ok(())
}

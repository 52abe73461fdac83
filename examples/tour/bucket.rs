//! Chapter 4: the bucket pattern for time series, and a native time-series collection.
//!
//! IoT readings: one document per device and hour instead of one per
//! reading, a compound `{deviceId, start}` index, a 30-day TTL; then the same readings in a
//! native time-series collection (000, 分桶模式); then the highway's layouts side by side (004,
//! 物联网时序数据库建模): a per-minute rollup, the seconds of a minute as keys, the seconds of an
//! hour as keys, and an hour nested as 60 minutes of 60 seconds.

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

/// One speed event of a road segment, declared once per highway layout.
macro_rules! speed_event {
    ($(#[$doc:meta])* $name:ident, $($layout:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
        #[serde(rename_all = "camelCase")]
        #[bucket(group = "bucket", key = seg_id, time = ts, $($layout)*)]
        pub struct $name {
            pub seg_id: String,
            pub ts: DateTime,
            pub speed: i32,
        }
    };
}

speed_event!(
    /// (b) One document per minute with only `speed_num` and `speed_sum`.
    SpeedMinuteSums, rollup, collection = "speed_minute_sums", span = "1m", summary(speed(sum))
);
speed_event!(
    /// (c) One document per minute, the seconds as keys.
    SpeedMinuteSlots, slots = "1s", collection = "speed_minute_slots", span = "1m", summary(speed(sum))
);
speed_event!(
    /// (d) One document per hour, 3 600 seconds as keys.
    SpeedHourSlots, slots = "1s", collection = "speed_hour_slots", span = "1h", summary(speed(sum))
);
speed_event!(
    /// (e) One document per hour, 60 minutes of 60 seconds.
    SpeedHourNested, slots = "1s", nest = "1m", collection = "speed_hour_nested", span = "1h", summary(speed(sum))
);

/// A stored document with every map of more than 4 entries shortened to its first two and last
/// one (slot maps in slot order: the server stores the keys a `$set` creates in string order,
/// "0", "1", "10", ..), for printing.
fn shortened(doc: &Document) -> String {
    fn short(value: &bson::Bson) -> String {
        match value {
            bson::Bson::Document(d) if d.len() > 4 => {
                let mut entries: Vec<(&String, &bson::Bson)> = d.iter().collect();
                entries.sort_by_key(|(k, _)| k.parse::<u64>().unwrap_or(u64::MAX));
                let show = |(k, v): &(&String, &bson::Bson)| format!("{k}: {}", short(v));
                let mut parts: Vec<String> = entries.iter().take(2).map(show).collect();
                parts.push(format!("… {} more …", d.len() - 3));
                parts.extend(entries.last().map(show));
                format!("{{ {} }}", parts.join(", "))
            }
            bson::Bson::Document(d) => {
                let parts: Vec<String> = d
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", short(v)))
                    .collect();
                format!("{{ {} }}", parts.join(", "))
            }
            bson::Bson::DateTime(t) => t.try_to_rfc3339_string().unwrap_or_default(),
            other => other.to_string(),
        }
    }
    short(&bson::Bson::Document(doc.clone()))
}

fn value(device: usize, second: i64) -> f64 {
    // Quarter degrees: sums stay exact.
    20.0 + ((second * 7 + device as i64 * 13) % 40) as f64 / 4.0
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 4: the bucket pattern, time series");
    let db = crate::chapter_db(client, "bucket").await?;
    // Creates {deviceId: 1, start: 1}, the TTL on `end`, and the native time-series collection.
    pattern_runtime::sync(&db)
        .group("bucket")
        .options(&SyncOptions::new())
        .await?;
    // Only this chapter's group: no other chapter's collections appear in `tour_bucket`.
    let mut collections = db.list_collection_names().await?;
    collections.sort();
    println!("  collections of tour_bucket after sync: {collections:?}");
    for index in pattern_runtime::sync::list_indexes(&db, "sensor_data").await? {
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

    highway(&db, hour).await?;

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

/// The highway's layouts side by side: one hour of one speed event per second on `I80_mile23`.
async fn highway(db: &mongodb::Database, hour: i64) -> Result<(), Box<dyn std::error::Error>> {
    println!("\nThe highway: one hour of speeds, one event per second, in four layouts");
    let events: Vec<(i64, i32)> = (0..3600)
        .map(|i| (hour + i * 1000, 40 + ((i * 37) % 31) as i32))
        .collect();
    let (from, to) = (
        DateTime::from_millis(hour),
        DateTime::from_millis(hour + HOUR),
    );
    macro_rules! layout {
        ($label:literal, $ty:ident, $collection:literal) => {{
            let series = $ty::series(db);
            let all: Vec<$ty> = events
                .iter()
                .map(|&(ms, speed)| $ty { seg_id: "I80_mile23".into(), ts: DateTime::from_millis(ms), speed })
                .collect();
            let report = series.insert_many(&all).await?;
            let stored = db.collection::<Document>($collection);
            let documents = stored.count_documents(doc! {}).await?;
            let sample = stored
                .find_one(doc! { "ts": { "$lte": DateTime::from_millis(hour + 7 * 60_000) } })
                .sort(doc! { "ts": -1 })
                .projection(doc! { "_id": 0 })
                .await?
                .ok_or("a stored window")?;
            let summary = series.summary("I80_mile23", from, to).await?;
            println!(
                "  {}: {} events in {} upserts, {documents} documents; the one holding minute 7:\n    {}\n    summary of the hour: count {}, sum {:?}",
                $label,
                report.measurements,
                report.writes,
                shortened(&sample),
                summary.count(),
                summary.sum($ty::FIELDS.speed)?,
            );
            series
        }};
    }
    layout!(
        "(b) rollup per minute",
        SpeedMinuteSums,
        "speed_minute_sums"
    );
    layout!(
        "(c) a minute of seconds",
        SpeedMinuteSlots,
        "speed_minute_slots"
    );
    layout!("(d) an hour of seconds", SpeedHourSlots, "speed_hour_slots");
    let nested = layout!(
        "(e) an hour of 60 x 60",
        SpeedHourNested,
        "speed_hour_nested"
    );

    // The slot layouts keep the events: an hour read gives them back, with their times.
    let back: Vec<SpeedHourNested> = nested
        .range("I80_mile23", from, to)
        .await?
        .try_collect()
        .await?;
    println!(
        "  range over (e): {} events, the last at {} with speed {}",
        back.len(),
        back.last().ok_or("events")?.ts.try_to_rfc3339_string()?,
        back.last().ok_or("events")?.speed
    );
    // Sending an event again overwrites its slot; a time between slots is refused.
    let again = SpeedHourNested {
        seg_id: "I80_mile23".into(),
        ts: DateTime::from_millis(hour + 3_599_000),
        speed: 99,
    };
    nested.insert(&again).await?;
    let summary = nested.summary("I80_mile23", from, to).await?;
    println!(
        "  the last second sent again with speed 99: still {} events, sum {:?}",
        summary.count(),
        summary.sum(SpeedHourNested::FIELDS.speed)?
    );
    let between = SpeedHourNested {
        ts: DateTime::from_millis(hour + 1_500),
        ..again
    };
    match nested.insert(&between).await {
        Err(e) => println!("  an event at +1.5 s: {e}"),
        Ok(()) => println!("  unexpected: an event between two slots was written"),
    }
    // A rollup keeps no events (`range` on it does not compile) and answers whole minutes only.
    match SpeedMinuteSums::series(db)
        .summary("I80_mile23", DateTime::from_millis(hour + 30_000), to)
        .await
    {
        Err(e) => println!("  the rollup asked from +30 s: {e}"),
        Ok(_) => println!("  unexpected: the rollup answered a range inside a minute"),
    }
    Ok(())
}

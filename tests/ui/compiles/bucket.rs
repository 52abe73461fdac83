use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    key(site_id, device_id),
    time = taken_at,
    max_count = 200,
    span = "1h",
    summary(value(min, max, sum), battery(min)),
    expire_after = "30d",
)]
struct Reading {
    site_id: String,
    device_id: u32,
    taken_at: bson::DateTime,
    value: f64,
    battery: Option<i32>,
    unit: String,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key = device_id, time = timestamp, granularity = "minutes", expire_after = "7d")]
struct Sample {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

/// The key of a multi-key series is the tuple of the key fields, in declaration order.
fn reading_key(key: <Reading as Measurement>::Key) -> (String, u32) {
    key
}

fn sample_key(key: <Sample as Measurement>::Key) -> String {
    key
}

pub fn main() {
    let _ = (reading_key, sample_key);
    let _: &str = Reading::FIELDS.taken_at.as_str();
}

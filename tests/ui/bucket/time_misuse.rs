use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = device_id, max_count = 200, span = "1h")]
struct TimeIsKey {
    device_id: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Skipped {
    device_id: String,
    #[serde(skip_serializing)]
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = "timestamp", max_count = 200, span = "1h")]
struct Quoted {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

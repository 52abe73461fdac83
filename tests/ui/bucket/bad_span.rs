use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1 hour")]
struct Spaced {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "abc")]
struct Garbage {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = 0)]
struct Zero {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

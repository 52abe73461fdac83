use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 0, span = "1h")]
struct Reading {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

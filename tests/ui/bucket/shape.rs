use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Generic<T> {
    device_id: String,
    timestamp: bson::DateTime,
    value: T,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Tuple(String, bson::DateTime, f64);

fn main() {}

use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

/// Stands in for `chrono::DateTime<Utc>`, which is serialized as a string.
#[derive(Serialize, Deserialize)]
struct DateTime<T>(T);

#[derive(Serialize, Deserialize)]
struct Utc;

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Millis {
    device_id: String,
    timestamp: i64,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Optional {
    device_id: String,
    timestamp: Option<bson::DateTime>,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct Chrono {
    device_id: String,
    timestamp: DateTime<Utc>,
    value: f64,
}

fn main() {}

use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h", span = "2h", expire_after = 0)]
struct Reading {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key = device_id, time = timestamp, granularity = "minute", collection = "system.readings")]
struct Sample {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key = device_id, time = timestamp, span = "400d")]
struct Yearly {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = "200", span = "1h")]
struct QuotedCount {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

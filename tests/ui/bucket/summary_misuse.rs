use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(
    key = device_id,
    time = timestamp,
    max_count = 200,
    span = "1h",
    summary(value, battery(min, min), device_id(max), volume(sum), level(min), level(max)),
)]
struct Reading {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
    battery: i32,
    level: f64,
}

fn main() {}

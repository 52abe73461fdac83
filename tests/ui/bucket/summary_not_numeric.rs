use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(
    key = device_id,
    time = timestamp,
    max_count = 200,
    span = "1h",
    summary(value(min, max), unit(min), label(max)),
)]
struct Reading {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
    unit: String,
    label: Option<String>,
}

fn main() {}

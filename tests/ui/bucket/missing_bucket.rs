use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
struct Reading {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

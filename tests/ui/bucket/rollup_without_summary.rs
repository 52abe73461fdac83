// A rollup without `summary(..)`: the message names one of the measurement's own fields.
use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = sensor, time = at, span = "1h", rollup)]
struct Reading {
    sensor: String,
    at: bson::DateTime,
    label: String,
    temperature: f64,
}

// Only the key and the time: no field to name.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = sensor, time = at, span = "1h", rollup)]
struct Ping {
    sensor: String,
    at: bson::DateTime,
}

fn main() {}

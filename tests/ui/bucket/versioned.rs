// A measurement cannot be versioned: its buckets are shared by many writers.
use bson::DateTime;
use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device, time = at, max_count = 100, span = "1h")]
#[versioned(history = "reading_revisions")]
struct Reading {
    device: String,
    at: DateTime,
    #[version]
    version: i64,
    value: f64,
}

fn main() {}

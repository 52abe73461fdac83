use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_cout = 200, span = "1h")]
struct Misspelt {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h", summary(value(avg)))]
struct Average {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[model(collection = "readings")]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct WithModel {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[model(colection = "readings")]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct WithBadModel {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp)]
#[bucket(max_count = 200, span = "1h")]
struct TwoBuckets {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct WithIndex {
    device_id: String,
    #[index]
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

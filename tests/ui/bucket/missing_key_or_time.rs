use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(max_count = 200, span = "1h")]
struct NoKeyNoTime {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = devce_id, time = timestamp, max_count = 200, span = "1h")]
struct Misspelt {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(key = deviceId, time = timestamp, max_count = 200, span = "1h")]
struct SerializedName {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key = device_id, time = timestamp, max_count = 200)]
struct NativeMaxCount {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key(site, device_id), time = timestamp)]
struct NativeTwoKeys {
    site: String,
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(native, key = device_id, time = timestamp, granularity = "minutes", span = "1h")]
struct NativeGranularityAndSpan {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h", granularity = "minutes")]
struct GranularityWithoutNative {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

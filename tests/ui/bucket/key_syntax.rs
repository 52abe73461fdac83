use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = "device_id", time = timestamp, max_count = 200, span = "1h")]
struct Quoted {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key(), time = timestamp, max_count = 200, span = "1h")]
struct Empty {
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, key = site, time = timestamp, max_count = 200, span = "1h")]
struct KeyTwice {
    site: String,
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key(site, site), time = timestamp, max_count = 200, span = "1h")]
struct SameKeyTwice {
    site: String,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h")]
struct KeySerializer {
    #[serde(serialize_with = "as_upper")]
    device_id: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn as_upper<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_uppercase())
}

fn main() {}

use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = count, time = timestamp, max_count = 200, span = "1h")]
struct Count {
    count: u32,
    timestamp: bson::DateTime,
    value: f64,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key(site, origin), time = timestamp, max_count = 200, span = "1h")]
struct Renamed {
    site: String,
    #[serde(rename = "start")]
    origin: String,
    timestamp: bson::DateTime,
    value: f64,
}

fn main() {}

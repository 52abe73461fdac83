use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct Measurement {
    name: String,
    value: f64,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "record_revisions")]
struct Record {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    #[attribute]
    attributes: Vec<Measurement>,
}

fn main() {}

use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
struct Plain {
    name: String,
    value: f64,
}

#[derive(Serialize, Deserialize, Model)]
struct Record {
    #[serde(rename = "_id")]
    id: u32,
    // Items that declare no key and value.
    #[attribute]
    plain: Vec<Plain>,
}

fn main() {}

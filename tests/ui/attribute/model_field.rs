use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct Measurement {
    name: String,
    value: f64,
}

#[derive(Serialize, Deserialize, Model)]
struct Record {
    #[serde(rename = "_id")]
    id: u32,
    // Not a Vec.
    #[attribute]
    single: Measurement,
    // The key is declared on the item.
    #[attribute(key = name)]
    misplaced: Vec<Measurement>,
    #[attribute(name = "attrs")]
    first: Vec<Measurement>,
    #[attribute(name = "attrs")]
    second: Vec<Measurement>,
}

fn main() {}

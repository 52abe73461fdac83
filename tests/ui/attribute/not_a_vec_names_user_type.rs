// The message names the field's own item type, not the docs' example.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct Spec {
    name: String,
    value: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Part {
    #[serde(rename = "_id")]
    id: u32,
    #[attribute]
    specs: Spec,
    #[attribute]
    extras: Option<Vec<Spec>>,
}

fn main() {}

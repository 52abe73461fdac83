use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Dimensions {
    weight_grams: u32,
}

// Paths are Rust names: `weightGrams` is what serde writes, not a field.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[index(keys(dimensions.weightGrams = 1))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    dimensions: Dimensions,
}

fn main() {}

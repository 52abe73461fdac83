use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Dimensions {
    weight_grams: u32,
}

#[derive(Serialize, Deserialize, Model)]
#[index(keys(dims.wieght_grams = 1))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    dims: Dimensions,
}

fn main() {}

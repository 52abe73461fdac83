use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Dimensions {
    weight_grams: u32,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[index(keys(dimensions.weight_grams = 1))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    dimensions: Option<Dimensions>,
}

fn main() {}

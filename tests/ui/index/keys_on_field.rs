use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[index(keys(category = 1, price = -1))]
    category: String,
    price: f64,
}

fn main() {}

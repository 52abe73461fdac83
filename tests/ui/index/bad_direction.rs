use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[index(keys(category = 1, price = 2))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    category: String,
    price: f64,
}

fn main() {}

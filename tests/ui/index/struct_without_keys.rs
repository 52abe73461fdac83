use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[index(unique)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    sku: String,
}

fn main() {}

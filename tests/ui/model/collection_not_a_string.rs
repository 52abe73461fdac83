use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = products)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    customer: String,
    #[extended_ref(snapshot)]
    tags: Vec<String>,
}

fn main() {}

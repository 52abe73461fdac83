use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[serde(flatten)]
    extra: std::collections::HashMap<String, String>,
}

fn main() {}

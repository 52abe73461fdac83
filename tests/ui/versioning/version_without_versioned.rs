use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "articles")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
}

fn main() {}

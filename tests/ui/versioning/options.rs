use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[versioned(keep = 0, histroy = "x")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "pages")]
#[versioned(keep = 5)]
struct Page {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
}

fn main() {}

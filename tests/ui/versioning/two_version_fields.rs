use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[versioned(history = "article_revisions")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    #[version]
    revision: i64,
}

fn main() {}

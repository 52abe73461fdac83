// A counter's writes would bypass the versioned model's revisions.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "page_revisions")]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    #[approximate(batched, threshold = 100)]
    views: i64,
}

fn main() {}

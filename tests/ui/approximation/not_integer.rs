// An approximate counter counts in an integer field: not an f64, not a String.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(batched, threshold = 100)]
    views: f64,
    #[approximate(sharded, shards = 4)]
    hits: String,
}

fn main() {}

// A counter's field is written by the counter alone: it cannot also be computed.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(batched, threshold = 10)]
    #[computed(count = Visit, by = page_id)]
    views: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Visit {
    #[serde(rename = "_id")]
    id: String,
    page_id: String,
}

fn main() {}

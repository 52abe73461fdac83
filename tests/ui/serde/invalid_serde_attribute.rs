use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// serde reports its own attribute errors; the derive adds no cascade of its own.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelcase")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    rating_count: i64,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[index(keys(ratingCount = -1))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    rating_count: i64,
}

fn main() {}

// A subset on a versioned parent: its pushes would change the parent without a revision. And a
// versioned model as the full items: the subset's `push` and `remove` write them directly.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "product_revisions")]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent: Vec<Excerpt>,
}

#[derive(Serialize, Deserialize, Model)]
struct Shop {
    #[serde(rename = "_id")]
    id: u32,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent: Vec<Excerpt>,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "review_revisions")]
struct Review {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    product_id: u32,
    stars: i32,
    created_at: bson::DateTime,
}

#[derive(Serialize, Deserialize, Fields)]
struct Excerpt {
    stars: i32,
    created_at: bson::DateTime,
}

impl From<&Review> for Excerpt {
    fn from(r: &Review) -> Self {
        Excerpt { stars: r.stars, created_at: r.created_at }
    }
}

fn main() {}

//! A `#[summary]` where a field cannot be one: on the `#[subset]` array itself, on an
//! `#[approximate]` counter, and beside `#[computed]` on one field (a field keeps one value).
//! One error each, at the refused attribute.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    #[summary(count = recent)]
    recent: Vec<Excerpt>,
    #[approximate(batched, threshold = 10)]
    #[summary(count = recent)]
    views: i64,
    #[summary(count = recent)]
    #[computed(count = Review, by = product_id)]
    review_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
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

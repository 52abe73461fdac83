//! A subset's count, sum and average written as `#[computed]` (their name before `#[summary]`):
//! `#[computed]` is for values from another model's documents, with `by = ..`. One error per
//! field, at `computed`, giving the `#[summary]` to write.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<Excerpt>,
    #[computed(count = recent_reviews)]
    rating_count: i64,
    #[computed(sum = recent_reviews.stars)]
    rating_sum: i64,
    #[computed(avg = recent_reviews.stars)]
    rating_avg: Option<f64>,
}

#[derive(Serialize, Deserialize, Model)]
struct Review {
    #[serde(rename = "_id")]
    id: u32,
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

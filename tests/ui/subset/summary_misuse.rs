use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent: Vec<Excerpt>,
    #[summary(count = recnt)]
    count: i64,
    #[summary(total = recent.stars)]
    total: i64,
    #[summary(avg = recent.stars)]
    average: Option<f64>,
    #[summary(sum = recent)]
    sum: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Review {
    #[serde(rename = "_id")]
    id: u32,
    product_id: u32,
    stars: i32,
    title: String,
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

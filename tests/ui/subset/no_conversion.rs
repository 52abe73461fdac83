use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent: Vec<Headline>,
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

// Carries the sort field, but nothing builds it from a `Review`. (A local type, not `String`:
// rustc's list of `String`'s `From` impls changes with the features of the dependencies.)
#[derive(Serialize, Deserialize, Fields)]
struct Headline {
    created_at: bson::DateTime,
}

fn main() {}

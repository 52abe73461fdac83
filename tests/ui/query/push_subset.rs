use pattern_runtime::query::Update;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(stars = -1), full = Review, parent = product_id)]
    top_reviews: Vec<ReviewExcerpt>,
}

#[derive(Serialize, Deserialize, Model)]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
}

#[derive(Serialize, Deserialize, Fields)]
struct ReviewExcerpt {
    #[serde(rename = "_id")]
    id: String,
    stars: i32,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt { id: r.id.clone(), stars: r.stars }
    }
}

fn main() {
    let excerpt = ReviewExcerpt { id: "r".into(), stars: 5 };
    let _ = Update::new().push(Product::FIELDS.top_reviews, excerpt);
}

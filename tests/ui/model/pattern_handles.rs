// A pattern's handle is reached from the model handle by one rule: a field's pattern through
// the field's typed name, a model's pattern by its handle's name. A field of another pattern,
// of no pattern, or of another model, and a model without the pattern, are each one error at
// the argument or the call.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[subset(limit = 10, sort(stars = -1), full = Review, parent = product_id)]
    top_reviews: Vec<ReviewExcerpt>,
    #[approximate(batched, threshold = 10)]
    views: i64,
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

#[derive(Serialize, Deserialize, Model)]
struct Shelf {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 5, sort(stars = -1), full = Review, parent = product_id)]
    picks: Vec<ReviewExcerpt>,
}

fn handles(db: &mongodb::Database) {
    let products = Product::collection(db);
    // Fine.
    let _ = products.subset(Product::FIELDS.top_reviews);
    let _ = products.counter(Product::FIELDS.views);
    // A field of no pattern.
    let _ = products.subset(Product::FIELDS.name);
    // A field of another pattern.
    let _ = products.outlier(Product::FIELDS.top_reviews);
    let _ = products.counter(Product::FIELDS.top_reviews);
    // A field of another model.
    let _ = products.subset(Shelf::FIELDS.picks);
    // A model without the pattern.
    let _ = products.tree();
    let _ = products.slots();
    let _ = products.references();
    let _ = products.computed();
}

fn main() {}

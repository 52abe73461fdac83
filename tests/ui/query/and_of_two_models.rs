use pattern_runtime::query::{Filter, Sort, Update};
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    price: f64,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: String,
    total: f64,
}

fn main() {
    // One filter of two models' fields.
    let _ = Filter::eq(Product::FIELDS.name, "lamp").and(Filter::lt(Order::FIELDS.total, 5.0));
    let _ = (Sort::asc(Product::FIELDS.price), Update::<Product>::new());
}

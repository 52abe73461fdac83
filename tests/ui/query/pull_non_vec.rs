use pattern_runtime::query::{Filter, Update};
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
struct Dims {
    weight: u32,
}

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    price: f64,
    tags: Vec<String>,
    dims: Dims,
    items: Vec<Dims>,
}

fn main() {
    let f = Product::FIELDS;
    let _ = Update::new().pull(f.price, 1.0);
    let _ = Filter::eq(f.price, 1.0);
}

use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(ProductSnapshot(sku, title, price), snapshot)]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    sku: String,
    title: String,
    price: f64,
}

#[derive(Serialize, Deserialize, Fields)]
struct OrderItem {
    product: ProductSnapshot,
    quantity: u32,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    featured: ProductSnapshot,
    #[extended_ref(propagate)]
    related: Vec<ProductSnapshot>,
    #[extended_ref(propagate, path = product)]
    items: Vec<OrderItem>,
}

fn main() {}

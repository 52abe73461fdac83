use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(ProductRef(sku, title))]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    sku: String,
    title: String,
}

#[derive(Serialize, Deserialize, Fields)]
struct OrderItem {
    product: ProductRef,
    quantity: u32,
}

#[derive(Serialize, Deserialize)]
struct PlainItem {
    product: ProductRef,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate, path = prodcut)]
    items: Vec<OrderItem>,
    #[extended_ref(propagate, path = product)]
    plain: Vec<PlainItem>,
    #[extended_ref(snapshot, path = quantity)]
    counts: Vec<OrderItem>,
}

fn main() {}

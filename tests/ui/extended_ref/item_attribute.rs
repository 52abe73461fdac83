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

/// The mode goes on the model's `Vec` of items (with `path`), not on the item's field.
#[derive(Serialize, Deserialize, Fields)]
struct OrderItem {
    #[extended_ref(propagate)]
    product: ProductRef,
    quantity: u32,
}



/// Shapes are declared on models.
#[derive(Serialize, Deserialize, Fields)]
#[extended_ref(LineRef(sku))]
struct Line {
    sku: String,
}
fn main() {}

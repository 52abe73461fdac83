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
    quantity: u32,
    product: Option<ProductRef>,
}

#[derive(Serialize, Deserialize, Fields)]
struct Shipping {
    address: String,
    parcels: Vec<ProductRef>,
}

// The references are inside the items: the field holding them needs a mode all the same.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    items: Vec<OrderItem>,
    shipping: Option<Shipping>,
    // A struct holding no reference needs no mode.
    notes: Vec<Note>,
}

#[derive(Serialize, Deserialize, Fields)]
struct Note {
    text: String,
}

fn main() {}

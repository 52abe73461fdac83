use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(ProductRef(sku))]
struct Product {
    #[serde(rename = "_id")]
    id: u32,
    sku: String,
}

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(WarehouseRef(city))]
struct Warehouse {
    #[serde(rename = "_id")]
    id: u32,
    city: String,
}

#[derive(Serialize, Deserialize, Fields)]
struct OrderItem {
    product: ProductRef,
    from: WarehouseRef,
}

// One field tracks one reference of its items: `from` would be left without a mode.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate, path = product)]
    items: Vec<OrderItem>,
}

fn main() {}

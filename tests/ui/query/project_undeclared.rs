// A find's projection is a struct declared `#[projection(of = Model)]`, each of its fields
// checked against the model: an undeclared struct, and a declared one with a field the model
// lacks or of another type, are each one error.
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    price: f64,
}

#[derive(Deserialize, Fields)]
struct Undeclared {
    price: f64,
}

#[derive(Deserialize, Fields)]
#[projection(of = Product)]
struct WrongField {
    cost: f64,
}

#[derive(Deserialize, Fields)]
#[projection(of = Product)]
struct WrongType {
    price: String,
}

async fn reads(db: &mongodb::Database) {
    let products = Product::collection(db);
    let _ = products.find(bson::doc! {}).project::<Undeclared>().await;
}

fn main() {}

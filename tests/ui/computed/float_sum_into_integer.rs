//! A sum of floats (`Order.price: f64`) is a float: kept in an i64 it could not be read back.
//! One error, at the field.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Order.price, by = user_id)]
    total_spent: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    price: f64,
}

fn main() {}

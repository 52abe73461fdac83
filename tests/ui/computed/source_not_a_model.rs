//! The source of a computed field is a plain struct, not a `#[derive(Model)]`: it has no typed
//! field names either, and rustc says so once, at the path (its note names `#[derive(Model)]`).

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Order.amount, by = user_id)]
    total_spent: i64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    amount: i64,
}

fn main() {}

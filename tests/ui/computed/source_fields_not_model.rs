//! The source of a computed field has typed field names (`#[derive(Fields)]`) but is not a
//! `#[derive(Model)]`: it has no collection to read. One error, at the path.

use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Order.amount, by = user_id)]
    total_spent: i64,
}

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    amount: i64,
}

fn main() {}

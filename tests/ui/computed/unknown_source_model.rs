//! The source of a computed field names no type in scope (`Ordr` for `Order`): one error, at
//! the path.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Ordr.amount, by = user_id)]
    total_spent: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    amount: i64,
    note: String,
}

fn main() {}

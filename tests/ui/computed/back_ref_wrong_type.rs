//! `by` names the source's field holding this document's `_id`: `Order.user_id` is an i64
//! while `User`'s `_id` is a String. One error, at `user_id`.

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

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: i64,
    amount: i64,
}

fn main() {}

//! `by` names no field of the source (`usr_id` for `user_id`): one error, at `by`'s field.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Order.amount, by = usr_id)]
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

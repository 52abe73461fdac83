//! A `#[summary]` naming another model's field with `by = ..`: that is a value computed from
//! another model's documents, `#[computed]`. One error, at `summary`, giving the `#[computed]`
//! to write; a `#[computed]` from another model without `by` says what `by` is.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[summary(sum = Order.amount, by = user_id)]
    total_spent: i64,
    #[computed(count = Order)]
    order_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    amount: i64,
}

fn main() {}

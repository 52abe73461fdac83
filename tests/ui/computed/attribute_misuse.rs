//! Mistakes in the attribute itself, one per field: an unknown computation, an average, a count
//! of a field, a sum without a field, two computations, `by` twice. One error each, at the
//! offending token.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(total = Order.amount, by = user_id)]
    total: i64,
    #[computed(avg = Order.amount, by = user_id)]
    average: Option<f64>,
    #[computed(count = Order.amount, by = user_id)]
    order_count: i64,
    #[computed(sum = Order, by = user_id)]
    total_spent: i64,
    #[computed(sum = Order.amount, max = Order.amount, by = user_id)]
    two: i64,
    #[computed(count = Order, by = user_id, by = id)]
    by_twice: i64,
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

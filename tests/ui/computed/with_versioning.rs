// The writes of a computed field's sources would bypass the versioned model's revisions.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "user_revisions")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    #[computed(sum = Order.amount, by = user_id)]
    total_spent: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    amount: i64,
}

fn main() {}

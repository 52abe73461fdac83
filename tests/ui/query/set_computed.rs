use pattern_runtime::query::Update;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = Order, by = user_id)]
    order_count: i32,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: String,
    user_id: String,
}

fn main() {
    let _ = Update::new().inc(User::FIELDS.order_count, 1);
}

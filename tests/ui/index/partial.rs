use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[index(partial(stauts = "open"))]
    customer_id: u32,
    #[index(partial(total(greater = 0)))]
    total: f64,
    #[index(partial(total(exists = 1)))]
    status: String,
}

fn main() {}

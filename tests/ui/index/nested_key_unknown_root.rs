use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[index(keys(adress.city = 1))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    address: Address,
}

#[derive(Serialize, Deserialize)]
struct Address {
    city: String,
}

fn main() {}

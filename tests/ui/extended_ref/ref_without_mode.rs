use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    customer: CustomerRef,
    billing: Option<CustomerRef>,
    watchers: Vec<CustomerRef>,
    note: String,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

// A reference is held as `CustomerRef`, `Option<CustomerRef>` or `Vec<CustomerRef>`.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    watchers: Option<Vec<CustomerRef>>,
    #[extended_ref(propagate)]
    reviewers: Option<Vec<CustomerRef>>,
}

fn main() {}

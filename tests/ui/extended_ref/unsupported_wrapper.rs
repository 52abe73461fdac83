use pattern_runtime::Model;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

// References are held as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or
// `Option<Vec<CustomerRef>>`; deeper than that, propagation cannot address them, with or
// without a mode.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    groups: Vec<Vec<CustomerRef>>,
    by_role: HashMap<String, CustomerRef>,
    #[extended_ref(propagate)]
    reviewers: Vec<Option<CustomerRef>>,
    #[extended_ref(snapshot)]
    watchers: Option<Vec<CustomerRef>>,
}

fn main() {}

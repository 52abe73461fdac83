use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
#[extended_ref(propagate)]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref]
    a: CustomerRef,
    #[extended_ref(path = name)]
    b: CustomerRef,
    #[extended_ref(propagate, snapshot)]
    c: CustomerRef,
    #[extended_ref(propagte)]
    d: CustomerRef,
    #[extended_ref(CustomerRef(name))]
    e: CustomerRef,
    #[extended_ref(propagate, path = name)]
    f: CustomerRef,
    #[extended_ref(snapshot, snapshot)]
    g: CustomerRef,
    #[extended_ref(propagate)]
    #[extended_ref(snapshot)]
    h: CustomerRef,
    #[serde(skip)]
    #[extended_ref(snapshot)]
    i: Option<CustomerRef>,
    #[extended_ref(propagate, path = "name")]
    j: Vec<CustomerRef>,
}

fn main() {}

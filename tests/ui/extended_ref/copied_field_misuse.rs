use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(id, name, name, cache))]
#[extended_ref(EmptyRef())]
#[extended_ref(Customer(name))]
#[extended_ref(CustomerRef(address))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
    address: String,
    #[serde(skip)]
    cache: Vec<u8>,
}

// The shapes are still generated: no error below.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    #[extended_ref(snapshot)]
    empty: Vec<EmptyRef>,
}

fn copy(c: &Customer) -> (CustomerRef, EmptyRef) {
    (CustomerRef::from(c), EmptyRef::from(c))
}

fn main() {}

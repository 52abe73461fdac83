use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

/// Not `Clone`: a copy is built by cloning the source's field.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Address {
    city: String,
}

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name, address), derive(PartialEq))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
    address: Address,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    id: u32,
    name: String,
}

// The shape is still generated: no error below.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    customer: CustomerRef,
}

fn copy(c: &Customer) -> CustomerRef {
    CustomerRef::from(c)
}

fn main() {}

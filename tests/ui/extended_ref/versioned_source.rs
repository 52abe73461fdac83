// A versioned source keeps its copies through its own writes; `References` would write around
// its revisions, so it has none.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "customer_revisions")]
#[extended_ref(CustomerRef(name))]
#[extended_ref(CustomerSnapshot(name), snapshot)]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    name: String,
}

// The shapes are generated and can be embedded in either mode.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    #[extended_ref(snapshot)]
    frozen: CustomerSnapshot,
}

fn kept_through_references<M: pattern_runtime::extended_ref::Referenced>() {}

fn writes() {
    kept_through_references::<Customer>();
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref]
#[extended_ref(NoList)]
#[extended_ref(CustomerRef(name), CustomerCard(address))]
#[extended_ref(CustomerSnapshot(name), snapshot, snapshot)]
#[extended_ref(CustomerLabel(name), snapshto)]
#[extended_ref(CustomerLine(name), path = name)]
#[extended_ref(crate::CustomerPath(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
    address: String,
}

// Each mistake above is one error: the shapes they name are used here.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(snapshot)]
    listed: NoList,
    #[extended_ref(snapshot)]
    card: CustomerCard,
    #[extended_ref(snapshot)]
    label: CustomerLabel,
    #[extended_ref(snapshot)]
    snapshot: CustomerSnapshot,
}

fn main() {}

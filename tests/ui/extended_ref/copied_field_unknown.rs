use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[extended_ref(CustomerRef(nmae, address))]
#[extended_ref(CustomerCard(name, loyaltyPoints))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
    address: String,
    loyalty_points: i64,
}

// The shapes are still generated (with the fields that exist): no error below.
#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    #[extended_ref(snapshot)]
    card: Option<CustomerCard>,
}

fn copy(c: &Customer) -> (String, CustomerCard) {
    (CustomerRef::from(c).address, CustomerCard::from(c))
}

fn main() {}

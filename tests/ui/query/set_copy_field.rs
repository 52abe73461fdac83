use pattern_runtime::query::Update;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: String,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: String,
    #[extended_ref(propagate)]
    customer: CustomerRef,
}

fn main() {
    let copy = CustomerRef { id: "c".into(), name: "Ada".into() };
    let _ = Update::new().set(Order::FIELDS.customer, copy);
    // A field inside the copy is the copy's too.
    let _ = Update::new().set(Order::FIELDS.customer.then(|c| c.name), "Bob");
}

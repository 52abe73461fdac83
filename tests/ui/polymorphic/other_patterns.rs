use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
#[versioned(history = "notification_revisions")]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: u32,
        #[version]
        version: i64,
    },
}

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

// A reference held in an enum model (with or without a mode) is refused: nothing would keep it
// in sync.
#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Order {
    Online {
        #[serde(rename = "_id")]
        id: u32,
        customer: CustomerRef,
    },
    Shop {
        #[serde(rename = "_id")]
        id: u32,
        #[extended_ref(propagate)]
        customer: Option<CustomerRef>,
    },
}

fn main() {}

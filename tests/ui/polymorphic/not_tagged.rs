use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// Externally tagged (serde's default): each variant's fields nested under its name.
#[derive(Serialize, Deserialize, Model)]
enum External {
    A {
        #[serde(rename = "_id")]
        id: u32,
    },
}

#[derive(Serialize, Deserialize, Model)]
#[serde(untagged)]
enum Untagged {
    A {
        #[serde(rename = "_id")]
        id: u32,
    },
}

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A {
        #[serde(rename = "_id")]
        id: u32,
    },
}

fn main() {}

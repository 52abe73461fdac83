use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// A field named like the tag would be written twice in one document: serde refuses it.
#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: u32,
        r#type: String,
    },
}

fn main() {}

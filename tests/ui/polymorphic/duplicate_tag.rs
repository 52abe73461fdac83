use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: u32,
    },
    #[serde(rename = "email")]
    Mail {
        #[serde(rename = "_id")]
        id: u32,
    },
}

fn main() {}

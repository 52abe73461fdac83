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

fn main() {}

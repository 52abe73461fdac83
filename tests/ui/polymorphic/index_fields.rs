use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type", rename_all = "lowercase")]
// `device_id` is a field of `Push` only; `sent_at` of no variant.
#[index(keys(device_id = 1))]
#[index(keys(sent_at = -1))]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: u32,
        to: String,
    },
    // A variant's index names that variant's fields.
    #[index(keys(to = 1))]
    Push {
        #[serde(rename = "_id")]
        id: u32,
        device_id: String,
    },
}

fn main() {}

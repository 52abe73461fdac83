use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Session {
    #[serde(rename = "_id")]
    id: u32,
    #[index(expire_after = "30 days")]
    created_at: bson::DateTime,
}

fn main() {}

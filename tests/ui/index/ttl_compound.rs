use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[index(keys(user_id = 1, created_at = 1), expire_after = "30d")]
struct Session {
    #[serde(rename = "_id")]
    id: u32,
    user_id: u32,
    created_at: bson::DateTime,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "notifications")]
#[index(keys(kind = 1, created_at = -1))]
struct Notification {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    #[serde(rename = "type")]
    kind: String,
    #[index(expire_after = "90d")]
    created_at: bson::DateTime,
}

pub fn main() {}

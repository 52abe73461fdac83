use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// The seed's hot shard: a ranged key on a field that only grows.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(id)]
struct Log {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[shard_key(created_at, user_id)]
struct Post {
    #[serde(rename = "_id")]
    id: i64,
    created_at: Option<bson::DateTime>,
    user_id: i64,
}

// Fine: hashed, spread by another field first, or allowed.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(id = "hashed")]
struct Hashed {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
}

#[derive(Serialize, Deserialize, Model)]
#[shard_key(user_id, created_at)]
struct Spread {
    #[serde(rename = "_id")]
    id: i64,
    user_id: i64,
    created_at: bson::DateTime,
}

#[derive(Serialize, Deserialize, Model)]
#[shard_key(created_at, allow_monotonic)]
struct Allowed {
    #[serde(rename = "_id")]
    id: i64,
    created_at: bson::DateTime,
}

fn main() {}

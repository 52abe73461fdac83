use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// A key that is not a field.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(user)]
struct Misspelt {
    #[serde(rename = "_id")]
    id: String,
    user_id: String,
}

// Descending, and an unknown kind.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(region = -1, user_id = "text")]
struct Kinds {
    #[serde(rename = "_id")]
    id: String,
    region: String,
    user_id: String,
}

// Two hashed fields.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(region = "hashed", user_id = "hashed")]
struct TwoHashed {
    #[serde(rename = "_id")]
    id: String,
    region: String,
    user_id: String,
}

// Two shard keys.
#[derive(Serialize, Deserialize, Model)]
#[shard_key(region)]
#[shard_key(user_id)]
struct TwoKeys {
    #[serde(rename = "_id")]
    id: String,
    region: String,
    user_id: String,
}

// On a field, and empty.
#[derive(Serialize, Deserialize, Model)]
#[shard_key()]
struct OnField {
    #[serde(rename = "_id")]
    id: String,
    #[shard_key]
    user_id: String,
}

// On a variant of an enum model.
#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Notification {
    #[shard_key(user)]
    Email { _id: i64, user: String },
}

fn main() {}

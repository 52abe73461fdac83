use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// MongoDB refuses a unique index that does not start with the shard key on a sharded
// collection: each one is an error, at the index.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[shard_key(tenant_id = 1, user_id = 1)]
#[index(keys(tenant_id = 1, user_id = 1, email = 1), unique)] // fine: starts with the key
#[index(keys(user_id = 1, tenant_id = 1), unique, name = "wrong_order")]
#[index(keys(tenant_id = 1), unique, name = "too_short")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
    tenant_id: String,
    user_id: String,
    #[index(unique)]
    email: String,
    #[index] // fine: not unique
    nickname: String,
}

fn main() {}

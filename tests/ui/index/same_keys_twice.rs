use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// Two TTLs on one key: the server keeps one index per key pattern.
#[derive(Serialize, Deserialize, Model)]
#[index(keys(created_at = 1), name = "short_ttl", expire_after = "1d")]
struct Session {
    #[serde(rename = "_id")]
    id: String,
    #[index(expire_after = "30d")]
    created_at: bson::DateTime,
}

// The same keys under two names, without a TTL.
#[derive(Serialize, Deserialize, Model)]
#[index(keys(email = 1, name = 1))]
#[index(keys(email = 1, name = 1), name = "by_email", hidden)]
#[index(keys(email = 1, name = 1), name = "unique_email", unique)] // allowed: unique differs
struct User {
    #[serde(rename = "_id")]
    id: String,
    email: String,
    name: String,
}

// Allowed: the same keys with different partial filters.
#[derive(Serialize, Deserialize, Model)]
#[index(keys(email = 1), name = "active_email", unique, partial(active = true))]
#[index(keys(email = 1), name = "all_email")]
struct Account {
    #[serde(rename = "_id")]
    id: String,
    email: String,
    active: bool,
}

fn main() {}

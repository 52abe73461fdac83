use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

/// A stand-in for `chrono::DateTime<Utc>`, which serde writes as a string.
#[derive(Serialize, Deserialize)]
struct DateTime<Tz>(Tz);

#[derive(Serialize, Deserialize, Model)]
struct Session {
    #[serde(rename = "_id")]
    id: u32,
    #[index(expire_after = "30d")]
    created_at: DateTime<u8>,
    #[index(expire_after = 3600)]
    last_seen: String,
}

fn main() {}

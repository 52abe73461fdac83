use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct UserV1 {
    name: String,
}

#[derive(Deserialize)]
struct UserV2 {
    first: String,
}

// `UserV1` upgrades to `UserV2`, but nothing takes `UserV2` to `User`.
impl From<UserV1> for UserV2 {
    fn from(v: UserV1) -> Self {
        UserV2 { first: v.name }
    }
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(UserV1 = 1, UserV2 = 2))]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<3>,
    first: String,
}

fn main() {}

use pattern_runtime::query::Update;
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct UserV1 {
    first: String,
}

impl From<UserV1> for User {
    fn from(v: UserV1) -> Self {
        User {
            id: 0,
            v: SchemaVersion,
            first: v.first,
        }
    }
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(UserV1 = 1))]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    first: String,
}

fn main() {
    let _ = Update::new().set(User::FIELDS.v, SchemaVersion);
}

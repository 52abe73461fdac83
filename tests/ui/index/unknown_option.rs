use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    #[index(uniqe)]
    email: String,
}

fn main() {}

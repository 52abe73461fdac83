use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[index(keys(email = 1, name = 1), name = "by_email")]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    #[index(unique, name = "by_email")]
    email: String,
    name: String,
}

fn main() {}

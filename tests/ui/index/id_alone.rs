use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    #[index(-1)]
    id: u32,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "system.users")]
struct User {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "prices$eur")]
struct Price {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}

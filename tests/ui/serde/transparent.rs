use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(transparent)]
struct Wrapper {
    #[serde(rename = "_id")]
    id: String,
}

fn main() {}

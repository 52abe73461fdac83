use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Envelope<T> {
    #[serde(rename = "_id")]
    id: u32,
    payload: T,
}

fn main() {}

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Inner {
    #[serde(rename = "_id")]
    id: u32,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Shapes {
    Fine {
        #[serde(rename = "_id")]
        id: u32,
    },
    Newtype(Inner),
    Unit,
    NoId {
        name: String,
    },
}

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Generic<T> {
    A {
        #[serde(rename = "_id")]
        id: u32,
        value: T,
    },
}

fn main() {}

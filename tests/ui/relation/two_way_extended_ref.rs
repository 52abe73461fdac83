//! A two-way relation whose side is an extended-reference copy: `assign` and `repair` write bare
//! `_id`s there, which would overwrite the copy.

use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
#[extended_ref(PersonRef(name))]
struct Person {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Task {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = tasks)]
    #[extended_ref(propagate)]
    owner: PersonRef,
}

fn main() {}

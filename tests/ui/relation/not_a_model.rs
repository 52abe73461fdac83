//! `#[relation]` on references to a type that is not a `#[derive(Model)]` struct. `Ref<T>`
//! requires a model, so rustc reports the type wherever it appears (the field itself, serde's and
//! the derive's code); the relation adds no other kind of error.

use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct NotAModel {
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Holder {
    #[serde(rename = "_id")]
    id: u32,
    #[relation]
    one: Ref<NotAModel>,
    #[relation]
    many: Vec<Ref<NotAModel>>,
}

fn main() {}

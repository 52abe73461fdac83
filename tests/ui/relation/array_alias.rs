//! The derive reads from the field's type whether it holds an array; an alias hides it, and the
//! compile-time check of the type says so at the field's type.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
}

type Parts = Vec<Ref<Part>>;

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation]
    parts: Parts,
}

fn main() {}

//! `#[relation]` on fields that hold no reference: one error per field, at its type.

use bson::oid::ObjectId;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation]
    supplier: String,
    #[relation]
    parts: Vec<ObjectId>,
    #[relation]
    tags: Option<Vec<String>>,
}

fn main() {}

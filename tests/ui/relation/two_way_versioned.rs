//! A two-way relation on a `#[versioned]` model: `assign` would bypass its versions.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "revisions")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[version]
    version: i64,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = tasks)]
    owner: Ref<Person>,
}

/// A plain loadable relation on a versioned model is fine: it only reads.
#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "revisions")]
struct Note {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[version]
    version: i64,
    #[relation]
    about: Option<Ref<Task>>,
}

fn main() {}

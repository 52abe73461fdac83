//! The two sides of a two-way relation name each other: `Person.tasks` says `inverse = owner`,
//! `Task.owner` says `inverse = something_else` (which `Person` does not have).

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = something_else)]
    owner: Option<Ref<Person>>,
}

fn main() {}

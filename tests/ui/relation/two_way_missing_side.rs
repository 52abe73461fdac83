//! A two-way relation whose other side does not exist: `Team.members` names `team`, which
//! `Member` does not have as a `#[relation]` field (it has a plain field, and a misspelt one).

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Team {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = team)]
    members: Vec<Ref<Member>>,
    #[relation(inverse = leader)]
    leads: Vec<Ref<Member>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Member {
    #[serde(rename = "_id")]
    id: ObjectId,
    // Not a `#[relation]` field.
    team: Option<Ref<Team>>,
    #[relation(inverse = leads)]
    leadr: Option<Ref<Team>>,
}

fn main() {}

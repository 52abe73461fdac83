//! `#[relation(parent)]` goes on a single reference to the parent, in the child: not on a field
//! holding no reference, nor on an array of references.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Host {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Serialize, Deserialize, Model)]
struct LogMessage {
    #[serde(rename = "_id")]
    id: ObjectId,
    // The host's name, not a reference.
    #[relation(parent)]
    host: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Dashboard {
    #[serde(rename = "_id")]
    id: ObjectId,
    // An array: the parent's list of children.
    #[relation(parent)]
    hosts: Vec<Ref<Host>>,
}

fn main() {}

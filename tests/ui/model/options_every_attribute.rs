// Every attribute reads its options the same way: an unknown key is reported with "did you
// mean", a repeated key at the repetition (the first is kept), and both in one attribute are
// reported together, each at its token.
use bson::DateTime;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "doc_revisions", kepp = 3, history = "other_revisions")]
struct Doc {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 5, limit = 6, overflow = "user_posts", flg = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room_id, slot = date, slot = date, holdr = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: String,
    room_id: String,
    date: DateTime,
    booked_by: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, parent = parent, ancestor = ancestors)]
struct Category {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn main() {}

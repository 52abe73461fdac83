//! A model's operations take its own `_id` type (and a grid its resource's and slot's types):
//! an operator document, or an id of another type, does not compile. A model whose `_id` is
//! `Bson` takes any value and checks it at run time instead.

use bson::doc;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = night, holder = guest)]
struct RoomNight {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    room: i32,
    night: String,
    guest: Option<String>,
}

async fn misuse(db: &mongodb::Database) {
    let _ = User::collection(db).outlier(User::FIELDS.posts).push(doc! { "$gt": "" }, "hi".to_owned()).await;
    let _ = RoomNight::collection(db).slots().book("101", "2026-11-26", "eve").await;
}

fn main() {}

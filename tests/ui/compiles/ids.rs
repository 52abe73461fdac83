//! What an operation takes as an id: the model's `_id` type, or what converts to it without
//! loss (`IntoId`). An integer literal takes the id's own type, whatever its width.

use bson::{doc, oid::ObjectId, Bson};
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Small {
    #[serde(rename = "_id")]
    id: u32,
    #[outlier(limit = 5, overflow = "small_items", flag = big, count = n)]
    items: Vec<String>,
    big: bool,
    n: i64,
    #[approximate(batched, threshold = 10)]
    views: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Wide {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 5, overflow = "wide_items", flag = big, count = n)]
    items: Vec<String>,
    big: bool,
    n: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Named {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 5, overflow = "named_items", flag = big, count = n)]
    items: Vec<String>,
    big: bool,
    n: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Loose {
    #[serde(rename = "_id")]
    id: Bson,
    #[outlier(limit = 5, overflow = "loose_items", flag = big, count = n)]
    items: Vec<String>,
    big: bool,
    n: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = night, holder = guest)]
struct RoomNight {
    #[serde(rename = "_id")]
    id: ObjectId,
    room: i32,
    night: String,
    guest: Option<String>,
}

#[allow(clippy::unused_async)]
pub async fn calls(db: &mongodb::Database) {
    let _ = Small::collection(db)
        .outlier(Small::FIELDS.items)
        .push(7, "a".to_owned())
        .await;
    let _ = Small::collection(db)
        .counter(Small::FIELDS.views)
        .add(7, 1)
        .await;
    let _ = Wide::collection(db)
        .outlier(Wide::FIELDS.items)
        .push(7, "a".to_owned())
        .await;
    let _ = Wide::collection(db)
        .outlier(Wide::FIELDS.items)
        .push(7_i32, "a".to_owned())
        .await;
    let _ = Named::collection(db)
        .outlier(Named::FIELDS.items)
        .push("ada", "a".to_owned())
        .await;
    let name = "ada".to_owned();
    let _ = Named::collection(db)
        .outlier(Named::FIELDS.items)
        .push(&name, "a".to_owned())
        .await;
    let _ = Named::collection(db)
        .outlier(Named::FIELDS.items)
        .push(name, "a".to_owned())
        .await;
    // A `Bson` id takes any value, and is checked when the operation runs.
    let _ = Loose::collection(db)
        .outlier(Loose::FIELDS.items)
        .push(7, "a".to_owned())
        .await;
    let _ = Loose::collection(db)
        .outlier(Loose::FIELDS.items)
        .push(doc! { "a": 1 }, "a".to_owned())
        .await;
    let _ = RoomNight::collection(db)
        .slots()
        .book(101, "2026-11-26", "eve")
        .await;
}

pub fn main() {}

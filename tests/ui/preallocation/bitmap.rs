// A bitmap is an `i32` (31 sub-slots) or an `i64` (63), with room for its sub-slots.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, bitmap = half_hours, sub_slots = 48)]
struct NotAnInteger {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    half_hours: String,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, bitmap = half_hours, sub_slots = 48)]
struct TooNarrow {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    half_hours: i32,
}

fn main() {}

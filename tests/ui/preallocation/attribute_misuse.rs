// Each mistake in `#[preallocated]` is one error at its token, with what to write.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, holder = guest)]
struct NoSlot {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    guest: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day)]
struct NeitherHolderNorBitmap {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, bitmap = half_hours)]
struct NoSubSlots {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    half_hours: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, holder = guest, sub_slots = 48)]
struct SubSlotsWithoutBitmap {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    guest: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = dya, holder = guest, status = free)]
struct Misspelt {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    guest: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = room, holder = guest)]
struct SameField {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    guest: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, holder = guest, bitmap = half_hours, sub_slots = 48)]
struct Both {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    guest: Option<String>,
    half_hours: i64,
}

fn main() {}

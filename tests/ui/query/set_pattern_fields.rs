// The fields a pattern's own handle writes have no typed setter: an attribute array, a grid's
// holder and bitmap, a tree's key.
use pattern_runtime::query::Update;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct Spec {
    name: String,
    value: f64,
}

#[derive(Serialize, Deserialize, Model)]
struct Record {
    #[serde(rename = "_id")]
    id: u32,
    #[attribute]
    specs: Vec<Spec>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, holder = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    booked_by: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, bitmap = half_hours, sub_slots = 48)]
struct MeetingDay {
    #[serde(rename = "_id")]
    id: String,
    room: String,
    day: String,
    half_hours: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
struct Genre {
    #[serde(rename = "_id")]
    id: u32,
    slug: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn main() {
    let _ = Update::new().set(Record::FIELDS.specs, Vec::<Spec>::new());
    let _ = Update::new().set(RoomDay::FIELDS.booked_by, Some("ada".to_owned()));
    let _ = Update::new().set(MeetingDay::FIELDS.half_hours, 0_i64);
    let _ = Update::new().set(Genre::FIELDS.slug, "rock");
    // What the grid and the tree do not keep is the model's own.
    let _ = Update::new().set(RoomDay::FIELDS.room, "101");
}

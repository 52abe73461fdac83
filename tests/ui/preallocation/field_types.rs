// A slot's resource and slot name it (strings, integers, ObjectIds, dates); its holder is an
// Option, `None` while free.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[preallocated(resource = room, slot = day, holder = guest)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: String,
    room: f64,
    day: Vec<u8>,
    guest: String,
}

fn main() {}

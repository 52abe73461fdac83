// A two-way relation's array as an outlier array: overflow documents would hide children from
// `assign` and from the relation's check.
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Board {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 2, overflow = "board_pins", flag = crowded, count = pin_count)]
    #[relation(inverse = board)]
    pins: Vec<Ref<Pin>>,
    crowded: bool,
    pin_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Pin {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = pins)]
    board: Ref<Board>,
}

fn main() {}

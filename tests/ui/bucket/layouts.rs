use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

// Two layouts at once.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", rollup, slots = "1s", summary(speed(sum)))]
struct TwoLayouts {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

// A rollup keeps one document per window: no `max_count`; and it keeps only summaries.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", rollup, max_count = 60)]
struct RollupCapped {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

// Slots that do not divide the window, and a nest without slots.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", slots = "7s")]
struct Uneven {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1h", nest = "1m", max_count = 10)]
struct NestAlone {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

// A nest that is not a multiple of the slot dividing the window.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1h", slots = "2s", nest = "7s")]
struct NestUneven {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

// Slots with nothing to store, and a value field whose stored name is a path.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", slots = "1s")]
struct Empty {
    seg_id: String,
    ts: bson::DateTime,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", slots = "1s")]
struct Dotted {
    seg_id: String,
    ts: bson::DateTime,
    #[serde(rename = "speed.kmh")]
    speed: i32,
}

// A key stored under a name the window uses, and a week of seconds in one document.
#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", rollup, summary(speed(sum)))]
struct KeyClash {
    #[serde(rename = "speed_num")]
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1w", slots = "1s")]
struct Week {
    seg_id: String,
    ts: bson::DateTime,
    speed: f64,
}

fn main() {}

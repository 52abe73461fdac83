use pattern_runtime::Measurement;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(key = seg_id, time = ts, span = "1m", rollup, summary(speed(sum)))]
struct SpeedMinute {
    seg_id: String,
    ts: bson::DateTime,
    speed: i32,
}

async fn read(db: mongodb::Database, from: bson::DateTime, to: bson::DateTime) {
    // A rollup keeps sums, not measurements: `range` does not compile; `summary` does.
    let _ = SpeedMinute::series(&db).range("I80_mile23", from, to).await;
    let _ = SpeedMinute::series(&db).summary("I80_mile23", from, to).await;
}

fn main() {
    let _ = read;
}

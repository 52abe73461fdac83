use bson::doc;
use pattern_runtime::query::Sort;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
struct Ranked {
    #[serde(rename = "_id")]
    id: i64,
    #[index(-1)]
    score: i64,
    note: String,
}

async fn run(db: mongodb::Database, last: Ranked) -> pattern_runtime::Result<()> {
    let f = Ranked::FIELDS;
    // No index has `note` first.
    let _ = Ranked::collection(&db)
        .find(doc! {})
        .sort(Sort::asc(f.note).then_asc(f.id))
        .after(&last)
        .await?;
    Ok(())
}

fn main() {
    let _ = run;
}

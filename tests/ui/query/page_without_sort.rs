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
    // A keyset page needs a sort: documents come after `last` in an order.
    let _ = Ranked::collection(&db).find(doc! {}).after(&last).await?;
    let _ = Sort::asc(Ranked::FIELDS.score);
    Ok(())
}

fn main() {
    let _ = run;
}

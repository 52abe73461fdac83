use bson::doc;
use pattern_runtime::query::Sort;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
#[index(keys(tags = 1))]
struct Item {
    #[serde(rename = "_id")]
    id: i64,
    #[index(sparse)]
    code: Option<String>,
    #[index(partial(rank(gt = 0)))]
    rank: i64,
    tags: Vec<String>,
}

async fn run(db: mongodb::Database, last: Item) -> pattern_runtime::Result<()> {
    let (items, f) = (Item::collection(&db), Item::FIELDS);
    // A sparse index leaves out the documents without `code`: it cannot sort them all.
    let _ = items.find(doc! {}).sort(Sort::asc(f.code).then_asc(f.id)).after(&last).await?;
    // A partial index only holds the documents of its filter.
    let _ = items.find(doc! {}).sort(Sort::asc(f.rank).then_asc(f.id)).after(&last).await?;
    // An array sorts by one of its items: a page after it has no single place.
    let _ = items.find(doc! {}).sort(Sort::asc(f.tags).then_asc(f.id)).after(&last).await?;
    Ok(())
}

fn main() {
    let _ = run;
}

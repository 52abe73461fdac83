// `References::update` writes around a versioned source's revisions: its own `update` and `save`
// keep its copies and archive each revision. While `References`' writes take `M: Referenced` on
// their `impl` block, rustc reports the call as E0599 and names the unmet bound alone; with the
// bound on each write itself (a runtime change), the error is `Referenced`'s own message.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "sheet_revisions")]
#[extended_ref(SheetRef(title))]
struct Sheet {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Binder {
    #[serde(rename = "_id")]
    id: u32,
    #[extended_ref(propagate)]
    sheet: SheetRef,
}

async fn writes(db: mongodb::Database) {
    let _ = Sheet::collection(&db)
        .update(1, bson::doc! { "$set": { "title": "Q3" } })
        .await;
}

fn main() {
    let _ = writes;
}

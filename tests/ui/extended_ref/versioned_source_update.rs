// A versioned source's `update` names the version it read: its own writes keep its copies and
// archive each revision.
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

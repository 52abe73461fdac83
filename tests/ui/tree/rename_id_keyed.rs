// A tree named by `_id` has no rename: an `_id` never changes.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
struct Folder {
    #[serde(rename = "_id")]
    id: String,
    title: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

async fn rename(db: &mongodb::Database) {
    let _ = Folder::collection(db).tree().rename("a", "b").await;
}

fn main() {
    let _ = rename;
}

// A tree's operations take its key type: an operator document or a number where the key is a
// `String` does not compile.
use pattern_runtime::{Model, Tree};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
struct Category {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

async fn misuse(db: mongodb::Database) {
    let tree = Tree::<Category>::new(&db);
    let _ = tree.get(bson::doc! { "$gt": "" }).await;
    let _ = tree.move_under("a", 5).await;
}

fn main() {
    let _ = misuse;
}

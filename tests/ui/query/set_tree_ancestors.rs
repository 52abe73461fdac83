use pattern_runtime::query::Update;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
struct Category {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn main() {
    let _ = Update::new().push(Category::FIELDS.ancestors, "root".to_owned());
}

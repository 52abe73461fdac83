// Every field a tree declares holds its key type: `Option<K>` for the parent, `Vec<K>` for the
// ancestors and a holder's path, `K` (or `Option<K>`) for a holder's node.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Category {
    #[serde(rename = "_id")]
    id: u64,
    name: String,
    parent: Option<u64>,
    ancestors: String,
}

#[derive(Serialize, Deserialize, Model)]
#[in_tree(Category, node = category, path = path)]
struct Product {
    #[serde(rename = "_id")]
    id: u64,
    category: Vec<String>,
    path: Vec<u64>,
}

fn main() {}

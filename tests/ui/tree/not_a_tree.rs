// A holder names the node model of a tree.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Category {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[in_tree(Category, node = category, path = category_path)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    category: String,
    category_path: Vec<String>,
}

fn main() {}

// A `#[versioned]` model can be neither a tree's node nor sit in a tree: each refusal says what
// to do instead.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
struct Folder {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "page_revisions")]
#[tree(parent = parent, ancestors = ancestors)]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "document_revisions")]
#[in_tree(Folder, node = folder, path = folder_path)]
struct Document {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    folder: String,
    folder_path: Vec<String>,
}

fn main() {}

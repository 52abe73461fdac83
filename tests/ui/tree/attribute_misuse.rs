// Each mistake in `#[tree]` and `#[in_tree]` is one error at its token, with what to write.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, depth = level)]
struct Unknown {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent)]
struct Missing {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestor)]
struct Misspelt {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = id)]
struct KeyIsId {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "versioned_revisions")]
#[tree(parent = parent, ancestors = ancestors)]
struct Versioned {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
struct OnAField {
    #[serde(rename = "_id")]
    id: String,
    #[tree(parent)]
    parent: Option<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[in_tree(Unknown, node = path, path = path)]
struct SameField {
    #[serde(rename = "_id")]
    id: String,
    path: Vec<String>,
}

fn main() {}

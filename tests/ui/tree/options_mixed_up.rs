// The key, `parent` and `ancestors` name three different fields; when two name the same one,
// the error points at the option the field's type does not fit, and says what each must name.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// `key` names the ancestors field (a `Vec`): the key is wrong.
#[derive(Serialize, Deserialize, Model)]
#[tree(key = ancestors, parent = parent, ancestors = ancestors)]
struct KeyIsAncestors {
    #[serde(rename = "_id")]
    id: u64,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

// `ancestors` names the key, `_id`.
#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = id)]
struct AncestorsIsTheKey {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    path: Vec<String>,
}

// `ancestors` names the parent field (an `Option`): `ancestors` is wrong.
#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = parent)]
struct AncestorsIsParent {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    path: Vec<String>,
}

// `parent` names the ancestors field (a `Vec`): `parent` is wrong.
#[derive(Serialize, Deserialize, Model)]
#[tree(parent = ancestors, ancestors = ancestors)]
struct ParentIsAncestors {
    #[serde(rename = "_id")]
    id: String,
    up: Option<String>,
    ancestors: Vec<String>,
}

// `key` names the parent field.
#[derive(Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = parent)]
struct KeyIsParent {
    #[serde(rename = "_id")]
    id: u64,
    slug: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn main() {}

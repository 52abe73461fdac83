// `#[in_tree(.., copy = ..)]` names a `propagate` extended reference to the tree's node model.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
#[extended_ref(ShelfRef(label))]
struct Shelf {
    #[serde(rename = "_id")]
    id: String,
    label: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[extended_ref(BrandRef(name))]
struct Brand {
    #[serde(rename = "_id")]
    id: String,
    name: String,
}

// A frozen copy cannot follow the node.
#[derive(Serialize, Deserialize, Model)]
#[in_tree(Shelf, node = shelf_id, path = shelf_path, copy = shelf)]
struct Frozen {
    #[serde(rename = "_id")]
    id: u32,
    shelf_id: String,
    shelf_path: Vec<String>,
    #[extended_ref(snapshot)]
    shelf: ShelfRef,
}

// A copy of another model is not the node's.
#[derive(Serialize, Deserialize, Model)]
#[in_tree(Shelf, node = shelf_id, path = shelf_path, copy = brand)]
struct OtherModel {
    #[serde(rename = "_id")]
    id: u32,
    shelf_id: String,
    shelf_path: Vec<String>,
    #[extended_ref(propagate)]
    brand: BrandRef,
}

fn main() {}

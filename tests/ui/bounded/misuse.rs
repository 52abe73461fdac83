use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    // Not an array.
    #[bounded(20)]
    name: String,
    // A bound of nothing, and one that is no number.
    #[bounded(0)]
    tags: Vec<String>,
    #[bounded("20")]
    labels: Vec<String>,
    // Never stored.
    #[serde(skip)]
    #[bounded(3)]
    cache: Vec<String>,
    // Twice.
    #[bounded(3)]
    #[bounded(4)]
    sizes: Option<Vec<u32>>,
}

// On a variant of an enum model: refused, not ignored.
#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Shape {
    Polygon {
        _id: i64,
        #[bounded(8)]
        points: Vec<i64>,
    },
}

fn main() {}

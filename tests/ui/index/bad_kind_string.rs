use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Place {
    #[serde(rename = "_id")]
    id: u32,
    #[index("2d_sphere")]
    location: bson::Document,
}

fn main() {}

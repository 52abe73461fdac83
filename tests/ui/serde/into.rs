use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(into = "Plain")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(Serialize)]
struct Plain {
    id: String,
}

impl From<Product> for Plain {
    fn from(p: Product) -> Plain {
        Plain { id: p.id }
    }
}

fn main() {}

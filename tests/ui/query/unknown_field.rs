use pattern_runtime::query::Filter;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

mod hex {
    pub fn serialize<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        serde::Deserialize::deserialize(d)
    }
}

#[derive(Serialize, Deserialize, Fields)]
struct Dims {
    weight: u32,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "product_revisions")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    name: String,
    price: f64,
    tags: Vec<String>,
    nickname: Option<String>,
    dims: Dims,
    items: Vec<Dims>,
    #[serde(with = "hex")]
    hex: String,
}

fn main() {
    let f = Product::FIELDS;
    let _ = Filter::eq(f.nmae, "x");
}

//! `Ref<T>` holds `T`'s `_id` type: a reference built from another type of id, or to another
//! model, does not compile, and rustc names both types.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Host {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation]
    parts: Vec<Ref<Part>>,
}

#[derive(Serialize, Deserialize, Model)]
struct LogMessage {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(parent)]
    host: Ref<Host>,
}

/// A part's `_id` is an `ObjectId`, not an integer.
fn by_number() -> Ref<Part> {
    Ref::<Part>::new(42)
}

/// A host's id is not a part's.
fn part_of(host: &Host) -> Ref<Part> {
    Ref::new(host.id)
}

/// A reference to a part where a host's is expected.
fn logged_on(part: &Part) -> LogMessage {
    LogMessage {
        id: ObjectId::new(),
        host: Ref::to(part),
    }
}

/// A host's reference in a product's parts.
fn with_host(product: &mut Product, host: Ref<Host>) {
    product.parts.push(host);
}

fn main() {}

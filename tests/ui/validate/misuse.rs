use pattern_runtime::{Fields, Measurement, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Sku(String);

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    // Not a BSON type alias (a misspelt one gets a suggestion).
    #[validate(bson_type = "strnig")]
    sku: Sku,
    #[validate(bson_type = ["long", "integer"])]
    code: i64,
    // An empty list.
    #[validate(bson_type = [])]
    alias: Sku,
    // Unknown option, and a repeated one.
    #[validate(bsontype = "string")]
    label: Sku,
    #[validate(skip, skip)]
    note: Sku,
    // Both: contradictory.
    #[validate(skip, bson_type = "string")]
    other: Sku,
    // Nothing said.
    #[validate]
    empty: Sku,
    #[validate()]
    blank: Sku,
    // Not a string.
    #[validate(bson_type = string)]
    bare: Sku,
    // Never stored.
    #[serde(skip)]
    #[validate(skip)]
    cache: Option<Sku>,
    // Twice.
    #[validate(skip)]
    #[validate(bson_type = "string")]
    twice: Sku,
}

// The same rules on `Fields` and `Measurement` structs.
#[derive(Serialize, Deserialize, Fields)]
struct Excerpt {
    #[validate(bson_type = "text")]
    body: Sku,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(collection = "readings", key = sensor, time = at, max_count = 10, span = "1h")]
struct Reading {
    sensor: String,
    at: bson::DateTime,
    #[validate(bson_type = "float")]
    value: Sku,
}

fn main() {}

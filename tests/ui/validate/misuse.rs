use pattern_runtime::{Fields, Measurement, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Sku(String);

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    // Not a BSON type alias (a misspelt one gets a suggestion).
    #[json_schema(bson_type = "strnig")]
    sku: Sku,
    #[json_schema(bson_type = ["long", "integer"])]
    code: i64,
    // An empty list.
    #[json_schema(bson_type = [])]
    alias: Sku,
    // Unknown option, and a repeated one.
    #[json_schema(bsontype = "string")]
    label: Sku,
    #[json_schema(skip, skip)]
    note: Sku,
    // Both: contradictory.
    #[json_schema(skip, bson_type = "string")]
    other: Sku,
    // Nothing said.
    #[json_schema]
    empty: Sku,
    #[json_schema()]
    blank: Sku,
    // Not a string.
    #[json_schema(bson_type = string)]
    bare: Sku,
    // Never stored.
    #[serde(skip)]
    #[json_schema(skip)]
    cache: Option<Sku>,
    // Twice.
    #[json_schema(skip)]
    #[json_schema(bson_type = "string")]
    twice: Sku,
}

// The same rules on `Fields` and `Measurement` structs.
#[derive(Serialize, Deserialize, Fields)]
struct Excerpt {
    #[json_schema(bson_type = "text")]
    body: Sku,
}

#[derive(Serialize, Deserialize, Measurement)]
#[bucket(collection = "readings", key = sensor, time = at, max_count = 10, span = "1h")]
struct Reading {
    sensor: String,
    at: bson::DateTime,
    #[json_schema(bson_type = "float")]
    value: Sku,
}

fn main() {}

use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct V1 {
    name: String,
}
#[derive(Deserialize)]
struct V2 {
    name: String,
}
#[derive(Deserialize)]
struct V3 {
    name: String,
}

// A gap: no version 2.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1, V3 = 3))]
struct Gap {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<4>,
    name: String,
}

// Versions that do not increase.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V2 = 2, V1 = 1))]
struct Backwards {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<3>,
    name: String,
}

// An older version that is not below the current one.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1, V2 = 2))]
struct NotBelow {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    name: String,
}

// `missing` names no declared version.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1), missing = 7)]
struct Missing {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    name: String,
}

// No version field, then two of them.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1))]
struct NoField {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1))]
struct TwoFields {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    w: SchemaVersion<2>,
    name: String,
}

// The current version as a constant's name, not a literal.
const CURRENT: u32 = 2;
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1))]
struct NotLiteral {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<CURRENT>,
    name: String,
}

// A version field and no declaration; an unknown option; no older shapes.
#[derive(Serialize, Deserialize, Model)]
struct Undeclared {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1), mising = 1)]
struct Typo {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older())]
struct Empty {
    #[serde(rename = "_id")]
    id: u32,
    v: SchemaVersion<2>,
    name: String,
}

// On an enum model: refused with the reason.
#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
#[schema_version(older(V1 = 1))]
enum Shape {
    Circle { _id: i64, r: f64 },
}

// The version field stored under another field's name, or as the id.
#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1))]
struct AsId {
    #[serde(rename = "_id")]
    id: u32,
    #[serde(rename = "_id")]
    v: SchemaVersion<2>,
}

#[derive(Serialize, Deserialize, Model)]
#[schema_version(older(V1 = 1))]
struct Clash {
    #[serde(rename = "_id")]
    id: u32,
    #[serde(rename = "name")]
    v: SchemaVersion<2>,
    name: String,
}

fn main() {}

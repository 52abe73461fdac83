//! What `#[derive(Model)]` generates, checked without a server: serialized names through every
//! serde renaming, the schema, annotations, the `crate` override, and hygiene under
//! `#![deny(warnings)]` with the prelude's names shadowed.

#![deny(warnings, missing_docs)]

use pattern_runtime::{Annotation, IndexKind, Model, PartialOp};
use serde::{Deserialize, Serialize};

/// Generated code must name everything by absolute path: these shadow the prelude.
#[allow(dead_code)]
mod hygiene {
    use serde::{Deserialize, Serialize};

    struct Result;
    struct Ok;
    struct Err;
    struct Option;
    struct Some;
    struct None;
    struct Vec;
    struct String;
    struct Box;
    struct Clone;
    struct Copy;
    struct Debug;
    struct Default;

    /// A model declared where the prelude's names mean something else.
    #[derive(Serialize, Deserialize, pattern_runtime::Model)]
    #[serde(rename_all = "camelCase")]
    #[index(keys(first_name = 1, last_name = -1), unique, collation(locale = "en", strength = 2))]
    #[index(keys(bio = "text"), name = "bio_text")]
    pub struct Shadowed {
        #[serde(rename = "_id")]
        id: u64,
        #[index(expire_after = "1d", partial(first_name(exists = true)))]
        created_at: bson::DateTime,
        first_name: std::string::String,
        last_name: std::string::String,
        bio: std::string::String,
        #[index(sparse, hidden)]
        nickname: std::option::Option<std::string::String>,
    }
}

/// Every way serde renames a field.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Renamed {
    #[serde(rename = "_id")]
    id: u32,
    /// camelCase.
    rating_count: i64,
    /// An explicit rename wins over `rename_all`.
    #[serde(rename = "avg")]
    rating_avg: f64,
    /// A raw identifier loses its `r#`.
    r#type: std::string::String,
    /// A case heck-style converters get wrong.
    #[index]
    user_id: u32,
    /// Never stored: not a field of the schema.
    #[serde(skip)]
    #[allow(dead_code)] // never read by this test: only its absence from the schema matters
    cache: u8,
    /// Serialized through a helper: still the same key.
    #[serde(with = "millis_as_date")]
    #[index(expire_after = 60)]
    at: i64,
}

/// Stores epoch milliseconds as a BSON date: a TTL index on it is legitimate.
mod millis_as_date {
    pub fn serialize<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&bson::DateTime::from_millis(*ms), s)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let date: bson::DateTime = serde::Deserialize::deserialize(d)?;
        Ok(date.timestamp_millis())
    }
}

#[test]
fn names_follow_serde() {
    assert_eq!(Renamed::FIELDS.id, "_id");
    assert_eq!(Renamed::FIELDS.rating_count, "ratingCount");
    assert_eq!(Renamed::FIELDS.rating_avg, "avg");
    assert_eq!(Renamed::FIELDS.r#type, "type");
    assert_eq!(Renamed::FIELDS.user_id, "userId");
    let names: std::vec::Vec<(&str, &str)> = Renamed::SCHEMA
        .fields()
        .iter()
        .map(|f| (f.rust_name(), f.bson_name()))
        .collect();
    assert_eq!(
        names,
        [
            ("id", "_id"),
            ("rating_count", "ratingCount"),
            ("rating_avg", "avg"),
            ("type", "type"),
            ("user_id", "userId"),
            ("at", "at"),
        ]
    );
    assert!(
        Renamed::SCHEMA.field("cache").is_none(),
        "skipped fields are not stored"
    );
    assert_eq!(
        Renamed::SCHEMA
            .field_by_bson_name("avg")
            .unwrap()
            .rust_name(),
        "rating_avg"
    );
    assert!(Renamed::SCHEMA.field("id").unwrap().is_id());
    assert_eq!(Renamed::SCHEMA.collection(), "renameds");
    assert_eq!(Renamed::SCHEMA.name(), "Renamed");
}

#[test]
fn field_names_build_filters() {
    let filter = bson::doc! { Renamed::FIELDS.rating_count: { "$gte": 1 } };
    assert_eq!(filter, bson::doc! { "ratingCount": { "$gte": 1 } });
    assert_eq!(Renamed::FIELDS.user_id.path("x"), "userId.x");
    assert_eq!(Renamed::FIELDS.user_id.to_string(), "userId");
}

#[test]
fn schema_records_indexes_and_annotations() {
    let schema = hygiene::Shadowed::SCHEMA;
    let names: std::vec::Vec<&str> = schema.indexes().iter().map(|i| i.name()).collect();
    assert_eq!(
        names,
        [
            "firstName_1_lastName_-1",
            "bio_text",
            "createdAt_1",
            "nickname_1"
        ]
    );
    let compound = &schema.indexes()[0];
    assert!(compound.is_unique());
    assert_eq!(compound.collation().unwrap().strength, Some(2));
    assert_eq!(schema.indexes()[1].keys()[0].kind, IndexKind::Text);
    let ttl = &schema.indexes()[2];
    assert_eq!(ttl.expire_after_seconds(), Some(86_400));
    assert_eq!(ttl.partial()[0].op, PartialOp::Exists);
    assert_eq!(
        ttl.partial_filter(),
        Some(bson::doc! { "firstName": { "$exists": true } })
    );
    assert!(schema.indexes()[3].is_sparse() && schema.indexes()[3].is_hidden());
    assert_eq!(
        schema.field("first_name").unwrap().annotations(),
        [Annotation::Index {
            name: "firstName_1_lastName_-1"
        }]
    );
    assert_eq!(schema.field("last_name").unwrap().annotations(), []);
    assert_eq!(
        schema.field("created_at").unwrap().rust_type(),
        "bson::DateTime"
    );
}

#[test]
fn partial_conditions_on_one_path_merge() {
    #[derive(Serialize, Deserialize, Model)]
    #[model(collection = "ranges")]
    struct Ranged {
        #[serde(rename = "_id")]
        id: u32,
        #[index(partial(price(gt = 0, lte = 99.5), status = "on sale", discount(lt = -1)))]
        price: f64,
        status: std::string::String,
        discount: i64,
    }
    assert_eq!(
        Ranged::SCHEMA.indexes()[0].partial_filter(),
        Some(bson::doc! {
            "price": { "$gt": 0, "$lte": 99.5 },
            "status": "on sale",
            "discount": { "$lt": -1 },
        })
    );
}

/// The runtime re-exported under another path.
mod runtime_alias {
    pub use pattern_runtime::*;
}

#[derive(Serialize, Deserialize, runtime_alias::Model)]
#[model(crate = "crate::runtime_alias", collection = "aliased")]
struct Aliased {
    #[serde(rename = "_id")]
    id: u32,
    #[index(-1)]
    n: i32,
}

#[test]
fn crate_override_is_used() {
    assert_eq!(Aliased::SCHEMA.collection(), "aliased");
    assert_eq!(Aliased::SCHEMA.indexes()[0].name(), "n_-1");
}

#[test]
fn every_model_is_registered() {
    let names: std::vec::Vec<&str> = pattern_runtime::registered_models()
        .iter()
        .map(|s| s.name())
        .collect();
    for expected in ["Shadowed", "Renamed", "Aliased", "Ranged"] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
}

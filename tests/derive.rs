//! What `#[derive(Model)]` generates, checked without a server: serialized names through every
//! serde renaming, the schema, annotations, the `crate` override, and hygiene under
//! `#![deny(warnings)]` with the prelude's names shadowed.

#![deny(warnings, missing_docs)]

use pattern_runtime::index::{IndexKind, PartialOp};
use pattern_runtime::{Annotation, Model};
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
    let names: std::vec::Vec<&str> = pattern_runtime::sync::registered_models()
        .iter()
        .map(|s| s.name())
        .collect();
    for expected in ["Shadowed", "Renamed", "Aliased", "Ranged"] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
}

/// A model that also derives `validator::Validate`, `schemars::JsonSchema` and
/// `utoipa::ToSchema`, the everyday companions in a web service, each with its own attributes:
/// it compiles, and each derive does its job. The toolkit's field attribute for the server's
/// validator is `#[json_schema(..)]`, so `#[validate(..)]` stays the `validator` crate's (and
/// `schemars` reads it too).
mod coexisting {
    use pattern_runtime::validator::ValidatorOptions;
    use pattern_runtime::Model;
    use serde::{Deserialize, Serialize};
    use validator::Validate;

    /// A sign-up, stored, validated, described for JSON Schema and for OpenAPI.
    #[derive(
        Debug, Serialize, Deserialize, Model, Validate, schemars::JsonSchema, utoipa::ToSchema,
    )]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "signups")]
    #[schemars(title = "Signup")]
    #[schema(title = "Signup")]
    struct Signup {
        #[serde(rename = "_id")]
        id: String,
        #[validate(email)]
        #[index(unique)]
        #[schema(example = "ada@example.com")]
        email_address: String,
        #[validate(length(min = 1, max = 20))]
        #[schemars(description = "shown to others")]
        display_name: String,
        #[json_schema(skip)]
        #[schema(value_type = String)]
        referrer: String,
    }

    fn signup(email: &str, name: &str) -> Signup {
        Signup {
            id: "s1".to_owned(),
            email_address: email.to_owned(),
            display_name: name.to_owned(),
            referrer: String::new(),
        }
    }

    #[test]
    fn each_derive_does_its_job() {
        // validator: `#[validate(..)]` is its own.
        assert!(signup("ada@example.com", "Ada").validate().is_ok());
        let errors = signup("not an email", "").validate().unwrap_err();
        let fields = errors.field_errors();
        assert!(fields.contains_key("email_address"), "{errors}");
        assert!(fields.contains_key("display_name"), "{errors}");

        // schemars: serde's names, and the `validate` rules it reads.
        let schema = serde_json::to_value(schemars::schema_for!(Signup)).unwrap();
        assert_eq!(schema["title"], "Signup");
        let properties = &schema["properties"];
        assert_eq!(properties["emailAddress"]["format"], "email");
        assert_eq!(properties["displayName"]["minLength"], 1);
        assert_eq!(properties["displayName"]["description"], "shown to others");

        // utoipa: its `#[schema(..)]`.
        let openapi = serde_json::to_value(<Signup as utoipa::PartialSchema>::schema()).unwrap();
        assert_eq!(openapi["title"], "Signup");
        assert_eq!(
            openapi["properties"]["emailAddress"]["example"],
            "ada@example.com"
        );

        // The toolkit: its index under serde's name, and its validator with the field it was
        // told to leave unchecked.
        assert_eq!(Signup::SCHEMA.indexes()[0].name(), "emailAddress_1");
        let validator = Signup::SCHEMA.validator(&ValidatorOptions::new()).unwrap();
        let properties = validator
            .get_document("$jsonSchema")
            .unwrap()
            .get_document("properties")
            .unwrap();
        assert_eq!(
            properties.get_document("emailAddress").unwrap(),
            &bson::doc! { "bsonType": "string" }
        );
        assert_eq!(
            properties.get_document("referrer").unwrap(),
            &bson::doc! {},
            "`#[json_schema(skip)]`: anything"
        );
    }
}

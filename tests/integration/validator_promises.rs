//! A newcomer's review of server-side validators (`pattern_runtime::validator`), written from the
//! documentation alone: the `$jsonSchema` of many field types, hostile documents written around
//! the toolkit, drift, concurrent syncs, the doctor's count, and the patterns' own writes
//! (versioning, outlier, tree, extended reference, attribute, schema versioning) under
//! `strict().error().forbid_other_fields()` validators.

use pattern_runtime::At;
use std::collections::HashMap;

use bson::{doc, oid::ObjectId, Bson, Document};
use futures_util::TryStreamExt;
use pattern_runtime::doctor::Check;
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::validator::{
    refused_documents, sync_validators, ValidatorOptions, ValidatorReport, ValidatorState,
};
use pattern_runtime::{doctor, tree::Deletion, DoctorOptions, Error, Fields, Model, SyncOptions};
// These tests install validators themselves.
use pattern_testkit::test_db_unvalidated as test_db;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvInner {
    x: i32,
    note: Option<String>,
}

/// A struct that holds itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvComment {
    text: String,
    replies: Vec<NvComment>,
}

mod nv_as_text {
    pub fn serialize<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_kinds")]
#[serde(rename_all = "camelCase")]
struct NvKinds {
    #[serde(rename = "_id")]
    id: i64,
    big_number: u64,
    count: u32,
    tiny: i8,
    ratio: f32,
    aliases: Option<Vec<String>>,
    scores: Vec<Option<i32>>,
    tally: HashMap<String, i32>,
    triple: [i32; 3],
    inner: Box<NvInner>,
    thread: NvComment,
    #[serde(rename = "label")]
    title: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    maybe: Option<i32>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    extras: Vec<String>,
    #[serde(with = "nv_as_text")]
    code: i64,
    #[bounded(3)]
    tags: Vec<String>,
}

fn kinds(id: i64) -> NvKinds {
    NvKinds {
        id,
        big_number: 42,
        count: 7,
        tiny: -3,
        ratio: 0.5,
        aliases: Some(vec!["a".into()]),
        scores: vec![Some(1), None, Some(3)],
        tally: HashMap::from([("k".to_owned(), 1)]),
        triple: [1, 2, 3],
        inner: Box::new(NvInner { x: 1, note: None }),
        thread: NvComment {
            text: "root".into(),
            replies: vec![NvComment {
                text: "child".into(),
                replies: vec![],
            }],
        },
        title: "kinds".into(),
        maybe: None,
        extras: vec![],
        code: 12,
        tags: vec!["t".into()],
    }
}

fn raw_kinds(id: i64) -> Document {
    bson::serialize_to_document(&kinds(id)).unwrap()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_articles")]
#[versioned(history = "nv_article_revisions")]
struct NvArticle {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
    words: u32,
    tags: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvPost {
    n: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nv_stars")]
#[serde(rename_all = "camelCase")]
struct NvStar {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 5, overflow = "nv_star_posts", capacity = 10, flag = is_outlier, count = posts_count)]
    posts: Vec<NvPost>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct NvCategory {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_shelf_items")]
#[serde(rename_all = "camelCase")]
#[in_tree(NvCategory, node = direct_category, path = category_path)]
struct NvShelfItem {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    direct_category: String,
    category_path: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nv_customers")]
#[serde(rename_all = "camelCase")]
#[extended_ref(NvCustomerRef(name, city), derive(PartialEq))]
struct NvCustomer {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[serde(rename = "fullName")]
    name: String,
    city: String,
    loyalty_points: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nv_orders")]
struct NvOrder {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    #[serde(rename = "customerSnapshot")]
    customer: NvCustomerRef,
    #[extended_ref(propagate)]
    reviewers: Option<Vec<NvCustomerRef>>,
    total: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct NvSpec {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_records")]
struct NvRecord {
    #[serde(rename = "_id")]
    id: i32,
    #[attribute]
    attributes: Vec<NvSpec>,
}

/// Version 1 of a user: one name.
#[derive(Deserialize)]
struct NvUserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_users")]
#[schema_version(older(NvUserV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NvUser {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    full_name: String,
    initials: String,
}

impl From<NvUserV1> for NvUser {
    fn from(v: NvUserV1) -> Self {
        NvUser {
            id: v.id,
            schema_version: SchemaVersion,
            initials: v.name.chars().take(1).collect(),
            full_name: v.name,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(tag = "type", rename_all = "lowercase")]
#[model(collection = "nv_notes")]
enum NvNote {
    Text {
        #[serde(rename = "_id")]
        id: i64,
        body: String,
    },
    Link {
        #[serde(rename = "_id")]
        id: i64,
        url: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A change made to a good document.
type Change = Box<dyn Fn(&mut Document)>;

fn closed() -> ValidatorOptions {
    ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields()
}

async fn collection_options(db: &mongodb::Database, name: &str) -> Option<Document> {
    let found: Vec<Document> = db
        .run_cursor_command(doc! { "listCollections": 1, "filter": { "name": name } })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    found
        .first()
        .map(|c| c.get_document("options").cloned().unwrap_or_default())
}

fn installed(report: &ValidatorReport) {
    for m in &report.models {
        assert!(
            matches!(m.state, ValidatorState::Created | ValidatorState::Applied),
            "{report:?}"
        );
    }
}

/// Inserts `d` with the driver and returns the `fields` of the `ValidationFailed` it must be.
async fn refused_fields(raw: &mongodb::Collection<Document>, d: Document) -> Vec<String> {
    let e: Error = raw.insert_one(d).await.map_err(Error::from).unwrap_err();
    match e {
        Error::ValidationFailed { fields, .. } => fields,
        other => panic!("not ValidationFailed: {other:?}"),
    }
}

fn strs(b: &Bson) -> Vec<String> {
    match b {
        Bson::String(s) => vec![s.clone()],
        Bson::Array(a) => a
            .iter()
            .filter_map(Bson::as_str)
            .map(str::to_owned)
            .collect(),
        other => panic!("not a type list: {other:?}"),
    }
}

fn as_i64(b: &Bson) -> i64 {
    match b {
        Bson::Int32(i) => i64::from(*i),
        Bson::Int64(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The generated schema
// ---------------------------------------------------------------------------------------------

/// Promise: the module's table (integers, floats, `Option`, `Vec`, maps, arrays, `Box`, nested
/// `Fields` structs, `#[bounded(n)]` as `maxItems`), serde's names, and which fields are
/// required (not an `Option`, not `skip_serializing_if`, not a custom serializer).
#[test]
fn every_field_type_follows_the_documented_table() {
    let v = NvKinds::SCHEMA.validator(&ValidatorOptions::new()).unwrap();
    let schema = v.get_document("$jsonSchema").unwrap();
    let mut required: Vec<&str> = schema
        .get_array("required")
        .unwrap()
        .iter()
        .filter_map(Bson::as_str)
        .collect();
    required.sort_unstable();
    let mut expected = vec![
        "_id",
        "bigNumber",
        "count",
        "tiny",
        "ratio",
        "scores",
        "tally",
        "triple",
        "inner",
        "thread",
        "label",
        "tags",
    ];
    expected.sort_unstable();
    assert_eq!(required, expected);
    let p = schema.get_document("properties").unwrap();
    let prop = |name: &str| {
        p.get_document(name)
            .unwrap_or_else(|_| panic!("no property {name}: {p}"))
            .clone()
    };
    assert!(!p.contains_key("title"), "serde's rename is the key");
    assert!(!p.contains_key("big_number"), "rename_all is the key");
    // Unsigned and narrow integers carry their range (the review found an `int` of 300 in an
    // `i8` passing the validator, then failing the typed read).
    assert_eq!(
        prop("bigNumber"),
        doc! { "bsonType": ["long", "int"], "minimum": 0_i64 }
    );
    assert_eq!(
        prop("count"),
        doc! { "bsonType": ["long", "int"], "minimum": 0_i64, "maximum": i64::from(u32::MAX) }
    );
    assert_eq!(
        prop("tiny"),
        doc! { "bsonType": "int", "minimum": -128_i64, "maximum": 127_i64 }
    );
    assert_eq!(
        prop("ratio"),
        doc! { "bsonType": ["double", "int", "long"] }
    );
    let aliases = prop("aliases");
    let mut types = strs(aliases.get("bsonType").unwrap());
    types.sort_unstable();
    assert_eq!(types, ["array", "null"]);
    assert_eq!(
        aliases.get_document("items").unwrap(),
        &doc! { "bsonType": "string" }
    );
    assert_eq!(
        prop("scores"),
        doc! { "bsonType": "array", "items": { "bsonType": ["int", "null"] } }
    );
    assert_eq!(strs(prop("tally").get("bsonType").unwrap()), ["object"]);
    let triple = prop("triple");
    assert_eq!(triple.get_str("bsonType").unwrap(), "array");
    assert_eq!(
        triple.get_document("items").unwrap(),
        &doc! { "bsonType": "int" }
    );
    // `Box<T>` is `T`: the nested struct with its own required and properties.
    let inner = prop("inner");
    assert_eq!(inner.get_str("bsonType").unwrap(), "object");
    assert_eq!(inner.get_array("required").unwrap(), &vec![Bson::from("x")]);
    assert_eq!(
        inner.get_document("properties").unwrap(),
        &doc! { "x": { "bsonType": "int" }, "note": { "bsonType": ["string", "null"] } }
    );
    assert_eq!(prop("maybe"), doc! { "bsonType": ["int", "null"] });
    assert_eq!(
        prop("extras"),
        doc! { "bsonType": "array", "items": { "bsonType": "string" } }
    );
    assert_eq!(prop("code"), doc! {}, "a custom serializer: anything");
    let tags = prop("tags");
    assert_eq!(as_i64(tags.get("maxItems").unwrap()), 3, "#[bounded(3)]");
    // The recursive struct: nested, but finitely.
    let mut depth = 0;
    let mut at = prop("thread");
    while let Ok(props) = at.get_document("properties") {
        depth += 1;
        assert!(depth < 40, "the recursion does not end");
        at = props
            .get_document("replies")
            .unwrap()
            .get_document("items")
            .unwrap()
            .clone();
    }
    assert!(
        (15..=18).contains(&depth),
        "a struct nested in itself has properties for about 16 levels, got {depth}"
    );
}

// ---------------------------------------------------------------------------------------------
// Values and hostile documents
// ---------------------------------------------------------------------------------------------

/// Promise: `u32`/`u64` accept what the server's `$inc` keeps as an `int`; a float reads back
/// from any number; the typed values at their extremes pass a closed strict validator.
#[tokio::test]
async fn extreme_values_and_server_integers_pass_and_read_back() {
    let db = test_db("nv_extremes").await;
    installed(
        &sync_validators(&db, &[NvKinds::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let coll = NvKinds::collection(&db);
    let mut k = kinds(1);
    k.big_number = i64::MAX as u64;
    k.count = u32::MAX;
    k.tiny = i8::MIN;
    k.ratio = f32::MAX;
    k.triple = [i32::MIN, 0, i32::MAX];
    k.aliases = None;
    k.maybe = Some(-1);
    k.extras = vec!["e".into()];
    k.tally = HashMap::new();
    coll.raw().insert_one(&k).await.unwrap();
    assert_eq!(coll.get(1_i64).await.unwrap().unwrap(), k);
    // Written by other code: small integers as `int`, a float as an `int`.
    let raw = db.collection::<Document>("nv_kinds");
    let mut d = raw_kinds(2);
    d.insert("bigNumber", 5_i32);
    d.insert("count", 6_i32);
    d.insert("ratio", 2_i32);
    raw.insert_one(d).await.unwrap();
    // The server's `$inc` on them.
    raw.update_one(
        doc! { "_id": 2_i64 },
        doc! { "$inc": { "count": 1, "bigNumber": 1, "ratio": 1 } },
    )
    .await
    .unwrap();
    let two = coll.get(2_i64).await.unwrap().unwrap();
    assert_eq!((two.big_number, two.count, two.ratio), (6, 7, 3.0));
}

/// Promise: a write the validator refuses is `Error::ValidationFailed`, with `fields` naming
/// the failing paths as dotted paths (`address.city`, `tags.3`); nothing is stored.
#[tokio::test]
async fn hostile_documents_are_refused_naming_the_path() {
    let db = test_db("nv_hostile").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    raw.insert_one(raw_kinds(0)).await.unwrap();
    let cases: Vec<(&str, Change)> = vec![
        (
            "count",
            Box::new(|d| {
                d.insert("count", Bson::Null);
            }),
        ),
        (
            "tiny",
            Box::new(|d| {
                d.insert("tiny", 3_i64);
            }),
        ),
        (
            "label",
            Box::new(|d| {
                d.remove("label");
            }),
        ),
        (
            "bigNumber",
            Box::new(|d| {
                d.insert("bigNumber", "42");
            }),
        ),
        (
            "inner.x",
            Box::new(|d| {
                d.insert("inner", doc! { "x": "one" });
            }),
        ),
        (
            "inner.x",
            Box::new(|d| {
                d.insert("inner", doc! { "note": "no x" });
            }),
        ),
        (
            "scores.1",
            Box::new(|d| {
                d.insert("scores", bson::bson!([1, "two", null]));
            }),
        ),
        (
            "aliases.0",
            Box::new(|d| {
                d.insert("aliases", bson::bson!([1]));
            }),
        ),
        (
            "tally",
            Box::new(|d| {
                d.insert("tally", bson::bson!([1, 2]));
            }),
        ),
        (
            "tags",
            Box::new(|d| {
                d.insert("tags", bson::bson!(["a", "b", "c", "d"]));
            }),
        ),
        (
            "thread.replies.0.text",
            Box::new(|d| {
                d.insert(
                    "thread",
                    doc! { "text": "r", "replies": [{ "text": 5, "replies": [] }] },
                );
            }),
        ),
        (
            "maybe",
            Box::new(|d| {
                d.insert("maybe", "not an int");
            }),
        ),
        (
            "surprise",
            Box::new(|d| {
                d.insert("surprise", 1);
            }),
        ),
        (
            "inner.surprise",
            Box::new(|d| {
                d.insert("inner", doc! { "x": 1, "surprise": true });
            }),
        ),
    ];
    for (i, (path, change)) in cases.iter().enumerate() {
        let mut d = raw_kinds(100 + i as i64);
        change(&mut d);
        let fields = refused_fields(&raw, d).await;
        assert!(
            fields.iter().any(|f| f == path),
            "{path}: fields were {fields:?}"
        );
    }
    assert_eq!(
        raw.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing refused was stored"
    );
}

/// Promise: `forbid_other_fields` refuses undeclared fields in the model's documents *and the
/// structs in them*, whatever the key looks like (`$`-prefixed, dotted).
#[tokio::test]
async fn odd_keys_in_nested_structs_are_refused_when_other_fields_are_forbidden() {
    let db = test_db("nv_odd_keys").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    for (i, key) in ["$where", "a.b", "x.y.z", ""].into_iter().enumerate() {
        let mut d = raw_kinds(i as i64);
        let mut inner = doc! { "x": 1 };
        inner.insert(key, 1);
        d.insert("inner", inner);
        let result = raw.insert_one(d).await.map_err(Error::from);
        let e = result.expect_err(&format!("an undeclared key {key:?} was stored"));
        assert!(e.is_validation_failed(), "{key:?}: {e:?}");
        if let Error::ValidationFailed { fields, .. } = &e {
            assert!(
                fields.iter().any(|f| f.starts_with("inner")),
                "{key:?}: {fields:?}"
            );
        }
    }
    assert_eq!(raw.count_documents(doc! {}).await.unwrap(), 0);
}

/// Promise: "A struct nested in itself is an object without properties past 16 levels": a
/// wrong value shallow in the recursion is refused, one past the depth is accepted.
#[tokio::test]
async fn deep_recursion_is_checked_to_its_documented_depth() {
    let db = test_db("nv_deep").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    fn nest(levels: usize, bad_at: usize) -> Document {
        let mut at = doc! { "text": "leaf", "replies": [] };
        for level in (0..levels).rev() {
            let text: Bson = if level == bad_at {
                Bson::Int32(0)
            } else {
                Bson::from("t")
            };
            at = doc! { "text": text, "replies": [at] };
        }
        at
    }
    let mut shallow = raw_kinds(1);
    shallow.insert("thread", nest(24, 2));
    let fields = refused_fields(&raw, shallow).await;
    assert!(
        fields
            .iter()
            .any(|f| f == "thread.replies.0.replies.0.text"),
        "{fields:?}"
    );
    let mut deep = raw_kinds(2);
    deep.insert("thread", nest(24, 22));
    raw.insert_one(deep).await.unwrap();
}

/// Promise: a write the server refuses through a toolkit handle is `Error::ValidationFailed`
/// naming the field, nothing of it stored.
#[tokio::test]
async fn a_toolkit_update_refused_by_the_server_is_validation_failed() {
    let db = test_db("nv_toolkit_refused").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let computing = NvKinds::collection(&db);
    computing.insert(&kinds(1)).await.unwrap();
    let e = computing
        .update(1_i64, doc! { "$set": { "tiny": "x", "label": "changed" } })
        .await
        .unwrap_err();
    let Error::ValidationFailed { fields, .. } = &e else {
        panic!("{e:?}");
    };
    assert!(fields.iter().any(|f| f == "tiny"), "{fields:?}");
    let stored = NvKinds::collection(&db).get(1_i64).await.unwrap().unwrap();
    assert_eq!(stored, kinds(1), "nothing of the refused write is stored");
}

// ---------------------------------------------------------------------------------------------
// Installing
// ---------------------------------------------------------------------------------------------

/// Promise: the defaults are `moderate` and `warn`: "nothing refused yet".
#[tokio::test]
async fn the_defaults_refuse_nothing() {
    let db = test_db("nv_defaults").await;
    installed(
        &sync_validators(&db, &[NvKinds::SCHEMA], &ValidatorOptions::new())
            .await
            .unwrap(),
    );
    let raw = db.collection::<Document>("nv_kinds");
    raw.insert_one(doc! { "_id": 1_i64, "tiny": "not even close" })
        .await
        .unwrap();
    assert_eq!(
        refused_documents(&db, NvKinds::SCHEMA, &ValidatorOptions::new())
            .await
            .unwrap()
            .unwrap()
            .count,
        1
    );
}

/// Promise: an installed level or action that differs from the declaration (changed by hand)
/// is `Drift` and left as it is; `replace()` replaces it.
#[tokio::test]
async fn a_level_or_action_changed_by_hand_is_drift_until_replaced() {
    let db = test_db("nv_drift_level").await;
    sync_validators(&db, &[NvArticle::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    for (key, value) in [("validationLevel", "off"), ("validationAction", "error")] {
        let mut cmd = doc! { "collMod": "nv_articles" };
        cmd.insert(key, value);
        db.run_command(cmd).await.unwrap();
        let report = sync_validators(&db, &[NvArticle::SCHEMA], &ValidatorOptions::new())
            .await
            .unwrap();
        assert!(
            matches!(report.models[0].state, ValidatorState::Drift { .. }),
            "{key} = {value}: {report:?}"
        );
        assert_eq!(report.drifted().count(), 1);
        let options = collection_options(&db, "nv_articles").await.unwrap();
        assert_eq!(options.get_str(key).ok(), Some(value), "left as it is");
        let report = sync_validators(
            &db,
            &[NvArticle::SCHEMA],
            &ValidatorOptions::new().replace(),
        )
        .await
        .unwrap();
        assert!(
            matches!(report.models[0].state, ValidatorState::Replaced { .. }),
            "{report:?}"
        );
        let options = collection_options(&db, "nv_articles").await.unwrap();
        assert_eq!(options.get_str("validationLevel").ok(), Some("moderate"));
        assert_eq!(options.get_str("validationAction").ok(), Some("warn"));
        assert_eq!(
            options.get_document("validator").ok(),
            NvArticle::SCHEMA
                .validator(&ValidatorOptions::new())
                .as_ref()
        );
    }
}

/// Promise: a validator is never replaced unless asked, even by stricter options or by the
/// closed form of the same model; `replace()` then installs exactly the declaration.
#[tokio::test]
async fn forbidding_other_fields_later_is_drift_not_a_silent_tightening() {
    let db = test_db("nv_drift_closed").await;
    let open = ValidatorOptions::new().strict().error();
    sync_validators(&db, &[NvKinds::SCHEMA], &open)
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    let mut d = raw_kinds(1);
    d.insert("legacyField", "kept");
    raw.insert_one(d).await.unwrap();
    let report = sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let ValidatorState::Drift { declared, .. } = &report.models[0].state else {
        panic!("{report:?}");
    };
    assert_eq!(
        Some(&**declared),
        NvKinds::SCHEMA.validator(&closed()).as_ref()
    );
    let mut d = raw_kinds(2);
    d.insert("legacyField", "still allowed");
    raw.insert_one(d).await.unwrap();
    let report = sync_validators(&db, &[NvKinds::SCHEMA], &closed().replace())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Replaced { .. }),
        "{report:?}"
    );
    let mut d = raw_kinds(3);
    d.insert("legacyField", "refused now");
    let fields = refused_fields(&raw, d).await;
    assert!(fields.iter().any(|f| f == "legacyField"), "{fields:?}");
}

/// Promise: `sync_validators` creates a missing collection with its validator; several
/// processes starting at once must all succeed.
#[tokio::test]
async fn concurrent_syncs_on_a_missing_collection_all_succeed() {
    let db = test_db("nv_concurrent").await;
    let options = closed();
    let models = [NvKinds::SCHEMA, NvArticle::SCHEMA];
    let (a, b, c, d) = tokio::join!(
        sync_validators(&db, &models, &options),
        sync_validators(&db, &models, &options),
        sync_validators(&db, &models, &options),
        sync_validators(&db, &models, &options),
    );
    let reports = [a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap()];
    for model in 0..2 {
        let states: Vec<&ValidatorState> = reports.iter().map(|r| &r.models[model].state).collect();
        assert!(
            states
                .iter()
                .all(|s| matches!(s, ValidatorState::Created | ValidatorState::Unchanged)),
            "{states:?}"
        );
        assert!(
            states.iter().any(|s| matches!(s, ValidatorState::Created)),
            "{states:?}"
        );
    }
    let options_now = collection_options(&db, "nv_kinds").await.unwrap();
    assert_eq!(
        options_now.get_document("validator").ok(),
        NvKinds::SCHEMA.validator(&options).as_ref()
    );
}

/// Promise (module docs): an enum model has one `oneOf` branch per tag value, each requiring its
/// tag and holding its variant's fields; an unknown tag fails every branch and is named as the
/// failing field. (The brief, and `ModelSchema::validator`'s own doc, still say enums get none.)
#[tokio::test]
async fn a_polymorphic_enum_gets_one_branch_per_tag() {
    let db = test_db("nv_enum").await;
    let v = NvNote::SCHEMA
        .validator(&closed())
        .expect("an enum model has a validator");
    let schema = v.get_document("$jsonSchema").unwrap();
    assert_eq!(schema.get_array("oneOf").unwrap().len(), 2, "{schema}");
    let report = sync_validators(&db, &[NvNote::SCHEMA, NvArticle::SCHEMA], &closed())
        .await
        .unwrap();
    installed(&report);
    let raw = db.collection::<Document>("nv_notes");
    raw.insert_one(doc! { "_id": 1_i64, "type": "text", "body": "hello" })
        .await
        .unwrap();
    raw.insert_one(doc! { "_id": 2_i64, "type": "link", "url": "https://x" })
        .await
        .unwrap();
    let fields = refused_fields(&raw, doc! { "_id": 3_i64, "type": "nonsense", "body": "b" }).await;
    assert!(fields.iter().any(|f| f == "type"), "{fields:?}");
    let fields = refused_fields(&raw, doc! { "_id": 4_i64, "body": "no tag" }).await;
    assert!(fields.iter().any(|f| f == "type"), "{fields:?}");
    // A known tag with another variant's fields, a wrong type, an undeclared field.
    for bad in [
        doc! { "_id": 5_i64, "type": "link", "body": "not a link" },
        doc! { "_id": 6_i64, "type": "text", "body": 5 },
        doc! { "_id": 7_i64, "type": "text", "body": "b", "url": "https://x" },
    ] {
        let e = raw
            .insert_one(bad.clone())
            .await
            .map_err(Error::from)
            .unwrap_err();
        assert!(e.is_validation_failed(), "{bad}: {e:?}");
    }
    assert_eq!(raw.count_documents(doc! {}).await.unwrap(), 2);
    // The variants' typed writes pass.
    NvNote::collection(&db)
        .raw()
        .insert_one(NvNote::Text {
            id: 10,
            body: "typed".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        refused_documents(&db, NvNote::SCHEMA, &closed())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
}

// ---------------------------------------------------------------------------------------------
// The doctor
// ---------------------------------------------------------------------------------------------

/// Promise: the doctor counts exactly the stored documents the declared validator (default
/// options: other fields allowed) refuses, over the whole collection, listing five `_id`s.
#[tokio::test]
async fn the_doctor_counts_exactly_the_refused_documents() {
    let db = test_db("nv_doctor").await;
    // Installed closed but warning: the doctor still judges by the default options.
    sync_validators(
        &db,
        &[NvKinds::SCHEMA],
        &ValidatorOptions::new().forbid_other_fields(),
    )
    .await
    .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    let mut good = Vec::new();
    for i in 0..20 {
        let mut d = raw_kinds(i);
        match i % 4 {
            0 => {
                d.insert("extraField", "allowed by default");
            }
            1 => {
                d.insert("aliases", Bson::Null);
            }
            2 => {
                d.remove("aliases");
                d.remove("maybe");
            }
            _ => {
                d.insert("code", 5_i32);
            }
        }
        good.push(d);
    }
    raw.insert_many(good).await.unwrap();
    let bad: Vec<(i64, Change)> = vec![
        (
            101,
            Box::new(|d| {
                d.insert("tags", bson::bson!(["a", "b", "c", "d"]));
            }),
        ),
        (
            102,
            Box::new(|d| {
                d.insert("tiny", "x");
            }),
        ),
        (
            103,
            Box::new(|d| {
                d.insert("label", Bson::Null);
            }),
        ),
        (
            104,
            Box::new(|d| {
                d.remove("inner");
            }),
        ),
        (
            105,
            Box::new(|d| {
                d.insert("inner", doc! { "x": 1.5 });
            }),
        ),
        (
            106,
            Box::new(|d| {
                d.insert("scores", bson::bson!(["s"]));
            }),
        ),
        (
            107,
            Box::new(|d| {
                d.insert("thread", doc! { "text": "t", "replies": [{ "text": "u" }] });
            }),
        ),
    ];
    for (id, change) in &bad {
        let mut d = raw_kinds(*id);
        change(&mut d);
        raw.insert_one(d).await.unwrap();
    }
    let bad_ids: Vec<Bson> = bad.iter().map(|(id, _)| Bson::Int64(*id)).collect();
    let refused = refused_documents(&db, NvKinds::SCHEMA, &ValidatorOptions::new())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refused.count, 7);
    assert_eq!(refused.examples.len(), 5);
    assert!(
        refused.examples.iter().all(|id| bad_ids.contains(id)),
        "{:?}",
        refused.examples
    );
    // With the closed options the four documents with an extra field count too.
    let closed_count = refused_documents(&db, NvKinds::SCHEMA, &closed())
        .await
        .unwrap()
        .unwrap()
        .count;
    assert_eq!(closed_count, 12);
    let report = doctor(&db)
        .models(&[NvKinds::SCHEMA])
        .options(&DoctorOptions::new().sample_size(3))
        .await
        .unwrap();
    let findings: Vec<_> = report.with_check(Check::Validator).collect();
    assert_eq!(findings.len(), 1, "{report}");
    assert!(
        findings[0].figure.starts_with("7 stored documents"),
        "{}",
        findings[0].figure
    );
    assert_eq!(findings[0].documents.len(), 5);
    assert!(findings[0].documents.iter().all(|id| bad_ids.contains(id)));
}

// ---------------------------------------------------------------------------------------------
// Patterns under a strict, closed validator
// ---------------------------------------------------------------------------------------------

/// Promise: the patterns' own writes pass the validators they declare, the revisions in their
/// own collection included.
#[tokio::test]
async fn versioned_writes_pass_a_strict_closed_validator() {
    let db = test_db("nv_versioned").await;
    pattern_runtime::sync(&db)
        .models(&[NvArticle::SCHEMA])
        .await
        .unwrap();
    installed(
        &sync_validators(&db, &[NvArticle::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let articles = NvArticle::collection(&db);
    let mut a = NvArticle {
        id: 1,
        version: 0,
        title: "first".into(),
        words: 10,
        tags: None,
    };
    articles.insert(&mut a).await.unwrap();
    a.title = "second".into();
    a.tags = Some(vec!["x".into()]);
    articles.replace(&mut a).await.unwrap();
    let v = articles
        .update(
            At(1_i64, a.version),
            doc! { "$inc": { "words": 5 }, "$set": { "title": "third" } },
        )
        .await
        .unwrap()
        .version
        .expect("a versioned update's version");
    let stored = articles.get(1_i64).await.unwrap().unwrap();
    assert_eq!(
        (stored.version, stored.words, stored.title.as_str()),
        (v, 15, "third")
    );
    let revisions = articles.history(1_i64).await.unwrap().len();
    assert!(revisions >= 2, "{revisions}");
    // The revisions have their own validator now, and the revisions written above passed it.
    let options = collection_options(&db, "nv_article_revisions")
        .await
        .expect("the history collection exists");
    assert!(options.contains_key("validator"), "{options}");
    // A refused update: `ValidationFailed` naming the field, and no revision left behind.
    let e = articles
        .update(At(1_i64, v), doc! { "$set": { "title": 5 } })
        .await
        .unwrap_err();
    // (That `fields` names `title` is `refusals_through_find_and_modify_name_the_field`.)
    assert!(e.is_validation_failed(), "{e:?}");
    assert_eq!(articles.history(1_i64).await.unwrap().len(), revisions);
    assert_eq!(articles.get(1_i64).await.unwrap().unwrap(), stored);
    assert_eq!(
        refused_documents(&db, NvArticle::SCHEMA, &closed())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
}

/// Promise: an outlier's `limit` is the array's `maxItems`, and pushes past it fill overflow
/// documents: every push passes the strict, closed validator.
#[tokio::test]
async fn outlier_pushes_past_the_limit_pass_a_strict_closed_validator() {
    let db = test_db("nv_outlier").await;
    pattern_runtime::sync(&db)
        .models(&[NvStar::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    installed(
        &sync_validators(&db, &[NvStar::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let v = NvStar::SCHEMA.validator(&closed()).unwrap();
    let posts = v
        .get_document("$jsonSchema")
        .and_then(|s| s.get_document("properties"))
        .and_then(|p| p.get_document("posts"))
        .unwrap()
        .clone();
    assert_eq!(as_i64(posts.get("maxItems").unwrap()), 5, "{posts}");
    NvStar::collection(&db)
        .raw()
        .insert_one(NvStar {
            id: "s".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    let handle = NvStar::collection(&db).outlier(NvStar::FIELDS.posts);
    for n in 0..23 {
        handle
            .push(
                "s",
                NvPost {
                    n,
                    text: format!("post {n}"),
                },
            )
            .await
            .unwrap();
    }
    let items = handle.items("s").await.unwrap();
    assert_eq!(items.len(), 23);
    let star = NvStar::collection(&db).get("s").await.unwrap().unwrap();
    assert!(star.is_outlier);
    assert_eq!(star.posts_count, 23);
    assert!(star.posts.len() <= 5);
    // Around the toolkit: six embedded posts are refused.
    let raw = db.collection::<Document>("nv_stars");
    let six: Vec<Document> = (0..6_i64).map(|n| doc! { "n": n, "text": "t" }).collect();
    let fields = refused_fields(
        &raw,
        doc! { "_id": "t", "posts": six, "isOutlier": false, "postsCount": 6_i64 },
    )
    .await;
    assert!(fields.iter().any(|f| f == "posts"), "{fields:?}");
}

/// Promise: the tree's inserts, moves, renames and deletions pass strict, closed validators on
/// the nodes and the holders.
#[tokio::test]
async fn tree_writes_pass_strict_closed_validators() {
    let db = test_db("nv_tree").await;
    pattern_runtime::sync(&db)
        .models(&[NvCategory::SCHEMA, NvShelfItem::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    installed(
        &sync_validators(&db, &[NvCategory::SCHEMA, NvShelfItem::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let tree = NvCategory::collection(&db).tree();
    let node = |name: &str, parent: Option<&str>| NvCategory {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    };
    tree.insert(&node("root", None)).await.unwrap();
    tree.insert(&node("a", Some("root"))).await.unwrap();
    tree.insert(&node("b", Some("root"))).await.unwrap();
    tree.insert(&node("a1", Some("a"))).await.unwrap();
    let holders = tree.holders::<NvShelfItem>();
    holders
        .insert(&NvShelfItem {
            id: ObjectId::new(),
            name: "thing".into(),
            direct_category: "a1".into(),
            category_path: vec![],
        })
        .await
        .unwrap();
    tree.move_under("a", "b").await.unwrap();
    tree.rename("a1", "a-one").await.unwrap();
    tree.delete("a", Deletion::Reparent).await.unwrap();
    let moved = tree.get("a-one").await.unwrap().unwrap();
    assert_eq!(moved.ancestors, ["root", "b"]);
    assert!(tree.check().await.unwrap().is_clean());
    for model in [NvCategory::SCHEMA, NvShelfItem::SCHEMA] {
        assert_eq!(
            refused_documents(&db, model, &closed())
                .await
                .unwrap()
                .unwrap()
                .count,
            0
        );
    }
}

/// Promise: a source's change reaches every copy in one transaction, under strict validators;
/// a refused write (by the source's validator, or by a holder's) keeps nothing.
#[tokio::test]
async fn extended_reference_changes_pass_strict_validators_and_refusals_keep_nothing() {
    let db = test_db("nv_extref").await;
    let models = [NvCustomer::SCHEMA, NvOrder::SCHEMA];
    installed(&sync_validators(&db, &models, &closed()).await.unwrap());
    let ada = NvCustomer {
        id: ObjectId::new(),
        name: "Ada".into(),
        city: "London".into(),
        loyalty_points: 1,
    };
    NvCustomer::collection(&db).insert(&ada).await.unwrap();
    let order = NvOrder {
        id: ObjectId::new(),
        customer: NvCustomerRef::from(&ada),
        reviewers: Some(vec![NvCustomerRef::from(&ada)]),
        total: 9.5,
    };
    NvOrder::collection(&db)
        .raw()
        .insert_one(&order)
        .await
        .unwrap();
    NvCustomer::collection(&db)
        .update(
            ada.id,
            doc! { "$set": { NvCustomer::FIELDS.name: "Ada L." } },
        )
        .await
        .unwrap();
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
    assert_eq!(stored.reviewers.as_ref().unwrap()[0].name, "Ada L.");
    // Refused by the source's validator: nothing changes anywhere.
    let e = NvCustomer::collection(&db)
        .update(ada.id, doc! { "$set": { NvCustomer::FIELDS.name: 42 } })
        .await
        .unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
    // Refused by a holder's validator (a rule added by hand): the source is not changed either.
    let copy_key = NvCustomer::FIELDS.name;
    let mut rule = Document::new();
    rule.insert(copy_key, doc! { "maxLength": 8 });
    db.run_command(doc! {
        "collMod": "nv_orders",
        "validator": { "$jsonSchema": { "properties": { "customerSnapshot": { "properties": rule } } } },
        "validationLevel": "strict",
        "validationAction": "error",
    })
    .await
    .unwrap();
    let e = NvCustomer::collection(&db)
        .update(
            ada.id,
            doc! { "$set": { NvCustomer::FIELDS.name: "Ada Lovelace, Countess" } },
        )
        .await
        .unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    let source = NvCustomer::collection(&db)
        .get(ada.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        source.name, "Ada L.",
        "one transaction: the source is unchanged"
    );
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
}

/// Promise: attribute `set` and `unset` pass a strict, closed validator (items are a
/// `Fields` struct: checked, with their optional qualifier not required).
#[tokio::test]
async fn attribute_set_and_unset_pass_a_strict_closed_validator() {
    let db = test_db("nv_attribute").await;
    pattern_runtime::sync(&db)
        .models(&[NvRecord::SCHEMA])
        .await
        .unwrap();
    installed(
        &sync_validators(&db, &[NvRecord::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    NvRecord::collection(&db)
        .raw()
        .insert_one(NvRecord {
            id: 1,
            attributes: vec![],
        })
        .await
        .unwrap();
    let attrs = NvRecord::collection(&db).attributes(NvRecord::FIELDS.attributes);
    let spec = |name: &str, value: Bson, unit: Option<&str>| NvSpec {
        name: name.into(),
        value,
        unit: unit.map(str::to_owned),
    };
    attrs
        .set(1, &spec("bmi", Bson::Double(22.3), None))
        .await
        .unwrap();
    attrs
        .set(1, &spec("weight", Bson::Int32(70), Some("kg")))
        .await
        .unwrap();
    attrs
        .set(1, &spec("bmi", Bson::String("normal".into()), None))
        .await
        .unwrap();
    attrs.unset(1, "weight".to_owned()).await.unwrap();
    let stored = NvRecord::collection(&db).get(1).await.unwrap().unwrap();
    assert_eq!(
        stored.attributes,
        [spec("bmi", Bson::String("normal".into()), None)]
    );
    // Around the toolkit: an item with an undeclared key, or without its key.
    let raw = db.collection::<Document>("nv_records");
    let fields = refused_fields(
        &raw,
        doc! { "_id": 2, "attributes": [{ "name": "a", "value": 1, "extra": 1 }] },
    )
    .await;
    assert!(
        fields.iter().any(|f| f == "attributes.0.extra"),
        "{fields:?}"
    );
    let fields = refused_fields(&raw, doc! { "_id": 3, "attributes": [{ "value": 1 }] }).await;
    assert!(
        fields.iter().any(|f| f == "attributes.0.name"),
        "{fields:?}"
    );
}

/// Promise: the doctor counts documents of an older schema version as refused (they lack the
/// current fields); `converge` rewrites them under a strict, closed validator, and a toolkit
/// update of an older document upgrades it first, so it passes.
#[tokio::test]
async fn schema_versions_older_documents_are_counted_then_converge_passes_strict() {
    let db = test_db("nv_schema_version").await;
    let raw = db.collection::<Document>("nv_users");
    let mut docs = Vec::new();
    for i in 0..10_i64 {
        docs.push(if i < 4 {
            doc! { "_id": i, "name": format!("User {i}") }
        } else {
            doc! { "_id": i, "schemaVersion": 2, "fullName": format!("User {i}"), "initials": "U" }
        });
    }
    raw.insert_many(docs).await.unwrap();
    let report = doctor(&db)
        .models(&[NvUser::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    let findings: Vec<_> = report.with_check(Check::Validator).collect();
    assert_eq!(findings.len(), 1, "{report}");
    assert!(
        findings[0].figure.starts_with("4 stored documents"),
        "{}",
        findings[0].figure
    );
    // Applied to the existing collection, strict and closed: nothing stored is touched.
    let report = sync_validators(&db, &[NvUser::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Applied),
        "{report:?}"
    );
    // A toolkit update of an older document upgrades it first.
    NvUser::collection(&db)
        .update(0_i64, doc! { "$set": { "initials": "Z" } })
        .await
        .unwrap();
    let zero = NvUser::collection(&db).get(0_i64).await.unwrap().unwrap();
    assert_eq!(
        (zero.full_name.as_str(), zero.initials.as_str()),
        ("User 0", "Z")
    );
    NvUser::collection(&db).converge().await.unwrap();
    assert_eq!(
        refused_documents(&db, NvUser::SCHEMA, &closed())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
    let report = doctor(&db)
        .models(&[NvUser::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    assert_eq!(report.with_check(Check::Validator).count(), 0, "{report}");
    // A document of the old shape written around the toolkit is now refused.
    let fields = refused_fields(&raw, doc! { "_id": 99_i64, "name": "Old Shape" }).await;
    assert!(fields.iter().any(|f| f == "fullName"), "{fields:?}");
}

/// Promise (`Error::ValidationFailed::fields`): "the fields the server says broke a rule ...
/// empty when the server sent no details". A versioned `update` and a `References::update` are
/// refused through `findAndModify`, whose reply carries `errInfo.details` (naming `title` /
/// `fullName`). FINDING when written: `fields` was empty and `details` `None` (the details were
/// read from write errors only); fixed, they are read from the command's reply too.
#[tokio::test]
async fn refusals_through_find_and_modify_name_the_field() {
    let db = test_db("nv_fam_fields").await;
    installed(
        &sync_validators(&db, &[NvArticle::SCHEMA, NvCustomer::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let articles = NvArticle::collection(&db);
    let mut a = NvArticle {
        id: 1,
        version: 0,
        title: "t".into(),
        words: 1,
        tags: None,
    };
    articles.insert(&mut a).await.unwrap();
    let e = articles
        .update(At(1_i64, a.version), doc! { "$set": { "title": 5 } })
        .await
        .unwrap_err();
    let Error::ValidationFailed {
        fields, details, ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert!(details.is_some(), "{e:?}");
    assert_eq!(fields, &["title".to_owned()], "{e:?}");
    let ada = NvCustomer {
        id: ObjectId::new(),
        name: "Ada".into(),
        city: "London".into(),
        loyalty_points: 1,
    };
    NvCustomer::collection(&db).insert(&ada).await.unwrap();
    let e = NvCustomer::collection(&db)
        .update(ada.id, doc! { "$set": { NvCustomer::FIELDS.name: 42 } })
        .await
        .unwrap_err();
    let Error::ValidationFailed { fields, .. } = &e else {
        panic!("{e:?}");
    };
    assert!(fields.iter().any(|f| f == "fullName"), "{e:?}");
}

//! Server-side validators made from the models (`pattern_runtime::validator`), a file per
//! subject: the `$jsonSchema` the derive's shapes give (`shapes`), the types a user declares
//! (`declared`), installing them and their drift (`sync`), documents written around the toolkit
//! refused naming the field (`refusals`), the doctor's count of what a validator refuses
//! (`doctor_count`), the patterns' own writes under strict validators (`pattern_writes`), the
//! validators of the documents patterns keep beside a model (`companions`, and their hostile
//! input in `hostile`), and `i32` counts under strict validators (`int32`).
//!
//! This module holds the models and helpers several of those files use: `test_db` installs, for
//! a test, the validators of the models of its own module and of this one (`strict`/`error`,
//! other fields forbidden). Tests that install validators themselves open their database with
//! `test_db_unvalidated`.

use bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{
    validator::{ValidatorOptions, ValidatorReport, ValidatorState},
    Error, Fields, Measurement, Model,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct VExcerpt {
    review_id: i64,
    stars: i32,
}

/// Not `Fields`: its shape is not known, so a field of it is left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct VOpaque {
    anything: String,
}

mod as_text {
    pub fn serialize<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "v_products")]
#[serde(rename_all = "camelCase")]
struct VProduct {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    price_cents: i64,
    weight: f64,
    in_stock: bool,
    launched: DateTime,
    tags: Vec<String>,
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    discontinued: Option<DateTime>,
    opaque: VOpaque,
    #[serde(with = "as_text")]
    legacy_code: i64,
    #[subset(limit = 3, sort(stars = -1), full = VReview, parent = product_id)]
    top_reviews: Vec<VExcerpt>,
    #[summary(count = top_reviews)]
    review_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "v_reviews")]
#[serde(rename_all = "camelCase")]
struct VReview {
    #[serde(rename = "_id")]
    id: i64,
    product_id: String,
    stars: i32,
}

impl From<&VReview> for VExcerpt {
    fn from(r: &VReview) -> Self {
        VExcerpt {
            review_id: r.id,
            stars: r.stars,
        }
    }
}

fn product(id: &str) -> VProduct {
    VProduct {
        id: id.into(),
        name: format!("product {id}"),
        price_cents: 1999,
        weight: 0.5,
        in_stock: true,
        launched: DateTime::from_millis(1_700_000_000_000),
        tags: vec!["new".into()],
        note: None,
        discontinued: None,
        opaque: VOpaque {
            anything: "x".into(),
        },
        legacy_code: 7,
        top_reviews: vec![],
        review_count: 0,
    }
}

fn strict() -> ValidatorOptions {
    ValidatorOptions::new().strict().error()
}

fn raw_product(id: &str) -> Document {
    bson::serialize_to_document(&product(id)).unwrap()
}

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

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A change made to a good document.
type Change = Box<dyn Fn(&mut Document)>;

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

fn assert_installed(report: &ValidatorReport) {
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

fn as_i64(b: &Bson) -> i64 {
    match b {
        Bson::Int32(i) => i64::from(*i),
        Bson::Int64(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct CoPost {
    n: i32,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "co_articles")]
#[versioned(history = "co_article_revisions")]
struct CoArticle {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "co_stars")]
struct CoStar {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[outlier(limit = 2, overflow = "co_star_posts", capacity = 3, flag = overflowing, count = post_count)]
    posts: Vec<CoPost>,
    overflowing: bool,
    post_count: i64,
    #[approximate(sharded, shards = 3)]
    views: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "co_readings", key = sensor, time = at, max_count = 4, span = "1h")]
struct CoReading {
    sensor: String,
    at: DateTime,
    celsius: f64,
    note: Option<String>,
}

const MODELS: [&pattern_runtime::ModelSchema; 3] =
    [CoArticle::SCHEMA, CoStar::SCHEMA, CoReading::SCHEMA];

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcMeta {
    score: f64,
    big: i64,
}

/// Versioned, with a bounded array: its revisions and its bound under validators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_articles")]
#[versioned(history = "nvc_article_revisions", keep = 2)]
struct NvcArticle {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    title: String,
    body: Option<String>,
    #[bounded(3)]
    tags: Vec<String>,
    meta: NvcMeta,
    extra: Option<Document>,
}

/// Versioned with an `i32` version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_notes")]
#[versioned(history = "nvc_note_revisions")]
struct NvcNote {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i32,
    text: String,
    hits: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcPost {
    n: i32,
    text: String,
    score: Option<f64>,
    extra: Option<Document>,
}

/// Outlier + sharded counter + computed count on one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_stars")]
struct NvcStar {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[outlier(limit = 2, overflow = "nvc_star_posts", capacity = 3, flag = overflowing, count = post_count, parent = "ownerId")]
    posts: Vec<NvcPost>,
    overflowing: bool,
    post_count: i64,
    #[approximate(sharded, shards = 3)]
    views: i64,
    #[computed(count = NvcOrder, by = star_id)]
    order_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_orders")]
struct NvcOrder {
    #[serde(rename = "_id")]
    id: i64,
    star_id: String,
    amount: i64,
}

/// A newtype serde stores as its string; no `BsonShape`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NvcUnit(String);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(
    collection = "nvc_readings",
    key(site, device),
    time = at,
    max_count = 3,
    span = "1h",
    summary(celsius(min, max, sum), hits(sum))
)]
struct NvcReading {
    site: String,
    device: i64,
    at: DateTime,
    celsius: f64,
    hits: i32,
    raw: Option<f64>,
    #[json_schema(bson_type = "string")]
    unit: NvcUnit,
    extra: Option<Document>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NvcSku(String);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcDims {
    #[json_schema(bson_type = "string")]
    code: NvcSku,
    #[json_schema(skip)]
    anything: Option<Bson>,
    w: i32,
}

/// A polymorphic model, one variant with a declared field type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[model(collection = "nvc_events", derive(Clone, PartialEq))]
enum NvcEvent {
    Click {
        #[serde(rename = "_id")]
        id: i64,
        page_id: String,
        at: DateTime,
        #[json_schema(bson_type = "string")]
        sku: NvcSku,
        x: i32,
        y: Option<i32>,
    },
    View {
        #[serde(rename = "_id")]
        id: i64,
        page_id: String,
        at: DateTime,
        secs: f64,
        dims: NvcDims,
    },
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// An hour boundary.
const H0: i64 = 1_699_999_200_000;

const HOUR: i64 = 3_600_000;

fn closed() -> ValidatorOptions {
    ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields()
}

fn article(id: &str) -> NvcArticle {
    NvcArticle {
        id: id.to_owned(),
        version: 0,
        title: format!("article {id}"),
        body: None,
        tags: vec![],
        meta: NvcMeta { score: 1.5, big: 7 },
        extra: None,
    }
}

fn star(id: &str) -> NvcStar {
    NvcStar {
        id: id.to_owned(),
        name: format!("star {id}"),
        posts: vec![],
        overflowing: false,
        post_count: 0,
        views: 0,
        order_count: 0,
    }
}

fn post(n: i32) -> NvcPost {
    NvcPost {
        n,
        text: format!("post {n}"),
        score: None,
        extra: None,
    }
}

fn reading(site: &str, device: i64, ms: i64) -> NvcReading {
    NvcReading {
        site: site.to_owned(),
        device,
        at: DateTime::from_millis(ms),
        celsius: 20.0 + (ms / 1000 % 7) as f64,
        hits: 1,
        raw: None,
        unit: NvcUnit("C".into()),
        extra: None,
    }
}

/// The refusal of `result`: a validation failure naming `field`.
#[track_caller]
fn refused<T: std::fmt::Debug>(result: pattern_runtime::Result<T>, field: &str) {
    match result {
        Err(Error::ValidationFailed { fields, .. }) => {
            assert!(
                fields.iter().any(|f| f == field),
                "{field} not in {fields:?}"
            )
        }
        other => panic!("expected a validation failure naming {field}: {other:?}"),
    }
}

fn coll(db: &mongodb::Database, name: &str) -> mongodb::Collection<Document> {
    db.collection::<Document>(name)
}

async fn insert_raw(
    db: &mongodb::Database,
    collection: &str,
    d: Document,
) -> pattern_runtime::Result<()> {
    coll(db, collection)
        .insert_one(d)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

async fn update_raw(
    db: &mongodb::Database,
    collection: &str,
    filter: Document,
    update: Document,
) -> pattern_runtime::Result<()> {
    coll(db, collection)
        .update_one(filter, update)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Every document of a collection, by `_id`.
async fn dump(db: &mongodb::Database, collection: &str) -> Vec<Document> {
    coll(db, collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

async fn count(db: &mongodb::Database, collection: &str, filter: Document) -> u64 {
    coll(db, collection).count_documents(filter).await.unwrap()
}

async fn one(db: &mongodb::Database, collection: &str, id: impl Into<Bson>) -> Document {
    let id = id.into();
    coll(db, collection)
        .find_one(doc! { "_id": id.clone() })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no {id} in {collection}"))
}

/// The declared validator of `collection` among the model's.
fn declared(schema: &'static pattern_runtime::ModelSchema, collection: &str) -> Document {
    schema
        .validators(&closed())
        .into_iter()
        .find(|d| d.collection == collection)
        .unwrap_or_else(|| panic!("no validator declared for {collection}"))
        .validator
        .expect("a validator")
}

fn js(v: &Document) -> &Document {
    v.get_document("$jsonSchema").unwrap()
}

/// A sub-schema: `a.b` walks `properties`, `[]` walks `items`.
fn try_at<'a>(schema: &'a Document, path: &str) -> Option<&'a Document> {
    let mut cur = schema;
    for seg in path.split('.') {
        cur = if seg == "[]" {
            cur.get_document("items").ok()?
        } else {
            cur.get_document("properties")
                .ok()?
                .get_document(seg)
                .ok()?
        };
    }
    Some(cur)
}

#[track_caller]
fn at<'a>(schema: &'a Document, path: &str) -> &'a Document {
    try_at(schema, path).unwrap_or_else(|| panic!("no {path} in {schema}"))
}

/// The BSON types a sub-schema allows (its `bsonType`, or those of its `anyOf`/`oneOf`).
fn types(p: &Document) -> Vec<String> {
    let mut out = vec![];
    match p.get("bsonType") {
        Some(Bson::String(s)) => out.push(s.clone()),
        Some(Bson::Array(a)) => out.extend(a.iter().filter_map(|b| b.as_str().map(str::to_owned))),
        _ => {}
    }
    for k in ["anyOf", "oneOf"] {
        if let Ok(arr) = p.get_array(k) {
            for b in arr {
                if let Some(d) = b.as_document() {
                    out.extend(types(d));
                }
            }
        }
    }
    out
}

fn required(s: &Document) -> Vec<String> {
    s.get_array("required")
        .map(|a| {
            a.iter()
                .filter_map(|b| b.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn num(b: Option<&Bson>) -> Option<i64> {
    match b? {
        Bson::Int32(v) => Some(*v as i64),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) => Some(*v as i64),
        _ => None,
    }
}

fn m_doc(ms: i64) -> Document {
    doc! {
        "at": DateTime::from_millis(ms),
        "celsius": 1.5,
        "hits": 1,
        "raw": Bson::Null,
        "unit": "C",
        "extra": Bson::Null,
    }
}

fn bucket_doc(items: Vec<Document>) -> Document {
    doc! {
        "site": "north",
        "device": 1_i64,
        "start": DateTime::from_millis(H0),
        "end": DateTime::from_millis(H0 + HOUR),
        "first": DateTime::from_millis(H0),
        "last": DateTime::from_millis(H0 + 10_000),
        "count": items.len() as i32,
        "measurements": items,
    }
}

mod companions;
mod declared;
mod doctor_count;
mod hostile;
mod int32;
mod pattern_writes;
mod refusals;
mod shapes;
mod sync;

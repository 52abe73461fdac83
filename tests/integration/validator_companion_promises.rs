//! A newcomer's review, from the documentation alone, of the validators for the documents
//! patterns keep beside a model (revisions, overflow documents, counter shards, array buckets),
//! of `i32` counts under strict validators, of `#[json_schema(..)]`, of `SyncOptions::validators`,
//! of hostile input under validators and of a few combinations of patterns.
//!
//! Tests that install validators themselves open their database with `test_db_unvalidated`;
//! the others rely on `test_db`, which installs every model of this module at
//! `strict`/`error` with other fields forbidden.

use pattern_runtime::At;
use std::time::Duration;

use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::approximation::Random;
use pattern_runtime::validator::{sync_validators, ValidatorOptions, ValidatorState};
use pattern_runtime::{Error, Fields, Measurement, Model, SyncOptions};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

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

/// Versioned and the source of extended references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_authors")]
#[versioned(history = "nvc_author_revisions")]
#[extended_ref(NvcAuthorRef(name), derive(PartialEq))]
struct NvcAuthor {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    name: String,
    bio: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_books")]
struct NvcBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    #[extended_ref(propagate)]
    author: NvcAuthorRef,
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

/// Every count an `i32`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_counters")]
struct NvcCounter {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 2, overflow = "nvc_counter_items", capacity = 2, flag = big, count = item_count)]
    items: Vec<String>,
    big: bool,
    item_count: i32,
    #[approximate(batched, threshold = 3)]
    batched: i32,
    #[approximate(sampled, p = 0.3)]
    sampled: i32,
    #[approximate(sharded, shards = 2)]
    sharded: i32,
    #[computed(count = NvcTick, by = counter_id)]
    ticks: i32,
    #[computed(sum = NvcTick.weight, by = counter_id)]
    weight_sum: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_ticks")]
struct NvcTick {
    #[serde(rename = "_id")]
    id: i64,
    counter_id: i64,
    weight: i32,
}

/// A subset with `i32` computed count and sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_shelves")]
struct NvcShelf {
    #[serde(rename = "_id")]
    id: i64,
    #[subset(limit = 2, sort(at = -1), full = NvcVolume, parent = shelf_id)]
    recent: Vec<NvcVolumeExcerpt>,
    #[computed(count = recent)]
    n: i32,
    #[computed(sum = recent.pages)]
    pages: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_volumes")]
struct NvcVolume {
    #[serde(rename = "_id")]
    id: i64,
    shelf_id: i64,
    pages: i32,
    at: DateTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcVolumeExcerpt {
    volume_id: i64,
    pages: i32,
    at: DateTime,
}

impl From<&NvcVolume> for NvcVolumeExcerpt {
    fn from(v: &NvcVolume) -> Self {
        NvcVolumeExcerpt {
            volume_id: v.id,
            pages: v.pages,
            at: v.at,
        }
    }
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NvcCents(i64);

mod nvc_as_text {
    pub fn serialize<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcDims {
    #[json_schema(bson_type = "string")]
    code: NvcSku,
    #[json_schema(skip)]
    anything: Option<Bson>,
    w: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_items")]
struct NvcItem {
    #[serde(rename = "_id")]
    id: i64,
    #[json_schema(bson_type = "string")]
    sku: NvcSku,
    #[json_schema(bson_type = ["long", "int"])]
    cents: NvcCents,
    #[serde(with = "nvc_as_text")]
    #[json_schema(bson_type = "string")]
    big: u64,
    #[serde(with = "nvc_as_text")]
    loose_big: u64,
    #[json_schema(bson_type = "string")]
    alt: Option<NvcSku>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[json_schema(bson_type = "string")]
    maybe: Option<NvcSku>,
    #[json_schema(skip)]
    legacy: String,
    untyped: NvcSku,
    dims: NvcDims,
    parts: Vec<NvcDims>,
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

/// Counts the events of a page, by their common `page_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_pages")]
struct NvcPage {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = NvcEvent, by = page_id)]
    events: i64,
}

/// An enum model that reads other tags.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(tag = "type")]
#[model(collection = "nvc_logs")]
enum NvcLog {
    Line {
        #[serde(rename = "_id")]
        id: i64,
        text: String,
    },
    #[serde(other)]
    Other,
}

/// An `_id` of any type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_loose")]
struct NvcLoose {
    #[serde(rename = "_id")]
    id: Bson,
    #[outlier(limit = 1, overflow = "nvc_loose_items", capacity = 2, flag = over, count = n)]
    items: Vec<i32>,
    over: bool,
    n: i64,
    #[approximate(sharded, shards = 2)]
    hits: i64,
}

/// A group synced with its validators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "nvc_sync", collection = "nvc_sync_docs")]
#[versioned(history = "nvc_sync_doc_revisions")]
struct NvcSyncDoc {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "nvc_sync", collection = "nvc_sync_pages")]
struct NvcSyncPage {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(sharded, shards = 2)]
    hits: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(group = "nvc_sync", collection = "nvc_sync_readings", key = sensor, time = at, max_count = 5, span = "1d")]
struct NvcSyncReading {
    sensor: String,
    at: DateTime,
    v: f64,
}

/// A versioned model whose `_id` is a struct, with an unsigned version and expiring revisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcKey {
    shop: String,
    n: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_keyed")]
#[versioned(history = "nvc_keyed_revisions", expire_after = "30d")]
struct NvcKeyed {
    #[serde(rename = "_id")]
    id: NvcKey,
    #[version]
    version: u32,
    label: String,
}

/// A measurement with a sparse field, an `i32` key and summary, and a field left unchecked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "nvc_sparse", key = probe, time = at, max_count = 2, span = "1d", summary(level(min, max, sum)))]
struct NvcSparse {
    probe: i32,
    at: DateTime,
    level: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[json_schema(skip)]
    any: Bson,
}

/// An outlier with a small byte budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_blobs")]
struct NvcBlob {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 10, overflow = "nvc_blob_parts", capacity = 4, max_bytes = 2048, flag = over, count = n)]
    parts: Vec<String>,
    over: bool,
    n: i64,
}

/// A second group: a rollup series gets its windows' validator; a collection two models share
/// gets none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(group = "nvc_sync2", collection = "nvc_sync2_speeds", rollup, key = seg, time = ts, span = "1m", summary(speed(sum)))]
struct NvcSpeed {
    seg: String,
    ts: DateTime,
    speed: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "nvc_sync2", collection = "nvc_sync2_shared")]
struct NvcSharedA {
    #[serde(rename = "_id")]
    id: i64,
    a: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "nvc_sync2", collection = "nvc_sync2_shared")]
struct NvcSharedB {
    #[serde(rename = "_id")]
    id: i64,
    b: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "nvc_sync2", collection = "nvc_sync2_plain")]
struct NvcPlain {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
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

fn counter(id: i64) -> NvcCounter {
    NvcCounter {
        id,
        items: vec![],
        big: false,
        item_count: 0,
        batched: 0,
        sampled: 0,
        sharded: 0,
        ticks: 0,
        weight_sum: 0,
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

#[track_caller]
fn invalid_value<T: std::fmt::Debug>(result: pattern_runtime::Result<T>) {
    match result {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("expected Error::InvalidValue: {other:?}"),
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

#[track_caller]
fn assert_int32(d: &Document, field: &str, value: i32) {
    match d.get(field) {
        Some(Bson::Int32(v)) => assert_eq!(*v, value, "{field} in {d}"),
        other => panic!("{field} should be an Int32 {value}: {other:?} in {d}"),
    }
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

/// The `options` of a collection as `listCollections` shows them (empty when it does not exist).
async fn installed(db: &mongodb::Database, name: &str) -> Document {
    let reply = db
        .run_command(doc! { "listCollections": 1, "filter": { "name": name } })
        .await
        .unwrap();
    let batch = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    batch
        .first()
        .and_then(Bson::as_document)
        .and_then(|c| c.get_document("options").ok())
        .cloned()
        .unwrap_or_default()
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

// ---------------------------------------------------------------------------------------------
// 1. Companion validators: declared shapes, the toolkit's writes, writes around it
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn companion_validators_are_created_with_their_documented_shape() {
    let db = test_db_unvalidated("nvc_companion_shapes").await;
    let models = [NvcArticle::SCHEMA, NvcStar::SCHEMA, NvcReading::SCHEMA];
    let report = sync_validators(&db, &models, &closed()).await.unwrap();
    let mut got: Vec<(&str, &str)> = report
        .models
        .iter()
        .map(|s| (s.collection, s.documents))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("nvc_article_revisions", "revisions"),
            ("nvc_articles", "documents"),
            ("nvc_readings", "documents"),
            ("nvc_star_posts", "overflow documents"),
            ("nvc_stars", "documents"),
            ("nvc_stars.views", "counter shards"),
        ]
    );
    assert!(
        report
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Created)),
        "{report:?}"
    );
    assert_eq!(report.drifted().count(), 0);

    // Revisions: {_id: objectId, docId: <the model's _id>, version, snapshot: object,
    // archivedAt: date, deleted?: bool}.
    let v = declared(NvcArticle::SCHEMA, "nvc_article_revisions");
    let s = js(&v);
    let req = required(s);
    for f in ["docId", "version", "snapshot", "archivedAt"] {
        assert!(req.contains(&f.to_owned()), "{f} required: {s}");
    }
    assert!(!req.contains(&"deleted".to_owned()), "{s}");
    assert_eq!(types(at(s, "docId")), ["string"], "{s}");
    assert_eq!(types(at(s, "_id")), ["objectId"], "{s}");
    assert_eq!(types(at(s, "archivedAt")), ["date"], "{s}");
    assert_eq!(types(at(s, "snapshot")), ["object"], "{s}");
    assert_eq!(types(at(s, "deleted")), ["bool"], "{s}");

    // Overflow documents: {_id: string (or an objectId where two parents' ids read alike),
    // <parent>: <the model's _id>, seq, posts: [at most capacity items], full?: bool}.
    let v = declared(NvcStar::SCHEMA, "nvc_star_posts");
    let s = js(&v);
    assert_eq!(types(at(s, "_id")), ["string", "objectId"], "{s}");
    assert_eq!(types(at(s, "ownerId")), ["string"], "{s}");
    assert_eq!(num(at(s, "posts").get("maxItems")), Some(3), "{s}");
    assert!(
        types(at(s, "posts.[].n")).contains(&"int".to_owned()),
        "{s}"
    );
    assert_eq!(types(at(s, "full")), ["bool"], "{s}");
    let req = required(s);
    assert!(
        req.contains(&"ownerId".to_owned()) && req.contains(&"seq".to_owned()),
        "{s}"
    );
    assert!(!req.contains(&"full".to_owned()), "{s}");

    // Shards: {_id: {of: <the model's _id>, shard}, count}.
    let v = declared(NvcStar::SCHEMA, "nvc_stars.views");
    let s = js(&v);
    assert_eq!(types(at(s, "_id.of")), ["string"], "{s}");
    assert!(required(s).contains(&"count".to_owned()), "{s}");

    // Buckets: count 0..=max_count, at most max_count measurements without their keys.
    let v = declared(NvcReading::SCHEMA, "nvc_readings");
    let s = js(&v);
    assert_eq!(num(at(s, "count").get("maximum")), Some(3), "{s}");
    assert_eq!(num(at(s, "count").get("minimum")), Some(0), "{s}");
    assert_eq!(num(at(s, "measurements").get("maxItems")), Some(3), "{s}");
    let m = at(s, "measurements.[]");
    assert_eq!(types(at(m, "at")), ["date"], "{m}");
    assert_eq!(
        types(at(m, "unit")),
        ["string"],
        "declared by #[json_schema]: {m}"
    );
    assert!(
        try_at(m, "site").is_none() && try_at(m, "device").is_none(),
        "{m}"
    );
    for f in [
        "site",
        "device",
        "start",
        "end",
        "first",
        "last",
        "count",
        "measurements",
    ] {
        assert!(required(s).contains(&f.to_owned()), "{f} required: {s}");
    }
    // Twice: nothing to do.
    let again = sync_validators(&db, &models, &closed()).await.unwrap();
    assert!(
        again
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Unchanged)),
        "{again:?}"
    );
}

#[tokio::test]
async fn versioned_writes_pass_the_strict_revision_validator() {
    let db = test_db_unvalidated("nvc_versioned_writes").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let report = sync_validators(&db, &[NvcArticle::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        report
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Created | ValidatorState::Applied)),
        "{report:?}"
    );
    let articles = NvcArticle::collection(&db);
    for id in ["a", "b", "用户🙂", ""] {
        let mut a = article(id);
        articles.insert(&mut a).await.unwrap();
        assert_eq!(a.version, 1);
        a.title = "v2".into();
        assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));
        a.tags = vec!["x".into(), "y".into(), "z".into()];
        assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(3));
        let v = articles
            .update(
                At(id, 3),
                doc! { "$set": { "body": "text", "meta.big": 9_i64 } },
            )
            .await
            .unwrap();
        assert_eq!(v.version, Some(4));
        let saved = articles.modify(id, 3, |a| a.meta.big += 1).await.unwrap();
        assert_eq!((saved.version, saved.meta.big), (5, 10));
        assert_eq!(articles.revert(id, 4).await.unwrap(), 6);
        let history = articles.history(id).await.unwrap();
        assert!(history.len() <= 2, "keep = 2: {}", history.len());
        assert_eq!(history[0].version, 5);
        assert_eq!(articles.revision(id, 4).await.unwrap().meta.big, 9);
    }
    articles.delete("b").await.unwrap();
    assert!(articles.get("b").await.unwrap().is_none());
    let history = articles.history("b").await.unwrap();
    assert!(history[0].deleted, "the delete archived the last version");
    assert_eq!(count(&db, "nvc_articles", doc! {}).await, 3);
}

#[tokio::test]
async fn a_deleted_versioned_document_inserted_again_can_be_saved() {
    let db = test_db("nvc_versioned_again").await;
    pattern_runtime::sync(&db)
        .models(&[NvcNote::SCHEMA])
        .await
        .unwrap();
    let notes = NvcNote::collection(&db);
    let mut n = NvcNote {
        id: 7,
        version: 0,
        text: "a".into(),
        hits: 0,
    };
    notes.insert(&mut n).await.unwrap();
    n.text = "b".into();
    notes.replace(&mut n).await.unwrap();
    notes.delete(7_i64).await.unwrap();
    // The same `_id` again: a new document at version 1.
    let mut again = NvcNote {
        id: 7,
        version: 0,
        text: "c".into(),
        hits: 0,
    };
    notes.insert(&mut again).await.unwrap();
    // The first life left revisions 1 and 2 (the deleted one): the second goes on at 3.
    assert_eq!(again.version, 3);
    again.text = "d".into();
    let saved = notes.replace(&mut again).await;
    assert!(saved.is_ok(), "the second life cannot be saved: {saved:?}");
    assert_eq!(again.version, 4);
    let history = notes.history(7_i64).await.unwrap();
    let versions: Vec<(i64, bool)> = history.iter().map(|r| (r.version, r.deleted)).collect();
    assert_eq!(
        versions,
        [(3, false), (2, true), (1, false)],
        "{versions:?}"
    );
    let current = notes.get(7_i64).await.unwrap().unwrap();
    assert_eq!((current.version, current.text.as_str()), (4, "d"));
}

#[tokio::test]
async fn outlier_writes_pass_the_strict_overflow_validator() {
    let db = test_db_unvalidated("nvc_outlier_writes").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    sync_validators(&db, &[NvcStar::SCHEMA, NvcOrder::SCHEMA], &closed())
        .await
        .unwrap();
    let stars = NvcStar::collection(&db);
    for id in ["a", "b", "用户🙂", ""] {
        stars.raw().insert_one(star(id)).await.unwrap();
    }
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("a", (0..4).map(post).collect())
        .await
        .unwrap();
    for n in 4..9 {
        posts.push("a", post(n)).await.unwrap();
    }
    posts
        .push_many("b", (0..20).map(post).collect())
        .await
        .unwrap();
    posts.push("用户🙂", post(0)).await.unwrap();
    posts
        .push_many("", (0..5).map(post).collect())
        .await
        .unwrap();
    assert_eq!(
        posts.items("a").await.unwrap(),
        (0..9).map(post).collect::<Vec<_>>()
    );
    assert_eq!(posts.count("a").await.unwrap(), 9);
    assert_eq!(posts.count("b").await.unwrap(), 20);
    assert_eq!(posts.items("").await.unwrap().len(), 5);
    // a: 2 embedded, then [2,3,4] [5,6,7] [8].
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "a" }).await,
        3
    );
    for d in dump(&db, "nvc_star_posts").await {
        assert!(d.get_array("posts").unwrap().len() <= 3, "{d}");
    }
    // Removals empty an overflow document (deleted), a rebuild rewrites count and flag.
    for n in [5, 6, 7] {
        assert_eq!(posts.remove("a", &post(n)).await.unwrap(), 1);
    }
    assert_eq!(posts.remove("a", &post(0)).await.unwrap(), 1);
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "a" }).await,
        2
    );
    let state = posts.state("a").await.unwrap();
    assert_eq!(
        posts.rebuild("a").await.unwrap().repaired,
        u64::from(!state.is_consistent())
    );
    assert_eq!(state.stored_count, 5);
    assert!(posts.state("a").await.unwrap().is_consistent());
    assert!(posts.check().await.unwrap().is_clean());
    assert_eq!(
        posts.items("a").await.unwrap(),
        [1, 2, 3, 4, 8].into_iter().map(post).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn sharded_counter_writes_pass_the_strict_shard_validator() {
    let db = test_db_unvalidated("nvc_shard_writes").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let stars = NvcStar::collection(&db);
    for id in ["a", "b", "$gt"] {
        stars.raw().insert_one(star(id)).await.unwrap();
        let views = NvcStar::collection(&db)
            .counter(NvcStar::FIELDS.views)
            .of(id);
        for n in 1..=5 {
            views.add(n).await.unwrap();
        }
        views.add(-2).await.unwrap();
        assert_eq!(views.read().await.unwrap(), 13);
        assert_eq!(views.snapshot().await.unwrap(), 13);
        assert_eq!(num(one(&db, "nvc_stars", id).await.get("views")), Some(13));
        let shards = count(&db, "nvc_stars.views", doc! { "_id.of": id }).await;
        assert!((1..=3).contains(&shards), "{shards} shards");
    }
    // A snapshot of a document that does not exist writes nothing.
    let ghost = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("ghost");
    assert!(matches!(
        ghost.snapshot().await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn bucket_writes_pass_the_strict_bucket_validator() {
    let db = test_db_unvalidated("nvc_bucket_writes").await;
    sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    let series = NvcReading::series(&db);
    let mut all = vec![];
    for site in ["north", "south"] {
        for device in [1_i64, i64::MAX] {
            for hour in 0..3 {
                for i in 0..7 {
                    all.push(reading(site, device, H0 + hour * HOUR + i * 1000));
                }
            }
        }
    }
    let (batch, singles) = all.split_at(all.len() / 2);
    let report = series.insert_many(batch).await.unwrap();
    assert_eq!(report.measurements, batch.len());
    for r in singles {
        series.insert(r).await.unwrap();
    }
    // A late measurement of the first window.
    let late = reading("north", 1, H0 + 500);
    series.insert(&late).await.unwrap();
    let buckets = dump(&db, "nvc_readings").await;
    let mut stored = 0;
    for b in &buckets {
        let n = b.get_array("measurements").unwrap().len();
        assert!(n <= 3, "{b}");
        assert_eq!(num(b.get("count")), Some(n as i64), "{b}");
        stored += n;
    }
    assert_eq!(stored, all.len() + 1);
    let got: Vec<NvcReading> = series
        .range(
            ("north".to_owned(), 1_i64),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 3 * HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(got.len(), 22);
    let summary = series
        .summary(
            ("south".to_owned(), i64::MAX),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 3 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(summary.count(), 21);
    assert_eq!(summary.sum(NvcReading::FIELDS.hits).unwrap(), Some(21));
}

#[tokio::test]
async fn split_overfull_writes_pass_the_strict_bucket_validator() {
    let db = test_db_unvalidated("nvc_bucket_split").await;
    // A bucket other code filled past the cap, written before the validator was installed.
    let items: Vec<Document> = (0..5).map(|i| m_doc(H0 + i * 1000)).collect();
    insert_raw(&db, "nvc_readings", bucket_doc(items))
        .await
        .unwrap();
    let report = sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Applied),
        "{report:?}"
    );
    let series = NvcReading::series(&db);
    let split = series.split_overfull().await.unwrap();
    assert_eq!(
        (split.buckets, split.new_buckets, split.moved),
        (1, 1, 2),
        "{split:?}"
    );
    assert!(split.left.is_empty());
    let buckets = dump(&db, "nvc_readings").await;
    assert_eq!(buckets.len(), 2);
    for b in &buckets {
        let n = b.get_array("measurements").unwrap().len();
        assert_eq!(num(b.get("count")), Some(n as i64), "{b}");
    }
    assert!(series.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn revisions_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_revisions_refused").await;
    sync_validators(&db, &[NvcArticle::SCHEMA], &closed())
        .await
        .unwrap();
    let now = DateTime::now();
    let good = doc! { "docId": "a", "version": 1_i64, "snapshot": { "anything": [1, "x"] }, "archivedAt": now };
    insert_raw(&db, "nvc_article_revisions", good.clone())
        .await
        .unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert(k, v);
        d
    };
    let without = |k: &str| {
        let mut d = good.clone();
        d.remove(k);
        d
    };
    let h = "nvc_article_revisions";
    refused(
        insert_raw(&db, h, with("docId", Bson::Int64(5))).await,
        "docId",
    );
    refused(
        insert_raw(&db, h, with("version", Bson::Double(1.5))).await,
        "version",
    );
    refused(
        insert_raw(&db, h, with("version", "2".into())).await,
        "version",
    );
    refused(
        insert_raw(&db, h, with("snapshot", "text".into())).await,
        "snapshot",
    );
    refused(
        insert_raw(&db, h, with("archivedAt", "today".into())).await,
        "archivedAt",
    );
    refused(
        insert_raw(&db, h, with("deleted", "yes".into())).await,
        "deleted",
    );
    refused(insert_raw(&db, h, with("_id", "r1".into())).await, "_id");
    refused(
        insert_raw(&db, h, with("note", "extra".into())).await,
        "note",
    );
    refused(insert_raw(&db, h, without("snapshot")).await, "snapshot");
    refused(
        insert_raw(&db, h, without("archivedAt")).await,
        "archivedAt",
    );
    refused(insert_raw(&db, h, without("docId")).await, "docId");
    insert_raw(&db, h, with("deleted", true.into()))
        .await
        .unwrap();
    // An update around the toolkit.
    refused(
        update_raw(
            &db,
            h,
            doc! { "deleted": { "$exists": false } },
            doc! { "$set": { "version": "x" } },
        )
        .await,
        "version",
    );
    let stored = dump(&db, h).await;
    assert_eq!(stored.len(), 2, "nothing of the refused writes: {stored:?}");
    assert!(stored.iter().all(|d| num(d.get("version")) == Some(1)));
}

#[tokio::test]
async fn overflow_documents_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_overflow_refused").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let p = |n: i32| doc! { "n": n, "text": "t", "score": Bson::Null, "extra": Bson::Null };
    let good = doc! { "_id": "posts_a_1", "ownerId": "a", "seq": 1, "posts": [p(1), p(2), p(3)] };
    let o = "nvc_star_posts";
    insert_raw(&db, o, good.clone()).await.unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert("_id", format!("posts_a_{k}"));
        d.insert(k, v);
        d
    };
    let mut no_seq = good.clone();
    no_seq.insert("_id", "no_seq");
    no_seq.remove("seq");
    refused(insert_raw(&db, o, with("_id", Bson::Int32(5))).await, "_id");
    refused(
        insert_raw(&db, o, with("ownerId", Bson::Int64(5))).await,
        "ownerId",
    );
    refused(insert_raw(&db, o, with("seq", "1".into())).await, "seq");
    refused(insert_raw(&db, o, with("full", "yes".into())).await, "full");
    refused(insert_raw(&db, o, with("extra", 1.into())).await, "extra");
    refused(insert_raw(&db, o, no_seq).await, "seq");
    refused(
        insert_raw(
            &db,
            o,
            with(
                "posts",
                Bson::Array(vec![p(1).into(), p(2).into(), p(3).into(), p(4).into()]),
            ),
        )
        .await,
        "posts",
    );
    refused(
        insert_raw(
            &db,
            o,
            with(
                "posts",
                Bson::Array(vec![
                    doc! { "n": 1, "score": Bson::Null, "extra": Bson::Null }.into(),
                ]),
            ),
        )
        .await,
        "posts.0.text",
    );
    let mut extra_key = p(1);
    extra_key.insert("zzz", 1);
    refused(
        insert_raw(
            &db,
            o,
            with("posts", Bson::Array(vec![p(1).into(), extra_key.into()])),
        )
        .await,
        "posts.1.zzz",
    );
    refused(
        update_raw(
            &db,
            o,
            doc! { "_id": "posts_a_1" },
            doc! { "$push": { "posts": p(4) } },
        )
        .await,
        "posts",
    );
    assert_eq!(dump(&db, o).await, [good], "nothing of the refused writes");
}

#[tokio::test]
async fn shards_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_shards_refused").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let s = "nvc_stars.views";
    let good = doc! { "_id": { "of": "a", "shard": 0 }, "count": 1_i64 };
    insert_raw(&db, s, good.clone()).await.unwrap();
    refused(
        insert_raw(&db, s, doc! { "_id": "a:1", "count": 1_i64 }).await,
        "_id",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": 5_i64, "shard": 1 }, "count": 1_i64 },
        )
        .await,
        "_id.of",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": "1" }, "count": 1_i64 },
        )
        .await,
        "_id.shard",
    );
    refused(
        insert_raw(&db, s, doc! { "_id": { "of": "a", "shard": 2 } }).await,
        "count",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": 2 }, "count": "many" },
        )
        .await,
        "count",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": 2 }, "count": 1_i64, "extra": 1 },
        )
        .await,
        "extra",
    );
    refused(
        update_raw(
            &db,
            s,
            doc! { "_id.of": "a" },
            doc! { "$set": { "count": 2.5 } },
        )
        .await,
        "count",
    );
    assert_eq!(dump(&db, s).await, [good]);
}

#[tokio::test]
async fn buckets_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_buckets_refused").await;
    sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    let b = "nvc_readings";
    let good = bucket_doc(vec![m_doc(H0), m_doc(H0 + 1000)]);
    insert_raw(&db, b, good.clone()).await.unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert(k, v);
        d
    };
    let without = |k: &str| {
        let mut d = good.clone();
        d.remove(k);
        d
    };
    refused(insert_raw(&db, b, with("count", 4.into())).await, "count");
    refused(
        insert_raw(&db, b, with("count", (-1).into())).await,
        "count",
    );
    let four: Vec<Bson> = (0..4).map(|i| m_doc(H0 + i).into()).collect();
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(four))).await,
        "measurements",
    );
    refused(insert_raw(&db, b, without("end")).await, "end");
    refused(
        insert_raw(&db, b, without("measurements")).await,
        "measurements",
    );
    refused(
        insert_raw(&db, b, with("first", "soon".into())).await,
        "first",
    );
    refused(
        insert_raw(&db, b, with("device", "one".into())).await,
        "device",
    );
    refused(
        insert_raw(&db, b, with("summary", "none".into())).await,
        "summary",
    );
    refused(insert_raw(&db, b, with("other", 1.into())).await, "other");
    let mut bad = m_doc(H0);
    bad.insert("celsius", "warm");
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(vec![bad.into()]))).await,
        "measurements.0.celsius",
    );
    let mut no_time = m_doc(H0);
    no_time.remove("at");
    refused(
        insert_raw(
            &db,
            b,
            with(
                "measurements",
                Bson::Array(vec![m_doc(H0).into(), no_time.into()]),
            ),
        )
        .await,
        "measurements.1.at",
    );
    let mut keyed = m_doc(H0);
    keyed.insert("site", "north");
    refused(
        insert_raw(
            &db,
            b,
            with("measurements", Bson::Array(vec![keyed.into()])),
        )
        .await,
        "measurements.0.site",
    );
    let mut unit = m_doc(H0);
    unit.insert("unit", 5);
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(vec![unit.into()]))).await,
        "measurements.0.unit",
    );
    // Updates around the toolkit: past the count, past the items.
    refused(
        update_raw(&db, b, doc! {}, doc! { "$inc": { "count": 2 } }).await,
        "count",
    );
    refused(
        update_raw(
            &db,
            b,
            doc! {},
            doc! { "$push": { "measurements": { "$each": [m_doc(H0 + 2), m_doc(H0 + 3)] } } },
        )
        .await,
        "measurements",
    );
    let mut stored = dump(&db, b).await;
    for d in &mut stored {
        d.remove("_id");
    }
    assert_eq!(stored, [good], "nothing of the refused writes");
}

// ---------------------------------------------------------------------------------------------
// 2. i32 counts under strict validators
// ---------------------------------------------------------------------------------------------

/// A counter document with 5 items pushed (2 embedded, 3 in 2 overflow documents).
async fn counter_with_items(
    db: &mongodb::Database,
) -> pattern_runtime::Outlier<NvcCounter, String> {
    pattern_runtime::sync(db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let items = NvcCounter::collection(db).outlier(NvcCounter::FIELDS.items);
    items
        .push_many(1_i64, vec!["a".into(), "b".into(), "c".into()])
        .await
        .unwrap();
    items.push(1_i64, "d".to_owned()).await.unwrap();
    items.push(1_i64, "e".to_owned()).await.unwrap();
    items
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_pushes() {
    let db = test_db("nvc_i32_outlier_push").await;
    let items = counter_with_items(&db).await;
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
    assert_eq!(count(&db, "nvc_counter_items", doc! {}).await, 2);
    assert_eq!(items.count(1_i64).await.unwrap(), 5);
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_remove() {
    let db = test_db("nvc_i32_outlier_remove").await;
    let items = counter_with_items(&db).await;
    assert_eq!(items.remove(1_i64, &"c".to_owned()).await.unwrap(), 1);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 4);
    assert_eq!(items.items(1_i64).await.unwrap(), ["a", "b", "d", "e"]);
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_rebuild_and_repair() {
    let db = test_db("nvc_i32_outlier_rebuild").await;
    let items = counter_with_items(&db).await;
    let drift = || async {
        update_raw(
            &db,
            "nvc_counters",
            doc! { "_id": 1_i64 },
            doc! { "$set": { "itemCount": 40 } },
        )
        .await
        .unwrap()
    };
    drift().await;
    items.rebuild(1_i64).await.unwrap();
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
    drift().await;
    assert_eq!(items.repair().await.unwrap().repaired, 1);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
}

#[tokio::test]
async fn i32_approximate_counters_stay_int32() {
    let db = test_db("nvc_i32_counters").await;
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let batched = NvcCounter::collection(&db).counter(NvcCounter::FIELDS.batched);
    batched.add(1_i64, 2).await.unwrap();
    batched.add(1_i64, 2).await.unwrap();
    batched.add(1_i64, 1).await.unwrap();
    batched.flush().await.unwrap();
    let sampled = NvcCounter::collection(&db)
        .counter(NvcCounter::FIELDS.sampled)
        .with_random(Random::seeded(7));
    let mut wrote = 0;
    for _ in 0..50 {
        if sampled.add(1_i64).await.unwrap() {
            wrote += 1;
        }
    }
    assert!(wrote > 0);
    let sharded = NvcCounter::collection(&db)
        .counter(NvcCounter::FIELDS.sharded)
        .of(1_i64);
    sharded.add(5).await.unwrap();
    sharded.add(-2).await.unwrap();
    sharded.add(4).await.unwrap();
    assert_eq!(sharded.snapshot().await.unwrap(), 7);
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "batched", 5);
    assert_int32(&d, "sharded", 7);
    match d.get("sampled") {
        Some(Bson::Int32(v)) => assert!((3 * wrote..=4 * wrote).contains(v), "{v} for {wrote}"),
        other => panic!("sampled should stay an Int32: {other:?}"),
    }
}

#[tokio::test]
async fn i32_computed_count_and_sum_stay_int32() {
    let db = test_db("nvc_i32_computed").await;
    pattern_runtime::sync(&db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let ticks = NvcTick::collection(&db);
    for (id, weight) in [(1, 10), (2, 20), (3, 30)] {
        ticks
            .insert(&NvcTick {
                id,
                counter_id: 1,
                weight,
            })
            .await
            .unwrap();
    }
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 3);
    assert_int32(&d, "weightSum", 60);
    ticks
        .update(2_i64, doc! { "$set": { "weight": 25 } })
        .await
        .unwrap();
    ticks
        .replace(&NvcTick {
            id: 3,
            counter_id: 1,
            weight: 1,
        })
        .await
        .unwrap();
    ticks.delete(1_i64).await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    // Drift written around the toolkit, then recomputed: still Int32.
    update_raw(
        &db,
        "nvc_counters",
        doc! { "_id": 1_i64 },
        doc! { "$set": { "ticks": 99, "weightSum": 99 } },
    )
    .await
    .unwrap();
    let computed = NvcCounter::collection(&db).computed();
    let report = computed.check().await.unwrap();
    assert_eq!(report.findings.len(), 2, "{report}");
    computed.rebuild(1_i64).await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    update_raw(
        &db,
        "nvc_counters",
        doc! { "_id": 1_i64 },
        doc! { "$set": { "ticks": 0, "weightSum": 0 } },
    )
    .await
    .unwrap();
    computed.repair().await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    assert!(computed.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn an_i32_sum_past_i32_max_is_refused_and_nothing_is_written() {
    let db = test_db("nvc_i32_overflow").await;
    pattern_runtime::sync(&db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let ticks = NvcTick::collection(&db);
    ticks
        .insert(&NvcTick {
            id: 1,
            counter_id: 1,
            weight: i32::MAX - 5,
        })
        .await
        .unwrap();
    let before = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&before, "weightSum", i32::MAX - 5);
    let result = ticks
        .insert(&NvcTick {
            id: 2,
            counter_id: 1,
            weight: 10,
        })
        .await;
    assert!(
        matches!(
            result,
            Err(Error::ValidationFailed { .. } | Error::InvalidValue { .. })
        ),
        "{result:?}"
    );
    assert_eq!(
        count(&db, "nvc_ticks", doc! {}).await,
        1,
        "the tick is not written"
    );
    assert_eq!(one(&db, "nvc_counters", 1_i64).await, before);
}

#[tokio::test]
async fn i32_subset_count_and_sum_stay_int32() {
    let db = test_db("nvc_i32_subset").await;
    pattern_runtime::sync(&db)
        .models(&[NvcShelf::SCHEMA])
        .await
        .unwrap();
    NvcShelf::collection(&db)
        .raw()
        .insert_one(NvcShelf {
            id: 1,
            recent: vec![],
            n: 0,
            pages: 0,
        })
        .await
        .unwrap();
    let subset = NvcShelf::collection(&db).subset(NvcShelf::FIELDS.recent);
    let vol = |id: i64, pages: i32| NvcVolume {
        id,
        shelf_id: 1,
        pages,
        at: DateTime::from_millis(H0 + id * 1000),
    };
    subset.push(1_i64, vol(1, 100)).await.unwrap();
    subset
        .push_many(1_i64, vec![vol(2, 200), vol(3, 300)])
        .await
        .unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 3);
    assert_int32(&d, "pages", 600);
    assert_eq!(d.get_array("recent").unwrap().len(), 2);
    subset.remove(1_i64, 3_i64).await.unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 2);
    assert_int32(&d, "pages", 300);
    subset.rebuild(1_i64).await.unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 2);
    assert_int32(&d, "pages", 300);
}

#[tokio::test]
async fn an_i32_version_stays_int32() {
    let db = test_db("nvc_i32_version").await;
    pattern_runtime::sync(&db)
        .models(&[NvcNote::SCHEMA])
        .await
        .unwrap();
    let notes = NvcNote::collection(&db);
    let mut n = NvcNote {
        id: 1,
        version: 0,
        text: "a".into(),
        hits: 0,
    };
    notes.insert(&mut n).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 1);
    n.text = "b".into();
    notes.replace(&mut n).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 2);
    notes
        .update(At(1_i64, 2), doc! { "$inc": { "hits": 1 } })
        .await
        .unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 3);
    notes.modify(1_i64, 3, |n| n.hits += 1).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 4);
    notes.revert(1_i64, 1).await.unwrap();
    let d = one(&db, "nvc_notes", 1_i64).await;
    assert_int32(&d, "version", 5);
    assert_int32(&d, "hits", 0);
    assert_eq!(notes.history(1_i64).await.unwrap().len(), 4);
    notes.delete(1_i64).await.unwrap();
    assert_eq!(notes.history(1_i64).await.unwrap().len(), 5);
}

// ---------------------------------------------------------------------------------------------
// 3. #[json_schema(..)]
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn validate_attributes_shape_the_generated_validator() {
    let v = NvcItem::SCHEMA.validator(&Default::default()).unwrap();
    let s = js(&v);
    let req = required(s);
    let is_req = |f: &str| req.contains(&f.to_owned());
    assert_eq!(types(at(s, "sku")), ["string"]);
    assert!(is_req("sku"));
    let mut cents = types(at(s, "cents"));
    cents.sort();
    assert_eq!(cents, ["int", "long"]);
    assert!(is_req("cents"));
    assert_eq!(
        types(at(s, "big")),
        ["string"],
        "a serde(with) field declared"
    );
    assert!(is_req("big"));
    assert!(
        try_at(s, "loose_big").is_none_or(|p| types(p).is_empty()) && !is_req("loose_big"),
        "a serde(with) field without #[json_schema] is left out: {s}"
    );
    let alt = types(at(s, "alt"));
    assert!(
        alt.contains(&"string".to_owned()) && alt.contains(&"null".to_owned()),
        "{alt:?}"
    );
    assert!(!is_req("alt"));
    let maybe = types(at(s, "maybe"));
    assert!(maybe.contains(&"string".to_owned()), "{maybe:?}");
    assert!(!is_req("maybe"));
    assert!(
        try_at(s, "legacy").is_none_or(|p| types(p).is_empty()) && !is_req("legacy"),
        "skip: anything, not required: {s}"
    );
    assert!(
        try_at(s, "untyped").is_none_or(|p| types(p).is_empty()) && !is_req("untyped"),
        "no BsonShape: left out: {s}"
    );
    assert_eq!(types(at(s, "dims.code")), ["string"]);
    assert!(required(at(s, "dims")).contains(&"code".to_owned()));
    assert!(!required(at(s, "dims")).contains(&"anything".to_owned()));
    assert_eq!(types(at(s, "parts.[].code")), ["string"]);
    // The same declarations in an enum model's branch.
    let v = NvcEvent::SCHEMA.validator(&Default::default()).unwrap();
    let text = v.to_string();
    assert!(text.contains("oneOf"), "{v}");
    let branches = js(&v).get_array("oneOf").unwrap();
    assert_eq!(branches.len(), 2, "{v}");
    let click = branches
        .iter()
        .filter_map(Bson::as_document)
        .find(|b| try_at(b, "x").is_some())
        .expect("the click branch");
    assert_eq!(types(at(click, "sku")), ["string"], "{click}");
}

#[tokio::test]
async fn validate_attributes_are_enforced_by_the_server() {
    let db = test_db("nvc_validate_enforced").await;
    let dims = |code: &str| NvcDims {
        code: NvcSku(code.into()),
        anything: Some(Bson::Int32(3)),
        w: 1,
    };
    let item = NvcItem {
        id: 1,
        sku: NvcSku("S-1".into()),
        cents: NvcCents(1999),
        big: u64::MAX,
        loose_big: 1,
        alt: None,
        maybe: None,
        legacy: "old".into(),
        untyped: NvcSku("u".into()),
        dims: dims("D"),
        parts: vec![dims("P1"), dims("P2")],
    };
    NvcItem::collection(&db).insert(&item).await.unwrap();
    let mut with_all = item.clone();
    with_all.id = 2;
    with_all.alt = Some(NvcSku("A".into()));
    with_all.maybe = Some(NvcSku("M".into()));
    NvcItem::collection(&db).insert(&with_all).await.unwrap();
    assert_eq!(
        NvcItem::collection(&db).get(1_i64).await.unwrap(),
        Some(item.clone())
    );

    let good = one(&db, "nvc_items", 1_i64).await;
    let with = |id: i64, path: &str, v: Bson| {
        let mut d = good.clone();
        d.insert("_id", id);
        let mut parts: Vec<&str> = path.split('.').collect();
        let last = parts.pop().unwrap();
        let mut cur = &mut d;
        for p in parts {
            cur = match cur.get_mut(p).unwrap() {
                Bson::Document(x) => x,
                _ => unreachable!(),
            };
        }
        cur.insert(last, v);
        d
    };
    let c = "nvc_items";
    refused(insert_raw(&db, c, with(10, "sku", 5.into())).await, "sku");
    refused(
        insert_raw(&db, c, with(11, "cents", "1999".into())).await,
        "cents",
    );
    refused(
        insert_raw(&db, c, with(12, "big", Bson::Int64(5))).await,
        "big",
    );
    refused(insert_raw(&db, c, with(13, "alt", 5.into())).await, "alt");
    refused(
        insert_raw(&db, c, with(14, "maybe", 5.into())).await,
        "maybe",
    );
    refused(
        insert_raw(&db, c, with(15, "dims.code", 5.into())).await,
        "dims.code",
    );
    let mut bad_part = good.clone();
    bad_part.insert("_id", 16_i64);
    let mut parts = bad_part.get_array("parts").unwrap().clone();
    parts[1].as_document_mut().unwrap().insert("code", 5);
    bad_part.insert("parts", parts);
    refused(insert_raw(&db, c, bad_part).await, "parts.1.code");
    let mut missing = good.clone();
    missing.insert("_id", 17_i64);
    missing.remove("sku");
    refused(insert_raw(&db, c, missing).await, "sku");
    // Accepted: a skipped field of any type, a field without a shape, null in an Option.
    insert_raw(&db, c, with(20, "legacy", 5.into()))
        .await
        .unwrap();
    let mut no_legacy = good.clone();
    no_legacy.insert("_id", 21_i64);
    no_legacy.remove("legacy");
    insert_raw(&db, c, no_legacy).await.unwrap();
    insert_raw(&db, c, with(22, "untyped", 5.into()))
        .await
        .unwrap();
    insert_raw(&db, c, with(23, "alt", Bson::Null))
        .await
        .unwrap();
    insert_raw(&db, c, with(24, "maybe", Bson::Null))
        .await
        .unwrap();
    insert_raw(&db, c, with(25, "dims.anything", "any".into()))
        .await
        .unwrap();
    insert_raw(&db, c, with(26, "loose_big", true.into()))
        .await
        .unwrap();
    // Updates around the toolkit are checked too.
    refused(
        update_raw(
            &db,
            c,
            doc! { "_id": 1_i64 },
            doc! { "$set": { "dims.code": 1 } },
        )
        .await,
        "dims.code",
    );
    assert_eq!(
        NvcItem::collection(&db).get(1_i64).await.unwrap(),
        Some(item)
    );
}

#[tokio::test]
async fn a_polymorphic_model_under_strict_validators() {
    let db = test_db("nvc_polymorphic").await;
    pattern_runtime::sync(&db)
        .models(&[NvcEvent::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NvcPage::SCHEMA])
        .await
        .unwrap();
    for p in ["p1", "p2"] {
        NvcPage::collection(&db)
            .raw()
            .insert_one(NvcPage {
                id: p.into(),
                events: 0,
            })
            .await
            .unwrap();
    }
    let at0 = DateTime::from_millis(H0);
    let clicks = NvcEventClick::collection(&db);
    let views = NvcEventView::collection(&db);
    clicks
        .insert(&NvcEventClick {
            id: 1,
            page_id: "p1".into(),
            at: at0,
            sku: NvcSku("$gt".into()),
            x: 1,
            y: None,
        })
        .await
        .unwrap();
    let view = |id: i64, page: &str| NvcEventView {
        id,
        page_id: page.into(),
        at: at0,
        secs: 1.5,
        dims: NvcDims {
            code: NvcSku("c".into()),
            anything: None,
            w: 2,
        },
    };
    views
        .insert_many(&[view(2, "p1"), view(3, "p1"), view(4, "p2")])
        .await
        .unwrap();
    let events = |d: Document| {
        d.get_i64("events")
            .or_else(|_| d.get_i32("events").map(i64::from))
            .unwrap()
    };
    assert_eq!(events(one(&db, "nvc_pages", "p1").await), 3);
    assert_eq!(events(one(&db, "nvc_pages", "p2").await), 1);
    clicks
        .update(1_i64, doc! { "$set": { "page_id": "p2" } })
        .await
        .unwrap();
    assert_eq!(events(one(&db, "nvc_pages", "p1").await), 2);
    assert_eq!(events(one(&db, "nvc_pages", "p2").await), 2);
    // A wrong type through the variant's handle: refused, nothing moves.
    let result = clicks.update(1_i64, doc! { "$set": { "x": "far" } }).await;
    refused(result, "x");
    let result = clicks
        .update(1_i64, doc! { "$set": { "sku": 5, "page_id": "p1" } })
        .await;
    assert!(
        matches!(result, Err(Error::ValidationFailed { .. })),
        "{result:?}"
    );
    assert_eq!(events(one(&db, "nvc_pages", "p2").await), 2);
    views
        .update_many(doc! {}, doc! { "$set": { "secs": 2.5, "dims.w": 3 } })
        .await
        .unwrap();
    assert_eq!(
        views.delete_many(doc! { "page_id": "p1" }).await.unwrap(),
        2
    );
    assert_eq!(events(one(&db, "nvc_pages", "p1").await), 0);
    assert!(NvcPage::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    // Around the toolkit: an unknown tag, a field of another variant, a missing field.
    refused(
        insert_raw(
            &db,
            "nvc_events",
            doc! { "_id": 99_i64, "kind": "hover", "page_id": "p1", "at": at0 },
        )
        .await,
        "kind",
    );
    let result = insert_raw(
        &db,
        "nvc_events",
        doc! { "_id": 98_i64, "kind": "click", "page_id": "p1", "at": at0, "x": 1, "sku": "s", "secs": 1.0 },
    )
    .await;
    assert!(
        matches!(result, Err(Error::ValidationFailed { .. })),
        "{result:?}"
    );
    let result = insert_raw(
        &db,
        "nvc_events",
        doc! { "_id": 97_i64, "kind": "view", "page_id": "p1", "at": at0, "secs": 1.0 },
    )
    .await;
    assert!(
        matches!(result, Err(Error::ValidationFailed { .. })),
        "{result:?}"
    );
    assert_eq!(count(&db, "nvc_events", doc! {}).await, 2);
    // An enum that reads other tags accepts them under its validator.
    insert_raw(
        &db,
        "nvc_logs",
        doc! { "_id": 1_i64, "type": "Line", "text": "hi" },
    )
    .await
    .unwrap();
    insert_raw(
        &db,
        "nvc_logs",
        doc! { "_id": 2_i64, "type": "mystery", "whatever": [1] },
    )
    .await
    .unwrap();
    refused(
        insert_raw(
            &db,
            "nvc_logs",
            doc! { "_id": 3_i64, "type": "Line", "text": 5 },
        )
        .await,
        "text",
    );
    let logs = NvcLog::collection(&db).find(doc! {}).await.unwrap();
    assert_eq!(logs.len(), 2);
    assert!(matches!(logs[1], NvcLog::Other));
}

// ---------------------------------------------------------------------------------------------
// 4. SyncOptions::validators
// ---------------------------------------------------------------------------------------------

const SYNCED: [&pattern_runtime::ModelSchema; 3] = [
    NvcSyncDoc::SCHEMA,
    NvcSyncPage::SCHEMA,
    NvcSyncReading::SCHEMA,
];

#[tokio::test]
async fn sync_models_installs_validators_and_reports_them() {
    let db = test_db_unvalidated("nvc_sync_models").await;
    let plain = pattern_runtime::sync(&db)
        .models(&SYNCED)
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert!(plain.validators.is_none());
    assert!(installed(&db, "nvc_sync_docs")
        .await
        .get("validator")
        .is_none());

    let options = SyncOptions::new().validators(closed());
    let first = pattern_runtime::sync(&db)
        .models(&SYNCED)
        .options(&options)
        .await
        .unwrap();
    let validators = first.validators.as_ref().expect("asked for");
    let mut got: Vec<(&str, &str)> = validators
        .models
        .iter()
        .map(|s| (s.collection, s.documents))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("nvc_sync_doc_revisions", "revisions"),
            ("nvc_sync_docs", "documents"),
            ("nvc_sync_pages", "documents"),
            ("nvc_sync_pages.hits", "counter shards"),
            ("nvc_sync_readings", "documents"),
        ]
    );
    assert!(
        validators
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Created | ValidatorState::Applied)),
        "{validators:?}"
    );
    assert!(
        !first.is_in_sync(),
        "validators were installed: something changed"
    );
    let text = first.to_string();
    for s in &validators.models {
        assert!(
            text.contains(s.collection),
            "{} missing from:\n{text}",
            s.collection
        );
    }
    assert!(
        text.lines().count() >= first.indexes.len() + validators.models.len(),
        "{text}"
    );
    let options_installed = installed(&db, "nvc_sync_doc_revisions").await;
    assert_eq!(
        options_installed.get_str("validationLevel").unwrap(),
        "strict"
    );
    assert_eq!(
        options_installed.get_str("validationAction").unwrap(),
        "error"
    );
    assert_eq!(
        options_installed.get_document("validator").unwrap(),
        &declared(NvcSyncDoc::SCHEMA, "nvc_sync_doc_revisions")
    );

    let second = pattern_runtime::sync(&db)
        .models(&SYNCED)
        .options(&options)
        .await
        .unwrap();
    assert!(
        second
            .validators
            .as_ref()
            .unwrap()
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Unchanged)),
        "{second:?}"
    );
    assert!(second.is_in_sync(), "{second}");
    // And the validators are enforced.
    refused(
        insert_raw(
            &db,
            "nvc_sync_pages.hits",
            doc! { "_id": { "of": 1, "shard": 0 }, "count": 1_i64 },
        )
        .await,
        "_id.of",
    );
}

#[tokio::test]
async fn sync_group_reports_drift_and_leaves_it_unless_replace() {
    let db = test_db_unvalidated("nvc_sync_group").await;
    let options = SyncOptions::new().validators(closed());
    pattern_runtime::sync(&db)
        .group("nvc_sync")
        .options(&options)
        .await
        .unwrap();
    // By hand: another validator on the documents, another level on the shards.
    let hand = doc! { "$jsonSchema": { "bsonType": "object" } };
    db.run_command(doc! { "collMod": "nvc_sync_docs", "validator": hand.clone() })
        .await
        .unwrap();
    db.run_command(doc! { "collMod": "nvc_sync_pages.hits", "validationLevel": "moderate" })
        .await
        .unwrap();
    let report = pattern_runtime::sync(&db)
        .group("nvc_sync")
        .options(&options)
        .await
        .unwrap();
    let validators = report.validators.as_ref().unwrap();
    let mut drifted: Vec<&str> = validators.drifted().map(|s| s.collection).collect();
    drifted.sort();
    assert_eq!(
        drifted,
        ["nvc_sync_docs", "nvc_sync_pages.hits"],
        "{validators:?}"
    );
    assert!(validators
        .models
        .iter()
        .filter(|s| !drifted.contains(&s.collection))
        .all(|s| matches!(s.state, ValidatorState::Unchanged)));
    assert!(!report.is_in_sync());
    let text = report.to_string();
    assert!(text.contains("nvc_sync_docs"), "{text}");
    for d in validators.drifted() {
        let line = d.to_string();
        assert!(line.contains(d.collection), "{line}");
        assert!(text.contains(&line), "the report shows {line}:\n{text}");
    }
    // Left alone.
    assert_eq!(
        installed(&db, "nvc_sync_docs")
            .await
            .get_document("validator")
            .unwrap(),
        &hand
    );
    assert_eq!(
        installed(&db, "nvc_sync_pages.hits")
            .await
            .get_str("validationLevel")
            .unwrap(),
        "moderate"
    );
    // Replaced when asked.
    let replace = SyncOptions::new().validators(closed().replace());
    let report = pattern_runtime::sync(&db)
        .group("nvc_sync")
        .options(&replace)
        .await
        .unwrap();
    let validators = report.validators.as_ref().unwrap();
    for s in &validators.models {
        if drifted.contains(&s.collection) {
            assert!(matches!(s.state, ValidatorState::Replaced { .. }), "{s:?}");
        } else {
            assert!(matches!(s.state, ValidatorState::Unchanged), "{s:?}");
        }
    }
    assert_eq!(
        installed(&db, "nvc_sync_docs")
            .await
            .get_document("validator")
            .unwrap(),
        &declared(NvcSyncDoc::SCHEMA, "nvc_sync_docs")
    );
    let again = pattern_runtime::sync(&db)
        .group("nvc_sync")
        .options(&replace)
        .await
        .unwrap();
    assert!(again.is_in_sync(), "{again}");
}

#[tokio::test]
async fn default_validator_options_never_loosen_installed_validators() {
    let db = test_db_unvalidated("nvc_sync_loosen").await;
    pattern_runtime::sync(&db)
        .models(&SYNCED)
        .options(&SyncOptions::new().validators(closed()))
        .await
        .unwrap();
    let report = pattern_runtime::sync(&db)
        .models(&SYNCED)
        .options(&SyncOptions::new().validators(ValidatorOptions::new()))
        .await
        .unwrap();
    let validators = report.validators.unwrap();
    assert!(
        validators
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Drift { .. })),
        "{validators:?}"
    );
    let options = installed(&db, "nvc_sync_docs").await;
    assert_eq!(options.get_str("validationLevel").unwrap(), "strict");
    assert_eq!(options.get_str("validationAction").unwrap(), "error");
    refused(
        insert_raw(
            &db,
            "nvc_sync_docs",
            doc! { "_id": 1_i64, "version": 1_i64, "name": 5 },
        )
        .await,
        "name",
    );
}

#[tokio::test]
async fn a_misspelt_group_is_a_typed_error_and_installs_nothing() {
    let db = test_db_unvalidated("nvc_sync_typo").await;
    let result = pattern_runtime::sync(&db)
        .group("nvc_synk")
        .options(&SyncOptions::new().validators(closed()))
        .await;
    assert!(
        matches!(result, Err(Error::UnknownGroup { .. })),
        "{result:?}"
    );
    let names = db.list_collection_names().await.unwrap();
    assert!(names.is_empty(), "{names:?}");
}

// ---------------------------------------------------------------------------------------------
// 5. Hostile input under validators
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn outlier_items_with_operator_or_dotted_keys_are_refused_whole() {
    let db = test_db("nvc_outlier_hostile").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("h"))
        .await
        .unwrap();
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    let odd = |n: i32, text: &str, score: f64| NvcPost {
        n,
        text: text.into(),
        score: Some(score),
        extra: Some(doc! { "k": "$v", "nested": { "deep": [1, 2], "big": i64::MIN } }),
    };
    posts.push("h", odd(0, "$where", f64::NAN)).await.unwrap();
    posts.push("h", odd(1, "", f64::INFINITY)).await.unwrap();
    posts
        .push("h", odd(2, "ünï🙂\u{200b}", f64::NEG_INFINITY))
        .await
        .unwrap();
    posts.push("h", odd(i32::MIN, "$", -0.0)).await.unwrap();
    // Compared as text: NaN is not equal to itself.
    let before = format!(
        "{:?}",
        (
            dump(&db, "nvc_stars").await,
            dump(&db, "nvc_star_posts").await,
        )
    );
    let with_extra = |extra: Document| NvcPost {
        extra: Some(extra),
        ..post(9)
    };
    invalid_value(
        posts
            .push("h", with_extra(doc! { "$set": { "x": 1 } }))
            .await,
    );
    invalid_value(posts.push("h", with_extra(doc! { "a.b": 1 })).await);
    invalid_value(
        posts
            .push("h", with_extra(doc! { "ok": { "$gt": 1 } }))
            .await,
    );
    invalid_value(
        posts
            .push_many("h", vec![post(7), with_extra(doc! { "$x": 1 })])
            .await,
    );
    assert_eq!(
        format!(
            "{:?}",
            (
                dump(&db, "nvc_stars").await,
                dump(&db, "nvc_star_posts").await,
            )
        ),
        before,
        "nothing written"
    );
    let items = posts.items("h").await.unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0].text, "$where");
    assert!(items[0].score.unwrap().is_nan());
    assert_eq!(items[1].score, Some(f64::INFINITY));
    assert_eq!(items[2].text, "ünï🙂\u{200b}");
    assert_eq!(items[3].n, i32::MIN);
    assert!(posts.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn versioned_writes_the_validator_refuses_archive_nothing() {
    let db = test_db("nvc_versioned_refused").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    let mut a = article("r");
    a.tags = vec!["1".into(), "2".into(), "3".into()];
    articles.insert(&mut a).await.unwrap();
    a.title = "second".into();
    articles.replace(&mut a).await.unwrap();
    let before = (
        dump(&db, "nvc_articles").await,
        dump(&db, "nvc_article_revisions").await,
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "title": 5 } })
            .await,
        "title",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "surprise": 1 } })
            .await,
        "surprise",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$push": { "tags": "4" } })
            .await,
        "tags",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "meta.score": "high" } })
            .await,
        "meta.score",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$unset": { "title": "" } })
            .await,
        "title",
    );
    invalid_value(
        articles
            .update(At("r", 2), doc! { "$set": { "extra": { "$bad": 1 } } })
            .await,
    );
    a.tags.push("4".into());
    refused(articles.replace(&mut a).await, "tags");
    assert_eq!(a.version, 2, "a refused save leaves the caller's version");
    assert_eq!(
        (
            dump(&db, "nvc_articles").await,
            dump(&db, "nvc_article_revisions").await
        ),
        before,
        "nothing written, nothing archived"
    );
    // Still writable at its version.
    a.tags.pop();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(3));
}

#[tokio::test]
async fn versioned_documents_keep_hostile_strings_and_extreme_numbers() {
    let db = test_db("nvc_versioned_hostile").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    let mut a = NvcArticle {
        id: "$gt".into(),
        version: 0,
        title: "$where".into(),
        body: Some(String::new()),
        tags: vec!["".into(), "$".into(), "🙂".into()],
        meta: NvcMeta {
            score: f64::NAN,
            big: i64::MIN,
        },
        extra: Some(doc! { "k": "$v", "n": { "m": i64::MAX } }),
    };
    articles.insert(&mut a).await.unwrap();
    a.meta = NvcMeta {
        score: f64::INFINITY,
        big: i64::MAX,
    };
    articles.replace(&mut a).await.unwrap();
    let stored = articles.get("$gt").await.unwrap().unwrap();
    assert_eq!(stored.title, "$where");
    assert_eq!(stored.meta.big, i64::MAX);
    let old = articles.revision("$gt", 1).await.unwrap();
    assert!(old.meta.score.is_nan());
    assert_eq!(old.meta.big, i64::MIN);
    assert_eq!(old.tags, ["", "$", "🙂"]);
    assert_eq!(articles.revert("$gt", 1).await.unwrap(), 3);
    assert_eq!(
        articles.get("$gt").await.unwrap().unwrap().meta.big,
        i64::MIN
    );
}

#[tokio::test]
async fn a_versioned_document_with_operator_keys_is_refused_or_kept_whole() {
    let db = test_db("nvc_versioned_keys").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    for (id, extra) in [("dollar", doc! { "$op": 1 }), ("dot", doc! { "a.b": 1 })] {
        let mut a = article(id);
        a.extra = Some(extra.clone());
        match articles.insert(&mut a).await {
            Err(e) => {
                assert!(matches!(e, Error::InvalidValue { .. }), "{id}: {e:?}");
                assert!(articles.get(id).await.unwrap().is_none());
            }
            Ok(_) => {
                a.title = "again".into();
                articles.replace(&mut a).await.unwrap();
                let old = articles.revision(id, 1).await.unwrap();
                assert_eq!(old.extra, Some(extra), "{id}");
            }
        }
    }
}

/// A measurement with odd but legal values, stored; returns the buckets as text (NaN inside).
async fn odd_measurement(db: &mongodb::Database) -> String {
    let series = NvcReading::series(db);
    let mut odd = reading("$gt", i64::MIN, H0);
    odd.raw = Some(f64::NAN);
    odd.unit = NvcUnit("$unit".into());
    odd.extra = Some(doc! { "s": "$x", "e": "" });
    series.insert(&odd).await.unwrap();
    let got: Vec<NvcReading> = series
        .range(
            ("$gt".to_owned(), i64::MIN),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].raw.unwrap().is_nan());
    assert_eq!(got[0].unit, NvcUnit("$unit".into()));
    assert_eq!(got[0].extra, odd.extra);
    format!("{:?}", dump(db, "nvc_readings").await)
}

#[tokio::test]
async fn non_finite_summarised_measurements_are_refused_whole() {
    let db = test_db("nvc_bucket_non_finite").await;
    let series = NvcReading::series(&db);
    let before = odd_measurement(&db).await;
    let mut nan = reading("$gt", i64::MIN, H0 + 2000);
    nan.celsius = f64::NAN;
    invalid_value(series.insert(&nan).await);
    let mut inf = reading("$gt", i64::MIN, H0 + 3000);
    inf.celsius = f64::NEG_INFINITY;
    invalid_value(
        series
            .insert_many(&[reading("$gt", i64::MIN, H0 + 4000), inf])
            .await,
    );
    assert_eq!(
        format!("{:?}", dump(&db, "nvc_readings").await),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn measurements_with_operator_or_dotted_keys_are_refused_whole() {
    let db = test_db("nvc_bucket_hostile_keys").await;
    let series = NvcReading::series(&db);
    let before = odd_measurement(&db).await;
    let with_extra = |ms: i64, extra: Document| {
        let mut r = reading("$gt", i64::MIN, H0 + ms);
        r.extra = Some(extra);
        r
    };
    invalid_value(series.insert(&with_extra(1000, doc! { "$x": 1 })).await);
    invalid_value(series.insert(&with_extra(2000, doc! { "a.b": 1 })).await);
    invalid_value(
        series
            .insert(&with_extra(3000, doc! { "ok": { "$gt": 1 } }))
            .await,
    );
    invalid_value(
        series
            .insert_many(&[
                reading("$gt", i64::MIN, H0 + 4000),
                with_extra(5000, doc! { "$set": { "x": 1 } }),
            ])
            .await,
    );
    assert_eq!(
        format!("{:?}", dump(&db, "nvc_readings").await),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn operator_shaped_ids_are_refused_before_anything_is_written() {
    let db = test_db("nvc_operator_ids").await;
    pattern_runtime::sync(&db)
        .models(&[NvcLoose::SCHEMA])
        .await
        .unwrap();
    let items = NvcLoose::collection(&db).outlier(NvcLoose::FIELDS.items);
    let hostile = [
        Bson::Document(doc! { "$gt": 1 }),
        Bson::Document(doc! { "a": { "$ne": null } }),
        Bson::RegularExpression(bson::Regex {
            pattern: bson::raw::CString::try_from(".*").unwrap(),
            options: bson::raw::CString::try_from("").unwrap(),
        }),
        Bson::Array(vec![1.into(), 2.into()]),
        Bson::Document(doc! { "a.b": 1 }),
    ];
    for id in &hostile {
        let pushed = items.push(id.clone(), 1).await;
        assert!(
            matches!(pushed, Err(Error::InvalidValue { .. })),
            "{id}: {pushed:?}"
        );
        let counted = NvcLoose::collection(&db)
            .counter(NvcLoose::FIELDS.hits)
            .of(id.clone())
            .add(1)
            .await;
        assert!(
            matches!(counted, Err(Error::InvalidValue { .. })),
            "{id}: {counted:?}"
        );
    }
    assert_eq!(count(&db, "nvc_loose_items", doc! {}).await, 0);
    assert_eq!(count(&db, "nvc_loose.hits", doc! {}).await, 0);
    assert_eq!(count(&db, "nvc_loose", doc! {}).await, 0);
}

#[tokio::test]
async fn ids_of_different_bson_types_keep_their_own_overflow_documents() {
    let db = test_db("nvc_loose_ids").await;
    pattern_runtime::sync(&db)
        .models(&[NvcLoose::SCHEMA])
        .await
        .unwrap();
    let ids = [
        Bson::Int32(1),
        Bson::String("1".into()),
        Bson::Boolean(true),
    ];
    for id in &ids {
        NvcLoose::collection(&db)
            .raw()
            .insert_one(NvcLoose {
                id: id.clone(),
                items: vec![],
                over: false,
                n: 0,
                hits: 0,
            })
            .await
            .unwrap();
    }
    let items = NvcLoose::collection(&db).outlier(NvcLoose::FIELDS.items);
    for (k, id) in ids.iter().enumerate() {
        let base = 10 * k as i32;
        let pushed = tokio::time::timeout(
            Duration::from_secs(30),
            items.push_many(id.clone(), (base..base + 4).collect()),
        )
        .await
        .expect("the push ends");
        assert!(pushed.is_ok(), "{id}: {pushed:?}");
    }
    for (k, id) in ids.iter().enumerate() {
        let base = 10 * k as i32;
        assert_eq!(
            items.items(id.clone()).await.unwrap(),
            (base..base + 4).collect::<Vec<_>>(),
            "{id}"
        );
    }
    assert_eq!(count(&db, "nvc_loose_items", doc! {}).await, 6);
}

#[tokio::test]
async fn huge_batches_fill_many_companion_documents_within_their_caps() {
    let db = test_db("nvc_huge").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("big"))
        .await
        .unwrap();
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("big", (0..302).map(post).collect())
        .await
        .unwrap();
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "big" }).await,
        100
    );
    assert_eq!(
        posts.page("big", 150, 3).await.unwrap(),
        (150..153).map(post).collect::<Vec<_>>()
    );
    let series = NvcReading::series(&db);
    let many: Vec<NvcReading> = (0..300).map(|i| reading("bulk", 1, H0 + i * 10)).collect();
    let report = series.insert_many(&many).await.unwrap();
    assert_eq!((report.measurements, report.new_buckets), (300, 100));
    assert_eq!(
        count(&db, "nvc_readings", doc! { "site": "bulk" }).await,
        100
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Combinations
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_versioned_extended_reference_source_under_strict_validators() {
    let db = test_db("nvc_versioned_source").await;
    pattern_runtime::sync(&db)
        .models(&[NvcAuthor::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NvcBook::SCHEMA])
        .await
        .unwrap();
    let authors = NvcAuthor::collection(&db);
    let mut au = NvcAuthor {
        id: 1,
        version: 0,
        name: "Ada".into(),
        bio: "b".into(),
    };
    authors.insert(&mut au).await.unwrap();
    let books = NvcBook::collection(&db);
    for id in [1, 2] {
        books
            .insert(&NvcBook {
                id,
                title: format!("book {id}"),
                author: NvcAuthorRef::from(&au),
            })
            .await
            .unwrap();
    }
    let copies = |db: mongodb::Database| async move {
        dump(&db, "nvc_books")
            .await
            .iter()
            .map(|b| {
                b.get_document("author")
                    .unwrap()
                    .get_str("name")
                    .unwrap()
                    .to_owned()
            })
            .collect::<Vec<_>>()
    };
    au.name = "Ada L.".into();
    authors.replace(&mut au).await.unwrap();
    assert_eq!(copies(db.db().clone()).await, ["Ada L.", "Ada L."]);
    authors
        .update(At(1_i64, 2), doc! { "$set": { "name": "Ada Lovelace" } })
        .await
        .unwrap();
    assert_eq!(
        copies(db.db().clone()).await,
        ["Ada Lovelace", "Ada Lovelace"]
    );
    authors.revert(1_i64, 1).await.unwrap();
    assert_eq!(copies(db.db().clone()).await, ["Ada", "Ada"]);
    // Refused by the source's validator: neither the source, its revisions nor the copies move.
    let before = (
        dump(&db, "nvc_authors").await,
        dump(&db, "nvc_author_revisions").await,
        dump(&db, "nvc_books").await,
    );
    refused(
        authors
            .update(At(1_i64, 4), doc! { "$set": { "name": 5 } })
            .await,
        "name",
    );
    assert_eq!(
        (
            dump(&db, "nvc_authors").await,
            dump(&db, "nvc_author_revisions").await,
            dump(&db, "nvc_books").await,
        ),
        before
    );
    assert_eq!(authors.history(1_i64).await.unwrap().len(), 3);
}

#[tokio::test]
async fn outlier_sharded_counter_and_computed_count_on_one_model() {
    let db = test_db("nvc_three_patterns").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NvcOrder::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("c"))
        .await
        .unwrap();
    let orders = NvcOrder::collection(&db);
    for id in 1..=3 {
        orders
            .insert(&NvcOrder {
                id,
                star_id: "c".into(),
                amount: 10,
            })
            .await
            .unwrap();
    }
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("c", (0..5).map(post).collect())
        .await
        .unwrap();
    let views = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("c");
    views.add(4).await.unwrap();
    views.snapshot().await.unwrap();
    let d = one(&db, "nvc_stars", "c").await;
    assert_eq!(num(d.get("orderCount")), Some(3));
    assert_eq!(num(d.get("postCount")), Some(5));
    assert_eq!(num(d.get("views")), Some(4));
    // A move to a star that does not exist: NotFound, nothing written.
    let moved = orders
        .update(2_i64, doc! { "$set": { "starId": "d" } })
        .await;
    assert!(matches!(moved, Err(Error::NotFound { .. })), "{moved:?}");
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("d"))
        .await
        .unwrap();
    orders
        .update(2_i64, doc! { "$set": { "starId": "d" } })
        .await
        .unwrap();
    assert_eq!(
        num(one(&db, "nvc_stars", "c").await.get("orderCount")),
        Some(2)
    );
    assert_eq!(
        num(one(&db, "nvc_stars", "d").await.get("orderCount")),
        Some(1)
    );
    // A replace that changes a kept field is refused.
    let mut stale = star("c");
    stale.post_count = 99;
    let replaced = NvcStar::collection(&db).replace(&stale).await;
    assert!(
        matches!(replaced, Err(Error::KeptField { .. })),
        "{replaced:?}"
    );
    assert!(posts.check().await.unwrap().is_clean());
    assert!(NvcStar::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    // A delete through the model handle takes the overflow documents with it.
    NvcStar::collection(&db).delete("c").await.unwrap();
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "c" }).await,
        0
    );
    // The orders of a deleted star stay writable.
    orders
        .update(1_i64, doc! { "$set": { "amount": 11_i64 } })
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// More: struct ids, sparse measurements, byte budgets, groups without validators, extremes
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_struct_id_versioned_model_under_strict_validators() {
    let db = test_db("nvc_struct_id").await;
    pattern_runtime::sync(&db)
        .models(&[NvcKeyed::SCHEMA])
        .await
        .unwrap();
    let keyed = NvcKeyed::collection(&db);
    let key = NvcKey {
        shop: "s-1".into(),
        n: -3,
    };
    let mut k = NvcKeyed {
        id: key.clone(),
        version: 0,
        label: "a".into(),
    };
    keyed.insert(&mut k).await.unwrap();
    k.label = "b".into();
    assert_eq!(keyed.replace(&mut k).await.unwrap().version, Some(2));
    assert_eq!(
        keyed
            .update(At(key.clone(), 2), doc! { "$set": { "label": "c" } })
            .await
            .unwrap()
            .version,
        Some(3)
    );
    assert_eq!(keyed.revert(key.clone(), 1).await.unwrap(), 4);
    assert_eq!(keyed.revision(key.clone(), 2).await.unwrap().label, "b");
    keyed.delete(key.clone()).await.unwrap();
    assert_eq!(keyed.history(key.clone()).await.unwrap().len(), 4);
    // The revisions' docId has the struct's shape.
    let h = "nvc_keyed_revisions";
    let now = DateTime::now();
    refused(
        insert_raw(
            &db,
            h,
            doc! { "docId": { "shop": "s-1" }, "version": 9_i64, "snapshot": {}, "archivedAt": now },
        )
        .await,
        "docId.n",
    );
    refused(
        insert_raw(
            &db,
            h,
            doc! { "docId": "s-1", "version": 9_i64, "snapshot": {}, "archivedAt": now },
        )
        .await,
        "docId",
    );
    assert_eq!(count(&db, h, doc! {}).await, 4);
}

#[tokio::test]
async fn sparse_measurements_pass_the_strict_bucket_validator() {
    let db = test_db("nvc_sparse").await;
    let series = NvcSparse::series(&db);
    let values = [
        Bson::Int32(1),
        Bson::String("x".into()),
        Bson::Null,
        Bson::Document(doc! { "k": [1, 2] }),
        Bson::Double(f64::NAN),
    ];
    let batch: Vec<NvcSparse> = (0..5)
        .map(|i| NvcSparse {
            probe: if i % 2 == 0 { i32::MIN } else { i32::MAX },
            at: DateTime::from_millis(H0 + i as i64 * 60_000),
            level: i32::MAX - i,
            note: (i % 3 == 0).then(|| format!("note {i}")),
            any: values[i as usize].clone(),
        })
        .collect();
    series.insert_many(&batch[..3]).await.unwrap();
    for m in &batch[3..] {
        series.insert(m).await.unwrap();
    }
    let summary = series
        .summary(
            i32::MAX,
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 24 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(summary.count(), 2);
    assert_eq!(
        summary.max(NvcSparse::FIELDS.level).unwrap(),
        Some(i32::MAX - 1)
    );
    // Around the toolkit: a note of another type, a key of another type.
    let bucket = |probe: Bson, note: Bson| {
        doc! {
            "probe": probe,
            "start": DateTime::from_millis(H0),
            "end": DateTime::from_millis(H0 + 24 * HOUR),
            "first": DateTime::from_millis(H0),
            "last": DateTime::from_millis(H0),
            "count": 1,
            "measurements": [{ "at": DateTime::from_millis(H0), "level": 1, "note": note, "any": 1 }],
        }
    };
    insert_raw(&db, "nvc_sparse", bucket(Bson::Int32(7), "n".into()))
        .await
        .unwrap();
    refused(
        insert_raw(&db, "nvc_sparse", bucket(Bson::Int32(7), Bson::Int32(5))).await,
        "measurements.0.note",
    );
    refused(
        insert_raw(&db, "nvc_sparse", bucket(Bson::Int64(7), "n".into())).await,
        "probe",
    );
}

#[tokio::test]
async fn items_over_the_byte_budget_pass_the_strict_overflow_validator() {
    let db = test_db("nvc_blob").await;
    pattern_runtime::sync(&db)
        .models(&[NvcBlob::SCHEMA])
        .await
        .unwrap();
    NvcBlob::collection(&db)
        .raw()
        .insert_one(NvcBlob {
            id: 1,
            parts: vec![],
            over: false,
            n: 0,
        })
        .await
        .unwrap();
    let parts = NvcBlob::collection(&db).outlier(NvcBlob::FIELDS.parts);
    let part = |i: usize, len: usize| format!("{i}:{}", "x".repeat(len));
    let mut sent = vec![];
    for i in 0..6 {
        sent.push(part(i, 700));
    }
    parts.push_many(1_i64, sent.clone()).await.unwrap();
    sent.push(part(6, 3000));
    parts.push(1_i64, part(6, 3000)).await.unwrap();
    sent.push(part(7, 10));
    parts.push(1_i64, part(7, 10)).await.unwrap();
    assert_eq!(parts.items(1_i64).await.unwrap(), sent);
    assert_eq!(parts.count(1_i64).await.unwrap(), 8);
    for d in dump(&db, "nvc_blob_parts").await {
        assert!(d.get_array("parts").unwrap().len() <= 4, "{d}");
    }
    assert!(parts.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn a_group_with_collections_that_get_no_validator_is_in_sync_once_synced() {
    let db = test_db_unvalidated("nvc_sync2").await;
    let options = SyncOptions::new().validators(closed());
    let first = pattern_runtime::sync(&db)
        .group("nvc_sync2")
        .options(&options)
        .await
        .unwrap();
    let validators = first.validators.as_ref().unwrap();
    for s in &validators.models {
        match s.collection {
            "nvc_sync2_plain" | "nvc_sync2_speeds" => assert!(
                matches!(s.state, ValidatorState::Created | ValidatorState::Applied),
                "{s:?}"
            ),
            _ => assert!(
                matches!(s.state, ValidatorState::NotGenerated { .. }),
                "{s:?}"
            ),
        }
    }
    assert_eq!(validators.models.len(), 4, "{validators:?}");
    assert!(first.to_string().contains("nvc_sync2_shared"), "{first}");
    let second = pattern_runtime::sync(&db)
        .group("nvc_sync2")
        .options(&options)
        .await
        .unwrap();
    assert!(
        second.is_in_sync(),
        "nothing changed and nothing differs: {second}\n{:?}",
        second.validators
    );
    // No validator was put on the shared collection: both shapes are writable.
    insert_raw(&db, "nvc_sync2_shared", doc! { "_id": 1_i64, "a": "x" })
        .await
        .unwrap();
    insert_raw(&db, "nvc_sync2_shared", doc! { "_id": 2_i64, "b": 2 })
        .await
        .unwrap();
}

#[tokio::test]
async fn a_main_document_past_its_outlier_limit_is_refused() {
    let db = test_db("nvc_main_limit").await;
    let mut s = star("x");
    s.posts = (0..3).map(post).collect();
    let result = NvcStar::collection(&db)
        .raw()
        .insert_one(&s)
        .await
        .map_err(Error::from);
    refused(result, "posts");
    s.posts.pop();
    NvcStar::collection(&db).raw().insert_one(&s).await.unwrap();
}

#[tokio::test]
async fn an_i32_batched_count_past_i32_max_is_refused_and_kept_pending() {
    let db = test_db("nvc_i32_batched_max").await;
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let batched = NvcCounter::collection(&db).counter(NvcCounter::FIELDS.batched);
    batched.add(1_i64, i32::MAX as i64).await.unwrap();
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "batched", i32::MAX);
    refused(batched.add(1_i64, 5).await, "batched");
    assert_eq!(batched.pending(), 5, "a failed write puts its count back");
    refused(batched.flush().await, "batched");
    assert_eq!(batched.pending(), 5);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "batched", i32::MAX);
    // Counted back down, the next flush writes.
    batched.add(1_i64, -5).await.unwrap();
    batched.add(1_i64, -3).await.unwrap();
    batched.flush().await.unwrap();
    assert_int32(
        &one(&db, "nvc_counters", 1_i64).await,
        "batched",
        i32::MAX - 3,
    );
}

#[tokio::test]
async fn a_sharded_counter_past_i64_max_stays_readable_or_refuses_typed() {
    let db = test_db("nvc_shard_max").await;
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("m"))
        .await
        .unwrap();
    let views = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("m")
        .with_random(Random::seeded(3));
    views.add(i64::MAX).await.unwrap();
    for _ in 0..10 {
        match views.add(1).await {
            Ok(()) => {}
            Err(Error::InvalidValue { .. }) => {}
            Err(other) => panic!("an add past i64::MAX: {other:?}"),
        }
    }
    let read = views.read().await;
    assert!(
        matches!(read, Ok(_) | Err(Error::InvalidValue { .. })),
        "the counter stays readable: {read:?}"
    );
}

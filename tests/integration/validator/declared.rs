//! Types and rules the user declares: `#[json_schema(..)]` (the stored BSON type of a field the
//! derive cannot know, or a field left unchecked on purpose) and `#[validate(..)]` attributes,
//! in the generated validator and enforced by the server, naming the field.

use super::*;
use bson::{doc, Bson, Document};
use pattern_runtime::{
    validator::{sync_validators, ValidatorOptions},
    Error, Fields, Model,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

/// A newtype serde stores as its string: no `BsonShape`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Sku(String);

mod as_text {
    pub fn serialize<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct VdLine {
    #[json_schema(bson_type = "string")]
    sku: Sku,
    qty: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "vd_orders")]
#[serde(rename_all = "camelCase")]
struct VdOrder {
    #[serde(rename = "_id")]
    id: i64,
    #[json_schema(bson_type = "string")]
    main_sku: Sku,
    #[json_schema(bson_type = "string")]
    spare_sku: Option<Sku>,
    #[serde(with = "as_text")]
    #[json_schema(bson_type = "string")]
    legacy_code: i64,
    /// Known to be an `i32`, left unchecked on purpose (older writers store text).
    #[json_schema(skip)]
    priority: i32,
    #[json_schema(bson_type = ["object", "array"])]
    payload: Bson,
    lines: Vec<VdLine>,
}

fn order(id: i64) -> VdOrder {
    VdOrder {
        id,
        main_sku: Sku("A-1".into()),
        spare_sku: None,
        legacy_code: 42,
        priority: 1,
        payload: Bson::Document(doc! { "k": 1 }),
        lines: vec![VdLine {
            sku: Sku("B-2".into()),
            qty: 3,
        }],
    }
}

#[test]
fn declared_types_are_in_the_validator() {
    let v = VdOrder::SCHEMA.validator(&ValidatorOptions::new()).unwrap();
    let schema = v.get_document("$jsonSchema").unwrap();
    let p = schema.get_document("properties").unwrap();
    let prop = |name: &str| p.get_document(name).unwrap().clone();
    assert_eq!(prop("mainSku"), doc! { "bsonType": "string" });
    assert_eq!(prop("spareSku"), doc! { "bsonType": ["string", "null"] });
    assert_eq!(prop("legacyCode"), doc! { "bsonType": "string" });
    assert_eq!(prop("priority"), doc! {}, "skipped: anything");
    assert_eq!(prop("payload"), doc! { "bsonType": ["object", "array"] });
    assert_eq!(
        prop("lines")
            .get_document("items")
            .unwrap()
            .get_document("properties")
            .unwrap()
            .get_document("sku")
            .unwrap()
            .clone(),
        doc! { "bsonType": "string" },
        "on a `Fields` struct too"
    );
    let required: Vec<&str> = schema
        .get_array("required")
        .unwrap()
        .iter()
        .filter_map(Bson::as_str)
        .collect();
    assert_eq!(
        required,
        ["_id", "mainSku", "legacyCode", "payload", "lines"],
        "declared fields are required (but the `Option`), a skipped one is not"
    );
}

#[tokio::test]
async fn the_server_checks_the_declared_types() {
    let db = test_db_unvalidated("vd_checks").await;
    let closed = ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields();
    sync_validators(&db, &[VdOrder::SCHEMA], &closed)
        .await
        .unwrap();
    let orders = VdOrder::collection(&db);
    let mut spare = order(2);
    spare.spare_sku = Some(Sku("S".into()));
    orders.raw().insert_many([order(1), spare]).await.unwrap();
    let raw = db.collection::<Document>("vd_orders");
    let base = || bson::serialize_to_document(&order(3)).unwrap();
    let refused = |mut d: Document, key: &str, value: Bson| {
        d.insert(key, value);
        let raw = raw.clone();
        async move {
            match raw.insert_one(d).await.map_err(Error::from) {
                Err(Error::ValidationFailed { fields, .. }) => fields,
                other => panic!("expected a refusal: {other:?}"),
            }
        }
    };
    assert_eq!(
        refused(base(), "mainSku", Bson::Int32(1)).await,
        ["mainSku"]
    );
    assert_eq!(
        refused(base(), "legacyCode", Bson::Int64(42)).await,
        ["legacyCode"]
    );
    assert_eq!(
        refused(base(), "payload", Bson::String("x".into())).await,
        ["payload"]
    );
    assert_eq!(
        refused(
            base(),
            "lines",
            Bson::Array(vec![Bson::Document(doc! { "sku": 5, "qty": 1 })])
        )
        .await,
        ["lines.0.sku"]
    );
    // The skipped field takes anything.
    let mut text_priority = base();
    text_priority.insert("priority", "high");
    raw.insert_one(text_priority).await.unwrap();
    assert_eq!(raw.count_documents(doc! {}).await.unwrap(), 3);
}

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

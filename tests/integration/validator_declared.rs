//! `#[json_schema(..)]`: the stored BSON type of a field the derive cannot know (a type without a
//! `BsonShape`, a custom serializer) declared by the user, or a field left unchecked on
//! purpose; the server then checks the declared type and refuses another, naming the field.

use bson::{doc, Bson, Document};
use pattern_runtime::validator::{sync_validators, ValidatorOptions};
use pattern_runtime::{Error, Fields, Model};
// The test installs its validators itself.
use pattern_testkit::test_db_unvalidated as test_db;
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
    let db = test_db("vd_checks").await;
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

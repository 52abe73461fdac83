//! The `$jsonSchema` the derive's shapes give: the documented table of field types (integers,
//! floats, `Option`, `Vec`, maps, nested `Fields` structs, `#[bounded(n)]`), values at their
//! extremes, recursion to its documented depth, and a polymorphic enum's one branch per tag.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{
    validator::{refused_documents, sync_validators, ValidatorOptions, ValidatorState},
    Error, Model,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[test]
fn the_validator_follows_the_stored_shape() {
    let v = VProduct::SCHEMA
        .validator(&ValidatorOptions::new())
        .unwrap();
    let schema = v.get_document("$jsonSchema").unwrap();
    assert_eq!(schema.get_str("bsonType").unwrap(), "object");
    let required: Vec<&str> = schema
        .get_array("required")
        .unwrap()
        .iter()
        .filter_map(Bson::as_str)
        .collect();
    // Not required: the `Option`s, the field serde may skip, the unknown and custom-serialized
    // ones.
    assert_eq!(
        required,
        [
            "_id",
            "name",
            "priceCents",
            "weight",
            "inStock",
            "launched",
            "tags",
            "topReviews",
            "reviewCount"
        ]
    );
    let p = schema.get_document("properties").unwrap();
    let prop = |name: &str| p.get_document(name).unwrap().clone();
    // The integer widths that read back into an `i64`, any number into an `f64`.
    assert_eq!(prop("priceCents"), doc! { "bsonType": ["long", "int"] });
    assert_eq!(
        prop("weight"),
        doc! { "bsonType": ["double", "int", "long"] }
    );
    assert_eq!(prop("inStock"), doc! { "bsonType": "bool" });
    assert_eq!(prop("launched"), doc! { "bsonType": "date" });
    assert_eq!(
        prop("tags"),
        doc! { "bsonType": "array", "items": { "bsonType": "string" } }
    );
    assert_eq!(prop("note"), doc! { "bsonType": ["string", "null"] });
    assert_eq!(prop("discontinued"), doc! { "bsonType": ["date", "null"] });
    assert_eq!(prop("opaque"), doc! {}, "a type without a shape: anything");
    assert_eq!(prop("legacyCode"), doc! {}, "a custom serializer: anything");
    assert_eq!(
        prop("topReviews"),
        doc! {
            "bsonType": "array",
            "items": {
                "bsonType": "object",
                "required": ["reviewId", "stars"],
                "properties": {
                    "reviewId": { "bsonType": ["long", "int"] },
                    "stars": { "bsonType": "int" },
                },
            },
            "maxItems": 3_i64,
        },
        "the subset's limit bounds the array"
    );
    assert!(!schema.contains_key("additionalProperties"));
    let closed = VProduct::SCHEMA
        .validator(&ValidatorOptions::new().forbid_other_fields())
        .unwrap();
    let closed = closed.get_document("$jsonSchema").unwrap();
    assert_eq!(closed.get_bool("additionalProperties").ok(), Some(false));
}

/// An enum model: one branch per tag (`oneOf`), each with its variant's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "v_events")]
enum VEvent {
    Click {
        #[serde(rename = "_id")]
        id: i64,
        target: String,
    },
    Scroll {
        #[serde(rename = "_id")]
        id: i64,
        depth_px: i32,
    },
}

#[tokio::test]
async fn an_enum_model_has_one_branch_per_tag() {
    let db = test_db_unvalidated("validator_enum").await;
    let declared = VEvent::SCHEMA.validator(&ValidatorOptions::new()).unwrap();
    let schema = declared.get_document("$jsonSchema").unwrap();
    assert_eq!(schema.get_array("oneOf").unwrap().len(), 2, "{schema}");
    let report = sync_validators(&db, &[VEvent::SCHEMA], &strict().forbid_other_fields())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Created),
        "{report:?}"
    );
    // The toolkit's writes of each variant pass.
    let events = VEvent::collection(&db);
    events
        .variant::<VEventClick>()
        .insert(&VEventClick {
            id: 1,
            target: "buy".into(),
        })
        .await
        .unwrap();
    events
        .variant::<VEventScroll>()
        .insert(&VEventScroll {
            id: 2,
            depth_px: 300,
        })
        .await
        .unwrap();
    // Around it: an unknown tag, and a known tag with another variant's fields.
    let raw = db.collection::<Document>("v_events");
    for (bad, field) in [
        (
            doc! { "_id": 3_i64, "kind": "hover", "target": "x" },
            "kind",
        ),
        (
            doc! { "_id": 4_i64, "kind": "scroll", "target": "x" },
            "depthPx",
        ),
    ] {
        let e: Error = raw.insert_one(bad).await.map_err(Error::from).unwrap_err();
        let Error::ValidationFailed { fields, .. } = &e else {
            panic!("{e:?}");
        };
        assert!(fields.iter().any(|f| f == field), "{field}: {fields:?}");
    }
    assert_eq!(raw.count_documents(doc! {}).await.unwrap(), 2);
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

// ---------------------------------------------------------------------------------------------
// The generated schema
// ---------------------------------------------------------------------------------------------

/// The module's table (integers, floats, `Option`, `Vec`, maps, arrays, `Box`, nested
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
    // Unsigned and narrow integers carry their range (without it an `int` of 300 in an
    // `i8` would pass the validator, then fail the typed read).
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

/// `u32`/`u64` accept what the server's `$inc` keeps as an `int`; a float reads back
/// from any number; the typed values at their extremes pass a closed strict validator.
#[tokio::test]
async fn extreme_values_and_server_integers_pass_and_read_back() {
    let db = test_db_unvalidated("nv_extremes").await;
    assert_installed(
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

/// "A struct nested in itself is an object without properties past 16 levels": a
/// wrong value shallow in the recursion is refused, one past the depth is accepted.
#[tokio::test]
async fn deep_recursion_is_checked_to_its_documented_depth() {
    let db = test_db_unvalidated("nv_deep").await;
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

/// An enum model has one `oneOf` branch per tag value, each requiring its
/// tag and holding its variant's fields; an unknown tag fails every branch and is named as the
/// failing field. (The brief, and `ModelSchema::validator`'s own doc, still say enums get none.)
#[tokio::test]
async fn a_polymorphic_enum_gets_one_branch_per_tag() {
    let db = test_db_unvalidated("nv_enum").await;
    let v = NvNote::SCHEMA
        .validator(&closed())
        .expect("an enum model has a validator");
    let schema = v.get_document("$jsonSchema").unwrap();
    assert_eq!(schema.get_array("oneOf").unwrap().len(), 2, "{schema}");
    let report = sync_validators(&db, &[NvNote::SCHEMA, NvArticle::SCHEMA], &closed())
        .await
        .unwrap();
    assert_installed(&report);
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

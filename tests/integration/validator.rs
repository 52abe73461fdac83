//! Server-side validators made from the models (`pattern_runtime::validator`): the `$jsonSchema`
//! the derive's shapes give, installed by `sync_validators` (created, applied, drift left alone
//! unless asked), bad documents written around the toolkit refused with
//! `Error::ValidationFailed` naming the field, the doctor's exact count of stored documents the
//! validator refuses, and the patterns' own writes passing a `strict`/`error` validator.

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::doctor::Check;
use pattern_runtime::validator::{
    refused_documents, sync_validators, Action, Level, ValidatorOptions, ValidatorState,
};
use pattern_runtime::{doctor, DoctorOptions, Error, Fields, Model, SyncOptions};
// These tests install validators themselves.
use pattern_testkit::test_db_unvalidated as test_db;
use serde::{Deserialize, Serialize};

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
    #[computed(count = top_reviews)]
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

#[tokio::test]
async fn sync_creates_applies_reports_drift_and_replaces_only_when_asked() {
    let db = test_db("validator_sync").await;
    // A missing collection: created with it, at the default moderate/warn.
    let report = sync_validators(&db, &[VProduct::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Created),
        "{report:?}"
    );
    let info = collection_options(&db, "v_products").await;
    assert_eq!(info.get_str("validationLevel").ok(), Some("moderate"));
    assert_eq!(info.get_str("validationAction").ok(), Some("warn"));
    // Again: as declared.
    let report = sync_validators(&db, &[VProduct::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Unchanged),
        "{report:?}"
    );
    // Asking for `error` does not switch an installed validator: drift, left alone.
    let report = sync_validators(&db, &[VProduct::SCHEMA], &strict())
        .await
        .unwrap();
    let ValidatorState::Drift { installed, .. } = &report.models[0].state else {
        panic!("{report:?}");
    };
    assert_eq!(
        (installed.level, installed.action),
        (Level::Moderate, Action::Warn)
    );
    assert_eq!(report.drifted().count(), 1);
    assert!(report.models[0].to_string().contains("left as it is"));
    // Changed by hand: drift, and the hand-made validator stays.
    let by_hand = doc! { "$jsonSchema": { "required": ["name"] } };
    db.run_command(doc! { "collMod": "v_products", "validator": by_hand.clone() })
        .await
        .unwrap();
    let report = sync_validators(&db, &[VProduct::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Drift { .. }),
        "{report:?}"
    );
    assert_eq!(
        collection_options(&db, "v_products")
            .await
            .get_document("validator")
            .ok(),
        Some(&by_hand)
    );
    // Asked: replaced, at the asked level and action.
    let report = sync_validators(&db, &[VProduct::SCHEMA], &strict().replace())
        .await
        .unwrap();
    let ValidatorState::Replaced { before } = &report.models[0].state else {
        panic!("{report:?}");
    };
    assert_eq!(before.validator.as_ref(), Some(&by_hand));
    let info = collection_options(&db, "v_products").await;
    assert_eq!(info.get_str("validationLevel").ok(), Some("strict"));
    assert_eq!(info.get_str("validationAction").ok(), Some("error"));
    assert_eq!(
        info.get_document("validator").ok(),
        VProduct::SCHEMA.validator(&strict()).as_ref()
    );
    // A collection that exists without a validator gets it.
    db.create_collection("v_reviews").await.unwrap();
    let report = sync_validators(&db, &[VReview::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Applied),
        "{report:?}"
    );
}

async fn collection_options(db: &mongodb::Database, name: &str) -> Document {
    use futures_util::TryStreamExt;
    let found: Vec<Document> = db
        .run_cursor_command(doc! { "listCollections": 1, "filter": { "name": name } })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    found[0].get_document("options").unwrap().clone()
}

fn raw_product(id: &str) -> Document {
    bson::serialize_to_document(&product(id)).unwrap()
}

#[tokio::test]
async fn bad_documents_are_refused_naming_the_field() {
    let db = test_db("validator_refusals").await;
    sync_validators(&db, &[VProduct::SCHEMA], &strict().forbid_other_fields())
        .await
        .unwrap();
    let raw = db.collection::<Document>("v_products");
    raw.insert_one(raw_product("ok")).await.unwrap();
    let refused = |field: &'static str, doc: Document| {
        let raw = raw.clone();
        async move {
            let e: Error = raw.insert_one(doc).await.map_err(Error::from).unwrap_err();
            let Error::ValidationFailed { fields, .. } = &e else {
                panic!("{field}: {e:?}");
            };
            assert!(fields.iter().any(|f| f == field), "{field}: {fields:?}");
        }
    };
    // A wrong BSON type.
    let mut d = raw_product("type");
    d.insert("priceCents", "19.99");
    refused("priceCents", d).await;
    // A nested struct's wrong type, by its path.
    let mut d = raw_product("nested");
    d.insert(
        "topReviews",
        vec![doc! { "reviewId": 1_i64, "stars": "five" }],
    );
    refused("topReviews.0.stars", d).await;
    // A missing required field.
    let mut d = raw_product("missing");
    d.remove("launched");
    refused("launched", d).await;
    // Too many items: the subset keeps 3.
    let mut d = raw_product("many");
    let four: Vec<Document> = (0..4_i64)
        .map(|i| doc! { "reviewId": i, "stars": 5 })
        .collect();
    d.insert("topReviews", four);
    refused("topReviews", d).await;
    // A field the model does not declare.
    let mut d = raw_product("extra");
    d.insert("surprise", 1);
    refused("surprise", d).await;
    assert_eq!(
        raw.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing else stored"
    );
}

#[tokio::test]
async fn the_doctor_counts_the_documents_the_validator_refuses() {
    let db = test_db("validator_doctor").await;
    let raw = db.collection::<Document>("v_products");
    for i in 0..7 {
        raw.insert_one(raw_product(&format!("good{i}")))
            .await
            .unwrap();
    }
    for i in 0..3 {
        let mut d = raw_product(&format!("bad{i}"));
        d.insert("inStock", "yes");
        raw.insert_one(d).await.unwrap();
    }
    let mut d = raw_product("bad9");
    d.remove("name");
    raw.insert_one(d).await.unwrap();
    let refused = refused_documents(&db, VProduct::SCHEMA, &ValidatorOptions::new())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refused.count, 4);
    assert_eq!(
        refused.examples,
        ["bad0", "bad1", "bad2", "bad9"].map(Bson::from)
    );
    let report = doctor(&db)
        .models(&[VProduct::SCHEMA])
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
    assert_eq!(findings[0].documents.len(), 4);
}

#[tokio::test]
async fn the_subset_writes_pass_a_strict_validator() {
    let db = test_db("validator_subset").await;
    pattern_runtime::sync(&db)
        .models(&[VProduct::SCHEMA, VReview::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let report = sync_validators(
        &db,
        &[VProduct::SCHEMA, VReview::SCHEMA],
        &strict().forbid_other_fields(),
    )
    .await
    .unwrap();
    assert!(report
        .models
        .iter()
        .all(|m| matches!(m.state, ValidatorState::Created | ValidatorState::Applied)));
    VProduct::collection(&db)
        .raw()
        .insert_one(product("p"))
        .await
        .unwrap();
    let reviews = VProduct::collection(&db).subset(VProduct::FIELDS.top_reviews);
    for i in 0..6_i64 {
        reviews
            .push(
                "p",
                VReview {
                    id: i,
                    product_id: "p".into(),
                    stars: (i % 5) as i32 + 1,
                },
            )
            .await
            .unwrap();
    }
    reviews.remove("p", 4_i64).await.unwrap();
    reviews.rebuild("p").await.unwrap();
    let p = VProduct::collection(&db).get("p").await.unwrap().unwrap();
    assert_eq!(p.top_reviews.len(), 3);
    assert_eq!(p.review_count, 5);
    assert_eq!(
        refused_documents(&db, VProduct::SCHEMA, &ValidatorOptions::new())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
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
    let db = test_db("validator_enum").await;
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

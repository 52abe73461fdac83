//! The doctor's count of stored documents a declared validator refuses: exact over the whole
//! collection, older schema versions counted until `converge` rewrites them.

use super::*;
use bson::{doc, Bson, Document};
use pattern_runtime::{
    doctor,
    doctor::Check,
    schema_version::SchemaVersion,
    validator::{refused_documents, sync_validators, ValidatorOptions, ValidatorState},
    DoctorOptions, Model,
};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};

#[tokio::test]
async fn the_doctor_counts_the_documents_the_validator_refuses() {
    let db = test_db_unvalidated("validator_doctor").await;
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

// ---------------------------------------------------------------------------------------------
// The doctor
// ---------------------------------------------------------------------------------------------

/// The doctor counts exactly the stored documents the declared validator (default
/// options: other fields allowed) refuses, over the whole collection, listing five `_id`s.
#[tokio::test]
async fn the_doctor_counts_exactly_the_refused_documents() {
    let db = test_db_unvalidated("nv_doctor").await;
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

/// The doctor counts documents of an older schema version as refused (they lack the
/// current fields); `converge` rewrites them under a strict, closed validator, and a toolkit
/// update of an older document upgrades it first, so it passes.
#[tokio::test]
async fn schema_versions_older_documents_are_counted_then_converge_passes_strict() {
    let db = test_db_unvalidated("nv_schema_version").await;
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

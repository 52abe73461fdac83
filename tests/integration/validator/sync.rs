//! Installing validators: `sync_validators`, `SyncOptions::validators`, `sync(&db).models(..)` and
//! `.group(..)`: created, applied, reported; levels and actions, their defaults, drift left alone
//! unless `replace()` is asked, a misspelt group, concurrent syncs on a missing collection.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{
    validator::{
        refused_documents, sync_validators, Action, Level, ValidatorOptions, ValidatorState,
    },
    Error, Measurement, Model, SyncOptions,
};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};

#[tokio::test]
async fn sync_creates_applies_reports_drift_and_replaces_only_when_asked() {
    let db = test_db_unvalidated("validator_sync").await;
    // A missing collection: created with it, at the default moderate/warn.
    let report = sync_validators(&db, &[VProduct::SCHEMA], &ValidatorOptions::new())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Created),
        "{report:?}"
    );
    let info = stored_options(&db, "v_products").await;
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
        stored_options(&db, "v_products")
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
    let info = stored_options(&db, "v_products").await;
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

async fn stored_options(db: &mongodb::Database, name: &str) -> Document {
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

// ---------------------------------------------------------------------------------------------
// Installing
// ---------------------------------------------------------------------------------------------

/// The defaults are `moderate` and `warn`: "nothing refused yet".
#[tokio::test]
async fn the_defaults_refuse_nothing() {
    let db = test_db_unvalidated("nv_defaults").await;
    assert_installed(
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

/// An installed level or action that differs from the declaration (changed by hand)
/// is `Drift` and left as it is; `replace()` replaces it.
#[tokio::test]
async fn a_level_or_action_changed_by_hand_is_drift_until_replaced() {
    let db = test_db_unvalidated("nv_drift_level").await;
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

/// A validator is never replaced unless asked, even by stricter options or by the
/// closed form of the same model; `replace()` then installs exactly the declaration.
#[tokio::test]
async fn forbidding_other_fields_later_is_drift_not_a_silent_tightening() {
    let db = test_db_unvalidated("nv_drift_closed").await;
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

/// `sync_validators` creates a missing collection with its validator; several
/// processes starting at once must all succeed.
#[tokio::test]
async fn concurrent_syncs_on_a_missing_collection_all_succeed() {
    let db = test_db_unvalidated("nv_concurrent").await;
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

#[tokio::test]
async fn the_index_sync_installs_validators_when_asked() {
    let db = test_db_unvalidated("co_sync_models").await;
    // Not asked: no validators.
    let plain = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert_eq!(plain.validators, None);
    let options = SyncOptions::new().validators(closed());
    let report = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&options)
        .await
        .unwrap();
    let validators = report.validators.expect("asked for");
    assert_eq!(validators.models.len(), 6, "{validators:?}");
    // The index sync created the collections first time round; the validators are applied to
    // them now, the revisions' included.
    assert!(
        validators
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Applied | ValidatorState::Created)),
        "{validators:?}"
    );
    let again = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&options)
        .await
        .unwrap();
    assert!(again
        .validators
        .unwrap()
        .models
        .iter()
        .all(|s| matches!(s.state, ValidatorState::Unchanged)));
    refused(
        insert_raw(
            &db,
            "co_article_revisions",
            doc! { "docId": 1_i64, "version": "one", "snapshot": {}, "archivedAt": DateTime::now() },
        )
        .await,
        "version",
    );
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

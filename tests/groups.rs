//! A program whose models live in several databases: `#[model(group = "...")]` with
//! `sync(&db).group(..)`, the explicit list `sync(&db).models(..)`, and what counts as managed or conflicting
//! across groups. Against the server.

use pattern_runtime::{sync::IndexStatus, Error, Model, SyncOptions};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

/// The shop's orders: group `shop`.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "events", group = "shop")]
#[index(keys(kind = 1), name = "by_kind")]
struct ShopEvent {
    #[serde(rename = "_id")]
    id: i64,
    kind: String,
}

/// The audit log: group `audit`, the same collection name, an index of the same name on other
/// keys. In one database this would conflict; in two it must not.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "events", group = "audit")]
#[index(keys(at = -1), name = "by_kind")]
struct AuditEvent {
    #[serde(rename = "_id")]
    id: i64,
    at: bson::DateTime,
    #[index]
    actor: String,
}

/// Also in `shop`, its own collection.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "shop")]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    #[index(unique)]
    email: String,
}

/// In no group.
#[derive(Debug, Serialize, Deserialize, Model)]
struct Loner {
    #[serde(rename = "_id")]
    id: i64,
    #[index]
    name: String,
}

async fn index_names(db: &mongodb::Database, collection: &str) -> Vec<String> {
    let mut names: Vec<String> = pattern_runtime::sync::list_indexes(db, collection)
        .await
        .unwrap()
        .iter()
        .filter_map(|i| i.get_str("name").ok().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn each_group_syncs_its_own_models_in_its_own_database() {
    let shop = test_db_unvalidated("groups_shop").await;
    let audit = test_db_unvalidated("groups_audit").await;
    let options = SyncOptions::new();

    let report = pattern_runtime::sync(&shop)
        .group("shop")
        .options(&options)
        .await
        .unwrap();
    let mut synced: Vec<_> = report
        .indexes
        .iter()
        .map(|r| (r.collection.as_str(), r.model))
        .collect();
    synced.sort();
    assert_eq!(
        synced,
        [
            ("customers", Some("Customer")),
            ("events", Some("ShopEvent"))
        ]
    );
    assert_eq!(index_names(&shop, "events").await, ["_id_", "by_kind"]);
    assert_eq!(index_names(&shop, "customers").await, ["_id_", "email_1"]);
    // Nothing of the other group, nor of the model in no group.
    assert!(index_names(&shop, "loners").await.is_empty());

    pattern_runtime::sync(&audit)
        .group("audit")
        .options(&options)
        .await
        .unwrap();
    assert_eq!(
        index_names(&audit, "events").await,
        ["_id_", "actor_1", "by_kind"]
    );
    assert!(index_names(&audit, "customers").await.is_empty());
    let by_kind = pattern_runtime::sync::list_indexes(&audit, "events")
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.get_str("name").ok() == Some("by_kind"))
        .unwrap();
    assert_eq!(
        by_kind.get_document("key").unwrap(),
        &bson::doc! { "at": -1 }
    );

    // Again: in sync, both.
    assert!(pattern_runtime::sync(&shop)
        .group("shop")
        .options(&options)
        .await
        .unwrap()
        .is_in_sync());
    assert!(pattern_runtime::sync(&audit)
        .group("audit")
        .options(&options)
        .await
        .unwrap()
        .is_in_sync());
}

#[tokio::test]
async fn an_unknown_group_is_an_error_that_lists_the_groups() {
    let db = test_db_unvalidated("groups_unknown").await;
    let err = pattern_runtime::sync(&db)
        .group("shpo")
        .options(&SyncOptions::new())
        .await
        .unwrap_err();
    match &err {
        Error::UnknownGroup { group, known } => {
            assert_eq!(group, "shpo");
            assert_eq!(known, &["audit", "helpdesk", "shop"]);
        }
        other => panic!("expected UnknownGroup, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "no model is in group `shpo`; the groups are: audit, helpdesk, shop"
    );
    // Nothing was created.
    let collections = db.list_collection_names().await.unwrap();
    assert!(collections.is_empty(), "{collections:?}");
}

#[tokio::test]
async fn an_explicit_list_syncs_exactly_those_models() {
    let db = test_db("groups_list").await;
    let report = pattern_runtime::sync(&db)
        .models(&[Loner::SCHEMA, Customer::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let mut created: Vec<_> = report
        .created()
        .map(|r| (r.collection.as_str(), r.name.as_str()))
        .collect();
    created.sort();
    assert_eq!(created, [("customers", "email_1"), ("loners", "name_1")]);
    assert!(index_names(&db, "events").await.is_empty());
}

#[tokio::test]
async fn two_groups_declaring_one_name_differently_conflict_only_when_synced_together() {
    let db = test_db("groups_conflict").await;
    // Both `events` models in one database: the same index name, different keys.
    let err = pattern_runtime::sync(&db)
        .models(&[ShopEvent::SCHEMA, AuditEvent::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap_err();
    match err {
        Error::ConflictingDeclarations {
            collection,
            index,
            models,
            same_signature_as: None,
        } => {
            assert_eq!((collection.as_str(), index), ("events", "by_kind"));
            assert_eq!(models, ["ShopEvent", "AuditEvent"]);
        }
        other => panic!("expected ConflictingDeclarations, got {other:?}"),
    }
    assert!(index_names(&db, "events").await.is_empty());
}

#[tokio::test]
async fn hiding_unmanaged_indexes_spares_what_another_group_declares() {
    let db = test_db("groups_hide").await;
    let events = db.collection::<bson::Document>("events");
    // `actor_1` is declared by the audit group's model; `stray_1` by no model.
    for (keys, name) in [
        (bson::doc! { "actor": 1 }, "actor_1"),
        (bson::doc! { "stray": 1 }, "stray_1"),
    ] {
        let model = mongodb::IndexModel::builder()
            .keys(keys)
            .options(
                mongodb::options::IndexOptions::builder()
                    .name(name.to_owned())
                    .build(),
            )
            .build();
        events.create_index(model).await.unwrap();
    }
    let report = pattern_runtime::sync(&db)
        .group("shop")
        .options(&SyncOptions::new().hide_unmanaged())
        .await
        .unwrap();
    let status = |name: &str| report.get("events", name).map(|r| r.status.clone());
    assert_eq!(status("by_kind"), Some(IndexStatus::Created));
    assert_eq!(status("stray_1"), Some(IndexStatus::HiddenUnmanaged));
    // Declared by a model of the program, in another group: managed, never hidden.
    assert_eq!(status("actor_1"), None);
    let actor = pattern_runtime::sync::list_indexes(&db, "events")
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.get_str("name").ok() == Some("actor_1"))
        .unwrap();
    assert!(!actor.get_bool("hidden").unwrap_or(false));
}

#[test]
fn the_group_is_in_the_schema() {
    assert_eq!(ShopEvent::SCHEMA.group(), Some("shop"));
    assert_eq!(AuditEvent::SCHEMA.group(), Some("audit"));
    assert_eq!(Loner::SCHEMA.group(), None);
}

/// The same index under two names in two models of one group: renaming cannot fix it.
#[allow(dead_code)] // only ever synced, through the registry
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "tickets", group = "helpdesk")]
#[index(keys(opened_at = 1), name = "ticket_ttl", expire_after = "7d")]
struct Ticket {
    #[serde(rename = "_id")]
    id: i64,
    opened_at: bson::DateTime,
}

#[allow(dead_code)] // only ever synced, through the registry
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "tickets", group = "helpdesk")]
#[index(keys(opened_at = 1), name = "archive_ttl", expire_after = "90d")]
struct ArchivedTicket {
    #[serde(rename = "_id")]
    id: i64,
    opened_at: bson::DateTime,
}

#[tokio::test]
async fn one_index_under_two_names_in_two_models_gets_a_hint_that_can_work() {
    let db = test_db_unvalidated("groups_same_signature").await;
    let err = pattern_runtime::sync(&db)
        .group("helpdesk")
        .options(&SyncOptions::new())
        .await
        .unwrap_err();
    let Error::ConflictingDeclarations {
        same_signature_as, ..
    } = &err
    else {
        panic!("expected ConflictingDeclarations, got {err:?}");
    };
    assert!(same_signature_as.is_some(), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("under two names"), "{text}");
    assert!(text.contains("declare it in one model only"), "{text}");
    assert!(!text.contains("give one of them another `name`"), "{text}");
    // Nothing was created.
    assert!(index_names(&db, "tickets").await.is_empty());
}

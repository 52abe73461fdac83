//! Shard keys: the commands the sync would send, compared as BSON with MongoDB's documented form
//! (the seed's `sh.shardCollection`), and the sync against the server. The embedded server is a
//! replica set: the sync must say sharding does not apply, send nothing and create nothing. With
//! `MONGODB_URI` at a `mongos`, the same test checks that the sync shards, then finds the key in
//! place.

use bson::doc;
use pattern_runtime::index::IndexKind;
use pattern_runtime::shard::enable_sharding_command;
use pattern_runtime::{shard::ShardStatus, sync::list_indexes, Model, SyncOptions};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

/// The seed's users, sharded on `user_id` (high cardinality, queries isolated by user).
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "users", group = "shard_users")]
#[shard_key(user_id)]
#[index(keys(user_id = 1, email = 1), unique)]
struct User {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    user_id: String,
    email: String,
}

/// The seed's logs: hashed `_id`, the fix for a timestamp's hot shard.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "logs", group = "shard_logs")]
#[shard_key(id = "hashed")]
struct Log {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    timestamp: bson::DateTime,
}

/// Compound, through serde's names, ranged then hashed.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "shard_readings")]
#[shard_key(region_code = 1, device_id = "hashed")]
struct Reading {
    #[serde(rename = "_id")]
    id: i64,
    region_code: String,
    device_id: String,
}

/// A ranged key on a date, allowed knowingly.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "shard_events")]
#[shard_key(at, allow_monotonic)]
struct Event {
    #[serde(rename = "_id")]
    id: i64,
    at: bson::DateTime,
}

/// An enum model: the variants share one collection, sharded on a common field.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(tag = "type")]
#[model(collection = "notifications", group = "shard_notifications")]
#[shard_key(user = "hashed")]
enum Notification {
    Email {
        _id: i64,
        user: String,
        to: String,
    },
    Push {
        _id: i64,
        user: String,
        device: String,
    },
}

#[test]
fn commands_are_mongodbs_documented_form() {
    // sh.shardCollection("mydb.users", { "user_id": 1 })
    let users = User::SCHEMA.shard_key().expect("declared");
    assert_eq!(
        users.shard_collection_command("mydb", "users"),
        doc! { "shardCollection": "mydb.users", "key": { "user_id": 1 } }
    );
    // sh.shardCollection("mydb.logs", { "_id": "hashed" })
    let logs = Log::SCHEMA.shard_key().expect("declared");
    assert_eq!(
        logs.shard_collection_command("mydb", "logs"),
        doc! { "shardCollection": "mydb.logs", "key": { "_id": "hashed" } }
    );
    assert!(logs.is_hashed());
    // sh.enableSharding("mydb")
    assert_eq!(
        enable_sharding_command("mydb"),
        doc! { "enableSharding": "mydb" }
    );
    let readings = Reading::SCHEMA.shard_key().expect("declared");
    assert_eq!(
        readings.key_document(),
        doc! { "regionCode": 1, "deviceId": "hashed" }
    );
    assert_eq!(
        readings.keys().iter().map(|k| k.kind).collect::<Vec<_>>(),
        [IndexKind::Ascending, IndexKind::Hashed]
    );
    assert_eq!(
        readings.supporting_index().to_document(),
        doc! { "key": { "regionCode": 1, "deviceId": "hashed" }, "name": "regionCode_1_deviceId_hashed" }
    );
    let events = Event::SCHEMA.shard_key().expect("declared");
    assert!(events.allows_monotonic() && !users.allows_monotonic());
    assert_eq!(
        Notification::SCHEMA.shard_key().map(|k| k.key_document()),
        Some(doc! { "user": "hashed" })
    );
    // The supporting index is found by prefix and kind.
    assert!(users.is_supported_by(&doc! { "user_id": 1, "email": 1 }));
    assert!(!users.is_supported_by(&doc! { "email": 1, "user_id": 1 }));
    assert!(!logs.is_supported_by(&doc! { "_id": 1 }));
    assert!(pattern_runtime::sync::registered_models()
        .iter()
        .any(|m| m.shard_key().is_some() && m.name() == "Notification"));
}

/// The sync on the server: on a replica set or a standalone server, `NotApplicable` with the
/// reason, nothing created; on a sharded cluster, sharded, then in place.
#[tokio::test]
async fn the_sync_shards_on_a_cluster_and_says_why_not_elsewhere() {
    let t = test_db_unvalidated("shard_sync").await;
    let db = t.db();
    let hello = db.run_command(doc! { "hello": 1 }).await.expect("hello");
    let cluster = hello.get_str("msg").ok() == Some("isdbgrid");
    let models = [User::SCHEMA, Log::SCHEMA, Reading::SCHEMA];
    let first = pattern_runtime::sync(db)
        .models(&models)
        .options(&SyncOptions::new())
        .await
        .expect("sync");
    assert_eq!(first.shards.len(), 3, "{first}");
    let keys: Vec<_> = first.shards.iter().map(|s| s.key.clone()).collect();
    assert_eq!(
        keys,
        [
            doc! { "user_id": 1 },
            doc! { "_id": "hashed" },
            doc! { "regionCode": 1, "deviceId": "hashed" },
        ]
    );
    let second = pattern_runtime::sync(db)
        .models(&models)
        .options(&SyncOptions::new())
        .await
        .expect("sync again");
    if cluster {
        for s in &first.shards {
            assert!(matches!(s.status, ShardStatus::Sharded { .. }), "{s}");
        }
        for s in &second.shards {
            assert_eq!(s.status, ShardStatus::InPlace, "{s}");
        }
        assert!(second.is_in_sync(), "{second}");
        return;
    }
    let expected = if hello.get_str("setName").is_ok() {
        "replica set"
    } else {
        "standalone"
    };
    for s in first.shards.iter().chain(&second.shards) {
        match &s.status {
            ShardStatus::NotApplicable { reason } => {
                assert!(reason.contains(expected), "{reason}");
                assert!(reason.contains("not a sharded cluster"), "{reason}");
            }
            other => panic!("{}: {other:?}", s.collection),
        }
    }
    assert!(first.to_string().contains("not applied"), "{first}");
    // Nothing was created for the keys: `logs` and `readings` have no declared index, so the
    // collections do not even exist; `users` has the declared unique index only.
    assert!(list_indexes(db, "logs").await.expect("list").is_empty());
    assert!(list_indexes(db, "readings").await.expect("list").is_empty());
    let names: Vec<String> = list_indexes(db, "users")
        .await
        .expect("list")
        .iter()
        .filter_map(|i| i.get_str("name").ok().map(str::to_owned))
        .collect();
    assert_eq!(names, ["_id_", "user_id_1_email_1"]);
    // Not applicable is not a difference: the second sync is in sync.
    assert!(second.is_in_sync(), "{second}");
}

/// A supporting index that exists (made by hand, or on a cluster by the shard step) is managed:
/// never reported unmanaged, never hidden. (The embedded server has no hashed indexes, and
/// refuses `{_id: "hashed"}`: the ranged key shows it.)
#[tokio::test]
async fn a_supporting_index_is_managed() {
    let t = test_db("shard_managed").await;
    let db = t.db();
    db.run_command(doc! {
        "createIndexes": "users",
        "indexes": [{ "key": { "user_id": 1 }, "name": "user_id_1" }],
    })
    .await
    .expect("create");
    let report = pattern_runtime::sync(db)
        .models(&[User::SCHEMA])
        .options(&SyncOptions::new().hide_unmanaged())
        .await
        .expect("sync");
    assert_eq!(report.unmanaged().count(), 0, "{report}");
    let hidden = list_indexes(db, "users")
        .await
        .expect("list")
        .iter()
        .any(|i| i.get_bool("hidden").unwrap_or(false));
    assert!(!hidden);
}

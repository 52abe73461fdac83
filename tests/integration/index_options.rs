//! The index sync of declared options (TTL, unique + sparse, compound keys): created once, a
//! second sync changes nothing; indexes made by hand with numerically equal options of other
//! numeric types are the same index; a genuinely different option is a mismatch, reported and
//! left alone until `replace_mismatched`.

use bson::{doc, oid::ObjectId, Bson, DateTime};
use pattern_runtime::{
    sync,
    sync::{IndexStatus, SyncReport},
    Error, Model, SyncOptions,
};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "ns_sessions")]
#[serde(rename_all = "camelCase")]
#[index(keys(user = 1, seen_at = -1))]
struct NsSession {
    #[serde(rename = "_id")]
    id: ObjectId,
    user: String,
    #[index(expire_after = "1h")]
    created_at: DateTime,
    seen_at: DateTime,
    // Sparse skips a missing field, not a `null`: leave `None` out.
    #[index(unique, sparse)]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    token: Option<String>,
}

fn in_sync_all(report: &SyncReport) {
    let off: Vec<_> = report
        .indexes
        .iter()
        .filter(|r| {
            !matches!(
                r.status,
                IndexStatus::InSync | IndexStatus::Unmanaged { .. }
            )
        })
        .collect();
    assert!(
        off.is_empty(),
        "second sync should change nothing: {off:#?}\n{report}"
    );
    assert_eq!(report.created().count(), 0);
    assert_eq!(report.mismatched().count(), 0);
}

// ---------------------------------------------------------------------------------------------
// 4. A caller's transaction across handles
// ---------------------------------------------------------------------------------------------

/// The `expireAfterSeconds` of the `createdAt_1` index of `ns_sessions`, as stored (an `int` or
/// a `long`).
async fn stored_ttl(db: &mongodb::Database) -> Option<i64> {
    let listed = pattern_runtime::sync::list_indexes(db, "ns_sessions")
        .await
        .unwrap();
    let ttl = listed
        .iter()
        .find(|d| d.get_str("name").ok() == Some("createdAt_1"))
        .unwrap();
    let seconds = ttl.get("expireAfterSeconds")?;
    seconds.as_i64().or_else(|| seconds.as_i32().map(i64::from))
}

// ---------------------------------------------------------------------------------------------
// 3. Index sync
// ---------------------------------------------------------------------------------------------

/// Declared options (TTL, unique + sparse, compound) are created once; the second sync reports
/// nothing to change, and the server has what was declared.
#[tokio::test]
async fn index_sync_twice_changes_nothing_the_second_time() {
    let db = test_db("ns_sync_twice").await;
    let names: Vec<_> = NsSession::SCHEMA
        .indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    assert_eq!(names, ["user_1_seenAt_-1", "createdAt_1", "token_1"]);

    let first = sync(&db)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert_eq!(first.created().count(), 3, "{first}");
    let second = sync(&db)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    in_sync_all(&second);
    assert!(second.is_in_sync(), "{second}");

    assert_eq!(stored_ttl(&db).await, Some(3600));
    let listed = pattern_runtime::sync::list_indexes(&db, "ns_sessions")
        .await
        .unwrap();
    let token = listed
        .iter()
        .find(|d| d.get_str("name").ok() == Some("token_1"))
        .unwrap();
    assert_eq!(token.get_bool("unique").ok(), Some(true));
    assert_eq!(token.get_bool("sparse").ok(), Some(true));

    // The unique index works: a second token is refused as a duplicate key.
    let coll = NsSession::collection(&db).raw().clone();
    let s = |token: Option<&str>| NsSession {
        id: ObjectId::new(),
        user: "u".into(),
        created_at: DateTime::now(),
        seen_at: DateTime::now(),
        token: token.map(Into::into),
    };
    coll.insert_one(s(Some("t"))).await.unwrap();
    coll.insert_one(s(None)).await.unwrap();
    coll.insert_one(s(None)).await.unwrap(); // sparse: two without a token
    let dup = Error::from(coll.insert_one(s(Some("t"))).await.unwrap_err());
    assert!(dup.is_duplicate_key(), "{dup:?}");
}

/// Indexes made by hand with equal values of other numeric types (`expireAfterSeconds` as a
/// long or a double, key directions as doubles or longs) are the declared ones: in sync, not
/// replaced.
#[tokio::test]
async fn index_sync_sees_numerically_equal_options_as_the_same_index() {
    let db = test_db("ns_sync_equal_numbers").await;
    db.run_command(doc! {
        "createIndexes": "ns_sessions",
        "indexes": [
            { "key": { "createdAt": 1.0 }, "name": "createdAt_1", "expireAfterSeconds": Bson::Int64(3600) },
            { "key": { "token": Bson::Int64(1) }, "name": "token_1", "unique": true, "sparse": true },
            { "key": { "user": 1.0, "seenAt": -1.0 }, "name": "user_1_seenAt_-1" },
        ],
    })
    .await
    .unwrap();
    let before = pattern_runtime::sync::list_indexes(&db, "ns_sessions")
        .await
        .unwrap();

    for round in 0..2 {
        let report = sync(&db)
            .models(&[NsSession::SCHEMA])
            .options(&SyncOptions::new())
            .await
            .unwrap();
        assert!(
            report.is_in_sync(),
            "round {round}: {report}\n{:#?}",
            report.indexes
        );
        in_sync_all(&report);
    }
    // Also with replace_mismatched: nothing is dropped and created again.
    let report = sync(&db)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new().replace_mismatched())
        .await
        .unwrap();
    assert!(report.is_in_sync(), "{report}");
    assert_eq!(
        pattern_runtime::sync::list_indexes(&db, "ns_sessions")
            .await
            .unwrap(),
        before
    );

    // A TTL given as a double, on a fresh collection of the same model elsewhere.
    let db2 = test_db("ns_sync_equal_numbers_2").await;
    db2.run_command(doc! {
        "createIndexes": "ns_sessions",
        "indexes": [
            { "key": { "createdAt": Bson::Int32(1) }, "name": "createdAt_1", "expireAfterSeconds": 3600.0 },
        ],
    })
    .await
    .unwrap();
    let report = sync(&db2)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let ttl = report.get("ns_sessions", "createdAt_1").unwrap();
    assert_eq!(ttl.status, IndexStatus::InSync, "{report}");
}

/// A genuinely different option is a mismatch, reported again by a second sync and left alone;
/// `replace_mismatched` fixes it, and the sync after is clean.
#[tokio::test]
async fn index_sync_reports_a_genuinely_different_option() {
    let db = test_db("ns_sync_mismatch").await;
    db.run_command(doc! {
        "createIndexes": "ns_sessions",
        "indexes": [
            { "key": { "createdAt": 1 }, "name": "createdAt_1", "expireAfterSeconds": Bson::Int64(7200) },
            { "key": { "token": 1 }, "name": "token_1", "sparse": true },
        ],
    })
    .await
    .unwrap();
    for _ in 0..2 {
        let report = sync(&db)
            .models(&[NsSession::SCHEMA])
            .options(&SyncOptions::new())
            .await
            .unwrap();
        assert!(!report.is_in_sync());
        let options = |name: &str| match &report.get("ns_sessions", name).unwrap().status {
            IndexStatus::Mismatched { differences } => {
                differences.iter().map(|d| d.option).collect::<Vec<_>>()
            }
            other => panic!("{name}: expected a mismatch, got {other:?}\n{report}"),
        };
        assert_eq!(options("createdAt_1"), ["expireAfterSeconds"]);
        assert_eq!(options("token_1"), ["unique"]);
        assert_eq!(report.mismatched().count(), 2);
    }
    assert_eq!(stored_ttl(&db).await, Some(7200), "left as it was");

    let fixed = sync(&db)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new().replace_mismatched())
        .await
        .unwrap();
    let replaced = fixed
        .indexes
        .iter()
        .filter(|r| matches!(r.status, IndexStatus::Replaced { .. }));
    assert_eq!(replaced.count(), 2, "{fixed}");
    let after = sync(&db)
        .models(&[NsSession::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    in_sync_all(&after);
}

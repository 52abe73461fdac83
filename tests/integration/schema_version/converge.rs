//! `converge`: rewriting the documents stored in an older shape, once each, beside concurrent
//! writers and another converge, resumed after being dropped or a server fault; an upgrade that
//! fails, changes `_id`, passes 16 MiB or is refused by the server is listed in `failed` and left
//! as stored while the run goes on.

use super::*;
use bson::{doc, Bson, Document};
use pattern_runtime::{schema_version::SchemaVersion, sync, Error, Model, Progress, SyncOptions};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[tokio::test]
async fn converge_with_concurrent_writers_loses_nothing() {
    const N: i64 = 1200;
    const WRITERS: i64 = 8;
    const WRITES: i64 = 150;
    let t = test_db_unvalidated("sv_converge").await;
    let db = t.db().clone();
    seed(&db, N).await;
    let old_at_start = User::collection(&db)
        .schema_versions()
        .await
        .unwrap()
        .older();
    let raw = db.collection::<Document>("sv_users");
    // Each writer sets its own mark on random documents of every version, as an application
    // that has not moved to the new shape would (`$set` on a field every version has).
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let raw = raw.clone();
        writers.push(tokio::spawn(async move {
            let mut last: BTreeMap<i64, i64> = BTreeMap::new();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1);
            for seq in 1..=WRITES {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let id = (x % N as u64) as i64;
                raw.update_one(
                    doc! { "_id": id },
                    doc! { "$set": { format!("marks.w{w}"): seq } },
                )
                .await
                .unwrap();
                last.insert(id, seq);
                tokio::task::yield_now().await;
            }
            (w, last)
        }));
    }
    // Two converges at once, with the writers.
    let a = tokio::spawn({
        let db = db.clone();
        async move { User::collection(&db).converge().await.unwrap() }
    });
    let b = tokio::spawn({
        let db = db.clone();
        async move { User::collection(&db).converge().await.unwrap() }
    });
    let mut lasts = Vec::new();
    for w in writers {
        lasts.push(w.await.unwrap());
    }
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    // The writers may have finished after the converges: once more for what they left older.
    let c = User::collection(&db).converge().await.unwrap();
    assert!(a.failed.is_empty() && b.failed.is_empty() && c.failed.is_empty());
    // Every older document written exactly once, across the three runs.
    assert_eq!(a.upgraded + b.upgraded + c.upgraded, old_at_start);
    let counts = User::collection(&db).schema_versions().await.unwrap();
    assert_eq!(counts.known, BTreeMap::from([(3, N as u64)]));
    let users: BTreeMap<i64, User> = User::collection(&db)
        .find(doc! {})
        .await
        .unwrap()
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    for (w, last) in lasts {
        for (id, seq) in last {
            assert_eq!(
                users[&id].marks.get(&format!("w{w}")),
                Some(&seq),
                "writer {w}'s last value on user {id}"
            );
        }
    }
    for (id, u) in &users {
        assert_eq!(u.full_name, expected(*id).0);
    }
}

#[tokio::test]
async fn converge_resumes_after_being_dropped() {
    const N: i64 = 2000;
    let t = test_db_unvalidated("sv_resume").await;
    let db = t.db().clone();
    seed(&db, N).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    let task = tokio::spawn({
        let db = db.clone();
        async move {
            User::collection(&db)
                .converge_with_progress(move |p: &Progress| {
                    let _ = tx.send(p.done);
                })
                .await
        }
    });
    // Dropped after its first batch, wherever it is then.
    let first = rx.recv().await.expect("one batch");
    task.abort();
    let _ = task.await;
    let left = User::collection(&db)
        .schema_versions()
        .await
        .unwrap()
        .older();
    assert!(
        left < 1500,
        "the first batch was written ({first} reported, {left} left)"
    );
    assert!(left > 0, "stopped before the end");
    let done = User::collection(&db).converge().await.unwrap();
    assert_eq!(done.upgraded, left);
    let counts = User::collection(&db).schema_versions().await.unwrap();
    assert_eq!(counts.known, BTreeMap::from([(3, N as u64)]));
    for u in User::collection(&db).find(doc! {}).await.unwrap() {
        let (full, initials) = expected(u.id);
        assert_eq!((u.full_name, u.initials), (full, initials));
    }
    // Idempotent: nothing left to do.
    assert_eq!(User::collection(&db).converge().await.unwrap().upgraded, 0);
}

/// A fault in the middle: the server fails converge's second `update` command (a fail point),
/// so the run stops with the driver's error after one batch is written. The rerun upgrades
/// exactly what was left, and the end state is the same as an uninterrupted run's.
#[tokio::test]
async fn converge_resumes_after_a_server_fault() {
    const N: i64 = 1200; // three batches of 500
    let t = test_db_unvalidated("sv_fault").await;
    let db = t.db().clone();
    seed(&db, N).await;
    let users = User::collection(&db);
    let before = users.schema_versions().await.unwrap().older();
    t.fail_command_after(
        &["update"],
        1,
        doc! { "errorCode": 2, "errmsg": "injected" },
    )
    .await;
    let stopped = User::collection(&db).converge().await;
    t.fail_command_off().await;
    let err = stopped.expect_err("the second batch's update fails");
    assert_eq!(err.code(), Some(2), "{err:?}");
    let left = User::collection(&db)
        .schema_versions()
        .await
        .unwrap()
        .older();
    assert!(
        left > 0 && left < before,
        "the first batch was written, not the rest ({left} of {before} left)"
    );
    let done = User::collection(&db).converge().await.unwrap();
    assert_eq!(done.upgraded, left);
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    let counts = User::collection(&db).schema_versions().await.unwrap();
    assert_eq!(counts.known, BTreeMap::from([(3, N as u64)]));
    for u in User::collection(&db).find(doc! {}).await.unwrap() {
        let (full, initials) = expected(u.id);
        assert_eq!((u.full_name, u.initials), (full, initials));
    }
}

/// "Two runs at once each write a document at most once between them."
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_converges_at_once() {
    let t = test_db_unvalidated("nsv_two_converges").await;
    let db = t.db().clone();
    seed_v1_users(&db, 1300).await;
    let a = tokio::spawn({
        let db = db.clone();
        async move { NsvUser::collection(&db).converge().await }
    });
    let b = tokio::spawn({
        let db = db.clone();
        async move { NsvUser::collection(&db).converge().await }
    });
    let (a, b) = tokio::time::timeout(LONG, async {
        (a.await.unwrap().unwrap(), b.await.unwrap().unwrap())
    })
    .await
    .expect("both converges end");
    assert!(a.failed.is_empty() && b.failed.is_empty());
    assert_eq!(a.upgraded + b.upgraded, 1300, "{a:?} {b:?}");
    assert_eq!(
        NsvUser::collection(&db)
            .schema_versions()
            .await
            .unwrap()
            .older(),
        0
    );
}

/// Converge while other tasks `$inc` a field every shape has: no increment lost, every
/// document current at the end, each written once by converge.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn converge_while_writers_inc() {
    let t = test_db_unvalidated("nsv_converge_writers").await;
    let db = t.db().clone();
    let n = 1200_i64;
    seed_v1_users(&db, n).await;
    let mut writers = Vec::new();
    for w in 0..4_i64 {
        let db = db.clone();
        writers.push(tokio::spawn(async move {
            for k in 0..300_i64 {
                let id = (k * 7 + w * 131) % n;
                raw(&db, USERS)
                    .update_one(doc! { "_id": id }, doc! { "$inc": { "visits": 1_i64 } })
                    .await
                    .unwrap();
            }
        }));
    }
    let users = NsvUser::collection(&db);
    let done = tokio::time::timeout(LONG, users.converge())
        .await
        .expect("converge ends")
        .unwrap();
    for w in writers {
        w.await.unwrap();
    }
    assert!(done.failed.is_empty());
    assert_eq!(done.upgraded, n as u64, "{done:?}");
    assert_eq!(total_visits(&db).await, 1200);
    assert_eq!(users.schema_versions().await.unwrap().older(), 0);
    let all = users.find(doc! {}).await.unwrap();
    assert_eq!(all.iter().map(|u| u.visits).sum::<i64>(), 1200);
}

// ------------------------------------------------------------------------------------------
// Upgrades that fail (`TryFrom`) or change the `_id`.

#[derive(Debug, Deserialize)]
struct NsvAcctV1 {
    #[serde(rename = "_id")]
    id: i64,
    balance: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_accounts")]
#[schema_version(older(NsvAcctV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvAcct {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    balance: i64,
}

impl TryFrom<NsvAcctV1> for NsvAcct {
    type Error = String;
    fn try_from(v1: NsvAcctV1) -> Result<Self, String> {
        let balance = v1
            .balance
            .parse()
            .map_err(|e| format!("balance {:?}: {e}", v1.balance))?;
        Ok(NsvAcct {
            id: v1.id,
            schema_version: SchemaVersion,
            balance,
        })
    }
}

#[tokio::test]
async fn failing_upgrades_affect_their_document_only() {
    let t = test_db_unvalidated("nsv_failing_upgrade").await;
    let db = t.db();
    let accounts = NsvAcct::collection(db);
    raw(db, "nsv_accounts")
        .insert_many([
            doc! { "_id": 1_i64, "balance": "10" },
            doc! { "_id": 2_i64, "balance": "ten" },
            doc! { "_id": 3_i64, "balance": 30 }, // does not read as the V1 shape
            doc! { "_id": 4_i64, "balance": "40" },
        ])
        .await
        .unwrap();
    match accounts.get(2).await {
        Err(e @ Error::Upgrade { from: 1, .. }) => {
            assert!(e.is_schema_version());
            assert!(e.to_string().contains("ten"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(accounts.get(3).await, Err(Error::Upgrade { .. })));
    assert!(accounts.find(doc! {}).await.is_err());
    let each = accounts.find_each(doc! {}).await.unwrap();
    assert_eq!(each.iter().filter(|r| r.is_ok()).count(), 2);
    assert!(accounts.writing_back().get(2).await.is_err());
    let done = accounts.converge().await.unwrap();
    assert_eq!(done.upgraded, 2);
    assert_eq!(done.failed.len(), 2, "{:?}", done.failed);
    assert_eq!(
        stored(db, "nsv_accounts", 2_i64).await.unwrap(),
        doc! { "_id": 2_i64, "balance": "ten" }
    );
    assert_eq!(accounts.schema_versions().await.unwrap().older(), 2);
}

#[derive(Debug, Deserialize)]
struct NsvMovedV1 {
    #[serde(rename = "_id")]
    id: i64,
    label: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_moved")]
#[schema_version(older(NsvMovedV1 = 1))]
struct NsvMoved {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    label: String,
}

impl From<NsvMovedV1> for NsvMoved {
    fn from(v1: NsvMovedV1) -> Self {
        NsvMoved {
            id: v1.id + 1000,
            sv: SchemaVersion,
            label: v1.label,
        }
    }
}

/// An upgrade that changes `_id`: the docs say nothing. What is expected at least:
/// no duplicate, no lost document, converge ends, and `get(id)` does not hand back a document
/// whose `_id` is not the one asked for.
#[tokio::test]
async fn upgrade_that_changes_id() {
    let t = test_db_unvalidated("nsv_upgrade_moves_id").await;
    let db = t.db();
    let moved = NsvMoved::collection(db);
    raw(db, "nsv_moved")
        .insert_one(doc! { "_id": 1_i64, "label": "one" })
        .await
        .unwrap();
    raw(db, "nsv_moved")
        .insert_one(doc! { "_id": 2_i64, "label": "two" })
        .await
        .unwrap();
    let got = moved.get(1).await;
    let got_desc = format!("{got:?}");
    let lazy = moved.writing_back().get(2).await;
    let done = tokio::time::timeout(LONG, moved.converge())
        .await
        .expect("converge ends");
    let n = raw(db, "nsv_moved").count_documents(doc! {}).await.unwrap();
    let ids: Vec<Bson> = {
        use futures_util::TryStreamExt;
        let d: Vec<Document> = raw(db, "nsv_moved")
            .find(doc! {})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        d.iter().map(|d| d.get("_id").unwrap().clone()).collect()
    };
    eprintln!("get(1) = {got_desc}; writing_back get(2) = {lazy:?}; converge = {done:?}; stored ids {ids:?}");
    assert_eq!(n, 2, "no document lost or doubled");
    if let Ok(Some(m)) = &got {
        assert_eq!(
            m.id, 1,
            "FINDING: get(1) returned a document whose _id is {}",
            m.id
        );
    }
}

// ------------------------------------------------------------------------------------------
// Documents near 16 MiB that grow when upgraded.

#[derive(Debug, Deserialize)]
struct NsvBlobV1 {
    #[serde(rename = "_id")]
    id: i64,
    body: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_blobs")]
#[schema_version(older(NsvBlobV1 = 1))]
struct NsvBlob {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    body: String,
    copy: String,
}

impl From<NsvBlobV1> for NsvBlob {
    fn from(v1: NsvBlobV1) -> Self {
        NsvBlob {
            id: v1.id,
            sv: SchemaVersion,
            copy: v1.body.clone(),
            body: v1.body,
        }
    }
}

const MIB: usize = 1024 * 1024;

/// An upgraded document over 16 MiB is listed in `failed` and left as stored; the run goes on.
#[tokio::test]
async fn upgrade_past_16_mib_is_failed_not_fatal() {
    let t = test_db_unvalidated("nsv_blob_too_large").await;
    let db = t.db();
    let blobs = NsvBlob::collection(db);
    raw(db, "nsv_blobs")
        .insert_one(doc! { "_id": 1_i64, "body": "x".repeat(9 * MIB) })
        .await
        .unwrap();
    raw(db, "nsv_blobs")
        .insert_one(doc! { "_id": 2_i64, "body": "small" })
        .await
        .unwrap();
    let lazy = blobs.writing_back().get(1).await;
    assert!(
        lazy.is_ok(),
        "a read returns even when the write-back fails: {:?}",
        lazy.err()
    );
    let done = blobs.converge().await.unwrap();
    assert_eq!(done.upgraded, 1, "{done:?}");
    assert_eq!(done.failed.len(), 1, "{done:?}");
    assert!(stored(db, "nsv_blobs", 1_i64)
        .await
        .unwrap()
        .get("sv")
        .is_none());
}

/// Passes: an upgraded document well under 16 MiB (12 MiB) from a 6 MiB stored
/// one. The docs: a document is `failed` only if it does not upgrade or is over the size
/// limit; this one is neither.
#[tokio::test]
async fn upgrade_to_12_mib_converges() {
    let t = test_db_unvalidated("nsv_blob_12mib").await;
    let db = t.db();
    let blobs = NsvBlob::collection(db);
    raw(db, "nsv_blobs")
        .insert_one(doc! { "_id": 1_i64, "body": "y".repeat(6 * MIB) })
        .await
        .unwrap();
    raw(db, "nsv_blobs")
        .insert_one(doc! { "_id": 2_i64, "body": "z".repeat(6 * MIB) })
        .await
        .unwrap();
    for i in 3..7_i64 {
        raw(db, "nsv_blobs")
            .insert_one(doc! { "_id": i, "body": "w".repeat(3 * MIB) })
            .await
            .unwrap();
    }
    let got = blobs.writing_back().get(1).await.unwrap().unwrap();
    assert_eq!(got.copy.len(), 6 * MIB);
    let wrote_back = stored(db, "nsv_blobs", 1_i64)
        .await
        .unwrap()
        .get("sv")
        .cloned();
    let done = blobs.converge().await;
    let counts = blobs.schema_versions().await.unwrap();
    assert!(wrote_back.is_some(), "FINDING: writing_back did not write back the 12 MiB upgrade (see WARN); converge then: {done:?}");
    let done = done.unwrap();
    assert!(done.failed.is_empty(), "FINDING: {:?}", done.failed);
    assert_eq!(counts.older(), 0, "{done:?}");
}

// Stored-name clashes of the version field are compile errors now: `tests/ui/schema_version/declaration.rs`.

// ------------------------------------------------------------------------------------------
// A rewrite the server refuses (a unique index the upgraded documents collide on).

#[derive(Debug, Deserialize)]
struct NsvMemberV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_members")]
#[schema_version(older(NsvMemberV1 = 1))]
struct NsvMember {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    #[index(unique, sparse)] // older documents have no handle yet
    handle: String,
}

impl From<NsvMemberV1> for NsvMember {
    fn from(v1: NsvMemberV1) -> Self {
        NsvMember {
            id: v1.id,
            sv: SchemaVersion,
            handle: v1.name.to_lowercase(),
        }
    }
}

/// "A document that does not upgrade is left as stored and listed in `failed`; the run goes
/// on": here the server refuses one rewrite (duplicate key); the others should still converge.
#[tokio::test]
async fn converge_with_a_rewrite_the_server_refuses() {
    let t = test_db_unvalidated("nsv_unique_collision").await;
    let db = t.db();
    sync(db)
        .models(&[NsvMember::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    // More than two batches (CONVERGE_BATCH is 500), the collision in the first.
    let mut docs: Vec<Document> = (1..=1200_i64)
        .map(|i| doc! { "_id": i, "name": format!("m{i}") })
        .collect();
    docs.insert(1, doc! { "_id": 10_000_i64, "name": "M1" }); // upgrades to handle "m1", like _id 1
    for chunk in docs.chunks(400) {
        raw(db, "nsv_members")
            .insert_many(chunk.to_vec())
            .await
            .unwrap();
    }
    let members = NsvMember::collection(db);
    let done = tokio::time::timeout(LONG, members.converge())
        .await
        .expect("converge ends");
    let counts = members.schema_versions().await.unwrap();
    assert!(
        matches!(&done, Ok(d) if d.upgraded == 1200 && d.failed.len() == 1) && counts.older() == 1,
        "FINDING: converge = {done:?}; counts after = {counts:?}"
    );
}

//! A newcomer's tests of schema versioning (`#[schema_version]`), written from the docs alone:
//! the module docs of `schema_version`, the crate docs, and the docs of the patterns combined
//! with it. Each test asserts what the docs promise; a test marked `FINDING` failed when it was
//! written (the maintainer's list of what breaks), its comment says which promise.
//!
//! When written, 12 of them failed; what became of each:
//! - Fixed: an operator update of a document stored in an older shape
//!   (`versioned_update_of_older_document`, `ext_ref_update_of_older_source`,
//!   `computing_update_of_older_source`: every toolkit update now upgrades the documents it
//!   matches first); `Subset::page` of older items; a `null` version (the missing version,
//!   everywhere); a rewrite the server refuses (an entry of `Converged::failed`); version fields
//!   stored as `_id` or as another field (compile errors, `tests/ui/schema_version/`).
//! - Fixed since: repairs that aggregate older sources (`subset_rebuild_from_older_items`,
//!   `computed_recompute_over_older_sources`: the sources are upgraded first) and `watch` of an
//!   older-shape source (`ext_ref_watch_of_older_source`: the copy is made from its upgrade).
//! - Known limitation, the test kept and ignored with the reason: a read-only check over older
//!   sources whose summed field was renamed (`subset_check_with_older_items`): right once
//!   converged.

use pattern_runtime::At;
use std::time::Duration;

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::doctor::Check;
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::{doctor, sync, DoctorOptions, Error, Fields, Model, SyncOptions};
// These tests write older shapes and drifted documents around the toolkit on purpose.
use pattern_testkit::test_db_unvalidated as test_db;
use serde::{Deserialize, Serialize};

const LONG: Duration = Duration::from_secs(300);

fn raw(db: &mongodb::Database, collection: &str) -> mongodb::Collection<Document> {
    db.collection::<Document>(collection)
}

async fn stored(db: &mongodb::Database, collection: &str, id: impl Into<Bson>) -> Option<Document> {
    raw(db, collection)
        .find_one(doc! { "_id": id.into() })
        .await
        .unwrap()
}

// ------------------------------------------------------------------------------------------
// The module docs' users, with a visit counter every shape shares.

#[derive(Debug, Deserialize)]
struct NsvUserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[serde(default)]
    visits: i64,
}

#[derive(Debug, Deserialize)]
struct NsvUserV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    #[serde(default)]
    visits: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nsv_users")]
#[schema_version(older(NsvUserV1 = 1, NsvUserV2 = 2))]
#[serde(rename_all = "camelCase")]
struct NsvUser {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<3>,
    first: String,
    last: String,
    email: Option<String>,
    #[serde(default)]
    visits: i64,
}

impl From<NsvUserV1> for NsvUserV2 {
    fn from(v1: NsvUserV1) -> Self {
        let (first, last) = v1.name.split_once(' ').unwrap_or((&v1.name, ""));
        NsvUserV2 {
            id: v1.id,
            first: first.into(),
            last: last.into(),
            visits: v1.visits,
        }
    }
}

impl From<NsvUserV2> for NsvUser {
    fn from(v2: NsvUserV2) -> Self {
        NsvUser {
            id: v2.id,
            schema_version: SchemaVersion,
            first: v2.first,
            last: v2.last,
            email: None,
            visits: v2.visits,
        }
    }
}

const USERS: &str = "nsv_users";

fn version_of(d: &Document) -> Option<&Bson> {
    d.get("schemaVersion")
}

#[tokio::test]
async fn doc_example_reads_converges_counts_and_doctor() {
    let t = test_db("nsv_doc_example").await;
    let db = t.db();
    let users = NsvUser::collection(db);
    raw(db, USERS)
        .insert_one(doc! { "_id": 1_i64, "name": "Ada Lovelace" })
        .await
        .unwrap();
    raw(db, USERS)
        .insert_one(doc! { "_id": 2_i64, "schemaVersion": 2, "first": "Alan", "last": "Turing" })
        .await
        .unwrap();
    let ada = users.get(1).await.unwrap().unwrap();
    assert_eq!((ada.first.as_str(), ada.last.as_str()), ("Ada", "Lovelace"));
    let alan = users
        .find_one(doc! { "first": "Alan" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(alan.last, "Turing");
    assert_eq!(users.find(doc! {}).await.unwrap().len(), 2);

    let counts = users.schema_versions().await.unwrap();
    assert_eq!(counts.current, 3);
    assert_eq!(counts.known.get(&1), Some(&1));
    assert_eq!(counts.known.get(&2), Some(&1));
    assert_eq!(counts.older(), 2);

    let report = doctor(db)
        .models(&[NsvUser::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    let found: Vec<_> = report.with_check(Check::SchemaVersions).collect();
    assert!(
        !found.is_empty(),
        "the doctor counts older documents: {report}"
    );

    let mut steps = Vec::new();
    let done = users
        .converge_with_progress(|p| steps.push((p.done, p.total)))
        .await
        .unwrap();
    assert_eq!(done.upgraded, 2);
    assert!(done.failed.is_empty());
    assert_eq!(steps.last().map(|s| s.0), Some(2), "progress: {steps:?}");
    for id in [1_i64, 2] {
        let d = stored(db, USERS, id).await.unwrap();
        assert_eq!(version_of(&d), Some(&Bson::Int32(3)), "{d}");
    }
    assert_eq!(users.schema_versions().await.unwrap().older(), 0);
    let report = doctor(db)
        .models(&[NsvUser::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    assert_eq!(
        report.with_check(Check::SchemaVersions).count(),
        0,
        "{report}"
    );
    // Idempotent.
    assert_eq!(users.converge().await.unwrap().upgraded, 0);
}

/// Hostile values in the version field (`null` is the missing version, as a `{field: null}`
/// query and `$group` take it): each is either a declared version (an integer or a
/// whole double, per `SchemaVersionSpec::version_of`) or an `UnknownSchemaVersion` for that
/// document only.
#[tokio::test]
async fn hostile_version_values() {
    let t = test_db("nsv_hostile_versions").await;
    let db = t.db();
    let users = NsvUser::collection(db);
    let fl = |id: i64, v: Bson| doc! { "_id": id, "schemaVersion": v, "first": "F", "last": "L", "email": Bson::Null };
    let docs = vec![
        doc! { "_id": 1_i64, "name": "A B" }, // missing: v1
        fl(2, Bson::String("2".into())),      // unknown
        fl(3, Bson::Double(2.0)),             // v2
        fl(4, Bson::Int64(4_294_967_299)),    // unknown (3 mod 2^32)
        doc! { "_id": 5_i64, "schemaVersion": Bson::Null, "name": "C D" }, // null: as missing, v1
        fl(6, Bson::Document(doc! { "$gt": 1 })), // unknown
        fl(7, Bson::Int64(2)),                // v2
        fl(8, Bson::Double(2.5)),             // unknown
        fl(9, Bson::Double(3.0)),             // current (a whole double)
        doc! { "_id": 10_i64, "schemaVersion": Bson::Int64(4_294_967_297), "name": "E F" }, // unknown (1 mod 2^32)
        fl(11, Bson::Int32(-1)),             // unknown
        fl(12, Bson::Int32(0)),              // unknown
        fl(13, Bson::Double(f64::NAN)),      // unknown
        fl(14, Bson::Int64(3)),              // current
        fl(15, Bson::Double(1e300)),         // unknown
        fl(16, Bson::Double(-0.0)),          // unknown
        fl(17, Bson::Double(f64::INFINITY)), // unknown
    ];
    raw(db, USERS).insert_many(docs).await.unwrap();
    let readable = [1_i64, 3, 5, 7, 9, 14];
    let unknown = [2_i64, 4, 6, 8, 10, 11, 12, 13, 15, 16, 17];
    let mut wrong = Vec::new();
    for id in readable {
        match users.get(id).await {
            Ok(Some(u)) => assert_eq!(u.id, id),
            other => wrong.push(format!("get({id}) should read: {other:?}")),
        }
    }
    for id in unknown {
        match users.get(id).await {
            Err(Error::UnknownSchemaVersion {
                id: Some(found_id), ..
            }) => {
                assert_eq!(*found_id, Bson::Int64(id))
            }
            other => wrong.push(format!(
                "get({id}) should be UnknownSchemaVersion: {other:?}"
            )),
        }
    }
    let each = users.find_each(doc! {}).await.unwrap();
    assert_eq!(each.len(), 17);
    let ok = each.iter().filter(|r| r.is_ok()).count();
    if ok != readable.len() {
        wrong.push(format!(
            "find_each read {ok} documents, expected {}",
            readable.len()
        ));
    }
    assert!(
        users.find(doc! {}).await.is_err(),
        "find fails the whole read"
    );

    let counts = users.schema_versions().await.unwrap();
    if counts.older() != 4 || counts.unknown_total() != unknown.len() as u64 {
        wrong.push(format!("schema_versions: {counts:?}"));
    }
    let before: Vec<Document> = {
        use futures_util::TryStreamExt;
        raw(db, USERS)
            .find(doc! { "_id": { "$in": unknown.to_vec() } })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    };
    let done = tokio::time::timeout(LONG, users.converge())
        .await
        .expect("converge ends")
        .unwrap();
    if done.upgraded != 4 || !done.failed.is_empty() {
        wrong.push(format!("converge: {done:?}"));
    }
    for d in before {
        let now = stored(db, USERS, d.get("_id").unwrap().clone())
            .await
            .unwrap();
        if format!("{now}") != format!("{d}") {
            wrong.push(format!(
                "converge touched an unknown-version document: {d} -> {now}"
            ));
        }
    }
    let counts = users.schema_versions().await.unwrap();
    if counts.older() != 0 {
        wrong.push(format!("after converge: {counts:?}"));
    }
    let report = doctor(db)
        .models(&[NsvUser::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    if report.with_check(Check::SchemaVersions).count() == 0 {
        wrong.push(format!(
            "the doctor does not report unknown versions: {report}"
        ));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `writing_back()` reads rewrite what they upgrade; unknown versions are left; a plain read
/// does not write.
#[tokio::test]
async fn writing_back_reads() {
    let t = test_db("nsv_writing_back").await;
    let db = t.db();
    let users = NsvUser::collection(db);
    raw(db, USERS)
        .insert_many([
            doc! { "_id": 1_i64, "name": "Ada Lovelace" },
            doc! { "_id": 2_i64, "schemaVersion": 2, "first": "Alan", "last": "Turing" },
            doc! { "_id": 3_i64, "schemaVersion": 9, "first": "Future", "last": "App" },
            doc! { "_id": 4_i64, "name": "Grace Hopper" },
        ])
        .await
        .unwrap();
    users.get(1).await.unwrap();
    assert_eq!(
        version_of(&stored(db, USERS, 1_i64).await.unwrap()),
        None,
        "a plain read writes nothing"
    );
    let lazy = users.writing_back();
    assert_eq!(lazy.get(1).await.unwrap().unwrap().first, "Ada");
    assert_eq!(
        version_of(&stored(db, USERS, 1_i64).await.unwrap()),
        Some(&Bson::Int32(3))
    );
    let each = lazy.find_each(doc! {}).await.unwrap();
    assert_eq!(each.iter().filter(|r| r.is_ok()).count(), 3);
    assert_eq!(
        version_of(&stored(db, USERS, 2_i64).await.unwrap()),
        Some(&Bson::Int32(3))
    );
    assert_eq!(
        version_of(&stored(db, USERS, 4_i64).await.unwrap()),
        Some(&Bson::Int32(3))
    );
    assert_eq!(
        version_of(&stored(db, USERS, 3_i64).await.unwrap()),
        Some(&Bson::Int32(9))
    );
    assert_eq!(users.schema_versions().await.unwrap().older(), 0);
}

// ------------------------------------------------------------------------------------------
// Concurrency.

async fn seed_v1_users(db: &mongodb::Database, n: i64) {
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! { "_id": i, "name": format!("U{i} Last"), "visits": 0_i64 })
        .collect();
    for chunk in docs.chunks(500) {
        raw(db, USERS).insert_many(chunk.to_vec()).await.unwrap();
    }
}

async fn total_visits(db: &mongodb::Database) -> i64 {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = raw(db, USERS)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.iter()
        .map(|d| {
            d.get_i64("visits")
                .or_else(|_| d.get_i32("visits").map(i64::from))
                .unwrap()
        })
        .sum()
}

/// "Two runs at once each write a document at most once between them."
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_converges_at_once() {
    let t = test_db("nsv_two_converges").await;
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
    let t = test_db("nsv_converge_writers").await;
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

/// `writing_back()` reads racing with writers: nothing lost, and a read once writers stop
/// upgrades what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writing_back_races_writers() {
    let t = test_db("nsv_writeback_race").await;
    let db = t.db().clone();
    let n = 200_i64;
    seed_v1_users(&db, n).await;
    let mut tasks = Vec::new();
    for w in 0..4_i64 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            for k in 0..100_i64 {
                let id = (k * 3 + w * 17) % n;
                raw(&db, USERS)
                    .update_one(doc! { "_id": id }, doc! { "$inc": { "visits": 1_i64 } })
                    .await
                    .unwrap();
            }
        }));
    }
    for r in 0..4_i64 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let lazy = NsvUser::collection(&db).writing_back();
            for k in 0..30_i64 {
                if k % 3 == 0 {
                    let all = lazy
                        .find(doc! { "_id": { "$gte": (k * r) % n } })
                        .await
                        .unwrap();
                    assert!(!all.is_empty());
                } else {
                    let u = lazy.get((k * 11 + r) % n).await.unwrap().unwrap();
                    assert!(u.first.starts_with('U'));
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(total_visits(&db).await, 400);
    let users = NsvUser::collection(&db);
    users.writing_back().find(doc! {}).await.unwrap();
    assert_eq!(users.schema_versions().await.unwrap().older(), 0);
    assert_eq!(total_visits(&db).await, 400);
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
    let t = test_db("nsv_failing_upgrade").await;
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

/// An upgrade that changes `_id`: the docs say nothing. What a newcomer expects at least:
/// no duplicate, no lost document, converge ends, and `get(id)` does not hand back a document
/// whose `_id` is not the one asked for.
#[tokio::test]
async fn upgrade_that_changes_id() {
    let t = test_db("nsv_upgrade_moves_id").await;
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
// Operator-looking ids and `$`/`.` keys in older documents.

#[derive(Debug, Deserialize)]
struct NsvLooseV1 {
    #[serde(rename = "_id")]
    id: Bson,
    name: String,
    #[serde(default)]
    meta: Option<Document>,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_loose")]
#[schema_version(older(NsvLooseV1 = 1))]
struct NsvLoose {
    #[serde(rename = "_id")]
    id: Bson,
    v: SchemaVersion<2>,
    full_name: String,
    meta: Document,
}

impl From<NsvLooseV1> for NsvLoose {
    fn from(v1: NsvLooseV1) -> Self {
        NsvLoose {
            id: v1.id,
            v: SchemaVersion,
            full_name: v1.name,
            meta: v1.meta.unwrap_or_default(),
        }
    }
}

#[tokio::test]
async fn operator_ids_and_dollar_keys() {
    let t = test_db("nsv_operator_ids").await;
    let db = t.db();
    let loose = NsvLoose::collection(db);
    let coll = raw(db, "nsv_loose");
    coll.insert_one(doc! { "_id": 1, "name": "one" })
        .await
        .unwrap();
    coll.insert_one(doc! { "_id": 2, "name": "two" })
        .await
        .unwrap();
    coll.insert_one(doc! { "_id": "x", "name": "nan", "meta": { "n": f64::NAN, "z": -0.0 } })
        .await
        .unwrap();
    let weird_id = coll
        .insert_one(doc! { "_id": { "$gt": 1 }, "name": "gt" })
        .await;
    let dollar_meta = coll
        .insert_one(doc! { "_id": "dollar", "name": "dollar", "meta": { "$x": 1, "a.b": 2, "$where": "1" } })
        .await;
    let top_dotted = coll
        .insert_one(doc! { "_id": "dotted", "name": "dotted", "a.b": 1 })
        .await;
    eprintln!(
        "server accepted: _id {{$gt:1}}: {}, $ keys in meta: {}, dotted top key: {}",
        weird_id.is_ok(),
        dollar_meta.is_ok(),
        top_dotted.is_ok()
    );

    for id in [
        doc! { "$gt": 0 },
        doc! { "$ne": Bson::Null },
        doc! { "$in": [1, 2] },
    ] {
        match loose.get(Bson::Document(id.clone())).await {
            Err(e) if e.is_refused_input() => {}
            other => panic!("get({id}) should be refused as InvalidValue: {other:?}"),
        }
    }
    assert!(loose
        .get(Bson::RegularExpression(bson::Regex {
            pattern: ".*".to_string().try_into().unwrap(),
            options: String::new().try_into().unwrap()
        }))
        .await
        .is_err());
    assert_eq!(loose.get(2).await.unwrap().unwrap().full_name, "two");

    let done = tokio::time::timeout(LONG, loose.converge())
        .await
        .expect("converge ends (NaN in a document)")
        .unwrap();
    let expected = 3
        + u64::from(weird_id.is_ok())
        + u64::from(dollar_meta.is_ok())
        + u64::from(top_dotted.is_ok());
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(done.upgraded, expected, "{done:?}");
    for (id, name) in [(Bson::Int32(1), "one"), (Bson::Int32(2), "two")] {
        let d = stored(db, "nsv_loose", id).await.unwrap();
        assert_eq!(
            d.get_str("full_name").unwrap(),
            name,
            "no document clobbered by another's rewrite: {d}"
        );
    }
    assert_eq!(loose.schema_versions().await.unwrap().older(), 0);
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
    let t = test_db("nsv_blob_too_large").await;
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
    let t = test_db("nsv_blob_12mib").await;
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

// ------------------------------------------------------------------------------------------
// 1. Combinations. A schema-versioned `#[versioned]` model.

#[derive(Debug, Deserialize)]
struct NsvArticleV1 {
    #[serde(rename = "_id")]
    id: i64,
    version: i64,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_articles")]
#[versioned(history = "nsv_article_revisions")]
#[schema_version(older(NsvArticleV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvArticle {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    schema_version: SchemaVersion<2>,
    title: String,
}

impl From<NsvArticleV1> for NsvArticle {
    fn from(v1: NsvArticleV1) -> Self {
        NsvArticle {
            id: v1.id,
            version: v1.version,
            schema_version: SchemaVersion,
            title: v1.name,
        }
    }
}

#[tokio::test]
async fn versioned_history_of_older_shapes() {
    let t = test_db("nsv_versioned_history").await;
    let db = t.db();
    sync(db)
        .models(&[NsvArticle::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let articles = NsvArticle::collection(db);
    raw(db, "nsv_articles")
        .insert_one(doc! { "_id": 1_i64, "version": 1_i64, "name": "Old" })
        .await
        .unwrap();
    let mut a = articles.get(1).await.unwrap().unwrap();
    assert_eq!((a.title.as_str(), a.version), ("Old", 1));
    a.title = "New".into();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));
    let stored_now = stored(db, "nsv_articles", 1_i64).await.unwrap();
    assert_eq!(
        stored_now.get("schemaVersion"),
        Some(&Bson::Int32(2)),
        "a save stores the current shape"
    );
    let history = articles.history(1).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        history[0].snapshot.title, "Old",
        "revision of an older shape reads as current"
    );
    assert_eq!(articles.revision(1, 1).await.unwrap().title, "Old");
    // revert to the V1 revision: the document becomes current shape again.
    assert_eq!(articles.revert(1, 1).await.unwrap(), 3);
    assert_eq!(articles.get(1).await.unwrap().unwrap().title, "Old");
    // modify on an older document.
    raw(db, "nsv_articles")
        .insert_one(doc! { "_id": 2_i64, "version": 4_i64, "name": "Two" })
        .await
        .unwrap();
    let saved = articles.modify(2, 3, |a| a.title.push('!')).await.unwrap();
    assert_eq!((saved.title.as_str(), saved.version), ("Two!", 5));
    // delete of an older document: its last revision reads as current.
    raw(db, "nsv_articles")
        .insert_one(doc! { "_id": 3_i64, "version": 1_i64, "name": "Three" })
        .await
        .unwrap();
    articles.delete(3).await.unwrap();
    assert_eq!(
        articles.history(3).await.unwrap()[0].snapshot.title,
        "Three"
    );
}

/// FINDING: `update` (an operator update of a versioned model) of a document still
/// stored in an older shape. The docs: "Writes store the current shape".
#[tokio::test]
async fn versioned_update_of_older_document() {
    let t = test_db("nsv_versioned_update").await;
    let db = t.db();
    sync(db)
        .models(&[NsvArticle::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let articles = NsvArticle::collection(db);
    raw(db, "nsv_articles")
        .insert_one(doc! { "_id": 1_i64, "version": 1_i64, "name": "Old" })
        .await
        .unwrap();
    let v = articles
        .update(
            At(1, 1),
            doc! { "$set": { NsvArticle::FIELDS.title: "Updated" } },
        )
        .await
        .unwrap();
    assert_eq!(v.version, Some(2));
    let now = articles.get(1).await.unwrap().unwrap();
    let d = stored(db, "nsv_articles", 1_i64).await.unwrap();
    articles.converge().await.unwrap();
    let after = stored(db, "nsv_articles", 1_i64).await.unwrap();
    assert_eq!(
        now.title, "Updated",
        "FINDING: the update was accepted (version 2) but reads lose it; stored: {d}; after converge: {after}"
    );
}

/// Converge of a versioned model: does a document held before converge still save, and does
/// the history stay readable?
#[tokio::test]
async fn versioned_converge() {
    let t = test_db("nsv_versioned_converge").await;
    let db = t.db();
    sync(db)
        .models(&[NsvArticle::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let articles = NsvArticle::collection(db);
    raw(db, "nsv_articles")
        .insert_one(doc! { "_id": 1_i64, "version": 1_i64, "name": "Old" })
        .await
        .unwrap();
    let mut held = articles.get(1).await.unwrap().unwrap();
    let done = articles.converge().await.unwrap();
    assert_eq!(done.upgraded, 1);
    let d = stored(db, "nsv_articles", 1_i64).await.unwrap();
    eprintln!(
        "after converge: {d}; history: {}",
        articles.history(1).await.unwrap().len()
    );
    held.title = "Held".into();
    articles.replace(&mut held).await.unwrap();
    assert_eq!(articles.get(1).await.unwrap().unwrap().title, "Held");
}

// ------------------------------------------------------------------------------------------
// A schema-versioned source of an extended reference.

#[derive(Debug, Deserialize)]
struct NsvAuthorV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_authors")]
#[schema_version(older(NsvAuthorV1 = 1))]
#[extended_ref(NsvAuthorRef(first, last), derive(PartialEq))]
#[serde(rename_all = "camelCase")]
struct NsvAuthor {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    first: String,
    last: String,
}

impl From<NsvAuthorV1> for NsvAuthor {
    fn from(v1: NsvAuthorV1) -> Self {
        let (first, last) = v1.name.split_once(' ').unwrap_or((&v1.name, ""));
        NsvAuthor {
            id: v1.id,
            schema_version: SchemaVersion,
            first: first.into(),
            last: last.into(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_books")]
struct NsvBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    #[extended_ref(propagate)]
    author: NsvAuthorRef,
}

async fn ext_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db(name).await;
    sync(t.db())
        .models(&[NsvAuthor::SCHEMA, NsvBook::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(t.db(), "nsv_authors")
        .insert_one(doc! { "_id": 1_i64, "name": "Ada Lovelace" })
        .await
        .unwrap();
    t
}

async fn book_copy(db: &mongodb::Database, first: &str, last: &str) {
    raw(db, "nsv_books")
        .insert_one(doc! { "_id": 10_i64, "title": "Notes", "author": { "_id": 1_i64, "first": first, "last": last } })
        .await
        .unwrap();
}

async fn copy_of(db: &mongodb::Database) -> Document {
    stored(db, "nsv_books", 10_i64)
        .await
        .unwrap()
        .get_document("author")
        .unwrap()
        .clone()
}

#[tokio::test]
async fn ext_ref_check_and_doctor_see_upgraded_source() {
    let t = ext_setup("nsv_ext_check").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await; // right, from the upgraded source
    let check = NsvAuthor::collection(db)
        .references()
        .check()
        .await
        .unwrap();
    assert!(
        check.findings.is_empty(),
        "no stale copy: the copy matches the upgraded source: {check:?}"
    );
    let report = doctor(db)
        .models(&[NsvAuthor::SCHEMA, NsvBook::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    assert_eq!(report.with_check(Check::StaleCopy).count(), 0, "{report}");
}

#[tokio::test]
async fn ext_ref_resync_from_older_source() {
    let t = ext_setup("nsv_ext_resync").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    NsvAuthor::collection(db)
        .references()
        .rebuild(1)
        .await
        .unwrap();
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
}

#[tokio::test]
async fn ext_ref_converge_rebuilds_copies() {
    let t = ext_setup("nsv_ext_converge").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    let done = NsvAuthor::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 1);
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
    assert!(NsvAuthor::collection(db)
        .references()
        .check()
        .await
        .unwrap()
        .findings
        .is_empty());
}

/// FINDING: `References::update` of a source still stored in an older shape.
#[tokio::test]
async fn ext_ref_update_of_older_source() {
    let t = ext_setup("nsv_ext_update").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await;
    NsvAuthor::collection(db)
        .update(1, doc! { "$set": { NsvAuthor::FIELDS.first: "Augusta" } })
        .await
        .unwrap();
    let copy = copy_of(db).await;
    let author = NsvAuthor::collection(db).get(1).await.unwrap().unwrap();
    let d = stored(db, "nsv_authors", 1_i64).await.unwrap();
    assert_eq!(copy.get_str("first").unwrap(), "Augusta");
    assert_eq!(
        author.first, "Augusta",
        "FINDING: the source reads back without the update; stored: {d}"
    );
}

// ------------------------------------------------------------------------------------------
// A schema-versioned model as a subset's full items.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvReviewV1 {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    rating: i32,
    text: String,
    created_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_reviews")]
#[schema_version(older(NsvReviewV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvReview {
    #[serde(rename = "_id")]
    id: String,
    schema_version: SchemaVersion<2>,
    product_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

impl From<NsvReviewV1> for NsvReview {
    fn from(v1: NsvReviewV1) -> Self {
        NsvReview {
            id: v1.id,
            schema_version: SchemaVersion,
            product_id: v1.product_id,
            stars: v1.rating,
            content: v1.text,
            created_at: v1.created_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct NsvReviewExcerpt {
    review_id: String,
    stars: i32,
    created_at: DateTime,
}

impl From<&NsvReview> for NsvReviewExcerpt {
    fn from(r: &NsvReview) -> Self {
        NsvReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            created_at: r.created_at,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_products")]
#[serde(rename_all = "camelCase")]
struct NsvProduct {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 2, sort(created_at = -1), full = NsvReview, parent = product_id)]
    recent: Vec<NsvReviewExcerpt>,
    #[computed(count = recent)]
    review_count: i64,
    #[computed(sum = recent.stars)]
    star_sum: i64,
}

async fn subset_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db(name).await;
    let db = t.db();
    sync(db)
        .models(&[NsvProduct::SCHEMA, NsvReview::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_products")
        .insert_one(doc! { "_id": "p", "recent": [], "reviewCount": 0_i64, "starSum": 0_i64 })
        .await
        .unwrap();
    for (id, rating, t) in [("r1", 5, 1000_i64), ("r2", 3, 2000), ("r3", 4, 3000)] {
        raw(db, "nsv_reviews")
            .insert_one(doc! { "_id": id, "productId": "p", "rating": rating, "text": "t", "createdAt": DateTime::from_millis(t) })
            .await
            .unwrap();
    }
    t
}

fn excerpt(id: &str, stars: i32, t: i64) -> NsvReviewExcerpt {
    NsvReviewExcerpt {
        review_id: id.into(),
        stars,
        created_at: DateTime::from_millis(t),
    }
}

async fn product(db: &mongodb::Database) -> NsvProduct {
    NsvProduct::collection(db).get("p").await.unwrap().unwrap()
}

/// FINDING: the docs: "subset items are made from the upgraded document". `rebuild` makes the
/// embedded items right, but the computed sum reads the stored field (`rating` in version 1):
/// `starSum` is 0 instead of 12.
#[tokio::test]
async fn subset_rebuild_from_older_items() {
    let t = subset_setup("nsv_subset_rebuild").await;
    let db = t.db();
    let reviews = NsvProduct::collection(db).subset(NsvProduct::FIELDS.recent);
    let rebuilt = reviews.rebuild("p").await;
    assert!(
        rebuilt.is_ok(),
        "FINDING: rebuild over older full items: {rebuilt:?}"
    );
    let p = product(db).await;
    assert_eq!(
        p.recent,
        vec![excerpt("r3", 4, 3000), excerpt("r2", 3, 2000)]
    );
    assert_eq!(
        (p.review_count, p.star_sum),
        (3, 12),
        "the sum of `stars` as the model reads the items"
    );
}

/// FINDING: `page` returns the full items: "the patterns' reads that return the model" upgrade
/// them. It fails with a serde error ("missing field `schemaVersion`"), not even `Error::Upgrade`.
#[tokio::test]
async fn subset_page_of_older_items() {
    let t = subset_setup("nsv_subset_page").await;
    let db = t.db();
    let page = NsvProduct::collection(db)
        .subset(NsvProduct::FIELDS.recent)
        .page("p", 0, 10)
        .await;
    assert!(
        page.is_ok(),
        "FINDING: page over older full items: {page:?}"
    );
    let stars: Vec<i32> = page.unwrap().iter().map(|r| r.stars).collect();
    assert_eq!(stars, [4, 3, 5]);
}

/// FINDING: a parent whose subset is right (as the upgraded items make it) is reported as
/// drift (`starSum`) by `Subset::check` and the doctor.
#[tokio::test]
#[ignore = "known limitation: a subset's sums are computed by the server from stored field names, so older items count only once converged"]
async fn subset_check_with_older_items() {
    let t = subset_setup("nsv_subset_check").await;
    let db = t.db();
    raw(db, "nsv_products")
        .replace_one(
            doc! { "_id": "p" },
            doc! { "_id": "p", "reviewCount": 3_i64, "starSum": 12_i64, "recent": [
                { "reviewId": "r3", "stars": 4, "createdAt": DateTime::from_millis(3000) },
                { "reviewId": "r2", "stars": 3, "createdAt": DateTime::from_millis(2000) },
            ] },
        )
        .await
        .unwrap();
    let check = NsvProduct::collection(db)
        .subset(NsvProduct::FIELDS.recent)
        .check()
        .await;
    let report = doctor(db)
        .models(&[NsvProduct::SCHEMA, NsvReview::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    let doctor_drift = report.with_check(Check::SubsetDrift).count();
    assert!(
        matches!(&check, Ok(c) if c.findings.is_empty()),
        "FINDING: Subset::check over older full items: {check:?}"
    );
    assert_eq!(
        doctor_drift, 0,
        "FINDING: the doctor's subset audit over older full items: {report}"
    );
}

#[tokio::test]
async fn subset_converge_rebuilds_parents() {
    let t = subset_setup("nsv_subset_converge").await;
    let db = t.db();
    let reviews = NsvProduct::collection(db).subset(NsvProduct::FIELDS.recent);
    let done = NsvReview::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 3);
    let p = product(db).await;
    assert_eq!(
        p.recent,
        vec![excerpt("r3", 4, 3000), excerpt("r2", 3, 2000)]
    );
    assert_eq!((p.review_count, p.star_sum), (3, 12));
    let check = reviews.check().await.unwrap();
    assert!(check.findings.is_empty(), "{check:?}");
    // A push after converge.
    let r4 = NsvReview {
        id: "r4".into(),
        schema_version: SchemaVersion,
        product_id: "p".into(),
        stars: 1,
        content: "c".into(),
        created_at: DateTime::from_millis(4000),
    };
    reviews.push("p", r4).await.unwrap();
    let p = product(db).await;
    assert_eq!((p.review_count, p.star_sum), (4, 13));
}

// ------------------------------------------------------------------------------------------
// A schema-versioned tree node.

#[derive(Debug, Deserialize)]
struct NsvCatV1 {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_cats")]
#[schema_version(older(NsvCatV1 = 1))]
#[tree(parent = parent, ancestors = ancestors)]
struct NsvCat {
    #[serde(rename = "_id")]
    id: String,
    sv: SchemaVersion<2>,
    parent: Option<String>,
    ancestors: Vec<String>,
    label: String,
}

impl From<NsvCatV1> for NsvCat {
    fn from(v1: NsvCatV1) -> Self {
        NsvCat {
            id: v1.id,
            sv: SchemaVersion,
            parent: v1.parent,
            ancestors: v1.ancestors,
            label: v1.title,
        }
    }
}

fn cat(id: &str, parent: Option<&str>) -> NsvCat {
    NsvCat {
        id: id.into(),
        sv: SchemaVersion,
        parent: parent.map(Into::into),
        ancestors: vec![],
        label: id.to_uppercase(),
    }
}

#[tokio::test]
async fn tree_of_older_nodes() {
    let t = test_db("nsv_tree").await;
    let db = t.db();
    sync(db)
        .models(&[NsvCat::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let tree = NsvCat::collection(db).tree();
    tree.insert(&cat("root", None)).await.unwrap();
    raw(db, "nsv_cats")
        .insert_one(doc! { "_id": "a", "parent": "root", "ancestors": ["root"], "title": "Old A" })
        .await
        .unwrap();
    assert_eq!(tree.get("a").await.unwrap().unwrap().label, "Old A");
    let b = tree.insert(&cat("b", Some("a"))).await.unwrap();
    assert_eq!(b.ancestors, ["root", "a"]);
    assert_eq!(tree.children("root").await.unwrap()[0].label, "Old A");
    assert_eq!(tree.ancestors("b").await.unwrap().len(), 2);
    tree.move_to_root("a").await.unwrap();
    assert_eq!(tree.get("b").await.unwrap().unwrap().ancestors, ["a"]);
    assert_eq!(tree.get("a").await.unwrap().unwrap().label, "Old A");
    assert!(tree.check().await.unwrap().findings.is_empty());
    // The move's update upgraded `a` first (an update never adds current fields to an older
    // shape): nothing is left to converge.
    assert_eq!(NsvCat::collection(db).converge().await.unwrap().upgraded, 0);
    assert!(tree.check().await.unwrap().findings.is_empty());
    assert_eq!(tree.descendants("a").await.unwrap().len(), 1);
}

// ------------------------------------------------------------------------------------------
// A computed sum and count over a schema-versioned source.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvOrderV1 {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    cents: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_orders")]
#[schema_version(older(NsvOrderV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvOrder {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    user_id: String,
    amount: i64,
}

impl From<NsvOrderV1> for NsvOrder {
    fn from(v1: NsvOrderV1) -> Self {
        NsvOrder {
            id: v1.id,
            schema_version: SchemaVersion,
            user_id: v1.user_id,
            amount: v1.cents,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_buyers")]
#[serde(rename_all = "camelCase")]
struct NsvBuyer {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = NsvOrder.amount, by = user_id)]
    total: i64,
    #[computed(count = NsvOrder, by = user_id)]
    orders: i64,
}

async fn computed_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db(name).await;
    let db = t.db();
    sync(db)
        .models(&[NsvBuyer::SCHEMA, NsvOrder::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_buyers")
        .insert_one(doc! { "_id": "u1", "total": 0_i64, "orders": 0_i64 })
        .await
        .unwrap();
    raw(db, "nsv_orders")
        .insert_many([
            doc! { "_id": 1_i64, "userId": "u1", "cents": 100_i64 },
            doc! { "_id": 2_i64, "userId": "u1", "cents": 250_i64 },
        ])
        .await
        .unwrap();
    t
}

async fn buyer(db: &mongodb::Database) -> NsvBuyer {
    NsvBuyer::collection(db).get("u1").await.unwrap().unwrap()
}

/// FINDING: `recompute_all` (the documented repair) sums the stored `amount`; orders stored in
/// version 1 (`cents`) count 0. (After `converge` the value is right: `computed_converge_keeps_sums`.)
#[tokio::test]
async fn computed_recompute_over_older_sources() {
    let t = computed_setup("nsv_computed_recompute").await;
    let db = t.db();
    NsvBuyer::collection(db).computed().repair().await.unwrap();
    let b = buyer(db).await;
    assert_eq!(b.orders, 2);
    assert_eq!(
        b.total, 350,
        "FINDING: the sum of `amount` as the model reads its orders"
    );
}

#[tokio::test]
async fn computed_converge_keeps_sums() {
    let t = computed_setup("nsv_computed_converge").await;
    let db = t.db();
    let computed = NsvBuyer::collection(db).computed();
    computed.repair().await.unwrap();
    NsvOrder::collection(db).converge().await.unwrap();
    let b = buyer(db).await;
    assert_eq!((b.total, b.orders), (350, 2));
    assert!(computed.check().await.unwrap().is_clean());
    NsvOrder::collection(db)
        .insert(&NsvOrder {
            id: 3,
            schema_version: SchemaVersion,
            user_id: "u1".into(),
            amount: 50,
        })
        .await
        .unwrap();
    let b = buyer(db).await;
    assert_eq!((b.total, b.orders), (400, 3));
}

/// FINDING: `ModelCollection::update` of an order still stored in an older shape.
#[tokio::test]
async fn computing_update_of_older_source() {
    let t = computed_setup("nsv_computing_update").await;
    let db = t.db();
    NsvBuyer::collection(db).computed().repair().await.unwrap();
    NsvOrder::collection(db)
        .update(1, doc! { "$set": { NsvOrder::FIELDS.amount: 999_i64 } })
        .await
        .unwrap();
    let order = NsvOrder::collection(db).get(1).await.unwrap().unwrap();
    let d = stored(db, "nsv_orders", 1_i64).await.unwrap();
    assert_eq!(
        order.amount, 999,
        "FINDING: the update is accepted, the read loses it; stored: {d}"
    );
}

// ------------------------------------------------------------------------------------------
// A `null` version field: counted, read and converged consistently?

/// FINDING: `schema_versions` counts a `null` version as the missing version (1, older), the
/// reads call it an unknown version, and `converge` neither rewrites it nor lists it in
/// `failed`: `older()` stays 1 after every converge, and the doctor keeps reporting it.
#[tokio::test]
async fn null_version_is_counted_read_and_converged_alike() {
    let t = test_db("nsv_null_version").await;
    let db = t.db();
    let users = NsvUser::collection(db);
    raw(db, USERS)
        .insert_one(doc! { "_id": 5_i64, "schemaVersion": Bson::Null, "name": "C D" })
        .await
        .unwrap();
    let read = users.get(5).await;
    let counts = users.schema_versions().await.unwrap();
    let done = users.converge().await.unwrap();
    let after = users.schema_versions().await.unwrap();
    let read_as_unknown = matches!(read, Err(Error::UnknownSchemaVersion { .. }));
    let counted_unknown = counts.unknown_total() == 1;
    assert_eq!(
        read_as_unknown, counted_unknown,
        "FINDING: get = {read:?}; schema_versions = {counts:?}; converge = {done:?}; after = {after:?}"
    );
    assert!(
        after.older() == 0 || !done.failed.is_empty(),
        "FINDING: converge leaves an 'older' document it neither rewrites nor lists: {done:?} {after:?}"
    );
}

// ------------------------------------------------------------------------------------------
// Other patterns' reads that return a schema-versioned model.

#[derive(Debug, Deserialize)]
struct NsvPartV1 {
    #[serde(rename = "_id")]
    id: i64,
    partno: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_parts")]
#[schema_version(older(NsvPartV1 = 1))]
struct NsvPart {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    sku: String,
}

impl From<NsvPartV1> for NsvPart {
    fn from(v1: NsvPartV1) -> Self {
        NsvPart {
            id: v1.id,
            sv: SchemaVersion,
            sku: v1.partno,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_machines")]
struct NsvMachine {
    #[serde(rename = "_id")]
    id: i64,
    #[relation]
    #[bounded(10)]
    parts: Vec<pattern_runtime::Ref<NsvPart>>,
}

#[derive(Debug, Deserialize)]
struct NsvNoteV1 {
    #[serde(rename = "_id")]
    id: i64,
    machine: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_notes")]
#[schema_version(older(NsvNoteV1 = 1))]
struct NsvNote {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    #[relation(parent)]
    machine: pattern_runtime::Ref<NsvMachine>,
    body: String,
}

impl From<NsvNoteV1> for NsvNote {
    fn from(v1: NsvNoteV1) -> Self {
        NsvNote {
            id: v1.id,
            sv: SchemaVersion,
            machine: pattern_runtime::Ref::new(v1.machine),
            body: v1.text,
        }
    }
}

#[tokio::test]
async fn relation_reads_upgrade_targets_and_children() {
    let t = test_db("nsv_relation").await;
    let db = t.db();
    sync(db)
        .models(&[NsvMachine::SCHEMA, NsvPart::SCHEMA, NsvNote::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_parts")
        .insert_one(doc! { "_id": 1_i64, "partno": "P-1" })
        .await
        .unwrap();
    raw(db, "nsv_machines")
        .insert_one(doc! { "_id": 7_i64, "parts": [1_i64] })
        .await
        .unwrap();
    raw(db, "nsv_notes")
        .insert_one(doc! { "_id": 1_i64, "machine": 7_i64, "text": "oiled" })
        .await
        .unwrap();
    let machines = NsvMachine::collection(db).find(doc! {}).await.unwrap();
    let loaded = NsvMachine::collection(db)
        .relation(NsvMachine::FIELDS.parts)
        .load(&machines)
        .await;
    let children = NsvNote::collection(db)
        .relation(NsvNote::FIELDS.machine)
        .children_of(&7)
        .to_vec()
        .await;
    assert!(
        matches!(&loaded, Ok(l) if l.of(&machines[0])[0].map(|p| p.sku.as_str()) == Some("P-1")),
        "FINDING: Relation::load of an older target: {:?}",
        loaded.as_ref().err()
    );
    assert!(
        matches!(&children, Ok(c) if c.len() == 1 && c[0].body == "oiled"),
        "FINDING: children_of older children: {children:?}"
    );
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvItemV1 {
    #[serde(rename = "_id")]
    id: i64,
    cat: String,
    cat_path: Vec<String>,
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_items")]
#[schema_version(older(NsvItemV1 = 1))]
#[in_tree(NsvCat, node = cat, path = cat_path)]
#[serde(rename_all = "camelCase")]
struct NsvItem {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    cat: String,
    cat_path: Vec<String>,
    name: String,
}

impl From<NsvItemV1> for NsvItem {
    fn from(v1: NsvItemV1) -> Self {
        NsvItem {
            id: v1.id,
            schema_version: SchemaVersion,
            cat: v1.cat,
            cat_path: v1.cat_path,
            name: v1.title,
        }
    }
}

#[tokio::test]
async fn tree_holders_of_older_shape() {
    let t = test_db("nsv_tree_holders").await;
    let db = t.db();
    sync(db)
        .models(&[NsvCat::SCHEMA, NsvItem::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let tree = NsvCat::collection(db).tree();
    tree.insert(&cat("root", None)).await.unwrap();
    tree.insert(&cat("a", Some("root"))).await.unwrap();
    raw(db, "nsv_items")
        .insert_one(
            doc! { "_id": 1_i64, "cat": "a", "catPath": ["root", "a"], "title": "old item" },
        )
        .await
        .unwrap();
    let holders = tree.holders::<NsvItem>();
    let under = holders.under("root").await;
    assert!(
        matches!(&under, Ok(v) if v.len() == 1 && v[0].name == "old item"),
        "{under:?}"
    );
    tree.move_to_root("a").await.unwrap();
    assert_eq!(holders.under("a").await.unwrap()[0].cat_path, ["a"]);
    assert!(tree.check().await.unwrap().findings.is_empty());
    assert_eq!(
        NsvItem::collection(db).converge().await.unwrap().upgraded,
        0,
        "the move's update of the holder's path upgraded it first"
    );
    assert_eq!(holders.directly_in("a").await.unwrap()[0].name, "old item");
}

/// FINDING: `References::watch` propagates a change an older application made to a source it still
/// writes in the old shape: the copy should be made from the upgraded document.
#[tokio::test]
async fn ext_ref_watch_of_older_source() {
    let t = ext_setup("nsv_ext_watch").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await;
    let mut watcher = NsvAuthor::collection(db)
        .references()
        .watch(None)
        .await
        .unwrap();
    raw(db, "nsv_authors")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "name": "Augusta King" } },
        )
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(60), watcher.next())
        .await
        .expect("a change");
    assert!(matches!(next, Some(Ok(_))), "{next:?}");
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Augusta", "last": "King" }
    );
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

/// FINDING: "A document that does not upgrade is left as stored and listed in `failed`; the run goes
/// on": here the server refuses one rewrite (duplicate key); the others should still converge.
#[tokio::test]
async fn converge_with_a_rewrite_the_server_refuses() {
    let t = test_db("nsv_unique_collision").await;
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

// ------------------------------------------------------------------------------------------
// Transactions, and `writing_back` with dependents.

#[tokio::test]
async fn in_transaction_reads_and_converge() {
    let t = test_db("nsv_transaction").await;
    let db = t.db();
    raw(db, USERS)
        .insert_one(doc! { "_id": 1_i64, "name": "Ada Lovelace" })
        .await
        .unwrap();
    let tx = pattern_runtime::Transaction::start(db).await.unwrap();
    let users = NsvUser::collection(db).in_transaction(&tx);
    assert_eq!(users.get(1).await.unwrap().unwrap().first, "Ada");
    assert_eq!(
        users.writing_back().get(1).await.unwrap().unwrap().last,
        "Lovelace"
    );
    match users.converge().await {
        Err(Error::Unsupported { operation, .. }) if operation == "converge" => {}
        other => panic!("converge in a transaction is refused with Unsupported: {other:?}"),
    }
    tx.commit().await.unwrap();
    assert_eq!(
        version_of(&stored(db, USERS, 1_i64).await.unwrap()),
        None,
        "no write-back in a transaction"
    );
}

#[tokio::test]
async fn writing_back_rebuilds_extended_ref_copies() {
    let t = ext_setup("nsv_ext_writeback").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    let author = NsvAuthor::collection(db)
        .writing_back()
        .get(1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(author.first, "Ada");
    assert_eq!(
        stored(db, "nsv_authors", 1_i64)
            .await
            .unwrap()
            .get("schemaVersion"),
        Some(&Bson::Int32(2))
    );
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
}

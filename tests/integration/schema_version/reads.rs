//! Reads of a model with older schema versions: every read (and a projection) returns the current
//! shape, writes store the current version, the version field is the pattern's, `writing_back()`
//! reads rewrite what they upgrade, and hostile values in the version field (`null` is the
//! missing version), operator-shaped ids and `$` keys.

use super::*;
use bson::{doc, Bson, Document};
use pattern_runtime::{
    doctor::{doctor, Check, DoctorOptions},
    schema_version::SchemaVersion,
    At, Error, Model,
};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[tokio::test]
async fn every_read_returns_the_current_shape() {
    let t = test_db_unvalidated("sv_mixed_read").await;
    let db = t.db();
    seed(db, 400).await;
    let users = User::collection(db);
    for i in [0, 1, 2, 3, 17, 398] {
        let u = users.get(i).await.unwrap().unwrap();
        let (full, initials) = expected(i);
        assert_eq!((u.full_name, u.initials), (full, initials), "user {i}");
    }
    let all = users.find(doc! {}).await.unwrap();
    assert_eq!(all.len(), 400);
    for u in &all {
        assert_eq!(u.full_name, expected(u.id).0);
    }
    // Nothing was written by the reads.
    let counts = users.schema_versions().await.unwrap();
    assert_eq!(counts.known, BTreeMap::from([(1, 200), (2, 100), (3, 100)]));
    assert_eq!(counts.older(), 300);

    // A newer application's document: a typed error for it, the others still read.
    db.collection::<Document>("sv_users")
        .insert_one(doc! { "_id": 1000_i64, "schemaVersion": 4, "fullName": "N", "shiny": true })
        .await
        .unwrap();
    let err = users.get(1000).await.unwrap_err();
    match &err {
        Error::UnknownSchemaVersion {
            id, found, known, ..
        } => {
            assert_eq!(id.as_deref(), Some(&Bson::Int64(1000)));
            assert_eq!(**found, Bson::Int32(4));
            assert_eq!(known, &vec![1, 2, 3]);
        }
        other => panic!("expected UnknownSchemaVersion, got {other:?}"),
    }
    assert!(err.is_schema_version());
    let each = users.find_each(doc! {}).await.unwrap();
    assert_eq!(each.len(), 401);
    assert_eq!(each.iter().filter(|r| r.is_err()).count(), 1);
    assert!(users.find(doc! {}).await.unwrap_err().is_schema_version());

    // Not numbers, or versions the model never had: unknown too, never read as version 1.
    for (id, bad) in [
        (1001_i64, Bson::String("3".into())),
        (1002, Bson::Int32(0)),
        (1003, Bson::Double(2.5)),
    ] {
        db.collection::<Document>("sv_users")
            .insert_one(doc! { "_id": id, "schemaVersion": bad, "name": "x y" })
            .await
            .unwrap();
        assert!(
            matches!(users.get(id).await, Err(Error::UnknownSchemaVersion { .. })),
            "{id}"
        );
    }
    let report = doctor(db)
        .models(&[User::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    let finding = report
        .with_check(Check::SchemaVersions)
        .next()
        .expect("a schema versions finding");
    assert!(
        finding.figure.contains("200 at version 1"),
        "{}",
        finding.figure
    );
    assert!(
        finding.figure.contains("100 at version 3 (current)"),
        "{}",
        finding.figure
    );
    assert!(
        finding.figure.contains("unknown version 4"),
        "{}",
        finding.figure
    );
}

#[tokio::test]
async fn writes_store_the_current_version_and_a_failed_upgrade_is_typed() {
    let t = test_db_unvalidated("sv_writes").await;
    let db = t.db();
    let users = User::collection(db);
    let u = User {
        id: 1,
        schema_version: SchemaVersion,
        full_name: "A B".into(),
        initials: "AB".into(),
        marks: BTreeMap::new(),
    };
    users.raw().insert_one(&u).await.unwrap();
    let stored = db
        .collection::<Document>("sv_users")
        .find_one(doc! { "_id": 1_i64 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("schemaVersion"), Some(&Bson::Int32(3)));
    assert_eq!(users.get(1).await.unwrap(), Some(u));

    // An upgrade that refuses, and a document that is not its version's shape.
    db.collection::<Document>("sv_users")
        .insert_many([
            doc! { "_id": 2_i64, "schemaVersion": 2, "first": "refuse", "last": "x" },
            doc! { "_id": 3_i64, "schemaVersion": 2, "first": 7 },
            doc! { "_id": 4_i64, "name": "C D" },
        ])
        .await
        .unwrap();
    match users.get(2).await {
        Err(Error::Upgrade { from, reason, .. }) => {
            assert_eq!(from, 2);
            assert!(reason.contains("no usable name"), "{reason}");
        }
        other => panic!("expected Upgrade, got {other:?}"),
    }
    assert!(matches!(
        users.get(3).await,
        Err(Error::Upgrade { from: 2, .. })
    ));
    let done = users.converge().await.unwrap();
    assert_eq!(done.upgraded, 1);
    assert_eq!(done.failed.len(), 2);
    assert!(done.failed.iter().all(Error::is_schema_version));
    // The failures are left as stored, the rest is current.
    let counts = users.schema_versions().await.unwrap();
    assert_eq!(counts.known, BTreeMap::from([(2, 2), (3, 2)]));
}

/// The version field is the pattern's: no handle's update writes it (a current document
/// labelled with an older version would no longer read), and the validator takes only the
/// current version.
#[tokio::test]
async fn the_schema_version_field_is_kept_by_the_pattern() {
    let t = pattern_testkit::test_db("sv_kept").await;
    let db = t.db();
    let user = User {
        id: 1,
        schema_version: SchemaVersion,
        full_name: "A B".into(),
        initials: "AB".into(),
        marks: BTreeMap::new(),
    };
    User::collection(db).raw().insert_one(&user).await.unwrap();
    Patron::collection(db)
        .raw()
        .insert_one(Patron {
            id: 1,
            v: SchemaVersion,
            name: "Ada".into(),
        })
        .await
        .unwrap();
    let mut note = Note {
        id: 1,
        version: 0,
        sv: SchemaVersion,
        body: "one two".into(),
        words: 2,
    };
    Note::collection(db).insert(&mut note).await.unwrap();
    let everything = || async {
        (
            pattern_testkit::docs(db, "sv_users").await,
            pattern_testkit::docs(db, "sv_patrons").await,
            pattern_testkit::docs(db, "sv_notes").await,
            pattern_testkit::docs(db, "sv_note_revisions").await,
        )
    };
    let before = everything().await;
    let kept = |e: Error, field: &str| match e {
        Error::KeptField { field: key, reason } => {
            assert_eq!(key, field);
            assert!(reason.contains("schema version"), "{reason}");
        }
        other => panic!("{other:?}"),
    };
    for update in [
        doc! { "$set": { "schemaVersion": 1 } },
        doc! { "$unset": { "schemaVersion": "" } },
        doc! { "$inc": { "schemaVersion": -2 } },
        doc! { "$rename": { "initials": "schemaVersion" } },
    ] {
        let e = User::collection(db).update(1, update).await.unwrap_err();
        kept(e, "schemaVersion");
    }
    let e = Patron::collection(db)
        .update(1, doc! { "$set": { "v": 1 } })
        .await
        .unwrap_err();
    kept(e, "v");
    let e = Note::collection(db)
        .update(At(1, 1), doc! { "$set": { "sv": 1 } })
        .await
        .unwrap_err();
    kept(e, "sv");
    assert_eq!(everything().await, before);
    // Every read still works.
    assert_eq!(User::collection(db).get(1).await.unwrap(), Some(user));
    assert_eq!(Note::collection(db).get(1).await.unwrap().unwrap().words, 2);

    // Around the toolkit, the validator refuses an older version on a current document.
    let e = db
        .collection::<Document>("sv_users")
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "schemaVersion": 1 } })
        .await
        .unwrap_err();
    assert_eq!(Error::from(e).code(), Some(121));
    assert_eq!(everything().await, before);
}

#[tokio::test]
async fn reads_writing_back_converge_lazily() {
    let t = test_db_unvalidated("sv_write_back").await;
    let db = t.db();
    seed(db, 40).await;
    let users = User::collection(db);
    // A plain read writes nothing.
    users.get(0).await.unwrap().unwrap();
    assert_eq!(users.schema_versions().await.unwrap().older(), 30);
    // Reading through `writing_back` rewrites what it upgraded, once.
    let lazy = users.writing_back();
    let u = lazy.get(0).await.unwrap().unwrap();
    assert_eq!(u.full_name, expected(0).0);
    let stored = db
        .collection::<Document>("sv_users")
        .find_one(doc! { "_id": 0_i64 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("schemaVersion"), Some(&Bson::Int32(3)));
    assert_eq!(stored.get_str("fullName").unwrap(), "F0 L0");
    assert_eq!(users.schema_versions().await.unwrap().older(), 29);
    let read = lazy.find(doc! { "_id": { "$lt": 20_i64 } }).await.unwrap();
    assert_eq!(read.len(), 20);
    assert_eq!(users.schema_versions().await.unwrap().older(), 15);
    // Every value as the upgrades give it, whether read before or after the write-back.
    for u in users.find(doc! {}).await.unwrap() {
        assert_eq!(u.full_name, expected(u.id).0);
    }
    // In a transaction, the read writes nothing back.
    let tx = pattern_runtime::Transaction::start(db).await.unwrap();
    lazy.in_transaction(&tx).find(doc! {}).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(users.schema_versions().await.unwrap().older(), 15);
    assert_eq!(users.converge().await.unwrap().upgraded, 15);
}

/// A user's name as a directory lists it: two fields of the current shape.
#[derive(Debug, PartialEq, Deserialize, pattern_runtime::Fields)]
#[serde(rename_all = "camelCase")]
#[projection(of = User)]
struct Entry {
    #[serde(rename = "_id")]
    id: i64,
    full_name: String,
}

/// A projection of a model with older schema versions reads every stored version: the whole
/// documents are read and upgraded, then read as the projection.
#[tokio::test]
async fn a_projection_reads_every_stored_version_as_the_current_shape() {
    let db = test_db_unvalidated("sv_projection").await;
    seed(&db, 8).await;
    let entries: Vec<Entry> = User::collection(&db)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .project::<Entry>()
        .await
        .unwrap();
    let want: Vec<Entry> = (0..8)
        .map(|i| Entry {
            id: i,
            full_name: expected(i).0,
        })
        .collect();
    assert_eq!(entries, want);
}

fn version_of(d: &Document) -> Option<&Bson> {
    d.get("schemaVersion")
}

#[tokio::test]
async fn doc_example_reads_converges_counts_and_doctor() {
    let t = test_db_unvalidated("nsv_doc_example").await;
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
    let t = test_db_unvalidated("nsv_hostile_versions").await;
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
    let t = test_db_unvalidated("nsv_writing_back").await;
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

/// `writing_back()` reads racing with writers: nothing lost, and a read once writers stop
/// upgrades what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writing_back_races_writers() {
    let t = test_db_unvalidated("nsv_writeback_race").await;
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
    let t = test_db_unvalidated("nsv_operator_ids").await;
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
// A `null` version field: counted, read and converged consistently?

/// `schema_versions` counts a `null` version as the missing version (1, older), the
/// reads call it an unknown version, and `converge` neither rewrites it nor lists it in
/// `failed`: `older()` stays 1 after every converge, and the doctor keeps reporting it.
#[tokio::test]
async fn null_version_is_counted_read_and_converged_alike() {
    let t = test_db_unvalidated("nsv_null_version").await;
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
// Transactions, and `writing_back` with dependents.

#[tokio::test]
async fn in_transaction_reads_and_converge() {
    let t = test_db_unvalidated("nsv_transaction").await;
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

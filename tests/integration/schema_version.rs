//! Schema versioning against a real server: three shapes of a user side by side, read as the
//! current one, converged under concurrent writers, resumed after being dropped.

use pattern_runtime::At;
use std::collections::BTreeMap;

use bson::{doc, Bson, Document};
use pattern_runtime::doctor::{doctor, Check, DoctorOptions};
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::{versioning::Versioned, Error, Model, Progress};
// These tests write older shapes and drifted documents around the toolkit on purpose.
use pattern_testkit::test_db_unvalidated as test_db;
use serde::{Deserialize, Serialize};

/// Version 1: one name, no version field in the documents of the first application.
#[derive(Deserialize)]
struct UserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[serde(default)]
    marks: BTreeMap<String, i64>,
}

/// Version 2: first and last names, cents.
#[derive(Deserialize)]
struct UserV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    #[serde(default)]
    marks: BTreeMap<String, i64>,
}

/// Version 3: the current shape, with `rename_all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "sv_users")]
#[schema_version(older(UserV1 = 1, UserV2 = 2))]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<3>,
    full_name: String,
    initials: String,
    marks: BTreeMap<String, i64>,
}

impl From<UserV1> for UserV2 {
    fn from(v: UserV1) -> Self {
        let (first, last) = v.name.split_once(' ').unwrap_or((&v.name, ""));
        UserV2 {
            id: v.id,
            first: first.to_owned(),
            last: last.to_owned(),
            marks: v.marks,
        }
    }
}

impl TryFrom<UserV2> for User {
    type Error = String;
    fn try_from(v: UserV2) -> Result<Self, String> {
        if v.first == "refuse" {
            return Err(format!("user {} has no usable name", v.id));
        }
        let initials = format!(
            "{}{}",
            v.first.chars().next().unwrap_or('-'),
            v.last.chars().next().unwrap_or('-')
        );
        Ok(User {
            id: v.id,
            schema_version: SchemaVersion,
            full_name: format!("{} {}", v.first, v.last),
            initials,
            marks: v.marks,
        })
    }
}

/// What the upgrades give for user `i`, computed here from the test's own data.
fn expected(i: i64) -> (String, String) {
    let (first, last) = (format!("F{i}"), format!("L{i}"));
    let initials = format!("F{}", "L");
    (format!("{first} {last}"), initials)
}

/// User `i` stored in version `i % 4`: 0 without the field (version 1), 1, 2 and 3 (current).
fn stored(i: i64) -> Document {
    match i % 4 {
        0 => doc! { "_id": i, "name": format!("F{i} L{i}") },
        1 => doc! { "_id": i, "schemaVersion": 1, "name": format!("F{i} L{i}") },
        2 => {
            doc! { "_id": i, "schemaVersion": 2_i64, "first": format!("F{i}"), "last": format!("L{i}") }
        }
        _ => doc! {
            "_id": i, "schemaVersion": 3, "fullName": format!("F{i} L{i}"), "initials": "FL",
            "marks": {}
        },
    }
}

async fn seed(db: &mongodb::Database, n: i64) {
    let docs: Vec<Document> = (0..n).map(stored).collect();
    db.collection::<Document>("sv_users")
        .insert_many(docs)
        .await
        .unwrap();
}

#[tokio::test]
async fn every_read_returns_the_current_shape() {
    let t = test_db("sv_mixed_read").await;
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
    let t = test_db("sv_writes").await;
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
async fn converge_with_concurrent_writers_loses_nothing() {
    const N: i64 = 1200;
    const WRITERS: i64 = 8;
    const WRITES: i64 = 150;
    let t = test_db("sv_converge").await;
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
    let t = test_db("sv_resume").await;
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
    let t = test_db("sv_fault").await;
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

/// A revision-history model whose shape changed: revisions archived in the old shape read as
/// the current one.
#[derive(Deserialize)]
struct NoteV1 {
    #[serde(rename = "_id")]
    id: u32,
    version: i64,
    text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_notes")]
#[versioned(history = "sv_note_revisions")]
#[schema_version(older(NoteV1 = 1))]
struct Note {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    sv: SchemaVersion<2>,
    body: String,
    words: u32,
}

impl From<NoteV1> for Note {
    fn from(v: NoteV1) -> Self {
        Note {
            id: v.id,
            version: v.version,
            sv: SchemaVersion,
            words: v.text.split_whitespace().count() as u32,
            body: v.text,
        }
    }
}

#[tokio::test]
async fn a_versioned_model_reads_its_old_revisions() {
    let t = test_db("sv_versioned").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Note::SCHEMA])
        .await
        .unwrap();
    // Written by the first application: the document at version 2, its revision 1.
    db.collection::<Document>("sv_notes")
        .insert_one(doc! { "_id": 1, "version": 2_i64, "text": "two words" })
        .await
        .unwrap();
    db.collection::<Document>("sv_note_revisions")
        .insert_one(doc! {
            "docId": 1, "version": 1_i64, "archivedAt": bson::DateTime::now(),
            "snapshot": { "_id": 1, "version": 1_i64, "text": "one" },
        })
        .await
        .unwrap();
    let notes = Note::collection(db);
    let history = notes.history(1).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].snapshot.body.as_str(), history[0].snapshot.words),
        ("one", 1)
    );
    assert_eq!(notes.revision(1, 1).await.unwrap().body, "one");
    // Modify reads the old shape, saves the new one under the version check.
    let saved = notes
        .modify(1, 3, |n| n.body.push_str(" more"))
        .await
        .unwrap();
    assert_eq!((saved.version(), saved.words), (3, 2));
    let stored = db
        .collection::<Document>("sv_notes")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("sv"), Some(&Bson::Int32(2)));
    assert_eq!(stored.get_str("body").unwrap(), "two words more");
    // The revision archived by that save is the old document, old shape and all: it reads.
    let history = notes.history(1).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].snapshot.body, "two words");
}

/// `converge` of a versioned model changes the shape, not the content: the version stays and
/// no revision is written, so a `save` of a document read before the converge (upgraded in
/// memory from the same content) still goes through, and nothing is lost.
#[tokio::test]
async fn converge_keeps_a_versioned_documents_version() {
    let t = test_db("sv_versioned_converge").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Note::SCHEMA])
        .await
        .unwrap();
    db.collection::<Document>("sv_notes")
        .insert_one(doc! { "_id": 7, "version": 4_i64, "text": "read before" })
        .await
        .unwrap();
    let notes = Note::collection(db);
    let mut read = notes.get(7).await.unwrap().unwrap();
    let done = notes.converge().await.unwrap();
    assert_eq!(done.upgraded, 1);
    let stored = db
        .collection::<Document>("sv_notes")
        .find_one(doc! { "_id": 7 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("version"), Some(&Bson::Int64(4)), "{stored}");
    assert_eq!(stored.get("sv"), Some(&Bson::Int32(2)), "{stored}");
    assert!(notes.history(7).await.unwrap().is_empty());
    // The copy read before the converge saves over it at the version it read.
    read.body.push_str(" and saved");
    assert_eq!(notes.replace(&mut read).await.unwrap().version, Some(5));
    let now = notes.get(7).await.unwrap().unwrap();
    assert_eq!(
        (now.body.as_str(), now.version),
        ("read before and saved", 5)
    );
    // Its revision 4 is the converged document: the same content.
    let history = notes.history(7).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].version, history[0].snapshot.body.as_str()),
        (4, "read before")
    );
}

#[tokio::test]
async fn reads_writing_back_converge_lazily() {
    let t = test_db("sv_write_back").await;
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

/// A schema-versioned model as an extended reference's source: copies are made from the
/// upgraded document.
#[derive(Deserialize)]
struct PatronV1 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_patrons")]
#[extended_ref(PatronRef(name))]
#[schema_version(older(PatronV1 = 1))]
struct Patron {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    name: String,
}

impl From<PatronV1> for Patron {
    fn from(p: PatronV1) -> Self {
        Patron {
            id: p.id,
            v: SchemaVersion,
            name: format!("{} {}", p.first, p.last),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    patron: PatronRef,
}

async fn loan_copy(db: &mongodb::Database, id: i64) -> String {
    let loan = db
        .collection::<Document>("sv_loans")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap();
    loan.get_document("patron")
        .unwrap()
        .get_str("name")
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn extended_reference_copies_come_from_the_upgraded_source() {
    let t = test_db("sv_extended_ref").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Patron::SCHEMA, Loan::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    let patrons = db.collection::<Document>("sv_patrons");
    let loans = db.collection::<Document>("sv_loans");
    patrons
        .insert_many([
            doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" },
            doc! { "_id": 2_i64, "first": "Alan", "last": "Turing" },
        ])
        .await
        .unwrap();
    loans
        .insert_many([
            doc! { "_id": 10_i64, "patron": { "_id": 1_i64, "name": "stale" } },
            doc! { "_id": 11_i64, "patron": { "_id": 2_i64, "name": "stale too" } },
        ])
        .await
        .unwrap();
    let refs = Patron::collection(db).references();
    // The check compares each copy with the source as its current shape.
    let found = refs.check().await.unwrap();
    assert!(!found.is_clean(), "stale copies are found: {found:?}");
    // `resync` of an older source copies its upgraded value.
    refs.rebuild(1).await.unwrap();
    assert_eq!(loan_copy(db, 10).await, "Ada Lovelace");
    // `converge` rebuilds the copies of each source it rewrites.
    let done = Patron::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 2);
    assert_eq!(loan_copy(db, 11).await, "Alan Turing");
    assert!(refs.check().await.unwrap().is_clean());
}

/// A schema-versioned model as a subset's full items: a rebuild embeds the upgraded items.
#[derive(Deserialize)]
struct ReplyV1 {
    #[serde(rename = "_id")]
    id: i64,
    thread: i64,
    at: i64,
    body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_replies")]
#[schema_version(older(ReplyV1 = 1))]
struct Reply {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    thread: i64,
    at: i64,
    text: String,
    words: u32,
}

impl From<ReplyV1> for Reply {
    fn from(r: ReplyV1) -> Self {
        Reply {
            id: r.id,
            v: SchemaVersion,
            thread: r.thread,
            at: r.at,
            words: r.body.split_whitespace().count() as u32,
            text: r.body,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, pattern_runtime::Fields)]
struct ReplyBrief {
    #[serde(rename = "_id")]
    id: i64,
    at: i64,
    words: u32,
}

impl From<&Reply> for ReplyBrief {
    fn from(r: &Reply) -> Self {
        ReplyBrief {
            id: r.id,
            at: r.at,
            words: r.words,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "sv_threads")]
struct Thread {
    #[serde(rename = "_id")]
    id: i64,
    #[subset(limit = 2, sort(at = -1), full = Reply, parent = thread)]
    latest: Vec<ReplyBrief>,
}

#[tokio::test]
async fn subset_items_are_embedded_from_the_upgraded_full_items() {
    let t = test_db("sv_subset").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Thread::SCHEMA, Reply::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    db.collection::<Document>("sv_threads")
        .insert_one(doc! { "_id": 1_i64, "latest": [] })
        .await
        .unwrap();
    db.collection::<Document>("sv_replies")
        .insert_many([
            doc! { "_id": 1_i64, "thread": 1_i64, "at": 1_i64, "body": "one" },
            doc! { "_id": 2_i64, "thread": 1_i64, "at": 2_i64, "body": "two words" },
            doc! { "_id": 3_i64, "thread": 1_i64, "at": 3_i64, "body": "three words here" },
        ])
        .await
        .unwrap();
    Thread::collection(db)
        .subset(Thread::FIELDS.latest)
        .rebuild(1)
        .await
        .unwrap();
    let thread = Thread::collection(db).get(1).await.unwrap().unwrap();
    assert_eq!(
        thread.latest,
        [
            ReplyBrief {
                id: 3,
                at: 3,
                words: 3
            },
            ReplyBrief {
                id: 2,
                at: 2,
                words: 2
            },
        ]
    );
}

/// Version 1 of a writer: a name only. Its shape knows nothing of the patterns' fields.
#[derive(Deserialize)]
struct WriterV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

/// The current writer: an outlier of notes, a subset of letters, both kept by their patterns.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "sv_writers")]
#[schema_version(older(WriterV1 = 1))]
#[serde(rename_all = "camelCase")]
struct Writer {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    name: String,
    #[outlier(limit = 3, overflow = "sv_writer_notes", capacity = 10, flag = is_outlier, count = notes_count)]
    notes: Vec<String>,
    is_outlier: bool,
    notes_count: i64,
    #[subset(limit = 2, sort(at = -1), full = Letter, parent = writer)]
    letters: Vec<Letter>,
    #[computed(count = letters)]
    letter_count: i64,
}

impl From<WriterV1> for Writer {
    fn from(w: WriterV1) -> Self {
        Writer {
            id: w.id,
            v: SchemaVersion,
            name: w.name,
            notes: Vec::new(),
            is_outlier: false,
            notes_count: 0,
            letters: Vec::new(),
            letter_count: 0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_letters")]
struct Letter {
    #[serde(rename = "_id")]
    id: i64,
    writer: i64,
    at: i64,
}

impl From<&Letter> for Letter {
    fn from(l: &Letter) -> Self {
        l.clone()
    }
}

/// A push (outlier, subset) to a document still stored in an older version upgrades it first,
/// so that `converge`, whose upgrade cannot know the pushed items, finds nothing to rewrite and
/// loses nothing. Found by a reader of the docs: before, the pushed items went into the older
/// document, and `converge` dropped them.
#[tokio::test]
async fn a_push_to_an_older_document_upgrades_it_first_and_converge_keeps_the_items() {
    let db = test_db("sv_push_older").await;
    pattern_runtime::sync(&db)
        .models(&[Writer::SCHEMA, Letter::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let raw = db.collection::<Document>("sv_writers");
    for id in 1..=3i64 {
        raw.insert_one(doc! { "_id": id, "name": format!("writer {id}") })
            .await
            .unwrap();
    }
    let notes = Writer::collection(&db).outlier(Writer::FIELDS.notes);
    for n in 0..5 {
        // Past the limit of 3: two go to an overflow document.
        notes.push(1, format!("note {n}")).await.unwrap();
    }
    Writer::collection(&db)
        .subset(Writer::FIELDS.letters)
        .push(
            2,
            Letter {
                id: 20,
                writer: 2,
                at: 1,
            },
        )
        .await
        .unwrap();
    let stored = raw.find_one(doc! { "_id": 1 }).await.unwrap().unwrap();
    assert_eq!(stored.get("v"), Some(&Bson::Int32(2)), "{stored}");

    let done = Writer::collection(&db).converge().await.unwrap();
    assert_eq!(done.upgraded, 1, "only writer 3 was still older: {done:?}");
    assert_eq!(
        notes.items(1).await.unwrap(),
        (0..5).map(|n| format!("note {n}")).collect::<Vec<_>>()
    );
    assert!(notes.state(1).await.unwrap().is_consistent());
    let two = Writer::collection(&db).get(2).await.unwrap().unwrap();
    assert_eq!((two.letters.len(), two.letter_count), (1, 1), "{two:?}");
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
    let db = test_db("sv_projection").await;
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

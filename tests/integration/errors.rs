//! The error type as a caller meets it, against the server: one helper per failure a caller
//! handles (`is_conflict`, `is_not_found`, `is_duplicate_key`, `is_too_large`), and messages that
//! read as sentences (no raw server reply in `Display`).

use bson::doc;
use pattern_runtime::At;
use pattern_runtime::{Error, Model};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "notes")]
#[versioned(history = "note_revisions")]
struct Note {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    body: String,
    #[index(unique)]
    slug: String,
}

fn note(id: u32, slug: &str) -> Note {
    Note {
        id,
        version: 0,
        body: "first".into(),
        slug: slug.into(),
    }
}

/// Exactly one of the helpers holds.
fn helpers(e: &Error) -> [bool; 4] {
    [
        e.is_conflict(),
        e.is_not_found(),
        e.is_duplicate_key(),
        e.is_too_large(),
    ]
}

#[tokio::test]
async fn each_failure_has_its_helper() {
    let db = test_db("errors_helpers").await;
    pattern_runtime::sync(&db)
        .models(&[Note::SCHEMA])
        .await
        .unwrap();
    let notes = Note::collection(&db);
    let mut a = note(1, "a");
    notes.insert(&mut a).await.unwrap();

    // A unique index refuses a second `slug: "a"`.
    let dup = notes.insert(&mut note(2, "a")).await.unwrap_err();
    assert_eq!(helpers(&dup), [false, false, true, false], "{dup:?}");
    assert!(dup.to_string().starts_with("duplicate key: "), "{dup}");

    // A stale save: someone saved version 1 since.
    let mut stale = a.clone();
    a.body = "second".into();
    notes.replace(&mut a).await.unwrap();
    stale.body = "lost?".into();
    let conflict = notes.replace(&mut stale).await.unwrap_err();
    assert_eq!(
        helpers(&conflict),
        [true, false, false, false],
        "{conflict:?}"
    );

    // No such document.
    let missing = notes
        .update(At(99, 1), doc! { "$set": { "body": "x" } })
        .await
        .unwrap_err();
    assert_eq!(
        helpers(&missing),
        [false, true, false, false],
        "{missing:?}"
    );

    // Over 16 MiB, refused before anything is sent.
    let mut big = note(3, "big");
    big.body = "x".repeat(17 * 1024 * 1024);
    let large = notes.insert(&mut big).await.unwrap_err();
    assert_eq!(helpers(&large), [false, false, false, true], "{large:?}");
    assert_eq!(notes.raw().count_documents(doc! {}).await.unwrap(), 1);
}

/// The helpers a caller branches on beside those four: a refused input, an ended transaction,
/// and a too-large document inside an `Incomplete` batch.
#[tokio::test]
async fn refused_input_ended_transactions_and_incomplete_batches_have_helpers() {
    let db = test_db("errors_more_helpers").await;
    pattern_runtime::sync(&db)
        .models(&[Note::SCHEMA])
        .await
        .unwrap();
    let notes = Note::collection(&db);
    notes.insert(&mut note(1, "a")).await.unwrap();
    let refused = notes
        .update(At(1, 1), doc! { "$set": { "_id": 2 } })
        .await
        .unwrap_err();
    assert!(refused.is_refused_input(), "{refused:?}");
    assert!(!refused.is_not_found() && !refused.is_transaction_ended());

    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    tx.commit().await.unwrap();
    let ended = notes
        .in_transaction(&tx)
        .insert(&mut note(2, "b"))
        .await
        .unwrap_err();
    assert!(ended.is_transaction_ended(), "{ended:?}");
    assert!(!ended.is_refused_input());

    let mut big = note(3, "big");
    big.body = "x".repeat(17 * 1024 * 1024);
    let large = notes.insert(&mut big).await.unwrap_err();
    let incomplete = Error::Incomplete {
        written: 1,
        failed: 1,
        source: Box::new(large),
    };
    assert!(incomplete.is_too_large(), "{incomplete:?}");
}

#[tokio::test]
async fn a_document_the_server_refuses_as_too_large_reads_as_a_sentence() {
    let db = test_db("errors_server_too_large").await;
    let raw = db.collection::<bson::Document>("blobs");
    raw.insert_one(doc! { "_id": 1, "blob": "x".repeat(10 * 1024 * 1024) })
        .await
        .unwrap();
    // The update result would be ~20 MiB: only the server can tell.
    let e: Error = raw
        .update_one(
            doc! { "_id": 1 },
            vec![doc! { "$set": { "copy": "$blob" } }],
        )
        .await
        .map_err(Error::from)
        .unwrap_err();
    assert!(e.is_too_large(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.ends_with("is too large, over MongoDB's limit of 16777216 bytes; nothing was written"),
        "{text}"
    );
    assert!(!text.contains("is too many bytes"), "{text}");
}

#[tokio::test]
async fn a_driver_error_shows_code_name_and_message_not_the_raw_reply() {
    let db = test_db("errors_display").await;
    let e: Error = db
        .run_command(doc! { "collMod": "no_such_collection", "validator": { "$nope": 1 } })
        .await
        .map_err(Error::from)
        .unwrap_err();
    let Error::Driver {
        code: Some(code), ..
    } = &e
    else {
        panic!("expected a driver error with a code, got {e:?}");
    };
    let text = e.to_string();
    assert!(text.starts_with("MongoDB error: "), "{text}");
    assert!(text.contains(&format!("(code {code}")), "{text}");
    // No raw reply: no byte dumps, no document structs.
    for raw in ["RawDocumentBuf", "bytes:", "0x"] {
        assert!(!text.contains(raw), "{text}");
    }
    // Debug keeps everything.
    assert!(format!("{e:?}").contains("source"), "{e:?}");

    // A write error: the driver's own Display prints the whole `WriteFailure` with `{:?}`.
    let raw = db.collection::<bson::Document>("counters");
    raw.insert_one(doc! { "_id": 1, "n": "not a number" })
        .await
        .unwrap();
    let e: Error = raw
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .await
        .map_err(Error::from)
        .unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with("MongoDB error: "), "{text}");
    assert!(e.code().is_some(), "{e:?}");
    for raw in ["WriteError {", "WriteFailure", "code_name", "details"] {
        assert!(!text.contains(raw), "{text}");
    }
}

/// A collection validator (here written by hand, `validationAction: "error"`) refuses a write
/// made through the toolkit: `Error::ValidationFailed`, naming each field the server says broke
/// a rule (a wrong BSON type, a missing required field, a field not allowed, too many items),
/// and nothing is stored.
#[tokio::test]
async fn a_validator_refusal_is_typed_and_names_the_fields() {
    let db = test_db_unvalidated("errors_validation").await;
    db.run_command(doc! {
        "create": "notes",
        "validator": { "$jsonSchema": {
            "bsonType": "object",
            "required": ["_id", "version", "body", "slug"],
            "properties": {
                "body": { "bsonType": "string", "maxLength": 10 },
                "slug": { "bsonType": "string", "pattern": "^[a-z]+$" },
            },
        } },
        "validationLevel": "strict",
        "validationAction": "error",
    })
    .await
    .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Note::SCHEMA])
        .await
        .unwrap();
    let notes = Note::collection(&db);
    notes.insert(&mut note(1, "fine")).await.unwrap();

    // Through the toolkit: a body over the validator's `maxLength`, a slug off its pattern.
    let mut long = note(2, "Not-A-Slug");
    long.body = "far too long for the rule".into();
    let e = notes.insert(&mut long).await.unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    assert_eq!(e.code(), Some(121));
    let Error::ValidationFailed {
        fields, details, ..
    } = &e
    else {
        unreachable!()
    };
    assert_eq!(fields, &["body", "slug"], "{details:?}");
    let text = e.to_string();
    assert!(text.contains("`body`") && text.contains("`slug`"), "{text}");
    assert!(!text.contains("schemaRulesNotSatisfied"), "{text}");

    // A save that would break the rule: refused, the stored document and its version unchanged.
    let mut first = notes.get(1).await.unwrap().unwrap();
    first.body = "also far too long".into();
    let e = notes.replace(&mut first).await.unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    let stored = notes.get(1).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.body.as_str()), (1, "first"));
    assert_eq!(notes.raw().count_documents(doc! {}).await.unwrap(), 1);

    // Around the toolkit: a missing required field and a wrong type are named too.
    let raw = db.collection::<bson::Document>("notes");
    let e: Error = raw
        .insert_one(doc! { "_id": 3, "version": 1, "body": 42 })
        .await
        .map_err(Error::from)
        .unwrap_err();
    let Error::ValidationFailed { fields, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(fields.contains(&"slug".to_owned()), "{fields:?}");
    assert!(fields.contains(&"body".to_owned()), "{fields:?}");
}

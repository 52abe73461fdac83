//! Schema versioning of a `#[versioned]` model: old-shape revisions read as the current type
//! (`history`, `revision`), an operator update of an older document, and `converge`, which
//! changes the shape but keeps the version and writes no revision.

use super::*;
use bson::{doc, Bson, Document};
use pattern_runtime::{
    schema_version::SchemaVersion, sync, versioning::Versioned, At, Model, SyncOptions,
};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};

#[tokio::test]
async fn a_versioned_model_reads_its_old_revisions() {
    let t = test_db_unvalidated("sv_versioned").await;
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
    let t = test_db_unvalidated("sv_versioned_converge").await;
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
    let t = test_db_unvalidated("nsv_versioned_history").await;
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

/// `update` (an operator update of a versioned model) of a document still
/// stored in an older shape. The docs: "Writes store the current shape".
#[tokio::test]
async fn versioned_update_of_older_document() {
    let t = test_db_unvalidated("nsv_versioned_update").await;
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
    let t = test_db_unvalidated("nsv_versioned_converge").await;
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

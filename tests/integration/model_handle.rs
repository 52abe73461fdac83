//! The model handle's writes on a model nothing derives from: what a batch leaves when one of
//! its documents is refused, and updates that say nothing.

use bson::{doc, Document};
use futures_util::TryStreamExt;
use pattern_runtime::query::Update;
use pattern_runtime::{Error, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "mh_notes")]
struct Note {
    #[serde(rename = "_id")]
    id: String,
    body: String,
}

fn note(id: &str) -> Note {
    Note {
        id: id.into(),
        body: format!("body of {id}"),
    }
}

async fn stored(db: &mongodb::Database) -> Vec<Document> {
    db.collection::<Document>("mh_notes")
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// A taken `_id` in the middle of `insert_many` leaves none of the batch, as `insert` leaves
/// nothing (the first document once stayed).
#[tokio::test]
async fn insert_many_with_a_taken_id_writes_none_of_the_batch() {
    let db = test_db("mh_insert_many_dup").await;
    let notes = Note::collection(&db);
    notes.insert(&note("n2")).await.unwrap();
    let before = stored(&db).await;
    let e = notes
        .insert_many([note("n1"), note("n2"), note("n3")])
        .await
        .unwrap_err();
    assert!(matches!(e, Error::DuplicateKey { .. }), "{e:?}");
    assert_eq!(stored(&db).await, before, "part of the batch stayed");
    // The same batch without the taken `_id` goes in whole.
    let written = notes.insert_many([note("n1"), note("n3")]).await.unwrap();
    assert_eq!(written.len(), 2);
    assert_eq!(stored(&db).await.len(), 3);
}

/// An update with no operator is a typed refusal, nothing written, on every verb (it was the
/// driver's untyped `InvalidArgument`).
#[tokio::test]
async fn an_empty_update_is_refused_typed() {
    let db = test_db("mh_empty_update").await;
    let notes = Note::collection(&db);
    notes.insert(&note("n1")).await.unwrap();
    let before = stored(&db).await;
    let refused = |r: pattern_runtime::Result<()>, what: &str| {
        assert!(matches!(r, Err(Error::InvalidKey { .. })), "{what}: {r:?}");
    };
    refused(
        notes.update("n1", Update::new()).await.map(drop),
        "typed update",
    );
    refused(notes.update("n1", doc! {}).await.map(drop), "doc update");
    refused(
        notes.update_many(doc! {}, Update::new()).await.map(drop),
        "typed update_many",
    );
    refused(
        notes.update_many(doc! {}, doc! {}).await.map(drop),
        "doc update_many",
    );
    assert_eq!(stored(&db).await, before);
}

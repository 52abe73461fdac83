//! Document versioning against a real server: the seed's `articles` + `article_revisions`; a
//! document deleted and inserted again under the same `_id` (one gapless history across its
//! lives), and `i32`/`u32` versions at their limit.

use crate::support::{is_invalid_value, raw_insert};
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{sync::list_indexes, versioning::Versioned, At, Error, Missing, Model};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};
use std::{collections::BTreeSet, sync::Arc};

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[versioned(history = "article_revisions")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
    counter: i64,
    #[index(unique)]
    slug: String,
}

fn article(id: u32) -> Article {
    Article {
        id,
        version: 0,
        title: format!("article {id}"),
        counter: 0,
        slug: format!("a-{id}"),
    }
}

async fn revisions(db: &mongodb::Database, id: u32) -> Vec<i64> {
    let mut v: Vec<i64> = Article::collection(db)
        .history(id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.version)
        .collect();
    v.sort_unstable();
    v
}

#[tokio::test]
async fn concurrent_read_modify_save_loses_no_update() {
    let db = test_db("versioning_concurrent").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    articles.insert(&mut article(1)).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let articles = articles.clone();
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0u32;
            for _ in 0..50 {
                loop {
                    let mut a = articles
                        .raw()
                        .find_one(doc! { "_id": 1 })
                        .await
                        .unwrap()
                        .unwrap();
                    a.counter += 1;
                    match articles.replace(&mut a).await {
                        Ok(v) => {
                            assert_eq!(Some(a.version()), v.version);
                            break;
                        }
                        Err(Error::VersionConflict {
                            expected, found, ..
                        }) => {
                            assert!(found > expected);
                            conflicts += 1;
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for t in tasks {
        conflicts += t.await.unwrap();
    }
    let a = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        a.counter, 400,
        "no lost update ({conflicts} conflicts retried)"
    );
    assert_eq!(a.version, 401);
    assert_eq!(
        revisions(&db, 1).await,
        (1..=400).collect::<Vec<i64>>(),
        "gapless, no duplicates"
    );
}

#[tokio::test]
async fn conflict_not_found_and_duplicate_key_are_three_errors() {
    let db = test_db("versioning_errors").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let mut a = article(1);
    articles.insert(&mut a).await.unwrap();
    assert_eq!(a.version, 1);
    let mut stale = a.clone();
    a.title = "edited".into();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));

    // A stale copy: conflict, with both versions, and its version left as it was.
    stale.title = "late edit".into();
    let err = articles.replace(&mut stale).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::VersionConflict {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(stale.version, 1);

    // Gone: not found.
    let mut ghost = article(9);
    ghost.version = 1;
    let err = articles.replace(&mut ghost).await.unwrap_err();
    assert!(
        matches!(err.missing(), Some(Missing::Document { id }) if *id == Bson::Int64(9) || *id == Bson::Int32(9)),
        "{err:?}"
    );

    // A unique index violated by the new content: a duplicate key, neither of the others.
    let mut b = article(2);
    articles.insert(&mut b).await.unwrap();
    b.slug = "a-1".into();
    let err = articles.replace(&mut b).await.unwrap_err();
    assert!(matches!(err, Error::DuplicateKey { .. }), "{err:?}");
    // ...and nothing was written: no revision, same version.
    assert_eq!(revisions(&db, 2).await, Vec::<i64>::new());
    assert_eq!(
        articles
            .raw()
            .find_one(doc! { "_id": 2 })
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );

    // Operator updates follow the same rules.
    assert_eq!(
        articles
            .update(At(1, 2), doc! { "$inc": { "counter": 5 } })
            .await
            .unwrap()
            .version,
        Some(3)
    );
    let err = articles
        .update(At(1, 2), doc! { "$inc": { "counter": 5 } })
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::VersionConflict {
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{err:?}"
    );
    let err = articles
        .update(At(7, 1), doc! { "$set": { "title": "x" } })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    let err = articles
        .update(At(1, 3), doc! { "$set": { "version": 99 } })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::KeptField { .. }), "{err:?}");
}

#[tokio::test]
async fn history_revision_revert_and_delete() {
    let db = test_db("versioning_history").await;
    let articles = Article::collection(&db);
    let mut a = article(1);
    articles.insert(&mut a).await.unwrap();
    for title in ["two", "three"] {
        a.title = title.into();
        articles.replace(&mut a).await.unwrap();
    }
    let history = articles.history(1).await.unwrap();
    let versions: Vec<i64> = history.iter().map(|r| r.version).collect();
    assert_eq!(versions, [2, 1], "newest first");
    assert_eq!(history[1].snapshot.title, "article 1");
    assert_eq!(articles.revision(1, 2).await.unwrap().title, "two");
    assert_eq!(
        articles.revision(1, 3).await.unwrap().title,
        "three",
        "the current one"
    );
    assert!(matches!(
        articles.revision(1, 7).await.unwrap_err(),
        Error::NotFound { .. }
    ));

    // Revert to 1: a new version 4 equal to revision 1.
    assert_eq!(articles.revert(1, 1).await.unwrap(), 4);
    let now = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!((now.version, now.title.as_str()), (4, "article 1"));
    assert_eq!(revisions(&db, 1).await, [1, 2, 3]);

    // Delete keeps the last version in history.
    articles.delete(1).await.unwrap();
    assert!(articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .is_none());
    let last = &articles.history(1).await.unwrap()[0];
    assert_eq!((last.version, last.deleted), (4, true));
    assert!(matches!(
        articles.delete(1).await.unwrap_err(),
        Error::NotFound { .. }
    ));
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "pages")]
#[versioned(history = "page_revisions", keep = 3, expire_after = "90d")]
struct Page {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    rev: i32,
    body: String,
}

#[tokio::test]
async fn retention_keeps_the_last_revisions_and_the_history_is_indexed() {
    let db = test_db("versioning_keep").await;
    pattern_runtime::sync(&db)
        .models(&[Page::SCHEMA])
        .await
        .unwrap();
    let pages = Page::collection(&db);
    let mut p = Page {
        id: 1,
        rev: 0,
        body: "0".into(),
    };
    pages.insert(&mut p).await.unwrap();
    for n in 1..=6 {
        p.body = n.to_string();
        pages.replace(&mut p).await.unwrap();
    }
    assert_eq!(p.rev, 7);
    let kept: Vec<i64> = pages
        .history(1)
        .await
        .unwrap()
        .iter()
        .map(|r| r.version)
        .collect();
    assert_eq!(kept, [6, 5, 4]);

    let listed = list_indexes(&db, "page_revisions").await.unwrap();
    let unique = listed
        .iter()
        .find(|i| i.get_str("name").ok() == Some("docId_1_version_1"))
        .unwrap();
    assert_eq!(unique.get_bool("unique").ok(), Some(true));
    let ttl = listed
        .iter()
        .find(|i| i.get_str("name").ok() == Some("archivedAt_1"))
        .unwrap();
    assert_eq!(ttl.get_i32("expireAfterSeconds").ok(), Some(90 * 86_400));
}

#[tokio::test]
async fn a_document_inserted_again_after_its_delete_goes_on_from_its_history() {
    let db = test_db("versioning_second_life").await;
    pattern_runtime::sync(&db)
        .models(&[Page::SCHEMA])
        .await
        .unwrap();
    let pages = Page::collection(&db);
    let page = |body: &str| Page {
        id: 1,
        rev: 0,
        body: body.into(),
    };
    let mut p = page("0");
    pages.insert(&mut p).await.unwrap();
    for n in 1..=6 {
        p.body = n.to_string();
        pages.replace(&mut p).await.unwrap();
    }
    pages.delete(1).await.unwrap();
    // Revisions 4..=6 kept, 7 archived by the delete. Writers race to insert `_id` 1 again:
    // exactly one succeeds, at version 8.
    let inserts = (0..8).map(|n| {
        let pages = pages.clone();
        async move {
            let mut again = page(&format!("again {n}"));
            pages.insert(&mut again).await.map(|_| again)
        }
    });
    let results = futures_util::future::join_all(inserts).await;
    let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    assert_eq!(won.len(), 1, "{lost:?}");
    assert!(
        lost.iter()
            .all(|r| matches!(r, Err(Error::DuplicateKey { .. }))),
        "{lost:?}"
    );
    let mut again = won.into_iter().next().unwrap().unwrap();
    assert_eq!(again.rev, 8);
    let stored = db
        .collection::<bson::Document>("pages")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get("rev"),
        Some(&Bson::Int32(8)),
        "an `i32` version stays an Int32"
    );
    again.body = "after".into();
    assert_eq!(pages.replace(&mut again).await.unwrap().version, Some(9));
    let kept: Vec<(i64, bool)> = pages
        .history(1)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.version, r.deleted))
        .collect();
    assert_eq!(kept, [(8, false), (7, true), (6, false)]);
    assert_eq!(pages.revision(1, 7).await.unwrap().body, "6");
}

#[tokio::test]
async fn transient_failures_are_retried_without_a_duplicate_revision() {
    let db = test_db("versioning_faults").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let mut a = article(1);
    articles.insert(&mut a).await.unwrap();

    // The main update fails once with a transient transaction error: the whole transaction is
    // run again, and exactly one revision results.
    db.fail_command(
        &["findAndModify"],
        1,
        doc! { "errorCode": 112, "errorLabels": ["TransientTransactionError"] },
    )
    .await;
    a.title = "after a transient failure".into();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));
    assert_eq!(revisions(&db, 1).await, [1]);

    // The commit's result is unknown once: the commit is retried, not the transaction.
    db.fail_command(
        &["commitTransaction"],
        1,
        doc! { "errorCode": 91, "errorLabels": ["UnknownTransactionCommitResult"] },
    )
    .await;
    a.title = "after an unknown commit result".into();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(3));
    assert_eq!(revisions(&db, 1).await, [1, 2]);

    // A non-retryable failure of the revision write: nothing changes in either collection.
    db.fail_command(
        &["insert"],
        1,
        doc! { "errorCode": 2, "errmsg": "injected" },
    )
    .await;
    a.title = "never saved".into();
    let err = articles.replace(&mut a).await.unwrap_err();
    assert_eq!(err.code(), Some(2), "{err:?}");
    let stored = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.version, stored.title.as_str()),
        (3, "after an unknown commit result")
    );
    assert_eq!(revisions(&db, 1).await, [1, 2]);
}

/// A commit that went through, answered as a transient failure (a server that forgets its
/// commit records across a restart answers the re-sent commit so): the transaction's body runs
/// again, finds the document changed, and must not apply the change a second time. The fail
/// point lets the commit run (a write concern error) and labels its answer transient.
#[tokio::test]
async fn a_commit_that_went_through_is_not_applied_again() {
    let db = test_db("versioning_lost_commit").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    articles.insert(&mut article(1)).await.unwrap();
    let lost_commit = doc! {
        "writeConcernError": { "code": 91, "errmsg": "injected: the commit's answer was lost" },
        "errorLabels": ["TransientTransactionError"],
    };

    // `modify`: one increment, one revision, though the body ran twice.
    db.fail_command(&["commitTransaction"], 1, lost_commit.clone())
        .await;
    let saved = articles.modify(1, 5, |a| a.counter += 1).await.unwrap();
    assert_eq!((saved.version, saved.counter), (2, 1));
    let stored = articles.get(1).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.counter), (2, 1));
    assert_eq!(revisions(&db, 1).await, [1]);

    // An operator update: applied once, its new version returned.
    db.fail_command(&["commitTransaction"], 1, lost_commit.clone())
        .await;
    let v = articles
        .update(At(1, 2), doc! { "$inc": { "counter": 10 } })
        .await
        .unwrap();
    assert_eq!(v.version, Some(3));
    let stored = articles.get(1).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.counter), (3, 11));
    assert_eq!(revisions(&db, 1).await, [1, 2]);

    // A delete: done once, not `NotFound` for the run that found it gone.
    db.fail_command(&["commitTransaction"], 1, lost_commit)
        .await;
    articles.delete(1).await.unwrap();
    assert!(articles.get(1).await.unwrap().is_none());
    assert_eq!(revisions(&db, 1).await, [1, 2, 3]);

    // A real conflict on a first run is still one: nothing is looked up, nothing written.
    let mut a = article(2);
    articles.insert(&mut a).await.unwrap();
    articles.modify(2, 1, |a| a.counter += 1).await.unwrap();
    a.title = "stale".into();
    let err = articles.replace(&mut a).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
}

#[tokio::test]
async fn without_transactions_the_revision_is_written_first() {
    // mongod without a replica set refuses a transaction's first command with code 20; the
    // fail point answers so (the embedded server has transactions even standalone).
    let db = test_db("versioning_standalone").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let mut a = article(1);
    articles.insert(&mut a).await.unwrap();
    let illegal = doc! { "errorCode": 20, "errmsg": "Transaction numbers are only allowed on a replica set member or mongos" };

    db.fail_command(&["findAndModify"], 1, illegal.clone())
        .await;
    a.title = "saved without a transaction".into();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));
    assert_eq!(revisions(&db, 1).await, [1]);

    // A stale save on that path: the version condition finds nothing, and the caller gets the
    // conflict (a racing writer that read version 1 too would be stopped by the unique
    // {docId, version} index when archiving it, and also get the conflict).
    let mut stale = a.clone();
    stale.version = 1;
    db.fail_command(&["findAndModify"], 1, illegal.clone())
        .await;
    let err = articles.replace(&mut stale).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::VersionConflict {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(revisions(&db, 1).await, [1]);

    // Operator updates too.
    db.fail_command(&["findAndModify"], 1, illegal).await;
    assert_eq!(
        articles
            .update(At(1, 2), doc! { "$inc": { "counter": 1 } })
            .await
            .unwrap()
            .version,
        Some(3)
    );
    assert_eq!(revisions(&db, 1).await, [1, 2]);
}

#[tokio::test]
async fn modify_retries_conflicts_and_loses_no_update_under_8_writers() {
    let db = test_db("versioning_modify").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    articles.insert(&mut article(1)).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let articles = articles.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                // Each conflict is another writer's successful save, and the others save 7 x 25 =
                // 175 times in all: 200 tries can never run out, whatever the interleaving.
                let saved = articles.modify(1, 200, |a| a.counter += 1).await.unwrap();
                assert!(saved.version >= 2);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let a = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.counter, 200, "no lost update");
    assert_eq!(a.version, 201);
    assert_eq!(
        revisions(&db, 1).await,
        (1..=200).collect::<Vec<i64>>(),
        "gapless, no duplicates"
    );
}

#[tokio::test]
async fn modify_with_one_try_returns_the_conflict_and_counts_stay_exact() {
    let db = test_db("versioning_modify_bounded").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    articles.insert(&mut article(1)).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let articles = articles.clone();
        tasks.push(tokio::spawn(async move {
            let (mut saved, mut conflicts) = (0i64, 0i64);
            for _ in 0..10 {
                match articles.modify(1, 1, |a| a.counter += 1).await {
                    Ok(_) => saved += 1,
                    Err(e) if e.is_conflict() => conflicts += 1,
                    Err(e) => panic!("{e:?}"),
                }
            }
            (saved, conflicts)
        }));
    }
    let (mut saved, mut conflicts) = (0, 0);
    for t in tasks {
        let (s, c) = t.await.unwrap();
        saved += s;
        conflicts += c;
    }
    assert_eq!(saved + conflicts, 80);
    let a = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    // Every reported success is in the document, and nothing else is.
    assert_eq!(a.counter, saved, "{conflicts} conflicts returned");
    assert_eq!(a.version, saved + 1);
}

#[tokio::test]
async fn modify_of_a_missing_document_and_a_refused_change_write_nothing() {
    #[derive(Debug)]
    enum AppError {
        TooMany,
        Db(Error),
    }
    impl From<Error> for AppError {
        fn from(e: Error) -> Self {
            AppError::Db(e)
        }
    }

    let db = test_db("versioning_modify_refused").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let err = articles
        .modify(42, 3, |a| a.counter += 1)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");

    articles.insert(&mut article(1)).await.unwrap();
    let refused = articles
        .try_modify(1, 3, |a| {
            if a.counter >= 0 {
                return Err(AppError::TooMany);
            }
            a.counter += 1;
            Ok(())
        })
        .await
        .unwrap_err();
    assert!(matches!(refused, AppError::TooMany), "{refused:?}");
    let a = articles
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!((a.version, a.counter), (1, 0));
    assert!(revisions(&db, 1).await.is_empty());

    let missing = articles
        .try_modify(42, 3, |_| Ok::<(), AppError>(()))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, AppError::Db(ref e) if e.is_not_found()),
        "{missing:?}"
    );
}

#[tokio::test]
async fn a_bound_versioning_reads_its_transactions_writes() {
    let db = test_db("versioning_in_transaction").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let outside = Article::collection(&db);
    outside.insert(&mut article(1)).await.unwrap();
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = Article::collection(&db).in_transaction(&tx);
    let mut a = bound
        .modify(1, 1, |a| a.title = "in the transaction".into())
        .await
        .unwrap();
    assert_eq!(a.version, 2);
    a.title = "again".into();
    bound.replace(&mut a).await.unwrap();
    assert_eq!(a.version, 3);
    // A second `modify`, and a `revert`, read the transaction's own version, not the
    // committed one (which would be a version conflict).
    let a = bound.modify(1, 1, |a| a.counter += 1).await.unwrap();
    assert_eq!((a.version, a.counter), (4, 1));
    assert_eq!(bound.revert(1, 3).await.unwrap(), 5);

    // Both reads of the bound handle see the transaction's own revisions...
    let history: Vec<i64> = bound
        .history(1)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.version)
        .collect();
    assert_eq!(history, [4, 3, 2, 1], "newest first");
    assert_eq!(
        bound.revision(1, 2).await.unwrap().title,
        "in the transaction",
        "archived in the transaction"
    );
    assert_eq!(bound.revision(1, 3).await.unwrap().title, "again");
    let current = bound.revision(1, 5).await.unwrap();
    assert_eq!(
        (current.title.as_str(), current.counter),
        ("again", 0),
        "reverted"
    );

    // ... which the handle outside it does not see before the commit.
    assert!(outside.history(1).await.unwrap().is_empty());
    assert!(matches!(
        outside.revision(1, 2).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    assert_eq!(outside.revision(1, 1).await.unwrap().title, "article 1");
    tx.commit().await.unwrap();
    assert_eq!(revisions(&db, 1).await, [1, 2, 3, 4]);
    assert_eq!(outside.get(1).await.unwrap().unwrap().version, 5);
}

// A document deleted and inserted again under the same `_id`: its lives share one gapless
// history (`keep` trims across them, `revert` reaches an earlier life), and `i32`/`u32` versions
// at their limit.

// ---------------------------------------------------------------------------------------------
// Models: versioning
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vdocs")]
#[versioned(history = "ncl_vdoc_revisions")]
struct NclVDoc {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
    n: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vkeeps")]
#[versioned(history = "ncl_vkeep_revisions", keep = 2)]
struct NclVKeep {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_v32s")]
#[versioned(history = "ncl_v32_revisions")]
struct NclV32 {
    #[serde(rename = "_id")]
    id: i32,
    #[version]
    version: i32,
    n: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vu32s")]
#[versioned(history = "ncl_vu32_revisions", keep = 3)]
struct NclVU32 {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: u32,
    n: i64,
}

// ---------------------------------------------------------------------------------------------
// 2. Versioned: deleted, then inserted again
// ---------------------------------------------------------------------------------------------

fn vdoc(id: i64, title: &str) -> NclVDoc {
    NclVDoc {
        id,
        version: 0,
        title: title.into(),
        n: 0,
    }
}

async fn versions_of(db: &mongodb::Database, id: i64) -> Vec<(i64, bool)> {
    let mut v: Vec<(i64, bool)> = NclVDoc::collection(db)
        .history(id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.version, r.deleted))
        .collect();
    v.sort_unstable();
    v
}

fn limit_revision(id: i32) -> Document {
    doc! {
        "_id": bson::oid::ObjectId::new(), "docId": id, "version": i32::MAX,
        "snapshot": { "_id": id, "version": i32::MAX, "n": 1i64 },
        "archivedAt": DateTime::now(), "deleted": true,
    }
}

#[tokio::test]
async fn versioned_delete_reinsert_cycles_gapless() {
    let db = test_db("ncl_v_cycles").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut expected_deleted = Vec::new();
    let mut next = 1i64;
    for life in 0..4 {
        let mut d = vdoc(1, &format!("life {life}"));
        d.version = 77; // whatever the caller holds is overwritten
        docs.insert(&mut d).await.unwrap();
        assert_eq!(d.version, next, "life {life}");
        assert_eq!(docs.get(1).await.unwrap().unwrap().version, next);
        for s in 0..life {
            d.title = format!("life {life} save {s}");
            let v = docs.replace(&mut d).await.unwrap();
            next += 1;
            assert_eq!(v.version, Some(next));
        }
        docs.delete(1).await.unwrap();
        expected_deleted.push(next);
        assert!(docs.get(1).await.unwrap().is_none());
        next += 1;
        let h = versions_of(&db, 1).await;
        let want: Vec<(i64, bool)> = (1..next)
            .map(|v| (v, expected_deleted.contains(&v)))
            .collect();
        assert_eq!(h, want, "life {life}");
    }
    // Every revision still reads back, from every life.
    for v in 1..next {
        let r = docs.revision(1, v).await.unwrap();
        assert!(r.title.starts_with("life "), "{r:?}");
    }
    // The delete of a deleted document is NotFound, and archives nothing.
    let e = docs.delete(1).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(versions_of(&db, 1).await.len() as i64, next - 1);
}

#[tokio::test]
async fn versioned_keep_trims_across_lives() {
    let db = test_db("ncl_v_keep").await;
    pattern_runtime::sync(&db)
        .models(&[NclVKeep::SCHEMA])
        .await
        .unwrap();
    let docs = NclVKeep::collection(&db);
    let hist = |db: mongodb::Database| async move {
        let mut v: Vec<i64> = NclVKeep::collection(&db)
            .history("k")
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.version)
            .collect();
        v.sort_unstable();
        v
    };
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "a".into(),
    };
    docs.insert(&mut d).await.unwrap();
    for b in ["b", "c", "d"] {
        d.body = b.into();
        docs.replace(&mut d).await.unwrap();
    }
    assert_eq!(d.version, 4);
    assert_eq!(hist((*db).clone()).await, vec![2, 3]);
    docs.delete("k").await.unwrap(); // archives 4
                                     // Inserted again: after 4, whatever the trimming kept.
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "e".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 5);
    // Deleted at once, inserted again: 6.
    docs.delete("k").await.unwrap();
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "f".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 6);
    d.body = "g".into();
    assert_eq!(docs.replace(&mut d).await.unwrap().version, Some(7));
    let h = hist((*db).clone()).await;
    assert_eq!(h, vec![5, 6], "keep = 2 after a save");
    // keep trims but never the revision a later insert goes on from.
    docs.delete("k").await.unwrap();
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "h".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 8);
    d.body = "i".into();
    assert_eq!(docs.replace(&mut d).await.unwrap().version, Some(9));
    assert_eq!(hist((*db).clone()).await, vec![7, 8]);
    // revert to a trimmed revision: NotFound of the revision, nothing written.
    let e = docs.revert("k", 2).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Revision { version: 2, .. })),
        "{e:?}"
    );
    assert_eq!(docs.get("k").await.unwrap().unwrap().version, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn versioned_concurrent_reinserts_then_saves_gapless() {
    let db = test_db("ncl_v_concurrent_reinsert").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut d = vdoc(5, "first");
    docs.insert(&mut d).await.unwrap();
    d.title = "second".into();
    docs.replace(&mut d).await.unwrap();
    docs.delete(5).await.unwrap(); // history 1, 2(deleted)

    let n = 8;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let docs = docs.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let mut d = vdoc(5, &format!("writer {i}"));
            barrier.wait().await;
            docs.insert(&mut d).await.map(|_| d.version)
        }));
    }
    let mut won = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(v) => won.push(v),
            Err(e) => assert!(e.is_duplicate_key(), "a losing insert: {e:?}"),
        }
    }
    assert_eq!(won, vec![3], "exactly one insert, at version 3");

    // Concurrent saves after the re-insert: every one lands, versions gapless.
    let mut tasks = Vec::new();
    for _ in 0..n {
        let docs = docs.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut seen = Vec::new();
            for _ in 0..5 {
                let d = docs.modify(5, 200, |d| d.n += 1).await.unwrap();
                seen.push(d.version);
            }
            seen
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    let want: Vec<i64> = (4..4 + 5 * n as i64).collect();
    assert_eq!(all, want, "each save a version of its own");
    let cur = docs.get(5).await.unwrap().unwrap();
    assert_eq!(cur.n, 5 * n as i64);
    assert_eq!(cur.version, 3 + 5 * n as i64);
    let h: Vec<i64> = versions_of(&db, 5)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(h, (1..cur.version).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn versioned_concurrent_delete_insert_churn_gapless() {
    let db = test_db("ncl_v_churn").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let n = 6;
    let mut tasks = Vec::new();
    for w in 0..n {
        let docs = docs.clone();
        tasks.push(tokio::spawn(async move {
            let mut written = Vec::new();
            let mut unexpected = Vec::new();
            for i in 0..15 {
                match (w + i) % 3 {
                    0 => {
                        let mut d = vdoc(9, &format!("{w}/{i}"));
                        match docs.insert(&mut d).await {
                            Ok(_) => written.push(d.version),
                            Err(e) if e.is_duplicate_key() => {}
                            Err(e) => unexpected.push(format!("insert: {e:?}")),
                        }
                    }
                    1 => match docs.modify(9, 50, |d| d.n += 1).await {
                        Ok(d) => written.push(d.version),
                        Err(e) if e.is_not_found() => {}
                        Err(e) => unexpected.push(format!("modify: {e:?}")),
                    },
                    _ => match docs.delete(9).await {
                        Ok(()) => {}
                        Err(e) if e.is_not_found() => {}
                        Err(e) => unexpected.push(format!("delete: {e:?}")),
                    },
                }
            }
            (written, unexpected)
        }));
    }
    let mut written = Vec::new();
    let mut unexpected = Vec::new();
    for t in tasks {
        let (w, u) = t.await.unwrap();
        written.extend(w);
        unexpected.extend(u);
    }
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    let distinct: BTreeSet<i64> = written.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        written.len(),
        "two writes got one version: {written:?}"
    );
    let mut all: Vec<i64> = versions_of(&db, 9)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    if let Some(cur) = docs.get(9).await.unwrap() {
        all.push(cur.version);
    }
    all.sort_unstable();
    let max = *all.last().unwrap();
    assert_eq!(
        all,
        (1..=max).collect::<Vec<_>>(),
        "gapless, each version once"
    );
    // Whatever the race left, the document stays writable: a live one takes a modify (version
    // max + 1) and a delete (which archives it), and the next life goes on after that.
    let next = if docs.get(9).await.unwrap().is_some() {
        docs.modify(9, 5, |d| d.n += 1).await.unwrap();
        docs.delete(9).await.unwrap();
        max + 2
    } else {
        max + 1
    };
    let mut d = vdoc(9, "after");
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, next);
}

#[tokio::test]
async fn versioned_revert_to_an_earlier_life() {
    let db = test_db("ncl_v_revert").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut d = vdoc(2, "a");
    docs.insert(&mut d).await.unwrap(); // 1
    d.title = "b".into();
    d.n = 7;
    docs.replace(&mut d).await.unwrap(); // 2
    docs.delete(2).await.unwrap(); // 2 archived, deleted
    let mut d = vdoc(2, "c");
    docs.insert(&mut d).await.unwrap(); // 3
    assert_eq!(d.version, 3);
    assert_eq!(docs.revert(2, 1).await.unwrap(), 4);
    let cur = docs.get(2).await.unwrap().unwrap();
    assert_eq!((cur.title.as_str(), cur.n, cur.version), ("a", 0, 4));
    // The deleted revision of the earlier life.
    assert_eq!(docs.revert(2, 2).await.unwrap(), 5);
    let cur = docs.get(2).await.unwrap().unwrap();
    assert_eq!((cur.title.as_str(), cur.n, cur.version), ("b", 7, 5));
    // A version that never existed.
    let e = docs.revert(2, 99).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Revision { version: 99, .. })),
        "{e:?}"
    );
    // Reverting the current version is a new version equal to it.
    assert_eq!(docs.revert(2, 5).await.unwrap(), 6);
    // Deleted again: revert is NotFound of the document, nothing written.
    docs.delete(2).await.unwrap();
    let before = versions_of(&db, 2).await;
    let e = docs.revert(2, 1).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Document { .. })),
        "{e:?}"
    );
    assert_eq!(versions_of(&db, 2).await, before);
    assert!(docs.get(2).await.unwrap().is_none());
    let h: Vec<i64> = before.iter().map(|(v, _)| *v).collect();
    assert_eq!(h, (1..=6).collect::<Vec<_>>());
    let mut d = vdoc(2, "d");
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 7);
}

#[tokio::test]
async fn versioned_i32_and_u32_versions_across_lives() {
    let db = test_db("ncl_v_narrow").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclVU32::SCHEMA])
        .await
        .unwrap();
    let a = NclV32::collection(&db);
    let b = NclVU32::collection(&db);
    let mut expect = 0;
    for life in 0..3 {
        let mut x = NclV32 {
            id: -4,
            version: 0,
            n: life,
        };
        a.insert(&mut x).await.unwrap();
        expect += 1;
        assert_eq!(x.version, expect);
        x.n += 10;
        assert_eq!(
            a.replace(&mut x).await.unwrap().version,
            Some(expect as i64 + 1)
        );
        expect += 1;
        a.update(At(-4, expect as i64), doc! { "$inc": { "n": 1 } })
            .await
            .unwrap();
        expect += 1;
        a.delete(-4).await.unwrap(); // archives the current version
    }
    let stored = a.raw().clone_with_type::<Document>();
    let mut x = NclV32 {
        id: -4,
        version: 0,
        n: 0,
    };
    a.insert(&mut x).await.unwrap();
    assert_eq!(x.version, expect + 1);
    let raw = stored.find_one(doc! { "_id": -4 }).await.unwrap().unwrap();
    assert!(matches!(raw.get("version"), Some(Bson::Int32(_))), "{raw}");
    assert_eq!(a.revert(-4, 1).await.unwrap(), expect as i64 + 2);
    let raw = stored.find_one(doc! { "_id": -4 }).await.unwrap().unwrap();
    assert!(matches!(raw.get("version"), Some(Bson::Int32(_))), "{raw}");

    let mut expect = 0u32;
    for life in 0..4 {
        let mut y = NclVU32 {
            id: 7,
            version: 0,
            n: life,
        };
        b.insert(&mut y).await.unwrap();
        expect += 1;
        assert_eq!(y.version, expect, "life {life}");
        for _ in 0..3 {
            y.n += 1;
            b.replace(&mut y).await.unwrap();
            expect += 1;
        }
        assert_eq!(y.version, expect);
        b.delete(7).await.unwrap();
    }
    let h = b.history(7).await.unwrap();
    assert!(
        h.len() <= 4,
        "keep = 3 plus at most the deletes since: {}",
        h.len()
    );
    let mut y = NclVU32 {
        id: 7,
        version: 0,
        n: 0,
    };
    b.insert(&mut y).await.unwrap();
    assert_eq!(y.version, expect + 1);
}

#[tokio::test]
async fn versioned_i32_reinsert_after_limit_refused_under_validator() {
    // A history written by another program ends at i32::MAX: the next life cannot be numbered
    // in an i32. Under the validator: refused, typed, nothing written.
    let db = test_db("ncl_v_i32_limit").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(&db, "ncl_v32_revisions", limit_revision(11))
        .await
        .expect("a revision of the documented shape");
    let a = NclV32::collection(&db);
    let mut x = NclV32 {
        id: 11,
        version: 0,
        n: 2,
    };
    let e = a.insert(&mut x).await.unwrap_err();
    assert!(e.is_validation_failed() || is_invalid_value(&e), "{e:?}");
    assert!(a.get(11).await.unwrap().is_none());
}

#[tokio::test]
async fn versioned_i32_reinsert_after_limit_unvalidated() {
    let db = test_db_unvalidated("ncl_v_i32_limit_unvalidated").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(&db, "ncl_v32_revisions", limit_revision(11))
        .await
        .unwrap();
    let a = NclV32::collection(&db);
    let mut x = NclV32 {
        id: 11,
        version: 0,
        n: 2,
    };
    let r = a.insert(&mut x).await;
    let stored = a.get(11).await;
    assert!(
        matches!(stored, Ok(None)) && matches!(r, Err(Error::InvalidValue { .. })),
        "insert {r:?} (caller's version {}), then get {stored:?}",
        x.version
    );
}

#[tokio::test]
async fn versioned_i32_save_at_limit_refused() {
    let db = test_db("ncl_v_i32_save_limit").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(
        &db,
        "ncl_v32s",
        doc! { "_id": 12, "version": i32::MAX, "n": 1i64 },
    )
    .await
    .unwrap();
    let a = NclV32::collection(&db);
    let mut y = a.get(12).await.unwrap().unwrap();
    y.n = 5;
    let r = a.replace(&mut y).await;
    let stored = a.get(12).await.unwrap().unwrap();
    assert!(
        r.as_ref()
            .is_err_and(|e| !matches!(e, Error::Driver { .. })),
        "save returned {r:?}; stored {stored:?}; history {:?}",
        a.history(12)
            .await
            .unwrap()
            .iter()
            .map(|r| r.version)
            .collect::<Vec<_>>()
    );
    assert_eq!((stored.version, stored.n), (i32::MAX, 1), "nothing written");
}

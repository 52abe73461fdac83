//! `replace` of a versioned document (optimistic lock + revision, in one transaction) vs the same transaction by hand.
//!
//! One side per process, so each starts on a fresh server (see `benches/subset.rs`):
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- versioning_save/toolkit`, then
//! `... -- versioning_save/by_hand`.

use bson::{doc, DateTime, Document};
use criterion::{criterion_group, Criterion};
use mongodb::options::ReturnDocument;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[versioned(history = "article_revisions")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
    body: String,
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fresh = |name: &'static str| {
        rt.block_on(async {
            let db = pattern_testkit::test_db(name).await;
            pattern_runtime::sync(&db)
                .models(&[Article::SCHEMA])
                .await
                .unwrap();
            let mut a = Article {
                id: 1,
                version: 0,
                title: "t".into(),
                body: "b".repeat(500),
            };
            Article::collection(&db).insert(&mut a).await.unwrap();
            (db, a)
        })
    };
    let mut g = c.benchmark_group("versioning_save");
    let (toolkit_db, article) = fresh("bench_save_toolkit");
    let article = &article;
    let articles = Article::collection(&toolkit_db);
    // Iterations run one after another: the held version goes from one to the next.
    let held = std::cell::Cell::new(article.version);
    g.bench_function("toolkit", |b| {
        b.to_async(&rt).iter(|| {
            let mut item = article.clone();
            item.version = held.get();
            item.title.push('x');
            let (articles, held) = (&articles, &held);
            async move {
                articles.replace(&mut item).await.unwrap();
                held.set(item.version);
            }
        })
    });
    let (db, article) = fresh("bench_save_by_hand");
    let main = db.collection::<Article>("articles");
    let history = db.collection::<Document>("article_revisions");
    let mut a = article;
    g.bench_function("by_hand", |b| {
        b.to_async(&rt).iter(|| {
            a.title.push('x');
            let v = a.version;
            a.version = v + 1;
            let (db, main, history, new) = (&db, &main, &history, a.clone());
            async move {
                let mut session = db.client().start_session().await.unwrap();
                session
                    .start_transaction()
                    .and_run2(async |s| {
                        let old = main
                            .find_one_and_replace(doc! { "_id": 1, "version": v }, new.clone())
                            .return_document(ReturnDocument::Before)
                            .session(&mut *s)
                            .await?
                            .expect("no concurrent writer here");
                        let revision = doc! {
                            "docId": 1, "version": v,
                            "snapshot": bson::serialize_to_document(&old).unwrap(),
                            "archivedAt": DateTime::now(),
                        };
                        history.insert_one(revision).session(&mut *s).await?;
                        Ok(())
                    })
                    .await
                    .unwrap();
            }
        })
    });
    g.finish();
}

criterion_group!(versioning, benches);

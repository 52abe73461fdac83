//! The outlier pattern with large items: no document ever becomes unwritable. The main document
//! and each overflow document keep a byte budget (`max_bytes`, 8 MiB by default) as well as
//! their item counts, so a user whose posts are large can keep posting, the count stays exact
//! and no document comes near MongoDB's 16 MiB.

use bson::{doc, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{limits::MAX_DOCUMENT_SIZE, Error, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Post {
    n: i64,
    body: String,
}

/// The first case: 50 items kept in the user, 1 000 per overflow document.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Writer {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "writer_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

/// The second case: 100 items per overflow document.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Poster {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 5, overflow = "poster_posts", capacity = 100, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

/// A declared budget: 1 MiB per document.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Small {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 1000, overflow = "small_posts", capacity = 1000, max_bytes = 1_048_576, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

fn post(n: i64, bytes: usize) -> Post {
    Post {
        n,
        body: "x".repeat(bytes),
    }
}

/// Every document of `collection` and its BSON size.
async fn sizes(db: &mongodb::Database, collection: &str) -> Vec<(Document, usize)> {
    let docs: Vec<Document> = db
        .collection::<Document>(collection)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.into_iter()
        .map(|d| {
            let size = bson::RawDocumentBuf::try_from(&d).unwrap().as_bytes().len();
            (d, size)
        })
        .collect()
}

/// The items stored for `id`, in order, with their numbers.
async fn stored<M: Model<Id = String>>(
    db: &mongodb::Database,
    outlier: &pattern_runtime::Outlier<M, Post>,
    id: &str,
) -> Vec<i64> {
    let _ = db;
    outlier
        .items(id)
        .await
        .unwrap()
        .iter()
        .map(|p| p.n)
        .collect()
}

#[tokio::test]
async fn large_items_never_make_the_main_document_unwritable() {
    let db = test_db("outlier_size_main").await;
    pattern_runtime::sync(&db)
        .models(&[Writer::SCHEMA])
        .await
        .unwrap();
    let posts = Writer::collection(&db).outlier(Writer::FIELDS.posts);
    assert_eq!(posts.spec().max_bytes(), 8 * 1024 * 1024);
    Writer::collection(&db)
        .raw()
        .insert_one(Writer {
            id: "w".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    // 400 KiB posts: the main document passed 16 MiB at post 40 before the budget.
    for n in 0..60 {
        posts.push("w", post(n, 400 * 1024)).await.unwrap();
    }
    assert_eq!(posts.count("w").await.unwrap(), 60);
    assert_eq!(stored(&db, &posts, "w").await, (0..60).collect::<Vec<_>>());
    for (d, size) in sizes(&db, "writers")
        .await
        .into_iter()
        .chain(sizes(&db, "writer_posts").await)
    {
        assert!(
            size <= 8 * 1024 * 1024 + 512,
            "{} is {size} bytes",
            d.get("_id").unwrap()
        );
    }
    let (main, _) = &sizes(&db, "writers").await[0];
    let embedded = main.get_array("posts").unwrap().len();
    assert!(
        embedded < 50,
        "the budget overflowed the main document at {embedded} posts"
    );
    assert!(main.get_bool("isOutlier").unwrap());
    let state = posts.state("w").await.unwrap();
    assert!(state.is_consistent(), "{state:?}");
}

#[tokio::test]
async fn a_full_overflow_document_is_closed_and_the_push_goes_on() {
    let db = test_db("outlier_size_overflow").await;
    pattern_runtime::sync(&db)
        .models(&[Poster::SCHEMA])
        .await
        .unwrap();
    let posts = Poster::collection(&db).outlier(Poster::FIELDS.posts);
    Poster::collection(&db)
        .raw()
        .insert_one(Poster {
            id: "p".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    // 300 KiB posts: the first overflow document filled at post 54 of its 100.
    for n in 0..70 {
        posts.push("p", post(n, 300 * 1024)).await.unwrap();
    }
    // A push of many at once crosses documents too.
    posts
        .push_many("p", (70..90).map(|n| post(n, 300 * 1024)).collect())
        .await
        .unwrap();
    assert_eq!(posts.count("p").await.unwrap(), 90);
    assert_eq!(stored(&db, &posts, "p").await, (0..90).collect::<Vec<_>>());
    let overflow = sizes(&db, "poster_posts").await;
    assert!(overflow.len() >= 3, "{} overflow documents", overflow.len());
    for (d, size) in &overflow {
        assert!(size <= &(8 * 1024 * 1024 + 512), "{d:?} is {size} bytes");
    }
    // Every document but the last is closed.
    let open = overflow
        .iter()
        .filter(|(d, _)| !d.get_bool("full").unwrap_or(false))
        .count();
    assert_eq!(open, 1);
    assert!(posts.state("p").await.unwrap().is_consistent());
    // Pages cross the documents as they lie.
    let page: Vec<i64> = posts
        .page("p", 3, 40)
        .await
        .unwrap()
        .iter()
        .map(|p| p.n)
        .collect();
    assert_eq!(page, (3..43).collect::<Vec<_>>());
}

/// Item sizes from 1 KiB to 2 MiB, and one past 16 MiB: every push is stored or refused with a
/// typed error, the count equals the items stored, no document passes the limit, and the user
/// keeps posting after the largest.
#[tokio::test]
async fn every_item_size_is_stored_or_refused_and_the_count_stays_exact() {
    let db = test_db("outlier_size_sweep").await;
    pattern_runtime::sync(&db)
        .models(&[Writer::SCHEMA, Poster::SCHEMA, Small::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let sizes_kib = [1usize, 4, 16, 64, 256, 512, 1024, 1536, 2048];
    for (user, collection, overflow) in [
        ("writer", "writers", "writer_posts"),
        ("poster", "posters", "poster_posts"),
        ("small", "smalls", "small_posts"),
    ] {
        db.collection::<Document>(collection)
            .insert_one(doc! { "_id": user, "posts": [], "isOutlier": false, "postsCount": 0_i64 })
            .await
            .unwrap();
        let mut expected = Vec::new();
        let mut n = 0i64;
        for round in 0..3 {
            for kib in sizes_kib {
                let item = post(n, kib * 1024);
                let pushed = match user {
                    "writer" => {
                        Writer::collection(&db)
                            .outlier(Writer::FIELDS.posts)
                            .push(user, item)
                            .await
                    }
                    "poster" => {
                        Poster::collection(&db)
                            .outlier(Poster::FIELDS.posts)
                            .push(user, item)
                            .await
                    }
                    _ => {
                        Small::collection(&db)
                            .outlier(Small::FIELDS.posts)
                            .push(user, item)
                            .await
                    }
                };
                pushed.unwrap_or_else(|e| panic!("{user} round {round}, {kib} KiB: {e}"));
                expected.push(n);
                n += 1;
            }
        }
        // An item over 16 MiB alone: refused, nothing written.
        let huge = post(n, MAX_DOCUMENT_SIZE + 1);
        let refused = match user {
            "writer" => {
                Writer::collection(&db)
                    .outlier(Writer::FIELDS.posts)
                    .push(user, huge)
                    .await
            }
            "poster" => {
                Poster::collection(&db)
                    .outlier(Poster::FIELDS.posts)
                    .push(user, huge)
                    .await
            }
            _ => {
                Small::collection(&db)
                    .outlier(Small::FIELDS.posts)
                    .push(user, huge)
                    .await
            }
        };
        assert!(
            matches!(refused, Err(Error::DocumentTooLarge { .. })),
            "{refused:?}"
        );
        // And a small one after it is stored.
        let last = match user {
            "writer" => {
                Writer::collection(&db)
                    .outlier(Writer::FIELDS.posts)
                    .push(user, post(n + 1, 10))
                    .await
            }
            "poster" => {
                Poster::collection(&db)
                    .outlier(Poster::FIELDS.posts)
                    .push(user, post(n + 1, 10))
                    .await
            }
            _ => {
                Small::collection(&db)
                    .outlier(Small::FIELDS.posts)
                    .push(user, post(n + 1, 10))
                    .await
            }
        };
        last.unwrap();
        expected.push(n + 1);
        let (items, count, state) = match user {
            "writer" => {
                let o = Writer::collection(&db).outlier(Writer::FIELDS.posts);
                (
                    stored(&db, &o, user).await,
                    o.count(user).await.unwrap(),
                    o.state(user).await.unwrap(),
                )
            }
            "poster" => {
                let o = Poster::collection(&db).outlier(Poster::FIELDS.posts);
                (
                    stored(&db, &o, user).await,
                    o.count(user).await.unwrap(),
                    o.state(user).await.unwrap(),
                )
            }
            _ => {
                let o = Small::collection(&db).outlier(Small::FIELDS.posts);
                (
                    stored(&db, &o, user).await,
                    o.count(user).await.unwrap(),
                    o.state(user).await.unwrap(),
                )
            }
        };
        assert_eq!(items, expected, "{user}");
        assert_eq!(count, expected.len() as i64, "{user}");
        assert!(state.is_consistent(), "{user}: {state:?}");
        let budget = if user == "small" {
            1024 * 1024
        } else {
            8 * 1024 * 1024
        };
        for (d, size) in sizes(&db, collection)
            .await
            .into_iter()
            .chain(sizes(&db, overflow).await)
        {
            assert!(size <= MAX_DOCUMENT_SIZE, "{user}: {size}");
            let items = d.get_array("posts").map(|a| a.len()).unwrap_or(0);
            // Over the budget only with one item that is alone over it.
            assert!(
                size <= budget + 512 || items == 1,
                "{user}: {} has {items} items in {size} bytes",
                d.get("_id").unwrap()
            );
        }
    }
}

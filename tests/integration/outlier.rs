//! The outlier pattern against the server (seed 000, 异常值模式): users keep their posts in an
//! array; a celebrity's overflow into `{_id: "posts_user123_1", userId, seq, posts}` documents,
//! flagged and counted on the user, read back as one list.

use std::sync::Arc;

use bson::{doc, Document};
use pattern_runtime::{Error, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Post {
    n: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

/// Smaller overflow documents, for many single pushes: a push rewrites its overflow document,
/// so its cost grows with the capacity.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Star {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "star_posts", capacity = 100, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

fn post(n: i64) -> Post {
    Post {
        n,
        text: format!("post {n}"),
    }
}

async fn setup(name: &str, users: &[&str]) -> pattern_testkit::TestDb {
    let db = test_db(name).await;
    pattern_runtime::sync(&db)
        .models(&[User::SCHEMA, Star::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    for u in users {
        User::collection(&db)
            .raw()
            .insert_one(User {
                id: (*u).into(),
                name: u.to_uppercase(),
                posts: vec![],
                is_outlier: false,
                posts_count: 0,
            })
            .await
            .unwrap();
    }
    db
}

async fn user(db: &mongodb::Database, id: &str) -> User {
    User::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
}

async fn overflow_docs(db: &mongodb::Database, id: &str) -> Vec<Document> {
    futures_util::TryStreamExt::try_collect(
        db.collection::<Document>("user_posts")
            .find(doc! { "userId": id })
            .sort(doc! { "seq": 1 })
            .await
            .unwrap(),
    )
    .await
    .unwrap()
}

fn names(db: &pattern_testkit::TestDb) -> Vec<(String, String)> {
    db.take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect()
}

/// The seed: a normal user with 30 posts (one document, one collection read) and a celebrity
/// with 10 000 (flagged, 50 embedded, the rest in overflow documents shaped as the seed's).
#[tokio::test]
async fn the_seed_normal_user_and_celebrity() {
    let db = setup("outlier_seed", &["alice", "user123"]).await;
    let posts = User::collection(&db).outlier(User::FIELDS.posts);
    for n in 0..30 {
        posts.push("alice", post(n)).await.unwrap();
    }
    let alice = user(&db, "alice").await;
    assert_eq!(
        (alice.is_outlier, alice.posts_count, alice.posts.len()),
        (false, 30, 30)
    );
    assert!(overflow_docs(&db, "alice").await.is_empty());
    db.take_commands();
    let read = posts.items("alice").await.unwrap();
    assert_eq!(read, (0..30).map(post).collect::<Vec<_>>());
    // A reader of a normal user never queries the overflow collection.
    assert_eq!(names(&db), [("find".to_owned(), "users".to_owned())]);

    // The celebrity: 10 000 posts in batches of 500.
    for batch in 0..20 {
        let items = (batch * 500..(batch + 1) * 500).map(post).collect();
        posts.push_many("user123", items).await.unwrap();
    }
    let celebrity = user(&db, "user123").await;
    assert!(celebrity.is_outlier);
    assert_eq!(celebrity.posts_count, 10_000);
    assert_eq!(celebrity.posts, (0..50).map(post).collect::<Vec<_>>());
    let docs = overflow_docs(&db, "user123").await;
    assert_eq!(docs.len(), 10);
    for (i, d) in docs.iter().enumerate() {
        let seq = i as i64 + 1;
        assert_eq!(d.get_str("_id").unwrap(), format!("posts_user123_{seq}"));
        assert_eq!(d.get_str("userId").unwrap(), "user123");
        let expected = if seq < 10 { 1000 } else { 950 };
        assert_eq!(d.get_array("posts").unwrap().len(), expected, "{seq}");
    }
    let read = posts.items("user123").await.unwrap();
    assert_eq!(read.len(), 10_000);
    assert!(read.iter().enumerate().all(|(i, p)| p.n == i as i64));
    // The same list as a stream, one overflow document at a time.
    let streamed: Vec<Post> =
        futures_util::TryStreamExt::try_collect(posts.stream("user123").await.unwrap())
            .await
            .unwrap();
    assert!(streamed == read);
    assert_eq!(posts.count("user123").await.unwrap(), 10_000);
    assert!(posts.state("user123").await.unwrap().is_consistent());
}

/// 8 tasks x 125 pushes to one user crossing the limit (50 in the main document, then about ten
/// overflow documents of 100, each opened by whichever task fills the last): every item exactly
/// once, the count exact, the main document at its limit, no overflow document over its capacity.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_pushes_lose_nothing_and_respect_every_bound() {
    let db = Arc::new(setup("outlier_concurrent", &[]).await);
    Star::collection(&db)
        .raw()
        .insert_one(Star {
            id: "star".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    let tasks: Vec<_> = (0..8i64)
        .map(|t| {
            let db = db.clone();
            tokio::spawn(async move {
                let posts = Star::collection(&db).outlier(Star::FIELDS.posts);
                for i in 0..125 {
                    posts.push("star", post(t * 1000 + i)).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let star = Star::collection(&db)
        .raw()
        .find_one(doc! { "_id": "star" })
        .await
        .unwrap()
        .unwrap();
    eprintln!(
        "DEBUG main {:?}",
        star.posts.iter().map(|p| p.n).collect::<Vec<_>>()
    );
    {
        let docs: Vec<Document> = futures_util::TryStreamExt::try_collect(
            db.collection::<Document>("star_posts")
                .find(doc! { "starId": "star" })
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        for d in &docs {
            eprintln!(
                "DEBUG seq {:?} n {}",
                d.get("seq"),
                d.get_array("posts").unwrap().len()
            );
        }
    }
    assert_eq!(star.posts_count, 1000);
    assert_eq!(star.posts.len(), 50);
    assert!(star.is_outlier);
    let docs: Vec<Document> = futures_util::TryStreamExt::try_collect(
        db.collection::<Document>("star_posts")
            .find(doc! { "starId": "star" })
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(docs
        .iter()
        .all(|d| d.get_array("posts").unwrap().len() <= 100));
    let mut all: Vec<i64> = Star::collection(&db)
        .outlier(Star::FIELDS.posts)
        .items("star")
        .await
        .unwrap()
        .iter()
        .map(|p| p.n)
        .collect();
    assert_eq!(all.len(), 1000);
    // Each task's posts in its own order.
    for t in 0..8 {
        let mine: Vec<i64> = all.iter().copied().filter(|n| n / 1000 == t).collect();
        assert_eq!(mine, (t * 1000..t * 1000 + 125).collect::<Vec<_>>());
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 1000);
    assert!(Star::collection(&db)
        .outlier(Star::FIELDS.posts)
        .state("star")
        .await
        .unwrap()
        .is_consistent());
}

/// A page reads the main document, and for an outlier only the overflow documents it needs.
#[tokio::test]
async fn pages_touch_only_the_documents_they_need() {
    let db = setup("outlier_pages", &["u"]).await;
    let posts = User::collection(&db).outlier(User::FIELDS.posts);
    posts
        .push_many("u", (0..3_050).map(post).collect())
        .await
        .unwrap();
    // Within the embedded items: one read of the main document.
    db.take_commands();
    let page = posts.page("u", 10, 20).await.unwrap();
    assert_eq!(page, (10..30).map(post).collect::<Vec<_>>());
    assert_eq!(names(&db), [("find".to_owned(), "users".to_owned())]);
    // Across the embedded end and into the first overflow document: its sizes, then one
    // document (seq 1 holds items 50..1050).
    let page = posts.page("u", 40, 20).await.unwrap();
    assert_eq!(page, (40..60).map(post).collect::<Vec<_>>());
    assert_eq!(
        names(&db),
        [
            ("find".to_owned(), "users".to_owned()),
            ("aggregate".to_owned(), "user_posts".to_owned()),
            ("find".to_owned(), "user_posts".to_owned()),
        ]
    );
    // Across overflow documents 2 and 3 (items 1050..2050 and 2050..3050).
    let page = posts.page("u", 2_000, 100).await.unwrap();
    assert_eq!(page, (2_000..2_100).map(post).collect::<Vec<_>>());
    // Past the end: what there is.
    let page = posts.page("u", 3_000, 100).await.unwrap();
    assert_eq!(page, (3_000..3_050).map(post).collect::<Vec<_>>());
    assert!(posts.page("u", 5_000, 10).await.unwrap().is_empty());
}

/// Removing wherever the item lives keeps the count; `check` sees a hand-made drift and
/// `rebuild` repairs it; bad input writes nothing.
#[tokio::test]
async fn remove_check_rebuild_and_bad_input() {
    let db = setup("outlier_repair", &["u"]).await;
    let posts = User::collection(&db).outlier(User::FIELDS.posts);
    posts
        .push_many("u", (0..1_100).map(post).collect())
        .await
        .unwrap();
    assert_eq!(posts.remove("u", &post(3)).await.unwrap(), 1);
    assert_eq!(posts.remove("u", &post(700)).await.unwrap(), 1);
    assert_eq!(posts.remove("u", &post(99_999)).await.unwrap(), 0);
    assert_eq!(posts.count("u").await.unwrap(), 1_098);
    let read = posts.items("u").await.unwrap();
    assert_eq!(read.len(), 1_098);
    assert!(!read.contains(&post(3)) && !read.contains(&post(700)));
    // The removal made room in the first overflow document, which is closed: a new post
    // still comes last.
    posts.push("u", post(5_000)).await.unwrap();
    let read = posts.items("u").await.unwrap();
    assert_eq!(read.last(), Some(&post(5_000)));
    assert_eq!(posts.remove("u", &post(5_000)).await.unwrap(), 1);

    db.collection::<Document>("users")
        .update_one(
            doc! { "_id": "u" },
            doc! { "$set": { "postsCount": 7, "isOutlier": false } },
        )
        .await
        .unwrap();
    let state = posts.state("u").await.unwrap();
    assert!(!state.is_consistent(), "{state:?}");
    let before = posts.state("u").await.unwrap();
    assert_eq!(
        posts.rebuild("u").await.unwrap().repaired,
        u64::from(!before.is_consistent())
    );
    assert_eq!(before.stored_count, 7);
    let after = posts.state("u").await.unwrap();
    assert!(after.is_consistent(), "{after:?}");
    assert_eq!(after.stored_count, 1_098);
    assert!(after.stored_flag);

    // A missing parent, and an item too large for any document: typed errors, nothing written.
    let err = posts.push("ghost", post(1)).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let huge = Post {
        n: 0,
        text: "x".repeat(17 * 1024 * 1024),
    };
    let err = posts.push("u", huge).await.unwrap_err();
    assert!(matches!(err, Error::DocumentTooLarge { .. }), "{err}");
    assert_eq!(posts.count("u").await.unwrap(), 1_098);
    assert!(db
        .collection::<Document>("user_posts")
        .find_one(doc! { "userId": "ghost" })
        .await
        .unwrap()
        .is_none());
}

/// The overflow collection's `{userId, seq}` index is declared with the model and synced.
#[tokio::test]
async fn the_overflow_index_is_synced() {
    let db = setup("outlier_index", &[]).await;
    let indexes = pattern_runtime::sync::list_indexes(&db, "user_posts")
        .await
        .unwrap();
    let index = indexes
        .iter()
        .find(|d| d.get_str("name").ok() == Some("userId_1_seq_1"))
        .unwrap_or_else(|| panic!("{indexes:?}"));
    assert_eq!(index.get_bool("unique").ok(), Some(true), "{index}");
}

// ----- patterns together -----

/// An author whose document is at once an extended-reference source, an outlier array's
/// parent, a computed field's target and an approximate counter's home.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[extended_ref(AuthorRef(name))]
struct Author {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[outlier(limit = 3, overflow = "author_posts", capacity = 4, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
    #[computed(count = Book, by = author_id)]
    books: i64,
    #[approximate(batched, threshold = 10)]
    views: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    author_id: String,
    #[extended_ref(propagate)]
    author: AuthorRef,
}

#[tokio::test]
async fn an_outlier_parent_that_is_also_a_source_a_target_and_a_counter() {
    let db = test_db("outlier_together").await;
    pattern_runtime::sync(&db)
        .models(&[Author::SCHEMA, Book::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let ada = Author {
        id: "ada".into(),
        name: "Ada".into(),
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
        books: 0,
        views: 0,
    };
    Author::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    let books = Book::collection(&db);
    for id in 1..=3 {
        books
            .insert(&Book {
                id,
                author_id: "ada".into(),
                author: AuthorRef::from(&ada),
            })
            .await
            .unwrap();
    }
    let posts = Author::collection(&db).outlier(Author::FIELDS.posts);
    posts
        .push_many("ada", (0..10).map(post).collect())
        .await
        .unwrap();
    let views = Author::collection(&db).counter(Author::FIELDS.views);
    for _ in 0..25 {
        views.add("ada", 1).await.unwrap();
    }
    views.flush().await.unwrap();
    Author::collection(&db)
        .update("ada", doc! { "$set": { "name": "Ada L." } })
        .await
        .unwrap();

    let stored = Author::collection(&db)
        .raw()
        .find_one(doc! { "_id": "ada" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.name, "Ada L.");
    assert_eq!((stored.books, stored.views), (3, 25));
    assert_eq!((stored.posts.len(), stored.posts_count), (3, 10));
    assert!(stored.is_outlier);
    assert_eq!(
        posts.items("ada").await.unwrap(),
        (0..10).map(post).collect::<Vec<_>>()
    );
    assert!(posts.state("ada").await.unwrap().is_consistent());
    assert!(Author::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    let copies: Vec<Book> = futures_util::TryStreamExt::try_collect(
        Book::collection(&db).raw().find(doc! {}).await.unwrap(),
    )
    .await
    .unwrap();
    assert!(copies.iter().all(|b| b.author.name == "Ada L."));
}

// ----- a push sent twice -----

/// A blogger whose post count is copied into each mention of them: a push runs in a
/// transaction with the copies.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[extended_ref(BloggerRef(name, posts_count))]
struct Blogger {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[outlier(limit = 3, overflow = "blogger_posts", capacity = 4, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Mention {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    blogger: BloggerRef,
}

/// The receipts the main document `id` keeps: their tokens' count.
async fn receipts(db: &mongodb::Database, collection: &str, field: &str, id: &str) -> usize {
    let stored = db
        .collection::<Document>(collection)
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap();
    stored.get_array(field).map_or(0, Vec::len)
}

/// A commit that went through, answered as a transient failure (what a server that forgets its
/// commit records across a restart answers): the push's transaction runs its body again, which
/// finds the push's receipt and writes nothing more. Below the limit and past it.
#[tokio::test]
async fn a_push_whose_commit_answer_was_lost_is_applied_once() {
    let db = test_db("outlier_lost_commit").await;
    pattern_runtime::sync(&db)
        .models(&[Blogger::SCHEMA, Mention::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let ada = Blogger {
        id: "ada".into(),
        name: "Ada".into(),
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
    };
    Blogger::collection(&db).insert(&ada).await.unwrap();
    Mention::collection(&db)
        .insert(&Mention {
            id: 1,
            blogger: BloggerRef::from(&ada),
        })
        .await
        .unwrap();
    let lost_commit = doc! {
        "writeConcernError": { "code": 91, "errmsg": "injected: the commit's answer was lost" },
        "errorLabels": ["TransientTransactionError"],
    };
    let posts = Blogger::collection(&db).outlier(Blogger::FIELDS.posts);

    db.fail_command(&["commitTransaction"], 1, lost_commit.clone())
        .await;
    posts.push("ada", post(0)).await.unwrap();
    assert_eq!(posts.count("ada").await.unwrap(), 1);
    // Past the limit: two embedded, three in the overflow documents, each once.
    db.fail_command(&["commitTransaction"], 1, lost_commit.clone())
        .await;
    posts
        .push_many("ada", (1..6).map(post).collect())
        .await
        .unwrap();
    assert_eq!(posts.count("ada").await.unwrap(), 6);
    assert_eq!(
        posts.items("ada").await.unwrap(),
        (0..6).map(post).collect::<Vec<_>>()
    );
    assert!(posts.state("ada").await.unwrap().is_consistent());
    let mention = Mention::collection(&db).get(1).await.unwrap().unwrap();
    assert_eq!(mention.blogger.posts_count, 6);
    assert!(posts.check().await.unwrap().is_clean());

    // The main document keeps the last four receipts, no more.
    assert_eq!(receipts(&db, "bloggers", "__postsPushes", "ada").await, 2);
    for n in 6..12 {
        posts.push("ada", post(n)).await.unwrap();
    }
    assert_eq!(receipts(&db, "bloggers", "__postsPushes", "ada").await, 4);
    assert_eq!(posts.count("ada").await.unwrap(), 12);
    // A push without a transaction (nothing derives from `User`'s posts) keeps one too.
    let db2 = setup("outlier_receipts", &["ann"]).await;
    let user_posts = User::collection(&db2).outlier(User::FIELDS.posts);
    user_posts.push("ann", post(0)).await.unwrap();
    assert_eq!(receipts(&db2, "users", "__postsPushes", "ann").await, 1);
    // Whatever another writer leaves in their place reads as no receipts.
    db2.collection::<Document>("users")
        .update_one(
            doc! { "_id": "ann" },
            doc! { "$set": { "__postsPushes": "junk" } },
        )
        .bypass_document_validation(true)
        .await
        .unwrap();
    user_posts.push("ann", post(1)).await.unwrap();
    assert_eq!(receipts(&db2, "users", "__postsPushes", "ann").await, 1);
    assert_eq!(user_posts.count("ann").await.unwrap(), 2);
    // A replace through the model handle drops them; the next push starts again.
    let ann: User = User::collection(&db2).get("ann").await.unwrap().unwrap();
    User::collection(&db2).replace(&ann).await.unwrap();
    assert_eq!(receipts(&db2, "users", "__postsPushes", "ann").await, 0);
    user_posts.push("ann", post(2)).await.unwrap();
    assert_eq!(
        user_posts.items("ann").await.unwrap(),
        (0..3).map(post).collect::<Vec<_>>()
    );
}

/// A handle bound to the caller's transaction reads in it: every read sees the transaction's
/// own pushes (past the limit, so the overflow documents are read too); no handle outside it
/// sees them before the commit.
#[tokio::test]
async fn a_bound_outlier_reads_its_transactions_writes() {
    let db = setup("outlier_in_transaction", &["u"]).await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = User::collection(&db)
        .in_transaction(&tx)
        .outlier(User::FIELDS.posts);
    bound
        .push_many("u", (0..120).map(post).collect())
        .await
        .unwrap();
    let all: Vec<Post> = (0..120).map(post).collect();

    // Every read of the bound handle sees the transaction's own pushes...
    assert_eq!(bound.items("u").await.unwrap(), all);
    let streamed: Vec<Post> =
        futures_util::TryStreamExt::try_collect(bound.stream("u").await.unwrap())
            .await
            .unwrap();
    assert_eq!(streamed, all);
    // Across the embedded end, into the overflow document.
    assert_eq!(
        bound.page("u", 40, 20).await.unwrap(),
        (40..60).map(post).collect::<Vec<_>>()
    );
    assert_eq!(bound.count("u").await.unwrap(), 120);
    let state = bound.state("u").await.unwrap();
    assert!(
        state.is_consistent() && state.stored_count == 120,
        "{state:?}"
    );

    // ... which no handle outside it sees before the commit.
    let outside = User::collection(&db).outlier(User::FIELDS.posts);
    assert_eq!(outside.count("u").await.unwrap(), 0);
    assert!(outside.items("u").await.unwrap().is_empty());
    tx.commit().await.unwrap();
    assert_eq!(outside.count("u").await.unwrap(), 120);
    assert_eq!(outside.items("u").await.unwrap(), all);
    // Once committed, the bound handle sends nothing.
    let err = bound.items("u").await.unwrap_err();
    assert!(matches!(err, Error::TransactionEnded { .. }), "{err}");
}

/// A write-concern error on a push's counting write (outside a transaction): the server applied
/// the write, so the push reads its receipt and writes the items past the main document too;
/// the count and the items agree, and the caller gets the write-concern error.
#[tokio::test]
async fn a_write_concern_error_on_the_count_still_writes_every_item() {
    let db = setup("outlier_write_concern", &["wc"]).await;
    let posts = User::collection(&db).outlier(User::FIELDS.posts);
    posts
        .push_many("wc", (0..48).map(post).collect())
        .await
        .unwrap();
    db.fail_command(
        &["findAndModify"],
        1,
        doc! { "writeConcernError": { "code": 64, "errmsg": "injected: waiting for replication timed out" } },
    )
    .await;
    let err = posts
        .push_many("wc", (48..53).map(post).collect())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(64), "{err:?}");
    let state = posts.state("wc").await.unwrap();
    assert!(
        state.is_consistent() && state.stored_count == 53,
        "{state:?}"
    );
    assert_eq!(
        posts.items("wc").await.unwrap(),
        (0..53).map(post).collect::<Vec<_>>()
    );
}

//! The outlier pattern (`pattern_runtime::outlier`): one push below the limit and one past it,
//! each vs the same writes by hand with the driver, and an outlier's 10 000 items read back vs
//! the same posts stored one document per post.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- outlier` (embedded server, or
//! `MONGODB_URI`). Three groups:
//! - `outlier_push_below`: one post pushed to a member under the limit (`limit = 50`).
//!   `toolkit` is `Member::collection(&db).outlier(Member::FIELDS.posts).push`: one `findAndModify` of the member whose
//!   update is a pipeline (it appends the post when the count, the flag and the byte budget
//!   leave room, `$bsonSize` of the document deciding the last, moves the count either way,
//!   and keeps the push's receipt; see `pattern_runtime::outlier`). `by_hand` is the plain write a user would send
//!   without a byte budget: one conditional `update` of the member, filter `{_id, isOutlier:
//!   {$ne: true}, postsCount: {$lte: 49}, "posts.49": {$exists: false}}`, update `{$push:
//!   {posts: {$each: [post]}}, $inc: {postsCount: 1}}`. Each side starts a fresh member every
//!   49 pushes (the insert is not timed), so every timed push finds room: 0 to 48 posts
//!   already there.
//! - `outlier_push_above`: one post pushed to a member already past the limit, its overflow
//!   documents holding 100 posts each (`capacity = 100`). `toolkit` is `push`: the same
//!   `findAndModify` (which embeds nothing for an outlier and moves the count), then one
//!   conditional `$push` into the open overflow document, whose filter also checks its byte
//!   count (`bytes`, moved by the same `$inc`). `by_hand`: a `findAndModify` of the member
//!   (`$inc` the count, `$set` the flag) and one conditional `$push` into the open overflow
//!   document (`{memberId, full: {$ne: true}, "posts.99": {$exists: false}}`), no byte budget.
//!   Both send the same two commands. Once every 100 pushes the open overflow document is
//!   full and the next one is opened: the toolkit reads the last document, closes it
//!   (`update`, `full: true`) and inserts the next; by hand, `find` of the last `seq`, the
//!   same close and insert. These rollovers are timed on both sides (one push in 100). Each
//!   side starts a fresh member every 1 000 pushes (set up by the toolkit's `push_many` of 51
//!   posts, not timed), so a push meets at most 11 overflow documents.
//! - `outlier_read_10000`: a user's 10 000 posts read back in push order, as `Vec<Post>`.
//!   `outlier_items` is `User::collection(&db).outlier(User::FIELDS.posts).items` on an outlier with `limit = 50` and
//!   `capacity = 1000`, as in the seed: the user document (50 posts), then its 10 overflow
//!   documents (`find` by `userId`, sorted by `seq`); `one_document_per_post` is the same posts
//!   stored as `{userId, n, text}` documents, `find({userId}).sort({n: 1})` with the projection
//!   `{_id: 0, n: 1, text: 1}` over an index on `{userId: 1, n: 1}` (inserted in scattered
//!   order). The driver's first batch holds 101 documents, so that read takes a `find` and a
//!   `getMore`; `one_document_per_post_one_batch` asks for all of them in the first batch
//!   (`batchSize` 10 001), one round trip like `items`' read of the overflow documents. 10
//!   samples.
//!
//! Before timing, the push sides are checked to send the commands above (`findAndModify`
//! against `update` below the limit; the same two commands above it), and to leave the same
//! documents after 250 pushes past the limit (two rollovers: 100, 100 and 51 posts, read back
//! by `items`, `check` consistent); the reads to send the commands above and return the same
//! 10 000 posts in push order. The checks and the read's 20 000 posts are only written when a
//! benchmark needing them runs.
//!
//! Runs of the push groups on the embedded server, 2 cores, nothing else running, with the
//! pushes' receipts (`652e51f`; two runs):
//!
//! | group | side | time | ratio |
//! | --- | --- | --- | --- |
//! | `outlier_push_below` | `toolkit` | 2.10 ms / 1.71 ms | 1.87 / 1.58 (toolkit / by hand) |
//! | | `by_hand` | 1.13 ms / 1.08 ms | |
//! | `outlier_push_above` | `toolkit` | 4.73 ms / 4.03 ms | 1.66 / 1.45 (toolkit / by hand) |
//! | | `by_hand` | 2.85 ms / 2.78 ms | |
//!
//! The code before the receipts (`a2fb453`), run in between: `outlier_push_below` 2.11 ms
//! against 1.06 ms (1.98), `outlier_push_above` 3.67 ms against 5.26 ms (by hand slower than
//! in any other run: noise). The receipts' part of the pipeline (a `$map` over at most four
//! receipts, their bytes in the budget) is not measurable against that noise; the ratios are
//! higher than at `cdca880` (1.23 and 1.32, one run) on both codes.
//!
//! Criterion runs one side after the other, and on this machine two runs of the same side
//! differ by up to 30%. So where the cost lies was measured interleaved instead: one push of
//! each variant in turn, to members of its own, 1 000 pushes per variant below the limit,
//! three repetitions (a scratch program at `cdca880`, not kept). Ratios to the `by_hand`
//! update of the same repetition:
//!
//! | variant | ratio |
//! | --- | --- |
//! | `by_hand` again (the noise) | 0.98 / 1.02 / 0.99 |
//! | the toolkit's `push` | 1.36 / 1.40 / 1.39 |
//! | its `findAndModify` and pipeline, sent by hand | 1.27 / 1.29 / 1.29 |
//! | a one-stage pipeline with the same conditions, as `findAndModify` | 1.28 / 1.28 / 1.28 |
//! | the same, as `update` (its reply cannot say whether the post was embedded) | 1.08 / 1.11 / 1.12 |
//! | `by_hand`'s filter and update as `findAndModify` | 1.05 / 1.06 / 1.06 |
//! | `by_hand`'s `update`, plus a byte count field compared and moved by the same `$inc` | 1.02 / 1.03 / 1.02, then 1.06 / 1.05 / 1.07 |
//! | `by_hand`'s `update`, plus `$expr: {$lte: [{$bsonSize: "$$ROOT"}, ..]}` | 1.20 / 1.40 / 1.59 |
//!
//! So what costs is the pipeline (about 0.23 of the 0.38), then `findAndModify` against
//! `update` (0.05), then the toolkit's own work around the command (about 0.1). A `$expr` in
//! the filter is no way out: the embedded server answers it by scanning the collection, so
//! its cost grows with the members (the three repetitions above). Only the plain conditional
//! `update` stays within 1.03x, and only with the byte budget kept as a running count in the
//! document. But its reply says only that nothing matched: a push past the limit would then
//! take three round trips (the miss, the count, the overflow write), where by hand it takes
//! two. On this server the two goals (1.03x, and one and two round trips) exclude each other;
//! the toolkit keeps the round trips minimal.
//!
//! The reads, from an earlier run (their code has not changed): `outlier_items` 40.8 ms,
//! `one_document_per_post` 87.7 ms (outlier / one document per post 0.47),
//! `one_document_per_post_one_batch` 87.9 ms (0.46). Reading an outlier's 10 000 posts from 11
//! documents takes half the time of reading 10 000 documents, and the `getMore` is not what
//! costs (one batch takes as long): the server's work per document is.
//!
//! This bench found that a push past the limit grew slower with the outlier's overflow
//! documents: the open document's filter had no `seq`, so the server examined every overflow
//! document of the member through the `{memberId, seq}` index (`explain` on a member with 505
//! overflow documents: 505 keys and 505 documents examined, one returned). The toolkit's
//! filter starts at the `seq` the count points to, minus one (`seq: {$gte: ..}`), so it reads
//! one or two documents however many there are; `by_hand` writes the filter without `seq`
//! (each side starts a fresh member every 1 000 pushes, at most 11 overflow documents, where
//! the two cost alike).

use bson::{doc, Bson, Document};
use criterion::{criterion_group, Criterion};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use mongodb::options::ReturnDocument;
use mongodb::{Database, IndexModel};
use pattern_runtime::Model;
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Post {
    n: i64,
    text: String,
}

/// The seed's user: 50 posts embedded, 1 000 per overflow document. Read by `items`.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

/// Pushed to: overflow documents of 100 posts, so a push rewrites a small document.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "member_posts", capacity = 100, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

const LIMIT: i64 = 50;
const CAPACITY: i64 = 100;
/// Pushes to one member below the limit before the next member: every one finds room.
const PUSHES_BELOW: u64 = LIMIT as u64 - 1;
/// Pushes to one outlier member before the next: at most 11 overflow documents each.
const PUSHES_ABOVE: u64 = 1_000;
/// The outlier read back.
const POSTS: i64 = 10_000;

fn post(n: i64) -> Post {
    Post {
        n,
        text: format!("post {n}: 今天的照片，谢谢大家的支持"),
    }
}

/// The commands sent since the last call: (name, collection).
fn sent(db: &TestDb) -> Vec<(String, String)> {
    db.take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect()
}

fn cmd(name: &str, target: &str) -> (String, String) {
    (name.to_owned(), target.to_owned())
}

/// Distinct member ids across the sides and samples.
static NEXT_MEMBER: AtomicU64 = AtomicU64::new(0);

/// A new member with no posts (`below`) or past the limit: 51 posts pushed by the toolkit, 50
/// embedded and one in overflow document 1 (the state any outlier's pushes start from).
async fn fresh_member(db: &Database, below: bool) -> String {
    let id = format!("m{}", NEXT_MEMBER.fetch_add(1, Ordering::Relaxed));
    Member::collection(db)
        .raw()
        .insert_one(Member {
            id: id.clone(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    if !below {
        Member::collection(db)
            .outlier(Member::FIELDS.posts)
            .push_many(id.as_str(), (0..=LIMIT).map(post).collect())
            .await
            .unwrap();
    }
    id
}

/// The fast path by hand: one conditional update of the member.
async fn by_hand_below(db: &Database, id: &str, item: &Post) {
    let room = format!("posts.{}", LIMIT - 1);
    let item = bson::serialize_to_document(item).unwrap();
    let result = db
        .collection::<Document>("members")
        .update_one(
            doc! {
                "_id": id,
                "isOutlier": { "$ne": true },
                "postsCount": { "$lte": LIMIT - 1 },
                room: { "$exists": false },
            },
            doc! { "$push": { "posts": { "$each": [item] } }, "$inc": { "postsCount": 1i64 } },
        )
        .await
        .unwrap();
    assert_eq!(result.matched_count, 1, "{id} had no room");
}

/// A push past the limit by hand: count and flag the member, then `$push` into the open
/// overflow document, or when it is full close it and insert the next.
async fn by_hand_above(db: &Database, id: &str, item: &Post) {
    let members = db.collection::<Document>("members");
    let overflow = db.collection::<Document>("member_posts");
    let item = bson::serialize_to_document(item).unwrap();
    let before = members
        .find_one_and_update(
            doc! { "_id": id },
            doc! { "$inc": { "postsCount": 1i64 }, "$set": { "isOutlier": true } },
        )
        .projection(doc! { "isOutlier": 1, "postsCount": 1 })
        .return_document(ReturnDocument::Before)
        .await
        .unwrap()
        .unwrap();
    // Only the case measured: the member is already an outlier, the post goes to overflow.
    assert!(before.get_bool("isOutlier").unwrap(), "{id} is no outlier");
    let room = format!("posts.{}", CAPACITY - 1);
    let pushed = overflow
        .update_one(
            doc! { "memberId": id, "full": { "$ne": true }, room: { "$exists": false } },
            doc! { "$push": { "posts": { "$each": [item.clone()] } } },
        )
        .await
        .unwrap();
    if pushed.matched_count == 1 {
        return;
    }
    // The open document is full: close it and open the next.
    let last = overflow
        .find_one(doc! { "memberId": id })
        .sort(doc! { "seq": -1 })
        .projection(doc! { "seq": 1 })
        .await
        .unwrap()
        .unwrap();
    let seq = match last.get("seq") {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        other => panic!("seq {other:?}"),
    };
    overflow
        .update_one(
            doc! { "memberId": id, "seq": seq },
            doc! { "$set": { "full": true } },
        )
        .await
        .unwrap();
    let next = seq + 1;
    overflow
        .insert_one(doc! {
            "_id": format!("posts_{id}_{next}"),
            "memberId": id,
            "seq": next,
            "posts": [item],
        })
        .await
        .unwrap();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Toolkit,
    ByHand,
}

async fn push(db: &Database, side: Side, below: bool, id: &str, item: Post) {
    match side {
        Side::Toolkit => Member::collection(db)
            .outlier(Member::FIELDS.posts)
            .push(id, item)
            .await
            .unwrap(),
        Side::ByHand if below => by_hand_below(db, id, &item).await,
        Side::ByHand => by_hand_above(db, id, &item).await,
    }
}

/// `iters` pushes by `side`, a fresh member every `PUSHES_BELOW` or `PUSHES_ABOVE` of them: the
/// time of the pushes only.
async fn timed_pushes(db: &Database, side: Side, below: bool, iters: u64) -> Duration {
    let per_member = if below { PUSHES_BELOW } else { PUSHES_ABOVE };
    let mut total = Duration::ZERO;
    let mut id = String::new();
    for i in 0..iters {
        let k = i % per_member;
        if k == 0 {
            id = fresh_member(db, below).await;
        }
        let item = post(1_000 + i64::try_from(k).unwrap_or(0));
        let start = Instant::now();
        push(db, side, below, &id, item).await;
        total += start.elapsed();
    }
    total
}

/// The commands of one push by `side` to a fresh member (below), or the next push to an outlier
/// member whose open overflow document has room (above).
fn commands_of(rt: &Runtime, db: &TestDb, side: Side, below: bool) -> Vec<(String, String)> {
    let id = rt.block_on(fresh_member(db, below));
    db.take_commands();
    rt.block_on(push(db, side, below, &id, post(1_000)));
    sent(db)
}

/// Both push sides send the same commands in the common case, and write the same documents.
fn check_pushes(rt: &Runtime, db: &TestDb) {
    let toolkit = commands_of(rt, db, Side::Toolkit, true);
    assert_eq!(
        toolkit,
        [cmd("findAndModify", "members")],
        "below: toolkit sent"
    );
    let by_hand = commands_of(rt, db, Side::ByHand, true);
    assert_eq!(by_hand, [cmd("update", "members")], "below: by_hand sent");

    let toolkit = commands_of(rt, db, Side::Toolkit, false);
    let two = commands_of(rt, db, Side::ByHand, false);
    println!("a push past the limit sends: toolkit {toolkit:?}, by_hand {two:?}");
    assert_eq!(
        toolkit,
        [
            cmd("findAndModify", "members"),
            cmd("update", "member_posts"),
        ],
        "above: toolkit sent"
    );
    assert_eq!(two, toolkit, "above: by_hand sends otherwise");

    // 250 pushes past the limit on each side, two of them opening the next overflow document:
    // the same documents, and the toolkit reads back what by hand wrote.
    for side in [Side::Toolkit, Side::ByHand] {
        let id = rt.block_on(fresh_member(db, false));
        rt.block_on(async {
            for n in 100..350 {
                push(db, side, false, &id, post(n)).await;
            }
        });
        let posts = Member::collection(db).outlier(Member::FIELDS.posts);
        let read = rt.block_on(posts.items(id.as_str())).unwrap();
        let expected: Vec<Post> = (0..=LIMIT).chain(100..350).map(post).collect();
        assert!(read == expected, "{side:?}: the posts read back otherwise");
        let state = rt.block_on(posts.state(id.as_str())).unwrap();
        assert!(state.is_consistent(), "{side:?}: {state:?}");
        assert_eq!(state.overflow_documents, 3, "{side:?}: {state:?}");
        let sizes: Vec<usize> = rt.block_on(async {
            db.collection::<Document>("member_posts")
                .find(doc! { "memberId": id.as_str() })
                .sort(doc! { "seq": 1 })
                .await
                .unwrap()
                .map_ok(|d| d.get_array("posts").unwrap().len())
                .try_collect()
                .await
                .unwrap()
        });
        assert_eq!(sizes, [100, 100, 51], "{side:?}");
    }
    db.take_commands();
}

/// The outlier `user123` with `POSTS` posts (pushed in batches of 500, as in the seed), and the
/// same posts one document each in `posts`, indexed on `{userId: 1, n: 1}`.
async fn setup_read(db: &Database) {
    User::collection(db)
        .raw()
        .insert_one(User {
            id: "user123".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    let posts = User::collection(db).outlier(User::FIELDS.posts);
    for batch in 0..POSTS / 500 {
        let items = (batch * 500..(batch + 1) * 500).map(post).collect();
        posts.push_many("user123", items).await.unwrap();
    }
    let one_each = db.collection::<Document>("posts");
    one_each
        .create_index(
            IndexModel::builder()
                .keys(doc! { "userId": 1, "n": 1 })
                .build(),
        )
        .await
        .unwrap();
    // Inserted in a scattered order, as posts arriving over time among other users' would be.
    let docs: Vec<Document> = (0..POSTS)
        .map(|k| k * 7_919 % POSTS)
        .map(|n| {
            let p = post(n);
            doc! { "userId": "user123", "n": p.n, "text": p.text }
        })
        .collect();
    one_each.insert_many(docs).await.unwrap();
}

async fn outlier_items(db: &Database) -> Vec<Post> {
    User::collection(db)
        .outlier(User::FIELDS.posts)
        .items("user123")
        .await
        .unwrap()
}

async fn one_document_per_post(db: &Database) -> Vec<Post> {
    db.collection::<Post>("posts")
        .find(doc! { "userId": "user123" })
        .sort(doc! { "n": 1 })
        .projection(doc! { "_id": 0, "n": 1, "text": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// [`one_document_per_post`] asking for every post in the first batch: one round trip, as
/// `items` takes for its overflow documents.
async fn one_document_per_post_one_batch(db: &Database) -> Vec<Post> {
    db.collection::<Post>("posts")
        .find(doc! { "userId": "user123" })
        .sort(doc! { "n": 1 })
        .projection(doc! { "_id": 0, "n": 1, "text": 1 })
        .batch_size(u32::try_from(POSTS + 1).unwrap_or(u32::MAX))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// The reads return the same posts, in push order.
fn check_reads(rt: &Runtime, db: &TestDb) {
    db.take_commands();
    let by_outlier = rt.block_on(outlier_items(db));
    let outlier_sent = sent(db);
    let by_document = rt.block_on(one_document_per_post(db));
    let document_sent = sent(db);
    let by_one_batch = rt.block_on(one_document_per_post_one_batch(db));
    let one_batch_sent = sent(db);
    println!(
        "reading {POSTS} posts sends: outlier_items {outlier_sent:?}, one_document_per_post \
         {document_sent:?}, one_document_per_post_one_batch {one_batch_sent:?}"
    );
    assert_eq!(
        outlier_sent,
        [cmd("find", "users"), cmd("find", "user_posts")]
    );
    assert_eq!(document_sent, [cmd("find", "posts"), cmd("getMore", "")]);
    assert_eq!(one_batch_sent, [cmd("find", "posts")]);
    let expected: Vec<Post> = (0..POSTS).map(post).collect();
    assert!(by_outlier == expected, "outlier_items read otherwise");
    assert!(
        by_document == expected,
        "one_document_per_post read otherwise"
    );
    assert!(
        by_one_batch == expected,
        "one_document_per_post_one_batch read otherwise"
    );
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(async {
        let db = pattern_testkit::test_db("bench_outlier").await;
        pattern_runtime::sync(&db)
            .models(&[User::SCHEMA, Member::SCHEMA])
            .options(&pattern_runtime::SyncOptions::new())
            .await
            .unwrap();
        db
    });
    let db = test_db.db();
    // Checked, and the read's 20 000 posts written, only when a benchmark needing them runs: a
    // filtered run (`-- outlier_push_below/toolkit`) starts on a quiet server.
    let pushes_checked = Once::new();
    let reads_ready = Once::new();

    let mut g = c.benchmark_group("outlier_push_below");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    for (name, side) in [("toolkit", Side::Toolkit), ("by_hand", Side::ByHand)] {
        g.bench_function(name, |b| {
            pushes_checked.call_once(|| check_pushes(&rt, &test_db));
            b.to_async(&rt)
                .iter_custom(|iters| timed_pushes(db, side, true, iters));
        });
    }
    g.finish();

    let mut g = c.benchmark_group("outlier_push_above");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    for (name, side) in [("toolkit", Side::Toolkit), ("by_hand", Side::ByHand)] {
        g.bench_function(name, |b| {
            pushes_checked.call_once(|| check_pushes(&rt, &test_db));
            b.to_async(&rt)
                .iter_custom(|iters| timed_pushes(db, side, false, iters));
        });
    }
    g.finish();

    let mut g = c.benchmark_group("outlier_read_10000");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(8));
    type Read = for<'a> fn(&'a Database) -> BoxFuture<'a, Vec<Post>>;
    let reads: [(&str, Read); 3] = [
        ("outlier_items", |db| Box::pin(outlier_items(db))),
        ("one_document_per_post", |db| {
            Box::pin(one_document_per_post(db))
        }),
        ("one_document_per_post_one_batch", |db| {
            Box::pin(one_document_per_post_one_batch(db))
        }),
    ];
    for (name, read) in reads {
        g.bench_function(name, |b| {
            reads_ready.call_once(|| {
                rt.block_on(setup_read(db));
                check_reads(&rt, &test_db);
            });
            b.to_async(&rt).iter(|| read(db));
        });
    }
    g.finish();
}

criterion_group!(outlier, benches);

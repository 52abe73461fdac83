//! The approximation pattern's counters against the server (seed 000, 近似值模式): batched in
//! memory, sampled with probability p, sharded over several documents; concurrent writers, with
//! the writes counted; `BatchedCounter::flush_every` (its `Flusher`'s last flush and the errors it
//! keeps), and sharded totals at and past the 64-bit range.

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use std::{sync::Arc, time::Duration};

use crate::support::{is_invalid_value, synced};
use pattern_runtime::{
    approximation::{Approximation, BatchedCounter, Random, SampledCounter, ShardedCounter},
    Error, Model,
};
use pattern_testkit::{docs, test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

/// The counters declared on a model's fields.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(batched, threshold = 50)]
    page_views: i64,
    #[approximate(sampled, p = 0.3)]
    likes: i64,
    #[approximate(sharded, shards = 8)]
    hits: i64,
}

async fn field(db: &mongodb::Database, coll: &str, id: &str, field: &str) -> Option<Bson> {
    db.collection::<Document>(coll)
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .and_then(|d| d.get(field).cloned())
}

fn updates(db: &pattern_testkit::TestDb) -> usize {
    db.take_commands()
        .iter()
        .filter(|c| c.name == "update")
        .count()
}

/// 8 tasks x 10 007 events on one page: exactly 80 056 once flushed (the last 56 only by the
/// flush), in at most 80 056 / threshold + 8 writes (counted from the commands the client sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batched_counts_are_exact_after_flush_with_one_write_per_threshold() {
    let db = test_db_unvalidated("approx_batched").await;
    let pages = db.collection::<Document>("pages");
    let counter = std::sync::Arc::new(BatchedCounter::new(pages, "views", 1000).unwrap());
    db.take_commands();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                for _ in 0..10_007 {
                    counter.add("home", 1).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let before_flush = field(&db, "pages", "home", "views").await;
    assert_eq!(before_flush, Some(Bson::Int64(80_000)));
    assert_eq!(counter.pending(), 56);
    let flushed = counter.flush().await.unwrap();
    assert_eq!(counter.pending(), 0);
    assert_eq!(
        field(&db, "pages", "home", "views").await,
        Some(Bson::Int64(80_056)),
        "before the flush: {before_flush:?}, flush wrote {flushed}"
    );
    let sent = updates(&db);
    assert!(sent <= 80_056 / 1000 + 8, "{sent} writes");
    assert_eq!(flushed, 1);
    assert_eq!(sent as u64, counter.writes());
    // Nothing pending: a flush writes nothing.
    assert_eq!(counter.flush().await.unwrap(), 0);
}

/// One id given as an `i32`, an `i64` and an integral `f64`: the server takes them as one
/// `_id`, and so does the counter (one pending count, one write).
#[tokio::test]
async fn a_batched_counter_counts_one_id_whatever_its_number_type() {
    let db = test_db_unvalidated("approx_batched_widths").await;
    let counter = BatchedCounter::new(db.collection("pages"), "views", 10).unwrap();
    counter.add(7_i32, 1).await.unwrap();
    counter.add(7_i64, 2).await.unwrap();
    counter.add(7.0_f64, 3).await.unwrap();
    assert_eq!(
        counter.flush().await.unwrap(),
        1,
        "one write for one document"
    );
    let stored: Vec<Document> = db
        .collection::<Document>("pages")
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].get("views"), Some(&Bson::Int64(6)), "{stored:?}");
}

/// The flusher is a `Periodic` like every background task: unread outcomes of its runs are kept
/// up to 64, the rest counted; stopping runs a last flush, whose outcome is always kept, last;
/// dropping it still flushes, in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flusher_keeps_64_outcomes_and_flushes_once_more_when_stopped() {
    let db = test_db_unvalidated("approx_flusher").await;
    let counter = Arc::new(BatchedCounter::new(db.collection("pages"), "views", 1_000).unwrap());
    let flusher = BatchedCounter::flush_every(counter.clone(), Duration::from_millis(1));
    // Enough time for many runs on any machine; the assertions hold whatever their number.
    tokio::time::sleep(Duration::from_millis(400)).await;
    counter.add("home", 3).await.unwrap();
    let stopped = flusher.stop().await;
    // 64 periodic outcomes at most, and the last run's.
    assert!(stopped.unread.len() <= 65, "{}", stopped.unread.len());
    assert_eq!(stopped.unread.len() as u64 + stopped.dropped, stopped.runs);
    // The last flush wrote the pending 3 at the latest; no count is left in memory.
    assert_eq!(counter.pending(), 0);
    assert_eq!(
        field(&db, "pages", "home", "views").await,
        Some(Bson::Int64(3))
    );
    // The last flush's outcome is never dropped: it comes last, and wrote the 3 unless a
    // periodic flush did (both count writes, one per document).
    let outcomes = stopped.into_result().unwrap();
    assert!(matches!(outcomes.last(), Some(0 | 1)), "{outcomes:?}");

    // Dropped, not stopped: the last flush still runs, in the background.
    // The first run is read before the add, so the next flush would be an hour away: only the
    // last one can write the 2.
    let mut flusher = BatchedCounter::flush_every(counter.clone(), Duration::from_secs(3600));
    assert_eq!(flusher.next().await.unwrap().unwrap(), 0);
    counter.add("home", 2).await.unwrap();
    let writes = counter.writes();
    drop(flusher);
    // The last flush runs in the background: `pending` is 0 once it has taken the counts, and
    // `writes` moves once its `$inc` is acknowledged (a slow server takes a while).
    for _ in 0..500 {
        if counter.writes() > writes {
            break;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(counter.pending(), 0);
    assert_eq!(counter.writes(), writes + 1);
    assert_eq!(
        field(&db, "pages", "home", "views").await,
        Some(Bson::Int64(5))
    );
}

#[tokio::test]
async fn a_failed_batched_write_keeps_its_count_for_the_next_flush() {
    let db = test_db_unvalidated("approx_batched_fail").await;
    let counter = BatchedCounter::new(db.collection("pages"), "views", 10).unwrap();
    for _ in 0..5 {
        counter.add("a", 1).await.unwrap();
    }
    // Any refusal (code 2, BadValue, is the server's refusal of an `$inc` past the 64-bit
    // range, `Error::InvalidValue`: another code here).
    db.fail_command(
        &["update"],
        1,
        doc! { "errorCode": 8, "errmsg": "injected" },
    )
    .await;
    let e = counter.flush().await.unwrap_err();
    assert_eq!(e.code(), Some(8), "{e:?}");
    assert_eq!(counter.pending(), 5);
    assert_eq!(field(&db, "pages", "a", "views").await, None);
    assert_eq!(counter.flush().await.unwrap(), 1);
    assert_eq!(
        field(&db, "pages", "a", "views").await,
        Some(Bson::Int64(5))
    );
}

/// 100 000 events at p = 0.01 with a fixed seed: about 1 000 writes, and the stored estimate
/// within four standard errors (12.6%) of the truth.
#[tokio::test]
async fn sampled_counts_estimate_within_the_documented_error() {
    let db = test_db_unvalidated("approx_sampled").await;
    let counter = SampledCounter::new(db.collection("pages"), "likes", 0.01)
        .unwrap()
        .with_random(Random::seeded(42));
    db.take_commands();
    let mut wrote = 0u64;
    for _ in 0..100_000 {
        if counter.add("home").await.unwrap() {
            wrote += 1;
        }
    }
    assert_eq!(updates(&db) as u64, wrote);
    assert_eq!(counter.writes(), wrote);
    assert!((800..=1200).contains(&wrote), "{wrote} writes");
    // 1/p is 100: every write adds exactly 100, and the field stays an integer.
    let Some(Bson::Int64(estimate)) = field(&db, "pages", "home", "likes").await else {
        panic!("no integer estimate stored");
    };
    assert_eq!(estimate, wrote as i64 * 100);
    let estimate = estimate as f64;
    let bound = 4.0 * counter.relative_error(100_000);
    assert!((bound - 0.126).abs() < 0.001, "{bound}");
    let relative = (estimate - 100_000.0).abs() / 100_000.0;
    assert!(
        relative <= bound,
        "estimate {estimate}: {relative} > {bound}"
    );
}

/// 8 tasks x 500 increments over 16 shards: the read is exactly 4 000, in one aggregation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sharded_counts_are_exact_and_read_in_one_query() {
    let db = test_db("approx_sharded").await;
    let counter =
        std::sync::Arc::new(ShardedCounter::new(db.collection("counters"), "hits", 16).unwrap());
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                for _ in 0..500 {
                    counter.add(1).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(updates(&db), 4_000);
    assert_eq!(counter.writes(), 4_000);
    assert_eq!(counter.read().await.unwrap(), 4_000);
    let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    assert_eq!(sent, ["find"], "the shards read in one query");
    // The increments spread over the shards, every one of them named `hits:<k>`.
    let shards = db
        .collection::<Document>("counters")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert!((2..=16).contains(&shards), "{shards} shards");
}

#[tokio::test]
async fn bad_settings_are_typed_errors_before_anything_is_written() {
    let db = test_db_unvalidated("approx_settings").await;
    let pages = db.collection::<Document>("pages");
    assert!(matches!(
        BatchedCounter::new(pages.clone(), "views", 0),
        Err(Error::InvalidValue { .. })
    ));
    assert!(matches!(
        BatchedCounter::new(pages.clone(), "$views", 10),
        Err(Error::InvalidKey { .. })
    ));
    for p in [0.0, -0.5, 1.5, f64::NAN] {
        assert!(
            matches!(
                SampledCounter::new(pages.clone(), "likes", p),
                Err(Error::InvalidValue { .. })
            ),
            "{p}"
        );
    }
    assert!(SampledCounter::new(pages.clone(), "likes", 1.0).is_ok());
    assert!(matches!(
        ShardedCounter::new(db.collection("counters"), "hits", 0),
        Err(Error::InvalidValue { .. })
    ));
    assert!(db.list_collection_names().await.unwrap().is_empty());
}

/// A sharded field's shards go with their document: deleted through a toolkit handle, its
/// shards are deleted in the same transaction; deleted around the toolkit, the doctor reports
/// the shards left behind as orphans.
#[tokio::test]
async fn a_deleted_documents_shards_go_with_it_or_are_reported() {
    let db = test_db("approx_orphans").await;
    pattern_runtime::sync(&db)
        .models(&[Page::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    let page = |id: &str| Page {
        id: id.into(),
        page_views: 0,
        likes: 0,
        hits: 0,
    };
    let pages = Page::collection(&db);
    for id in ["home", "about", "faq"] {
        pages.raw().insert_one(page(id)).await.unwrap();
        let hits = Page::collection(&db).counter(Page::FIELDS.hits).of(id);
        for _ in 0..40 {
            hits.add(1).await.unwrap();
        }
    }
    let shards_of = |id: &'static str| {
        let db = db.db().clone();
        async move {
            db.collection::<Document>("pages.hits")
                .count_documents(doc! { "_id.of": id })
                .await
                .unwrap()
        }
    };
    assert!(shards_of("about").await > 0);
    // Through the toolkit: the shards go too.
    Page::collection(&db).delete("about").await.unwrap();
    assert_eq!(shards_of("about").await, 0);
    assert_eq!(
        Page::collection(&db)
            .counter(Page::FIELDS.hits)
            .of("home")
            .read()
            .await
            .unwrap(),
        40
    );
    let report = pattern_runtime::doctor(&db)
        .models(&[Page::SCHEMA])
        .options(&pattern_runtime::doctor::DoctorOptions::new())
        .await
        .unwrap();
    assert!(report.is_clean(), "{report}");
    // Around it: the doctor names the document whose shards are left.
    pages.raw().delete_one(doc! { "_id": "faq" }).await.unwrap();
    let report = pattern_runtime::doctor(&db)
        .models(&[Page::SCHEMA])
        .options(&pattern_runtime::doctor::DoctorOptions::new())
        .await
        .unwrap();
    let orphans: Vec<_> = report
        .with_check(pattern_runtime::doctor::Check::Orphans)
        .collect();
    assert_eq!(orphans.len(), 1, "{report}");
    assert_eq!(orphans[0].documents, [Bson::from("faq")], "{report}");
    assert_eq!(orphans[0].collection, "pages.hits", "{report}");
}

/// The counters declared on a model: handles on the model's collection and serde's field names,
/// the settings in the schema; a sampled field with a non-integer 1/p stays an integer; a
/// sharded field's shards are keyed by the document and its snapshot lands in the document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_declared_on_a_model() {
    let db = test_db("approx_model").await;
    let pages = Page::collection(&db);
    pages
        .raw()
        .insert_one(Page {
            id: "home".into(),
            page_views: 0,
            likes: 0,
            hits: 0,
        })
        .await
        .unwrap();
    let specs: Vec<(&str, Approximation)> = Page::SCHEMA
        .specs::<pattern_runtime::approximation::ApproximateSpec>()
        .map(|s| (s.field(), s.approximation()))
        .collect();
    assert_eq!(
        specs,
        [
            ("pageViews", Approximation::Batched { threshold: 50 }),
            ("likes", Approximation::Sampled { p: 0.3 }),
            (
                "hits",
                Approximation::Sharded {
                    shards: 8,
                    collection: "pages.hits"
                }
            ),
        ]
    );

    // Batched, flushed in the background and once more at shutdown: nothing counted is lost.
    let views = Arc::new(Page::collection(&db).counter(Page::FIELDS.page_views));
    let flusher = BatchedCounter::flush_every(views.clone(), Duration::from_millis(10));
    for _ in 0..120 {
        views.add("home", 1).await.unwrap();
    }
    let stopped = flusher.stop().await;
    assert!(
        stopped.runs >= 2,
        "a first flush and the last: {}",
        stopped.runs
    );
    assert_eq!(stopped.dropped, 0);
    stopped.into_result().unwrap();
    assert_eq!(views.pending(), 0);
    let page = pages
        .raw()
        .find_one(doc! { "_id": "home" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(page.page_views, 120);

    // Sampled at p = 0.3: each write adds 3 or 4, the field stays an integer.
    let likes = Page::collection(&db).counter(Page::FIELDS.likes);
    let mut wrote = 0;
    for _ in 0..300 {
        wrote += u32::from(likes.add("home").await.unwrap());
    }
    let stored = field(&db, "pages", "home", "likes").await;
    let Some(Bson::Int64(n)) = stored else {
        panic!("likes is {stored:?}");
    };
    assert!(
        n >= 3 * i64::from(wrote) && n <= 4 * i64::from(wrote),
        "{n} after {wrote} writes"
    );

    // Sharded: 8 shards keyed by the page; the snapshot writes the exact total into the page.
    let hits = Page::collection(&db).counter(Page::FIELDS.hits).of("home");
    for _ in 0..200 {
        hits.add(1).await.unwrap();
    }
    assert_eq!(hits.read().await.unwrap(), 200);
    assert_eq!(hits.snapshot().await.unwrap(), 200);
    let page = pages
        .raw()
        .find_one(doc! { "_id": "home" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(page.hits, 200);
    let shard = db
        .collection::<Document>("pages.hits")
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    let id = shard.get_document("_id").unwrap();
    assert_eq!(id.get_str("of").ok(), Some("home"), "{shard}");
    // Another page's shards are its own; a snapshot of a missing page is NotFound.
    let other = Page::collection(&db)
        .counter(Page::FIELDS.hits)
        .of("nowhere");
    assert_eq!(other.read().await.unwrap(), 0);
    other.add(1).await.unwrap();
    assert!(other.snapshot().await.unwrap_err().is_not_found());
}

/// Seeded counters repeat: the same seed gives the same draws, the same writes and the same
/// stored values; settings out of range are typed errors before anything is written.
#[tokio::test]
async fn seeded_counters_repeat() {
    let db = test_db("approx_seeded_counters").await;
    let likes = db.collection::<Document>("approx_seeded_likes");

    let draws = |seed: u64, page: &'static str| {
        let likes = likes.clone();
        async move {
            let counter: SampledCounter = SampledCounter::new(likes, "likes", 0.25)
                .unwrap()
                .with_random(Random::seeded(seed));
            let mut drawn = Vec::new();
            for _ in 0..200 {
                drawn.push(counter.add(page).await.unwrap());
            }
            (drawn, counter.writes())
        }
    };
    let (first, first_writes) = draws(42, "p1").await;
    let (second, second_writes) = draws(42, "p2").await;
    let (other, _) = draws(43, "p3").await;
    assert_eq!(first, second);
    assert_eq!(first_writes, second_writes);
    assert_eq!(first_writes, first.iter().filter(|w| **w).count() as u64);
    assert!(first_writes > 0 && first_writes < 200, "{first_writes}");
    assert_ne!(first, other, "seeds 42 and 43 drew the same 200 times");
    let stored = pattern_testkit::docs(&db, "approx_seeded_likes").await;
    let count_of = |id: &str| {
        stored
            .iter()
            .find(|d| d.get_str("_id").ok() == Some(id))
            .map(|d| d.get("likes").cloned().unwrap())
    };
    // 1/p = 4 per write, an integer.
    let expected = Bson::Int64(4 * first_writes as i64);
    assert_eq!(
        count_of("p1").map(|b| b.as_i64().or(b.as_i32().map(i64::from))),
        Some(expected.as_i64())
    );
    assert_eq!(count_of("p1"), count_of("p2"));

    let sharded = |name: &'static str, seed: u64| {
        let hits = db.collection::<Document>("approx_seeded_hits");
        async move {
            let counter = ShardedCounter::new(hits, name, 8)
                .unwrap()
                .with_random(Random::seeded(seed));
            for _ in 0..100 {
                counter.add(1).await.unwrap();
            }
            assert_eq!(counter.writes(), 100);
            assert_eq!(counter.read().await.unwrap(), 100);
        }
    };
    sharded("a", 7).await;
    sharded("b", 7).await;
    sharded("c", 8).await;
    let shards = pattern_testkit::docs(&db, "approx_seeded_hits").await;
    let per_shard = |name: &str| {
        (0..8)
            .map(|k| {
                shards
                    .iter()
                    .find(|d| d.get_str("_id").ok() == Some(format!("{name}:{k}").as_str()))
                    .map(|d| {
                        let c = d.get("count").unwrap();
                        c.as_i64().or(c.as_i32().map(i64::from)).unwrap()
                    })
                    .unwrap_or(0)
            })
            .collect::<Vec<i64>>()
    };
    assert_eq!(per_shard("a"), per_shard("b"));
    assert_eq!(per_shard("a").iter().sum::<i64>(), 100);
    assert_ne!(per_shard("a"), per_shard("c"));

    // Settings out of range: typed errors, nothing written.
    let before = [
        pattern_testkit::docs(&db, "approx_seeded_likes").await,
        pattern_testkit::docs(&db, "approx_seeded_hits").await,
    ];
    for p in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let err = SampledCounter::<Bson>::new(likes.clone(), "likes", p).unwrap_err();
        assert!(err.is_refused_input(), "p = {p}: {err:?}");
    }
    for field in ["", "$inc", "a.b", "a\0b"] {
        let err = SampledCounter::<Bson>::new(likes.clone(), field, 0.5).unwrap_err();
        assert!(err.is_refused_input(), "field {field:?}: {err:?}");
    }
    let err = ShardedCounter::new(db.collection("approx_seeded_hits"), "zero", 0).unwrap_err();
    assert!(err.is_refused_input(), "{err:?}");
    let after = [
        pattern_testkit::docs(&db, "approx_seeded_likes").await,
        pattern_testkit::docs(&db, "approx_seeded_hits").await,
    ];
    assert_eq!(after, before);
}

// `BatchedCounter::flush_every`: the `Flusher`'s last flush when stopped, a failed last flush,
// and the unread errors it keeps; `#[approximate(sharded)]` totals at and past the 64-bit range
// (one shard's overflow or underflow, a snapshot into narrow fields, concurrent adds at the
// edge).

/// A batched counter.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "nsh", collection = "nsh_pages")]
pub struct NshPage {
    #[serde(rename = "_id")]
    pub id: String,
    #[approximate(batched, threshold = 1000)]
    pub views: i64,
}

fn int(d: &Document, key: &str) -> i64 {
    match d.get(key) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("{key} is {other:?} in {d}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Models: sharded counters
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_pages")]
struct NclPage {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(sharded, shards = 1)]
    one: i64,
    #[approximate(sharded, shards = 4)]
    four: i64,
    #[approximate(sharded, shards = 2)]
    small: i32,
    #[approximate(sharded, shards = 2)]
    unsigned: u32,
}

// ---------------------------------------------------------------------------------------------
// 3. Sharded counters past the 64-bit range
// ---------------------------------------------------------------------------------------------

async fn page(db: &mongodb::Database, id: &str) -> NclPage {
    let p = NclPage {
        id: id.into(),
        one: 0,
        four: 0,
        small: 0,
        unsigned: 0,
    };
    NclPage::collection(db).raw().insert_one(&p).await.unwrap();
    p
}

async fn stored_page(db: &mongodb::Database, id: &str) -> NclPage {
    NclPage::collection(db)
        .get(id.to_string())
        .await
        .unwrap()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// 3. BatchedCounter::flush_every
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn flusher_stop_runs_a_last_flush() {
    let db = synced("nsh_flusher").await;
    let ids = ["home", "$home", "a.b", "", "x\u{7f}"];
    // A declared counter "writes into the model's existing documents only": create them.
    for id in ids {
        db.collection::<Document>("nsh_pages")
            .insert_one(doc! { "_id": id, "views": 0i64 })
            .await
            .unwrap();
    }
    let counter = Arc::new(NshPage::collection(&db).counter(NshPage::FIELDS.views));
    let mut flusher = BatchedCounter::flush_every(counter.clone(), Duration::from_secs(3600));
    // The first run is "now": nothing pending, no write.
    assert_eq!(flusher.next().await.unwrap().unwrap(), 0);
    for (k, id) in ids.iter().enumerate() {
        for _ in 0..=k {
            counter.add(*id, 2).await.unwrap();
        }
    }
    counter.add("home", -1).await.unwrap();
    // A page with no document: "dropped with a WARN event, never creating a document".
    counter.add("gone", 7).await.unwrap();
    assert_eq!(
        counter.writes(),
        0,
        "under the threshold: nothing written yet"
    );
    assert_eq!(counter.pending(), 2 * 15 - 1 + 7);
    let before = docs(&db, "nsh_pages").await;

    let stopped = flusher.stop().await;
    assert_eq!(
        stopped.runs,
        2,
        "the first run and the last: {:?}",
        stopped.unread.len()
    );
    assert_eq!(stopped.dropped, 0);
    assert_eq!(stopped.errors().count(), 0);
    let outcomes = stopped.into_result().unwrap();
    assert_eq!(
        outcomes.len(),
        1,
        "only the last flush unread: {outcomes:?}"
    );
    assert!(
        outcomes[0] >= ids.len() as u64,
        "the last flush: one $inc per page: {outcomes:?}"
    );
    assert_eq!(counter.pending(), 0);
    let stored = docs(&db, "nsh_pages").await;
    assert_eq!(
        stored.len(),
        before.len(),
        "no document created for `gone`: {stored:?}"
    );
    for (k, id) in ids.iter().enumerate() {
        let d = stored
            .iter()
            .find(|d| d.get_str("_id").ok() == Some(*id))
            .unwrap_or_else(|| panic!("{id:?} missing: {stored:?}"));
        let expected = 2 * (k as i64 + 1) - i64::from(*id == "home");
        assert_eq!(int(d, "views"), expected, "{d}");
    }
    // `flush`: "Returns how many writes it sent"; `writes`: "$inc writes sent so far".
    assert_eq!(
        counter.writes(),
        outcomes[0],
        "writes() and the flush's count of writes sent agree"
    );
}

#[tokio::test]
async fn flusher_failed_last_flush_is_an_error_and_keeps_counts() {
    let db = test_db("nsh_flusher_fail").await;
    // Every document must have a string `views`: an `$inc` upsert can never pass.
    db.create_collection("nsh_strict")
        .validator(doc! { "views": { "$type": "string" } })
        .await
        .unwrap();
    let counter = Arc::new(
        BatchedCounter::new(db.collection::<Document>("nsh_strict"), "views", 1000).unwrap(),
    );
    let flusher = BatchedCounter::flush_every(counter.clone(), Duration::from_secs(3600));
    counter.add(Bson::String("$p".into()), 3).await.unwrap();
    let stopped = flusher.stop().await;
    assert!(stopped.runs >= 1);
    let last = stopped
        .unread
        .last()
        .expect("the last run's outcome is kept");
    assert!(last.is_err(), "the last flush failed: {:?}", stopped.unread);
    assert!(stopped.errors().count() >= 1);
    assert!(stopped.into_result().is_err());
    assert_eq!(counter.pending(), 3, "a failed write puts its count back");
    assert!(docs(&db, "nsh_strict").await.is_empty());
    // BatchedCounter::new refuses hostile field names.
    for field in ["$views", "a.b"] {
        let e = BatchedCounter::new(db.collection::<Document>("nsh_strict"), field, 10)
            .expect_err("refused");
        assert!(matches!(e, Error::InvalidKey { .. }), "{field}: {e:?}");
    }
    let e = BatchedCounter::new(db.collection::<Document>("nsh_strict"), "v", 0)
        .expect_err("zero threshold refused");
    assert!(matches!(e, Error::InvalidValue { .. }), "{e:?}");
}

#[tokio::test]
async fn flusher_keeps_at_most_64_unread_and_counts_the_rest() {
    let db = synced("nsh_flusher_many").await;
    db.collection::<Document>("nsh_pages")
        .insert_one(doc! { "_id": "late", "views": 0i64 })
        .await
        .unwrap();
    let counter = Arc::new(NshPage::collection(&db).counter(NshPage::FIELDS.views));
    let flusher = BatchedCounter::flush_every(counter.clone(), Duration::from_millis(1));
    // About a thousand runs in a second on an idle machine; the assertions below hold for any
    // number of runs (no timing is asserted), the dropping one once more than 65 ran.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    counter.add("late", 4).await.unwrap();
    let stopped = flusher.stop().await;
    assert_eq!(
        stopped.unread.len() as u64 + stopped.dropped,
        stopped.runs,
        "every run kept or counted"
    );
    assert!(stopped.unread.len() <= 65, "{}", stopped.unread.len());
    assert_eq!(
        stopped.dropped > 0,
        stopped.runs > 65,
        "{} runs",
        stopped.runs
    );
    let outcomes = stopped.into_result().unwrap();
    assert!(!outcomes.is_empty(), "the last flush's outcome is kept");
    // Whichever run wrote it, the stop's last flush leaves nothing behind.
    assert_eq!(counter.pending(), 0);
    assert_eq!(int(&docs(&db, "nsh_pages").await[0], "views"), 4);
}

#[tokio::test]
async fn sharded_one_shard_overflow_is_invalid_value() {
    let db = test_db("ncl_sharded_one_overflow").await;
    page(&db, "p").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("p");
    c.add(i64::MAX).await.unwrap();
    let e = c.add(1).await.expect_err("past i64::MAX");
    assert!(is_invalid_value(&e), "expected InvalidValue, got {e:?}");
    assert_eq!(c.read().await.unwrap(), i64::MAX, "nothing written");
    c.add(-1).await.unwrap();
    assert_eq!(c.read().await.unwrap(), i64::MAX - 1);
    assert_eq!(c.snapshot().await.unwrap(), i64::MAX - 1);
    assert_eq!(stored_page(&db, "p").await.one, i64::MAX - 1);
}

#[tokio::test]
async fn sharded_one_shard_underflow_is_invalid_value() {
    let db = test_db("ncl_sharded_one_underflow").await;
    page(&db, "q").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("q");
    c.add(i64::MIN).await.unwrap();
    let e = c.add(-1).await.expect_err("below i64::MIN");
    assert!(is_invalid_value(&e), "expected InvalidValue, got {e:?}");
    assert_eq!(c.read().await.unwrap(), i64::MIN);
    assert_eq!(c.snapshot().await.unwrap(), i64::MIN);
    c.add(i64::MAX).await.unwrap();
    assert_eq!(c.read().await.unwrap(), -1);
}

#[tokio::test]
async fn sharded_total_past_max_then_back_in_range() {
    let db = test_db("ncl_sharded_four").await;
    page(&db, "p").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("p")
        .with_random(Random::seeded(42));
    // Add i64::MAX until two shards hold it (an add landing on a full shard must be refused).
    let mut held = 0;
    for _ in 0..40 {
        match c.add(i64::MAX).await {
            Ok(()) => held += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if held == 2 {
            break;
        }
    }
    assert_eq!(held, 2);
    let e = c.read().await.unwrap_err();
    assert!(is_invalid_value(&e), "read past the range: {e:?}");
    let e = c.snapshot().await.unwrap_err();
    assert!(is_invalid_value(&e), "snapshot past the range: {e:?}");
    assert_eq!(
        stored_page(&db, "p").await.four,
        0,
        "snapshot wrote nothing"
    );
    // Negative adds bring it back, wherever they land.
    let mut back = 0;
    for _ in 0..40 {
        match c.add(-i64::MAX).await {
            Ok(()) => back += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if back == 1 {
            break;
        }
    }
    assert_eq!(c.read().await.unwrap(), i64::MAX);
    assert_eq!(c.snapshot().await.unwrap(), i64::MAX);
    assert_eq!(stored_page(&db, "p").await.four, i64::MAX);
    // Below the range as well.
    let mut down = 0;
    for _ in 0..80 {
        match c.add(i64::MIN).await {
            Ok(()) => down += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if down == 3 {
            break;
        }
    }
    assert_eq!(down, 3);
    // MAX + 3 * MIN = MIN - MAX - 1... = -2^64 + ... : below the range.
    let e = c.read().await.unwrap_err();
    assert!(is_invalid_value(&e), "read below the range: {e:?}");
}

#[tokio::test]
async fn sharded_snapshot_into_narrow_fields() {
    let db = test_db("ncl_sharded_narrow").await;
    page(&db, "p").await;
    let small = NclPage::collection(&db)
        .counter(NclPage::FIELDS.small)
        .of("p");
    small.add(5).await.unwrap();
    assert_eq!(small.snapshot().await.unwrap(), 5);
    let raw = NclPage::collection(&db)
        .raw()
        .clone_with_type::<Document>()
        .find_one(doc! { "_id": "p" })
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(raw.get("small"), Some(Bson::Int32(5))), "{raw}");
    small.add(i32::MAX as i64).await.unwrap();
    let e = small.snapshot().await.unwrap_err();
    assert!(
        e.is_validation_failed() || is_invalid_value(&e),
        "an i32 field past i32::MAX: {e:?}"
    );
    if let Error::ValidationFailed { fields, .. } = &e {
        assert!(fields.iter().any(|f| f == "small"), "{fields:?}");
    }
    assert_eq!(stored_page(&db, "p").await.small, 5, "nothing written");

    let unsigned = NclPage::collection(&db)
        .counter(NclPage::FIELDS.unsigned)
        .of("p");
    unsigned.add(-3).await.unwrap();
    assert_eq!(unsigned.read().await.unwrap(), -3);
    let e = unsigned.snapshot().await.unwrap_err();
    assert!(
        e.is_validation_failed() || is_invalid_value(&e),
        "a u32 below 0: {e:?}"
    );
    assert_eq!(stored_page(&db, "p").await.unsigned, 0);
    unsigned.add(3 + u32::MAX as i64).await.unwrap();
    assert_eq!(unsigned.snapshot().await.unwrap(), u32::MAX as i64);
    assert_eq!(stored_page(&db, "p").await.unsigned, u32::MAX);

    // A snapshot of a page that does not exist: NotFound, nothing created.
    let ghost = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("ghost");
    ghost.add(1).await.unwrap();
    // Observed: the add counts into a shard of a page that does not exist.
    assert_eq!(ghost.read().await.unwrap(), 1);
    let e = ghost.snapshot().await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert!(NclPage::collection(&db)
        .get("ghost".to_string())
        .await
        .unwrap()
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sharded_concurrent_adds_at_the_edge() {
    // One shard 100 below i64::MAX; 8 writers add 1, 20 times each: exactly 100 land, the
    // other 60 are InvalidValue, and the total ends at i64::MAX.
    let db = test_db("ncl_sharded_edge").await;
    page(&db, "e").await;
    NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("e")
        .add(i64::MAX - 100)
        .await
        .unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let db: mongodb::Database = (*db).clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let c = NclPage::collection(&db)
                .counter(NclPage::FIELDS.one)
                .of("e");
            barrier.wait().await;
            let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
            for _ in 0..20 {
                match c.add(1).await {
                    Ok(()) => ok += 1,
                    Err(e) if is_invalid_value(&e) => refused += 1,
                    Err(e) => other.push(format!("{e:?}")),
                }
            }
            (ok, refused, other)
        }));
    }
    let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
    for t in tasks {
        let (o, r, x) = t.await.unwrap();
        ok += o;
        refused += r;
        other.extend(x);
    }
    assert!(other.is_empty(), "{:?}", &other[..other.len().min(2)]);
    assert_eq!((ok, refused), (100, 60));
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("e");
    assert_eq!(c.read().await.unwrap(), i64::MAX);
    // Concurrent mixed adds on four shards stay exact.
    let mut tasks = Vec::new();
    for w in 0..8i64 {
        let db: mongodb::Database = (*db).clone();
        tasks.push(tokio::spawn(async move {
            let c = NclPage::collection(&db)
                .counter(NclPage::FIELDS.four)
                .of("e");
            for i in 0..25i64 {
                c.add(if (w + i) % 3 == 0 { -7 } else { 11 }).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let want: i64 = (0..8i64)
        .flat_map(|w| (0..25i64).map(move |i| if (w + i) % 3 == 0 { -7 } else { 11 }))
        .sum();
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("e");
    assert_eq!(c.read().await.unwrap(), want);
    assert_eq!(c.snapshot().await.unwrap(), want);
    assert_eq!(stored_page(&db, "e").await.four, want);
}

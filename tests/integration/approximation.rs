//! The approximation pattern's counters against the server (seed 000, 近似值模式): batched in
//! memory, sampled with probability p, sharded over several documents; concurrent writers, with
//! the writes counted.

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use std::sync::Arc;
use std::time::Duration;

use pattern_runtime::approximation::{
    Approximation, BatchedCounter, Random, SampledCounter, ShardedCounter,
};
use pattern_runtime::{Error, Model};
use pattern_testkit::{test_db, test_db_unvalidated};
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

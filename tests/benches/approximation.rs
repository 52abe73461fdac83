//! One hot counter (a page's views) written by 8 concurrent writers: one `$inc` per event vs the
//! approximation pattern's three counters (`pattern_runtime::approximation`).
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- approximation` (embedded server,
//! or `MONGODB_URI`). One group, `approximation_hot_counter`; an iteration is 8 tokio tasks on
//! the multi-thread runtime, each counting 250 events of the document `home`, 2 000 events in
//! all:
//! - `per_event_inc`: each event an upserting `update_one({_id: "home"}, {$inc: {views: 1}})`
//!   written by hand with the driver (the baseline): 2 000 writes;
//! - `batched`: a `BatchedCounter` with threshold 100, flushed at the end of the iteration:
//!   20 writes, exact;
//! - `sampled`: a `SampledCounter` with `p = 0.01`: about 20 writes of `$inc: 100`, an estimate
//!   (relative standard error 22% after 2 000 events, 3.1% after 100 000);
//! - `sharded`: a `ShardedCounter` over 16 shard documents: 2 000 writes, exact, spread over
//!   16 documents instead of one.
//!
//! Before timing, each variant counts 2 000 events once on a collection of its own, the `update`
//! commands it sent are counted (`take_commands`) and printed, and the batched and sharded totals
//! are checked to be exactly 2 000 (the per-event total too; the sampled estimate is printed).
//!
//! On the embedded server, on 2 busy cores (one run, `--warm-up-time 1 --measurement-time 3`),
//! writes per 2 000 events and mean time per iteration:
//!
//! | variant | writes | time | events/s | time vs `per_event_inc` |
//! | --- | --- | --- | --- | --- |
//! | `per_event_inc` | 2 000 | 360 ms | 5 550 | 1 |
//! | `batched` | 20 | 4.41 ms | 454 000 | 0.012 (82 times faster) |
//! | `sampled` | about 20 (23 in this run) | 4.77 ms | 419 000 | 0.013 (75 times faster) |
//! | `sharded` | 2 000 | 375 ms | 5 330 | 1.04 |
//!
//! The time follows the number of round trips: batched and sampled send a hundredth of the
//! writes and take about a hundredth of the time. Sharding saves nothing here: it still writes
//! once per event, and on one embedded server with 8 writers the cost measured is the round
//! trip, not contention on the one document (what sharding spreads). These are one run's
//! figures: compare several runs before reading anything into a difference of a few percent.

use bson::{doc, Bson, Document};
use criterion::{criterion_group, Criterion};
use mongodb::Collection;
use pattern_runtime::approximation::{BatchedCounter, SampledCounter, ShardedCounter};
use pattern_testkit::TestDb;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

const WRITERS: usize = 8;
const EVENTS_PER_WRITER: usize = 250;
/// Every event of an iteration: `WRITERS * EVENTS_PER_WRITER`.
const EVENTS: usize = WRITERS * EVENTS_PER_WRITER;
const THRESHOLD: u32 = 100;
const P: f64 = 0.01;
const SHARDS: u32 = 16;

/// The counters of one variant, each on a collection of its own.
struct Counters {
    per_event: Collection<Document>,
    batched_pages: Collection<Document>,
    sampled_pages: Collection<Document>,
    batched: Arc<BatchedCounter>,
    sampled: Arc<SampledCounter>,
    sharded: Arc<ShardedCounter>,
}

impl Counters {
    fn new(db: &TestDb, suffix: &str) -> Self {
        let coll = |name: &str| db.collection::<Document>(&format!("{name}_{suffix}"));
        let batched_pages = coll("pages_batched");
        let sampled_pages = coll("pages_sampled");
        Counters {
            per_event: coll("pages_inc"),
            batched: Arc::new(
                BatchedCounter::new(batched_pages.clone(), "views", THRESHOLD).unwrap(),
            ),
            sampled: Arc::new(SampledCounter::new(sampled_pages.clone(), "views", P).unwrap()),
            batched_pages,
            sampled_pages,
            sharded: Arc::new(ShardedCounter::new(coll("counters"), "home_views", SHARDS).unwrap()),
        }
    }
}

/// Runs `WRITERS` tasks at once, each calling `event` `EVENTS_PER_WRITER` times.
async fn writers<F, Fut>(event: F)
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let tasks: Vec<_> = (0..WRITERS)
        .map(|_| {
            let event = event.clone();
            tokio::spawn(async move {
                for _ in 0..EVENTS_PER_WRITER {
                    event().await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

async fn per_event_inc(pages: &Collection<Document>) {
    let pages = pages.clone();
    writers(move || {
        let pages = pages.clone();
        async move {
            pages
                .update_one(doc! { "_id": "home" }, doc! { "$inc": { "views": 1 } })
                .upsert(true)
                .await
                .unwrap();
        }
    })
    .await;
}

async fn batched(counter: &Arc<BatchedCounter>) {
    let c = Arc::clone(counter);
    writers(move || {
        let c = Arc::clone(&c);
        async move { c.add("home", 1).await.unwrap() }
    })
    .await;
    counter.flush().await.unwrap();
}

async fn sampled(counter: &Arc<SampledCounter>) {
    let c = Arc::clone(counter);
    writers(move || {
        let c = Arc::clone(&c);
        async move {
            c.add("home").await.unwrap();
        }
    })
    .await;
}

async fn sharded(counter: &Arc<ShardedCounter>) {
    let c = Arc::clone(counter);
    writers(move || {
        let c = Arc::clone(&c);
        async move { c.add(1).await.unwrap() }
    })
    .await;
}

/// The `views` of `home` in `pages`, as a number.
async fn views(pages: &Collection<Document>) -> f64 {
    let d = pages.find_one(doc! { "_id": "home" }).await.unwrap();
    match d.as_ref().and_then(|d| d.get("views")) {
        Some(Bson::Int32(n)) => f64::from(*n),
        Some(Bson::Int64(n)) => *n as f64,
        Some(Bson::Double(n)) => *n,
        None => 0.0,
        Some(other) => panic!("views is {other:?}"),
    }
}

/// Each variant counts `EVENTS` events once on fresh collections: prints the `update` commands
/// it sent, checks the exact totals.
fn check(rt: &Runtime, db: &TestDb) {
    let c = Counters::new(db, "check");
    db.take_commands();
    let updates = |db: &TestDb| {
        db.take_commands()
            .iter()
            .filter(|c| c.name == "update")
            .count()
    };
    let events = EVENTS as f64;

    rt.block_on(per_event_inc(&c.per_event));
    let per_event_writes = updates(db);
    let per_event_total = rt.block_on(views(&c.per_event));
    rt.block_on(batched(&c.batched));
    let batched_writes = updates(db);
    let batched_total = rt.block_on(views(&c.batched_pages));
    rt.block_on(sampled(&c.sampled));
    let sampled_writes = updates(db);
    let sampled_total = rt.block_on(views(&c.sampled_pages));
    rt.block_on(sharded(&c.sharded));
    let sharded_writes = updates(db);
    let sharded_total = rt.block_on(c.sharded.read()).unwrap();

    eprintln!("writes for {EVENTS} events ({WRITERS} writers x {EVENTS_PER_WRITER}):");
    eprintln!("  per_event_inc {per_event_writes:>5}  total {per_event_total}");
    eprintln!("  batched       {batched_writes:>5}  total {batched_total}");
    eprintln!(
        "  sampled       {sampled_writes:>5}  estimate {sampled_total} (relative standard error {:.1}%)",
        c.sampled.relative_error(EVENTS as u64) * 100.0
    );
    eprintln!("  sharded       {sharded_writes:>5}  total {sharded_total}");

    assert_eq!(per_event_writes, EVENTS);
    assert_eq!(per_event_total, events, "per_event_inc total");
    assert_eq!(batched_writes, EVENTS / THRESHOLD as usize);
    assert_eq!(batched_total, events, "batched total");
    assert_eq!(c.batched.pending(), 0);
    assert_eq!(sampled_writes as u64, c.sampled.writes());
    assert_eq!(sampled_total, sampled_writes as f64 / P);
    assert_eq!(sharded_writes, EVENTS);
    assert_eq!(sharded_total, EVENTS as i64, "sharded total");
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(pattern_testkit::test_db("bench_approximation"));
    check(&rt, &test_db);
    let counters = Counters::new(&test_db, "bench");
    let counters = &counters;

    let mut g = c.benchmark_group("approximation_hot_counter");
    // The per-event side takes 2 000 round trips an iteration: 10 samples keep the group short.
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("per_event_inc", |b| {
        b.to_async(&rt)
            .iter(|| async { per_event_inc(&counters.per_event).await });
    });
    g.bench_function("batched", |b| {
        b.to_async(&rt)
            .iter(|| async { batched(&counters.batched).await });
    });
    g.bench_function("sampled", |b| {
        b.to_async(&rt)
            .iter(|| async { sampled(&counters.sampled).await });
    });
    g.bench_function("sharded", |b| {
        b.to_async(&rt)
            .iter(|| async { sharded(&counters.sharded).await });
    });
    g.finish();
}

criterion_group!(approximation, benches);

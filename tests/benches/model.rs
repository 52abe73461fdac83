//! The model handle's everyday verbs, typed, against the same commands written by hand with the
//! driver and `doc!`, on a model nothing derives from.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- model_` (embedded
//! server, or `MONGODB_URI`). Four groups, each `toolkit` vs `driver`:
//! - `model_insert`: `ModelCollection::insert` of a new note vs `insert_one`;
//! - `model_update`: `update(id, Update::new().inc(f.views, 1))` vs `update_one` with `$inc`;
//! - `model_find`: `find(Filter::eq(f.tag, "t3"))`, awaited as a `Vec` of the 10 matching notes,
//!   vs `find({tag: {$eq: "t3"}})` collected;
//! - `model_stream`: `find(doc! {}).stream()` of all 10 000 notes vs the driver's cursor, both
//!   read to the end.
//!
//! Before timing, both sides of each group are checked to send the same command names. The
//! sides are paired: each timed call of one side is followed by an untimed call of the other,
//! so both see the same collection and the same load on the machine. Run it on a quiet
//! machine: the process's CPU time (tried instead of wall time) moved as far under another
//! build's load, the embedded server's background threads charged to whichever side ran.
//!
//! One run on the embedded server, 2 cores shared with another build (toolkit vs driver,
//! criterion's estimate): insert 647 µs vs 702 µs (0.92x), update 782 µs vs 755 µs (1.03x),
//! find of 10 notes among 10 000 (no index: a scan) 42.7 ms vs 46.1 ms (0.93x), stream of
//! 10 000 notes 245 ms vs 248 ms (0.99x): the same commands cost the same, within the run's
//! spread.

use bson::doc;
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use mongodb::{Collection, Database};
use pattern_runtime::query::{Filter, Update};
use pattern_runtime::{Model, ModelCollection};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::hint::black_box;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "bench_notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i64,
    tag: String,
    views: i64,
    text: String,
}

const NOTES: i64 = 10_000;

static NEXT: AtomicI64 = AtomicI64::new(NOTES);

fn note(id: i64) -> Note {
    Note {
        id,
        tag: format!("t{}", id % 1000),
        views: 0,
        text: "an everyday note of a few dozen bytes".into(),
    }
}

fn next() -> Note {
    note(NEXT.fetch_add(1, Ordering::Relaxed))
}

async fn toolkit_insert(notes: &ModelCollection<Note>) {
    notes.insert(&next()).await.unwrap();
}

async fn driver_insert(raw: &Collection<Note>) {
    raw.insert_one(next()).await.unwrap();
}

async fn toolkit_update(notes: &ModelCollection<Note>) {
    let f = Note::FIELDS;
    notes
        .update(7, Update::new().inc(f.views, 1))
        .await
        .unwrap();
}

async fn driver_update(raw: &Collection<Note>) {
    raw.update_one(doc! { "_id": 7 }, doc! { "$inc": { "views": 1 } })
        .await
        .unwrap();
}

async fn toolkit_find(notes: &ModelCollection<Note>) -> usize {
    let found = notes
        .find(Filter::eq(Note::FIELDS.tag, "t3"))
        .await
        .unwrap();
    found.len()
}

async fn driver_find(raw: &Collection<Note>) -> usize {
    let found: Vec<Note> = raw
        .find(doc! { "tag": { "$eq": "t3" } })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    found.len()
}

async fn toolkit_stream(notes: &ModelCollection<Note>) -> usize {
    let stream = notes.find(doc! {}).stream().await.unwrap();
    stream
        .try_fold(0, |n, _| async move { Ok(n + 1) })
        .await
        .unwrap()
}

async fn driver_stream(raw: &Collection<Note>) -> usize {
    let cursor = raw.find(doc! {}).await.unwrap();
    cursor
        .try_fold(0, |n, _| async move { Ok(n + 1) })
        .await
        .unwrap()
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(async {
        let db = pattern_testkit::test_db("bench_model").await;
        let all: Vec<Note> = (0..NOTES).map(note).collect();
        Note::collection(&db).insert_many(&all).await.unwrap();
        db
    });
    let db: &Database = test_db.db();
    let notes = Note::collection(db);
    let raw = notes.raw().clone();

    let names = |db: &pattern_testkit::TestDb| -> Vec<String> {
        db.take_commands().into_iter().map(|c| c.name).collect()
    };
    test_db.take_commands();
    let same = |what: &str, toolkit: Vec<String>, driver: Vec<String>| {
        assert_eq!(toolkit, driver, "{what}: the sides differ");
    };
    rt.block_on(toolkit_insert(&notes));
    let t = names(&test_db);
    rt.block_on(driver_insert(&raw));
    same("insert", t, names(&test_db));
    rt.block_on(toolkit_update(&notes));
    let t = names(&test_db);
    rt.block_on(driver_update(&raw));
    same("update", t, names(&test_db));
    let found = rt.block_on(toolkit_find(&notes));
    let t = names(&test_db);
    assert_eq!(found, rt.block_on(driver_find(&raw)));
    same("find", t, names(&test_db));
    let streamed = rt.block_on(toolkit_stream(&notes));
    let t = names(&test_db);
    assert_eq!(streamed, rt.block_on(driver_stream(&raw)));
    same("stream", t, names(&test_db));

    paired(
        c,
        &rt,
        "model_insert",
        || toolkit_insert(&notes),
        || driver_insert(&raw),
    );
    paired(
        c,
        &rt,
        "model_update",
        || toolkit_update(&notes),
        || driver_update(&raw),
    );
    paired(
        c,
        &rt,
        "model_find",
        || toolkit_find(&notes),
        || driver_find(&raw),
    );
    paired(
        c,
        &rt,
        "model_stream",
        || toolkit_stream(&notes),
        || driver_stream(&raw),
    );
}

/// A group of the two sides, each timed with the other run untimed right after every timed
/// call: both see the same collection (the inserts grow it) and the same machine, so a load
/// that comes and goes during the run moves both alike and the ratio stays meaningful.
fn paired<T, D, TF, DF, TO, DO>(c: &mut Criterion, rt: &Runtime, name: &str, toolkit: T, driver: D)
where
    T: Fn() -> TF,
    D: Fn() -> DF,
    TF: Future<Output = TO>,
    DF: Future<Output = DO>,
{
    let mut g = group(c, name);
    g.bench_function("toolkit", |b| {
        b.to_async(rt)
            .iter_custom(|iters| timed(iters, &toolkit, &driver))
    });
    g.bench_function("driver", |b| {
        b.to_async(rt)
            .iter_custom(|iters| timed(iters, &driver, &toolkit))
    });
    g.finish();
}

/// `iters` calls of `measured`, timed, each followed by an untimed call of `other`.
async fn timed<M, O, MF, OF, MO, OO>(iters: u64, measured: &M, other: &O) -> Duration
where
    M: Fn() -> MF,
    O: Fn() -> OF,
    MF: Future<Output = MO>,
    OF: Future<Output = OO>,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        black_box(measured().await);
        total += start.elapsed();
        black_box(other().await);
    }
    total
}

/// A group of this file's settings.
fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name.to_owned());
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g
}

criterion_group!(model, benches);

//! The preallocation pattern (`pattern_runtime::preallocation`): a booking through the
//! preallocated grid vs the same write by hand, and vs the seed's approach without a grid ("find
//! a conflicting booking, then insert"), which also races: how often it double-books under the
//! concurrency the tests use is measured first and printed.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- preallocation` (embedded server,
//! or `MONGODB_URI`). One group, `preallocation_book`, one booking of a free room-night per
//! iteration (each side has its own 50 000 preallocated slots, allocated before timing):
//! - `toolkit`: `RoomDay::collection(&db).slots().book(room, date, guest)`: one `findAndModify` with
//!   `{resourceId, date, bookedBy: null}`.
//! - `by_hand`: the same `findAndModify` with the driver.
//! - `find_then_insert`: the seed's approach without a grid: `find_one` of a booking of that
//!   room and night in `bookings` (indexed on `{resourceId, date}`, not unique: a unique index
//!   would be the grid's guarantee by another name), then `insert_one` when there is none.
//!
//! Before timing, 16 tasks race for the same 50 room-nights, each trying all of them in the same
//! order, once through the grid and then by find-then-insert; the bench prints how many nights
//! each approach booked more than once (the grid: never, by construction and by the tests).
//!
//! One run on the embedded server, 2 cores, quiet machine:
//!
//! | side | one booking | ratio |
//! | --- | --- | --- |
//! | `toolkit` | 1.38 ms | 1.01 (toolkit / by hand) |
//! | `by_hand` | 1.38 ms | |
//! | `find_then_insert` | 1.18 ms | 0.85 (find-then-insert / toolkit) |
//!
//! and the race before it: the grid booked no night twice; find-then-insert booked all 50 of
//! the 50 nights more than once. The toolkit's booking costs what the same `findAndModify`
//! costs by hand. On this server one `findAndModify` takes a little longer than a `find` and an
//! `insert` together (not profiled); what the two round trips buy is double bookings.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use bson::{doc, DateTime, Document};
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use mongodb::options::ReturnDocument;
use mongodb::{Database, IndexModel};
use pattern_runtime::{Error, Model};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = resource_id, slot = date, holder = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    resource_id: String,
    date: DateTime,
    booked_by: Option<String>,
}

const DAY_MS: i64 = 24 * 3600 * 1000;
const AUG_20: i64 = 1_755_648_000_000;
const SLOTS: i64 = 50_000;

fn night(n: i64) -> DateTime {
    DateTime::from_millis(AUG_20 + n * DAY_MS)
}

/// `side`'s room for slot `n`: 1 000 rooms x 100 nights per side.
fn room(side: &str, n: i64) -> String {
    format!("{side}-{}", n % 1000)
}

async fn allocate(db: &Database, side: &str) {
    let slots = (0..SLOTS).map(|n| RoomDay {
        id: bson::oid::ObjectId::new(),
        resource_id: room(side, n),
        date: night(n / 1000),
        booked_by: None,
    });
    RoomDay::collection(db)
        .slots()
        .allocate(slots)
        .await
        .unwrap();
}

async fn find_then_insert(
    bookings: &mongodb::Collection<Document>,
    room: &str,
    date: DateTime,
    guest: &str,
) -> bool {
    let conflict = bookings
        .find_one(doc! { "resourceId": room, "date": date })
        .await
        .unwrap();
    if conflict.is_some() {
        return false;
    }
    bookings
        .insert_one(doc! { "resourceId": room, "date": date, "guest": guest })
        .await
        .unwrap();
    true
}

/// 16 tasks, 50 nights of one room, each task trying all of them: how many nights were booked
/// more than once, through the grid and by find-then-insert.
async fn race(db: &Database) -> (usize, usize) {
    let slots = RoomDay::collection(db).slots();
    slots
        .allocate((0..50).map(|n| RoomDay {
            id: bson::oid::ObjectId::new(),
            resource_id: "race".into(),
            date: night(n),
            booked_by: None,
        }))
        .await
        .unwrap();
    let bookings = db.collection::<Document>("race_bookings");
    // Every task walks the nights in the same order: they meet on each one.
    let grid_tasks: Vec<_> = (0..16)
        .map(|t| {
            let slots = slots.clone();
            tokio::spawn(async move {
                let guest = format!("g{t}");
                let mut wins = 0;
                for n in 0..50 {
                    match slots.book("race", night(n), guest.as_str()).await {
                        Ok(_) => wins += 1,
                        Err(Error::AlreadyBooked { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                wins
            })
        })
        .collect();
    let mut grid_wins = 0;
    for t in grid_tasks {
        grid_wins += t.await.unwrap();
    }
    let fti_tasks: Vec<_> = (0..16)
        .map(|t| {
            let bookings = bookings.clone();
            tokio::spawn(async move {
                let guest = format!("g{t}");
                for n in 0..50 {
                    find_then_insert(&bookings, "race", night(n), &guest).await;
                }
            })
        })
        .collect();
    for t in fti_tasks {
        t.await.unwrap();
    }
    let docs: Vec<Document> = bookings
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut per_night = std::collections::HashMap::new();
    for d in &docs {
        *per_night
            .entry(d.get_datetime("date").unwrap().timestamp_millis())
            .or_insert(0) += 1;
    }
    let double_booked = per_night.values().filter(|n| **n > 1).count();
    (grid_wins - 50, double_booked)
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(async {
        let db = pattern_testkit::test_db("bench_preallocation").await;
        pattern_runtime::sync(&db)
            .models(&[RoomDay::SCHEMA])
            .options(&pattern_runtime::SyncOptions::new())
            .await
            .unwrap();
        db.collection::<Document>("bookings")
            .create_index(
                IndexModel::builder()
                    .keys(doc! { "resourceId": 1, "date": 1 })
                    .build(),
            )
            .await
            .unwrap();
        db.collection::<Document>("race_bookings")
            .create_index(
                IndexModel::builder()
                    .keys(doc! { "resourceId": 1, "date": 1 })
                    .build(),
            )
            .await
            .unwrap();
        let (grid_extra, find_insert_doubles) = race(&db).await;
        eprintln!(
            "16 tasks x the same 50 nights: the grid booked {grid_extra} nights twice; \
             find-then-insert double-booked {find_insert_doubles} of 50 nights"
        );
        allocate(&db, "toolkit").await;
        allocate(&db, "by_hand").await;
        db
    });
    let db = test_db.db();
    let mut g = c.benchmark_group("preallocation_book");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    let next = [AtomicI64::new(0), AtomicI64::new(0), AtomicI64::new(0)];
    g.bench_function("toolkit", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let first = next[0].fetch_add(iters as i64, Ordering::Relaxed);
            async move {
                let slots = RoomDay::collection(db).slots();
                let start = Instant::now();
                for n in first..first + iters as i64 {
                    let n = n % SLOTS;
                    let _ = slots
                        .book(room("toolkit", n), night(n / 1000), "guest")
                        .await;
                }
                start.elapsed()
            }
        });
    });
    g.bench_function("by_hand", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let first = next[1].fetch_add(iters as i64, Ordering::Relaxed);
            async move {
                let coll = db.collection::<Document>("room_days");
                let start = Instant::now();
                for n in first..first + iters as i64 {
                    let n = n % SLOTS;
                    let _ = coll
                        .find_one_and_update(
                            doc! { "resourceId": room("by_hand", n), "date": night(n / 1000), "bookedBy": null },
                            doc! { "$set": { "bookedBy": "guest" } },
                        )
                        .return_document(ReturnDocument::After)
                        .await
                        .unwrap();
                }
                start.elapsed()
            }
        });
    });
    g.bench_function("find_then_insert", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let first = next[2].fetch_add(iters as i64, Ordering::Relaxed);
            async move {
                let bookings = db.collection::<Document>("bookings");
                let start = Instant::now();
                for n in first..first + iters as i64 {
                    find_then_insert(&bookings, &room("fti", n), night(n / 1000), "guest").await;
                }
                start.elapsed()
            }
        });
    });
    g.finish();
}

criterion_group!(preallocation, benches);

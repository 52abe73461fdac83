//! The preallocation pattern against the server (seed 000, 预分配模式): one document per room and
//! day created ahead of time, booked by one atomic conditional update; half-hour bitmaps for
//! meeting rooms.

use pattern_testkit::docs as all;
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{Error, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

/// Seed 000's slot: a room and a day, free while `bookedBy` is null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = resource_id, slot = date, holder = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    resource_id: String,
    date: DateTime,
    booked_by: Option<String>,
    price: i64,
}

/// A meeting room's day in 48 half hours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = room, slot = day, bitmap = half_hours, sub_slots = 48)]
struct MeetingDay {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    room: String,
    day: String,
    half_hours: i64,
}

const DAY_MS: i64 = 24 * 3600 * 1000;
/// 2025-08-20T00:00:00Z, the seed's day.
const AUG_20: i64 = 1_755_648_000_000;

fn day(n: i64) -> DateTime {
    DateTime::from_millis(AUG_20 + n * DAY_MS)
}

fn free(room: &str, n: i64) -> RoomDay {
    RoomDay {
        id: bson::oid::ObjectId::new(),
        resource_id: room.into(),
        date: day(n),
        booked_by: None,
        price: 300,
    }
}

/// 20 rooms x 30 days from the seed's day.
fn grid() -> Vec<RoomDay> {
    (0..20)
        .flat_map(|r| (0..30).map(move |d| free(&format!("room{r}"), d)))
        .collect()
}

async fn setup(name: &str) -> pattern_testkit::TestDb {
    setup_in(test_db(name).await).await
}

/// [`setup`] in `db`.
async fn setup_in(db: pattern_testkit::TestDb) -> pattern_testkit::TestDb {
    pattern_runtime::sync(&db)
        .models(&[RoomDay::SCHEMA, MeetingDay::SCHEMA, DeskDay::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    db
}

#[tokio::test]
async fn allocating_twice_leaves_one_slot_per_room_and_day_and_keeps_bookings() {
    let db = setup("prealloc_grid").await;
    let slots = RoomDay::collection(&db).slots();
    let mut batches = 0;
    let first = slots
        .allocate_with_progress(grid(), |_| batches += 1)
        .await
        .unwrap();
    assert_eq!((first.inserted, first.existing), (600, 0));
    assert_eq!(batches, 1, "600 slots: one insert");

    // The seed: book room0 on 2025-08-20; a second booking of it is refused, with the holder.
    let booked = slots.book("room0", day(0), "alice").await.unwrap();
    assert_eq!(booked.booked_by.as_deref(), Some("alice"));
    match slots.book("room0", day(0), "bob").await.unwrap_err() {
        Error::AlreadyBooked { holder, .. } => {
            assert_eq!(holder.as_deref(), Some(&Bson::from("alice")));
        }
        other => panic!("{other}"),
    }
    // Never allocated: another error, never confused with a booked slot.
    let err = slots.book("room0", day(30), "bob").await.unwrap_err();
    assert!(err.is_not_allocated(), "{err}");
    let err = slots.book("room99", day(0), "bob").await.unwrap_err();
    assert!(err.is_not_allocated(), "{err}");

    // The job runs again: nothing new, and alice keeps her room.
    let before = all(&db, "room_days").await;
    let second = slots.allocate(grid()).await.unwrap();
    assert_eq!((second.inserted, second.existing), (0, 600));
    assert_eq!(all(&db, "room_days").await, before);
    assert_eq!(before.len(), 600);
    // And it extends the grid by what is new only.
    let third = slots
        .allocate((28..32).map(|d| free("room0", d)))
        .await
        .unwrap();
    assert_eq!((third.inserted, third.existing), (2, 2));
    // A slot given twice in one run is allocated once; a slot that is not free is refused.
    let repeated = slots
        .allocate([free("room1", 40), free("room1", 40)])
        .await
        .unwrap();
    assert_eq!((repeated.inserted, repeated.existing), (1, 1));
    let mut taken = free("room1", 41);
    taken.booked_by = Some("mallory".into());
    let err = slots.allocate([taken]).await.unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
    assert!(slots.get("room1", day(41)).await.unwrap().is_none());

    // The stored slot, as the seed describes it: the room, the day, who holds it.
    let stored = db
        .collection::<Document>("room_days")
        .find_one(doc! { "resourceId": "room0", "date": day(0) })
        .projection(doc! { "_id": 0 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored,
        doc! { "resourceId": "room0", "date": day(0), "bookedBy": "alice", "price": 300_i64 }
    );

    // Availability: one query on the unique index, in day order, without alice's day.
    let free_days = slots.available("room0", day(0), day(5)).await.unwrap();
    let days: Vec<DateTime> = free_days.iter().map(|s| s.date).collect();
    assert_eq!(days, [day(1), day(2), day(3), day(4)]);
    let index = RoomDay::SCHEMA
        .spec::<pattern_runtime::preallocation::SlotSpec>()
        .unwrap()
        .index();
    assert_eq!(index.name(), "resourceId_1_date_1");
    assert!(pattern_runtime::sync::list_indexes(&db, "room_days")
        .await
        .unwrap()
        .iter()
        .any(|i| i.get_str("name").ok() == Some("resourceId_1_date_1")
            && i.get_bool("unique").ok() == Some(true)));

    // Cancel: only by the holder; release: by anyone.
    let err = slots.cancel("room0", day(0), "bob").await.unwrap_err();
    assert!(matches!(err, Error::NotHolder { .. }), "{err}");
    let freed = slots.cancel("room0", day(0), "alice").await.unwrap();
    assert_eq!(freed.booked_by, None);
    // Cancelling again changes nothing and is not an error.
    assert_eq!(
        slots
            .cancel("room0", day(0), "alice")
            .await
            .unwrap()
            .booked_by,
        None
    );
    slots.book("room0", day(0), "bob").await.unwrap();
    assert_eq!(
        slots.release("room0", day(0)).await.unwrap().booked_by,
        None
    );
    assert!(matches!(
        slots.release("room0", day(99)).await,
        Err(e) if e.is_not_allocated()
    ));
}

#[tokio::test]
async fn sixteen_tasks_racing_for_fifty_slots_book_each_exactly_once() {
    let db = setup("prealloc_race").await;
    let slots = RoomDay::collection(&db).slots();
    slots
        .allocate((0..50).map(|d| free("suite", d)))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let slots = slots.clone();
            tokio::spawn(async move {
                let holder = format!("guest{t}");
                let mut won = Vec::new();
                // Each task tries every slot, in the same order: they meet on each one.
                for d in 0..50 {
                    match slots.book("suite", day(d), holder.as_str()).await {
                        Ok(_) => won.push(d),
                        Err(Error::AlreadyBooked { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                (holder, won)
            })
        })
        .collect();
    let mut winners: BTreeMap<i64, String> = BTreeMap::new();
    for task in tasks {
        let (holder, won) = task.await.unwrap();
        for d in won {
            assert!(
                winners.insert(d, holder.clone()).is_none(),
                "day {d} was booked twice"
            );
        }
    }
    assert_eq!(winners.len(), 50, "every slot booked once");
    // The stored holder of each slot is the one task that was told it won.
    let still_free = slots.available("suite", day(0), day(50)).await.unwrap();
    assert!(still_free.is_empty(), "{still_free:?} still free");
    for d in 0..50 {
        let stored = slots.get("suite", day(d)).await.unwrap().unwrap();
        assert_eq!(stored.booked_by.as_ref(), winners.get(&d));
    }
}

#[tokio::test]
async fn a_stay_whose_third_night_is_taken_books_nothing() {
    let db = setup("prealloc_stay").await;
    let slots = RoomDay::collection(&db).slots();
    slots
        .allocate((0..5).map(|d| free("101", d)))
        .await
        .unwrap();
    slots.book("101", day(2), "dave").await.unwrap();
    let stay = [("101", day(0)), ("101", day(1)), ("101", day(2))];
    let err = slots.book_all(&stay, "erin").await.unwrap_err();
    assert!(matches!(err, Error::AlreadyBooked { .. }), "{err}");
    assert_eq!(
        slots.get("101", day(0)).await.unwrap().unwrap().booked_by,
        None
    );
    assert_eq!(
        slots.get("101", day(1)).await.unwrap().unwrap().booked_by,
        None
    );
    // Past the allocated grid: NotFound of the slot, and nothing booked either.
    let late = [("101", day(3)), ("101", day(4)), ("101", day(5))];
    let err = slots.book_all(&late, "erin").await.unwrap_err();
    assert!(err.is_not_allocated(), "{err}");
    assert_eq!(
        slots.available("101", day(0), day(5)).await.unwrap().len(),
        4
    );
    // A free stay: all three.
    let booked = slots
        .book_all(&[("101", day(3)), ("101", day(4))], "erin")
        .await
        .unwrap();
    assert!(booked
        .iter()
        .all(|s| s.booked_by.as_deref() == Some("erin")));
}

/// A narrow bitmap: a day of 24 hours in an `i32`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[preallocated(resource = desk, slot = day, bitmap = hours, sub_slots = 24)]
struct DeskDay {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    desk: i64,
    day: i32,
    hours: i32,
}

#[tokio::test]
async fn an_i32_bitmap_keeps_its_type() {
    // It writes a bitmap of another type around the toolkit.
    let db = setup_in(pattern_testkit::test_db_unvalidated("prealloc_i32").await).await;
    let slots = DeskDay::collection(&db).slots();
    slots
        .allocate([DeskDay {
            id: bson::oid::ObjectId::new(),
            desk: 7,
            day: 20250820,
            hours: 0,
        }])
        .await
        .unwrap();
    slots.book_range(7_i64, 20250820, 9..12).await.unwrap();
    slots.book_range(7_i64, 20250820, 23..24).await.unwrap();
    let err = slots.book_range(7_i64, 20250820, 11..13).await.unwrap_err();
    assert!(matches!(err, Error::AlreadyBooked { .. }), "{err}");
    let stored = db
        .collection::<Document>("desk_days")
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get("hours"),
        Some(&Bson::Int32(0b1000_0000_0000_1110_0000_0000))
    );
    assert_eq!(
        slots.free_ranges(7_i64, 20250820).await.unwrap(),
        vec![0..9, 12..23]
    );
    // A bitmap written as a string behind the model's back: no booking can match it, and the
    // error says so instead of "already booked".
    db.collection::<Document>("desk_days")
        .update_one(doc! {}, doc! { "$set": { "hours": "none" } })
        .await
        .unwrap();
    let err = slots.book_range(7_i64, 20250820, 0..1).await.unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
}

/// A xorshift generator: repeatable random ranges without a dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[tokio::test]
async fn sixteen_tasks_booking_half_hours_never_overlap_and_the_bits_are_their_union() {
    let db = setup("prealloc_bitmap").await;
    let slots = MeetingDay::collection(&db).slots();
    slots
        .allocate([MeetingDay {
            id: bson::oid::ObjectId::new(),
            room: "会议室A".into(),
            day: "2025-08-20".into(),
            half_hours: 0,
        }])
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16u64)
        .map(|t| {
            let slots = slots.clone();
            tokio::spawn(async move {
                let mut state = 0x9E37_79B9_7F4A_7C15 ^ (t + 1);
                let mut won: Vec<Range<u32>> = Vec::new();
                for _ in 0..12 {
                    let start = (next(&mut state) % 46) as u32;
                    let len = 1 + (next(&mut state) % 4) as u32;
                    let range = start..(start + len).min(48);
                    match slots
                        .book_range("会议室A", "2025-08-20", range.clone())
                        .await
                    {
                        Ok(()) => won.push(range),
                        Err(Error::AlreadyBooked { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                won
            })
        })
        .collect();
    let mut won: Vec<Range<u32>> = Vec::new();
    for t in tasks {
        won.extend(t.await.unwrap());
    }
    assert!(!won.is_empty());
    let mut taken = HashSet::new();
    for r in &won {
        for k in r.clone() {
            assert!(taken.insert(k), "half hour {k} was booked twice");
        }
    }
    let stored = slots
        .get("会议室A", "2025-08-20")
        .await
        .unwrap()
        .unwrap()
        .half_hours;
    let union: i64 = taken.iter().fold(0, |m, k| m | (1 << k));
    assert_eq!(stored, union);
    // Availability as ranges, the complement of what was booked.
    let free = slots.free_ranges("会议室A", "2025-08-20").await.unwrap();
    let free_count: u32 = free.iter().map(|r| r.end - r.start).sum();
    assert_eq!(free_count as usize, 48 - taken.len());
    // Freeing a booked range, then freeing it again (not booked any more).
    let first = won[0].clone();
    slots
        .free_range("会议室A", "2025-08-20", first.clone())
        .await
        .unwrap();
    let err = slots
        .free_range("会议室A", "2025-08-20", first.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
    // Outside the 48 half hours, or an empty range: refused before anything is sent.
    for bad in [40..49, 5..5] {
        let err = slots
            .book_range("会议室A", "2025-08-20", bad)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
    }
    let err = slots
        .book_range("会议室B", "2025-08-20", 0..2)
        .await
        .unwrap_err();
    assert!(err.is_not_allocated(), "{err}");
    // A whole-slot booking on a bitmap-only grid says what to use instead.
    let err = slots.book("会议室A", "2025-08-20", "x").await.unwrap_err();
    assert!(
        matches!(err, Error::Unsupported { ref operation, .. } if operation == "book"),
        "{err}"
    );
    assert!(err.to_string().contains("book_range"), "{err}");
}

#[tokio::test]
async fn a_rolling_allocator_keeps_days_ahead_and_stops_cleanly() {
    let db = setup("prealloc_rolling").await;
    let slots = RoomDay::collection(&db).slots();
    // Each run allocates the next 7 days from a moving "today" (one day later per run).
    let today = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let mut allocator = {
        let today = today.clone();
        slots.allocate_every(Duration::from_millis(20), move || {
            let start = today.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (start..start + 7).map(|d| free("101", d)).collect()
        })
    };
    let first = allocator.next().await.unwrap().unwrap();
    assert_eq!((first.inserted, first.existing), (7, 0));
    let second = allocator.next().await.unwrap().unwrap();
    assert_eq!((second.inserted, second.existing), (1, 6));
    let stopped = allocator.stop().await;
    assert!(stopped.runs >= 2);
    assert!(stopped.unread.iter().all(Result::is_ok));
    let runs = today.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(stopped.runs as i64, runs);
    // Every day from 0 to the last run's seventh, once each.
    let stored = all(&db, "room_days").await;
    assert_eq!(stored.len() as i64, runs - 1 + 7);
}

#[tokio::test]
async fn allocating_without_the_unique_index_is_refused() {
    let db = test_db("prealloc_no_index").await;
    let err = RoomDay::collection(&db)
        .slots()
        .allocate(grid())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::CollectionConflict { .. }), "{err}");
    assert!(
        err.to_string().contains("pattern_runtime::sync(&db)"),
        "{err}"
    );
    assert!(all(&db, "room_days").await.is_empty());
}

/// A grid bound to the caller's transaction reads in it: `get`, `available` and `free_ranges`
/// see the transaction's own bookings; no handle outside it sees them before the commit.
#[tokio::test]
async fn a_bound_slots_reads_its_transactions_writes() {
    let db = setup("prealloc_in_transaction").await;
    let rooms = RoomDay::collection(&db).slots();
    rooms
        .allocate((0..3).map(|d| free("room0", d)))
        .await
        .unwrap();
    let meetings = MeetingDay::collection(&db).slots();
    meetings
        .allocate([MeetingDay {
            id: bson::oid::ObjectId::new(),
            room: "m1".into(),
            day: "2025-08-20".into(),
            half_hours: 0,
        }])
        .await
        .unwrap();
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound_rooms = RoomDay::collection(&db).in_transaction(&tx).slots();
    let bound_meetings = MeetingDay::collection(&db).in_transaction(&tx).slots();
    bound_rooms.book("room0", day(0), "alice").await.unwrap();
    bound_meetings
        .book_range("m1", "2025-08-20", 10..20)
        .await
        .unwrap();

    // Every read of the bound grids sees the transaction's own bookings...
    let slot = bound_rooms.get("room0", day(0)).await.unwrap().unwrap();
    assert_eq!(slot.booked_by.as_deref(), Some("alice"));
    let dates = |found: Vec<RoomDay>| found.into_iter().map(|s| s.date).collect::<Vec<_>>();
    assert_eq!(
        dates(
            bound_rooms
                .available("room0", day(0), day(3))
                .await
                .unwrap()
        ),
        [day(1), day(2)]
    );
    assert_eq!(
        bound_meetings
            .free_ranges("m1", "2025-08-20")
            .await
            .unwrap(),
        vec![0..10, 20..48]
    );

    // ... which no handle outside it sees before the commit.
    assert_eq!(
        dates(rooms.available("room0", day(0), day(3)).await.unwrap()),
        [day(0), day(1), day(2)]
    );
    assert_eq!(
        meetings.free_ranges("m1", "2025-08-20").await.unwrap(),
        vec![0..48]
    );
    tx.abort().await.unwrap();
    // Aborted: nothing was booked.
    assert!(rooms
        .get("room0", day(0))
        .await
        .unwrap()
        .unwrap()
        .booked_by
        .is_none());
    assert_eq!(
        meetings.free_ranges("m1", "2025-08-20").await.unwrap(),
        vec![0..48]
    );
}

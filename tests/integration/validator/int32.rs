//! `i32` counts, sums and versions under strict validators: outlier counts, approximate and
//! batched counters, computed counts and sums, subset counters and versions stay `int32` through
//! every write; a value past `i32::MAX` is refused with nothing written.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{approximation::Random, At, Error, Fields, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

/// Every count an `i32`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_counters")]
struct NvcCounter {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 2, overflow = "nvc_counter_items", capacity = 2, flag = big, count = item_count)]
    items: Vec<String>,
    big: bool,
    item_count: i32,
    #[approximate(batched, threshold = 3)]
    batched: i32,
    #[approximate(sampled, p = 0.3)]
    sampled: i32,
    #[approximate(sharded, shards = 2)]
    sharded: i32,
    #[computed(count = NvcTick, by = counter_id)]
    ticks: i32,
    #[computed(sum = NvcTick.weight, by = counter_id)]
    weight_sum: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nvc_ticks")]
struct NvcTick {
    #[serde(rename = "_id")]
    id: i64,
    counter_id: i64,
    weight: i32,
}

/// A subset with an `i32` summary count and sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_shelves")]
struct NvcShelf {
    #[serde(rename = "_id")]
    id: i64,
    #[subset(limit = 2, sort(at = -1), full = NvcVolume, parent = shelf_id)]
    recent: Vec<NvcVolumeExcerpt>,
    #[summary(count = recent)]
    n: i32,
    #[summary(sum = recent.pages)]
    pages: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_volumes")]
struct NvcVolume {
    #[serde(rename = "_id")]
    id: i64,
    shelf_id: i64,
    pages: i32,
    at: DateTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcVolumeExcerpt {
    volume_id: i64,
    pages: i32,
    at: DateTime,
}

impl From<&NvcVolume> for NvcVolumeExcerpt {
    fn from(v: &NvcVolume) -> Self {
        NvcVolumeExcerpt {
            volume_id: v.id,
            pages: v.pages,
            at: v.at,
        }
    }
}

fn counter(id: i64) -> NvcCounter {
    NvcCounter {
        id,
        items: vec![],
        big: false,
        item_count: 0,
        batched: 0,
        sampled: 0,
        sharded: 0,
        ticks: 0,
        weight_sum: 0,
    }
}

#[track_caller]
fn assert_int32(d: &Document, field: &str, value: i32) {
    match d.get(field) {
        Some(Bson::Int32(v)) => assert_eq!(*v, value, "{field} in {d}"),
        other => panic!("{field} should be an Int32 {value}: {other:?} in {d}"),
    }
}

// ---------------------------------------------------------------------------------------------
// 2. i32 counts under strict validators
// ---------------------------------------------------------------------------------------------

/// A counter document with 5 items pushed (2 embedded, 3 in 2 overflow documents).
async fn counter_with_items(
    db: &mongodb::Database,
) -> pattern_runtime::Outlier<NvcCounter, String> {
    pattern_runtime::sync(db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let items = NvcCounter::collection(db).outlier(NvcCounter::FIELDS.items);
    items
        .push_many(1_i64, vec!["a".into(), "b".into(), "c".into()])
        .await
        .unwrap();
    items.push(1_i64, "d".to_owned()).await.unwrap();
    items.push(1_i64, "e".to_owned()).await.unwrap();
    items
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_pushes() {
    let db = test_db("nvc_i32_outlier_push").await;
    let items = counter_with_items(&db).await;
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
    assert_eq!(count(&db, "nvc_counter_items", doc! {}).await, 2);
    assert_eq!(items.count(1_i64).await.unwrap(), 5);
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_remove() {
    let db = test_db("nvc_i32_outlier_remove").await;
    let items = counter_with_items(&db).await;
    assert_eq!(items.remove(1_i64, &"c".to_owned()).await.unwrap(), 1);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 4);
    assert_eq!(items.items(1_i64).await.unwrap(), ["a", "b", "d", "e"]);
}

#[tokio::test]
async fn i32_outlier_count_stays_int32_through_rebuild_and_repair() {
    let db = test_db("nvc_i32_outlier_rebuild").await;
    let items = counter_with_items(&db).await;
    let drift = || async {
        update_raw(
            &db,
            "nvc_counters",
            doc! { "_id": 1_i64 },
            doc! { "$set": { "itemCount": 40 } },
        )
        .await
        .unwrap()
    };
    drift().await;
    items.rebuild(1_i64).await.unwrap();
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
    drift().await;
    assert_eq!(items.repair().await.unwrap().repaired, 1);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "itemCount", 5);
}

#[tokio::test]
async fn i32_approximate_counters_stay_int32() {
    let db = test_db("nvc_i32_counters").await;
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let batched = NvcCounter::collection(&db).counter(NvcCounter::FIELDS.batched);
    batched.add(1_i64, 2).await.unwrap();
    batched.add(1_i64, 2).await.unwrap();
    batched.add(1_i64, 1).await.unwrap();
    batched.flush().await.unwrap();
    let sampled = NvcCounter::collection(&db)
        .counter(NvcCounter::FIELDS.sampled)
        .with_random(Random::seeded(7));
    let mut wrote = 0;
    for _ in 0..50 {
        if sampled.add(1_i64).await.unwrap() {
            wrote += 1;
        }
    }
    assert!(wrote > 0);
    let sharded = NvcCounter::collection(&db)
        .counter(NvcCounter::FIELDS.sharded)
        .of(1_i64);
    sharded.add(5).await.unwrap();
    sharded.add(-2).await.unwrap();
    sharded.add(4).await.unwrap();
    assert_eq!(sharded.snapshot().await.unwrap(), 7);
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "batched", 5);
    assert_int32(&d, "sharded", 7);
    match d.get("sampled") {
        Some(Bson::Int32(v)) => assert!((3 * wrote..=4 * wrote).contains(v), "{v} for {wrote}"),
        other => panic!("sampled should stay an Int32: {other:?}"),
    }
}

#[tokio::test]
async fn i32_computed_count_and_sum_stay_int32() {
    let db = test_db("nvc_i32_computed").await;
    pattern_runtime::sync(&db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let ticks = NvcTick::collection(&db);
    for (id, weight) in [(1, 10), (2, 20), (3, 30)] {
        ticks
            .insert(&NvcTick {
                id,
                counter_id: 1,
                weight,
            })
            .await
            .unwrap();
    }
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 3);
    assert_int32(&d, "weightSum", 60);
    ticks
        .update(2_i64, doc! { "$set": { "weight": 25 } })
        .await
        .unwrap();
    ticks
        .replace(&NvcTick {
            id: 3,
            counter_id: 1,
            weight: 1,
        })
        .await
        .unwrap();
    ticks.delete(1_i64).await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    // Drift written around the toolkit, then recomputed: still Int32.
    update_raw(
        &db,
        "nvc_counters",
        doc! { "_id": 1_i64 },
        doc! { "$set": { "ticks": 99, "weightSum": 99 } },
    )
    .await
    .unwrap();
    let computed = NvcCounter::collection(&db).computed();
    let report = computed.check().await.unwrap();
    assert_eq!(report.findings.len(), 2, "{report}");
    computed.rebuild(1_i64).await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    update_raw(
        &db,
        "nvc_counters",
        doc! { "_id": 1_i64 },
        doc! { "$set": { "ticks": 0, "weightSum": 0 } },
    )
    .await
    .unwrap();
    computed.repair().await.unwrap();
    let d = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&d, "ticks", 2);
    assert_int32(&d, "weightSum", 26);
    assert!(computed.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn an_i32_sum_past_i32_max_is_refused_and_nothing_is_written() {
    let db = test_db("nvc_i32_overflow").await;
    pattern_runtime::sync(&db)
        .models(&[NvcCounter::SCHEMA])
        .await
        .unwrap();
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let ticks = NvcTick::collection(&db);
    ticks
        .insert(&NvcTick {
            id: 1,
            counter_id: 1,
            weight: i32::MAX - 5,
        })
        .await
        .unwrap();
    let before = one(&db, "nvc_counters", 1_i64).await;
    assert_int32(&before, "weightSum", i32::MAX - 5);
    let result = ticks
        .insert(&NvcTick {
            id: 2,
            counter_id: 1,
            weight: 10,
        })
        .await;
    assert!(
        matches!(
            result,
            Err(Error::ValidationFailed { .. } | Error::InvalidValue { .. })
        ),
        "{result:?}"
    );
    assert_eq!(
        count(&db, "nvc_ticks", doc! {}).await,
        1,
        "the tick is not written"
    );
    assert_eq!(one(&db, "nvc_counters", 1_i64).await, before);
}

#[tokio::test]
async fn i32_subset_count_and_sum_stay_int32() {
    let db = test_db("nvc_i32_subset").await;
    pattern_runtime::sync(&db)
        .models(&[NvcShelf::SCHEMA])
        .await
        .unwrap();
    NvcShelf::collection(&db)
        .raw()
        .insert_one(NvcShelf {
            id: 1,
            recent: vec![],
            n: 0,
            pages: 0,
        })
        .await
        .unwrap();
    let subset = NvcShelf::collection(&db).subset(NvcShelf::FIELDS.recent);
    let vol = |id: i64, pages: i32| NvcVolume {
        id,
        shelf_id: 1,
        pages,
        at: DateTime::from_millis(H0 + id * 1000),
    };
    subset.push(1_i64, vol(1, 100)).await.unwrap();
    subset
        .push_many(1_i64, vec![vol(2, 200), vol(3, 300)])
        .await
        .unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 3);
    assert_int32(&d, "pages", 600);
    assert_eq!(d.get_array("recent").unwrap().len(), 2);
    subset.remove(1_i64, 3_i64).await.unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 2);
    assert_int32(&d, "pages", 300);
    subset.rebuild(1_i64).await.unwrap();
    let d = one(&db, "nvc_shelves", 1_i64).await;
    assert_int32(&d, "n", 2);
    assert_int32(&d, "pages", 300);
}

#[tokio::test]
async fn an_i32_version_stays_int32() {
    let db = test_db("nvc_i32_version").await;
    pattern_runtime::sync(&db)
        .models(&[NvcNote::SCHEMA])
        .await
        .unwrap();
    let notes = NvcNote::collection(&db);
    let mut n = NvcNote {
        id: 1,
        version: 0,
        text: "a".into(),
        hits: 0,
    };
    notes.insert(&mut n).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 1);
    n.text = "b".into();
    notes.replace(&mut n).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 2);
    notes
        .update(At(1_i64, 2), doc! { "$inc": { "hits": 1 } })
        .await
        .unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 3);
    notes.modify(1_i64, 3, |n| n.hits += 1).await.unwrap();
    assert_int32(&one(&db, "nvc_notes", 1_i64).await, "version", 4);
    notes.revert(1_i64, 1).await.unwrap();
    let d = one(&db, "nvc_notes", 1_i64).await;
    assert_int32(&d, "version", 5);
    assert_int32(&d, "hits", 0);
    assert_eq!(notes.history(1_i64).await.unwrap().len(), 4);
    notes.delete(1_i64).await.unwrap();
    assert_eq!(notes.history(1_i64).await.unwrap().len(), 5);
}

#[tokio::test]
async fn an_i32_batched_count_past_i32_max_is_refused_and_kept_pending() {
    let db = test_db("nvc_i32_batched_max").await;
    NvcCounter::collection(&db)
        .raw()
        .insert_one(counter(1))
        .await
        .unwrap();
    let batched = NvcCounter::collection(&db).counter(NvcCounter::FIELDS.batched);
    batched.add(1_i64, i32::MAX as i64).await.unwrap();
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "batched", i32::MAX);
    refused(batched.add(1_i64, 5).await, "batched");
    assert_eq!(batched.pending(), 5, "a failed write puts its count back");
    refused(batched.flush().await, "batched");
    assert_eq!(batched.pending(), 5);
    assert_int32(&one(&db, "nvc_counters", 1_i64).await, "batched", i32::MAX);
    // Counted back down, the next flush writes.
    batched.add(1_i64, -5).await.unwrap();
    batched.add(1_i64, -3).await.unwrap();
    batched.flush().await.unwrap();
    assert_int32(
        &one(&db, "nvc_counters", 1_i64).await,
        "batched",
        i32::MAX - 3,
    );
}

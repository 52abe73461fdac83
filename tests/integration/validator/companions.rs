//! Validators for the documents patterns keep beside a model's own: a `#[versioned]` history's
//! revisions, an `#[outlier]`'s overflow documents, an `#[approximate(sharded)]` field's
//! shards, and a `#[bucket]` measurement's bucket documents (slots and rollup series included).
//! Their documented shape, and the toolkit's own writes passing them at `strict`/`error` with
//! other fields forbidden, up to their caps.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{
    approximation::Random,
    validator::{sync_validators, ValidatorState},
    At, Error, Measurement, Model,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

/// A `slots` series: one document per sensor and minute, `celsius` a map of seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "co_minutes", key = sensor, time = at, slots = "1s", span = "1m")]
struct CoSecond {
    sensor: String,
    at: DateTime,
    celsius: f64,
}

/// A `rollup` series: one document per sensor and minute, with the count, sum and extremes of
/// `celsius` and the count and sum of `hits` (an integer, often absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "co_minute_sums", key = sensor, time = at, rollup, span = "1m", summary(celsius(min, max, sum), hits(sum)))]
struct CoMinuteSum {
    sensor: String,
    at: DateTime,
    celsius: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    hits: Option<i32>,
}

fn co_article(id: i64) -> CoArticle {
    CoArticle {
        id,
        version: 0,
        title: format!("article {id}"),
    }
}

fn co_star(id: i64) -> CoStar {
    CoStar {
        id,
        name: format!("star {id}"),
        posts: Vec::new(),
        overflowing: false,
        post_count: 0,
        views: 0,
    }
}

#[tokio::test]
async fn every_companion_collection_gets_its_validator() {
    let db = test_db_unvalidated("co_sync").await;
    let report = sync_validators(&db, &MODELS, &closed()).await.unwrap();
    let got: Vec<(&str, &str, bool)> = report
        .models
        .iter()
        .map(|s| {
            (
                s.collection,
                s.documents,
                matches!(s.state, ValidatorState::Created),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("co_articles", "documents", true),
            ("co_article_revisions", "revisions", true),
            ("co_stars", "documents", true),
            ("co_stars.views", "counter shards", true),
            ("co_star_posts", "overflow documents", true),
            ("co_readings", "documents", true),
        ]
    );
    // Twice: nothing to do.
    let again = sync_validators(&db, &MODELS, &closed()).await.unwrap();
    assert!(
        again
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Unchanged)),
        "{again:?}"
    );
}

#[tokio::test]
async fn the_patterns_writes_pass_their_companions_validators() {
    let db = test_db_unvalidated("co_writes").await;
    pattern_runtime::sync(&db)
        .models(&[CoArticle::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[CoStar::SCHEMA])
        .await
        .unwrap();
    sync_validators(&db, &MODELS, &closed()).await.unwrap();

    // Revisions: saves, an update and a delete, each archiving the old document.
    let articles = CoArticle::collection(&db);
    let mut a = co_article(1);
    articles.insert(&mut a).await.unwrap();
    a.title = "renamed".into();
    articles.replace(&mut a).await.unwrap();
    a.title = "again".into();
    articles.replace(&mut a).await.unwrap();
    let mut b = co_article(2);
    articles.insert(&mut b).await.unwrap();
    articles.delete(2_i64).await.unwrap();
    assert_eq!(articles.history(1_i64).await.unwrap().len(), 2);
    CoStar::collection(&db)
        .raw()
        .insert_one(co_star(1))
        .await
        .unwrap();

    // Overflow documents: 2 in the main document, then documents of at most 3.
    let posts = CoStar::collection(&db).outlier(CoStar::FIELDS.posts);
    let items: Vec<CoPost> = (0..9)
        .map(|n| CoPost {
            n,
            text: format!("post {n}"),
        })
        .collect();
    posts.push_many(1_i64, items[..4].to_vec()).await.unwrap();
    for item in &items[4..] {
        posts.push(1_i64, item.clone()).await.unwrap();
    }
    let overflow = db
        .collection::<Document>("co_star_posts")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(overflow, 3, "7 items past the limit of 2, 3 to a document");

    // Counter shards.
    let views = CoStar::collection(&db)
        .counter(CoStar::FIELDS.views)
        .of(1_i64);
    for _ in 0..6 {
        views.add(2).await.unwrap();
    }
    assert_eq!(views.read().await.unwrap(), 12);

    // Buckets: 10 measurements of one sensor in one hour, 4 to a bucket.
    let series = CoReading::series(&db);
    let readings: Vec<CoReading> = (0..10)
        .map(|i| CoReading {
            sensor: "s1".into(),
            at: DateTime::from_millis(3_600_000 + i * 1000),
            celsius: 20.0 + i as f64,
            note: (i % 2 == 0).then(|| "even".to_owned()),
        })
        .collect();
    series.insert_many(&readings[..7]).await.unwrap();
    for r in &readings[7..] {
        series.insert(r).await.unwrap();
    }
    let buckets = db
        .collection::<Document>("co_readings")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(buckets, 3, "10 measurements, 4 to a bucket");
}

#[tokio::test]
async fn documents_written_around_the_toolkit_are_refused_naming_the_field() {
    let db = test_db_unvalidated("co_refused").await;
    sync_validators(&db, &MODELS, &closed()).await.unwrap();
    let now = DateTime::now();

    // A revision whose version is text, one whose docId is not the model's id type.
    let revision = |doc_id: bson::Bson, version: bson::Bson| {
        doc! { "docId": doc_id, "version": version, "snapshot": {}, "archivedAt": now }
    };
    insert_raw(
        &db,
        "co_article_revisions",
        revision(1_i64.into(), 1_i64.into()),
    )
    .await
    .unwrap();
    refused(
        insert_raw(
            &db,
            "co_article_revisions",
            revision(1_i64.into(), "2".into()),
        )
        .await,
        "version",
    );
    refused(
        insert_raw(
            &db,
            "co_article_revisions",
            revision("one".into(), 2_i64.into()),
        )
        .await,
        "docId",
    );

    // An overflow document of too many items, and one whose item is of the wrong shape.
    let parent = CoStar::SCHEMA
        .spec::<pattern_runtime::outlier::OutlierSpec>()
        .map(|o| o.parent())
        .unwrap();
    let post = |n: i32| doc! { "n": n, "text": "t" };
    let ok = doc! { "_id": "ok", parent: 1_i64, "seq": 1, "posts": [post(1), post(2), post(3)] };
    insert_raw(&db, "co_star_posts", ok.clone()).await.unwrap();
    let mut four = ok.clone();
    four.insert("_id", "four");
    four.insert("posts", vec![post(1), post(2), post(3), post(4)]);
    refused(insert_raw(&db, "co_star_posts", four).await, "posts");
    let mut wrong = ok.clone();
    wrong.insert("_id", "wrong");
    wrong.insert("posts", vec![doc! { "n": "one", "text": "t" }]);
    refused(insert_raw(&db, "co_star_posts", wrong).await, "posts.0.n");

    // A shard whose count is text.
    refused(
        insert_raw(
            &db,
            "co_stars.views",
            doc! { "_id": { "of": 1_i64, "shard": 0 }, "count": "many" },
        )
        .await,
        "count",
    );

    // A bucket of more measurements than `max_count`, one missing its window, one whose
    // measurement has a field the struct does not declare.
    let m = |i: i64| doc! { "at": DateTime::from_millis(i), "celsius": 1.5, "note": null };
    let bucket = |items: Vec<Document>| {
        doc! {
            "sensor": "s1",
            "start": DateTime::from_millis(0),
            "end": DateTime::from_millis(3_600_000),
            "first": DateTime::from_millis(0),
            "last": DateTime::from_millis(0),
            "count": items.len() as i32,
            "measurements": items,
        }
    };
    insert_raw(&db, "co_readings", bucket(vec![m(0), m(1)]))
        .await
        .unwrap();
    let mut five = bucket((0..5).map(m).collect());
    five.insert("count", 4);
    refused(insert_raw(&db, "co_readings", five).await, "measurements");
    let mut no_window = bucket(vec![m(0)]);
    no_window.remove("start");
    refused(insert_raw(&db, "co_readings", no_window).await, "start");
    let mut extra = m(0);
    extra.insert("humidity", 3);
    refused(
        insert_raw(&db, "co_readings", bucket(vec![extra])).await,
        "measurements.0.humidity",
    );
}

#[tokio::test]
async fn a_slots_series_writes_pass_and_a_bad_window_is_refused() {
    let db = test_db_unvalidated("co_slots").await;
    sync_validators(&db, &[CoSecond::SCHEMA], &closed())
        .await
        .unwrap();
    let series = CoSecond::series(&db);
    let seconds: Vec<CoSecond> = (0..90)
        .map(|s| CoSecond {
            sensor: "s1".into(),
            at: DateTime::from_millis(60_000 * 10 + s * 1000),
            celsius: s as f64 / 2.0,
        })
        .collect();
    series.insert_many(&seconds).await.unwrap();
    series.insert(&seconds[0]).await.unwrap();
    let windows = db
        .collection::<Document>("co_minutes")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(windows, 2, "90 seconds over two minutes");
    refused(
        insert_raw(
            &db,
            "co_minutes",
            doc! { "sensor": "s1", "at": DateTime::from_millis(0), "celsius": 21.5 },
        )
        .await,
        "celsius",
    );
    refused(
        insert_raw(
            &db,
            "co_minutes",
            doc! { "sensor": 7, "at": DateTime::from_millis(0) },
        )
        .await,
        "sensor",
    );
}

#[tokio::test]
async fn a_rollup_series_writes_pass_and_a_bad_window_is_refused() {
    let db = test_db_unvalidated("co_rollup").await;
    let report = sync_validators(&db, &[CoMinuteSum::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Created),
        "{report:?}"
    );
    let series = CoMinuteSum::series(&db);
    // Seconds of two minutes; `hits` only on every third, and past `i32::MAX` in sum.
    let seconds: Vec<CoMinuteSum> = (0..90)
        .map(|s| CoMinuteSum {
            sensor: "s1".into(),
            at: DateTime::from_millis(60_000 * 10 + s * 1000),
            celsius: s as f64 / 2.0,
            hits: (s % 3 == 0).then_some(i32::MAX / 4),
        })
        .collect();
    series.insert_many(&seconds[..45]).await.unwrap();
    for s in &seconds[45..] {
        series.insert(s).await.unwrap();
    }
    let windows: Vec<Document> = collect(&db, "co_minute_sums").await;
    assert_eq!(windows.len(), 2, "90 seconds over two minutes");
    let first = windows
        .iter()
        .find(|w| w.get_datetime("at").ok() == Some(&DateTime::from_millis(600_000)))
        .unwrap();
    assert_eq!(first.get_i32("celsius_num").unwrap(), 60, "{first}");
    assert_eq!(first.get_i32("hits_num").unwrap(), 20, "{first}");
    // 20 times a quarter of `i32::MAX`: widened to a long, which the validator allows.
    assert_eq!(
        first.get_i64("hits_sum").unwrap(),
        20 * i64::from(i32::MAX / 4),
        "{first}"
    );
    assert_eq!(first.get_f64("celsius_max").unwrap(), 29.5, "{first}");
    let summary = series
        .summary(
            "s1".to_owned(),
            DateTime::from_millis(600_000),
            DateTime::from_millis(720_000),
        )
        .await
        .unwrap();
    assert_eq!(summary.count(), 90);
    // Written around the toolkit: a count that is not a number, a missing count, a sum of the
    // wrong type, a field the rollup does not keep.
    let at = DateTime::from_millis(0);
    refused(
        insert_raw(
            &db,
            "co_minute_sums",
            doc! { "sensor": "s1", "at": at, "celsius_num": "many", "hits_num": 0 },
        )
        .await,
        "celsius_num",
    );
    refused(
        insert_raw(
            &db,
            "co_minute_sums",
            doc! { "sensor": "s1", "at": at, "hits_num": 0 },
        )
        .await,
        "celsius_num",
    );
    refused(
        insert_raw(
            &db,
            "co_minute_sums",
            doc! { "sensor": "s1", "at": at, "celsius_num": 1, "hits_num": 1, "hits_sum": 1.5 },
        )
        .await,
        "hits_sum",
    );
    refused(
        insert_raw(
            &db,
            "co_minute_sums",
            doc! { "sensor": "s1", "at": at, "celsius_num": 1, "hits_num": 0, "celsius": 3.0 },
        )
        .await,
        "celsius",
    );
}

async fn collect(db: &mongodb::Database, collection: &str) -> Vec<Document> {
    use futures_util::TryStreamExt;
    db.collection::<Document>(collection)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// A measurement with a sparse field, an `i32` key and summary, and a field left unchecked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "nvc_sparse", key = probe, time = at, max_count = 2, span = "1d", summary(level(min, max, sum)))]
struct NvcSparse {
    probe: i32,
    at: DateTime,
    level: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[json_schema(skip)]
    any: Bson,
}

/// An outlier with a small byte budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_blobs")]
struct NvcBlob {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 10, overflow = "nvc_blob_parts", capacity = 4, max_bytes = 2048, flag = over, count = n)]
    parts: Vec<String>,
    over: bool,
    n: i64,
}

// ---------------------------------------------------------------------------------------------
// 1. Companion validators: declared shapes, the toolkit's writes, writes around it
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn companion_validators_are_created_with_their_documented_shape() {
    let db = test_db_unvalidated("nvc_companion_shapes").await;
    let models = [NvcArticle::SCHEMA, NvcStar::SCHEMA, NvcReading::SCHEMA];
    let report = sync_validators(&db, &models, &closed()).await.unwrap();
    let mut got: Vec<(&str, &str)> = report
        .models
        .iter()
        .map(|s| (s.collection, s.documents))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("nvc_article_revisions", "revisions"),
            ("nvc_articles", "documents"),
            ("nvc_readings", "documents"),
            ("nvc_star_posts", "overflow documents"),
            ("nvc_stars", "documents"),
            ("nvc_stars.views", "counter shards"),
        ]
    );
    assert!(
        report
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Created)),
        "{report:?}"
    );
    assert_eq!(report.drifted().count(), 0);

    // Revisions: {_id: objectId, docId: <the model's _id>, version, snapshot: object,
    // archivedAt: date, deleted?: bool}.
    let v = declared(NvcArticle::SCHEMA, "nvc_article_revisions");
    let s = js(&v);
    let req = required(s);
    for f in ["docId", "version", "snapshot", "archivedAt"] {
        assert!(req.contains(&f.to_owned()), "{f} required: {s}");
    }
    assert!(!req.contains(&"deleted".to_owned()), "{s}");
    assert_eq!(types(at(s, "docId")), ["string"], "{s}");
    assert_eq!(types(at(s, "_id")), ["objectId"], "{s}");
    assert_eq!(types(at(s, "archivedAt")), ["date"], "{s}");
    assert_eq!(types(at(s, "snapshot")), ["object"], "{s}");
    assert_eq!(types(at(s, "deleted")), ["bool"], "{s}");

    // Overflow documents: {_id: string (or an objectId where two parents' ids read alike),
    // <parent>: <the model's _id>, seq, posts: [at most capacity items], full?: bool}.
    let v = declared(NvcStar::SCHEMA, "nvc_star_posts");
    let s = js(&v);
    assert_eq!(types(at(s, "_id")), ["string", "objectId"], "{s}");
    assert_eq!(types(at(s, "ownerId")), ["string"], "{s}");
    assert_eq!(num(at(s, "posts").get("maxItems")), Some(3), "{s}");
    assert!(
        types(at(s, "posts.[].n")).contains(&"int".to_owned()),
        "{s}"
    );
    assert_eq!(types(at(s, "full")), ["bool"], "{s}");
    let req = required(s);
    assert!(
        req.contains(&"ownerId".to_owned()) && req.contains(&"seq".to_owned()),
        "{s}"
    );
    assert!(!req.contains(&"full".to_owned()), "{s}");

    // Shards: {_id: {of: <the model's _id>, shard}, count}.
    let v = declared(NvcStar::SCHEMA, "nvc_stars.views");
    let s = js(&v);
    assert_eq!(types(at(s, "_id.of")), ["string"], "{s}");
    assert!(required(s).contains(&"count".to_owned()), "{s}");

    // Buckets: count 0..=max_count, at most max_count measurements without their keys.
    let v = declared(NvcReading::SCHEMA, "nvc_readings");
    let s = js(&v);
    assert_eq!(num(at(s, "count").get("maximum")), Some(3), "{s}");
    assert_eq!(num(at(s, "count").get("minimum")), Some(0), "{s}");
    assert_eq!(num(at(s, "measurements").get("maxItems")), Some(3), "{s}");
    let m = at(s, "measurements.[]");
    assert_eq!(types(at(m, "at")), ["date"], "{m}");
    assert_eq!(
        types(at(m, "unit")),
        ["string"],
        "declared by #[json_schema]: {m}"
    );
    assert!(
        try_at(m, "site").is_none() && try_at(m, "device").is_none(),
        "{m}"
    );
    for f in [
        "site",
        "device",
        "start",
        "end",
        "first",
        "last",
        "count",
        "measurements",
    ] {
        assert!(required(s).contains(&f.to_owned()), "{f} required: {s}");
    }
    // Twice: nothing to do.
    let again = sync_validators(&db, &models, &closed()).await.unwrap();
    assert!(
        again
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Unchanged)),
        "{again:?}"
    );
}

#[tokio::test]
async fn versioned_writes_pass_the_strict_revision_validator() {
    let db = test_db_unvalidated("nvc_versioned_writes").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let report = sync_validators(&db, &[NvcArticle::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        report
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Created | ValidatorState::Applied)),
        "{report:?}"
    );
    let articles = NvcArticle::collection(&db);
    for id in ["a", "b", "用户🙂", ""] {
        let mut a = article(id);
        articles.insert(&mut a).await.unwrap();
        assert_eq!(a.version, 1);
        a.title = "v2".into();
        assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(2));
        a.tags = vec!["x".into(), "y".into(), "z".into()];
        assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(3));
        let v = articles
            .update(
                At(id, 3),
                doc! { "$set": { "body": "text", "meta.big": 9_i64 } },
            )
            .await
            .unwrap();
        assert_eq!(v.version, Some(4));
        let saved = articles.modify(id, 3, |a| a.meta.big += 1).await.unwrap();
        assert_eq!((saved.version, saved.meta.big), (5, 10));
        assert_eq!(articles.revert(id, 4).await.unwrap(), 6);
        let history = articles.history(id).await.unwrap();
        assert!(history.len() <= 2, "keep = 2: {}", history.len());
        assert_eq!(history[0].version, 5);
        assert_eq!(articles.revision(id, 4).await.unwrap().meta.big, 9);
    }
    articles.delete("b").await.unwrap();
    assert!(articles.get("b").await.unwrap().is_none());
    let history = articles.history("b").await.unwrap();
    assert!(history[0].deleted, "the delete archived the last version");
    assert_eq!(count(&db, "nvc_articles", doc! {}).await, 3);
}

#[tokio::test]
async fn a_deleted_versioned_document_inserted_again_can_be_saved() {
    let db = test_db("nvc_versioned_again").await;
    pattern_runtime::sync(&db)
        .models(&[NvcNote::SCHEMA])
        .await
        .unwrap();
    let notes = NvcNote::collection(&db);
    let mut n = NvcNote {
        id: 7,
        version: 0,
        text: "a".into(),
        hits: 0,
    };
    notes.insert(&mut n).await.unwrap();
    n.text = "b".into();
    notes.replace(&mut n).await.unwrap();
    notes.delete(7_i64).await.unwrap();
    // The same `_id` again: a new document at version 1.
    let mut again = NvcNote {
        id: 7,
        version: 0,
        text: "c".into(),
        hits: 0,
    };
    notes.insert(&mut again).await.unwrap();
    // The first life left revisions 1 and 2 (the deleted one): the second goes on at 3.
    assert_eq!(again.version, 3);
    again.text = "d".into();
    let saved = notes.replace(&mut again).await;
    assert!(saved.is_ok(), "the second life cannot be saved: {saved:?}");
    assert_eq!(again.version, 4);
    let history = notes.history(7_i64).await.unwrap();
    let versions: Vec<(i64, bool)> = history.iter().map(|r| (r.version, r.deleted)).collect();
    assert_eq!(
        versions,
        [(3, false), (2, true), (1, false)],
        "{versions:?}"
    );
    let current = notes.get(7_i64).await.unwrap().unwrap();
    assert_eq!((current.version, current.text.as_str()), (4, "d"));
}

#[tokio::test]
async fn outlier_writes_pass_the_strict_overflow_validator() {
    let db = test_db_unvalidated("nvc_outlier_writes").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    sync_validators(&db, &[NvcStar::SCHEMA, NvcOrder::SCHEMA], &closed())
        .await
        .unwrap();
    let stars = NvcStar::collection(&db);
    for id in ["a", "b", "用户🙂", ""] {
        stars.raw().insert_one(star(id)).await.unwrap();
    }
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("a", (0..4).map(post).collect())
        .await
        .unwrap();
    for n in 4..9 {
        posts.push("a", post(n)).await.unwrap();
    }
    posts
        .push_many("b", (0..20).map(post).collect())
        .await
        .unwrap();
    posts.push("用户🙂", post(0)).await.unwrap();
    posts
        .push_many("", (0..5).map(post).collect())
        .await
        .unwrap();
    assert_eq!(
        posts.items("a").await.unwrap(),
        (0..9).map(post).collect::<Vec<_>>()
    );
    assert_eq!(posts.count("a").await.unwrap(), 9);
    assert_eq!(posts.count("b").await.unwrap(), 20);
    assert_eq!(posts.items("").await.unwrap().len(), 5);
    // a: 2 embedded, then [2,3,4] [5,6,7] [8].
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "a" }).await,
        3
    );
    for d in dump(&db, "nvc_star_posts").await {
        assert!(d.get_array("posts").unwrap().len() <= 3, "{d}");
    }
    // Removals empty an overflow document (deleted), a rebuild rewrites count and flag.
    for n in [5, 6, 7] {
        assert_eq!(posts.remove("a", &post(n)).await.unwrap(), 1);
    }
    assert_eq!(posts.remove("a", &post(0)).await.unwrap(), 1);
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "a" }).await,
        2
    );
    let state = posts.state("a").await.unwrap();
    assert_eq!(
        posts.rebuild("a").await.unwrap().repaired,
        u64::from(!state.is_consistent())
    );
    assert_eq!(state.stored_count, 5);
    assert!(posts.state("a").await.unwrap().is_consistent());
    assert!(posts.check().await.unwrap().is_clean());
    assert_eq!(
        posts.items("a").await.unwrap(),
        [1, 2, 3, 4, 8].into_iter().map(post).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn sharded_counter_writes_pass_the_strict_shard_validator() {
    let db = test_db_unvalidated("nvc_shard_writes").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let stars = NvcStar::collection(&db);
    for id in ["a", "b", "$gt"] {
        stars.raw().insert_one(star(id)).await.unwrap();
        let views = NvcStar::collection(&db)
            .counter(NvcStar::FIELDS.views)
            .of(id);
        for n in 1..=5 {
            views.add(n).await.unwrap();
        }
        views.add(-2).await.unwrap();
        assert_eq!(views.read().await.unwrap(), 13);
        assert_eq!(views.snapshot().await.unwrap(), 13);
        assert_eq!(num(one(&db, "nvc_stars", id).await.get("views")), Some(13));
        let shards = count(&db, "nvc_stars.views", doc! { "_id.of": id }).await;
        assert!((1..=3).contains(&shards), "{shards} shards");
    }
    // A snapshot of a document that does not exist writes nothing.
    let ghost = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("ghost");
    assert!(matches!(
        ghost.snapshot().await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn bucket_writes_pass_the_strict_bucket_validator() {
    let db = test_db_unvalidated("nvc_bucket_writes").await;
    sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    let series = NvcReading::series(&db);
    let mut all = vec![];
    for site in ["north", "south"] {
        for device in [1_i64, i64::MAX] {
            for hour in 0..3 {
                for i in 0..7 {
                    all.push(reading(site, device, H0 + hour * HOUR + i * 1000));
                }
            }
        }
    }
    let (batch, singles) = all.split_at(all.len() / 2);
    let report = series.insert_many(batch).await.unwrap();
    assert_eq!(report.measurements, batch.len());
    for r in singles {
        series.insert(r).await.unwrap();
    }
    // A late measurement of the first window.
    let late = reading("north", 1, H0 + 500);
    series.insert(&late).await.unwrap();
    let buckets = dump(&db, "nvc_readings").await;
    let mut stored = 0;
    for b in &buckets {
        let n = b.get_array("measurements").unwrap().len();
        assert!(n <= 3, "{b}");
        assert_eq!(num(b.get("count")), Some(n as i64), "{b}");
        stored += n;
    }
    assert_eq!(stored, all.len() + 1);
    let got: Vec<NvcReading> = series
        .range(
            ("north".to_owned(), 1_i64),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 3 * HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(got.len(), 22);
    let summary = series
        .summary(
            ("south".to_owned(), i64::MAX),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 3 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(summary.count(), 21);
    assert_eq!(summary.sum(NvcReading::FIELDS.hits).unwrap(), Some(21));
}

#[tokio::test]
async fn split_overfull_writes_pass_the_strict_bucket_validator() {
    let db = test_db_unvalidated("nvc_bucket_split").await;
    // A bucket other code filled past the cap, written before the validator was installed.
    let items: Vec<Document> = (0..5).map(|i| m_doc(H0 + i * 1000)).collect();
    insert_raw(&db, "nvc_readings", bucket_doc(items))
        .await
        .unwrap();
    let report = sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    assert!(
        matches!(report.models[0].state, ValidatorState::Applied),
        "{report:?}"
    );
    let series = NvcReading::series(&db);
    let split = series.split_overfull().await.unwrap();
    assert_eq!(
        (split.buckets, split.new_buckets, split.moved),
        (1, 1, 2),
        "{split:?}"
    );
    assert!(split.left.is_empty());
    let buckets = dump(&db, "nvc_readings").await;
    assert_eq!(buckets.len(), 2);
    for b in &buckets {
        let n = b.get_array("measurements").unwrap().len();
        assert_eq!(num(b.get("count")), Some(n as i64), "{b}");
    }
    assert!(series.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn huge_batches_fill_many_companion_documents_within_their_caps() {
    let db = test_db("nvc_huge").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("big"))
        .await
        .unwrap();
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("big", (0..302).map(post).collect())
        .await
        .unwrap();
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "big" }).await,
        100
    );
    assert_eq!(
        posts.page("big", 150, 3).await.unwrap(),
        (150..153).map(post).collect::<Vec<_>>()
    );
    let series = NvcReading::series(&db);
    let many: Vec<NvcReading> = (0..300).map(|i| reading("bulk", 1, H0 + i * 10)).collect();
    let report = series.insert_many(&many).await.unwrap();
    assert_eq!((report.measurements, report.new_buckets), (300, 100));
    assert_eq!(
        count(&db, "nvc_readings", doc! { "site": "bulk" }).await,
        100
    );
}

#[tokio::test]
async fn sparse_measurements_pass_the_strict_bucket_validator() {
    let db = test_db("nvc_sparse").await;
    let series = NvcSparse::series(&db);
    let values = [
        Bson::Int32(1),
        Bson::String("x".into()),
        Bson::Null,
        Bson::Document(doc! { "k": [1, 2] }),
        Bson::Double(f64::NAN),
    ];
    let batch: Vec<NvcSparse> = (0..5)
        .map(|i| NvcSparse {
            probe: if i % 2 == 0 { i32::MIN } else { i32::MAX },
            at: DateTime::from_millis(H0 + i as i64 * 60_000),
            level: i32::MAX - i,
            note: (i % 3 == 0).then(|| format!("note {i}")),
            any: values[i as usize].clone(),
        })
        .collect();
    series.insert_many(&batch[..3]).await.unwrap();
    for m in &batch[3..] {
        series.insert(m).await.unwrap();
    }
    let summary = series
        .summary(
            i32::MAX,
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + 24 * HOUR),
        )
        .await
        .unwrap();
    assert_eq!(summary.count(), 2);
    assert_eq!(
        summary.max(NvcSparse::FIELDS.level).unwrap(),
        Some(i32::MAX - 1)
    );
    // Around the toolkit: a note of another type, a key of another type.
    let bucket = |probe: Bson, note: Bson| {
        doc! {
            "probe": probe,
            "start": DateTime::from_millis(H0),
            "end": DateTime::from_millis(H0 + 24 * HOUR),
            "first": DateTime::from_millis(H0),
            "last": DateTime::from_millis(H0),
            "count": 1,
            "measurements": [{ "at": DateTime::from_millis(H0), "level": 1, "note": note, "any": 1 }],
        }
    };
    insert_raw(&db, "nvc_sparse", bucket(Bson::Int32(7), "n".into()))
        .await
        .unwrap();
    refused(
        insert_raw(&db, "nvc_sparse", bucket(Bson::Int32(7), Bson::Int32(5))).await,
        "measurements.0.note",
    );
    refused(
        insert_raw(&db, "nvc_sparse", bucket(Bson::Int64(7), "n".into())).await,
        "probe",
    );
}

#[tokio::test]
async fn items_over_the_byte_budget_pass_the_strict_overflow_validator() {
    let db = test_db("nvc_blob").await;
    pattern_runtime::sync(&db)
        .models(&[NvcBlob::SCHEMA])
        .await
        .unwrap();
    NvcBlob::collection(&db)
        .raw()
        .insert_one(NvcBlob {
            id: 1,
            parts: vec![],
            over: false,
            n: 0,
        })
        .await
        .unwrap();
    let parts = NvcBlob::collection(&db).outlier(NvcBlob::FIELDS.parts);
    let part = |i: usize, len: usize| format!("{i}:{}", "x".repeat(len));
    let mut sent = vec![];
    for i in 0..6 {
        sent.push(part(i, 700));
    }
    parts.push_many(1_i64, sent.clone()).await.unwrap();
    sent.push(part(6, 3000));
    parts.push(1_i64, part(6, 3000)).await.unwrap();
    sent.push(part(7, 10));
    parts.push(1_i64, part(7, 10)).await.unwrap();
    assert_eq!(parts.items(1_i64).await.unwrap(), sent);
    assert_eq!(parts.count(1_i64).await.unwrap(), 8);
    for d in dump(&db, "nvc_blob_parts").await {
        assert!(d.get_array("parts").unwrap().len() <= 4, "{d}");
    }
    assert!(parts.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn a_main_document_past_its_outlier_limit_is_refused() {
    let db = test_db("nvc_main_limit").await;
    let mut s = star("x");
    s.posts = (0..3).map(post).collect();
    let result = NvcStar::collection(&db)
        .raw()
        .insert_one(&s)
        .await
        .map_err(Error::from);
    refused(result, "posts");
    s.posts.pop();
    NvcStar::collection(&db).raw().insert_one(&s).await.unwrap();
}

#[tokio::test]
async fn a_sharded_counter_past_i64_max_stays_readable_or_refuses_typed() {
    let db = test_db("nvc_shard_max").await;
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("m"))
        .await
        .unwrap();
    let views = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("m")
        .with_random(Random::seeded(3));
    views.add(i64::MAX).await.unwrap();
    for _ in 0..10 {
        match views.add(1).await {
            Ok(()) => {}
            Err(Error::InvalidValue { .. }) => {}
            Err(other) => panic!("an add past i64::MAX: {other:?}"),
        }
    }
    let read = views.read().await;
    assert!(
        matches!(read, Ok(_) | Err(Error::InvalidValue { .. })),
        "the counter stays readable: {read:?}"
    );
}

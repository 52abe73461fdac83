//! Validators for the documents patterns keep beside a model's own: a `#[versioned]` history's
//! revisions, an `#[outlier]`'s overflow documents, an `#[approximate(sharded)]` field's
//! shards, and a `#[bucket]` measurement's bucket documents. The toolkit's own writes pass them
//! at `strict`/`error` with other fields forbidden; a document written around the toolkit that
//! breaks one is refused with the field named.

use bson::{doc, DateTime, Document};
use pattern_runtime::validator::{sync_validators, ValidatorOptions, ValidatorState};
use pattern_runtime::{Error, Fields, Measurement, Model, SyncOptions};
// These tests install validators themselves.
use pattern_testkit::test_db_unvalidated as test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct CoPost {
    n: i32,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "co_articles")]
#[versioned(history = "co_article_revisions")]
struct CoArticle {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "co_stars")]
struct CoStar {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[outlier(limit = 2, overflow = "co_star_posts", capacity = 3, flag = overflowing, count = post_count)]
    posts: Vec<CoPost>,
    overflowing: bool,
    post_count: i64,
    #[approximate(sharded, shards = 3)]
    views: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[bucket(collection = "co_readings", key = sensor, time = at, max_count = 4, span = "1h")]
struct CoReading {
    sensor: String,
    at: DateTime,
    celsius: f64,
    note: Option<String>,
}

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

fn closed() -> ValidatorOptions {
    ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields()
}

fn article(id: i64) -> CoArticle {
    CoArticle {
        id,
        version: 0,
        title: format!("article {id}"),
    }
}

const MODELS: [&pattern_runtime::ModelSchema; 3] =
    [CoArticle::SCHEMA, CoStar::SCHEMA, CoReading::SCHEMA];

fn star(id: i64) -> CoStar {
    CoStar {
        id,
        name: format!("star {id}"),
        posts: Vec::new(),
        overflowing: false,
        post_count: 0,
        views: 0,
    }
}

/// The refusal of `result`, which must be a validation failure naming `field`.
fn refused<T: std::fmt::Debug>(result: pattern_runtime::Result<T>, field: &str) {
    match result {
        Err(Error::ValidationFailed { fields, .. }) => {
            assert!(fields.iter().any(|f| f == field), "{field} in {fields:?}")
        }
        other => panic!("expected a validation failure naming {field}: {other:?}"),
    }
}

async fn insert_raw(
    db: &mongodb::Database,
    collection: &str,
    d: Document,
) -> pattern_runtime::Result<()> {
    db.collection::<Document>(collection)
        .insert_one(d)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

#[tokio::test]
async fn every_companion_collection_gets_its_validator() {
    let db = test_db("co_sync").await;
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
    let db = test_db("co_writes").await;
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
    let mut a = article(1);
    articles.insert(&mut a).await.unwrap();
    a.title = "renamed".into();
    articles.replace(&mut a).await.unwrap();
    a.title = "again".into();
    articles.replace(&mut a).await.unwrap();
    let mut b = article(2);
    articles.insert(&mut b).await.unwrap();
    articles.delete(2_i64).await.unwrap();
    assert_eq!(articles.history(1_i64).await.unwrap().len(), 2);
    CoStar::collection(&db)
        .raw()
        .insert_one(star(1))
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
    let db = test_db("co_refused").await;
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
async fn the_index_sync_installs_validators_when_asked() {
    let db = test_db("co_sync_models").await;
    // Not asked: no validators.
    let plain = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert_eq!(plain.validators, None);
    let options = SyncOptions::new().validators(closed());
    let report = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&options)
        .await
        .unwrap();
    let validators = report.validators.expect("asked for");
    assert_eq!(validators.models.len(), 6, "{validators:?}");
    // The index sync created the collections first time round; the validators are applied to
    // them now, the revisions' included.
    assert!(
        validators
            .models
            .iter()
            .all(|s| matches!(s.state, ValidatorState::Applied | ValidatorState::Created)),
        "{validators:?}"
    );
    let again = pattern_runtime::sync(&db)
        .models(&MODELS)
        .options(&options)
        .await
        .unwrap();
    assert!(again
        .validators
        .unwrap()
        .models
        .iter()
        .all(|s| matches!(s.state, ValidatorState::Unchanged)));
    refused(
        insert_raw(
            &db,
            "co_article_revisions",
            doc! { "docId": 1_i64, "version": "one", "snapshot": {}, "archivedAt": DateTime::now() },
        )
        .await,
        "version",
    );
}

#[tokio::test]
async fn a_slots_series_writes_pass_and_a_bad_window_is_refused() {
    let db = test_db("co_slots").await;
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
    let db = test_db("co_rollup").await;
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

//! Hostile input under the companions' validators: revisions, overflow documents, shards and
//! buckets written around the toolkit refused rule by rule; operator or dotted keys, hostile
//! strings, non-finite numbers and operator-shaped ids refused whole or kept literally, with
//! nothing archived or written half-way.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{validator::sync_validators, At, Error, Measurement, Model};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An `_id` of any type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_loose")]
struct NvcLoose {
    #[serde(rename = "_id")]
    id: Bson,
    #[outlier(limit = 1, overflow = "nvc_loose_items", capacity = 2, flag = over, count = n)]
    items: Vec<i32>,
    over: bool,
    n: i64,
    #[approximate(sharded, shards = 2)]
    hits: i64,
}

#[track_caller]
fn invalid_value<T: std::fmt::Debug>(result: pattern_runtime::Result<T>) {
    match result {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("expected Error::InvalidValue: {other:?}"),
    }
}

#[tokio::test]
async fn revisions_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_revisions_refused").await;
    sync_validators(&db, &[NvcArticle::SCHEMA], &closed())
        .await
        .unwrap();
    let now = DateTime::now();
    let good = doc! { "docId": "a", "version": 1_i64, "snapshot": { "anything": [1, "x"] }, "archivedAt": now };
    insert_raw(&db, "nvc_article_revisions", good.clone())
        .await
        .unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert(k, v);
        d
    };
    let without = |k: &str| {
        let mut d = good.clone();
        d.remove(k);
        d
    };
    let h = "nvc_article_revisions";
    refused(
        insert_raw(&db, h, with("docId", Bson::Int64(5))).await,
        "docId",
    );
    refused(
        insert_raw(&db, h, with("version", Bson::Double(1.5))).await,
        "version",
    );
    refused(
        insert_raw(&db, h, with("version", "2".into())).await,
        "version",
    );
    refused(
        insert_raw(&db, h, with("snapshot", "text".into())).await,
        "snapshot",
    );
    refused(
        insert_raw(&db, h, with("archivedAt", "today".into())).await,
        "archivedAt",
    );
    refused(
        insert_raw(&db, h, with("deleted", "yes".into())).await,
        "deleted",
    );
    refused(insert_raw(&db, h, with("_id", "r1".into())).await, "_id");
    refused(
        insert_raw(&db, h, with("note", "extra".into())).await,
        "note",
    );
    refused(insert_raw(&db, h, without("snapshot")).await, "snapshot");
    refused(
        insert_raw(&db, h, without("archivedAt")).await,
        "archivedAt",
    );
    refused(insert_raw(&db, h, without("docId")).await, "docId");
    insert_raw(&db, h, with("deleted", true.into()))
        .await
        .unwrap();
    // An update around the toolkit.
    refused(
        update_raw(
            &db,
            h,
            doc! { "deleted": { "$exists": false } },
            doc! { "$set": { "version": "x" } },
        )
        .await,
        "version",
    );
    let stored = dump(&db, h).await;
    assert_eq!(stored.len(), 2, "nothing of the refused writes: {stored:?}");
    assert!(stored.iter().all(|d| num(d.get("version")) == Some(1)));
}

#[tokio::test]
async fn overflow_documents_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_overflow_refused").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let p = |n: i32| doc! { "n": n, "text": "t", "score": Bson::Null, "extra": Bson::Null };
    let good = doc! { "_id": "posts_a_1", "ownerId": "a", "seq": 1, "posts": [p(1), p(2), p(3)] };
    let o = "nvc_star_posts";
    insert_raw(&db, o, good.clone()).await.unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert("_id", format!("posts_a_{k}"));
        d.insert(k, v);
        d
    };
    let mut no_seq = good.clone();
    no_seq.insert("_id", "no_seq");
    no_seq.remove("seq");
    refused(insert_raw(&db, o, with("_id", Bson::Int32(5))).await, "_id");
    refused(
        insert_raw(&db, o, with("ownerId", Bson::Int64(5))).await,
        "ownerId",
    );
    refused(insert_raw(&db, o, with("seq", "1".into())).await, "seq");
    refused(insert_raw(&db, o, with("full", "yes".into())).await, "full");
    refused(insert_raw(&db, o, with("extra", 1.into())).await, "extra");
    refused(insert_raw(&db, o, no_seq).await, "seq");
    refused(
        insert_raw(
            &db,
            o,
            with(
                "posts",
                Bson::Array(vec![p(1).into(), p(2).into(), p(3).into(), p(4).into()]),
            ),
        )
        .await,
        "posts",
    );
    refused(
        insert_raw(
            &db,
            o,
            with(
                "posts",
                Bson::Array(vec![
                    doc! { "n": 1, "score": Bson::Null, "extra": Bson::Null }.into(),
                ]),
            ),
        )
        .await,
        "posts.0.text",
    );
    let mut extra_key = p(1);
    extra_key.insert("zzz", 1);
    refused(
        insert_raw(
            &db,
            o,
            with("posts", Bson::Array(vec![p(1).into(), extra_key.into()])),
        )
        .await,
        "posts.1.zzz",
    );
    refused(
        update_raw(
            &db,
            o,
            doc! { "_id": "posts_a_1" },
            doc! { "$push": { "posts": p(4) } },
        )
        .await,
        "posts",
    );
    assert_eq!(dump(&db, o).await, [good], "nothing of the refused writes");
}

#[tokio::test]
async fn shards_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_shards_refused").await;
    sync_validators(&db, &[NvcStar::SCHEMA], &closed())
        .await
        .unwrap();
    let s = "nvc_stars.views";
    let good = doc! { "_id": { "of": "a", "shard": 0 }, "count": 1_i64 };
    insert_raw(&db, s, good.clone()).await.unwrap();
    refused(
        insert_raw(&db, s, doc! { "_id": "a:1", "count": 1_i64 }).await,
        "_id",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": 5_i64, "shard": 1 }, "count": 1_i64 },
        )
        .await,
        "_id.of",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": "1" }, "count": 1_i64 },
        )
        .await,
        "_id.shard",
    );
    refused(
        insert_raw(&db, s, doc! { "_id": { "of": "a", "shard": 2 } }).await,
        "count",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": 2 }, "count": "many" },
        )
        .await,
        "count",
    );
    refused(
        insert_raw(
            &db,
            s,
            doc! { "_id": { "of": "a", "shard": 2 }, "count": 1_i64, "extra": 1 },
        )
        .await,
        "extra",
    );
    refused(
        update_raw(
            &db,
            s,
            doc! { "_id.of": "a" },
            doc! { "$set": { "count": 2.5 } },
        )
        .await,
        "count",
    );
    assert_eq!(dump(&db, s).await, [good]);
}

#[tokio::test]
async fn buckets_written_around_the_toolkit_are_refused_rule_by_rule() {
    let db = test_db_unvalidated("nvc_buckets_refused").await;
    sync_validators(&db, &[NvcReading::SCHEMA], &closed())
        .await
        .unwrap();
    let b = "nvc_readings";
    let good = bucket_doc(vec![m_doc(H0), m_doc(H0 + 1000)]);
    insert_raw(&db, b, good.clone()).await.unwrap();
    let with = |k: &str, v: Bson| {
        let mut d = good.clone();
        d.insert(k, v);
        d
    };
    let without = |k: &str| {
        let mut d = good.clone();
        d.remove(k);
        d
    };
    refused(insert_raw(&db, b, with("count", 4.into())).await, "count");
    refused(
        insert_raw(&db, b, with("count", (-1).into())).await,
        "count",
    );
    let four: Vec<Bson> = (0..4).map(|i| m_doc(H0 + i).into()).collect();
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(four))).await,
        "measurements",
    );
    refused(insert_raw(&db, b, without("end")).await, "end");
    refused(
        insert_raw(&db, b, without("measurements")).await,
        "measurements",
    );
    refused(
        insert_raw(&db, b, with("first", "soon".into())).await,
        "first",
    );
    refused(
        insert_raw(&db, b, with("device", "one".into())).await,
        "device",
    );
    refused(
        insert_raw(&db, b, with("summary", "none".into())).await,
        "summary",
    );
    refused(insert_raw(&db, b, with("other", 1.into())).await, "other");
    let mut bad = m_doc(H0);
    bad.insert("celsius", "warm");
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(vec![bad.into()]))).await,
        "measurements.0.celsius",
    );
    let mut no_time = m_doc(H0);
    no_time.remove("at");
    refused(
        insert_raw(
            &db,
            b,
            with(
                "measurements",
                Bson::Array(vec![m_doc(H0).into(), no_time.into()]),
            ),
        )
        .await,
        "measurements.1.at",
    );
    let mut keyed = m_doc(H0);
    keyed.insert("site", "north");
    refused(
        insert_raw(
            &db,
            b,
            with("measurements", Bson::Array(vec![keyed.into()])),
        )
        .await,
        "measurements.0.site",
    );
    let mut unit = m_doc(H0);
    unit.insert("unit", 5);
    refused(
        insert_raw(&db, b, with("measurements", Bson::Array(vec![unit.into()]))).await,
        "measurements.0.unit",
    );
    // Updates around the toolkit: past the count, past the items.
    refused(
        update_raw(&db, b, doc! {}, doc! { "$inc": { "count": 2 } }).await,
        "count",
    );
    refused(
        update_raw(
            &db,
            b,
            doc! {},
            doc! { "$push": { "measurements": { "$each": [m_doc(H0 + 2), m_doc(H0 + 3)] } } },
        )
        .await,
        "measurements",
    );
    let mut stored = dump(&db, b).await;
    for d in &mut stored {
        d.remove("_id");
    }
    assert_eq!(stored, [good], "nothing of the refused writes");
}

// ---------------------------------------------------------------------------------------------
// 5. Hostile input under validators
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn outlier_items_with_operator_or_dotted_keys_are_refused_whole() {
    let db = test_db("nvc_outlier_hostile").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("h"))
        .await
        .unwrap();
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    let odd = |n: i32, text: &str, score: f64| NvcPost {
        n,
        text: text.into(),
        score: Some(score),
        extra: Some(doc! { "k": "$v", "nested": { "deep": [1, 2], "big": i64::MIN } }),
    };
    posts.push("h", odd(0, "$where", f64::NAN)).await.unwrap();
    posts.push("h", odd(1, "", f64::INFINITY)).await.unwrap();
    posts
        .push("h", odd(2, "ünï🙂\u{200b}", f64::NEG_INFINITY))
        .await
        .unwrap();
    posts.push("h", odd(i32::MIN, "$", -0.0)).await.unwrap();
    // Compared as text: NaN is not equal to itself.
    let before = format!(
        "{:?}",
        (
            dump(&db, "nvc_stars").await,
            dump(&db, "nvc_star_posts").await,
        )
    );
    let with_extra = |extra: Document| NvcPost {
        extra: Some(extra),
        ..post(9)
    };
    invalid_value(
        posts
            .push("h", with_extra(doc! { "$set": { "x": 1 } }))
            .await,
    );
    invalid_value(posts.push("h", with_extra(doc! { "a.b": 1 })).await);
    invalid_value(
        posts
            .push("h", with_extra(doc! { "ok": { "$gt": 1 } }))
            .await,
    );
    invalid_value(
        posts
            .push_many("h", vec![post(7), with_extra(doc! { "$x": 1 })])
            .await,
    );
    assert_eq!(
        format!(
            "{:?}",
            (
                dump(&db, "nvc_stars").await,
                dump(&db, "nvc_star_posts").await,
            )
        ),
        before,
        "nothing written"
    );
    let items = posts.items("h").await.unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0].text, "$where");
    assert!(items[0].score.unwrap().is_nan());
    assert_eq!(items[1].score, Some(f64::INFINITY));
    assert_eq!(items[2].text, "ünï🙂\u{200b}");
    assert_eq!(items[3].n, i32::MIN);
    assert!(posts.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn versioned_writes_the_validator_refuses_archive_nothing() {
    let db = test_db("nvc_versioned_refused").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    let mut a = article("r");
    a.tags = vec!["1".into(), "2".into(), "3".into()];
    articles.insert(&mut a).await.unwrap();
    a.title = "second".into();
    articles.replace(&mut a).await.unwrap();
    let before = (
        dump(&db, "nvc_articles").await,
        dump(&db, "nvc_article_revisions").await,
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "title": 5 } })
            .await,
        "title",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "surprise": 1 } })
            .await,
        "surprise",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$push": { "tags": "4" } })
            .await,
        "tags",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$set": { "meta.score": "high" } })
            .await,
        "meta.score",
    );
    refused(
        articles
            .update(At("r", 2), doc! { "$unset": { "title": "" } })
            .await,
        "title",
    );
    invalid_value(
        articles
            .update(At("r", 2), doc! { "$set": { "extra": { "$bad": 1 } } })
            .await,
    );
    a.tags.push("4".into());
    refused(articles.replace(&mut a).await, "tags");
    assert_eq!(a.version, 2, "a refused save leaves the caller's version");
    assert_eq!(
        (
            dump(&db, "nvc_articles").await,
            dump(&db, "nvc_article_revisions").await
        ),
        before,
        "nothing written, nothing archived"
    );
    // Still writable at its version.
    a.tags.pop();
    assert_eq!(articles.replace(&mut a).await.unwrap().version, Some(3));
}

#[tokio::test]
async fn versioned_documents_keep_hostile_strings_and_extreme_numbers() {
    let db = test_db("nvc_versioned_hostile").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    let mut a = NvcArticle {
        id: "$gt".into(),
        version: 0,
        title: "$where".into(),
        body: Some(String::new()),
        tags: vec!["".into(), "$".into(), "🙂".into()],
        meta: NvcMeta {
            score: f64::NAN,
            big: i64::MIN,
        },
        extra: Some(doc! { "k": "$v", "n": { "m": i64::MAX } }),
    };
    articles.insert(&mut a).await.unwrap();
    a.meta = NvcMeta {
        score: f64::INFINITY,
        big: i64::MAX,
    };
    articles.replace(&mut a).await.unwrap();
    let stored = articles.get("$gt").await.unwrap().unwrap();
    assert_eq!(stored.title, "$where");
    assert_eq!(stored.meta.big, i64::MAX);
    let old = articles.revision("$gt", 1).await.unwrap();
    assert!(old.meta.score.is_nan());
    assert_eq!(old.meta.big, i64::MIN);
    assert_eq!(old.tags, ["", "$", "🙂"]);
    assert_eq!(articles.revert("$gt", 1).await.unwrap(), 3);
    assert_eq!(
        articles.get("$gt").await.unwrap().unwrap().meta.big,
        i64::MIN
    );
}

#[tokio::test]
async fn a_versioned_document_with_operator_keys_is_refused_or_kept_whole() {
    let db = test_db("nvc_versioned_keys").await;
    pattern_runtime::sync(&db)
        .models(&[NvcArticle::SCHEMA])
        .await
        .unwrap();
    let articles = NvcArticle::collection(&db);
    for (id, extra) in [("dollar", doc! { "$op": 1 }), ("dot", doc! { "a.b": 1 })] {
        let mut a = article(id);
        a.extra = Some(extra.clone());
        match articles.insert(&mut a).await {
            Err(e) => {
                assert!(matches!(e, Error::InvalidValue { .. }), "{id}: {e:?}");
                assert!(articles.get(id).await.unwrap().is_none());
            }
            Ok(_) => {
                a.title = "again".into();
                articles.replace(&mut a).await.unwrap();
                let old = articles.revision(id, 1).await.unwrap();
                assert_eq!(old.extra, Some(extra), "{id}");
            }
        }
    }
}

/// A measurement with odd but legal values, stored; returns the buckets as text (NaN inside).
async fn odd_measurement(db: &mongodb::Database) -> String {
    let series = NvcReading::series(db);
    let mut odd = reading("$gt", i64::MIN, H0);
    odd.raw = Some(f64::NAN);
    odd.unit = NvcUnit("$unit".into());
    odd.extra = Some(doc! { "s": "$x", "e": "" });
    series.insert(&odd).await.unwrap();
    let got: Vec<NvcReading> = series
        .range(
            ("$gt".to_owned(), i64::MIN),
            DateTime::from_millis(H0),
            DateTime::from_millis(H0 + HOUR),
        )
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].raw.unwrap().is_nan());
    assert_eq!(got[0].unit, NvcUnit("$unit".into()));
    assert_eq!(got[0].extra, odd.extra);
    format!("{:?}", dump(db, "nvc_readings").await)
}

#[tokio::test]
async fn non_finite_summarised_measurements_are_refused_whole() {
    let db = test_db("nvc_bucket_non_finite").await;
    let series = NvcReading::series(&db);
    let before = odd_measurement(&db).await;
    let mut nan = reading("$gt", i64::MIN, H0 + 2000);
    nan.celsius = f64::NAN;
    invalid_value(series.insert(&nan).await);
    let mut inf = reading("$gt", i64::MIN, H0 + 3000);
    inf.celsius = f64::NEG_INFINITY;
    invalid_value(
        series
            .insert_many(&[reading("$gt", i64::MIN, H0 + 4000), inf])
            .await,
    );
    assert_eq!(
        format!("{:?}", dump(&db, "nvc_readings").await),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn measurements_with_operator_or_dotted_keys_are_refused_whole() {
    let db = test_db("nvc_bucket_hostile_keys").await;
    let series = NvcReading::series(&db);
    let before = odd_measurement(&db).await;
    let with_extra = |ms: i64, extra: Document| {
        let mut r = reading("$gt", i64::MIN, H0 + ms);
        r.extra = Some(extra);
        r
    };
    invalid_value(series.insert(&with_extra(1000, doc! { "$x": 1 })).await);
    invalid_value(series.insert(&with_extra(2000, doc! { "a.b": 1 })).await);
    invalid_value(
        series
            .insert(&with_extra(3000, doc! { "ok": { "$gt": 1 } }))
            .await,
    );
    invalid_value(
        series
            .insert_many(&[
                reading("$gt", i64::MIN, H0 + 4000),
                with_extra(5000, doc! { "$set": { "x": 1 } }),
            ])
            .await,
    );
    assert_eq!(
        format!("{:?}", dump(&db, "nvc_readings").await),
        before,
        "nothing written"
    );
}

#[tokio::test]
async fn operator_shaped_ids_are_refused_before_anything_is_written() {
    let db = test_db("nvc_operator_ids").await;
    pattern_runtime::sync(&db)
        .models(&[NvcLoose::SCHEMA])
        .await
        .unwrap();
    let items = NvcLoose::collection(&db).outlier(NvcLoose::FIELDS.items);
    let hostile = [
        Bson::Document(doc! { "$gt": 1 }),
        Bson::Document(doc! { "a": { "$ne": null } }),
        Bson::RegularExpression(bson::Regex {
            pattern: bson::raw::CString::try_from(".*").unwrap(),
            options: bson::raw::CString::try_from("").unwrap(),
        }),
        Bson::Array(vec![1.into(), 2.into()]),
        Bson::Document(doc! { "a.b": 1 }),
    ];
    for id in &hostile {
        let pushed = items.push(id.clone(), 1).await;
        assert!(
            matches!(pushed, Err(Error::InvalidValue { .. })),
            "{id}: {pushed:?}"
        );
        let counted = NvcLoose::collection(&db)
            .counter(NvcLoose::FIELDS.hits)
            .of(id.clone())
            .add(1)
            .await;
        assert!(
            matches!(counted, Err(Error::InvalidValue { .. })),
            "{id}: {counted:?}"
        );
    }
    assert_eq!(count(&db, "nvc_loose_items", doc! {}).await, 0);
    assert_eq!(count(&db, "nvc_loose.hits", doc! {}).await, 0);
    assert_eq!(count(&db, "nvc_loose", doc! {}).await, 0);
}

#[tokio::test]
async fn ids_of_different_bson_types_keep_their_own_overflow_documents() {
    let db = test_db("nvc_loose_ids").await;
    pattern_runtime::sync(&db)
        .models(&[NvcLoose::SCHEMA])
        .await
        .unwrap();
    let ids = [
        Bson::Int32(1),
        Bson::String("1".into()),
        Bson::Boolean(true),
    ];
    for id in &ids {
        NvcLoose::collection(&db)
            .raw()
            .insert_one(NvcLoose {
                id: id.clone(),
                items: vec![],
                over: false,
                n: 0,
                hits: 0,
            })
            .await
            .unwrap();
    }
    let items = NvcLoose::collection(&db).outlier(NvcLoose::FIELDS.items);
    for (k, id) in ids.iter().enumerate() {
        let base = 10 * k as i32;
        let pushed = tokio::time::timeout(
            Duration::from_secs(30),
            items.push_many(id.clone(), (base..base + 4).collect()),
        )
        .await
        .expect("the push ends");
        assert!(pushed.is_ok(), "{id}: {pushed:?}");
    }
    for (k, id) in ids.iter().enumerate() {
        let base = 10 * k as i32;
        assert_eq!(
            items.items(id.clone()).await.unwrap(),
            (base..base + 4).collect::<Vec<_>>(),
            "{id}"
        );
    }
    assert_eq!(count(&db, "nvc_loose_items", doc! {}).await, 6);
}

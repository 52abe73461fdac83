//! The attribute pattern against the server: the seed's health records (属性模式) and its
//! queries, concurrent `set`s on one document, key validation, and the movie-ticket channel
//! prices of seed 004.

use bson::{doc, Bson, Document};
use pattern_runtime::attribute::{and, Order};
use pattern_runtime::{AttributeKey, Error, Fields, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct Measurement {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "records")]
struct Record {
    #[serde(rename = "_id")]
    id: i32,
    #[attribute]
    attributes: Vec<Measurement>,
}

fn m(name: &str, value: impl Into<Bson>) -> Measurement {
    Measurement {
        name: name.into(),
        value: value.into(),
        unit: None,
    }
}

/// The seed's two records.
fn seed() -> Vec<Record> {
    vec![
        Record {
            id: 1001,
            attributes: vec![m("bmi", 22.3), m("liver_function", "正常")],
        },
        Record {
            id: 1002,
            attributes: vec![m("blood_sugar", 6.3), m("bmi", 26.1)],
        },
    ]
}

async fn records(db: &mongodb::Database) -> pattern_runtime::Attributes<Record, Measurement> {
    pattern_runtime::sync(db)
        .models(&[Record::SCHEMA])
        .await
        .unwrap();
    Record::collection(db)
        .raw()
        .insert_many(seed())
        .await
        .unwrap();
    Record::collection(db).attributes(Record::FIELDS.attributes)
}

#[tokio::test]
async fn the_seed_stores_as_its_shapes_and_answers_its_queries() {
    let db = test_db("attr_seed").await;
    let attrs = records(&db).await;

    let raw: Vec<Document> = {
        let mut c = db
            .collection::<Document>("records")
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .unwrap();
        let mut v = Vec::new();
        while c.advance().await.unwrap() {
            v.push(c.deserialize_current().unwrap());
        }
        v
    };
    assert_eq!(
        raw,
        [
            doc! { "_id": 1001, "attributes": [
            { "name": "bmi", "value": 22.3 }, { "name": "liver_function", "value": "正常" } ] },
            doc! { "_id": 1002, "attributes": [
            { "name": "blood_sugar", "value": 6.3 }, { "name": "bmi", "value": 26.1 } ] },
        ]
    );

    // BMI > 25: 1002 only, as the seed's $elemMatch.
    let filter = attrs.key("bmi").gt(25).unwrap();
    assert_eq!(
        filter,
        doc! { "attributes": { "$elemMatch": { "name": "bmi", "value": { "$gt": 25 } } } }
    );
    let heavy = attrs.find(filter).await.unwrap();
    assert_eq!(heavy.iter().map(|r| r.id).collect::<Vec<_>>(), [1002]);

    // liver_function = "异常": nobody in the seed.
    let abnormal = attrs
        .find(attrs.key("liver_function").eq("异常").unwrap())
        .await
        .unwrap();
    assert!(abnormal.is_empty());
    let normal = attrs
        .find(attrs.key("liver_function").eq("正常").unwrap())
        .await
        .unwrap();
    assert_eq!(normal.iter().map(|r| r.id).collect::<Vec<_>>(), [1001]);

    // Ranking by blood sugar: only 1002 has one.
    let ranked = attrs
        .find_sorted(doc! {}, "blood_sugar", Order::Descending)
        .await
        .unwrap();
    assert_eq!(ranked, [seed()[1].clone()]);
    // By BMI, both, highest first; then lowest first.
    let by_bmi = attrs
        .find_sorted(doc! {}, "bmi", Order::Descending)
        .await
        .unwrap();
    assert_eq!(
        by_bmi.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1002, 1001]
    );
    let by_bmi = attrs
        .find_sorted(doc! {}, "bmi", Order::Ascending)
        .await
        .unwrap();
    assert_eq!(
        by_bmi.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1001, 1002]
    );

    // Combined: BMI above 20 and a blood sugar.
    let both = attrs
        .find(and([
            attrs.key("bmi").gt(20).unwrap(),
            attrs.key("blood_sugar").exists().unwrap(),
        ]))
        .await
        .unwrap();
    assert_eq!(both.iter().map(|r| r.id).collect::<Vec<_>>(), [1002]);
    let listed = attrs
        .find(attrs.key("bmi").is_in([22.3, 1.0]).unwrap())
        .await
        .unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), [1001]);

    // The one compound index, used by the BMI query.
    let indexes = pattern_runtime::sync::list_indexes(&db, "records")
        .await
        .unwrap();
    let index = indexes
        .iter()
        .find(|i| i.get_str("name").ok() == Some("attributes.name_1_attributes.value_1"))
        .unwrap_or_else(|| panic!("{indexes:?}"));
    assert_eq!(
        index.get_document("key").unwrap(),
        &doc! { "attributes.name": 1, "attributes.value": 1 }
    );
    assert_index_serves(
        &db,
        "records",
        attrs.key("bmi").gt(25).unwrap(),
        "attributes.name_1_attributes.value_1",
        &[1002],
    )
    .await;
}

/// The index serves `filter`: hinted, the query uses it (IXSCAN) and returns `ids`. Unhinted, a
/// real mongod's planner picks it; the embedded server's planner scans the collection for an
/// `$elemMatch`, so there the natural plan is only printed.
async fn assert_index_serves(
    db: &mongodb::Database,
    collection: &str,
    filter: Document,
    index: &str,
    ids: &[i32],
) {
    let explain = |hint: Option<&str>| {
        let mut find = doc! { "find": collection, "filter": filter.clone() };
        if let Some(h) = hint {
            find.insert("hint", h);
        }
        let db = db.clone();
        async move {
            db.run_command(doc! { "explain": find, "verbosity": "queryPlanner" })
                .await
                .unwrap()
                .get_document("queryPlanner")
                .unwrap()
                .get_document("winningPlan")
                .unwrap()
                .to_string()
        }
    };
    let hinted = explain(Some(index)).await;
    assert!(
        hinted.contains("IXSCAN") && hinted.contains(index),
        "{hinted}"
    );
    let mut cursor = db
        .collection::<Document>(collection)
        .find(filter.clone())
        .hint(mongodb::options::Hint::Name(index.to_owned()))
        .sort(doc! { "_id": 1 })
        .await
        .unwrap();
    let mut found = Vec::new();
    while cursor.advance().await.unwrap() {
        found.push(
            cursor
                .deserialize_current()
                .unwrap()
                .get_i32("_id")
                .unwrap(),
        );
    }
    assert_eq!(found, ids);
    let natural = explain(None).await;
    if pattern_testkit::server().is_embedded() {
        println!("embedded server, unhinted plan: {natural}");
    } else {
        assert!(
            natural.contains("IXSCAN") && natural.contains(index),
            "{natural}"
        );
    }
}

#[tokio::test]
async fn set_replaces_in_place_or_appends_and_unset_removes() {
    let db = test_db("attr_set").await;
    let attrs = records(&db).await;
    // Replace in place.
    attrs.set(1001, &m("bmi", 23.0)).await.unwrap();
    // Append, with a qualifier.
    let weight = Measurement {
        unit: Some("kg".into()),
        ..m("weight", 75)
    };
    attrs.set(1001, &weight).await.unwrap();
    let stored = db
        .collection::<Document>("records")
        .find_one(doc! { "_id": 1001 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get_array("attributes").unwrap(),
        &vec![
            Bson::Document(doc! { "name": "bmi", "value": 23.0 }),
            Bson::Document(doc! { "name": "liver_function", "value": "正常" }),
            Bson::Document(doc! { "name": "weight", "value": 75, "unit": "kg" }),
        ]
    );
    assert_eq!(attrs.get(1001, "weight").await.unwrap(), Some(weight));
    assert_eq!(attrs.get(1001, "height").await.unwrap(), None);

    attrs.unset(1001, "liver_function").await.unwrap();
    attrs.unset(1001, "not_there").await.unwrap();
    assert_eq!(attrs.get(1001, "liver_function").await.unwrap(), None);
    assert!(attrs.get(1001, "bmi").await.unwrap().is_some());

    // A document with a duplicate key (written by someone else): get reads the first, set
    // keeps the first position and drops the other.
    db.collection::<Document>("records")
        .insert_one(doc! { "_id": 7, "attributes": [
        { "name": "a", "value": 1 }, { "name": "b", "value": 2 }, { "name": "a", "value": 3 } ] })
        .await
        .unwrap();
    assert_eq!(attrs.get(7, "a").await.unwrap(), Some(m("a", 1)));
    attrs.set(7, &m("a", 9)).await.unwrap();
    let seven = Record::collection(&db)
        .raw()
        .find_one(doc! { "_id": 7 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seven.attributes, [m("a", 9), m("b", 2)]);

    // Missing documents are NotFound; nothing is created.
    assert!(attrs.set(5, &m("x", 1)).await.unwrap_err().is_not_found());
    assert!(attrs.unset(5, "x").await.unwrap_err().is_not_found());
    assert!(attrs.get(5, "x").await.unwrap_err().is_not_found());
    assert_eq!(
        db.collection::<Document>("records")
            .count_documents(doc! { "_id": 5 })
            .await
            .unwrap(),
        0
    );
}

#[tokio::test]
async fn bad_keys_and_oversized_values_are_typed_errors_and_write_nothing() {
    let db = test_db("attr_bad").await;
    let attrs = records(&db).await;
    for bad in ["", "$where", "a.b", "nu\0l"] {
        let e = attrs.set(1001, &m(bad, 1)).await.unwrap_err();
        assert!(matches!(e, Error::InvalidKey { .. }), "{bad:?}: {e:?}");
        let e = attrs.key(bad).gt(1).unwrap_err();
        assert!(matches!(e, Error::InvalidKey { .. }), "{bad:?}: {e:?}");
        assert!(matches!(
            attrs.unset(1001, bad).await.unwrap_err(),
            Error::InvalidKey { .. }
        ));
    }
    // Two values of 9 MiB: the second would take the document over 16 MiB.
    let big = "x".repeat(9 * 1024 * 1024);
    attrs.set(1001, &m("scan_1", big.as_str())).await.unwrap();
    let e = attrs
        .set(1001, &m("scan_2", big.as_str()))
        .await
        .unwrap_err();
    assert!(e.is_too_large(), "{e:?}");
    assert_eq!(attrs.get(1001, "scan_2").await.unwrap(), None);
    assert_eq!(
        seed()[0].attributes.len() + 1,
        Record::collection(&db)
            .raw()
            .find_one(doc! { "_id": 1001 })
            .await
            .unwrap()
            .unwrap()
            .attributes
            .len()
    );
}

/// 8 tasks each set the same 20 keys 12 times on one document (1 920 contending writes):
/// every key present once, holding a value some task wrote last for it; nothing else lost.
#[tokio::test]
async fn concurrent_sets_never_duplicate_nor_lose_a_key() {
    let db = test_db("attr_concurrent").await;
    let attrs = records(&db).await;
    let mut tasks = Vec::new();
    for t in 0..8i32 {
        let attrs = attrs.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..12i32 {
                for k in 0..20i32 {
                    attrs
                        .set(1002, &m(&format!("k{k}"), t * 1000 + round))
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let doc = Record::collection(&db)
        .raw()
        .find_one(doc! { "_id": 1002 })
        .await
        .unwrap()
        .unwrap();
    let names: Vec<&str> = doc.attributes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), 22, "{names:?}");
    // The seed's two, untouched, then k0..k19 once each.
    assert_eq!(&doc.attributes[..2], &seed()[1].attributes[..]);
    for k in 0..20 {
        let items: Vec<&Measurement> = doc
            .attributes
            .iter()
            .filter(|a| a.name == format!("k{k}"))
            .collect();
        assert_eq!(items.len(), 1, "k{k}");
        // Each task's last write of a key is its round 11.
        let v = items[0].value.as_i32().unwrap();
        assert_eq!(v % 1000, 11, "k{k} = {v}");
        assert!((0..8).contains(&(v / 1000)));
    }
}

/// Seed 004: a film showing's prices by sales channel, one multikey index for every channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, AttributeKey)]
#[serde(rename_all = "lowercase")]
enum Channel {
    Gewala,
    Maoyan,
    Taopiao,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = channel, value = price)]
struct Price {
    channel: Channel,
    price: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "schedules")]
#[index(keys(schedule_id = 1, movie = 1), unique)]
struct Schedule {
    #[serde(rename = "_id")]
    id: i32,
    schedule_id: String,
    movie: String,
    #[attribute(name = "provider_channel_price")]
    provider: Vec<Price>,
}

#[tokio::test]
async fn channel_prices_share_one_multikey_index() {
    let db = test_db("attr_channels").await;
    pattern_runtime::sync(&db)
        .models(&[Schedule::SCHEMA])
        .await
        .unwrap();
    let price = |channel, price| Price { channel, price };
    Schedule::collection(&db)
        .raw()
        .insert_many([
            Schedule {
                id: 1,
                schedule_id: "0001".into(),
                movie: "你的名字".into(),
                provider: vec![
                    price(Channel::Gewala, 30),
                    price(Channel::Maoyan, 50),
                    price(Channel::Taopiao, 20),
                ],
            },
            Schedule {
                id: 2,
                schedule_id: "0002".into(),
                movie: "你的名字".into(),
                provider: vec![price(Channel::Gewala, 45), price(Channel::Maoyan, 25)],
            },
        ])
        .await
        .unwrap();
    let stored = db
        .collection::<Document>("schedules")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.get_array("provider").unwrap()[0],
        Bson::Document(doc! { "channel": "gewala", "price": 30 })
    );
    let prices = Schedule::collection(&db).attributes(Schedule::FIELDS.provider);
    // Showings whose maoyan price is below 40.
    let cheap = prices
        .find(prices.key(Channel::Maoyan).lt(40).unwrap())
        .await
        .unwrap();
    assert_eq!(cheap.iter().map(|s| s.id).collect::<Vec<_>>(), [2]);
    // A showing's price on one channel.
    assert_eq!(
        prices.get(1, Channel::Taopiao).await.unwrap(),
        Some(price(Channel::Taopiao, 20))
    );
    assert_eq!(prices.get(2, Channel::Taopiao).await.unwrap(), None);
    prices.set(2, &price(Channel::Taopiao, 18)).await.unwrap();
    let by_taopiao = prices
        .find_sorted(doc! {}, &Channel::Taopiao, Order::Ascending)
        .await
        .unwrap();
    assert_eq!(by_taopiao.iter().map(|s| s.id).collect::<Vec<_>>(), [2, 1]);

    assert_index_serves(
        &db,
        "schedules",
        prices.key(Channel::Maoyan).lt(40).unwrap(),
        "provider_channel_price",
        &[2],
    )
    .await;
}

/// A handle bound to the caller's transaction reads in it: `get`, `find` and `find_sorted` see
/// the transaction's own `set`; no handle outside it sees it before the commit.
#[tokio::test]
async fn a_bound_attributes_reads_its_transactions_writes() {
    let db = test_db("attr_in_transaction").await;
    let outside = records(&db).await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = Record::collection(&db)
        .in_transaction(&tx)
        .attributes(Record::FIELDS.attributes);
    bound.set(1001, &m("blood_sugar", 7.1)).await.unwrap();

    // Every read of the bound handle sees the transaction's own write...
    let got = bound.get(1001, "blood_sugar").await.unwrap();
    assert_eq!(got.map(|i| i.value), Some(Bson::from(7.1)));
    let high = bound.key("blood_sugar").gt(7).unwrap();
    let found = bound.find(high.clone()).await.unwrap();
    assert_eq!(found.iter().map(|r| r.id).collect::<Vec<_>>(), [1001]);
    let ranked = bound
        .find_sorted(doc! {}, "blood_sugar", Order::Descending)
        .await
        .unwrap();
    assert_eq!(
        ranked.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1001, 1002]
    );

    // ... which no handle outside it sees before the commit.
    assert!(outside.find(high.clone()).await.unwrap().is_empty());
    let ranked = outside
        .find_sorted(doc! {}, "blood_sugar", Order::Descending)
        .await
        .unwrap();
    assert_eq!(ranked.iter().map(|r| r.id).collect::<Vec<_>>(), [1002]);
    tx.commit().await.unwrap();
    let found = outside.find(high).await.unwrap();
    assert_eq!(found.iter().map(|r| r.id).collect::<Vec<_>>(), [1001]);
}

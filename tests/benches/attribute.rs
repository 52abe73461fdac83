//! The attribute pattern's `set` and typed query vs the same commands written by hand.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- attribute` (embedded server, or
//! `MONGODB_URI`). Two groups, each toolkit vs driver, on a `records` collection whose
//! `{attributes.name: 1, attributes.value: 1}` index is synced first:
//! - `attribute_set`: one item of a record holding 20 measurements, the 20 keys set round-robin
//!   (each set replaces an existing item, so the document keeps its size):
//!   - `toolkit`: `Record::collection(&db).attributes(Record::FIELDS.attributes).set(id, &item)`;
//!   - `driver`: the same pipeline update, written out with the driver
//!     (`update_one(doc! { "_id": id }, vec![pipeline])`).
//!
//!   Each side sets its own record of one database.
//! - `attribute_query`: the records with a BMI above 25, 1 000 of 2 000 records of 5 measurements:
//!   - `toolkit`: `attrs.find(attrs.key(&"bmi".to_owned()).gt(25)?)`;
//!   - `driver`: `db.collection::<Record>("records").find(doc! { "attributes": { "$elemMatch":
//!     { "name": "bmi", "value": { "$gt": 25 } } } })`, collected with `TryStreamExt::try_collect`.
//!
//! Before timing, both sides are checked to send the same commands: the sets, starting from the
//! same document, to leave the same document (replacing an item, dropping a later duplicate of
//! it, appending a new one); the queries to read the same records.
//!
//! On the embedded server one set takes about 2.5-3.5 ms (a plain `$set` of one unindexed field
//! already takes about 2 ms there) and one query about 25-45 ms. The spread from run to run (up
//! to ±20%, either side ahead) is far larger than any difference between the sides: compare
//! several runs, not one. Timed in alternating pairs in one process, the toolkit/driver ratio's
//! median was 1.005-1.010 for the set and 0.99-1.00 for the query.

use bson::{doc, Bson, Document};
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use mongodb::Database;
use pattern_runtime::{Fields, Model};
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::runtime::Runtime;

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

/// The measurements of the `set` records, with their units.
const KEYS: [(&str, &str); 20] = [
    ("bmi", "kg/m2"),
    ("blood_sugar", "mmol/L"),
    ("systolic", "mmHg"),
    ("diastolic", "mmHg"),
    ("heart_rate", "bpm"),
    ("weight", "kg"),
    ("height", "cm"),
    ("cholesterol", "mmol/L"),
    ("hdl", "mmol/L"),
    ("ldl", "mmol/L"),
    ("triglycerides", "mmol/L"),
    ("alt", "U/L"),
    ("ast", "U/L"),
    ("creatinine", "umol/L"),
    ("urea", "mmol/L"),
    ("hemoglobin", "g/L"),
    ("platelets", "10^9/L"),
    ("wbc", "10^9/L"),
    ("sodium", "mmol/L"),
    ("potassium", "mmol/L"),
];

/// The records of the `set` group: the toolkit's and the driver's.
const TOOLKIT_ID: i32 = 1;
const DRIVER_ID: i32 = 2;
/// The records the `set` check writes: the toolkit's and the driver's.
const TOOLKIT_CHECK_ID: i32 = 101;
const DRIVER_CHECK_ID: i32 = 102;

/// Records of the query group; every other one has a BMI above 25.
const RECORDS: i32 = 2_000;
const MATCHING: usize = 1_000;

fn m(name: &str, value: f64, unit: &str) -> Measurement {
    Measurement {
        name: name.into(),
        value: Bson::Double(value),
        unit: Some(unit.into()),
    }
}

/// The item of iteration `n`: the keys round-robin, a double value (always 8 bytes).
fn item(n: u32) -> Measurement {
    let (name, unit) = KEYS[n as usize % KEYS.len()];
    m(name, f64::from(n) / 10.0, unit)
}

/// A record holding every key once.
fn full_record(id: i32) -> Record {
    Record {
        id,
        attributes: (0..20).map(item).collect(),
    }
}

/// The `set` database: the timed records and the check records, each holding the 20 keys (the
/// check records also a later duplicate of `systolic`).
fn fresh_set(rt: &Runtime) -> TestDb {
    rt.block_on(async {
        let db = pattern_testkit::test_db("bench_attribute_set").await;
        pattern_runtime::sync(&db)
            .models(&[Record::SCHEMA])
            .await
            .unwrap();
        let mut records: Vec<Record> = [TOOLKIT_ID, DRIVER_ID, TOOLKIT_CHECK_ID, DRIVER_CHECK_ID]
            .into_iter()
            .map(full_record)
            .collect();
        for r in &mut records[2..] {
            r.attributes.push(m("systolic", 999.0, "mmHg"));
        }
        Record::collection(&db)
            .raw()
            .insert_many(&records)
            .await
            .unwrap();
        db.take_commands();
        db
    })
}

/// The query database: 2 000 records of 5 measurements; the BMIs run 18..=33, half above 25.
fn fresh_query(rt: &Runtime) -> TestDb {
    rt.block_on(async {
        let db = pattern_testkit::test_db("bench_attribute_query").await;
        pattern_runtime::sync(&db)
            .models(&[Record::SCHEMA])
            .await
            .unwrap();
        let records: Vec<Record> = (0..RECORDS)
            .map(|id| {
                let bmi = f64::from(18 + id % 16);
                let x = f64::from(id % 100) / 10.0;
                Record {
                    id,
                    attributes: vec![
                        m("blood_sugar", 4.0 + x / 2.0, "mmol/L"),
                        m("bmi", bmi, "kg/m2"),
                        m("heart_rate", 60.0 + x * 3.0, "bpm"),
                        m("systolic", 110.0 + x * 4.0, "mmHg"),
                        m("weight", 55.0 + x * 5.0, "kg"),
                    ],
                }
            })
            .collect();
        Record::collection(&db)
            .raw()
            .insert_many(&records)
            .await
            .unwrap();
        db.take_commands();
        db
    })
}

async fn toolkit_set(db: &Database, id: i32, item: &Measurement) {
    Record::collection(db)
        .attributes(Record::FIELDS.attributes)
        .set(id, item)
        .await
        .unwrap();
}

/// `Attributes::set`'s pipeline update, written out for the `attributes` field of `Record`.
async fn driver_set(db: &Database, id: i32, item: &Measurement) {
    let key = item.name.as_str();
    let item = Bson::Document(bson::serialize_to_document(item).unwrap());
    // a: the items; i: the first with the key, or -1. Then a[..i] + [item] + a[i+1..] without
    // the key, or a + [item].
    let value = doc! {
        "$let": {
            "vars": { "a": { "$ifNull": ["$attributes", []] } },
            "in": { "$let": {
                "vars": { "i": { "$indexOfArray": [
                    { "$map": { "input": "$$a", "in": "$$this.name" } },
                    key,
                ] } },
                "in": { "$cond": [
                    { "$eq": ["$$i", -1] },
                    { "$concatArrays": ["$$a", [item.clone()]] },
                    { "$concatArrays": [
                        { "$slice": ["$$a", "$$i"] },
                        [item],
                        { "$filter": {
                            "input": { "$slice": ["$$a", { "$subtract": [{ "$add": ["$$i", 1] }, { "$size": "$$a" }] }] },
                            "cond": { "$ne": ["$$this.name", key] },
                        } },
                    ] },
                ] },
            } },
        }
    };
    let result = db
        .collection::<Document>("records")
        .update_one(
            doc! { "_id": id },
            vec![doc! { "$set": { "attributes": value } }],
        )
        .await
        .unwrap();
    assert_eq!(result.matched_count, 1, "no record {id}");
}

async fn toolkit_query(db: &Database) -> Vec<Record> {
    let attrs = Record::collection(db).attributes(Record::FIELDS.attributes);
    attrs
        .find(attrs.key("bmi".to_owned()).gt(25).unwrap())
        .await
        .unwrap()
}

async fn driver_query(db: &Database) -> Vec<Record> {
    db.collection::<Record>("records")
        .find(doc! { "attributes": { "$elemMatch": { "name": "bmi", "value": { "$gt": 25 } } } })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// The commands sent since the last call.
fn sent(db: &TestDb) -> Vec<(String, String)> {
    db.take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect()
}

/// Record `id` as stored, without its `_id`.
fn stored(rt: &Runtime, db: &TestDb, id: i32) -> Document {
    let mut d = rt
        .block_on(async {
            db.collection::<Document>("records")
                .find_one(doc! { "_id": id })
                .await
        })
        .unwrap()
        .expect("the record exists");
    d.remove("_id");
    d
}

/// From the same document, each side's set sends one update and leaves the same document: an
/// item replaced where it is (and its later duplicate dropped), one replaced without duplicate,
/// a new one appended, then replaced. The timed records are set once each and still match.
fn check_set(rt: &Runtime, db: &TestDb) {
    let one_update = vec![("update".to_owned(), "records".to_owned())];
    let steps = [
        m("systolic", 121.0, "mmHg"),
        m("weight", 70.5, "kg"),
        m("vitamin_d", 48.0, "nmol/L"),
        m("vitamin_d", 52.0, "nmol/L"),
        item(0),
    ];
    assert_eq!(
        stored(rt, db, TOOLKIT_CHECK_ID),
        stored(rt, db, DRIVER_CHECK_ID)
    );
    for step in &steps {
        db.take_commands();
        rt.block_on(toolkit_set(db, TOOLKIT_CHECK_ID, step));
        assert_eq!(sent(db), one_update);
        rt.block_on(driver_set(db, DRIVER_CHECK_ID, step));
        assert_eq!(sent(db), one_update);
        let (by_toolkit, by_driver) = (
            stored(rt, db, TOOLKIT_CHECK_ID),
            stored(rt, db, DRIVER_CHECK_ID),
        );
        assert_eq!(by_toolkit, by_driver, "after setting {step:?}");
        let items = by_toolkit.get_array("attributes").unwrap();
        let with_key = items
            .iter()
            .filter(|i| i.as_document().unwrap().get_str("name").ok() == Some(step.name.as_str()))
            .count();
        assert_eq!(with_key, 1, "{step:?}: one item with the key");
    }
    assert_eq!(
        stored(rt, db, TOOLKIT_CHECK_ID)
            .get_array("attributes")
            .unwrap()
            .len(),
        21
    );
    // The timed records: one set each, the same document, still 20 items.
    rt.block_on(toolkit_set(db, TOOLKIT_ID, &item(20)));
    rt.block_on(driver_set(db, DRIVER_ID, &item(20)));
    let (by_toolkit, by_driver) = (stored(rt, db, TOOLKIT_ID), stored(rt, db, DRIVER_ID));
    assert_eq!(by_toolkit, by_driver);
    assert_eq!(by_toolkit.get_array("attributes").unwrap().len(), 20);
    db.take_commands();
}

/// Both sides send the same commands and read the same records: the 1 000 with a BMI above 25.
fn check_query(rt: &Runtime, db: &TestDb) {
    let mut by_toolkit = rt.block_on(toolkit_query(db));
    let toolkit_sent = sent(db);
    let mut by_driver = rt.block_on(driver_query(db));
    let driver_sent = sent(db);
    assert_eq!(toolkit_sent, driver_sent);
    assert_eq!(toolkit_sent[0], ("find".to_owned(), "records".to_owned()));
    by_toolkit.sort_by_key(|r| r.id);
    by_driver.sort_by_key(|r| r.id);
    let ids = |rs: &[Record]| rs.iter().map(|r| r.id).collect::<Vec<_>>();
    let expected: Vec<i32> = (0..RECORDS).filter(|id| 18 + id % 16 > 25).collect();
    assert_eq!(expected.len(), MATCHING);
    assert_eq!(ids(&by_toolkit), expected);
    assert_eq!(ids(&by_driver), expected);
    assert!(
        by_toolkit == by_driver,
        "the two sides read different records"
    );
}

fn set(c: &mut Criterion, rt: &Runtime) {
    let test_db = fresh_set(rt);
    check_set(rt, &test_db);
    let db = test_db.db();

    let mut g = c.benchmark_group("attribute_set");
    // One update of one small document: 30 samples in 3 s are plenty.
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    let mut n = 0u32;
    g.bench_function("toolkit", |b| {
        b.to_async(rt).iter(|| {
            n = n.wrapping_add(1);
            let item = item(n);
            async move { toolkit_set(db, TOOLKIT_ID, &item).await }
        });
    });
    let mut n = 0u32;
    g.bench_function("driver", |b| {
        b.to_async(rt).iter(|| {
            n = n.wrapping_add(1);
            let item = item(n);
            async move { driver_set(db, DRIVER_ID, &item).await }
        });
    });
    g.finish();
}

fn query(c: &mut Criterion, rt: &Runtime) {
    let test_db = fresh_query(rt);
    check_query(rt, &test_db);
    let db = test_db.db();

    let mut g = c.benchmark_group("attribute_query");
    // One find of 1 000 records takes 25-45 ms on the embedded server: 15 samples (120 finds)
    // fit in 6 s.
    g.sample_size(15);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(6));
    g.bench_function("toolkit", |b| {
        b.to_async(rt).iter(|| async {
            let found = toolkit_query(db).await;
            assert_eq!(found.len(), MATCHING);
            found
        });
    });
    g.bench_function("driver", |b| {
        b.to_async(rt).iter(|| async {
            let found = driver_query(db).await;
            assert_eq!(found.len(), MATCHING);
            found
        });
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    set(c, &rt);
    query(c, &rt);
}

criterion_group!(attribute, benches);

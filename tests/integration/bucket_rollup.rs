//! `rollup` series (`#[bucket]` windows of summaries) against the server: their validators
//! (declared with serde's names; none for a native time series), windows opened by absent
//! optional fields, sums past `i32` and `i64` and past `f64::MAX`, NaN and infinities refused
//! with the whole batch, hostile keys stored literally, wrong types refused naming the field,
//! summaries off the window boundaries, and concurrent writers into one window.
//!
//! Every model is in this module, so `test_db` installs their validators at `strict`/`error`
//! with other fields forbidden: every toolkit write below must pass them.

use crate::support::{at, is_invalid_value, raw_insert};
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{
    validator::{sync_validators, ValidatorOptions, ValidatorState},
    Error, Measurement, SyncOptions,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Models: rollups
// ---------------------------------------------------------------------------------------------

/// A rollup with renamed key, time and summarised fields, integer and float fields, an `Option`
/// stored as null and one skipped when `None`.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    rollup,
    collection = "ncl_speed",
    key = seg_id,
    time = ts,
    span = "1m",
    summary(
        speed(sum, min, max),
        avg_speed(sum),
        temp(min, max, sum),
        gust(min, max, sum),
        big(sum, max),
        ratio(min, max, sum),
        hits(sum, min, max)
    )
)]
struct NclSpeed {
    #[serde(rename = "seg")]
    seg_id: String,
    #[serde(rename = "t")]
    ts: DateTime,
    #[serde(rename = "spd")]
    speed: i32,
    avg_speed: f64,
    temp: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    gust: Option<i32>,
    big: i64,
    ratio: f32,
    hits: u32,
    /// Not summarised: a rollup does not keep it.
    note: f64,
}

/// A rollup whose first summarised field is sometimes absent.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(rollup, collection = "ncl_levels", key = site, time = at, span = "1h", summary(level(sum, min), flow(sum)))]
struct NclLevel {
    site: String,
    at: DateTime,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    level: Option<f64>,
    flow: i64,
}

/// A rollup with a compound key.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(rollup, collection = "ncl_lanes", key(site, lane), time = at, span = "1m", summary(cars(sum, max)))]
struct NclLane {
    site: String,
    lane: i32,
    at: DateTime,
    cars: i32,
}

/// A native series: no validator.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(native, collection = "ncl_native", key = dev, time = at, granularity = "seconds")]
struct NclNative {
    dev: String,
    at: DateTime,
    value: f64,
}

fn speed(seg: &str, ms: i64, speed: i32) -> NclSpeed {
    NclSpeed {
        seg_id: seg.into(),
        ts: at(ms),
        speed,
        avg_speed: 1.0,
        temp: None,
        gust: None,
        big: 1,
        ratio: 0.5,
        hits: 1,
        note: 0.0,
    }
}

fn as_i64(b: Option<&Bson>) -> Option<i64> {
    match b? {
        Bson::Int32(v) => Some(*v as i64),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.fract() == 0.0 => Some(*v as i64),
        _ => None,
    }
}

fn as_f64(b: Option<&Bson>) -> Option<f64> {
    match b? {
        Bson::Int32(v) => Some(*v as f64),
        Bson::Int64(v) => Some(*v as f64),
        Bson::Double(v) => Some(*v),
        _ => None,
    }
}

async fn window(db: &mongodb::Database, seg: &str, t: DateTime) -> Option<Document> {
    NclSpeed::series(db)
        .collection()
        .find_one(doc! { "seg": seg, "t": t })
        .await
        .unwrap()
}

fn validation_fields(e: &Error) -> Vec<String> {
    match e {
        Error::ValidationFailed { fields, .. } => fields.clone(),
        other => panic!("expected ValidationFailed, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Rollup validators
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn rollup_validator_is_declared_with_serde_names() {
    let v = NclSpeed::SCHEMA
        .validator(&ValidatorOptions::new())
        .expect("a rollup series has a validator (validator module docs)");
    let schema = v.get_document("$jsonSchema").unwrap();
    let props = schema.get_document("properties").unwrap();
    for name in [
        "seg",
        "t",
        "spd_num",
        "spd_sum",
        "spd_min",
        "spd_max",
        "avgSpeed_num",
        "avgSpeed_sum",
        "temp_min",
        "gust_sum",
        "big_sum",
        "big_max",
        "ratio_min",
        "hits_min",
    ] {
        assert!(props.contains_key(name), "no property {name} in {props}");
    }
    for rust_name in [
        "seg_id",
        "ts",
        "speed",
        "speed_num",
        "avg_speed_sum",
        "note",
        "note_num",
    ] {
        assert!(
            !props.contains_key(rust_name),
            "unexpected {rust_name} in {props}"
        );
    }
    let required: Vec<&str> = schema
        .get_array("required")
        .map(|a| a.iter().filter_map(|b| b.as_str()).collect())
        .unwrap_or_default();
    assert!(
        required.contains(&"seg") && required.contains(&"t"),
        "{required:?}"
    );
    // The sum of an i32 field is an int or a long (it passes i32::MAX).
    let spd_sum = format!("{}", props.get_document("spd_sum").unwrap());
    assert!(
        spd_sum.contains("long") && spd_sum.contains("int"),
        "{spd_sum}"
    );
}

#[tokio::test]
async fn rollup_and_native_validator_states() {
    let db = test_db_unvalidated("ncl_validator_states").await;
    let strict = ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields();
    let report = sync_validators(&db, &[NclSpeed::SCHEMA, NclNative::SCHEMA], &strict)
        .await
        .unwrap();
    let speed = report
        .models
        .iter()
        .find(|s| s.collection == "ncl_speed")
        .unwrap();
    assert!(
        matches!(speed.state, ValidatorState::Created),
        "{:?}",
        speed.state
    );
    let native = report
        .models
        .iter()
        .find(|s| s.collection == "ncl_native")
        .unwrap();
    assert!(
        matches!(native.state, ValidatorState::NotGenerated { .. }),
        "{:?}",
        native.state
    );
    assert!(NclNative::SCHEMA.validator(&strict).is_none());
    // The native series still works after that (no normal collection made in its place).
    let series = NclNative::series(&db);
    series
        .insert(&NclNative {
            dev: "d".into(),
            at: at(0),
            value: 1.5,
        })
        .await
        .unwrap();
    let s = series.summary("d", at(0), at(60_000)).await.unwrap();
    assert_eq!(s.count(), 1);
    // A second sync finds the rollup's validator unchanged.
    let again = sync_validators(&db, &[NclSpeed::SCHEMA], &strict)
        .await
        .unwrap();
    assert!(
        matches!(again.models[0].state, ValidatorState::Unchanged),
        "{:?}",
        again.models[0].state
    );
}

#[tokio::test]
async fn native_series_under_test_db_validators() {
    // test_db installs every model of this module, the native series included.
    let db = test_db("ncl_native_under_validators").await;
    let series = NclNative::series(&db);
    series
        .insert_many(&[
            NclNative {
                dev: "d1".into(),
                at: at(0),
                value: 1.0,
            },
            NclNative {
                dev: "d1".into(),
                at: at(1000),
                value: 3.0,
            },
        ])
        .await
        .unwrap();
    let s = series.summary("d1", at(0), at(60_000)).await.unwrap();
    assert_eq!(s.count(), 2);
}

#[tokio::test]
async fn rollup_toolkit_writes_pass_strict_validator() {
    let db = test_db("ncl_rollup_writes").await;
    let series = NclSpeed::series(&db);
    let mut m1 = speed("s1", 0, i32::MAX);
    m1.temp = Some(20.0);
    m1.avg_speed = 1.5;
    m1.big = 5;
    m1.hits = u32::MAX;
    series.insert(&m1).await.unwrap();
    let mut m2 = speed("s1", 1000, i32::MAX);
    m2.gust = Some(7);
    m2.ratio = 0.25;
    let mut m3 = speed("s1", 2000, -5);
    m3.temp = Some(-3.5);
    m3.gust = Some(-2);
    m3.big = i64::MAX - 10;
    m3.note = f64::NAN; // not summarised: accepted, not kept
    series.insert_many(&[m2, m3]).await.unwrap();

    let w = window(&db, "s1", at(0)).await.expect("one window");
    assert_eq!(as_i64(w.get("spd_num")), Some(3), "{w}");
    assert_eq!(
        as_i64(w.get("spd_sum")),
        Some(2 * i32::MAX as i64 - 5),
        "{w}"
    );
    assert!(matches!(w.get("spd_min"), Some(Bson::Int32(-5))), "{w}");
    assert!(
        matches!(w.get("spd_max"), Some(Bson::Int32(i32::MAX))),
        "{w}"
    );
    assert_eq!(as_i64(w.get("big_sum")), Some(i64::MAX - 4), "{w}");
    assert_eq!(as_i64(w.get("hits_sum")), Some(u32::MAX as i64 + 2), "{w}");

    let s = series.summary("s1", at(0), at(60_000)).await.unwrap();
    assert_eq!(s.count(), 3);
    assert_eq!(
        s.min(NclSpeed::FIELDS.temp).unwrap(),
        Some(Some(-3.5)),
        "{:?}",
        s.fields()
    );
    assert_eq!(s.max(NclSpeed::FIELDS.temp).unwrap(), Some(Some(20.0)));
    assert_eq!(s.sum(NclSpeed::FIELDS.temp).unwrap(), Some(Some(16.5)));
    assert_eq!(s.min(NclSpeed::FIELDS.gust).unwrap(), Some(Some(-2)));
    assert_eq!(s.sum(NclSpeed::FIELDS.gust).unwrap(), Some(Some(5)));
    assert_eq!(s.min(NclSpeed::FIELDS.speed).unwrap(), Some(-5));
    assert_eq!(s.max(NclSpeed::FIELDS.hits).unwrap(), Some(u32::MAX));
    assert_eq!(s.min(NclSpeed::FIELDS.ratio).unwrap(), Some(0.25));
    // An i32 sum past i32::MAX: `Error::Bson` in the field's type (documented), exact in BSON.
    assert!(matches!(s.sum(NclSpeed::FIELDS.speed), Err(Error::Bson(_))));
    let spd = s.fields().get_document("spd").unwrap();
    assert_eq!(
        as_i64(spd.get("sum")),
        Some(2 * i32::MAX as i64 - 5),
        "{spd}"
    );
}

#[tokio::test]
async fn rollup_null_option_never_becomes_the_min() {
    let db = test_db("ncl_rollup_null_min").await;
    let series = NclSpeed::series(&db);
    let mut a = speed("n", 0, 1);
    a.temp = Some(5.0);
    series.insert(&a).await.unwrap();
    series.insert(&speed("n", 1000, 2)).await.unwrap(); // temp: null
    series.insert_many(&[speed("n", 2000, 3)]).await.unwrap();
    let s = series.summary("n", at(0), at(60_000)).await.unwrap();
    assert_eq!(
        s.min(NclSpeed::FIELDS.temp).unwrap(),
        Some(Some(5.0)),
        "{:?}",
        s.fields()
    );
    assert_eq!(s.sum(NclSpeed::FIELDS.temp).unwrap(), Some(Some(5.0)));
    let w = window(&db, "n", at(0)).await.unwrap();
    assert!(!matches!(w.get("temp_min"), Some(Bson::Null)), "{w}");
}

#[tokio::test]
async fn rollup_window_opened_by_absent_option_fields() {
    // The first measurement of the window has no `gust` (skipped) and a null `temp`; the
    // strict validator must accept the window the upsert creates.
    let db = test_db("ncl_rollup_absent_first").await;
    let series = NclSpeed::series(&db);
    series.insert(&speed("a", 0, 10)).await.unwrap();
    let w = window(&db, "a", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_num")), Some(1), "{w}");
    assert!(
        w.get("gust_sum").is_none() && w.get("gust_min").is_none(),
        "{w}"
    );

    // NclLevel: the first summarised field is absent.
    let levels = NclLevel::series(&db);
    levels
        .insert(&NclLevel {
            site: "x".into(),
            at: at(0),
            level: None,
            flow: 3,
        })
        .await
        .unwrap();
    levels
        .insert_many(&[
            NclLevel {
                site: "x".into(),
                at: at(1000),
                level: Some(2.5),
                flow: 4,
            },
            NclLevel {
                site: "x".into(),
                at: at(2000),
                level: None,
                flow: 5,
            },
        ])
        .await
        .unwrap();
    let s = levels.summary("x", at(0), at(3_600_000)).await.unwrap();
    assert_eq!(s.sum(NclLevel::FIELDS.flow).unwrap(), Some(12));
    assert_eq!(s.min(NclLevel::FIELDS.level).unwrap(), Some(Some(2.5)));
    // `Summary::count` is "how many measurements"; the rollup docs say it is the first
    // summarised field's count. Here they differ: record what it is.
    // Observed: 3 (how many measurements, as `Summary::count` says), while the first
    // summarised field's count (`level_num`, what `Series::summary` says it is) is 1.
    let w = levels
        .collection()
        .find_one(doc! { "site": "x" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(as_i64(w.get("level_num")), Some(1), "{w}");
    assert_eq!(as_i64(w.get("flow_num")), Some(3), "{w}");
    assert_eq!(s.count(), 3);
}

#[tokio::test]
async fn rollup_batch_sums_past_i32_in_one_chunk() {
    let db = test_db("ncl_rollup_batch_i32").await;
    let series = NclSpeed::series(&db);
    let batch: Vec<NclSpeed> = (0..5).map(|i| speed("b", i * 1000, i32::MAX)).collect();
    series.insert_many(&batch).await.unwrap();
    let w = window(&db, "b", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_sum")), Some(5 * i32::MAX as i64), "{w}");
    assert_eq!(as_i64(w.get("spd_num")), Some(5), "{w}");
    // u32 values summed in one chunk.
    let mut batch: Vec<NclSpeed> = (0..4).map(|i| speed("u", i * 1000, 1)).collect();
    for m in &mut batch {
        m.hits = u32::MAX;
    }
    series.insert_many(&batch).await.unwrap();
    let w = window(&db, "u", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("hits_sum")), Some(4 * u32::MAX as i64), "{w}");
}

#[tokio::test]
async fn rollup_sum_past_i64_is_typed_and_writes_nothing() {
    let db = test_db("ncl_rollup_i64_overflow").await;
    let series = NclSpeed::series(&db);
    let mut a = speed("o", 0, 1);
    a.big = i64::MAX;
    series.insert(&a).await.unwrap();
    let mut b = speed("o", 1000, 1);
    b.big = 1;
    let err = series.insert(&b).await.expect_err("a sum past i64::MAX");
    assert!(is_invalid_value(&err), "expected InvalidValue, got {err:?}");
    let w = window(&db, "o", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_num")), Some(1), "nothing written: {w}");
    assert_eq!(as_i64(w.get("big_sum")), Some(i64::MAX), "{w}");
}

#[tokio::test]
async fn rollup_batch_sum_past_i64_is_typed() {
    let db = test_db("ncl_rollup_i64_batch").await;
    let series = NclSpeed::series(&db);
    let mut a = speed("o", 0, 1);
    a.big = i64::MAX;
    let mut b = speed("o", 1000, 1);
    b.big = i64::MAX;
    let batch = [a, b];
    // Without validators, nothing may be stored (an i64 field's sum as a double).
    let udb = test_db_unvalidated("ncl_rollup_i64_batch_unvalidated").await;
    let r = NclSpeed::series(&udb).insert_many(&batch).await;
    let w = window(&udb, "o", at(0)).await;
    assert!(w.is_none(), "stored {w:?} after {r:?}");
    assert!(matches!(r, Err(Error::InvalidValue { .. })), "{r:?}");
    // Under the strict validator.
    let err = series
        .insert_many(&batch)
        .await
        .expect_err("a sum past i64::MAX");
    assert!(is_invalid_value(&err), "expected InvalidValue, got {err:?}");
    assert!(window(&db, "o", at(0)).await.is_none(), "nothing written");
}

#[tokio::test]
async fn rollup_batch_large_i64_sums_stay_exact() {
    // Within the range, a chunk's integer sum must stay an exact integer (a validator-typed
    // `long`), not a double rounded to 2^53.
    let db = test_db("ncl_rollup_i64_exact").await;
    let series = NclSpeed::series(&db);
    let big = (1i64 << 53) + 1;
    let mut a = speed("x", 0, 1);
    a.big = big;
    let mut b = speed("x", 1000, 1);
    b.big = 2;
    series.insert_many(&[a, b]).await.unwrap();
    let w = window(&db, "x", at(0)).await.unwrap();
    assert!(
        matches!(w.get("big_sum"), Some(Bson::Int64(v)) if *v == big + 2),
        "{w}"
    );
    assert!(
        matches!(w.get("big_max"), Some(Bson::Int64(v)) if *v == big),
        "{w}"
    );
    // Near the top of the range, still exact.
    let mut c = speed("y", 0, 1);
    c.big = i64::MAX - 5;
    let mut d = speed("y", 1000, 1);
    d.big = 3;
    series.insert_many(&[c, d]).await.unwrap();
    let w = window(&db, "y", at(0)).await.unwrap();
    assert!(
        matches!(w.get("big_sum"), Some(Bson::Int64(v)) if *v == i64::MAX - 2),
        "{w}"
    );
}

#[tokio::test]
async fn rollup_nan_and_infinities_refused_whole_batch() {
    let db = test_db("ncl_rollup_nan").await;
    let series = NclSpeed::series(&db);
    let mut bad = Vec::new();
    let mut m = speed("h", 0, 1);
    m.avg_speed = f64::NAN;
    bad.push(("avgSpeed", m));
    let mut m = speed("h", 0, 1);
    m.temp = Some(f64::INFINITY);
    bad.push(("temp", m));
    let mut m = speed("h", 0, 1);
    m.ratio = f32::NEG_INFINITY;
    bad.push(("ratio", m));
    for (field, m) in bad {
        let e = series.insert(&m).await.expect_err(field);
        match &e {
            Error::InvalidValue { field: f, .. } => assert_eq!(f, field, "{e:?}"),
            other => panic!("{field}: {other:?}"),
        }
        let e = series
            .insert_many(&[speed("h", 1000, 2), m.clone()])
            .await
            .expect_err(field);
        assert!(is_invalid_value(&e), "{e:?}");
    }
    assert!(window(&db, "h", at(0)).await.is_none(), "nothing written");
}

#[tokio::test]
async fn rollup_finite_values_summing_past_f64_max_store_infinity() {
    // Each value is finite; their sum is not representable. As documented, floats add up as
    // `f64` does (the server's `$inc` too): the stored sum is infinity, in one batch or two
    // writes alike; only a NaN or an infinity sent is refused.
    let db = test_db("ncl_rollup_inf_sum").await;
    let series = NclSpeed::series(&db);
    let mut a = speed("f", 0, 1);
    a.avg_speed = f64::MAX;
    series.insert(&a).await.unwrap();
    let mut b = speed("f", 1000, 1);
    b.avg_speed = f64::MAX;
    series.insert(&b).await.unwrap();
    series.insert_many(&[a.clone(), b.clone()]).await.unwrap();
    let w = window(&db, "f", at(0)).await.unwrap();
    let sum = as_f64(w.get("avgSpeed_sum")).unwrap();
    assert!(sum.is_infinite() && sum > 0.0, "{w}");
    let mut nan = speed("f", 2000, 1);
    nan.avg_speed = f64::NAN;
    assert!(matches!(
        series.insert(&nan).await,
        Err(Error::InvalidValue { .. })
    ));
}

#[tokio::test]
async fn rollup_hostile_key_strings_are_literal() {
    let db = test_db("ncl_rollup_hostile_keys").await;
    let series = NclSpeed::series(&db);
    let keys = [
        "$spd_sum",
        "$where",
        "$$ROOT",
        "a.b",
        "",
        "$t",
        "{\"$gt\": \"\"}",
        "seg",
    ];
    for (i, k) in keys.iter().enumerate() {
        series.insert(&speed(k, 0, 100 + i as i32)).await.unwrap();
        series.insert_many(&[speed(k, 1000, 1000)]).await.unwrap();
    }
    for (i, k) in keys.iter().enumerate() {
        let s = series.summary(*k, at(0), at(60_000)).await.unwrap();
        assert_eq!(s.count(), 2, "key {k:?}: {:?}", s.fields());
        assert_eq!(
            s.sum(NclSpeed::FIELDS.speed).unwrap(),
            Some(1100 + i as i32),
            "key {k:?}"
        );
        assert_eq!(
            s.max(NclSpeed::FIELDS.speed).unwrap(),
            Some(1000),
            "key {k:?}"
        );
        let w = window(&db, k, at(0))
            .await
            .unwrap_or_else(|| panic!("window of {k:?}"));
        assert_eq!(w.get_str("seg").unwrap(), *k);
    }
    let n = NclSpeed::series(&db)
        .collection()
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(n, keys.len() as u64);
    // A compound key whose string starts with `$`.
    let lanes = NclLane::series(&db);
    lanes
        .insert(&NclLane {
            site: "$site".into(),
            lane: -1,
            at: at(0),
            cars: 3,
        })
        .await
        .unwrap();
    let s = lanes
        .summary(("$site".to_string(), -1), at(0), at(60_000))
        .await
        .unwrap();
    assert_eq!(s.sum(NclLane::FIELDS.cars).unwrap(), Some(3));
}

#[tokio::test]
async fn rollup_wrong_types_refused_naming_the_field() {
    let db = test_db("ncl_rollup_wrong_types").await;
    let series = NclSpeed::series(&db);
    let mut m = speed("w", 0, 7);
    m.temp = Some(1.0);
    m.gust = Some(2);
    series.insert(&m).await.unwrap();
    let good = window(&db, "w", at(0)).await.unwrap();
    let coll = NclSpeed::SERIES.collection();

    // Baseline: the toolkit's own window, copied to another window, is accepted.
    let mut copy = good.clone();
    copy.insert("_id", bson::oid::ObjectId::new());
    copy.insert("t", at(60_000));
    raw_insert(&db, coll, copy)
        .await
        .expect("a copy of a toolkit window passes");

    let cases: Vec<(&str, Bson)> = vec![
        ("spd_num", Bson::String("3".into())),
        ("spd_sum", Bson::Double(1.5)),
        ("spd_min", Bson::Int64(1)),
        ("seg", Bson::Int32(5)),
        ("t", Bson::String("2026".into())),
        ("avgSpeed_sum", Bson::String("x".into())),
        ("hits_min", Bson::Int32(-1)),
        ("temp_max", Bson::String("hot".into())),
        ("gust_sum", Bson::Double(0.5)),
        ("speed_num", Bson::Int32(1)), // the Rust name: not a field of the window
        ("note_sum", Bson::Int32(1)),  // a field that is not summarised
    ];
    for (i, (field, value)) in cases.into_iter().enumerate() {
        let mut d = good.clone();
        d.insert("_id", bson::oid::ObjectId::new());
        d.insert("t", at(120_000 + 60_000 * i as i64));
        d.insert(field, value.clone());
        let e = raw_insert(&db, coll, d).await.expect_err(field);
        let fields = validation_fields(&e);
        assert!(
            fields.iter().any(|f| f == field),
            "{field} = {value}: {fields:?} ({e})"
        );
    }
    // An update around the toolkit, too.
    let e = db
        .collection::<Document>(coll)
        .update_one(
            doc! { "_id": good.get("_id").unwrap() },
            doc! { "$set": { "spd_max": "fast" } },
        )
        .await
        .map_err(Error::from)
        .expect_err("wrong type");
    assert!(
        validation_fields(&e).iter().any(|f| f == "spd_max"),
        "{e:?}"
    );
    // A missing key is named too.
    let mut d = good.clone();
    d.insert("_id", bson::oid::ObjectId::new());
    d.remove("seg");
    let e = raw_insert(&db, coll, d).await.expect_err("no key");
    assert!(validation_fields(&e).iter().any(|f| f == "seg"), "{e:?}");
    // The toolkit still writes the window after all that.
    series.insert(&speed("w", 500, 1)).await.unwrap();
    let w = window(&db, "w", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_num")), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rollup_concurrent_writers_one_window_exact_counts() {
    let db = test_db("ncl_rollup_concurrent").await;
    pattern_runtime::sync(&db)
        .models(&[NclSpeed::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let writers = 8i64;
    let barrier = Arc::new(tokio::sync::Barrier::new(writers as usize));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let db: mongodb::Database = (*db).clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let series = NclSpeed::series(&db);
            barrier.wait().await;
            for i in 0..10i64 {
                let mut m = speed("c", (w * 10 + i) * 100, (w * 100 + i) as i32);
                if i % 2 == 0 {
                    m.gust = Some(i as i32);
                }
                m.big = i64::MAX / 1000;
                series.insert(&m).await.unwrap();
            }
            let batch: Vec<NclSpeed> = (0..10i64)
                .map(|i| {
                    let mut m = speed("c", 30_000 + (w * 10 + i) * 100, -((w * 100 + i) as i32));
                    m.temp = Some(i as f64);
                    m.big = i64::MAX / 1000;
                    m
                })
                .collect();
            series.insert_many(&batch).await.unwrap();
            // And a window of its own key, opened by all writers at once.
            series.insert(&speed("c2", 61_000 + w, 1)).await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let coll = NclSpeed::series(&db).collection().clone();
    assert_eq!(coll.count_documents(doc! { "seg": "c" }).await.unwrap(), 1);
    assert_eq!(coll.count_documents(doc! { "seg": "c2" }).await.unwrap(), 1);
    let w = window(&db, "c", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_num")), Some(160), "{w}");
    assert_eq!(as_i64(w.get("spd_sum")), Some(0), "{w}");
    assert_eq!(as_i64(w.get("gust_sum")), Some(writers * 20), "{w}");
    assert_eq!(
        as_i64(w.get("big_sum")),
        Some(160 * (i64::MAX / 1000)),
        "{w}"
    );
    assert_eq!(
        as_f64(w.get("temp_sum")),
        Some(writers as f64 * 45.0),
        "{w}"
    );
    assert!(matches!(w.get("spd_max"), Some(Bson::Int32(709))), "{w}");
    assert!(matches!(w.get("spd_min"), Some(Bson::Int32(-709))), "{w}");
    let w2 = window(&db, "c2", at(60_000)).await.unwrap();
    assert_eq!(as_i64(w2.get("spd_num")), Some(writers), "{w2}");
    let s = NclSpeed::series(&db)
        .summary("c", at(0), at(60_000))
        .await
        .unwrap();
    assert_eq!(s.count(), 160);
}

#[tokio::test]
async fn rollup_summary_off_boundaries_refused() {
    let db = test_db("ncl_rollup_aligned").await;
    let series = NclSpeed::series(&db);
    series.insert(&speed("r", 0, 1)).await.unwrap();
    let e = series.summary("r", at(1), at(60_000)).await.unwrap_err();
    assert!(matches!(e, Error::RangeNotAligned { .. }), "{e:?}");
    let e = series.summary("r", at(0), at(59_999)).await.unwrap_err();
    assert!(matches!(e, Error::RangeNotAligned { .. }), "{e:?}");
    assert_eq!(
        series
            .summary("r", at(0), at(120_000))
            .await
            .unwrap()
            .count(),
        1
    );
}

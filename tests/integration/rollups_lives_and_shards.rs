//! A newcomer's closing review, from the documentation alone, of three recent changes:
//! server-side validators of `rollup` series windows (and none for a native series),
//! `#[versioned]` documents deleted and inserted again under the same `_id`, and
//! `#[approximate(sharded)]` totals past the 64-bit range.
//!
//! Every model is in this module, so `test_db` installs their validators at strict/error with
//! other fields forbidden: every toolkit write below must pass them.

use pattern_runtime::At;
use std::collections::BTreeSet;
use std::sync::Arc;

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::approximation::Random;
use pattern_runtime::validator::{sync_validators, ValidatorOptions, ValidatorState};
use pattern_runtime::{
    ComputedFields, Error, Measurement, Missing, Model, References, SyncOptions,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

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

// ---------------------------------------------------------------------------------------------
// Models: versioning
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vdocs")]
#[versioned(history = "ncl_vdoc_revisions")]
struct NclVDoc {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
    n: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vkeeps")]
#[versioned(history = "ncl_vkeep_revisions", keep = 2)]
struct NclVKeep {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_v32s")]
#[versioned(history = "ncl_v32_revisions")]
struct NclV32 {
    #[serde(rename = "_id")]
    id: i32,
    #[version]
    version: i32,
    n: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vu32s")]
#[versioned(history = "ncl_vu32_revisions", keep = 3)]
struct NclVU32 {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: u32,
    n: i64,
}

/// Versioned, an extended-reference source and a computed source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vcustomers")]
#[versioned(history = "ncl_vcustomer_revisions")]
#[extended_ref(NclCustRef(name))]
#[serde(rename_all = "camelCase")]
struct NclVCust {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    name: String,
    region: String,
    spend: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "ncl_vorders")]
struct NclVOrder {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    customer: NclCustRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_regions")]
#[serde(rename_all = "camelCase")]
struct NclRegion {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = NclVCust, by = region)]
    customers: i64,
    #[computed(sum = NclVCust.spend, by = region)]
    spend: i64,
}

// ---------------------------------------------------------------------------------------------
// Models: sharded counters
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ncl_pages")]
struct NclPage {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(sharded, shards = 1)]
    one: i64,
    #[approximate(sharded, shards = 4)]
    four: i64,
    #[approximate(sharded, shards = 2)]
    small: i32,
    #[approximate(sharded, shards = 2)]
    unsigned: u32,
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// 2026-01-01T00:00:00Z: on a minute and an hour boundary.
const T0: i64 = 1_767_225_600_000;

fn at(ms: i64) -> DateTime {
    DateTime::from_millis(T0 + ms)
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

async fn raw_insert(db: &mongodb::Database, coll: &str, d: Document) -> Result<(), Error> {
    db.collection::<Document>(coll)
        .insert_one(d)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

fn is_invalid_value(e: &Error) -> bool {
    matches!(e, Error::InvalidValue { .. })
}

// ---------------------------------------------------------------------------------------------
// 1. Rollup validators
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn ncl_rollup_validator_is_declared_with_serde_names() {
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
async fn ncl_rollup_and_native_validator_states() {
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
async fn ncl_native_series_under_test_db_validators() {
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
async fn ncl_rollup_toolkit_writes_pass_strict_validator() {
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
async fn ncl_rollup_null_option_never_becomes_the_min() {
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
async fn ncl_rollup_window_opened_by_absent_option_fields() {
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
async fn ncl_rollup_batch_sums_past_i32_in_one_chunk() {
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
async fn ncl_rollup_sum_past_i64_is_typed_and_writes_nothing() {
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
async fn ncl_rollup_batch_sum_past_i64_is_typed() {
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
async fn ncl_rollup_batch_large_i64_sums_stay_exact() {
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
async fn ncl_rollup_nan_and_infinities_refused_whole_batch() {
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
async fn ncl_rollup_finite_values_summing_past_f64_max_store_infinity() {
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
async fn ncl_rollup_hostile_key_strings_are_literal() {
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
async fn ncl_rollup_wrong_types_refused_naming_the_field() {
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
async fn ncl_rollup_concurrent_writers_one_window_exact_counts() {
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
async fn ncl_rollup_summary_off_boundaries_refused() {
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

// ---------------------------------------------------------------------------------------------
// 2. Versioned: deleted, then inserted again
// ---------------------------------------------------------------------------------------------

fn vdoc(id: i64, title: &str) -> NclVDoc {
    NclVDoc {
        id,
        version: 0,
        title: title.into(),
        n: 0,
    }
}

async fn versions_of(db: &mongodb::Database, id: i64) -> Vec<(i64, bool)> {
    let mut v: Vec<(i64, bool)> = NclVDoc::collection(db)
        .history(id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.version, r.deleted))
        .collect();
    v.sort_unstable();
    v
}

#[tokio::test]
async fn ncl_versioned_delete_reinsert_cycles_gapless() {
    let db = test_db("ncl_v_cycles").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut expected_deleted = Vec::new();
    let mut next = 1i64;
    for life in 0..4 {
        let mut d = vdoc(1, &format!("life {life}"));
        d.version = 77; // whatever the caller holds is overwritten
        docs.insert(&mut d).await.unwrap();
        assert_eq!(d.version, next, "life {life}");
        assert_eq!(docs.get(1).await.unwrap().unwrap().version, next);
        for s in 0..life {
            d.title = format!("life {life} save {s}");
            let v = docs.replace(&mut d).await.unwrap();
            next += 1;
            assert_eq!(v.version, Some(next));
        }
        docs.delete(1).await.unwrap();
        expected_deleted.push(next);
        assert!(docs.get(1).await.unwrap().is_none());
        next += 1;
        let h = versions_of(&db, 1).await;
        let want: Vec<(i64, bool)> = (1..next)
            .map(|v| (v, expected_deleted.contains(&v)))
            .collect();
        assert_eq!(h, want, "life {life}");
    }
    // Every revision still reads back, from every life.
    for v in 1..next {
        let r = docs.revision(1, v).await.unwrap();
        assert!(r.title.starts_with("life "), "{r:?}");
    }
    // The delete of a deleted document is NotFound, and archives nothing.
    let e = docs.delete(1).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(versions_of(&db, 1).await.len() as i64, next - 1);
}

#[tokio::test]
async fn ncl_versioned_keep_trims_across_lives() {
    let db = test_db("ncl_v_keep").await;
    pattern_runtime::sync(&db)
        .models(&[NclVKeep::SCHEMA])
        .await
        .unwrap();
    let docs = NclVKeep::collection(&db);
    let hist = |db: mongodb::Database| async move {
        let mut v: Vec<i64> = NclVKeep::collection(&db)
            .history("k")
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.version)
            .collect();
        v.sort_unstable();
        v
    };
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "a".into(),
    };
    docs.insert(&mut d).await.unwrap();
    for b in ["b", "c", "d"] {
        d.body = b.into();
        docs.replace(&mut d).await.unwrap();
    }
    assert_eq!(d.version, 4);
    assert_eq!(hist((*db).clone()).await, vec![2, 3]);
    docs.delete("k").await.unwrap(); // archives 4
                                     // Inserted again: after 4, whatever the trimming kept.
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "e".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 5);
    // Deleted at once, inserted again: 6.
    docs.delete("k").await.unwrap();
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "f".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 6);
    d.body = "g".into();
    assert_eq!(docs.replace(&mut d).await.unwrap().version, Some(7));
    let h = hist((*db).clone()).await;
    assert_eq!(h, vec![5, 6], "keep = 2 after a save");
    // keep trims but never the revision a later insert goes on from.
    docs.delete("k").await.unwrap();
    let mut d = NclVKeep {
        id: "k".into(),
        version: 0,
        body: "h".into(),
    };
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 8);
    d.body = "i".into();
    assert_eq!(docs.replace(&mut d).await.unwrap().version, Some(9));
    assert_eq!(hist((*db).clone()).await, vec![7, 8]);
    // revert to a trimmed revision: NotFound of the revision, nothing written.
    let e = docs.revert("k", 2).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Revision { version: 2, .. })),
        "{e:?}"
    );
    assert_eq!(docs.get("k").await.unwrap().unwrap().version, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ncl_versioned_concurrent_reinserts_then_saves_gapless() {
    let db = test_db("ncl_v_concurrent_reinsert").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut d = vdoc(5, "first");
    docs.insert(&mut d).await.unwrap();
    d.title = "second".into();
    docs.replace(&mut d).await.unwrap();
    docs.delete(5).await.unwrap(); // history 1, 2(deleted)

    let n = 8;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let docs = docs.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let mut d = vdoc(5, &format!("writer {i}"));
            barrier.wait().await;
            docs.insert(&mut d).await.map(|_| d.version)
        }));
    }
    let mut won = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(v) => won.push(v),
            Err(e) => assert!(e.is_duplicate_key(), "a losing insert: {e:?}"),
        }
    }
    assert_eq!(won, vec![3], "exactly one insert, at version 3");

    // Concurrent saves after the re-insert: every one lands, versions gapless.
    let mut tasks = Vec::new();
    for _ in 0..n {
        let docs = docs.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut seen = Vec::new();
            for _ in 0..5 {
                let d = docs.modify(5, 200, |d| d.n += 1).await.unwrap();
                seen.push(d.version);
            }
            seen
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    let want: Vec<i64> = (4..4 + 5 * n as i64).collect();
    assert_eq!(all, want, "each save a version of its own");
    let cur = docs.get(5).await.unwrap().unwrap();
    assert_eq!(cur.n, 5 * n as i64);
    assert_eq!(cur.version, 3 + 5 * n as i64);
    let h: Vec<i64> = versions_of(&db, 5)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(h, (1..cur.version).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ncl_versioned_concurrent_delete_insert_churn_gapless() {
    let db = test_db("ncl_v_churn").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let n = 6;
    let mut tasks = Vec::new();
    for w in 0..n {
        let docs = docs.clone();
        tasks.push(tokio::spawn(async move {
            let mut written = Vec::new();
            let mut unexpected = Vec::new();
            for i in 0..15 {
                match (w + i) % 3 {
                    0 => {
                        let mut d = vdoc(9, &format!("{w}/{i}"));
                        match docs.insert(&mut d).await {
                            Ok(_) => written.push(d.version),
                            Err(e) if e.is_duplicate_key() => {}
                            Err(e) => unexpected.push(format!("insert: {e:?}")),
                        }
                    }
                    1 => match docs.modify(9, 50, |d| d.n += 1).await {
                        Ok(d) => written.push(d.version),
                        Err(e) if e.is_not_found() => {}
                        Err(e) => unexpected.push(format!("modify: {e:?}")),
                    },
                    _ => match docs.delete(9).await {
                        Ok(()) => {}
                        Err(e) if e.is_not_found() => {}
                        Err(e) => unexpected.push(format!("delete: {e:?}")),
                    },
                }
            }
            (written, unexpected)
        }));
    }
    let mut written = Vec::new();
    let mut unexpected = Vec::new();
    for t in tasks {
        let (w, u) = t.await.unwrap();
        written.extend(w);
        unexpected.extend(u);
    }
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    let distinct: BTreeSet<i64> = written.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        written.len(),
        "two writes got one version: {written:?}"
    );
    let mut all: Vec<i64> = versions_of(&db, 9)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    if let Some(cur) = docs.get(9).await.unwrap() {
        all.push(cur.version);
    }
    all.sort_unstable();
    let max = *all.last().unwrap();
    assert_eq!(
        all,
        (1..=max).collect::<Vec<_>>(),
        "gapless, each version once"
    );
    // Whatever the race left, the document stays writable: a live one takes a modify (version
    // max + 1) and a delete (which archives it), and the next life goes on after that.
    let next = if docs.get(9).await.unwrap().is_some() {
        docs.modify(9, 5, |d| d.n += 1).await.unwrap();
        docs.delete(9).await.unwrap();
        max + 2
    } else {
        max + 1
    };
    let mut d = vdoc(9, "after");
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, next);
}

#[tokio::test]
async fn ncl_versioned_revert_to_an_earlier_life() {
    let db = test_db("ncl_v_revert").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    let docs = NclVDoc::collection(&db);
    let mut d = vdoc(2, "a");
    docs.insert(&mut d).await.unwrap(); // 1
    d.title = "b".into();
    d.n = 7;
    docs.replace(&mut d).await.unwrap(); // 2
    docs.delete(2).await.unwrap(); // 2 archived, deleted
    let mut d = vdoc(2, "c");
    docs.insert(&mut d).await.unwrap(); // 3
    assert_eq!(d.version, 3);
    assert_eq!(docs.revert(2, 1).await.unwrap(), 4);
    let cur = docs.get(2).await.unwrap().unwrap();
    assert_eq!((cur.title.as_str(), cur.n, cur.version), ("a", 0, 4));
    // The deleted revision of the earlier life.
    assert_eq!(docs.revert(2, 2).await.unwrap(), 5);
    let cur = docs.get(2).await.unwrap().unwrap();
    assert_eq!((cur.title.as_str(), cur.n, cur.version), ("b", 7, 5));
    // A version that never existed.
    let e = docs.revert(2, 99).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Revision { version: 99, .. })),
        "{e:?}"
    );
    // Reverting the current version is a new version equal to it.
    assert_eq!(docs.revert(2, 5).await.unwrap(), 6);
    // Deleted again: revert is NotFound of the document, nothing written.
    docs.delete(2).await.unwrap();
    let before = versions_of(&db, 2).await;
    let e = docs.revert(2, 1).await.unwrap_err();
    assert!(
        matches!(e.missing(), Some(Missing::Document { .. })),
        "{e:?}"
    );
    assert_eq!(versions_of(&db, 2).await, before);
    assert!(docs.get(2).await.unwrap().is_none());
    let h: Vec<i64> = before.iter().map(|(v, _)| *v).collect();
    assert_eq!(h, (1..=6).collect::<Vec<_>>());
    let mut d = vdoc(2, "d");
    docs.insert(&mut d).await.unwrap();
    assert_eq!(d.version, 7);
}

#[tokio::test]
async fn ncl_versioned_i32_and_u32_versions_across_lives() {
    let db = test_db("ncl_v_narrow").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclVU32::SCHEMA])
        .await
        .unwrap();
    let a = NclV32::collection(&db);
    let b = NclVU32::collection(&db);
    let mut expect = 0;
    for life in 0..3 {
        let mut x = NclV32 {
            id: -4,
            version: 0,
            n: life,
        };
        a.insert(&mut x).await.unwrap();
        expect += 1;
        assert_eq!(x.version, expect);
        x.n += 10;
        assert_eq!(
            a.replace(&mut x).await.unwrap().version,
            Some(expect as i64 + 1)
        );
        expect += 1;
        a.update(At(-4, expect as i64), doc! { "$inc": { "n": 1 } })
            .await
            .unwrap();
        expect += 1;
        a.delete(-4).await.unwrap(); // archives the current version
    }
    let stored = a.raw().clone_with_type::<Document>();
    let mut x = NclV32 {
        id: -4,
        version: 0,
        n: 0,
    };
    a.insert(&mut x).await.unwrap();
    assert_eq!(x.version, expect + 1);
    let raw = stored.find_one(doc! { "_id": -4 }).await.unwrap().unwrap();
    assert!(matches!(raw.get("version"), Some(Bson::Int32(_))), "{raw}");
    assert_eq!(a.revert(-4, 1).await.unwrap(), expect as i64 + 2);
    let raw = stored.find_one(doc! { "_id": -4 }).await.unwrap().unwrap();
    assert!(matches!(raw.get("version"), Some(Bson::Int32(_))), "{raw}");

    let mut expect = 0u32;
    for life in 0..4 {
        let mut y = NclVU32 {
            id: 7,
            version: 0,
            n: life,
        };
        b.insert(&mut y).await.unwrap();
        expect += 1;
        assert_eq!(y.version, expect, "life {life}");
        for _ in 0..3 {
            y.n += 1;
            b.replace(&mut y).await.unwrap();
            expect += 1;
        }
        assert_eq!(y.version, expect);
        b.delete(7).await.unwrap();
    }
    let h = b.history(7).await.unwrap();
    assert!(
        h.len() <= 4,
        "keep = 3 plus at most the deletes since: {}",
        h.len()
    );
    let mut y = NclVU32 {
        id: 7,
        version: 0,
        n: 0,
    };
    b.insert(&mut y).await.unwrap();
    assert_eq!(y.version, expect + 1);
}

fn limit_revision(id: i32) -> Document {
    doc! {
        "_id": bson::oid::ObjectId::new(), "docId": id, "version": i32::MAX,
        "snapshot": { "_id": id, "version": i32::MAX, "n": 1i64 },
        "archivedAt": DateTime::now(), "deleted": true,
    }
}

#[tokio::test]
async fn ncl_versioned_i32_reinsert_after_limit_refused_under_validator() {
    // A history written by another program ends at i32::MAX: the next life cannot be numbered
    // in an i32. Under the validator: refused, typed, nothing written.
    let db = test_db("ncl_v_i32_limit").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(&db, "ncl_v32_revisions", limit_revision(11))
        .await
        .expect("a revision of the documented shape");
    let a = NclV32::collection(&db);
    let mut x = NclV32 {
        id: 11,
        version: 0,
        n: 2,
    };
    let e = a.insert(&mut x).await.unwrap_err();
    assert!(e.is_validation_failed() || is_invalid_value(&e), "{e:?}");
    assert!(a.get(11).await.unwrap().is_none());
}

#[tokio::test]
async fn ncl_versioned_i32_reinsert_after_limit_unvalidated() {
    let db = test_db_unvalidated("ncl_v_i32_limit_unvalidated").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(&db, "ncl_v32_revisions", limit_revision(11))
        .await
        .unwrap();
    let a = NclV32::collection(&db);
    let mut x = NclV32 {
        id: 11,
        version: 0,
        n: 2,
    };
    let r = a.insert(&mut x).await;
    let stored = a.get(11).await;
    assert!(
        matches!(stored, Ok(None)) && matches!(r, Err(Error::InvalidValue { .. })),
        "insert {r:?} (caller's version {}), then get {stored:?}",
        x.version
    );
}

#[tokio::test]
async fn ncl_versioned_i32_save_at_limit_refused() {
    let db = test_db("ncl_v_i32_save_limit").await;
    pattern_runtime::sync(&db)
        .models(&[NclV32::SCHEMA])
        .await
        .unwrap();
    raw_insert(
        &db,
        "ncl_v32s",
        doc! { "_id": 12, "version": i32::MAX, "n": 1i64 },
    )
    .await
    .unwrap();
    let a = NclV32::collection(&db);
    let mut y = a.get(12).await.unwrap().unwrap();
    y.n = 5;
    let r = a.replace(&mut y).await;
    let stored = a.get(12).await.unwrap().unwrap();
    assert!(
        r.as_ref()
            .is_err_and(|e| !matches!(e, Error::Driver { .. })),
        "save returned {r:?}; stored {stored:?}; history {:?}",
        a.history(12)
            .await
            .unwrap()
            .iter()
            .map(|r| r.version)
            .collect::<Vec<_>>()
    );
    assert_eq!((stored.version, stored.n), (i32::MAX, 1), "nothing written");
}

#[tokio::test]
async fn ncl_rollup_versioned_sharded_in_one_transaction() {
    use pattern_runtime::Transaction;
    let db = test_db("ncl_tx_mix").await;
    pattern_runtime::sync(&db)
        .models(&[NclVDoc::SCHEMA])
        .await
        .unwrap();
    page(&db, "t").await;
    let docs = NclVDoc::collection(&db);
    let mut d = vdoc(4, "first");
    docs.insert(&mut d).await.unwrap();
    docs.delete(4).await.unwrap(); // 1 archived

    // Aborted: nothing kept, the version not used up.
    let tx = Transaction::start(&db).await.unwrap();
    NclSpeed::series(&db)
        .in_transaction(&tx)
        .insert(&speed("tx", 0, 5))
        .await
        .unwrap();
    let mut d = vdoc(4, "aborted");
    docs.in_transaction(&tx).insert(&mut d).await.unwrap();
    assert_eq!(d.version, 2);
    NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("t")
        .in_transaction(&tx)
        .add(9)
        .await
        .unwrap();
    tx.abort().await.unwrap();
    assert!(window(&db, "tx", at(0)).await.is_none());
    assert!(docs.get(4).await.unwrap().is_none());
    assert_eq!(
        NclPage::collection(&db)
            .counter(NclPage::FIELDS.four)
            .of("t")
            .read()
            .await
            .unwrap(),
        0
    );

    // Committed: every write passes the validators.
    let tx = Transaction::start(&db).await.unwrap();
    let series = NclSpeed::series(&db).in_transaction(&tx);
    let mut m = speed("tx", 0, i32::MAX);
    m.gust = Some(3);
    series.insert(&m).await.unwrap();
    series
        .insert_many(&[speed("tx", 1000, i32::MAX), speed("tx", 61_000, 1)])
        .await
        .unwrap();
    let mut d = vdoc(4, "committed");
    docs.in_transaction(&tx).insert(&mut d).await.unwrap();
    assert_eq!(d.version, 2);
    d.title = "saved".into();
    assert_eq!(
        docs.in_transaction(&tx)
            .replace(&mut d)
            .await
            .unwrap()
            .version,
        Some(3)
    );
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("t")
        .in_transaction(&tx);
    c.add(9).await.unwrap();
    assert_eq!(c.snapshot().await.unwrap(), 9);
    tx.commit().await.unwrap();
    let w = window(&db, "tx", at(0)).await.unwrap();
    assert_eq!(as_i64(w.get("spd_sum")), Some(2 * i32::MAX as i64), "{w}");
    assert_eq!(as_i64(w.get("spd_num")), Some(2), "{w}");
    assert_eq!(docs.get(4).await.unwrap().unwrap().version, 3);
    let h: Vec<i64> = versions_of(&db, 4)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(h, vec![1, 2]);
    assert_eq!(stored_page(&db, "t").await.four, 9);
}

async fn region(db: &mongodb::Database, id: &str) -> (i64, i64) {
    let r = NclRegion::collection(db)
        .get(id.to_string())
        .await
        .unwrap()
        .unwrap();
    (r.customers, r.spend)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ncl_versioned_extref_and_computed_source_across_lives() {
    let db = test_db("ncl_v_combo").await;
    pattern_runtime::sync(&db)
        .models(&[NclVCust::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclVOrder::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclRegion::SCHEMA])
        .await
        .unwrap();
    for r in ["north", "south"] {
        NclRegion::collection(&db)
            .raw()
            .insert_one(NclRegion {
                id: r.into(),
                customers: 0,
                spend: 0,
            })
            .await
            .unwrap();
    }
    let custs = NclVCust::collection(&db);
    let mut c = NclVCust {
        id: 1,
        version: 0,
        name: "Ada".into(),
        region: "north".into(),
        spend: 10,
    };
    custs.insert(&mut c).await.unwrap();
    assert_eq!(region(&db, "north").await, (1, 10));
    NclVOrder::collection(&db)
        .raw()
        .insert_one(NclVOrder {
            id: 100,
            customer: NclCustRef::from(&c),
        })
        .await
        .unwrap();
    c.name = "Ada L.".into();
    custs.replace(&mut c).await.unwrap(); // 2
    let o = NclVOrder::collection(&db).get(100).await.unwrap().unwrap();
    assert_eq!(o.customer.name, "Ada L.");
    custs.delete(1).await.unwrap(); // 2 archived
    assert_eq!(region(&db, "north").await, (0, 0));
    // The copy stays as it was (a deleted source leaves its copies).
    let o = NclVOrder::collection(&db).get(100).await.unwrap().unwrap();
    assert_eq!(o.customer.name, "Ada L.");

    // Inserted again, in another region, under another name.
    let mut c = NclVCust {
        id: 1,
        version: 0,
        name: "Bea".into(),
        region: "south".into(),
        spend: 7,
    };
    custs.insert(&mut c).await.unwrap();
    assert_eq!(c.version, 3);
    assert_eq!(region(&db, "north").await, (0, 0));
    assert_eq!(region(&db, "south").await, (1, 7));
    assert!(ComputedFields::<NclRegion>::new(&db)
        .check()
        .await
        .unwrap()
        .is_clean());
    c.region = "north".into();
    c.spend = 9;
    assert_eq!(custs.replace(&mut c).await.unwrap().version, Some(4));
    assert_eq!(region(&db, "north").await, (1, 9));
    assert_eq!(region(&db, "south").await, (0, 0));
    c.name = "Bea B.".into();
    custs.replace(&mut c).await.unwrap(); // 5
    let o = NclVOrder::collection(&db).get(100).await.unwrap().unwrap();
    assert_eq!(
        o.customer.name, "Bea B.",
        "the copy follows the new life's saves"
    );
    // A stale version writes nothing.
    let mut stale = c.clone();
    stale.version = 3;
    stale.spend = 1000;
    assert!(custs.replace(&mut stale).await.unwrap_err().is_conflict());
    assert_eq!(region(&db, "north").await, (1, 9));

    // Deleted, then many writers insert it again at once: one wins, counted once.
    custs.delete(1).await.unwrap(); // 5 archived
    assert_eq!(region(&db, "north").await, (0, 0));
    let n = 6;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let custs = custs.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = NclVCust {
                id: 1,
                version: 0,
                name: format!("W{i}"),
                region: if i % 2 == 0 {
                    "north".into()
                } else {
                    "south".into()
                },
                spend: 100 + i as i64,
            };
            barrier.wait().await;
            custs.insert(&mut c).await.map(|_| c)
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(c) => winners.push(c),
            Err(e) => assert!(e.is_duplicate_key(), "{e:?}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let w = &winners[0];
    assert_eq!(w.version, 6);
    let (n_north, s_north) = region(&db, "north").await;
    let (n_south, s_south) = region(&db, "south").await;
    assert_eq!(n_north + n_south, 1);
    assert_eq!(s_north + s_south, w.spend);
    assert!(ComputedFields::<NclRegion>::new(&db)
        .check()
        .await
        .unwrap()
        .is_clean());
    let h: Vec<i64> = custs
        .history(1)
        .await
        .unwrap()
        .iter()
        .map(|r| r.version)
        .collect();
    let mut h = h;
    h.sort_unstable();
    assert_eq!(h, vec![1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn ncl_versioned_reinsert_under_another_name_leaves_no_stale_copy() {
    // The crate docs: "versioned model + extended-reference source + computed source: insert,
    // save, update, delete keep copies and counts with the revision". An order still holds the
    // copy of the earlier life's name; the new life's insert is a write of the source.
    let db = test_db("ncl_v_reinsert_copy").await;
    pattern_runtime::sync(&db)
        .models(&[NclVCust::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclVOrder::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NclRegion::SCHEMA])
        .await
        .unwrap();
    NclRegion::collection(&db)
        .raw()
        .insert_one(NclRegion {
            id: "north".into(),
            customers: 0,
            spend: 0,
        })
        .await
        .unwrap();
    let custs = NclVCust::collection(&db);
    let mut c = NclVCust {
        id: 3,
        version: 0,
        name: "Old".into(),
        region: "north".into(),
        spend: 1,
    };
    custs.insert(&mut c).await.unwrap();
    NclVOrder::collection(&db)
        .raw()
        .insert_one(NclVOrder {
            id: 300,
            customer: NclCustRef::from(&c),
        })
        .await
        .unwrap();
    custs.delete(3).await.unwrap();
    let mut c = NclVCust {
        id: 3,
        version: 0,
        name: "New".into(),
        region: "north".into(),
        spend: 1,
    };
    custs.insert(&mut c).await.unwrap();
    let report = References::<NclVCust>::new(&db).check().await.unwrap();
    let o = NclVOrder::collection(&db).get(300).await.unwrap().unwrap();
    assert!(
        report.is_clean(),
        "only toolkit writes, yet the check finds drift (copy holds {:?}): {:?}",
        o.customer.name,
        report.findings
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Sharded counters past the 64-bit range
// ---------------------------------------------------------------------------------------------

async fn page(db: &mongodb::Database, id: &str) -> NclPage {
    let p = NclPage {
        id: id.into(),
        one: 0,
        four: 0,
        small: 0,
        unsigned: 0,
    };
    NclPage::collection(db).raw().insert_one(&p).await.unwrap();
    p
}

async fn stored_page(db: &mongodb::Database, id: &str) -> NclPage {
    NclPage::collection(db)
        .get(id.to_string())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn ncl_sharded_one_shard_overflow_is_invalid_value() {
    let db = test_db("ncl_sharded_one_overflow").await;
    page(&db, "p").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("p");
    c.add(i64::MAX).await.unwrap();
    let e = c.add(1).await.expect_err("past i64::MAX");
    assert!(is_invalid_value(&e), "expected InvalidValue, got {e:?}");
    assert_eq!(c.read().await.unwrap(), i64::MAX, "nothing written");
    c.add(-1).await.unwrap();
    assert_eq!(c.read().await.unwrap(), i64::MAX - 1);
    assert_eq!(c.snapshot().await.unwrap(), i64::MAX - 1);
    assert_eq!(stored_page(&db, "p").await.one, i64::MAX - 1);
}

#[tokio::test]
async fn ncl_sharded_one_shard_underflow_is_invalid_value() {
    let db = test_db("ncl_sharded_one_underflow").await;
    page(&db, "q").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("q");
    c.add(i64::MIN).await.unwrap();
    let e = c.add(-1).await.expect_err("below i64::MIN");
    assert!(is_invalid_value(&e), "expected InvalidValue, got {e:?}");
    assert_eq!(c.read().await.unwrap(), i64::MIN);
    assert_eq!(c.snapshot().await.unwrap(), i64::MIN);
    c.add(i64::MAX).await.unwrap();
    assert_eq!(c.read().await.unwrap(), -1);
}

#[tokio::test]
async fn ncl_sharded_total_past_max_then_back_in_range() {
    let db = test_db("ncl_sharded_four").await;
    page(&db, "p").await;
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("p")
        .with_random(Random::seeded(42));
    // Add i64::MAX until two shards hold it (an add landing on a full shard must be refused).
    let mut held = 0;
    for _ in 0..40 {
        match c.add(i64::MAX).await {
            Ok(()) => held += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if held == 2 {
            break;
        }
    }
    assert_eq!(held, 2);
    let e = c.read().await.unwrap_err();
    assert!(is_invalid_value(&e), "read past the range: {e:?}");
    let e = c.snapshot().await.unwrap_err();
    assert!(is_invalid_value(&e), "snapshot past the range: {e:?}");
    assert_eq!(
        stored_page(&db, "p").await.four,
        0,
        "snapshot wrote nothing"
    );
    // Negative adds bring it back, wherever they land.
    let mut back = 0;
    for _ in 0..40 {
        match c.add(-i64::MAX).await {
            Ok(()) => back += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if back == 1 {
            break;
        }
    }
    assert_eq!(c.read().await.unwrap(), i64::MAX);
    assert_eq!(c.snapshot().await.unwrap(), i64::MAX);
    assert_eq!(stored_page(&db, "p").await.four, i64::MAX);
    // Below the range as well.
    let mut down = 0;
    for _ in 0..80 {
        match c.add(i64::MIN).await {
            Ok(()) => down += 1,
            Err(e) => assert!(is_invalid_value(&e), "add: {e:?}"),
        }
        if down == 3 {
            break;
        }
    }
    assert_eq!(down, 3);
    // MAX + 3 * MIN = MIN - MAX - 1... = -2^64 + ... : below the range.
    let e = c.read().await.unwrap_err();
    assert!(is_invalid_value(&e), "read below the range: {e:?}");
}

#[tokio::test]
async fn ncl_sharded_snapshot_into_narrow_fields() {
    let db = test_db("ncl_sharded_narrow").await;
    page(&db, "p").await;
    let small = NclPage::collection(&db)
        .counter(NclPage::FIELDS.small)
        .of("p");
    small.add(5).await.unwrap();
    assert_eq!(small.snapshot().await.unwrap(), 5);
    let raw = NclPage::collection(&db)
        .raw()
        .clone_with_type::<Document>()
        .find_one(doc! { "_id": "p" })
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(raw.get("small"), Some(Bson::Int32(5))), "{raw}");
    small.add(i32::MAX as i64).await.unwrap();
    let e = small.snapshot().await.unwrap_err();
    assert!(
        e.is_validation_failed() || is_invalid_value(&e),
        "an i32 field past i32::MAX: {e:?}"
    );
    if let Error::ValidationFailed { fields, .. } = &e {
        assert!(fields.iter().any(|f| f == "small"), "{fields:?}");
    }
    assert_eq!(stored_page(&db, "p").await.small, 5, "nothing written");

    let unsigned = NclPage::collection(&db)
        .counter(NclPage::FIELDS.unsigned)
        .of("p");
    unsigned.add(-3).await.unwrap();
    assert_eq!(unsigned.read().await.unwrap(), -3);
    let e = unsigned.snapshot().await.unwrap_err();
    assert!(
        e.is_validation_failed() || is_invalid_value(&e),
        "a u32 below 0: {e:?}"
    );
    assert_eq!(stored_page(&db, "p").await.unsigned, 0);
    unsigned.add(3 + u32::MAX as i64).await.unwrap();
    assert_eq!(unsigned.snapshot().await.unwrap(), u32::MAX as i64);
    assert_eq!(stored_page(&db, "p").await.unsigned, u32::MAX);

    // A snapshot of a page that does not exist: NotFound, nothing created.
    let ghost = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("ghost");
    ghost.add(1).await.unwrap();
    // Observed: the add counts into a shard of a page that does not exist.
    assert_eq!(ghost.read().await.unwrap(), 1);
    let e = ghost.snapshot().await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert!(NclPage::collection(&db)
        .get("ghost".to_string())
        .await
        .unwrap()
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ncl_sharded_concurrent_adds_at_the_edge() {
    // One shard 100 below i64::MAX; 8 writers add 1, 20 times each: exactly 100 land, the
    // other 60 are InvalidValue, and the total ends at i64::MAX.
    let db = test_db("ncl_sharded_edge").await;
    page(&db, "e").await;
    NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("e")
        .add(i64::MAX - 100)
        .await
        .unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let db: mongodb::Database = (*db).clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let c = NclPage::collection(&db)
                .counter(NclPage::FIELDS.one)
                .of("e");
            barrier.wait().await;
            let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
            for _ in 0..20 {
                match c.add(1).await {
                    Ok(()) => ok += 1,
                    Err(e) if is_invalid_value(&e) => refused += 1,
                    Err(e) => other.push(format!("{e:?}")),
                }
            }
            (ok, refused, other)
        }));
    }
    let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
    for t in tasks {
        let (o, r, x) = t.await.unwrap();
        ok += o;
        refused += r;
        other.extend(x);
    }
    assert!(other.is_empty(), "{:?}", &other[..other.len().min(2)]);
    assert_eq!((ok, refused), (100, 60));
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.one)
        .of("e");
    assert_eq!(c.read().await.unwrap(), i64::MAX);
    // Concurrent mixed adds on four shards stay exact.
    let mut tasks = Vec::new();
    for w in 0..8i64 {
        let db: mongodb::Database = (*db).clone();
        tasks.push(tokio::spawn(async move {
            let c = NclPage::collection(&db)
                .counter(NclPage::FIELDS.four)
                .of("e");
            for i in 0..25i64 {
                c.add(if (w + i) % 3 == 0 { -7 } else { 11 }).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let want: i64 = (0..8i64)
        .flat_map(|w| (0..25i64).map(move |i| if (w + i) % 3 == 0 { -7 } else { 11 }))
        .sum();
    let c = NclPage::collection(&db)
        .counter(NclPage::FIELDS.four)
        .of("e");
    assert_eq!(c.read().await.unwrap(), want);
    assert_eq!(c.snapshot().await.unwrap(), want);
    assert_eq!(stored_page(&db, "e").await.four, want);
}

//! NaN and infinities in summarised fields, against the server: a bucket summary (min, max, sum)
//! and a subset's summary sum and average refuse them with a typed error before anything is
//! written, so one bad reading cannot spoil a summary for good.

use bson::{doc, DateTime};
use pattern_runtime::{Error, Fields, Measurement, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(key = meter_id, time = at, max_count = 100, span = "1h", summary(kwh(min, max, sum)))]
struct Usage {
    meter_id: String,
    at: DateTime,
    kwh: f64,
    /// Not summarised: stored as it is, NaN included.
    raw_signal: f64,
}

fn usage(kwh: f64, raw_signal: f64, offset_ms: i64) -> Usage {
    Usage {
        meter_id: "m-1".into(),
        at: DateTime::from_millis(
            DateTime::now().timestamp_millis() / 3_600_000 * 3_600_000 + offset_ms,
        ),
        kwh,
        raw_signal,
    }
}

fn is_invalid_value(e: &Error, field: &str) -> bool {
    matches!(e, Error::InvalidValue { field: f, .. } if f == field)
}

#[tokio::test]
async fn a_bucket_refuses_nan_and_infinity_in_a_summarised_field() {
    let db = test_db("non_finite_bucket").await;
    pattern_runtime::sync(&db)
        .models(&[Usage::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    let series = Usage::series(&db);

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = series.insert(&usage(bad, 0.0, 1)).await.unwrap_err();
        assert!(is_invalid_value(&err, "kwh"), "{err:?}");
        assert!(err.to_string().contains("nothing was written"), "{err}");
    }
    // A batch with one NaN is refused whole, before anything is sent.
    let batch = [
        usage(1.0, 0.0, 2),
        usage(f64::NAN, 0.0, 3),
        usage(3.0, 0.0, 4),
    ];
    let err = series.insert_many(&batch).await.unwrap_err();
    assert!(is_invalid_value(&err, "kwh"), "{err:?}");
    assert_eq!(
        series.collection().count_documents(doc! {}).await.unwrap(),
        0
    );

    // The sequence: NaN then 2.0 leaves one reading and exact summaries.
    series.insert(&usage(2.0, f64::NAN, 5)).await.unwrap();
    let (from, to) = (DateTime::from_millis(0), DateTime::now());
    let summary = series.summary("m-1", from, to).await.unwrap();
    assert_eq!(summary.count(), 1);
    assert_eq!(summary.min(Usage::FIELDS.kwh).unwrap(), Some(2.0));
    assert_eq!(summary.max(Usage::FIELDS.kwh).unwrap(), Some(2.0));
    assert_eq!(summary.sum(Usage::FIELDS.kwh).unwrap(), Some(2.0));
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "meters")]
struct Meter {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 5, sort(at = -1), full = Reading, parent = meter_id)]
    recent: Vec<RecentReading>,
    #[summary(count = recent)]
    readings: i64,
    #[summary(sum = recent.kwh)]
    total_kwh: f64,
    #[summary(avg = recent.kwh)]
    mean_kwh: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "meter_readings")]
struct Reading {
    #[serde(rename = "_id")]
    id: i64,
    meter_id: String,
    at: DateTime,
    kwh: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct RecentReading {
    at: DateTime,
    kwh: f64,
}

impl From<&Reading> for RecentReading {
    fn from(r: &Reading) -> Self {
        RecentReading {
            at: r.at,
            kwh: r.kwh,
        }
    }
}

#[tokio::test]
async fn a_computed_sum_and_average_refuse_nan() {
    let db = test_db("non_finite_computed").await;
    pattern_runtime::sync(&db)
        .models(&[Meter::SCHEMA])
        .await
        .unwrap();
    Meter::collection(&db)
        .raw()
        .insert_one(Meter {
            id: "m-1".into(),
            recent: vec![],
            readings: 0,
            total_kwh: 0.0,
            mean_kwh: None,
        })
        .await
        .unwrap();
    let subset = Meter::collection(&db).subset(Meter::FIELDS.recent);
    let reading = |id: i64, kwh: f64| Reading {
        id,
        meter_id: "m-1".into(),
        at: DateTime::now(),
        kwh,
    };

    let err = subset.push("m-1", reading(1, f64::NAN)).await.unwrap_err();
    assert!(is_invalid_value(&err, "kwh"), "{err:?}");
    let err = subset
        .push("m-1", reading(2, f64::INFINITY))
        .await
        .unwrap_err();
    assert!(is_invalid_value(&err, "kwh"), "{err:?}");
    // Nothing written: no full item, parent unchanged.
    let full = db.collection::<bson::Document>("meter_readings");
    assert_eq!(full.count_documents(doc! {}).await.unwrap(), 0);

    subset.push("m-1", reading(3, 2.0)).await.unwrap();
    let m = Meter::collection(&db)
        .raw()
        .find_one(doc! { "_id": "m-1" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!((m.readings, m.total_kwh, m.mean_kwh), (1, 2.0, Some(2.0)));
    assert_eq!(m.recent.len(), 1);
}

//! Bucket: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, Serialize, Deserialize, pattern_runtime::Measurement)]
#[bucket(collection = "h_buckets", key = device, time = ts, max_count = 3, span = "1h", summary(value(min, max, sum)))]
struct HReading {
    device: Bson,
    ts: bson::DateTime,
    value: f64,
    note: Bson,
}

fn reading(device: impl Into<Bson>, minute: i64, note: impl Into<Bson>) -> HReading {
    HReading {
        device: device.into(),
        ts: bson::DateTime::from_millis(1_755_648_000_000 + minute * 60_000),
        value: minute as f64,
        note: note.into(),
    }
}

/// The series key of a bucket series (`insert`, `range`, `summary`) and the measurements'
/// values, hostile: a key reads and writes the buckets of exactly that key.
#[test]
fn bucket() {
    big_stack(bucket_test);
}

async fn bucket_test() {
    use pattern_runtime::Measurement as _;
    let db = test_db("hostile_bucket").await;
    pattern_runtime::sync(&db)
        .models(&[HReading::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let series = HReading::series(&db);
    let mut l = Ledger::new("bucket", &db);
    const B: &str = "h_buckets";
    reset(&db, B, &[]).await;
    series.insert(&reading("d1", 1, "one")).await.unwrap();
    series.insert(&reading("d1", 2, "two")).await.unwrap();
    let baseline = both(&db, &[B]).await;
    let from = bson::DateTime::from_millis(1_755_648_000_000);
    let to = bson::DateTime::from_millis(1_755_648_000_000 + 3_600_000);
    let range = |key: Bson| {
        let series = &series;
        async move {
            let m = series.range(key, from, to).await?;
            m.try_collect::<Vec<HReading>>().await
        }
    };

    for v in hostile() {
        let input = format!("key {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        // No measurement has this key: nothing read, a summary of nothing.
        let s = l
            .read("Series::range", &input, &s, range(v.clone()), |got| {
                if got.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "read {} measurements, e.g. of {}",
                        got.len(),
                        label(&got[0].device)
                    ))
                }
            })
            .await;
        let s = l
            .read(
                "Series::summary",
                &input,
                &s,
                series.summary(v.clone(), from, to),
                |got| {
                    if got.count() == 0 {
                        Ok(())
                    } else {
                        Err(format!("counted {}", got.count()))
                    }
                },
            )
            .await;
        // Written to a bucket of exactly this key, d1's untouched; or refused
        // (`InvalidKey`/`InvalidValue`) with nothing written.
        let (done, s) = l
            .judge(
                "Series::insert",
                &input,
                &s,
                series.insert(&reading(v.clone(), 5, "mine")),
                |_, after| {
                    let others = |s: &Snap| -> Vec<Document> {
                        s.docs(B)
                            .into_iter()
                            .filter(|d| d.get_str("device").ok() == Some("d1"))
                            .collect()
                    };
                    let mine: Vec<Document> = after
                        .docs(B)
                        .into_iter()
                        .filter(|d| d.get("device").is_some_and(|k| same(k, &v)))
                        .collect();
                    if others(&s) != others(after) {
                        return Err("d1's bucket changed".into());
                    }
                    match mine.as_slice() {
                        [b] if b.get_array("measurements").map(Vec::len).ok() == Some(1)
                            && after.docs(B).len() == s.docs(B).len() + 1 =>
                        {
                            Ok(())
                        }
                        other => Err(format!("the buckets of this key: {other:?}")),
                    }
                },
            )
            .await;
        if done.is_some() {
            let s = l
                .read(
                    "Series::range (its key)",
                    &input,
                    &s,
                    range(v.clone()),
                    |got| match got.as_slice() {
                        [m] if same(&m.device, &v) && m.note == Bson::from("mine") => Ok(()),
                        other => Err(format!("read {} measurements", other.len())),
                    },
                )
                .await;
            l.read(
                "Series::summary (its key)",
                &input,
                &s,
                series.summary(v.clone(), from, to),
                |got| {
                    if got.count() == 1 {
                        Ok(())
                    } else {
                        Err(format!("counted {}", got.count()))
                    }
                },
            )
            .await;
        }

        // A value that is not summarised (`note`) is stored as given.
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let (done, s) = l
            .judge(
                "Series::insert(note: value)",
                &input,
                &s,
                series.insert(&reading("d2", 5, v.clone())),
                |_, after| {
                    let bucket = after
                        .docs(B)
                        .into_iter()
                        .find(|d| d.get_str("device").ok() == Some("d2"));
                    let note = bucket
                        .as_ref()
                        .and_then(|b| b.get_array("measurements").ok())
                        .and_then(|m| m.first())
                        .and_then(|m| m.as_document())
                        .and_then(|m| m.get("note"));
                    match note {
                        Some(n) if same(n, &v) => Ok(()),
                        other => Err(format!("stored note {:?}", other.map(label))),
                    }
                },
            )
            .await;
        if done.is_some() {
            l.read(
                "Series::range (note)",
                &input,
                &s,
                range("d2".into()),
                |got| match got.as_slice() {
                    [m] if same(&m.note, &v) => Ok(()),
                    other => Err(format!("read {other:?}")),
                },
            )
            .await;
        }
    }
    // A summarised value that is not finite is refused (`InvalidValue`), nothing written.
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let mut r = reading("d1", 7, "x");
        r.value = x;
        l.refused(
            "Series::insert(value: non-finite)",
            &format!("value {x}"),
            &s,
            series.insert(&r),
        )
        .await;
    }
    l.finish();
}

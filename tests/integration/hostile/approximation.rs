//! Approximation: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_pages")]
struct HPage {
    #[serde(rename = "_id")]
    id: Bson,
    #[approximate(batched, threshold = 1)]
    views: i64,
    #[approximate(sampled, p = 1.0)]
    likes: i64,
    #[approximate(sharded, shards = 2)]
    hits: i64,
}

/// The counters' ids and names: `BatchedCounter::add(doc!{"$gt": 0}, 1)` must not create a
/// document; an id is counted in the document whose `_id` is exactly that value, or refused
/// (`InvalidValue`) with nothing written.
#[test]
fn approximation() {
    big_stack(approximation_test);
}

async fn approximation_test() {
    let db = test_db("hostile_approximation").await;
    let mut l = Ledger::new("approximation", &db);
    const C: &str = "h_pages";
    let baseline = vec![doc! { "_id": "home", "views": 10_i64, "likes": 10_i64, "hits": 10_i64 }];
    let counter = |field: &str| BatchedCounter::new(db.collection(C), field, 1).unwrap();
    let batched = counter("views");

    // The example, first: nothing is created.
    reset(&db, C, &baseline).await;
    let before = snap(&db).await;
    let (_, after) = l
        .judge(
            "BatchedCounter::add",
            "id {$gt: 0}",
            &before,
            batched.add(doc! { "$gt": 0 }, 1),
            |_, after| {
                exactly(&before, after)
                    .map_err(|e| format!("a document was created or changed: {e}"))
            },
        )
        .await;
    assert_eq!(
        before, after,
        "BatchedCounter::add(doc!{{\"$gt\": 0}}, 1) changed the database"
    );

    match counter("views").add(doc! { "$gt": 0 }, 1).await {
        Err(Error::InvalidValue { .. }) => {}
        other => l.fail(
            "BatchedCounter::add",
            "id {$gt: 0}",
            format!("expected InvalidValue, got {other:?}"),
        ),
    }

    for v in hostile() {
        let input = format!("id {}", label(&v));
        // Counted in {_id: v} (a standalone counter creates it: exactly {_id: v, <field>: n};
        // a declared one counts in the existing page), or refused.
        // Fresh counters for each input: a failed write stays pending (by design), and must not
        // be blamed on the next input.
        for op in [
            "BatchedCounter::add",
            "SampledCounter::add",
            "BatchedCounter::add (declared)",
        ] {
            let field = if op.starts_with("Sampled") {
                "likes"
            } else {
                "views"
            };
            reset(&db, C, &baseline).await;
            // A declared counter counts in the model's existing document only: the page `v`
            // is there (where `v` can be an `_id`), and a count for a missing one is dropped.
            let declared = op.ends_with("(declared)");
            let exists = declared
                && db
                    .collection::<Document>(C)
                    .insert_one(doc! { "_id": v.clone(), "views": 0_i64 })
                    .await
                    .is_ok();
            let before = snap(&db).await;
            let expected = if !declared {
                before.with(C, |docs| docs.push(doc! { "_id": v.clone(), field: 1_i64 }))
            } else if exists {
                before.with(C, |docs| {
                    // By form, not `==`: an `_id` of NaN is that document too.
                    let id = format!("{v:?}");
                    for d in docs
                        .iter_mut()
                        .filter(|d| d.get("_id").map(|x| format!("{x:?}")) == Some(id.clone()))
                    {
                        d.insert("views", 1_i64);
                    }
                })
            } else {
                before.clone()
            };
            let check = |_: &(), after: &Snap| exactly(&expected, after);
            let batched = match op {
                "BatchedCounter::add" => counter("views"),
                _ => HPage::collection(&db).counter(HPage::FIELDS.views),
            };
            if op.starts_with("Sampled") {
                let sampled = SampledCounter::new(db.collection(C), "likes", 1.0)
                    .unwrap()
                    .with_random(Random::seeded(7));
                l.judge(
                    op,
                    &input,
                    &before,
                    async { sampled.add(v.clone()).await.map(|_| ()) },
                    check,
                )
                .await;
                continue;
            }
            let (added, now) = l
                .judge(op, &input, &before, batched.add(v.clone(), 1), check)
                .await;
            // What was refused before anything was sent is not pending: a flush writes nothing.
            // (A write the server refused stays pending, by design: not checked here.)
            if added.is_none() && batched.pending() != 0 {
                continue;
            }
            l.read(
                "BatchedCounter::flush",
                &input,
                &now,
                batched.flush(),
                |n| {
                    if *n == 0 {
                        Ok(())
                    } else {
                        Err(format!("{n} writes"))
                    }
                },
            )
            .await;
        }
        // A declared sharded field of the document `v`: `add` counts in its own shards, `read`
        // reads them, and `snapshot` writes the page whose `_id` is exactly `v` (none here:
        // `NotFound`), never another page.
        reset(&db, C, &baseline).await;
        let hits = HPage::collection(&db)
            .counter(HPage::FIELDS.hits)
            .of(v.clone());
        let before = snap(&db).await;
        let (added, after) = l
            .judge(
                "ShardedField::add",
                &input,
                &before,
                hits.add(1),
                |_, after| {
                    let shards = after.docs("h_pages.hits");
                    let ok = shards.len() == 1
                        && shards[0]
                            .get_document("_id")
                            .ok()
                            .and_then(|i| i.get("of"))
                            .is_some_and(|of| same(of, &v))
                        && shards[0].get("count") == Some(&Bson::Int64(1));
                    if ok && before.0.get(C) == after.0.get(C) {
                        Ok(())
                    } else {
                        Err(format!("the shards are {shards:?}"))
                    }
                },
            )
            .await;
        let after = l
            .read("ShardedField::read", &input, &after, hits.read(), |n| {
                let want = i64::from(added.is_some());
                if *n == want {
                    Ok(())
                } else {
                    Err(format!("read {n}, expected {want}"))
                }
            })
            .await;
        l.refused("ShardedField::snapshot", &input, &after, hits.snapshot())
            .await;
        db.collection::<Document>("h_pages.hits")
            .drop()
            .await
            .unwrap();
    }

    // A sharded counter's name: its shards are `"<name>:<k>"`, whatever the name.
    for name in hostile_strings() {
        let input = format!("name {}", label(&Bson::String(name.clone())));
        db.collection::<Document>("h_counters")
            .drop()
            .await
            .unwrap();
        let Ok(sharded) = ShardedCounter::new(db.collection("h_counters"), &name, 2)
            .map(|c| c.with_random(Random::seeded(1)))
        else {
            continue;
        };
        let before = snap(&db).await;
        let (added, after) = l
            .judge(
                "ShardedCounter::add",
                &input,
                &before,
                sharded.add(3),
                |_, after| {
                    let shards = after.docs("h_counters");
                    let ok = shards.len() == 1
                        && shards[0].get_str("_id").is_ok_and(|id| {
                            id.strip_prefix(name.as_str())
                                .is_some_and(|k| k == ":0" || k == ":1")
                        })
                        && shards[0].get("count") == Some(&Bson::Int64(3));
                    if ok {
                        Ok(())
                    } else {
                        Err(format!("the shards are {shards:?}"))
                    }
                },
            )
            .await;
        l.read(
            "ShardedCounter::read",
            &input,
            &after,
            sharded.read(),
            |n| {
                let want = if added.is_some() { 3 } else { 0 };
                if *n == want {
                    Ok(())
                } else {
                    Err(format!("read {n}, expected {want}"))
                }
            },
        )
        .await;
    }
    l.finish();
}

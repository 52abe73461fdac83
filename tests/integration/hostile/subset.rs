//! Subset: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_products")]
struct HProduct {
    #[serde(rename = "_id")]
    id: Bson,
    #[subset(limit = 2, sort(n = -1), full = HReview, parent = product_id)]
    recent: Vec<HExcerpt>,
    #[summary(count = recent)]
    review_count: i64,
    #[summary(sum = recent.n)]
    n_sum: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_reviews")]
struct HReview {
    #[serde(rename = "_id")]
    id: i64,
    product_id: Bson,
    n: i64,
    v: Bson,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct HExcerpt {
    review_id: i64,
    n: i64,
    v: Bson,
}

impl From<&HReview> for HExcerpt {
    fn from(r: &HReview) -> Self {
        HExcerpt {
            review_id: r.id,
            n: r.n,
            v: r.v.clone(),
        }
    }
}

fn review(id: i64, v: impl Into<Bson>) -> HReview {
    HReview {
        id,
        product_id: Bson::Null,
        n: 1,
        v: v.into(),
    }
}

/// `Subset::{push (and .set), page, count, rebuild, remove}` with hostile parent and item ids,
/// item values and `.set` values.
#[test]
fn subset() {
    big_stack(subset_test);
}

async fn subset_test() {
    let db = test_db("hostile_subset").await;
    pattern_runtime::sync(&db)
        .models(&[HProduct::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[HReview::SCHEMA])
        .await
        .unwrap();
    let reviews = HProduct::collection(&db).subset(HProduct::FIELDS.recent);
    let mut l = Ledger::new("subset", &db);
    const P: &str = "h_products";
    const R: &str = "h_reviews";
    let product = |id: Bson| doc! { "_id": id, "recent": [], "reviewCount": 0_i64, "nSum": 0_i64 };
    reset(&db, P, &[product("p1".into()), product("p2".into())]).await;
    reset(&db, R, &[]).await;
    reviews.push("p1", review(1, "one")).await.unwrap();
    let baseline = both(&db, &[P, R]).await;
    let mut next_id = 100;

    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset_all(&db, &baseline).await;
        next_id += 1;
        // Missing parent: `NotFound` (or `InvalidValue`), nothing written: no review either.
        let s = snap(&db).await;
        let s = l
            .refused(
                "Subset::push",
                &input,
                &s,
                reviews.push(v.clone(), review(next_id, "x")).into_future(),
            )
            .await;
        let s = l
            .read(
                "Subset::page",
                &input,
                &s,
                reviews.page(v.clone(), 0, 10),
                |got| {
                    if got.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("{} reviews", got.len()))
                    }
                },
            )
            .await;
        let s = l
            .refused("Subset::count", &input, &s, reviews.count(v.clone()))
            .await;
        let s = l
            .refused("Subset::rebuild", &input, &s, reviews.rebuild(v.clone()))
            .await;
        l.refused(
            "Subset::remove(parent)",
            &input,
            &s,
            reviews.remove(v.clone(), 1),
        )
        .await;
        // `Subset::remove(parent, item)`: the item id is `HReview`'s `i64`, typed.

        // A parent stored by someone else with `_id` `v`: the review's parent key is exactly `v`.
        if !try_insert(&db, P, product(v.clone())).await {
            continue;
        }
        let before = snap(&db).await;
        let r = review(next_id, "mine");
        let (done, after) = l
            .judge(
                "Subset::push (stored id)",
                &input,
                &before,
                reviews.push(v.clone(), r.clone()).into_future(),
                |_, after| {
                    let stored = after
                        .docs(R)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(next_id));
                    let parent = after
                        .docs(P)
                        .into_iter()
                        .find(|d| d.get("_id").is_some_and(|i| same(i, &v)));
                    let others = |s: &Snap| -> Vec<Document> {
                        s.docs(P)
                            .into_iter()
                            .filter(|d| d.get("_id").is_some_and(|i| !same(i, &v)))
                            .collect()
                    };
                    match (stored, parent) {
                        (Some(s), Some(p))
                            if s.get("productId").is_some_and(|k| same(k, &v))
                                && p.get_i64("reviewCount").ok() == Some(1)
                                && others(&before) == others(after) =>
                        {
                            Ok(())
                        }
                        (s, p) => Err(format!("the review is {s:?}, the parent {p:?}")),
                    }
                },
            )
            .await;
        if done.is_none() {
            continue;
        }
        let s = l
            .read(
                "Subset::page (stored id)",
                &input,
                &after,
                reviews.page(v.clone(), 0, 10),
                |got| {
                    if got.len() == 1 && got[0].id == next_id && same(&got[0].product_id, &v) {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Subset::count (stored id)",
                &input,
                &s,
                reviews.count(v.clone()),
                |n| {
                    if *n == 1 {
                        Ok(())
                    } else {
                        Err(format!("{n}"))
                    }
                },
            )
            .await;
        let s2 = s.clone();
        let (_, s) = l
            .judge(
                "Subset::rebuild (stored id)",
                &input,
                &s,
                reviews.rebuild(v.clone()),
                move |_, after| loosely(&s2, after),
            )
            .await;
        let expected = before.clone();
        l.judge(
            "Subset::remove (stored id)",
            &input,
            &s,
            reviews.remove(v.clone(), next_id),
            move |_, after| loosely(&expected, after),
        )
        .await;
    }

    // Values: the review's `v` (stored in the full item and in the excerpt) and a `.set(..)`
    // value on the parent, stored as given or refused with nothing written.
    for v in hostile() {
        let input = format!("value {}", label(&v));
        reset_all(&db, &baseline).await;
        next_id += 1;
        let before = snap(&db).await;
        let r = review(next_id, v.clone());
        l.judge(
            "Subset::push",
            &input,
            &before,
            reviews.push("p2", r.clone()).into_future(),
            |_, after| {
                let stored = after
                    .docs(R)
                    .into_iter()
                    .find(|d| d.get_i64("_id").ok() == Some(next_id));
                let parent = after
                    .docs(P)
                    .into_iter()
                    .find(|d| d.get_str("_id").ok() == Some("p2"));
                let excerpt = parent
                    .as_ref()
                    .and_then(|p| p.get_array("recent").ok())
                    .and_then(|a| a.first())
                    .and_then(|e| e.as_document())
                    .and_then(|e| e.get("v"));
                match (stored.as_ref().and_then(|s| s.get("v")), excerpt) {
                    (Some(s), Some(e)) if same(s, &v) && same(e, &v) => Ok(()),
                    (s, e) => Err(format!(
                        "the review holds {:?}, the excerpt {:?}",
                        s.map(label),
                        e.map(label)
                    )),
                }
            },
        )
        .await;
        reset_all(&db, &baseline).await;
        next_id += 1;
        let before = snap(&db).await;
        l.judge(
            "Subset::push(..).set({note: value})",
            &input,
            &before,
            reviews
                .push("p2", review(next_id, 1))
                .set(doc! { "note": v.clone() })
                .into_future(),
            |_, after| {
                let parent = after
                    .docs(P)
                    .into_iter()
                    .find(|d| d.get_str("_id").ok() == Some("p2"));
                match parent.as_ref().and_then(|p| p.get("note")) {
                    Some(n) if same(n, &v) => Ok(()),
                    other => Err(format!("the parent's note is {:?}", other.map(label))),
                }
            },
        )
        .await;
    }
    l.finish();
}

//! Extended reference: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "h_customers")]
#[extended_ref(HCustomerRef(name))]
struct HCustomer {
    #[serde(rename = "_id")]
    id: Bson,
    name: Bson,
    points: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "h_orders")]
struct HOrder {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    customer: HCustomerRef,
}

/// `References::{update, resync}` with hostile ids (missing and stored) and hostile values of a
/// copied field, which reach every copy exactly.
#[test]
fn extended_ref() {
    big_stack(extended_ref_test);
}

async fn extended_ref_test() {
    let db = test_db("hostile_extended_ref").await;
    pattern_runtime::sync(&db)
        .models(&[HCustomer::SCHEMA, HOrder::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let refs = HCustomer::collection(&db).references();
    let mut l = Ledger::new("extended_ref", &db);
    const C: &str = "h_customers";
    const O: &str = "h_orders";
    let customer = |id: Bson, name: &str| doc! { "_id": id, "name": name, "points": 0_i64 };
    let order =
        |id: i64, c: Bson, name: &str| doc! { "_id": id, "customer": { "_id": c, "name": name } };
    reset(
        &db,
        C,
        &[customer(1.into(), "Ada"), customer("c2".into(), "Bob")],
    )
    .await;
    reset(
        &db,
        O,
        &[
            order(1, 1.into(), "Ada"),
            order(2, 1.into(), "Ada"),
            order(3, "c2".into(), "Bob"),
        ],
    )
    .await;
    let baseline = both(&db, &[C, O]).await;

    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let s = l
            .refused(
                "References::update (copied field)",
                &input,
                &s,
                HCustomer::collection(&db).update(v.clone(), doc! { "$set": { "name": "X" } }),
            )
            .await;
        let s = l
            .refused(
                "References::update (other field)",
                &input,
                &s,
                HCustomer::collection(&db).update(v.clone(), doc! { "$inc": { "points": 1 } }),
            )
            .await;
        l.refused("References::rebuild", &input, &s, refs.rebuild(v.clone()))
            .await;

        // A customer stored with `_id` `v` and its order: the copy found by exactly that `_id`.
        if !try_insert(&db, C, customer(v.clone(), "Eve")).await
            || !try_insert(&db, O, order(9, v.clone(), "Eve")).await
        {
            continue;
        }
        let s = snap(&db).await;
        let (_, s) = l
            .judge(
                "References::update (stored id)",
                &input,
                &s,
                HCustomer::collection(&db).update(v.clone(), doc! { "$set": { "name": "Eve2" } }),
                |_, after| {
                    let expected = s
                        .with(C, |docs| {
                            for d in docs
                                .iter_mut()
                                .filter(|d| d.get_str("name").ok() == Some("Eve"))
                            {
                                d.insert("name", "Eve2");
                            }
                        })
                        .with(O, |docs| {
                            for d in docs.iter_mut().filter(|d| d.get_i64("_id").ok() == Some(9)) {
                                d.insert("customer", doc! { "_id": v.clone(), "name": "Eve2" });
                            }
                        });
                    exactly(&expected, after)
                },
            )
            .await;
        let s2 = s.clone();
        l.judge(
            "References::rebuild (stored id)",
            &input,
            &s,
            refs.rebuild(v.clone()),
            move |_, after| exactly(&s2, after),
        )
        .await;
    }

    // `replace` of a document whose `_id` is the value: it replaces the customer with exactly
    // that `_id` (none: `NotFound`), never another; or refuses.
    for v in hostile() {
        let input = format!("_id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let c = HCustomer {
            id: v.clone(),
            name: "Mallory".into(),
            points: 0,
        };
        l.refused(
            "References::replace(_id: value)",
            &input,
            &s,
            HCustomer::collection(&db).replace(&c),
        )
        .await;
    }

    // Values of the copied field: the source and every copy hold exactly the value, or it is
    // refused with nothing written.
    for v in hostile() {
        let input = format!("name {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        l.judge(
            "References::update({$set: {name: value}})",
            &input,
            &s,
            HCustomer::collection(&db).update(1, doc! { "$set": { "name": v.clone() } }),
            |_, after| {
                let expected = s
                    .with(C, |docs| {
                        for d in docs.iter_mut().filter(|d| d.get_i32("_id").ok() == Some(1)) {
                            d.insert("name", v.clone());
                        }
                    })
                    .with(O, |docs| {
                        for d in docs
                            .iter_mut()
                            .filter(|d| matches!(d.get_i64("_id").ok(), Some(1 | 2)))
                        {
                            d.insert("customer", doc! { "_id": 1, "name": v.clone() });
                        }
                    });
                exactly(&expected, after)
            },
        )
        .await;
    }
    l.finish();
}

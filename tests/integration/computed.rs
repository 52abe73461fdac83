//! Fields computed from another collection against the server (seed 000, 计算模式): a user's
//! `totalSpent` kept by `$inc` as orders are written through the model handle, repaired by
//! `rebuild` and `repair`, checked by `check`.

use std::sync::Arc;

use bson::{doc, Bson, Document};
use pattern_runtime::computed::BATCH;
use pattern_runtime::{Error, Missing, Model, Ref};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Model, PartialEq)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[computed(sum = Order.amount, by = user_id)]
    total_spent: i64,
    #[computed(count = Order, by = user_id)]
    order_count: i32,
    #[computed(max = Order.amount, by = user_id)]
    largest_order: Option<i64>,
    #[computed(min = Order.amount, by = user_id)]
    smallest_order: Option<i64>,
    #[computed(count = Review, by = author)]
    reviews: i64,
    #[computed(sum = Review.score, by = author)]
    review_points: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: Option<String>,
    amount: i64,
    note: String,
}

/// A source pointing back through a `Ref`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
struct Review {
    #[serde(rename = "_id")]
    id: i64,
    author: Ref<User>,
    score: f64,
}

fn user(id: &str) -> User {
    User {
        id: id.into(),
        name: id.to_uppercase(),
        total_spent: 0,
        order_count: 0,
        largest_order: None,
        smallest_order: None,
        reviews: 0,
        review_points: 0.0,
    }
}

fn order(id: i64, user: &str, amount: i64) -> Order {
    Order {
        id,
        user_id: Some(user.into()),
        amount,
        note: String::new(),
    }
}

async fn stored(db: &mongodb::Database, id: &str) -> User {
    User::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
}

async fn raw_user(db: &mongodb::Database, id: &str) -> Document {
    db.collection::<Document>("users")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
}

/// What a user's fields should be, from a scan of the orders.
async fn expected(db: &mongodb::Database, id: &str) -> (i64, i32, Option<i64>, Option<i64>) {
    let orders: Vec<Order> = futures_util::TryStreamExt::try_collect(
        Order::collection(db)
            .raw()
            .find(doc! { "userId": id })
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let amounts: Vec<i64> = orders.iter().map(|o| o.amount).collect();
    (
        amounts.iter().sum(),
        amounts.len() as i32,
        amounts.iter().max().copied(),
        amounts.iter().min().copied(),
    )
}

async fn setup(name: &str, users: &[&str]) -> pattern_testkit::TestDb {
    let db = test_db(name).await;
    pattern_runtime::sync(&db)
        .models(&[User::SCHEMA, Order::SCHEMA, Review::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    for u in users {
        User::collection(&db)
            .raw()
            .insert_one(user(u))
            .await
            .unwrap();
    }
    db
}

/// An integer that would leave the 64-bit range is `InvalidValue` naming the field that would,
/// whether it is a computed sum (the other computed fields of the same update stay in range)
/// or a source's own field (`$inc` in the source's update); nothing is written.
#[tokio::test]
async fn a_sum_or_an_inc_past_the_64_bit_range_names_its_field() {
    let db = setup("computed_overflow", &["u1"]).await;
    let orders = Order::collection(&db);
    orders.insert(&order(1, "u1", i64::MAX - 10)).await.unwrap();
    let before = (
        pattern_testkit::docs(&db, "users").await,
        pattern_testkit::docs(&db, "orders").await,
    );
    let field_of = |e: Error| match e {
        Error::InvalidValue { field, reason } => {
            assert!(reason.contains("64-bit"), "{reason}");
            field
        }
        other => panic!("{other:?}"),
    };
    // Only `totalSpent` leaves the range: `orderCount` (1) stays in it.
    let e = orders.insert(&order(2, "u1", 11)).await.unwrap_err();
    assert_eq!(field_of(e), "totalSpent");
    // A source's own `$inc`: the order's amount.
    let e = orders
        .update(1, doc! { "$inc": { "amount": 11 } })
        .await
        .unwrap_err();
    assert_eq!(field_of(e), "amount");
    let e = orders
        .update(1, doc! { "$mul": { "amount": 2 } })
        .await
        .unwrap_err();
    assert_eq!(field_of(e), "amount");
    assert_eq!(
        (
            pattern_testkit::docs(&db, "users").await,
            pattern_testkit::docs(&db, "orders").await,
        ),
        before
    );
}

/// An `$inc` or `$mul` of an integer field by a double (or a NaN) is refused before anything
/// is sent: the server would store a double the model cannot read back. Found by a reader of
/// the docs: `$inc: {score: 1.0}` on `i64::MAX` stored 9.223372036854776e18, and a NaN made the
/// document unreadable.
#[tokio::test]
async fn an_inc_of_an_integer_field_by_a_double_is_refused() {
    let db = setup("computed_inc_double", &["u1"]).await;
    let orders = Order::collection(&db);
    orders.insert(&order(1, "u1", i64::MAX - 10)).await.unwrap();
    let before = (
        pattern_testkit::docs(&db, "users").await,
        pattern_testkit::docs(&db, "orders").await,
    );
    for update in [
        doc! { "$inc": { "amount": 1.0 } },
        doc! { "$inc": { "amount": f64::NAN } },
        doc! { "$mul": { "amount": 2.5 } },
        doc! { "$inc": { "amount": Bson::Decimal128("1".parse().unwrap()) } },
    ] {
        match orders.update(1, update.clone()).await {
            Err(Error::InvalidValue { field, reason }) => {
                assert_eq!(field, "amount", "{update}");
                // A NaN is refused first for the sum that reads the amount.
                assert!(
                    reason.contains("integer") || reason.contains("NaN"),
                    "{reason}"
                );
            }
            other => panic!("{update}: {other:?}"),
        }
    }
    assert_eq!(
        (
            pattern_testkit::docs(&db, "users").await,
            pattern_testkit::docs(&db, "orders").await,
        ),
        before
    );
    // An integer still moves it.
    orders
        .update(1, doc! { "$inc": { "amount": -10i64 } })
        .await
        .unwrap();
}

/// The seed: orders of 1200, 3000 and 1000 make `totalSpent` 5200; deleting, re-pricing and
/// moving orders keep every computed field exact, min and max included.
#[tokio::test]
async fn the_seed_user_total_stays_exact_through_every_write() {
    let db = setup("computed_seed", &["user123", "user456"]).await;
    let orders = Order::collection(&db);
    assert_eq!(
        pattern_runtime::derived::dependents_of(Order::SCHEMA).len(),
        1,
        "the users keep fields computed from orders"
    );
    for (id, amount) in [(1, 1200), (2, 3000), (3, 1000)] {
        orders.insert(&order(id, "user123", amount)).await.unwrap();
    }
    let doc = raw_user(&db, "user123").await;
    assert_eq!(doc.get("totalSpent"), Some(&Bson::Int64(5200)), "{doc}");
    assert_eq!(doc.get_i32("orderCount").ok(), Some(3), "{doc}");
    let u = stored(&db, "user123").await;
    assert_eq!(
        (u.largest_order, u.smallest_order),
        (Some(3000), Some(1000))
    );

    // Delete the largest: the max is recomputed from the orders left.
    orders.delete(2).await.unwrap();
    let u = stored(&db, "user123").await;
    assert_eq!(
        (
            u.total_spent,
            u.order_count,
            u.largest_order,
            u.smallest_order
        ),
        (2200, 2, Some(1200), Some(1000))
    );
    // Re-price: the sum moves by the difference, the extremes follow. A `$set` of the amount
    // needs no read back: the new value is in the update.
    db.take_commands();
    orders
        .update(3, doc! { "$set": { Order::FIELDS.amount: 1500 } })
        .await
        .unwrap();
    let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    assert!(!sent.contains(&"find".to_owned()), "{sent:?}");
    assert_eq!(sent[0], "findAndModify", "{sent:?}");
    let u = stored(&db, "user123").await;
    assert_eq!(
        (u.total_spent, u.largest_order, u.smallest_order),
        (2700, Some(1500), Some(1200))
    );
    // Move order 1 to another user: out of one, into the other.
    orders
        .update(1, doc! { "$set": { Order::FIELDS.user_id: "user456" } })
        .await
        .unwrap();
    let (a, b) = (stored(&db, "user123").await, stored(&db, "user456").await);
    assert_eq!(
        (
            a.total_spent,
            a.order_count,
            a.largest_order,
            a.smallest_order
        ),
        (1500, 1, Some(1500), Some(1500))
    );
    assert_eq!(
        (
            b.total_spent,
            b.order_count,
            b.largest_order,
            b.smallest_order
        ),
        (1200, 1, Some(1200), Some(1200))
    );
    // Replace a whole order: new amount and user at once.
    orders.replace(&order(1, "user123", 800)).await.unwrap();
    let (a, b) = (stored(&db, "user123").await, stored(&db, "user456").await);
    assert_eq!(
        (a.total_spent, a.order_count, a.smallest_order),
        (2300, 2, Some(800))
    );
    assert_eq!(
        (b.total_spent, b.order_count, b.largest_order),
        (0, 0, None),
        "{b:?}"
    );
    // An order for nobody counts for nobody.
    let mut nobody = order(9, "user123", 50);
    nobody.user_id = None;
    orders.insert(&nobody).await.unwrap();
    assert_eq!(stored(&db, "user123").await.total_spent, 2300);
    // An update that touches no field a computed field reads is one plain update.
    db.take_commands();
    orders
        .update(3, doc! { "$set": { Order::FIELDS.note: "gift" } })
        .await
        .unwrap();
    let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    assert_eq!(sent, ["update"]);
    assert!(User::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

/// Missing documents and bad input are typed errors, with nothing written.
#[tokio::test]
async fn missing_documents_and_bad_input_write_nothing() {
    let db = setup("computed_errors", &["u1"]).await;
    let orders = Order::collection(&db);
    // An order for a user that does not exist: the insert is undone.
    let err = orders.insert(&order(1, "ghost", 10)).await.unwrap_err();
    assert!(
        matches!(&err, Error::NotFound { collection, missing } if collection == "users" && **missing == Missing::Document { id: Bson::String("ghost".into()) }),
        "{err}"
    );
    assert_eq!(
        Order::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );
    // Moving an order to a missing user: nothing moves.
    orders.insert(&order(2, "u1", 10)).await.unwrap();
    let err = orders
        .update(2, doc! { "$set": { "userId": "ghost" } })
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let o = Order::collection(&db)
        .raw()
        .find_one(doc! { "_id": 2 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.user_id.as_deref(), Some("u1"));
    assert_eq!(stored(&db, "u1").await.total_spent, 10);
    // Missing sources.
    for err in [
        orders.delete(99).await.unwrap_err(),
        orders
            .update(99, doc! { "$set": { "amount": 1 } })
            .await
            .unwrap_err(),
        orders.replace(&order(99, "u1", 1)).await.unwrap_err(),
    ] {
        assert!(
            matches!(&err, Error::NotFound { collection, .. } if collection == "orders"),
            "{err}"
        );
    }
    // Keys: an `_id` change and a `$` path are refused before anything is sent.
    for bad in [
        doc! { "$set": { "_id": 5 } },
        doc! { "$set": { "amount.$": 5 } },
    ] {
        let err = orders.update(2, bad).await.unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    }
    // A NaN score would poison the sum for good.
    let reviews = Review::collection(&db);
    let u1 = stored(&db, "u1").await;
    let err = reviews
        .insert(&Review {
            id: 1,
            author: Ref::to(&u1),
            score: f64::NAN,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
    assert_eq!(
        Review::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );
    assert_eq!(stored(&db, "u1").await.total_spent, 10);
}

/// A source holding a `Ref<User>`, summing a float into an f64.
#[tokio::test]
async fn a_ref_back_reference_and_a_float_sum() {
    let db = setup("computed_ref", &["u1"]).await;
    let u1 = stored(&db, "u1").await;
    let reviews = Review::collection(&db);
    for (id, score) in [(1, 4.5), (2, 3.25)] {
        reviews
            .insert(&Review {
                id,
                author: Ref::to(&u1),
                score,
            })
            .await
            .unwrap();
    }
    let u = stored(&db, "u1").await;
    assert_eq!((u.reviews, u.review_points), (2, 7.75));
    reviews.delete(1).await.unwrap();
    let u = stored(&db, "u1").await;
    assert_eq!((u.reviews, u.review_points), (1, 3.25));
}

/// 8 tasks x 100 order writes (inserts, re-pricing, moves, deletes) over 3 users: every total
/// equals a scan of the orders afterwards, and `verify` agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_leave_every_total_exact() {
    let db = Arc::new(setup("computed_concurrent", &["a", "b", "c"]).await);
    let users = ["a", "b", "c"];
    let tasks: Vec<_> = (0..8i64)
        .map(|t| {
            let db = db.clone();
            tokio::spawn(async move {
                let orders = Order::collection(&db);
                let mut mine: Vec<i64> = Vec::new();
                for i in 0..100i64 {
                    let id = t * 1000 + i;
                    let u = users[((t + i) % 3) as usize];
                    match i % 5 {
                        0..=1 => {
                            orders.insert(&order(id, u, 10 + i)).await.unwrap();
                            mine.push(id);
                        }
                        2 if !mine.is_empty() => {
                            let o = mine[(i as usize) % mine.len()];
                            orders
                                .update(o, doc! { "$inc": { "amount": 7 } })
                                .await
                                .unwrap();
                        }
                        3 if !mine.is_empty() => {
                            let o = mine[(i as usize * 7) % mine.len()];
                            orders
                                .update(o, doc! { "$set": { "userId": users[(i % 3) as usize] } })
                                .await
                                .unwrap();
                        }
                        4 if mine.len() > 2 => {
                            let o = mine.remove(0);
                            orders.delete(o).await.unwrap();
                        }
                        _ => {
                            orders.insert(&order(id, u, 1)).await.unwrap();
                            mine.push(id);
                        }
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    for u in users {
        let (sum, count, max, min) = expected(&db, u).await;
        let s = stored(&db, u).await;
        assert_eq!(
            (
                s.total_spent,
                s.order_count,
                s.largest_order,
                s.smallest_order
            ),
            (sum, count, max, min),
            "user {u}"
        );
    }
    assert!(User::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

/// Drift made by hand (writes around the toolkit) is reported by `check` without a write, and
/// repaired by `rebuild` and `repair`, over more than one batch.
#[tokio::test]
async fn check_reports_drift_and_rebuild_repairs_it() {
    let db = setup("computed_drift", &["u1", "u2"]).await;
    let orders = Order::collection(&db);
    for (id, amount) in [(1, 1200), (2, 3000), (3, 1000)] {
        orders.insert(&order(id, "u1", amount)).await.unwrap();
    }
    let users = db.collection::<Document>("users");
    users
        .update_one(
            doc! { "_id": "u1" },
            doc! { "$set": { "totalSpent": 1 }, "$unset": { "largestOrder": "" } },
        )
        .await
        .unwrap();
    // An order inserted around the toolkit.
    Order::collection(&db)
        .raw()
        .insert_one(order(4, "u2", 70))
        .await
        .unwrap();
    db.take_commands();
    let computed = User::collection(&db).computed();
    let report = computed.check().await.unwrap();
    assert!(
        db.take_commands().iter().all(|c| c.name != "update"),
        "check wrote"
    );
    // One finding per field, listing the documents whose value disagrees with the sources.
    let mut found: Vec<String> = report
        .findings
        .iter()
        .map(|f| {
            let mut ids: Vec<String> = f.documents.iter().map(ToString::to_string).collect();
            ids.sort();
            format!("{}: {}", f.subject, ids.join(", "))
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "largestOrder: \"u1\", \"u2\"",
            "orderCount: \"u2\"",
            "smallestOrder: \"u2\"",
            "totalSpent: \"u1\", \"u2\"",
        ],
        "{report}"
    );
    let one = computed.rebuild("u1").await.unwrap();
    assert_eq!(one.repaired, 1);
    assert_eq!(computed.rebuild("u1").await.unwrap().repaired, 0);
    let u = stored(&db, "u1").await;
    assert_eq!((u.total_spent, u.largest_order), (5200, Some(3000)));
    assert!(computed.rebuild("nobody").await.unwrap_err().is_not_found());

    // Many users, every other one drifted: the repair pages through them.
    let n = BATCH + 300;
    let many: Vec<User> = (0..n).map(|i| user(&format!("m{i:05}"))).collect();
    User::collection(&db)
        .raw()
        .insert_many(&many)
        .await
        .unwrap();
    users
        .update_many(
            doc! { "_id": { "$regex": "^m" } },
            doc! { "$set": { "totalSpent": 5 } },
        )
        .await
        .unwrap();
    let all = computed.repair().await.unwrap();
    assert_eq!(all.repaired, n as u64 + 1, "{all}");
    assert!(all.is_clean(), "{all}");
    assert!(computed.check().await.unwrap().is_clean());
    assert_eq!(stored(&db, "u2").await.total_spent, 70);
    // Nothing left to repair.
    assert_eq!(computed.repair().await.unwrap().repaired, 0);
}

/// The index on the source's `by` field is declared by the target and synced with it, under
/// MongoDB's default name.
#[tokio::test]
async fn the_back_reference_is_indexed() {
    let db = setup("computed_index", &[]).await;
    let names: Vec<String> = pattern_runtime::sync::list_indexes(&db, "orders")
        .await
        .unwrap()
        .iter()
        .filter_map(|d| d.get_str("name").ok().map(str::to_owned))
        .collect();
    assert!(names.contains(&"userId_1".to_owned()), "{names:?}");
    let names: Vec<String> = pattern_runtime::sync::list_indexes(&db, "reviews")
        .await
        .unwrap()
        .iter()
        .filter_map(|d| d.get_str("name").ok().map(str::to_owned))
        .collect();
    assert!(names.contains(&"author_1".to_owned()), "{names:?}");
}

/// Without transactions (a standalone mongod refuses them with code 20) the source is written
/// first, then the targets: a failure in between leaves the total behind its orders, `verify`
/// says so and `rebuild` repairs it.
#[tokio::test]
async fn without_transactions_a_failure_in_between_is_repairable() {
    let db = setup("computed_no_txn", &["u1"]).await;
    let orders = Order::collection(&db);
    // The transaction's target update is refused as mongod refuses transactions (the insert is
    // undone), then the same update is refused again when run without one.
    db.fail_command(
        &["update"],
        2,
        doc! { "errorCode": 20, "errmsg": "Transaction numbers are only allowed on a replica set member or mongos" },
    )
    .await;
    let err = orders.insert(&order(1, "u1", 250)).await.unwrap_err();
    assert_eq!(err.code(), Some(20), "{err}");
    // The documented order: the order is written, its user not yet.
    assert_eq!(
        Order::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        1
    );
    assert_eq!(stored(&db, "u1").await.total_spent, 0);
    // The four computed fields of `u1` disagree with its order.
    let report = User::collection(&db).computed().check().await.unwrap();
    assert_eq!(report.findings.len(), 4, "{report}");
    assert_eq!(report.documents(), [Bson::from("u1")], "{report}");
    User::collection(&db)
        .computed()
        .rebuild("u1")
        .await
        .unwrap();
    let u = stored(&db, "u1").await;
    assert_eq!(
        (
            u.total_spent,
            u.order_count,
            u.largest_order,
            u.smallest_order
        ),
        (250, 1, Some(250), Some(250))
    );
}

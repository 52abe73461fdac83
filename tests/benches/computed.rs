//! Writing an order through `Order::collection` (which keeps the user's `totalSpent` and
//! `orderCount` exact in the same transaction) vs the same transaction written by hand with the
//! driver.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- computed` (embedded server, or
//! `MONGODB_URI`). Two groups, on 10 users:
//! - `computed_insert`: `toolkit_insert` is `ModelCollection::insert` of a new order; `driver_insert`
//!   starts a session and a transaction, inserts the order, `$inc`s the user's two fields and
//!   commits (no retry loop: the toolkit's only costs a branch when nothing fails);
//! - `computed_reprice`: `toolkit_update` is `ModelCollection::update` with `$set` of one order's
//!   amount; `driver_update` is the transaction by hand: `findOneAndUpdate` returning the old
//!   amount and user, then one `$inc` of the difference on the user.
//!
//! Before timing, both sides of each group are checked to send the same commands, and the users'
//! totals to agree with their orders afterwards (`verify`).
//!
//! One run on the embedded server, 2 cores busy with other builds: insert, toolkit 1.22 ms vs
//! by hand 1.18 ms (ratio 1.03); re-price, toolkit 1.33 ms vs by hand 1.37 ms (0.97). Within the
//! run-to-run spread: the same commands cost the same.

use bson::{doc, Bson, Document};
use criterion::{criterion_group, Criterion};
use mongodb::options::ReturnDocument;
use mongodb::Database;
use pattern_runtime::Model;
use pattern_runtime::ModelCollection;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::runtime::Runtime;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(sum = Order.amount, by = user_id)]
    total_spent: i64,
    #[computed(count = Order, by = user_id)]
    order_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    user_id: i64,
    amount: i64,
}

const USERS: i64 = 10;

static NEXT: AtomicI64 = AtomicI64::new(1);

fn next_order() -> Order {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    Order {
        id,
        user_id: id % USERS,
        amount: 100 + id % 50,
    }
}

async fn toolkit_insert(orders: &ModelCollection<Order>) {
    orders.insert(&next_order()).await.unwrap();
}

async fn driver_insert(db: &Database) {
    let order = next_order();
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    Order::collection(db)
        .raw()
        .insert_one(&order)
        .session(&mut session)
        .await
        .unwrap();
    db.collection::<Document>("users")
        .update_one(
            doc! { "_id": order.user_id },
            doc! { "$inc": { "totalSpent": order.amount, "orderCount": 1 } },
        )
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
}

/// The order re-priced by the next update, and its new amount.
fn next_reprice() -> (i64, i64) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    (1 + n % 100, 100 + n % 77)
}

async fn toolkit_update(orders: &ModelCollection<Order>) {
    let (id, amount) = next_reprice();
    orders
        .update(id, doc! { "$set": { "amount": amount } })
        .await
        .unwrap();
}

async fn driver_update(db: &Database) {
    let (id, amount) = next_reprice();
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let before = db
        .collection::<Document>("orders")
        .find_one_and_update(doc! { "_id": id }, doc! { "$set": { "amount": amount } })
        .projection(doc! { "userId": 1, "amount": 1 })
        .return_document(ReturnDocument::Before)
        .session(&mut session)
        .await
        .unwrap()
        .unwrap();
    let old = before.get_i64("amount").unwrap();
    if old != amount {
        db.collection::<Document>("users")
            .update_one(
                doc! { "_id": before.get("userId").cloned().unwrap_or(Bson::Null) },
                doc! { "$inc": { "totalSpent": amount - old } },
            )
            .session(&mut session)
            .await
            .unwrap();
    }
    session.commit_transaction().await.unwrap();
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(async {
        let db = pattern_testkit::test_db("bench_computed").await;
        pattern_runtime::sync(&db)
            .models(&[User::SCHEMA, Order::SCHEMA])
            .options(&pattern_runtime::SyncOptions::new())
            .await
            .unwrap();
        let users: Vec<User> = (0..USERS)
            .map(|id| User {
                id,
                total_spent: 0,
                order_count: 0,
            })
            .collect();
        User::collection(&db)
            .raw()
            .insert_many(&users)
            .await
            .unwrap();
        db
    });
    let db = test_db.db();
    let orders = Order::collection(db);

    // The same commands on both sides (the toolkit's transaction is the hand-written one).
    let names = |db: &pattern_testkit::TestDb| -> Vec<String> {
        db.take_commands().into_iter().map(|c| c.name).collect()
    };
    rt.block_on(async {
        for _ in 0..100 {
            toolkit_insert(&orders).await;
        }
    });
    test_db.take_commands();
    rt.block_on(toolkit_insert(&orders));
    let toolkit = names(&test_db);
    rt.block_on(driver_insert(db));
    assert_eq!(toolkit, names(&test_db), "insert: the sides differ");
    // A re-price to a different amount on both sides.
    rt.block_on(toolkit_update(&orders));
    let toolkit = names(&test_db);
    rt.block_on(driver_update(db));
    let driver = names(&test_db);
    assert_eq!(toolkit, driver, "update: the sides differ");

    let mut g = c.benchmark_group("computed_insert");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("toolkit_insert", |b| {
        b.to_async(&rt).iter(|| toolkit_insert(&orders));
    });
    g.bench_function("driver_insert", |b| {
        b.to_async(&rt).iter(|| driver_insert(db));
    });
    g.finish();

    let mut g = c.benchmark_group("computed_reprice");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("toolkit_update", |b| {
        b.to_async(&rt).iter(|| toolkit_update(&orders));
    });
    g.bench_function("driver_update", |b| {
        b.to_async(&rt).iter(|| driver_update(db));
    });
    g.finish();

    // Every total still equals the orders.
    rt.block_on(async {
        assert!(User::collection(db)
            .computed()
            .check()
            .await
            .unwrap()
            .is_clean());
    });
}

criterion_group!(computed, benches);

//! Extended-reference propagation (`Customer::collection(&db).update` of a copied field) vs the same commands by hand.
//!
//! One side per process, so each starts on a fresh server (see `benches/subset.rs`):
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns --
//! extended_ref_rename/toolkit`, then `... -- extended_ref_rename/by_hand`,
//! `... -- extended_ref_uncopied/toolkit`, `... -- extended_ref_uncopied/by_hand` (embedded
//! server, or `MONGODB_URI`). A side's database is only set up when its benchmark runs. Two pairs,
//! each toolkit vs hand-written, on a customer with 3 orders and 2 invoices holding a copy:
//! - `extended_ref_rename/*`: `$set` of a copied field, in one transaction: `findAndModify` of
//!   the customer (`returnDocument: After`, projection of the copied field), one `updateMany`
//!   per embedding (`invoices.customer`, `orders.customer`), commit;
//! - `extended_ref_uncopied/*`: `$inc` of a field nobody copies: one `update` of the customer.
//!
//! The customer's copies are the two embeddings below, which both sides update (the other
//! benchmarks' models in this binary are other models, even where a name is the same).

use bson::oid::ObjectId;
use bson::{doc, Document};
use criterion::{criterion_group, Criterion};
use mongodb::options::ReturnDocument;
use mongodb::Database;
use pattern_runtime::Model;
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::runtime::Runtime;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "customers")]
#[extended_ref(CustomerRef(name, address))]
struct Customer {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    address: String,
    email: String,
    loyalty_points: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    total: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    amount: f64,
}

/// The commands one rename sends (name, collection), in the toolkit's order: embeddings by
/// collection name.
const RENAME: [(&str, &str); 4] = [
    ("findAndModify", "customers"),
    ("update", "invoices"),
    ("update", "orders"),
    ("commitTransaction", ""),
];

/// A database with one customer, 3 orders and 2 invoices copying it, and the copies' indexes.
fn fresh(rt: &Runtime, name: &str) -> (TestDb, ObjectId) {
    rt.block_on(async {
        let db = pattern_testkit::test_db(name).await;
        let models = [Customer::SCHEMA, Order::SCHEMA, Invoice::SCHEMA];
        pattern_runtime::sync(&db)
            .models(&models)
            .options(&Default::default())
            .await
            .unwrap();
        let ada = Customer {
            id: ObjectId::new(),
            name: "Ada".into(),
            address: "1 Main St, Hangzhou".into(),
            email: "ada@example.com".into(),
            loyalty_points: 0,
        };
        Customer::collection(&db)
            .raw()
            .insert_one(&ada)
            .await
            .unwrap();
        let orders: Vec<Order> = (0..3)
            .map(|i| Order {
                id: ObjectId::new(),
                customer: CustomerRef::from(&ada),
                total: f64::from(i) * 10.0,
            })
            .collect();
        Order::collection(&db)
            .raw()
            .insert_many(&orders)
            .await
            .unwrap();
        let invoices: Vec<Invoice> = (0..2)
            .map(|i| Invoice {
                id: ObjectId::new(),
                customer: CustomerRef::from(&ada),
                amount: f64::from(i) * 10.0,
            })
            .collect();
        Invoice::collection(&db)
            .raw()
            .insert_many(&invoices)
            .await
            .unwrap();
        db.take_commands();
        (db, ada.id)
    })
}

/// The name of iteration `n`: the same length on both sides.
fn name(n: u64) -> String {
    format!("Customer {n:010}")
}

/// What the commands since the last call were, and that every copy holds `expected`.
fn check(rt: &Runtime, db: &TestDb, sent: &[(&str, &str)], expected: &str) {
    let commands: Vec<(String, String)> = db
        .take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect();
    let want: Vec<(String, String)> = sent
        .iter()
        .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
        .collect();
    assert_eq!(commands, want);
    rt.block_on(async {
        for coll in ["orders", "invoices"] {
            let n = db
                .collection::<Document>(coll)
                .count_documents(doc! { "customer.name": expected })
                .await
                .unwrap();
            assert!(n >= 2, "{coll}: {n} copies named {expected}");
        }
    });
    db.take_commands();
}

async fn toolkit_rename(db: &Database, id: ObjectId, name: String) {
    Customer::collection(db)
        .update(id, doc! { "$set": { Customer::FIELDS.name: name } })
        .await
        .unwrap();
}

/// The rename's transaction, written with the driver: the same commands as the toolkit's.
async fn by_hand_rename(db: &Database, id: ObjectId, name: String) {
    let customers = db.collection::<Document>("customers");
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let source = customers
        .find_one_and_update(doc! { "_id": id }, doc! { "$set": { "name": name } })
        .return_document(ReturnDocument::After)
        .projection(doc! { "name": 1 })
        .session(&mut session)
        .await
        .unwrap()
        .expect("the customer exists");
    let name = source.get("name").expect("projected").clone();
    for coll in ["invoices", "orders"] {
        db.collection::<Document>(coll)
            .update_many(
                doc! { "customer._id": id },
                doc! { "$set": { "customer.name": name.clone() } },
            )
            .session(&mut session)
            .await
            .unwrap();
    }
    session.commit_transaction().await.unwrap();
}

async fn toolkit_uncopied(db: &Database, id: ObjectId) {
    Customer::collection(db)
        .update(id, doc! { "$inc": { Customer::FIELDS.loyalty_points: 1 } })
        .await
        .unwrap();
}

async fn by_hand_uncopied(db: &Database, id: ObjectId) {
    let result = db
        .collection::<Document>("customers")
        .update_one(doc! { "_id": id }, doc! { "$inc": { "loyaltyPoints": 1 } })
        .await
        .unwrap();
    assert_eq!(result.matched_count, 1);
}

fn rename(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("extended_ref_rename");
    // 100 samples of a transaction take longer than the default 5 s.
    g.measurement_time(Duration::from_secs(10));
    let mut state = None;
    let mut n = 0u64;
    g.bench_function("toolkit", |b| {
        let (db, id) = state.get_or_insert_with(|| {
            let (db, id) = fresh(rt, "bench_extref_rename_toolkit");
            rt.block_on(toolkit_rename(&db, id, name(0)));
            check(rt, &db, &RENAME, &name(0));
            (db, id)
        });
        let (db, id) = (db.db(), *id);
        b.to_async(rt).iter(|| {
            n += 1;
            toolkit_rename(db, id, name(n))
        });
    });
    let mut state = None;
    let mut m = 0u64;
    g.bench_function("by_hand", |b| {
        let (db, id) = state.get_or_insert_with(|| {
            let (db, id) = fresh(rt, "bench_extref_rename_by_hand");
            rt.block_on(by_hand_rename(&db, id, name(0)));
            check(rt, &db, &RENAME, &name(0));
            (db, id)
        });
        let (db, id) = (db.db(), *id);
        b.to_async(rt).iter(|| {
            m += 1;
            by_hand_rename(db, id, name(m))
        });
    });
    g.finish();
}

fn uncopied(c: &mut Criterion, rt: &Runtime) {
    let mut g = c.benchmark_group("extended_ref_uncopied");
    let one_update = [("update", "customers")];
    let mut state = None;
    g.bench_function("toolkit", |b| {
        let (db, id) = state.get_or_insert_with(|| {
            let (db, id) = fresh(rt, "bench_extref_uncopied_toolkit");
            rt.block_on(toolkit_uncopied(&db, id));
            check(rt, &db, &one_update, "Ada");
            (db, id)
        });
        let (db, id) = (db.db(), *id);
        b.to_async(rt).iter(|| toolkit_uncopied(db, id));
    });
    let mut state = None;
    g.bench_function("by_hand", |b| {
        let (db, id) = state.get_or_insert_with(|| {
            let (db, id) = fresh(rt, "bench_extref_uncopied_by_hand");
            rt.block_on(by_hand_uncopied(&db, id));
            check(rt, &db, &one_update, "Ada");
            (db, id)
        });
        let (db, id) = (db.db(), *id);
        b.to_async(rt).iter(|| by_hand_uncopied(db, id));
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    rename(c, &rt);
    uncopied(c, &rt);
}

criterion_group!(extended_ref, benches);

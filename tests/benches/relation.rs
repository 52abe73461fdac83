//! Loading a relation's references in one batch (`Product::collection(&db).relation(Product::FIELDS.parts).load`) vs the same
//! `$in` query written by hand, and vs the N+1 loop the batch avoids.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- relation` (embedded server, or
//! `MONGODB_URI`). One group, `relation_load`, on 100 products each holding 10 references
//! (`parts: Vec<Ref<Part>>`, the one-to-many case) to 300 parts, every part referenced by 3 or 4
//! products; the products are read once, before timing, and each benchmark resolves the parts of
//! all of them, every product's parts in its array's order:
//! - `toolkit_batch_load`: `Product::collection(&db).relation(Product::FIELDS.parts).load(&products)`, one
//!   `find({_id: {$in: <the 300 distinct ids>}})`, then `loaded.of(product)` for each product;
//! - `driver_batch_in`: the same written by hand: the distinct ids, the same `find` (with
//!   `batch_size` one more than their number, as the toolkit does, asking for the whole answer
//!   in one batch), collected into a `HashMap` by `_id`, then each product's ids looked up;
//! - `n_plus_1`: one `find_one({_id: id})` per reference, 1 000 round trips.
//!
//! The batch size is one more than the ids: with a `batchSize` equal to the number of documents
//! the first batch fills without the server finding the cursor exhausted, so it stays open and
//! the driver sends one more `getMore`, which comes back empty (this benchmark found that; the
//! toolkit now asks for one more). Both batched sides send one `find`.
//!
//! Every side returns the resolved parts as owned values, `Vec<Vec<Option<Part>>>` (the two
//! batched sides clone each part out of their map, at the same cost). Before timing, the three
//! results are checked to be equal and complete, and the two batched sides to send the same
//! single command (the `find` on `parts`).
//!
//! On the embedded server, on 2 busy cores, with one round trip per batch: toolkit 5.04 ms,
//! driver by hand 5.04 ms (ratio 1.00), the N+1 loop 296 ms (59 times the batch). Before the
//! batch size was one larger (two round trips on both batched sides), two runs gave 6-8 ms and
//! ratios 0.87 and 1.05: the spread from run to run (±20% on busy cores) is larger than any
//! difference between the two batched sides, so compare several runs, not one.

use bson::doc;
use bson::oid::ObjectId;
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use mongodb::Database;
use pattern_runtime::{Model, Ref};
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tokio::runtime::Runtime;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "parts")]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i32,
    cost: f64,
    price: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    catalog_number: i64,
    #[relation]
    parts: Vec<Ref<Part>>,
}

const PRODUCTS: usize = 100;
const PARTS_PER_PRODUCT: usize = 10;
const PARTS: usize = 300;
/// Every reference: `PRODUCTS * PARTS_PER_PRODUCT`.
const REFERENCES: usize = PRODUCTS * PARTS_PER_PRODUCT;

/// The resolved parts of every product, in the products' order and each product's array order.
type Resolved = Vec<Vec<Option<Part>>>;

/// The index of product `p`'s `k`-th part: `7 (10 p + k) mod 300`, 10 distinct parts per
/// product (7 is prime to 300), every part referenced by 3 or 4 products, in scattered order.
fn part_index(p: usize, k: usize) -> usize {
    (p * PARTS_PER_PRODUCT + k) * 7 % PARTS
}

/// The database (the parts, then the products referring to them) and the products, read back.
fn fresh(rt: &Runtime) -> (TestDb, Vec<Product>) {
    rt.block_on(async {
        let db = pattern_testkit::test_db("bench_relation_load").await;
        let parts: Vec<Part> = (0..PARTS)
            .map(|n| Part {
                id: ObjectId::new(),
                partno: format!("{:03}-aff-{:03}", n % 1_000, n * 37 % 1_000),
                name: format!("#{} grommet", n % 12),
                qty: i32::try_from(n % 100).unwrap_or(0) + 1,
                cost: 0.25 + (n % 40) as f64 * 0.05,
                price: 1.99 + (n % 40) as f64 * 0.1,
            })
            .collect();
        Part::collection(&db)
            .raw()
            .insert_many(&parts)
            .await
            .unwrap();
        let products: Vec<Product> = (0..PRODUCTS)
            .map(|p| Product {
                id: ObjectId::new(),
                name: format!("left-handed smoke shifter {p}"),
                manufacturer: format!("Acme {}", p % 7),
                catalog_number: 1_234 + i64::try_from(p).unwrap_or(0),
                parts: (0..PARTS_PER_PRODUCT)
                    .map(|k| Ref::to(&parts[part_index(p, k)]))
                    .collect(),
            })
            .collect();
        Product::collection(&db)
            .raw()
            .insert_many(&products)
            .await
            .unwrap();
        let read: Vec<Product> = db
            .collection::<Product>("products")
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert!(
            read == products,
            "the products did not read back as written"
        );
        db.take_commands();
        (db, read)
    })
}

async fn toolkit_batch_load(db: &Database, products: &[Product]) -> Resolved {
    let loaded = Product::collection(db)
        .relation(Product::FIELDS.parts)
        .load(products)
        .await
        .unwrap();
    products
        .iter()
        .map(|p| {
            loaded
                .of(p)
                .into_iter()
                .map(Option::<&Part>::cloned)
                .collect()
        })
        .collect()
}

async fn driver_batch_in(db: &Database, products: &[Product]) -> Resolved {
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let ids: Vec<ObjectId> = products
        .iter()
        .flat_map(|p| p.parts.iter().map(|r| *r.id()))
        .filter(|id| seen.insert(*id))
        .collect();
    let batch = u32::try_from(ids.len() + 1).unwrap_or(u32::MAX);
    let by_id: HashMap<ObjectId, Part> = db
        .collection::<Part>("parts")
        .find(doc! { "_id": { "$in": ids } })
        .batch_size(batch)
        .await
        .unwrap()
        .map_ok(|part| (part.id, part))
        .try_collect()
        .await
        .unwrap();
    products
        .iter()
        .map(|p| p.parts.iter().map(|r| by_id.get(r.id()).cloned()).collect())
        .collect()
}

async fn n_plus_1(db: &Database, products: &[Product]) -> Resolved {
    let parts = db.collection::<Part>("parts");
    let mut resolved = Vec::with_capacity(products.len());
    for p in products {
        let mut these = Vec::with_capacity(p.parts.len());
        for r in &p.parts {
            these.push(parts.find_one(doc! { "_id": r.id() }).await.unwrap());
        }
        resolved.push(these);
    }
    resolved
}

/// The three sides resolve the same parts, all of them; the two batched sides send the same
/// single `find`, the N+1 loop one `find` per reference.
fn check(rt: &Runtime, db: &TestDb, products: &[Product]) {
    let sent = |db: &TestDb| -> Vec<(String, String)> {
        db.take_commands()
            .into_iter()
            .map(|c| (c.name, c.target))
            .collect()
    };
    let by_toolkit = rt.block_on(toolkit_batch_load(db, products));
    let toolkit_sent = sent(db);
    let by_driver = rt.block_on(driver_batch_in(db, products));
    let driver_sent = sent(db);
    let by_n_plus_1 = rt.block_on(n_plus_1(db, products));
    let n_plus_1_sent = sent(db);

    let find = ("find".to_owned(), "parts".to_owned());
    // One `find`, and no empty `getMore` after it: see the module documentation.
    assert_eq!(
        toolkit_sent,
        std::slice::from_ref(&find),
        "toolkit_batch_load sent"
    );
    assert_eq!(
        driver_sent, toolkit_sent,
        "driver_batch_in no longer sends what the toolkit sends"
    );
    assert_eq!(n_plus_1_sent, vec![find; REFERENCES]);

    assert_eq!(by_toolkit.len(), PRODUCTS);
    for (p, parts) in products.iter().zip(&by_toolkit) {
        let ids: Vec<Option<ObjectId>> = parts.iter().map(|o| o.as_ref().map(|t| t.id)).collect();
        let expected: Vec<Option<ObjectId>> = p.parts.iter().map(|r| Some(*r.id())).collect();
        assert_eq!(ids, expected, "product {} resolved wrongly", p.id);
    }
    assert!(
        by_driver == by_toolkit,
        "driver_batch_in resolved otherwise"
    );
    assert!(by_n_plus_1 == by_toolkit, "n_plus_1 resolved otherwise");
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let (test_db, products) = fresh(&rt);
    check(&rt, &test_db, &products);
    let db = test_db.db();
    let products = products.as_slice();

    let mut g = c.benchmark_group("relation_load");
    // The N+1 loop takes a whole round trip per reference: 10 samples keep the group short.
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("toolkit_batch_load", |b| {
        b.to_async(&rt)
            .iter(|| async { toolkit_batch_load(db, products).await });
    });
    g.bench_function("driver_batch_in", |b| {
        b.to_async(&rt)
            .iter(|| async { driver_batch_in(db, products).await });
    });
    g.bench_function("n_plus_1", |b| {
        b.to_async(&rt)
            .iter(|| async { n_plus_1(db, products).await });
    });
    g.finish();
}

criterion_group!(relation, benches);

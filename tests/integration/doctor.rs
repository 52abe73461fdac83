//! The doctor against the server: a database seeded with the six problems yields exactly
//! those six findings; a clean one yields none; every other check finds what it should; checks
//! the server cannot run are reported as skipped, never as passed.

use std::collections::BTreeSet;
use std::time::Duration;

use bson::{doc, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::doctor::{doctor, Check, DoctorOptions, DoctorReport};
use pattern_runtime::{sync::list_indexes, Fields, Measurement, Model, ModelSchema};
// These tests seed drifted documents around the toolkit on purpose.
use pattern_testkit::{test_db_unvalidated as test_db, TestDb};
use serde::{Deserialize, Serialize};

// ----- the models -----

/// Problem 1: `tags` can grow without bound.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "articles")]
struct Article {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    tags: Vec<String>,
}

/// Problem 2 when `body` holds 2 MiB.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "blobs")]
struct Blob {
    #[serde(rename = "_id")]
    id: i64,
    body: String,
}

/// Problem 3: `email_1`, never used. The source of problem 6's copies.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "customers")]
#[extended_ref(CustomerRef(name))]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[index]
    email: String,
}

/// Problem 6 when a customer's name changes behind the toolkit's back.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    amount: i64,
}

/// Problem 4: `customer_1` is a prefix of `customer_1_at_-1`.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "orders")]
#[index(keys(customer = 1))]
#[index(keys(customer = 1, at = -1))]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    customer: i64,
    at: DateTime,
}

/// Problem 5 when a fourth item is pushed behind the toolkit's back.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 3, sort(created_at = -1), full = Review, parent = product_id)]
    recent: Vec<Excerpt>,
    #[summary(count = recent)]
    review_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
    created_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Excerpt {
    review_id: String,
    stars: i32,
    created_at: DateTime,
}

impl From<&Review> for Excerpt {
    fn from(r: &Review) -> Self {
        Excerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            created_at: r.created_at,
        }
    }
}

/// Bounded tags, a TTL, an index, and free-form metadata.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "shops")]
struct Shop {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[bounded(2)]
    tags: Vec<String>,
    #[index]
    city: String,
    #[index(expire_after = "30d")]
    seen_at: DateTime,
    meta: Document,
}

/// A total computed from purchases.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "buyers")]
struct Buyer {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Purchase.amount, by = buyer)]
    total: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "purchases")]
struct Purchase {
    #[serde(rename = "_id")]
    id: i64,
    buyer: String,
    amount: i64,
}

/// Array buckets of at most two.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(collection = "ticks", key = device, time = at, max_count = 2, span = "1h")]
struct Tick {
    device: String,
    at: DateTime,
    value: i64,
}

/// A native series whose measurements expire after a day.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(native, collection = "pings", key = host, time = at, expire_after = "1d")]
struct Ping {
    host: String,
    at: DateTime,
}

/// A shard key, on a server that is no cluster.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "accounts")]
#[shard_key(user)]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
    user: String,
}

// ----- helpers -----

/// Every index of `collection` but `_id_` and `except` queried once through a hint, so
/// `$indexStats` counts an access.
async fn use_indexes(db: &TestDb, collection: &str, except: &[&str]) {
    for index in list_indexes(db, collection).await.expect("list") {
        let name = index.get_str("name").expect("name").to_owned();
        if name == "_id_" || except.contains(&name.as_str()) {
            continue;
        }
        db.collection::<Document>(collection)
            .find(doc! {})
            .hint(mongodb::options::Hint::Name(name))
            .limit(1)
            .await
            .expect("hinted find")
            .try_collect::<Vec<_>>()
            .await
            .expect("read");
    }
}

/// `(check, collection, subject)` of every finding.
fn found(report: &DoctorReport) -> BTreeSet<(Check, String, String)> {
    report
        .findings
        .iter()
        .map(|f| (f.check, f.collection.clone(), f.subject.clone()))
        .collect()
}

fn expect(items: &[(Check, &str, &str)]) -> BTreeSet<(Check, String, String)> {
    items
        .iter()
        .map(|(c, coll, s)| (*c, (*coll).to_owned(), (*s).to_owned()))
        .collect()
}

fn at(minute: i64) -> DateTime {
    DateTime::from_millis(1_790_000_000_000 + minute * 60_000)
}

fn review(n: i64) -> Review {
    Review {
        id: format!("r{n}"),
        product_id: "p1".into(),
        stars: 4,
        created_at: at(n),
    }
}

/// The models of the seeded and the clean databases, each written through the toolkit.
async fn write_well(db: &TestDb, blob_bytes: usize) {
    let ann = Customer {
        id: 1,
        name: "Ann".into(),
        email: "ann@example.com".into(),
    };
    Customer::collection(db)
        .raw()
        .insert_one(&ann)
        .await
        .expect("customer");
    Invoice::collection(db)
        .raw()
        .insert_one(Invoice {
            id: 1,
            customer: CustomerRef::from(&ann),
            amount: 30,
        })
        .await
        .expect("invoice");
    Blob::collection(db)
        .raw()
        .insert_one(Blob {
            id: 1,
            body: "x".repeat(blob_bytes),
        })
        .await
        .expect("blob");
    Product::collection(db)
        .raw()
        .insert_one(Product {
            id: "p1".into(),
            recent: Vec::new(),
            review_count: 0,
        })
        .await
        .expect("product");
    let subset = Product::collection(db).subset(Product::FIELDS.recent);
    for n in 1..=3 {
        subset.push("p1", review(n)).await.expect("push");
    }
}

// ----- the tests -----

/// The acceptance: the six problems, and nothing else.
#[tokio::test]
async fn a_seeded_database_yields_exactly_its_problems() {
    let db = test_db("doctor_seeded").await;
    let models = [
        Article::SCHEMA,
        Blob::SCHEMA,
        Customer::SCHEMA,
        Invoice::SCHEMA,
        Order::SCHEMA,
        Product::SCHEMA,
        Review::SCHEMA,
    ];
    pattern_runtime::sync(&db)
        .models(&models)
        .options(&Default::default())
        .await
        .expect("sync");
    write_well(&db, 2 * 1024 * 1024).await;
    Article::collection(&db)
        .raw()
        .insert_one(Article {
            id: 1,
            title: "t".into(),
            tags: (0..30).map(|i| format!("tag{i}")).collect(),
        })
        .await
        .expect("article");
    Order::collection(&db)
        .raw()
        .insert_one(Order {
            id: 1,
            customer: 1,
            at: at(0),
        })
        .await
        .expect("order");
    // Behind the toolkit's back: a fourth excerpt (the oldest, so still in order), a renamed
    // customer.
    db.collection::<Document>("products")
        .update_one(
            doc! { "_id": "p1" },
            doc! { "$push": { "recent": { "reviewId": "r0", "stars": 1, "createdAt": at(0) } } },
        )
        .await
        .expect("push behind");
    db.collection::<Document>("customers")
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "name": "Anne" } })
        .await
        .expect("rename behind");
    for collection in ["customers", "invoices", "orders", "reviews"] {
        use_indexes(&db, collection, &["email_1"]).await;
    }
    db.take_commands();
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    println!("{report}");
    // It only reads: every command it sent is a read.
    let sent: BTreeSet<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    let reads: BTreeSet<String> = ["aggregate", "find", "getMore", "listIndexes"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(sent.is_subset(&reads), "{sent:?}");
    assert_eq!(
        found(&report),
        expect(&[
            (Check::UnboundedArray, "articles", "tags"),
            (Check::LargeDocument, "blobs", "document"),
            (Check::UnusedIndex, "customers", "email_1"),
            (Check::PrefixIndex, "orders", "customer_1"),
            // The product over its subset's limit fails the validator's `maxItems` too.
            (Check::Validator, "products", "document"),
            (Check::SubsetDrift, "products", "recent"),
            (Check::StaleCopy, "invoices", "customer"),
        ]),
        "{report}"
    );
    assert!(report.skipped.is_empty(), "{report}");
    // The figures and fixes say how much and what to do.
    let get = |check| report.with_check(check).next().expect("finding");
    assert_eq!(
        get(Check::UnboundedArray).figure,
        "nothing bounds it; largest in 1 sampled document: 30 items"
    );
    assert!(get(Check::LargeDocument).figure.contains("2.0 MiB"));
    assert!(get(Check::SubsetDrift)
        .figure
        .contains("over the limit of 3"));
    assert!(get(Check::SubsetDrift)
        .fix
        .contains("Product::collection(&db).subset(Product::FIELDS.recent).repair()"));
    assert!(get(Check::StaleCopy)
        .figure
        .contains("\"Ann\" in the copy, \"Anne\" in the source"));
    assert!(get(Check::StaleCopy)
        .fix
        .contains("Customer::collection(&db).references().repair()"));
    assert!(get(Check::PrefixIndex).figure.contains("customer_1_at_-1"));
    assert_eq!(get(Check::UnusedIndex).model, Some("Customer"));
    // The doctor wrote nothing.
    let subset: Document = db
        .collection::<Document>("products")
        .find_one(doc! {})
        .await
        .expect("read")
        .expect("product");
    assert_eq!(subset.get_array("recent").expect("recent").len(), 4);
}

/// The same models, written through the toolkit, every index used: nothing to report, and
/// nothing skipped.
#[tokio::test]
async fn a_clean_database_yields_none() {
    let db = test_db("doctor_clean").await;
    let models = [
        Blob::SCHEMA,
        Customer::SCHEMA,
        Invoice::SCHEMA,
        Product::SCHEMA,
        Review::SCHEMA,
        Shop::SCHEMA,
    ];
    pattern_runtime::sync(&db)
        .models(&models)
        .options(&Default::default())
        .await
        .expect("sync");
    write_well(&db, 1000).await;
    Shop::collection(&db)
        .raw()
        .insert_one(Shop {
            id: 1,
            name: "s".into(),
            tags: vec!["a".into(), "b".into()],
            city: "Hangzhou".into(),
            seen_at: at(0),
            meta: doc! { "a": { "b": { "c": 1 } } },
        })
        .await
        .expect("shop");
    for collection in ["customers", "invoices", "reviews", "shops"] {
        use_indexes(&db, collection, &[]).await;
    }
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert!(report.is_clean(), "{report}");
    assert!(
        report
            .to_string()
            .ends_with("no findings (6 collections, 8 documents sampled)\n"),
        "{report}"
    );
}

/// The other checks: a bound passed, nesting, a missing index and TTL, an undeclared index, a
/// drifted total, an overfull bucket.
#[tokio::test]
async fn every_other_check_finds_its_problem() {
    let db = test_db("doctor_others").await;
    // No sync for `Shop`: its declared `city_1` and TTL are missing.
    let synced = [
        Buyer::SCHEMA,
        Purchase::SCHEMA,
        <Tick as Measurement>::SCHEMA,
    ];
    pattern_runtime::sync(&db)
        .models(&synced)
        .options(&Default::default())
        .await
        .expect("sync");
    Shop::collection(&db)
        .raw()
        .insert_one(Shop {
            id: 1,
            name: "s".into(),
            tags: vec!["a".into(), "b".into(), "c".into()],
            city: "Hangzhou".into(),
            seen_at: at(0),
            meta: doc! { "a": { "b": { "c": { "d": 1 } } } },
        })
        .await
        .expect("shop");
    db.run_command(doc! {
        "createIndexes": "shops",
        "indexes": [{ "key": { "name": 1 }, "name": "name_1" }],
    })
    .await
    .expect("index by hand");
    Buyer::collection(&db)
        .raw()
        .insert_one(Buyer {
            id: "b1".into(),
            total: 0,
        })
        .await
        .expect("buyer");
    let purchases = Purchase::collection(&db);
    for (id, amount) in [(1, 10), (2, 32)] {
        purchases
            .insert(&Purchase {
                id,
                buyer: "b1".into(),
                amount,
            })
            .await
            .expect("purchase");
    }
    db.collection::<Document>("buyers")
        .update_one(doc! { "_id": "b1" }, doc! { "$set": { "total": 40 } })
        .await
        .expect("drift");
    let series = Tick::series(&db);
    for m in 0..2 {
        series
            .insert(&Tick {
                device: "d1".into(),
                at: at(m),
                value: m,
            })
            .await
            .expect("tick");
    }
    db.collection::<Document>("ticks")
        .update_one(
            doc! {},
            doc! { "$push": { "measurements": { "at": at(2), "value": 2 } } },
        )
        .await
        .expect("overfill");
    // A subset within its limit and rightly counted, but out of its order (newest first).
    pattern_runtime::sync(&db)
        .models(&[Product::SCHEMA])
        .options(&Default::default())
        .await
        .expect("sync");
    Product::collection(&db)
        .raw()
        .insert_one(Product {
            id: "p1".into(),
            recent: Vec::new(),
            review_count: 0,
        })
        .await
        .expect("product");
    let subset = Product::collection(&db).subset(Product::FIELDS.recent);
    for n in 1..=2 {
        subset.push("p1", review(n)).await.expect("push");
    }
    db.collection::<Document>("products")
        .update_one(
            doc! { "_id": "p1" },
            vec![doc! { "$set": { "recent": { "$reverseArray": "$recent" } } }],
        )
        .await
        .expect("reverse behind");
    for collection in ["buyers", "purchases", "ticks", "reviews"] {
        use_indexes(&db, collection, &[]).await;
    }
    let models = [
        Shop::SCHEMA,
        Buyer::SCHEMA,
        Purchase::SCHEMA,
        <Tick as Measurement>::SCHEMA,
        Product::SCHEMA,
    ];
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert_eq!(
        found(&report),
        expect(&[
            (Check::OverBound, "shops", "tags"),
            // The shop over its `#[bounded(2)]` fails the validator's `maxItems` too.
            (Check::Validator, "shops", "document"),
            (Check::DeepNesting, "shops", "meta"),
            (Check::MissingIndex, "shops", "city_1"),
            (Check::MissingTtl, "shops", "seen_at_1"),
            (Check::UndeclaredIndex, "shops", "name_1"),
            (Check::UnusedIndex, "shops", "name_1"),
            (Check::ComputedDrift, "buyers", "total"),
            (Check::BucketOverCap, "ticks", "measurements"),
            // So does the bucket over its `max_count` (`maxItems` of its measurements).
            (Check::Validator, "ticks", "document"),
            (Check::SubsetDrift, "products", "recent"),
        ]),
        "{report}"
    );
    let get = |check| report.with_check(check).next().expect("finding");
    assert!(
        get(Check::OverBound).figure.contains("largest 3"),
        "{report}"
    );
    assert!(
        get(Check::DeepNesting)
            .figure
            .contains("deepest 4 at `meta.a.b.c.d`"),
        "{report}"
    );
    assert!(
        get(Check::ComputedDrift)
            .figure
            .contains("holds 40, its sources say 42"),
        "{report}"
    );
    assert!(
        get(Check::BucketOverCap).figure.contains("largest 3"),
        "{report}"
    );
    assert!(
        get(Check::BucketOverCap).fix.contains("split_overfull"),
        "{report}"
    );
    assert!(get(Check::MissingTtl).fix.contains("2592000 s"), "{report}");
    assert!(
        get(Check::SubsetDrift).figure.contains("out of the order"),
        "{report}"
    );
    assert_eq!(report.with_check(Check::SubsetDrift).count(), 1, "{report}");

    // The repair the finding names: the bucket is split, and the finding is gone.
    let split = series.split_overfull().await.expect("split");
    assert_eq!((split.buckets, split.new_buckets, split.moved), (1, 1, 1));
    let after = doctor(&db)
        .models(&[<Tick as Measurement>::SCHEMA])
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert_eq!(after.with_check(Check::BucketOverCap).count(), 0, "{after}");
}

/// What the server cannot do is skipped, with its reason: `$indexStats` failing (injected),
/// and sharding on a server that is no cluster.
#[tokio::test]
async fn what_the_server_cannot_run_is_skipped_never_passed() {
    let db = test_db("doctor_skipped").await;
    let models = [Account::SCHEMA];
    pattern_runtime::sync(&db)
        .models(&models)
        .options(&Default::default())
        .await
        .expect("sync");
    Account::collection(&db)
        .raw()
        .insert_one(Account {
            id: 1,
            user: "u".into(),
        })
        .await
        .expect("account");
    // The shard key's supporting index, made by hand: managed, and never used.
    db.run_command(doc! {
        "createIndexes": "accounts",
        "indexes": [{ "key": { "user": 1 }, "name": "user_1" }],
    })
    .await
    .expect("index");
    // The first aggregates (the sample, the validator's count) run; the third (`$indexStats`)
    // fails as on a server without the stage.
    db.fail_command_after(
        &["aggregate"],
        2,
        doc! { "errorCode": 40324, "errmsg": "Unrecognized pipeline stage name: '$indexStats'" },
    )
    .await;
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    db.fail_command_off().await;
    let skipped: Vec<Check> = report.skipped.iter().map(|s| s.check).collect();
    assert_eq!(skipped, [Check::UnusedIndex, Check::ShardKey], "{report}");
    assert!(
        report.skipped[0]
            .reason
            .contains("cannot run `$indexStats`"),
        "{report}"
    );
    assert!(
        report.skipped[1].reason.contains("not a sharded cluster"),
        "{report}"
    );
    // `user_1` was never used, but the check did not run: no finding claims otherwise, the
    // report is clean (a skipped check is not a finding), and it says not everything ran.
    assert!(report.findings.is_empty(), "{report}");
    assert!(report.is_clean());
    assert!(!report.ran_everything());
    assert!(report.to_string().contains("2 checks skipped"), "{report}");
    // With `$indexStats` back: `user_1` is unused, but it supports the shard key, which needs
    // it without reads; only sharding is skipped.
    let again = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert!(again.findings.is_empty(), "{again}");
    let skipped: Vec<Check> = again.skipped.iter().map(|s| s.check).collect();
    assert_eq!(skipped, [Check::ShardKey], "{again}");
}

/// Sampling is bounded: the figures speak of the sample, and the progress callback sees every
/// collection once.
#[tokio::test]
async fn sampling_is_bounded_and_progress_is_reported() {
    let db = test_db("doctor_bounded").await;
    let many: Vec<Article> = (0..50)
        .map(|i| Article {
            id: i,
            title: "t".into(),
            tags: (0..i).map(|t| format!("t{t}")).collect(),
        })
        .collect();
    Article::collection(&db)
        .raw()
        .insert_many(&many)
        .await
        .expect("articles");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = seen.clone();
    let options = DoctorOptions::new()
        .unused_after(Duration::ZERO)
        .sample_size(10)
        .on_progress(move |p| {
            progress
                .lock()
                .expect("lock")
                .push((p.done, p.total, p.item))
        });
    let models: [&'static ModelSchema; 2] = [Article::SCHEMA, Blob::SCHEMA];
    let report = doctor(&db)
        .models(&models)
        .options(&options)
        .await
        .expect("doctor");
    assert_eq!(
        report.sampled,
        [("articles".to_owned(), 10), ("blobs".to_owned(), 0)]
    );
    let unbounded = report
        .with_check(Check::UnboundedArray)
        .next()
        .expect("finding");
    assert!(
        unbounded.figure.contains("largest in 10 sampled documents"),
        "{report}"
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        [(1, Some(2), Some("articles")), (2, Some(2), Some("blobs"))]
    );
}

/// A native time-series collection made without the declared expiry (by hand, or before
/// `expire_after` was declared) is found, with the `collMod` that fixes it; the collection the
/// series creates itself is clean.
#[tokio::test]
async fn a_native_series_that_never_expires_is_found() {
    let db = test_db("doctor_native_ttl").await;
    db.create_collection("pings")
        .timeseries(
            mongodb::options::TimeseriesOptions::builder()
                .time_field("at".to_owned())
                .meta_field(Some("host".to_owned()))
                .build(),
        )
        .await
        .expect("create");
    use_indexes(&db, "pings", &[]).await;
    let models = [<Ping as Measurement>::SCHEMA];
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert_eq!(
        found(&report),
        expect(&[(Check::MissingTtl, "pings", "at")]),
        "{report}"
    );
    let finding = report
        .with_check(Check::MissingTtl)
        .next()
        .expect("finding");
    assert!(finding.figure.contains("86400 s"), "{report}");
    assert!(
        finding
            .fix
            .contains("collMod: \"pings\", expireAfterSeconds: 86400"),
        "{report}"
    );

    let db = test_db("doctor_native_ttl_clean").await;
    Ping::series(&db)
        .insert(&Ping {
            host: "h".into(),
            at: DateTime::now(),
        })
        .await
        .expect("insert");
    use_indexes(&db, "pings", &[]).await;
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert!(report.is_clean(), "{report}");
}

/// An index counted for a moment is not condemned: with the default `unused_after` (a day),
/// its collection's unused-index check is skipped, saying how long it was counted.
#[tokio::test]
async fn a_fresh_index_is_not_judged_unused() {
    let db = test_db("doctor_fresh_index").await;
    let models = [Customer::SCHEMA];
    pattern_runtime::sync(&db)
        .models(&models)
        .options(&Default::default())
        .await
        .expect("sync");
    let report = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new())
        .await
        .expect("doctor");
    assert!(
        report.with_check(Check::UnusedIndex).next().is_none(),
        "{report}"
    );
    let skipped: Vec<&str> = report
        .skipped
        .iter()
        .filter(|s| s.check == Check::UnusedIndex)
        .filter_map(|s| s.collection.as_deref())
        .collect();
    assert_eq!(skipped, ["customers"], "{report}");
    assert!(
        report.skipped[0].reason.contains("unused_after"),
        "{report}"
    );
    // A database just synced: its report is clean, the check that waits is not a finding.
    assert!(report.is_clean(), "{report}");
    assert!(!report.ran_everything(), "{report}");
    // Judged at once when asked: the same index is then a finding.
    let judged = doctor(&db)
        .models(&models)
        .options(&DoctorOptions::new().unused_after(Duration::ZERO))
        .await
        .expect("doctor");
    assert!(
        judged.with_check(Check::UnusedIndex).next().is_some(),
        "{judged}"
    );
}

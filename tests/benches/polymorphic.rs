//! The polymorphic pattern's typed per-variant find vs the same find written by hand.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- polymorphic` (embedded server, or
//! `MONGODB_URI`). One group, `polymorphic_find_10k`: every push notification of a
//! `notifications` collection that holds 10 000 push, 5 000 email and 5 000 sms notifications
//! (inserted in interleaved rounds, after `sync(&db)`), read as `NotificationPush`:
//! - `toolkit`: `Notification::collection(&db).variant::<NotificationPush>().find(doc! {})`, which
//!   adds `{type: "push"}` itself;
//! - `driver`: `db.collection::<NotificationPush>("notifications").find(doc! { "type": "push" })`,
//!   collected with `TryStreamExt::try_collect`.
//!
//! Both sides only read, so they share one database; before timing, each is checked to send the
//! same commands and read the same 10 000 documents as the other.
//!
//! On the embedded server one find takes about 90-150 ms and the spread from run to run (up to
//! ±25%, either side ahead) is far larger than any difference between the sides: compare several
//! runs, not one. Timed in alternating pairs in one process, the toolkit/driver ratio's median was
//! 0.995.

use bson::{doc, oid::ObjectId, DateTime};
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use mongodb::Database;
use pattern_runtime::Model;
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::runtime::Runtime;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "notifications", derive(Clone, PartialEq))]
#[index(keys(created_at = -1))]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: ObjectId,
        to: String,
        subject: String,
        body: String,
        created_at: DateTime,
    },
    Sms {
        #[serde(rename = "_id")]
        id: ObjectId,
        phone_number: String,
        message: String,
        created_at: DateTime,
    },
    #[index(keys(device_id = 1))]
    Push {
        #[serde(rename = "_id")]
        id: ObjectId,
        device_id: String,
        title: String,
        content: String,
        created_at: DateTime,
    },
}

const PUSH: usize = 10_000;
const EMAIL: usize = 5_000;
const SMS: usize = 5_000;
/// Insertion rounds: each inserts a tenth of every variant, so the variants interleave on disk.
const ROUNDS: usize = 10;

fn created_at(n: usize) -> DateTime {
    DateTime::from_millis(1_754_049_600_000 + i64::try_from(n).unwrap_or(0) * 1_000)
}

/// The database: the indexes, then the notifications in interleaved rounds.
fn fresh(rt: &Runtime) -> TestDb {
    rt.block_on(async {
        let db = pattern_testkit::test_db("bench_polymorphic_find").await;
        pattern_runtime::sync(&db)
            .models(&[Notification::SCHEMA])
            .await
            .unwrap();
        let notifications = Notification::collection(&db);
        let (push, email, sms) = (
            notifications.variant::<NotificationPush>(),
            notifications.variant::<NotificationEmail>(),
            notifications.variant::<NotificationSms>(),
        );
        for round in 0..ROUNDS {
            // This round's share of `total`.
            let part = |total: usize| round * total / ROUNDS..(round + 1) * total / ROUNDS;
            let pushes: Vec<NotificationPush> = part(PUSH)
                .map(|n| NotificationPush {
                    id: ObjectId::new(),
                    device_id: format!("device-{:04}", n % 1_000),
                    title: "New Message".into(),
                    content: format!("You have a new message in your inbox ({n})."),
                    created_at: created_at(n),
                })
                .collect();
            push.insert_many(&pushes).await.unwrap();
            let emails: Vec<NotificationEmail> = part(EMAIL)
                .map(|n| NotificationEmail {
                    id: ObjectId::new(),
                    to: format!("user{n}@example.com"),
                    subject: "Welcome!".into(),
                    body: format!("Thank you for registering, user {n}."),
                    created_at: created_at(n),
                })
                .collect();
            email.insert_many(&emails).await.unwrap();
            let smses: Vec<NotificationSms> = part(SMS)
                .map(|n| NotificationSms {
                    id: ObjectId::new(),
                    phone_number: format!("+1555{n:07}"),
                    message: format!("Your code is {:06}", n * 7 % 1_000_000),
                    created_at: created_at(n),
                })
                .collect();
            sms.insert_many(&smses).await.unwrap();
        }
        let total = db
            .collection::<bson::Document>("notifications")
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(total, u64::try_from(PUSH + EMAIL + SMS).unwrap());
        db.take_commands();
        db
    })
}

async fn toolkit(db: &Database) -> Vec<NotificationPush> {
    Notification::collection(db)
        .variant::<NotificationPush>()
        .find(doc! {})
        .await
        .unwrap()
}

async fn driver(db: &Database) -> Vec<NotificationPush> {
    db.collection::<NotificationPush>("notifications")
        .find(doc! { "type": "push" })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// Both sides send the same commands and read the same documents, all the push notifications.
fn check(rt: &Runtime, db: &TestDb) {
    let sent = |db: &TestDb| -> Vec<(String, String)> {
        db.take_commands()
            .into_iter()
            .map(|c| (c.name, c.target))
            .collect()
    };
    let mut by_toolkit = rt.block_on(toolkit(db));
    let toolkit_sent = sent(db);
    let mut by_driver = rt.block_on(driver(db));
    let driver_sent = sent(db);
    assert_eq!(toolkit_sent, driver_sent);
    assert_eq!(
        toolkit_sent[0],
        ("find".to_owned(), "notifications".to_owned())
    );
    assert_eq!(by_toolkit.len(), PUSH);
    by_toolkit.sort_by_key(|p| p.id);
    by_driver.sort_by_key(|p| p.id);
    assert!(
        by_toolkit == by_driver,
        "the two sides read different documents"
    );
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = fresh(&rt);
    check(&rt, &test_db);
    let db = test_db.db();

    let mut g = c.benchmark_group("polymorphic_find_10k");
    // One find of 10 000 documents takes milliseconds: 20 samples are plenty.
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("toolkit", |b| {
        b.to_async(&rt).iter(|| async {
            let found = toolkit(db).await;
            assert_eq!(found.len(), PUSH);
            found
        });
    });
    g.bench_function("driver", |b| {
        b.to_async(&rt).iter(|| async {
            let found = driver(db).await;
            assert_eq!(found.len(), PUSH);
            found
        });
    });
    g.finish();
}

criterion_group!(polymorphic, benches);

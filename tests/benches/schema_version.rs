//! Reading 200 users through the model handle's `find`: stored at the current version, stored
//! two versions back (each upgraded twice in memory), against the same `find` by hand with the
//! driver's typed collection; and a model with no older versions against the same by hand.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- schema_version_read`
//! (ids `current/toolkit`, `two_upgrades/toolkit`, `current/by_hand`, `plain/toolkit`,
//! `plain/by_hand`).
//!
//! Before measuring, the group checks the large mixed read once and prints it: 100 000
//! documents in three versions and without the field, every one read through `find_each` (in
//! pages of 10 000 by `_id`) and compared with the values computed here, plus one document of
//! an unknown version that must be the only error.

use bson::{doc, Document};
use criterion::{criterion_group, Criterion};
use futures_util::TryStreamExt;
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

const USERS: i64 = 200;

#[derive(Deserialize)]
struct UserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    email: String,
}

#[derive(Deserialize)]
struct UserV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    email: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "bench_users")]
#[schema_version(older(UserV1 = 1, UserV2 = 2))]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<3>,
    first: String,
    last: String,
    email: String,
}

impl From<UserV1> for UserV2 {
    fn from(u: UserV1) -> Self {
        let (first, last) = u.name.split_once(' ').unwrap_or((&u.name, ""));
        UserV2 {
            id: u.id,
            first: first.to_owned(),
            last: last.to_owned(),
            email: u.email,
        }
    }
}

impl From<UserV2> for User {
    fn from(u: UserV2) -> Self {
        User {
            id: u.id,
            v: SchemaVersion,
            first: u.first,
            last: u.last,
            email: u.email,
        }
    }
}

/// The same documents, in a model with no older versions.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "bench_plain_users")]
struct PlainUser {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    email: String,
}

/// User `i` as the test stores it: version `i % 4` (0: no field, version 1).
fn stored(i: i64) -> Document {
    let email = format!("u{i}@example.com");
    match i % 4 {
        0 => doc! { "_id": i, "name": format!("F{i} L{i}"), "email": email },
        1 => doc! { "_id": i, "v": 1, "name": format!("F{i} L{i}"), "email": email },
        2 => {
            doc! { "_id": i, "v": 2, "first": format!("F{i}"), "last": format!("L{i}"), "email": email }
        }
        _ => {
            doc! { "_id": i, "v": 3, "first": format!("F{i}"), "last": format!("L{i}"), "email": email }
        }
    }
}

/// The large mixed read, checked against the values computed here.
async fn mixed_read(db: &mongodb::Database) {
    const N: i64 = 100_000;
    const PAGE: i64 = 10_000;
    let coll = db.collection::<Document>("bench_mixed_users");
    coll.drop().await.unwrap();
    for start in (0..N).step_by(PAGE as usize) {
        let docs: Vec<Document> = (start..start + PAGE).map(stored).collect();
        coll.insert_many(docs).await.unwrap();
    }
    coll.insert_one(doc! { "_id": N, "v": 9, "first": "from", "last": "the future" })
        .await
        .unwrap();
    let handle = pattern_runtime::ModelCollection::<MixedUser>::new(db);
    let started = std::time::Instant::now();
    let (mut read, mut unknown) = (0_i64, 0);
    for start in (0..=N).step_by(PAGE as usize) {
        let page = handle
            .find_each(doc! { "_id": { "$gte": start, "$lt": start + PAGE } })
            .await
            .unwrap();
        for r in page {
            match r {
                Ok(u) => {
                    let i = u.id;
                    assert_eq!(
                        (u.first, u.last, u.email),
                        (
                            format!("F{i}"),
                            format!("L{i}"),
                            format!("u{i}@example.com")
                        ),
                        "user {i}"
                    );
                    read += 1;
                }
                Err(pattern_runtime::Error::UnknownSchemaVersion { id, .. }) => {
                    assert_eq!(id.as_deref(), Some(&bson::Bson::Int64(N)));
                    unknown += 1;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    assert_eq!((read, unknown), (N, 1));
    println!(
        "schema_version mixed read: {read} documents in 3 versions (1/4 without the field) read \
         as the current type and checked, 1 unknown version a typed error, in {} ms",
        started.elapsed().as_millis()
    );
}

/// [`User`] on the large mixed read's collection.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "bench_mixed_users")]
#[schema_version(older(UserV1 = 1, UserV2 = 2))]
struct MixedUser {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<3>,
    first: String,
    last: String,
    email: String,
}

impl From<UserV2> for MixedUser {
    fn from(u: UserV2) -> Self {
        MixedUser {
            id: u.id,
            v: SchemaVersion,
            first: u.first,
            last: u.last,
            email: u.email,
        }
    }
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = rt.block_on(pattern_testkit::test_db("bench_schema_version"));
    let db = t.db().clone();
    rt.block_on(async {
        let current: Vec<Document> = (0..USERS)
            .map(|i| doc! { "_id": i, "v": 3, "first": format!("F{i}"), "last": format!("L{i}"), "email": format!("u{i}@example.com") })
            .collect();
        let old: Vec<Document> = (USERS..2 * USERS)
            .map(|i| doc! { "_id": i, "name": format!("F{i} L{i}"), "email": format!("u{i}@example.com") })
            .collect();
        let plain: Vec<Document> = (0..USERS)
            .map(|i| doc! { "_id": i, "first": format!("F{i}"), "last": format!("L{i}"), "email": format!("u{i}@example.com") })
            .collect();
        db.collection::<Document>("bench_users").insert_many(current).await.unwrap();
        db.collection::<Document>("bench_users").insert_many(old).await.unwrap();
        db.collection::<Document>("bench_plain_users").insert_many(plain).await.unwrap();
    });
    rt.block_on(mixed_read(&db));
    let users = User::collection(&db);
    let plain = PlainUser::collection(&db);
    let check = |n: usize| assert_eq!(n, USERS as usize);
    let mut g = c.benchmark_group("schema_version_read");
    g.bench_function("current/toolkit", |b| {
        b.to_async(&rt).iter(|| async {
            check(
                users
                    .find(doc! { "_id": { "$lt": USERS } })
                    .await
                    .unwrap()
                    .len(),
            );
        })
    });
    g.bench_function("two_upgrades/toolkit", |b| {
        b.to_async(&rt).iter(|| async {
            check(
                users
                    .find(doc! { "_id": { "$gte": USERS } })
                    .await
                    .unwrap()
                    .len(),
            );
        })
    });
    let typed = db.collection::<User>("bench_users");
    g.bench_function("current/by_hand", |b| {
        b.to_async(&rt).iter(|| async {
            let found: Vec<User> = typed
                .find(doc! { "_id": { "$lt": USERS } })
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            check(found.len());
        })
    });
    g.bench_function("plain/toolkit", |b| {
        b.to_async(&rt).iter(|| async {
            check(plain.find(doc! {}).await.unwrap().len());
        })
    });
    let typed_plain = db.collection::<PlainUser>("bench_plain_users");
    g.bench_function("plain/by_hand", |b| {
        b.to_async(&rt).iter(|| async {
            let found: Vec<PlainUser> = typed_plain
                .find(doc! {})
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            check(found.len());
        })
    });
    g.finish();
}

criterion_group!(schema_version, benches);

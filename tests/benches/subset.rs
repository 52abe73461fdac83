//! The subset pattern's cost over the same work written by hand with the driver.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- subset_update` (no I/O), and
//! for the server round trips one side per process, so each starts on a fresh server:
//! `... --bench patterns -- subset_push/toolkit`, then `... -- subset_push/by_hand` (embedded server, or
//! `MONGODB_URI`). Run in one process, the second push benchmark meets a server still busy with
//! the first one's writes and comes out up to 2x slower whichever side it is. Two pairs, each
//! toolkit vs hand-written:
//! - `subset_update/*`: building the parent update for one review (no I/O);
//! - `subset_push/*`: one review pushed, in a transaction: insert the review, update the parent
//!   (`$push` `$each/$sort/$slice`, `$inc` count and sum), recompute the average.

use bson::{doc, Bson, DateTime, Document};
use criterion::{criterion_group, Criterion};
use mongodb::Database;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
    #[summary(sum = recent_reviews.stars)]
    rating_sum: i64,
    #[summary(avg = recent_reviews.stars)]
    rating_avg: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "product_reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

#[derive(Debug, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct ReviewExcerpt {
    review_id: String,
    stars: i32,
    excerpt: String,
    created_at: DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            excerpt: r.content.chars().take(10).collect(),
            created_at: r.created_at,
        }
    }
}

fn review(n: u64) -> Review {
    Review {
        id: format!("r_{n}"),
        product_id: "p".into(),
        stars: i32::try_from(n % 5).unwrap_or(0) + 1,
        content: format!("review {n}: 手感很好，做工出色"),
        created_at: DateTime::from_millis(1_700_000_000_000 + i64::try_from(n).unwrap_or(0)),
    }
}

/// The update, as one would write it by hand.
fn by_hand_update(r: &Review, now: DateTime) -> Document {
    let excerpt = bson::serialize_to_document(&ReviewExcerpt::from(r)).unwrap();
    doc! {
        "$inc": { "ratingCount": 1, "ratingSum": r.stars },
        "$set": { "updatedAt": now },
        "$push": { "recentReviews": {
            "$each": [excerpt], "$sort": { "createdAt": -1 }, "$slice": 10,
        } },
    }
}

const AVERAGE: fn() -> Vec<Document> = || {
    vec![doc! { "$set": { "ratingAvg": { "$cond": [
        { "$gt": ["$ratingCount", 0] },
        { "$divide": ["$ratingSum", "$ratingCount"] },
        Bson::Null,
    ] } } }]
};

async fn by_hand_push(db: &Database, r: Review, now: DateTime) {
    let products = db.collection::<Document>("products");
    let reviews = db.collection::<Review>("product_reviews");
    let update = by_hand_update(&r, now);
    let mut session = db.client().start_session().await.unwrap();
    session
        .start_transaction()
        .and_run2(async |s| {
            let res = products
                .update_one(doc! { "_id": "p" }, update.clone())
                .session(&mut *s)
                .await?;
            assert_eq!(res.matched_count, 1);
            reviews.insert_one(r.clone()).session(&mut *s).await?;
            products
                .update_one(doc! { "_id": "p" }, AVERAGE())
                .session(&mut *s)
                .await?;
            Ok(())
        })
        .await
        .unwrap();
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Each side has a database of its own, in the same starting state.
    let fresh = |name: &'static str| {
        rt.block_on(async {
            let db = pattern_testkit::test_db(name).await;
            let products = db.collection::<Document>("products");
            let parent = doc! { "_id": "p", "recentReviews": [], "ratingCount": 0, "ratingSum": 0 };
            products.insert_one(parent).await.unwrap();
            db
        })
    };
    let (toolkit_db, by_hand_db) = (fresh("bench_toolkit"), fresh("bench_by_hand"));
    let subset = Product::collection(&toolkit_db).subset(Product::FIELDS.recent_reviews);
    let now = DateTime::now();
    let r = review(1);

    let mut g = c.benchmark_group("subset_update");
    g.bench_function("toolkit", |b| {
        b.iter(|| {
            subset
                .push_update(std::slice::from_ref(&r), doc! { "updatedAt": now })
                .unwrap()
        })
    });
    g.bench_function("by_hand", |b| b.iter(|| by_hand_update(&r, now)));
    g.finish();

    let mut g = c.benchmark_group("subset_push");
    let mut n = 1_000_000u64;
    g.bench_function("toolkit", |b| {
        b.to_async(&rt).iter(|| {
            n += 1;
            let item = review(n);
            let subset = &subset;
            async move {
                subset
                    .push("p", item)
                    .set(doc! { "updatedAt": now })
                    .await
                    .unwrap()
            }
        })
    });
    let mut m = 2_000_000u64;
    g.bench_function("by_hand", |b| {
        b.to_async(&rt).iter(|| {
            m += 1;
            let item = review(m);
            let db = by_hand_db.db();
            async move { by_hand_push(db, item, now).await }
        })
    });
    g.finish();
}

criterion_group!(subset, benches);

//! Chapter 9: computed + approximation.
//!
//! Two write-time shortcuts. Computed across collections: a user's `totalSpent`,
//! `orderCount` and `largestOrder`, declared with `#[computed(.., by = user_id)]` and kept by
//! `$inc` (`$max`) in the same transaction as each order written through `Order::collection(&db)`;
//! a value changed by hand is found by `check()` and repaired by `rebuild(id)`.
//!
//! Approximation: a page-view counter that must not write once per view, 10 500 views of one
//! page counted three ways on three fields of a `Page` declared with `#[approximate(..)]`.
//! Batched in memory (one `$inc` per 1 000 views, the rest by a background flush); sampled (each
//! view written with probability 0.01 as `$inc` of 100, an estimate); sharded over 8 documents
//! (one upsert per view, spread out; the read sums them and is exact, and `snapshot` copies the
//! total into the page). 10 500, not 10 000, so that the batched counter has something left for
//! its flush.

use std::sync::Arc;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use pattern_runtime::approximation::{BatchedCounter, Random};
use pattern_runtime::query::Update;
use pattern_runtime::{Model, SyncOptions};
use serde::{Deserialize, Serialize};

const VIEWS: u64 = 10_500;
/// Concurrent writers of the sharded counter.
const WRITERS: u64 = 8;

/// `users`: three fields computed from the user's orders.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "approximation", collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    #[computed(sum = Order.amount, by = user_id)]
    pub total_spent: i64,
    #[computed(count = Order, by = user_id)]
    pub order_count: i64,
    #[computed(max = Order.amount, by = user_id)]
    pub largest_order: Option<i64>,
}

/// `orders`: each names its user; it declares nothing, `Order::collection(&db)` finds the fields
/// computed from it.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "approximation", collection = "orders")]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: i64,
    pub user_id: String,
    pub amount: i64,
}

/// `pages`: one view counter per way of counting.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "approximation", collection = "pages")]
pub struct Page {
    #[serde(rename = "_id")]
    pub id: String,
    #[approximate(batched, threshold = 1000)]
    pub batched_views: i64,
    #[approximate(sampled, p = 0.01)]
    pub sampled_views: i64,
    #[approximate(sharded, shards = 8)]
    pub sharded_views: i64,
}

fn user(id: &str, name: &str) -> User {
    User {
        id: id.into(),
        name: name.into(),
        total_spent: 0,
        order_count: 0,
        largest_order: None,
    }
}

/// Every document of `collection`, by `_id`, as stored.
async fn print_all(db: &mongodb::Database, collection: &str) -> mongodb::error::Result<()> {
    let docs: Vec<Document> = db
        .collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await?
        .try_collect()
        .await?;
    for d in docs {
        println!("  {d}");
    }
    Ok(())
}

/// An integer as stored (`Int32` or `Int64`), 0 otherwise.
fn int(value: Option<&Bson>) -> i64 {
    match value {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        _ => 0,
    }
}

async fn stored_page(db: &mongodb::Database) -> mongodb::error::Result<Document> {
    let page = db
        .collection::<Document>("pages")
        .find_one(doc! { "_id": "home" })
        .await?;
    Ok(page.unwrap_or_default())
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 9: computed + approximation, values kept at write time");
    let db = crate::chapter_db(client, "approximation").await?;
    pattern_runtime::sync(&db)
        .group("approximation")
        .options(&SyncOptions::new())
        .await?;
    for index in pattern_runtime::sync::list_indexes(&db, "orders").await? {
        if index.get_str("name")? != "_id_" {
            println!(
                "sync: orders index {}, for the recomputations",
                index.get_document("key")?
            );
        }
    }

    computed(&db).await?;
    println!();
    counters(&db).await?;
    Ok(())
}

/// A user's totals, computed from the orders as they are written.
async fn computed(db: &mongodb::Database) -> Result<(), Box<dyn std::error::Error>> {
    User::collection(db)
        .insert_many(&[user("user123", "Ann"), user("user456", "Bob")])
        .await?;
    let orders = Order::collection(db);
    for (id, amount) in [(1, 1200), (2, 3000), (3, 1000)] {
        orders
            .insert(&Order {
                id,
                user_id: "user123".into(),
                amount,
            })
            .await?;
    }
    println!(
        "Computed: orders of 1200, 3000 and 1000 for user123 through Order::collection(&db), each \
         insert and its user's $inc/$max in one transaction (where the server has them):"
    );
    print_all(db, "users").await?;

    orders.delete(2).await?;
    println!("delete order 2 (3000): largestOrder recomputed from the orders left");
    print_all(db, "users").await?;
    orders
        .update(3, Update::new().set(Order::FIELDS.amount, 1500))
        .await?;
    println!("re-price order 3 to 1500:");
    print_all(db, "users").await?;
    orders
        .update(1, Update::new().set(Order::FIELDS.user_id, "user456"))
        .await?;
    println!("move order 1 to user456: both users updated");
    print_all(db, "users").await?;

    // A write around the toolkit: the driver's own (`raw()`), not the model handle's.
    User::collection(db)
        .raw()
        .update_one(
            doc! { "_id": "user123" },
            doc! { "$set": { User::FIELDS.total_spent: 9999 } },
        )
        .await?;
    println!("totalSpent of user123 set to 9999 by hand with the driver; check():");
    let users = User::collection(db).computed();
    println!("  {}", users.check().await?);
    let rebuilt = users.rebuild("user123").await?;
    println!(
        "rebuild(\"user123\"): {rebuilt}; check() now: {}",
        users.check().await?
    );
    print_all(db, "users").await?;
    Ok(())
}

/// 10 500 views of one page, three counters declared on `Page`.
async fn counters(db: &mongodb::Database) -> Result<(), Box<dyn std::error::Error>> {
    Page::collection(db)
        .insert(&Page {
            id: "home".into(),
            batched_views: 0,
            sampled_views: 0,
            sharded_views: 0,
        })
        .await?;
    println!("Approximation: {VIEWS} views of the home page, three counters declared on Page");

    // Batched: counted in memory, one `$inc` per 1 000 views, the rest by the flusher.
    let interval = Duration::from_millis(200);
    let batched = Arc::new(Page::collection(db).counter(Page::FIELDS.batched_views));
    let flusher = BatchedCounter::flush_every(batched.clone(), interval);
    for _ in 0..VIEWS {
        batched.add("home", 1).await?;
    }
    println!(
        "\nBatched (threshold 1000, flush_every 200 ms): after the views, {} writes, {} views \
         pending in memory, stored batchedViews: {}",
        batched.writes(),
        batched.pending(),
        stored_page(db).await?.get_i64("batchedViews")?
    );
    tokio::time::sleep(interval * 2).await;
    println!(
        "  400 ms later: {} writes, {} pending, stored batchedViews: {}",
        batched.writes(),
        batched.pending(),
        stored_page(db).await?.get_i64("batchedViews")?
    );
    // The flusher is a `Periodic`, like every background task: its last flush is its last
    // outcome.
    let outcomes = flusher.stop().await.into_result()?;
    let last = outcomes.last().copied().unwrap_or(0);
    println!(
        "  flusher.stop(): its last flush sent {last} writes; {} writes for {VIEWS} views, exact",
        batched.writes()
    );

    // Sampled: each view written with probability 0.01, as `$inc` of 100; seeded, so the tour
    // prints the same figures every run.
    let sampled = Page::collection(db)
        .counter(Page::FIELDS.sampled_views)
        .with_random(Random::seeded(2024));
    for _ in 0..VIEWS {
        sampled.add("home").await?;
    }
    let estimate = stored_page(db).await?.get_i64("sampledViews")?;
    println!(
        "\nSampled (p = 0.01, Random::seeded(2024)): {} writes for {VIEWS} views; stored \
         sampledViews: {estimate}, off by {:.1}% (relative standard error {:.1}%)",
        sampled.writes(),
        (estimate as f64 - VIEWS as f64).abs() / VIEWS as f64 * 100.0,
        sampled.relative_error(VIEWS) * 100.0
    );

    // Sharded: one upsert per view over 8 shard documents of `pages.shardedViews`, from 8
    // concurrent writers (what the shards are for: they rarely write the same document).
    let sharded = Arc::new(
        Page::collection(db)
            .counter(Page::FIELDS.sharded_views)
            .of("home"),
    );
    let writers: Vec<_> = (0..WRITERS)
        .map(|k| {
            let sharded = sharded.clone();
            let views = VIEWS / WRITERS + u64::from(k < VIEWS % WRITERS);
            tokio::spawn(async move {
                for _ in 0..views {
                    sharded.add(1).await?;
                }
                Ok::<_, pattern_runtime::Error>(())
            })
        })
        .collect();
    for writer in writers {
        writer.await??;
    }
    let before = int(stored_page(db).await?.get("shardedViews"));
    let total = sharded.snapshot().await?;
    let shards: Vec<Document> = db
        .collection::<Document>(sharded.shards_collection())
        .find(doc! {})
        .sort(doc! { "_id.shard": 1 })
        .await?
        .try_collect()
        .await?;
    let counts: Vec<String> = shards
        .iter()
        .map(|d| {
            let shard = d.get_document("_id").ok().and_then(|id| id.get("shard"));
            format!("{}={}", int(shard), int(d.get("count")))
        })
        .collect();
    println!(
        "\nSharded (8 shards, {WRITERS} concurrent writers): {} upserts for {VIEWS} views over \
         {} documents of pages.shardedViews, e.g. {}\n  shard counts: {}\n  snapshot() = \
         {total} (exact), copied into the page's shardedViews (it held {before})",
        sharded.writes(),
        shards.len(),
        shards.first().map(ToString::to_string).unwrap_or_default(),
        counts.join(" ")
    );

    println!("\nThe page:");
    print_all(db, "pages").await?;
    Ok(())
}

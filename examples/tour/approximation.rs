//! Chapter 9: approximation.
//!
//! Seed 000's page-view counter, which must not write once per view: 10 500 views of one page
//! counted three ways. Batched in memory (one `$inc` per 1 000 views, exact once flushed);
//! sampled (each view written with probability 0.01 as `$inc` of 100, an estimate); sharded over
//! 8 documents (one upsert per view, spread out; the read sums them and is exact). 10 500, not
//! 10 000, so that the batched counter has something left for its flush.

use bson::{doc, Document};
use pattern_runtime::approximation::{BatchedCounter, Random, SampledCounter, ShardedCounter};

const VIEWS: u64 = 10_500;

async fn stored(pages: &mongodb::Collection<Document>, id: &str) -> mongodb::error::Result<String> {
    let page = pages.find_one(doc! { "_id": id }).await?;
    Ok(page.map_or_else(|| "(none)".to_owned(), |d| d.to_string()))
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 9: approximation, a page-view counter without a write per view");
    let db = crate::chapter_db(client, "approximation").await?;
    let pages = db.collection::<Document>("pages");
    println!(
        "{VIEWS} views of one page, three counters (standalone handles on a collection: the \
         #[approximate(..)] model attribute and values computed across collections are not \
         built yet)"
    );

    // Batched: counted in memory, one `$inc` per 1 000 views, the rest at flush.
    let batched = BatchedCounter::new(pages.clone(), "views", 1_000)?;
    for _ in 0..VIEWS {
        batched.add("home", 1).await?;
    }
    let before = batched.writes();
    let flushed = batched.flush().await?;
    println!(
        "\nBatched (threshold 1000): {} writes ({before} at the threshold, {flushed} at flush) \
         for {VIEWS} views, exact:\n  {}",
        batched.writes(),
        stored(&pages, "home").await?
    );

    // Sampled: each view written with probability 0.01, as `$inc` of 100; seeded, repeatable.
    let sampled = SampledCounter::with_random(pages.clone(), "views", 0.01, Random::seeded(2024))?;
    for _ in 0..VIEWS {
        sampled.add("about").await?;
    }
    let estimate = pages
        .find_one(doc! { "_id": "about" })
        .await?
        .and_then(|d| d.get_f64("views").ok())
        .unwrap_or(0.0);
    println!(
        "\nSampled (p = 0.01, Random::seeded(2024)): {} writes for {VIEWS} views, an estimate:\n  \
         {}\n  estimate {estimate} vs {VIEWS} counted: off by {:.1}%; relative standard error \
         relative_error({VIEWS}) = {:.1}%",
        sampled.writes(),
        stored(&pages, "about").await?,
        (estimate - VIEWS as f64).abs() / VIEWS as f64 * 100.0,
        sampled.relative_error(VIEWS) * 100.0
    );

    // Sharded: one upsert per view over 8 documents; the read sums them in one aggregation.
    let counters = db.collection::<Document>("counters");
    let sharded =
        ShardedCounter::with_random(counters.clone(), "views:home", 8, Random::seeded(2024))?;
    for _ in 0..VIEWS {
        sharded.add(1).await?;
    }
    let shards = counters.count_documents(doc! {}).await?;
    println!(
        "\nSharded (8 shards): {} writes (one upsert per view) for {VIEWS} views, spread over \
         {shards} shard documents; read() = {} (exact)",
        sharded.writes(),
        sharded.read().await?
    );
    let mut cursor = counters.find(doc! {}).sort(doc! { "_id": 1 }).await?;
    let mut line = Vec::new();
    while cursor.advance().await? {
        let d = cursor.deserialize_current()?;
        line.push(format!(
            "{}={}",
            d.get_str("_id")?,
            d.get_i32("count")
                .map(i64::from)
                .or_else(|_| d.get_i64("count"))?
        ));
    }
    println!("  {}", line.join(" "));
    Ok(())
}

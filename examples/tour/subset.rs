//! Chapter 2: the subset pattern, with its summaries.
//!
//! A shop: a product keeps its 10 newest reviews (as excerpts) next to
//! `ratingCount`, `ratingSum` and `ratingAvg`; every review lives in `product_reviews`.

use bson::{doc, DateTime};
use pattern_runtime::query::Update;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

/// `products`, with the subset and its summaries.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "subset", collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub price: f64,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    pub recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    pub rating_count: i64,
    #[summary(sum = recent_reviews.stars)]
    pub rating_sum: i64,
    #[summary(avg = recent_reviews.stars)]
    pub rating_avg: Option<f64>,
    pub updated_at: Option<DateTime>,
}

/// `product_reviews`: every review, in full.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "subset", collection = "product_reviews")]
pub struct Review {
    #[serde(rename = "_id")]
    pub id: String,
    pub product_id: String,
    pub user_id: String,
    pub stars: i32,
    pub content: String,
    pub created_at: DateTime,
}

/// What the product embeds of a review.
#[derive(Debug, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct ReviewExcerpt {
    pub review_id: String,
    pub user_id: String,
    pub stars: i32,
    pub excerpt: String,
    pub created_at: DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            user_id: r.user_id.clone(),
            stars: r.stars,
            excerpt: r.content.chars().take(6).chain("…".chars()).collect(),
            created_at: r.created_at,
        }
    }
}

fn review(n: i64) -> Review {
    const WORDS: [&str; 5] = ["手感很好", "做工出色", "声音太大", "性价比高", "键帽打油"];
    Review {
        id: format!("r_{n:03}"),
        product_id: "prod_123".into(),
        user_id: format!("u_{}", n % 4),
        stars: i32::try_from(n % 5).unwrap_or(0) + 1,
        content: format!(
            "{}，第 {n} 条评论",
            WORDS[usize::try_from(n % 5).unwrap_or(0)]
        ),
        created_at: DateTime::from_millis(1_755_770_482_000 + n * 60_000),
    }
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 2: subset, with its summaries");
    let db = crate::chapter_db(client, "subset").await?;
    pattern_runtime::sync(&db)
        .models(&[Product::SCHEMA])
        .await?;
    for index in pattern_runtime::sync::list_indexes(&db, "product_reviews").await? {
        println!("  product_reviews index (created with the product's indexes): {index}");
    }
    Product::collection(&db)
        .insert(&Product {
            id: "prod_123".into(),
            name: "键盘".into(),
            price: 399.0,
            recent_reviews: Vec::new(),
            rating_count: 0,
            rating_sum: 0,
            rating_avg: None,
            updated_at: None,
        })
        .await?;

    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    let now = DateTime::now();
    println!("\nThe update one push sends to the product (as a shell command):");
    println!(
        "  {}",
        reviews.push_update(&[review(0)], doc! { "updatedAt": now })?
    );

    println!("\n25 reviews, pushed one by one, each in one transaction with its parent update:");
    for n in 0..25 {
        reviews
            .push("prod_123", review(n))
            .set(Update::new().set(Product::FIELDS.updated_at, now))
            .await?;
    }
    let p = Product::collection(&db)
        .get("prod_123")
        .await?
        .ok_or("the product is there")?;
    let embedded: Vec<&str> = p
        .recent_reviews
        .iter()
        .map(|r| r.review_id.as_str())
        .collect();
    println!("  embedded ({}): {}", embedded.len(), embedded.join(" "));
    println!(
        "  ratingCount {}, ratingSum {}, ratingAvg {:.2}",
        p.rating_count,
        p.rating_sum,
        p.rating_avg.unwrap_or_default()
    );
    let full = Review::collection(&db).count(doc! {}).await?;
    println!("  product_reviews holds {full}");

    let page: Vec<String> = reviews
        .page("prod_123", 10, 10)
        .await?
        .into_iter()
        .map(|r| r.id)
        .collect();
    println!(
        "  page 2 from product_reviews, same order: {}",
        page.join(" ")
    );

    println!("\nRemoving r_024 (the newest) refills the ten from product_reviews:");
    reviews.remove("prod_123", "r_024").await?;
    let p = Product::collection(&db)
        .get("prod_123")
        .await?
        .ok_or("there")?;
    let embedded: Vec<&str> = p
        .recent_reviews
        .iter()
        .map(|r| r.review_id.as_str())
        .collect();
    println!("  embedded: {}", embedded.join(" "));
    println!(
        "  ratingCount {}, ratingAvg {:.2}",
        p.rating_count,
        p.rating_avg.unwrap_or_default()
    );

    println!("\nSomeone empties the array by hand; rebuild() repairs it from product_reviews:");
    Product::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "prod_123" },
            doc! { "$set": { "recentReviews": [], "ratingCount": 0 } },
        )
        .await?;
    reviews.rebuild("prod_123").await?;
    let p = Product::collection(&db)
        .get("prod_123")
        .await?
        .ok_or("there")?;
    println!(
        "  embedded {} items, ratingCount {}, ratingAvg {:.2}",
        p.recent_reviews.len(),
        p.rating_count,
        p.rating_avg.unwrap_or_default()
    );

    println!("\nA push to a product that does not exist:");
    match reviews.push("prod_404", review(99)).await {
        Err(e) => println!("  {e}"),
        Ok(()) => println!("  (unexpectedly accepted)"),
    }
    println!(
        "  product_reviews still holds {}",
        Review::collection(&db).count(doc! {}).await?
    );
    Ok(())
}

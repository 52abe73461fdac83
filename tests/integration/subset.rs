//! The subset pattern against a real server: the seed's product with its 10 newest reviews,
//! `ratingCount`, `ratingSum` and `ratingAvg`.

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::query::Update;
use pattern_runtime::{sync::list_indexes, Error, Fields, Missing, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
    #[summary(sum = recent_reviews.stars)]
    rating_sum: i64,
    #[summary(avg = recent_reviews.stars)]
    rating_avg: Option<f64>,
    updated_at: Option<DateTime>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "product_reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    user_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct ReviewExcerpt {
    review_id: String,
    user_id: String,
    stars: i32,
    excerpt: String,
    created_at: DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            user_id: r.user_id.clone(),
            stars: r.stars,
            excerpt: r.content.chars().take(10).collect(),
            created_at: r.created_at,
        }
    }
}

fn review(n: u32) -> Review {
    Review {
        id: format!("r_{n:05}"),
        product_id: "prod_123".into(),
        user_id: format!("u_{}", n % 7),
        stars: i32::try_from(n % 5).unwrap() + 1,
        content: format!("review number {n}: 手感很好，做工出色"),
        created_at: DateTime::from_millis(1_700_000_000_000 + i64::from(n) * 1000),
    }
}

async fn new_product(db: &mongodb::Database, id: &str) {
    Product::collection(db)
        .raw()
        .insert_one(Product {
            id: id.into(),
            name: "键盘".into(),
            recent_reviews: Vec::new(),
            rating_count: 0,
            rating_sum: 0,
            rating_avg: None,
            updated_at: None,
        })
        .await
        .unwrap();
}

async fn load(db: &mongodb::Database, id: &str) -> Product {
    Product::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("the product exists")
}

/// The first `n` of `numbers` by the subset's order (newest first), as review ids.
fn newest(numbers: impl IntoIterator<Item = u32>, n: usize) -> Vec<String> {
    let mut all: Vec<u32> = numbers.into_iter().collect();
    all.sort_by(|a, b| b.cmp(a));
    all.into_iter()
        .take(n)
        .map(|k| format!("r_{k:05}"))
        .collect()
}

fn ids(p: &Product) -> Vec<String> {
    p.recent_reviews
        .iter()
        .map(|r| r.review_id.clone())
        .collect()
}

async fn full_count(db: &mongodb::Database) -> u64 {
    Review::collection(db)
        .raw()
        .count_documents(doc! {})
        .await
        .unwrap()
}

#[tokio::test]
async fn twenty_five_pushes_keep_the_ten_newest_and_every_summary() {
    let db = test_db("subset_25").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    // Out of order on purpose: the array is kept sorted by createdAt, not by arrival.
    let order: Vec<u32> = (0..25).map(|i| (i * 7) % 25).collect();
    for &n in &order {
        reviews.push("prod_123", review(n)).await.unwrap();
    }
    let p = load(&db, "prod_123").await;
    assert_eq!(ids(&p), newest(0..25, 10));
    assert_eq!(p.rating_count, 25);
    let sum: i64 = (0..25).map(|n| i64::from(review(n).stars)).sum();
    assert_eq!(p.rating_sum, sum);
    assert_eq!(p.rating_avg, Some(sum as f64 / 25.0));
    assert_eq!(full_count(&db).await, 25);
    assert_eq!(reviews.count("prod_123").await.unwrap(), 25);

    // Later pages come from the full collection, in the same order.
    let page: Vec<String> = reviews
        .page("prod_123", 10, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(page, newest(0..25, 20)[10..].to_vec());
    assert_eq!(reviews.page("prod_123", 20, 10).await.unwrap().len(), 5);
}

#[tokio::test]
async fn concurrent_pushes_lose_nothing() {
    let db = test_db("subset_concurrent").await;
    new_product(&db, "prod_123").await;
    let mut tasks = Vec::new();
    for task in 0..8u32 {
        let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
        tasks.push(tokio::spawn(async move {
            for i in 0..50u32 {
                reviews
                    .push("prod_123", review(task * 50 + i))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let p = load(&db, "prod_123").await;
    assert_eq!(
        ids(&p),
        newest(0..400, 10),
        "exactly the 10 newest of all 400"
    );
    assert_eq!(p.rating_count, 400);
    let sum: i64 = (0..400).map(|n| i64::from(review(n).stars)).sum();
    assert_eq!(p.rating_sum, sum);
    assert_eq!(p.rating_avg, Some(sum as f64 / 400.0));
    assert_eq!(full_count(&db).await, 400);
}

/// The seed's product, exactly: `ratingCount` next to the 10 recent reviews.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "seed_products")]
struct SeedProduct {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = SeedReview, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "seed_product_reviews")]
struct SeedReview {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    user_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

impl From<&SeedReview> for ReviewExcerpt {
    fn from(r: &SeedReview) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            user_id: r.user_id.clone(),
            stars: r.stars,
            excerpt: "手感很好…".into(),
            created_at: r.created_at,
        }
    }
}

/// Documents equal but for key order; numbers must have the same type.
fn same_modulo_key_order(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_modulo_key_order(v, w)))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_modulo_key_order(v, w))
        }
        _ => a == b,
    }
}

#[tokio::test]
async fn the_update_is_the_seed_shell_command() {
    // db.products.updateOne({ _id: "prod_123" }, {
    //   $inc: { ratingCount: 1 }, $set: { updatedAt: new Date() },
    //   $push: { recentReviews: { $each: [{ reviewId: "r_998877", userId: "u_1", stars: 5,
    //            excerpt: "手感很好…", createdAt: ISODate("2025-08-21T10:01:22Z") }],
    //            $sort: { createdAt: -1 }, $slice: 10 } } })
    let created = DateTime::parse_rfc3339_str("2025-08-21T10:01:22Z").unwrap();
    let now = DateTime::now();
    let seed = doc! {
        "$inc": { "ratingCount": 1 },
        "$set": { "updatedAt": now },
        "$push": {
            "recentReviews": {
                "$each": [{
                    "reviewId": "r_998877",
                    "userId": "u_1",
                    "stars": 5,
                    "excerpt": "手感很好…",
                    "createdAt": created,
                }],
                "$sort": { "createdAt": -1 },
                "$slice": 10,
            }
        }
    };
    let item = SeedReview {
        id: "r_998877".into(),
        product_id: "prod_123".into(),
        user_id: "u_1".into(),
        stars: 5,
        content: "手感很好，做工出色……".into(),
        created_at: created,
    };
    let db = test_db("subset_seed").await;
    let update = SeedProduct::collection(&db)
        .subset(SeedProduct::FIELDS.recent_reviews)
        .push_update(&[item], doc! { "updatedAt": now })
        .unwrap();
    assert!(
        same_modulo_key_order(
            &Bson::Document(update.clone()),
            &Bson::Document(seed.clone())
        ),
        "\n  sent: {update}\n  seed: {seed}"
    );
}

#[tokio::test]
async fn the_update_sets_what_the_caller_asks_for() {
    let db = test_db("subset_set").await;
    new_product(&db, "prod_123").await;
    let at = DateTime::from_millis(1_755_770_482_000);
    Product::collection(&db)
        .subset(Product::FIELDS.recent_reviews)
        .push("prod_123", review(1))
        .set(doc! { "updatedAt": at })
        .await
        .unwrap();
    assert_eq!(load(&db, "prod_123").await.updated_at, Some(at));

    // Typed: an `Update` of `set`s, in the same parent update.
    let later = DateTime::from_millis(1_755_770_483_000);
    let f = Product::FIELDS;
    Product::collection(&db)
        .subset(f.recent_reviews)
        .push("prod_123", review(2))
        .set(Update::new().set(f.updated_at, later).set(f.name, "SSD"))
        .await
        .unwrap();
    let product = load(&db, "prod_123").await;
    assert_eq!(
        (product.updated_at, product.name.as_str()),
        (Some(later), "SSD")
    );
    assert_eq!(product.rating_count, 2);

    // Another operator than `set` is refused before anything is written.
    let before = load(&db, "prod_123").await;
    db.take_commands();
    let e = Product::collection(&db)
        .subset(f.recent_reviews)
        .push("prod_123", review(3))
        .set(Update::new().set(f.name, "x").unset(f.updated_at))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidKey { ref key, .. } if key == "$unset"),
        "{e:?}"
    );
    assert!(db.take_commands().is_empty(), "nothing sent");
    let after = load(&db, "prod_123").await;
    assert_eq!(
        (after.rating_count, after.name, after.updated_at),
        (before.rating_count, before.name, before.updated_at)
    );
}

#[tokio::test]
async fn push_many_sends_one_parent_update() {
    let db = test_db("subset_many").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    reviews
        .push_many("prod_123", (0..30).map(review).collect())
        .await
        .unwrap();
    reviews.push_many("prod_123", Vec::new()).await.unwrap();
    let p = load(&db, "prod_123").await;
    assert_eq!(ids(&p), newest(0..30, 10));
    assert_eq!(p.rating_count, 30);
    assert_eq!(full_count(&db).await, 30);
}

#[tokio::test]
async fn a_missing_parent_is_not_found_and_nothing_is_written() {
    let db = test_db("subset_missing").await;
    let for_nope = Review {
        product_id: "nope".into(),
        ..review(1)
    };
    let err = Product::collection(&db)
        .subset(Product::FIELDS.recent_reviews)
        .push("nope", for_nope)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotFound { collection, missing } if collection == "products" && **missing == Missing::Document { id: Bson::String("nope".into()) }),
        "{err:?}"
    );
    assert_eq!(full_count(&db).await, 0);
}

/// A full item names its parent: pushed to another one it is refused, nothing written.
#[tokio::test]
async fn an_item_naming_another_parent_is_refused() {
    let db = test_db("subset_other_parent").await;
    new_product(&db, "p-ssd1").await;
    new_product(&db, "p-ssd2").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    let for_ssd2 = Review {
        product_id: "p-ssd2".into(),
        ..review(1)
    };
    let before = pattern_testkit::docs(&db, "products").await;
    let err = reviews.push("p-ssd1", for_ssd2.clone()).await.unwrap_err();
    match &err {
        Error::InvalidValue { field, reason } => {
            assert_eq!(field, "productId");
            assert!(
                reason.contains("p-ssd2") && reason.contains("p-ssd1"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pattern_testkit::docs(&db, "products").await, before);
    assert_eq!(full_count(&db).await, 0);
    // In a batch, one wrong item refuses the batch.
    let ok = Review {
        product_id: "p-ssd1".into(),
        ..review(2)
    };
    let err = reviews
        .push_many("p-ssd1", vec![ok.clone(), for_ssd2.clone()])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidValue { .. }), "{err:?}");
    assert_eq!(full_count(&db).await, 0);
    // Pushed to its own parent, it is filed there.
    reviews.push("p-ssd2", for_ssd2).await.unwrap();
    reviews.push("p-ssd1", ok).await.unwrap();
    assert_eq!(load(&db, "p-ssd2").await.rating_count, 1);
    assert_eq!(load(&db, "p-ssd1").await.rating_count, 1);
}

#[tokio::test]
async fn bad_set_keys_are_refused_before_anything_is_written() {
    let db = test_db("subset_keys").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    for bad in [
        doc! { "$where": 1 },
        doc! { "a.b": 1 },
        doc! { "ratingCount": 5 },
    ] {
        let kept = bad.contains_key("ratingCount");
        let err = reviews
            .push("prod_123", review(1))
            .set(bad)
            .await
            .unwrap_err();
        if kept {
            assert!(matches!(err, Error::KeptField { .. }), "{err:?}");
        } else {
            assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
        }
    }
    assert_eq!(full_count(&db).await, 0);
    assert_eq!(load(&db, "prod_123").await.rating_count, 0);
}

/// A subset whose embedded form is the whole item: a big item can overflow the parent.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: u32,
    #[subset(limit = 5, sort(at = -1), full = Comment, parent = post)]
    latest: Vec<Comment>,
    #[summary(count = latest)]
    comments: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: u32,
    post: u32,
    at: i64,
    text: String,
}

impl From<&Comment> for Comment {
    fn from(c: &Comment) -> Self {
        c.clone()
    }
}

#[tokio::test]
async fn an_item_too_large_is_a_typed_error_and_nothing_is_written() {
    let db = test_db("subset_large").await;
    Post::collection(&db)
        .raw()
        .insert_one(Post {
            id: 1,
            latest: Vec::new(),
            comments: 0,
        })
        .await
        .unwrap();
    let posts = Post::collection(&db).subset(Post::FIELDS.latest);
    let comment = |id, mib: usize| Comment {
        id,
        post: 1,
        at: i64::from(id),
        text: "x".repeat(mib << 20),
    };

    // Over 16 MiB on its own: refused before anything is sent.
    let err = posts.push(1u32, comment(1, 17)).await.unwrap_err();
    assert!(
        matches!(err, Error::DocumentTooLarge { size: Some(s), .. } if s > 16 << 20),
        "{err:?}"
    );

    // 9 MiB fits; a second one would take the parent over 16 MiB: the transaction is aborted.
    posts.push(1u32, comment(2, 9)).await.unwrap();
    let err = posts.push(1u32, comment(3, 9)).await.unwrap_err();
    assert!(matches!(err, Error::DocumentTooLarge { .. }), "{err:?}");
    assert_eq!(
        Comment::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        1
    );
    let post = Post::collection(&db)
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(post.comments, 1);
    assert_eq!(post.latest.len(), 1);
}

#[tokio::test]
async fn removing_an_item_keeps_the_subset_and_summaries_right() {
    let db = test_db("subset_remove").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    reviews
        .push_many("prod_123", (0..12).map(review).collect())
        .await
        .unwrap();

    // r_00011 is the newest: its removal pulls r_00001 into the ten.
    reviews.remove("prod_123", "r_00011").await.unwrap();
    let p = load(&db, "prod_123").await;
    assert_eq!(ids(&p), newest(0..11, 10));
    assert_eq!(p.rating_count, 11);
    let sum: i64 = (0..11).map(|n| i64::from(review(n).stars)).sum();
    assert_eq!(p.rating_sum, sum);
    assert_eq!(p.rating_avg, Some(sum as f64 / 11.0));
    assert_eq!(full_count(&db).await, 11);

    let err = reviews.remove("prod_123", "r_00011").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn rebuild_repairs_the_parent_from_the_full_collection() {
    let db = test_db("subset_rebuild").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    reviews
        .push_many("prod_123", (0..15).map(review).collect())
        .await
        .unwrap();
    // Damage: a manual edit, and an item written outside the toolkit.
    Product::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "prod_123" },
            doc! { "$set": { "recentReviews": [], "ratingCount": 3, "ratingSum": 0 } },
        )
        .await
        .unwrap();
    Review::collection(&db)
        .raw()
        .insert_one(review(99))
        .await
        .unwrap();

    reviews.rebuild("prod_123").await.unwrap();
    let p = load(&db, "prod_123").await;
    let all = (0..15).chain([99]);
    assert_eq!(ids(&p), newest(all.clone(), 10));
    assert_eq!(p.rating_count, 16);
    let sum: i64 = all.map(|n| i64::from(review(n).stars)).sum();
    assert_eq!(p.rating_sum, sum);
    assert_eq!(p.rating_avg, Some(sum as f64 / 16.0));

    let err = reviews.rebuild("nope").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn the_full_collection_gets_its_parent_and_sort_index() {
    let db = test_db("subset_index").await;
    let report = pattern_runtime::sync(&db)
        .models(&[Product::SCHEMA])
        .await
        .unwrap();
    let entry = report
        .get("product_reviews", "subset_products_recentReviews")
        .unwrap();
    assert_eq!(entry.model, Some("Product"));
    let listed = list_indexes(&db, "product_reviews").await.unwrap();
    let index = listed
        .iter()
        .find(|i| i.get_str("name").ok() == Some("subset_products_recentReviews"))
        .unwrap();
    let key: &Document = index.get_document("key").unwrap();
    assert_eq!(key.keys().collect::<Vec<_>>(), ["productId", "createdAt"]);
    assert_eq!(key.get_i32("createdAt").ok(), Some(-1));
    assert!(pattern_runtime::sync(&db)
        .models(&[Product::SCHEMA])
        .await
        .unwrap()
        .is_in_sync());
}

#[tokio::test]
async fn without_transactions_the_full_item_is_written_first() {
    // mongod without a replica set refuses the first command of a transaction with code 20
    // (IllegalOperation: "Transaction numbers are only allowed on a replica set member or
    // mongos"). The embedded server has transactions even standalone, so the fail point answers
    // as mongod would; push must then write without a session, the review first.
    let db = test_db("subset_standalone").await;
    new_product(&db, "prod_123").await;
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    let illegal = doc! { "errorCode": 20, "errmsg": "Transaction numbers are only allowed on a replica set member or mongos" };
    for n in 0..12 {
        db.fail_command(&["update"], 1, illegal.clone()).await;
        reviews.push("prod_123", review(n)).await.unwrap();
    }
    let p = load(&db, "prod_123").await;
    assert_eq!(ids(&p), newest(0..12, 10));
    assert_eq!(p.rating_count, 12);
    assert_eq!(full_count(&db).await, 12);

    // A missing parent is still found out before anything is written.
    db.fail_command(&["update"], 1, illegal.clone()).await;
    let for_nope = Review {
        product_id: "nope".into(),
        ..review(50)
    };
    let err = reviews.push("nope", for_nope).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    assert_eq!(full_count(&db).await, 12);

    // Without a transaction, a failure between the two writes leaves the review written and the
    // product behind (here: the parent update refused once more); rebuild repairs it.
    db.fail_command(&["update"], 2, illegal).await;
    let err = reviews.push("prod_123", review(40)).await.unwrap_err();
    assert_eq!(err.code(), Some(20), "{err:?}");
    assert_eq!(full_count(&db).await, 13, "the review is not lost");
    assert_eq!(load(&db, "prod_123").await.rating_count, 12);
    reviews.rebuild("prod_123").await.unwrap();
    let p = load(&db, "prod_123").await;
    assert_eq!(ids(&p), newest((0..12).chain([40]), 10));
    assert_eq!(p.rating_count, 13);
}

#[tokio::test]
async fn a_bound_subset_reads_its_transactions_writes() {
    let db = test_db("subset_in_transaction").await;
    new_product(&db, "prod_123").await;
    let outside = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    outside.push("prod_123", review(0)).await.unwrap();
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = Product::collection(&db)
        .in_transaction(&tx)
        .subset(Product::FIELDS.recent_reviews);
    bound.push("prod_123", review(1)).await.unwrap();

    // Both reads of the bound subset see the transaction's own push...
    let page: Vec<String> = bound
        .page("prod_123", 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(page, newest(0..2, 10));
    assert_eq!(bound.count("prod_123").await.unwrap(), 2);

    // ... which the subset outside it does not see before the commit.
    assert_eq!(outside.page("prod_123", 0, 10).await.unwrap().len(), 1);
    assert_eq!(outside.count("prod_123").await.unwrap(), 1);
    tx.commit().await.unwrap();
    assert_eq!(outside.page("prod_123", 0, 10).await.unwrap().len(), 2);
    assert_eq!(outside.count("prod_123").await.unwrap(), 2);
}

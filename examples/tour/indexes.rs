//! Chapter 1: models and index specifications, synced at start-up.
//!
//! Models from the source articles: the notification system (polymorphic pattern), the product
//! with its ratings (subset and computed patterns), the health record (attribute pattern), and the
//! users, sessions and places of the indexing best practices.

// Most models here are only ever used through the registry (`sync(&db)`), never constructed.
#![allow(dead_code)]

use bson::{doc, DateTime, Document};
use pattern_runtime::{sync::list_indexes, Model, SyncOptions};
use serde::{Deserialize, Serialize};

/// `notifications`: one collection, a `type` field, newest first per type, expired after 90 days.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "indexes", collection = "notifications")]
#[index(keys(kind = 1, created_at = -1))]
pub struct Notification {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    #[serde(rename = "type")]
    pub kind: String,
    pub to: String,
    pub subject: String,
    #[index(expire_after = "90d")]
    pub created_at: DateTime,
}

/// `products`: the subset pattern's parent, with its computed rating fields.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "indexes", collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: String,
    #[index(unique, collation(locale = "zh", strength = 2))]
    pub name: String,
    pub price: f64,
    pub rating_count: i64,
    #[index(-1, partial(rating_count(gt = 0)), name = "top_rated")]
    pub rating_avg: f64,
    pub updated_at: DateTime,
}

/// `records`: the attribute pattern, one compound index over every `{name, value}` pair.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "indexes", collection = "records")]
#[index(keys(attributes.name = 1, attributes.value = 1))]
pub struct HealthRecord {
    #[serde(rename = "_id")]
    pub id: i32,
    /// At most 200 kinds of measurement per record: the application's rule, declared so the
    /// doctor does not report the array as unbounded.
    #[bounded(200)]
    pub attributes: Vec<Attribute>,
}

/// One measured attribute: `Fields` resolves the index paths `attributes.name`, `attributes.value`
/// through its serde names.
#[derive(Debug, Serialize, Deserialize, pattern_runtime::Fields)]
pub struct Attribute {
    pub name: String,
    pub value: bson::Bson,
}

/// `users`: the compound index of the best-practices article, with its explicit name.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "indexes", collection = "users")]
#[index(keys(country = 1, last_login = -1, status = 1), name = "country_lastLogin_status_idx")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: i32,
    pub country: String,
    pub last_login: DateTime,
    pub status: String,
}

/// `sessions`: removed by the server 30 days after creation.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "indexes", collection = "sessions")]
pub struct Session {
    #[serde(rename = "_id")]
    pub id: String,
    #[index(expire_after = 2_592_000, name = "session_ttl_idx")]
    pub created_at: DateTime,
}

/// `logs`: the way out of a timestamp's hot shard, a hashed `_id` shard key. A ranged key
/// on `timestamp` (`#[shard_key(timestamp)]`) would not compile: a date only grows, so every
/// insert would go to the last shard. On a sharded cluster the sync shards the collection; on
/// this server it says why it does not.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "indexes", collection = "logs")]
#[shard_key(id = "hashed")]
pub struct LogEntry {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub timestamp: DateTime,
    pub message: String,
}

/// `places`: a geospatial index. (Text indexes work the same way on mongod; the embedded server
/// has none yet, so the tour leaves them out.)
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "indexes", collection = "places")]
pub struct Place {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    pub description: String,
    #[index("2dsphere", name = "location_geo_idx")]
    pub location: Document,
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 1: models and indexes, synced at start-up");
    let db = crate::chapter_db(client, "indexes").await?;

    // The tour's chapters each use a database of their own: this one syncs the models of its
    // group, `#[model(group = "indexes", ...)]`, and nothing of the other chapters.
    let chapter: Vec<_> = pattern_runtime::sync::registered_models()
        .into_iter()
        .filter(|s| s.group() == Some("indexes"))
        .collect();
    println!("\nWhat the models declare (static data, compiled in):");
    for schema in &chapter {
        for spec in schema.indexes() {
            println!("  {:<14} {:<14} {spec}", schema.name(), schema.collection());
        }
    }

    let policy = SyncOptions::new();
    println!("\nFirst sync, on an empty database: pattern_runtime::sync(&db).group(\"indexes\")");
    let report = pattern_runtime::sync(&db)
        .group("indexes")
        .options(&policy)
        .await?;
    print!("{report}");

    for shard in &report.shards {
        println!("  (shard key of {}: {:?})", shard.collection, shard.status);
    }

    println!("\nWhat the server now has (listIndexes, read back):");
    let mut collections: Vec<&str> = chapter.iter().map(|s| s.collection()).collect();
    collections.dedup();
    for collection in collections {
        for index in list_indexes(&db, collection).await? {
            println!("  {collection:<14} {index}");
        }
    }

    println!("\nSecond sync: nothing to do.");
    let again = pattern_runtime::sync(&db)
        .group("indexes")
        .options(&policy)
        .await?;
    println!(
        "  in sync: {}, created: {}",
        again.is_in_sync(),
        again.created().count()
    );

    println!("\nSomeone adds an index by hand, and changes the TTL of another:");
    db.run_command(doc! {
        "createIndexes": "users",
        "indexes": [{ "key": { "email": 1 }, "name": "adhoc_email" }],
    })
    .await?;
    db.run_command(doc! {
        "collMod": "sessions",
        "index": { "name": "session_ttl_idx", "expireAfterSeconds": 3600 },
    })
    .await?;
    let drift = pattern_runtime::sync(&db)
        .group("indexes")
        .options(&policy)
        .await?;
    for line in drift.to_string().lines() {
        if !line.ends_with("in sync") {
            println!("  {line}");
        }
    }
    println!(
        "  (the default policy reports and never drops; adhoc_email and the TTL are untouched)"
    );

    println!("\nWith SyncOptions::new().replace_mismatched().hide_unmanaged():");
    let options = SyncOptions::new().replace_mismatched().hide_unmanaged();
    let fixed = pattern_runtime::sync(&db)
        .group("indexes")
        .options(&options)
        .await?;
    for line in fixed.to_string().lines() {
        if !line.ends_with("in sync") {
            println!("  {line}");
        }
    }
    for index in list_indexes(&db, "sessions").await? {
        println!("  sessions       {index}");
    }
    for index in list_indexes(&db, "users").await? {
        println!("  users          {index}");
    }
    // Hidden, the index serves no query: when nothing slowed down, it goes.
    db.run_command(doc! { "dropIndexes": "users", "index": "adhoc_email" })
        .await?;
    println!("  nothing slowed down with adhoc_email hidden: dropped (`dropIndexes`)");

    println!("\nTyped field names keep filters in step with serde:");
    let notifications = Notification::collection(&db);
    notifications
        .insert(&Notification {
            id: bson::oid::ObjectId::new(),
            kind: "email".into(),
            to: "user@example.com".into(),
            subject: "Welcome!".into(),
            created_at: DateTime::now(),
        })
        .await?;
    let filter = doc! { Notification::FIELDS.kind: "email", Notification::FIELDS.created_at: { "$lte": DateTime::now() } };
    println!("  filter {filter}");
    let found = notifications.count(filter).await?;
    println!("  matches {found} notification(s)");
    Ok(())
}

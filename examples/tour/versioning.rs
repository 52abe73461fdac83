//! Chapter 3: document versioning with optimistic locking.
//!
//! A wiki's `articles` + `article_revisions`: every save archives the stored version, and a
//! save from a stale copy is a conflict, never a lost update.

use bson::doc;
use pattern_runtime::query::Update;
use pattern_runtime::{At, Error, Model};
use serde::{Deserialize, Serialize};

/// `articles`, versioned; revisions in `article_revisions`, the last 20 per article kept.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "versioning", collection = "articles")]
#[versioned(history = "article_revisions", keep = 20)]
pub struct Article {
    #[serde(rename = "_id")]
    pub id: String,
    #[version]
    pub version: i64,
    pub title: String,
    pub body: String,
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 3: document versioning, optimistic locking");
    let db = crate::chapter_db(client, "versioning").await?;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await?;
    for index in pattern_runtime::sync::list_indexes(&db, "article_revisions").await? {
        println!("  article_revisions index: {index}");
    }
    let articles = Article::collection(&db);
    let mut mine = Article {
        id: "a1".into(),
        version: 0,
        title: "MongoDB 设计模式".into(),
        body: "初稿".into(),
    };
    articles.insert(&mut mine).await?;
    println!("\ninsert: version {}", mine.version);

    // Two editors load version 1.
    let mut theirs = articles.get("a1").await?.ok_or("there")?;
    mine.body = "第二稿".into();
    articles.replace(&mut mine).await?;
    println!(
        "editor A saves: version {} (version 1 archived)",
        mine.version
    );

    theirs.title = "十一种设计模式".into();
    match articles.replace(&mut theirs).await {
        Err(Error::VersionConflict {
            expected, found, ..
        }) => {
            println!("editor B saves from version {expected}: conflict, the article is at {found}");
            let mut fresh = articles.get("a1").await?.ok_or("there")?;
            fresh.title = theirs.title.clone();
            articles.replace(&mut fresh).await?;
            println!(
                "editor B reloads, re-applies the title, saves: version {}",
                fresh.version
            );
        }
        other => println!("unexpected: {other:?}"),
    }

    // An operator update names the version it read: `At(id, version)`.
    let written = articles
        .update(At("a1", 3), Update::new().set(Article::FIELDS.body, "定稿"))
        .await?;
    println!(
        "an operator update at version 3: version {}",
        written.version.unwrap_or_default()
    );

    println!("\nhistory (newest first):");
    for r in articles.history("a1").await? {
        println!(
            "  version {}: {:?} / {:?}",
            r.version, r.snapshot.title, r.snapshot.body
        );
    }

    let v = articles.revert("a1", 1).await?;
    let now = articles.get("a1").await?.ok_or("there")?;
    println!(
        "\nrevert to version 1: version {v}, {:?} / {:?}",
        now.title, now.body
    );

    articles.delete("a1").await?;
    let last = &articles.history("a1").await?[0];
    println!(
        "delete: gone from articles; its last version {} kept (deleted: {})",
        last.version, last.deleted
    );
    Ok(())
}

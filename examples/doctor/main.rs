//! The doctor on the source article's traps (001, 4.1 and 4.2): an article embedding thousands of
//! comments, a user whose log array grows every day; then the same data modelled as the article
//! advises (a subset of the latest comments with the rest in their own collection, one log
//! document per user and day with a TTL), audited again.
//!
//! ```sh
//! cargo run --example doctor                    # embedded server
//! MONGODB_URI=mongodb://... cargo run --example doctor
//! ```
//!
//! A progress bar (indicatif) follows the collections; the reports go to stdout.

use std::error::Error;

use bson::{doc, DateTime};
use indicatif::{ProgressBar, ProgressStyle};
use pattern_runtime::doctor::{doctor, DoctorOptions, DoctorReport};
use pattern_runtime::{Fields, Model, Progress, SyncOptions};
use serde::{Deserialize, Serialize};

// ----- the traps -----

/// "错误示例:过度嵌入": every comment inside the article.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "traps", collection = "articles")]
struct Article {
    #[serde(rename = "_id")]
    id: i64,
    article: String,
    comments: Vec<Comment>,
}

/// "日志数组无限增长": one user, one ever-growing array.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "traps", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    #[index]
    name: String,
    logs: Vec<String>,
}

// ----- as the article advises -----

/// The latest ten comments embedded, all of them in `comments`, and their count.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "advised", collection = "posts")]
struct Post {
    #[serde(rename = "_id")]
    id: i64,
    article: String,
    #[subset(limit = 10, sort(at = -1), full = Comment, parent = post_id)]
    recent_comments: Vec<Excerpt>,
    #[summary(count = recent_comments)]
    comment_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "advised", collection = "comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: i64,
    post_id: i64,
    author: String,
    text: String,
    at: DateTime,
}

/// What the post keeps of a comment.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
struct Excerpt {
    author: String,
    text: String,
    at: DateTime,
}

impl From<&Comment> for Excerpt {
    fn from(c: &Comment) -> Self {
        Excerpt {
            author: c.author.clone(),
            text: c.text.chars().take(40).collect(),
            at: c.at,
        }
    }
}

/// "按时间分片": one document per user and day, removed 30 days later.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "advised", collection = "user_logs")]
#[index(keys(user_id = 1, date = 1), unique)]
struct UserLogs {
    #[serde(rename = "_id")]
    id: String,
    user_id: i64,
    #[index(expire_after = "30d")]
    date: DateTime,
    #[bounded(1440)]
    logs: Vec<String>,
}

fn comment(n: i64) -> Comment {
    Comment {
        id: n,
        post_id: 1,
        author: format!("reader{}", n % 97),
        text: format!("comment {n}: {}", "很有帮助，谢谢分享。".repeat(8)),
        at: DateTime::from_millis(1_790_000_000_000 + n * 60_000),
    }
}

/// The adapter from the toolkit's [`Progress`] to an indicatif bar. Every long job reports the
/// same `Progress` (the doctor, `converge_with_progress`, `allocate_with_progress`), so this
/// one function serves them all.
fn progress_bar(bar: ProgressBar) -> impl Fn(&Progress) + Send + Sync + 'static {
    move |p| {
        if let Some(total) = p.total {
            bar.set_length(total);
        }
        bar.set_position(p.done);
        bar.set_message(format!("{} {}", p.unit, p.item.unwrap_or_default()));
    }
}

/// Audits one group with a progress bar, and prints the report.
async fn audit(db: &mongodb::Database, group: &str) -> Result<DoctorReport, Box<dyn Error>> {
    let bar = ProgressBar::new(0).with_style(ProgressStyle::with_template(
        "  {bar:30} {pos}/{len} {msg}",
    )?);
    let options = DoctorOptions::new().on_progress(progress_bar(bar.clone()));
    let report = doctor(db).group(group).options(&options).await?;
    bar.finish_and_clear();
    print!("{report}");
    Ok(report)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = pattern_testkit::client().await;
    let db = client.database("example_doctor");
    db.drop().await?;
    println!("The doctor on {}\n", pattern_testkit::server().describe());

    println!("The traps, synced and filled as the article's wrong examples:");
    pattern_runtime::sync(&db)
        .group("traps")
        .options(&SyncOptions::new())
        .await?;
    Article::collection(&db)
        .raw()
        .insert_one(Article {
            id: 1,
            article: "文章内容".into(),
            comments: (0..6000).map(comment).collect(),
        })
        .await?;
    User::collection(&db)
        .raw()
        .insert_one(User {
            id: 123,
            name: "user123".into(),
            logs: (0..3000).map(|d| format!("day {d}: logged in")).collect(),
        })
        .await?;
    let traps = audit(&db, "traps").await?;

    println!("\nAs the article advises, the same data:");
    pattern_runtime::sync(&db)
        .group("advised")
        .options(&SyncOptions::new())
        .await?;
    Post::collection(&db)
        .raw()
        .insert_one(Post {
            id: 1,
            article: "文章内容".into(),
            recent_comments: Vec::new(),
            comment_count: 0,
        })
        .await?;
    let subset = Post::collection(&db).subset(Post::FIELDS.recent_comments);
    for chunk in (0..6000).map(comment).collect::<Vec<_>>().chunks(500) {
        subset.push_many(1, chunk.to_vec()).await?;
    }
    let days: Vec<UserLogs> = (0..30)
        .map(|d| UserLogs {
            id: format!("123_{d}"),
            user_id: 123,
            date: DateTime::from_millis(DateTime::now().timestamp_millis() - d * 86_400_000),
            logs: vec![format!("day {d}: logged in")],
        })
        .collect();
    UserLogs::collection(&db).raw().insert_many(&days).await?;
    // Read the way the application would: the latest comments, a user's month of logs.
    let _ = subset.page(1, 10, 10).await?;
    let _ = UserLogs::collection(&db)
        .raw().find(doc! { UserLogs::FIELDS.user_id: 123, UserLogs::FIELDS.date: { "$gte": DateTime::from_millis(0) } })
        .await?;
    let advised = audit(&db, "advised").await?;

    println!(
        "\n{} findings on the traps, {} as advised.",
        traps.findings.len(),
        advised.findings.len()
    );
    Ok(())
}

//! Chapter 10: outlier.
//!
//! The outlier pattern: a social network keeps a user's posts in an array of the user
//! document; a celebrity has far too many. Their document carries `isOutlier: true` and
//! `postsCount`, and the rest of the posts live in overflow documents `{_id: "posts_user123_1",
//! userId: "user123", seq, posts: [...]}` that point back at the user. `User.posts` is declared
//! with `#[outlier(..)]`, with a small limit (5 embedded, 10 per overflow document) so that the
//! documents fit on a line: a normal user with 3 posts, a celebrity with 40, read back whole and
//! by page, one post removed and the count checked.
//!
//! The chapter's operations go through a second client on the same server with the driver's
//! command monitoring on, to print what each read really sent: which collections, which
//! documents.

use std::sync::{Arc, Mutex, PoisonError};

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;
use pattern_runtime::{Model, SyncOptions};
use serde::{Deserialize, Serialize};

/// A post, embedded in its user or in an overflow document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Post {
    pub n: i64,
    pub text: String,
}

/// `users`: the posts embedded up to 5, the rest in `user_posts`, 10 per document.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "outlier", collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    #[outlier(limit = 5, overflow = "user_posts", capacity = 10, flag = is_outlier, count = posts_count)]
    pub posts: Vec<Post>,
    pub is_outlier: bool,
    pub posts_count: i64,
}

const CELEBRITY_POSTS: i64 = 40;

fn user(id: &str, name: &str) -> User {
    User {
        id: id.into(),
        name: name.into(),
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
    }
}

fn post(n: i64) -> Post {
    Post {
        n,
        text: format!("post {n}"),
    }
}

/// The commands a client sent, as `name collection filter`, oldest first.
#[derive(Debug, Clone, Default)]
struct Commands(Arc<Mutex<Vec<String>>>);

impl Commands {
    /// A client on the tour's server that records its commands here.
    async fn client(&self) -> mongodb::error::Result<mongodb::Client> {
        let mut options = ClientOptions::parse(pattern_testkit::server().uri()).await?;
        let log = self.0.clone();
        options.command_event_handler = Some(EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                let line = describe(&started.command_name, &started.command);
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line);
            }
        }));
        mongodb::Client::with_options(options)
    }

    /// The commands sent since the last call.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The commands sent since the last call, on one line.
    fn line(&self) -> String {
        self.take().join("; ")
    }
}

/// `find users {"_id": "alice"}`: a command's name, collection and filter (an aggregation's
/// `$match`).
fn describe(name: &str, command: &Document) -> String {
    let target = command.get_str(name).unwrap_or_default();
    let filter = match name {
        "find" => command.get_document("filter").ok().cloned(),
        "aggregate" => command
            .get_array("pipeline")
            .ok()
            .and_then(|p| p.first())
            .and_then(Bson::as_document)
            .and_then(|stage| stage.get_document("$match").ok().cloned()),
        _ => None,
    };
    match filter {
        Some(filter) => format!("{name} {target} {filter}"),
        None => format!("{name} {target}").trim_end().to_owned(),
    }
}

async fn stored_user(db: &mongodb::Database, id: &str) -> mongodb::error::Result<Document> {
    let user = db
        .collection::<Document>("users")
        .find_one(doc! { "_id": id })
        .await?;
    Ok(user.unwrap_or_default())
}

/// The overflow documents of `id`, one line each: `_id`, `userId`, `seq`, how many posts (and
/// which), `full`.
async fn print_overflow(db: &mongodb::Database, id: &str) -> mongodb::error::Result<()> {
    let docs: Vec<Document> = db
        .collection::<Document>("user_posts")
        .find(doc! { "userId": id })
        .sort(doc! { "seq": 1 })
        .await?
        .try_collect()
        .await?;
    if docs.is_empty() {
        println!("  user_posts of {id}: none");
    }
    for d in docs {
        let posts = d.get_array("posts").map(Vec::as_slice).unwrap_or_default();
        let n = |p: Option<&Bson>| {
            p.and_then(Bson::as_document)
                .and_then(|p| p.get_i64("n").ok())
                .unwrap_or_default()
        };
        println!(
            "  {{ _id: {}, userId: {}, seq: {}, posts: {} (n {}..={}), {} }}",
            d.get("_id").unwrap_or(&Bson::Null),
            d.get("userId").unwrap_or(&Bson::Null),
            d.get("seq").unwrap_or(&Bson::Null),
            posts.len(),
            n(posts.first()),
            n(posts.last()),
            if d.get_bool("full").unwrap_or(false) {
                "full: true"
            } else {
                "no full: the open one"
            },
        );
    }
    Ok(())
}

/// Post numbers, `0 1 2 … 38 39` when there are more than `2 * ends`.
fn numbers(posts: &[Post], ends: usize) -> String {
    let n: Vec<String> = posts.iter().map(|p| p.n.to_string()).collect();
    if n.len() <= 2 * ends {
        return n.join(" ");
    }
    format!(
        "{} … {}",
        n[..ends].join(" "),
        n[n.len() - ends..].join(" ")
    )
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 10: outlier, the few documents whose array outgrows the rest");
    let name = crate::chapter_db(client, "outlier")
        .await?
        .name()
        .to_owned();
    let commands = Commands::default();
    let db = commands.client().await?.database(&name);
    pattern_runtime::sync(&db)
        .group("outlier")
        .options(&SyncOptions::new())
        .await?;
    for index in pattern_runtime::sync::list_indexes(&db, "user_posts").await? {
        if index.get_str("name")? != "_id_" {
            println!(
                "sync: user_posts index {} (unique: {}), a user's overflow documents in \
                 order",
                index.get_document("key")?,
                index.get_bool("unique").unwrap_or(false)
            );
        }
    }
    User::collection(&db)
        .insert_many(&[user("alice", "Alice"), user("user123", "Big V")])
        .await?;
    let posts = User::collection(&db).outlier(User::FIELDS.posts);
    let spec = posts.spec();
    println!(
        "User.posts: #[outlier(..)] keeps {} posts in the user, then {} per document of {}, \
         each naming its user in {}; the user's {} and {} say where the rest are",
        spec.limit(),
        spec.capacity(),
        spec.overflow(),
        spec.parent(),
        spec.flag(),
        spec.count()
    );

    // A normal user: the posts stay in her document.
    commands.take();
    for n in 0..3 {
        posts.push("alice", post(n)).await?;
    }
    let sent = commands.take();
    println!(
        "\nalice, a normal user, pushes 3 posts: {} commands, {}, one per push, $push and $inc \
         where the array has room",
        sent.len(),
        sent.first().map(String::as_str).unwrap_or("")
    );
    println!("  {}", stored_user(&db, "alice").await?);
    print_overflow(&db, "alice").await?;
    commands.take();
    let read = posts.items("alice").await?;
    println!(
        "  items(\"alice\") = posts {}, sent: {}",
        numbers(&read, 3),
        commands.line()
    );

    // A celebrity: 5 posts fill the array, the 6th crosses the limit.
    for n in 0..5 {
        posts.push("user123", post(n)).await?;
    }
    println!(
        "\nuser123, a celebrity: posts 0..=4 fill the array to its limit (isOutlier: {}).",
        stored_user(&db, "user123").await?.get_bool("isOutlier")?
    );
    commands.take();
    posts.push("user123", post(5)).await?;
    println!(
        "post 5 crosses it, sent: {}\n  (the conditional $push finds no room; findAndModify adds \
         1 to postsCount, sets isOutlier and returns the count before, 5: nothing more fits; \
         there is no open overflow document, the last one is looked up, and posts_user123_1 \
         is inserted)",
        commands.line()
    );
    posts.push("user123", post(6)).await?;
    println!(
        "post 6, an outlier's common push, sent: {}\n  (the fast-path update misses on the \
         flag; findAndModify counts the post; one conditional $push into the open overflow \
         document)",
        commands.line()
    );
    posts
        .push_many("user123", (7..CELEBRITY_POSTS).map(post).collect())
        .await?;
    println!(
        "posts 7..={} in one push_many: {} commands, the overflow documents filled and closed \
         in turn. The user, at its limit:",
        CELEBRITY_POSTS - 1,
        commands.take().len()
    );
    println!("  {}", stored_user(&db, "user123").await?);
    print_overflow(&db, "user123").await?;

    // Reading back.
    commands.take();
    let all = posts.items("user123").await?;
    println!(
        "\nitems(\"user123\"): {} posts in push order, n = {}\n  sent: {}",
        all.len(),
        numbers(&all, 4),
        commands.line()
    );
    let page = posts.page("user123", 3, 6).await?;
    println!(
        "page(\"user123\", skip 3, limit 6): n = {}, posts 3 and 4 from the user, 5..=8 from \
         posts_user123_1\n  sent: {}",
        numbers(&page, 6),
        commands.take().join("\n        ")
    );
    let page = posts.page("user123", 28, 4).await?;
    println!(
        "page(\"user123\", skip 28, limit 4): n = {}\n  sent: {}",
        numbers(&page, 4),
        commands.take().join("\n        ")
    );
    println!(
        "count(\"user123\") = {}, sent: {}",
        posts.count("user123").await?,
        commands.line()
    );

    // Removing, then checking the count and the flag against the items.
    commands.take();
    let removed = posts.remove("user123", &post(12)).await?;
    let sent = commands.take();
    let transaction = sent.iter().any(|c| c == "commitTransaction");
    println!(
        "\nremove(\"user123\", post 12) removed {removed}: $pull wherever it is, and the count \
         and flag written again ({} commands, in a transaction: {transaction})",
        sent.len()
    );
    posts.push("user123", post(CELEBRITY_POSTS)).await?;
    println!(
        "post {CELEBRITY_POSTS} pushed: posts_user123_1 has room again but stays closed (full: \
         true), so the new post goes to the open document and reads last"
    );
    print_overflow(&db, "user123").await?;
    println!("  check(\"user123\"): {:?}", posts.state("user123").await?);
    let all = posts.items("user123").await?;
    println!(
        "  items: {} posts, n = {}, post 12 among them: {}; count() = {}",
        all.len(),
        numbers(&all, 4),
        all.contains(&post(12)),
        posts.count("user123").await?
    );

    // A count changed around the toolkit: found by check, repaired by rebuild.
    db.collection::<Document>("users")
        .update_one(
            doc! { "_id": "user123" },
            doc! { "$set": { User::FIELDS.posts_count: 7, User::FIELDS.is_outlier: false } },
        )
        .await?;
    let state = posts.state("user123").await?;
    println!(
        "postsCount 7 and isOutlier false set by hand with the driver: check() consistent: {}",
        state.is_consistent()
    );
    let rebuilt = posts.rebuild("user123").await?;
    let after = posts.state("user123").await?;
    println!(
        "  rebuild(): found count {} and flag {}, {rebuilt}: wrote {} and {}; consistent: {}",
        state.stored_count,
        state.stored_flag,
        after.stored_count,
        after.stored_flag,
        after.is_consistent()
    );
    Ok(())
}

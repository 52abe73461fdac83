//! The tour: every implemented pattern, run against a real server, printing what it does.
//!
//! ```sh
//! ./dev tour                      # embedded secantus-mdb server, nothing to install by hand
//! MONGODB_URI=mongodb://... ./dev tour
//! ```
//!
//! Each chapter is a module and uses a database of its own, dropped at the start so the tour can
//! run again; its models are a group (`#[model(group = "subset", ...)]`), and the chapter syncs
//! that group in its database (`pattern_runtime::sync(&db).group(..)`), so no chapter creates another's
//! collections.
//!
//! Every operation emits `tracing` spans and events. The tour installs `tracing-subscriber`'s
//! formatter on stderr, filtered by `RUST_LOG` (silent when it is unset):
//!
//! ```sh
//! RUST_LOG=pattern_runtime=debug ./dev tour   # operations, retries, fallbacks, documents written
//! ```

mod approximation;
mod attribute;
mod bucket;
mod doctor;
mod extended_ref;
mod indexes;
mod maintainer;
mod outlier;
mod polymorphic;
mod preallocation;
mod relation;
mod schema_version;
mod subset;
mod tree;
mod versioning;

use std::error::Error;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // What an application does to see the toolkit's spans and events: any `tracing` subscriber.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let server = pattern_testkit::server();
    println!("pattern-runtime tour on {}\n", server.describe());
    let client = pattern_testkit::client().await;

    indexes::run(&client).await?;
    println!();
    subset::run(&client).await?;
    println!();
    versioning::run(&client).await?;
    println!();
    bucket::run(&client).await?;
    println!();
    extended_ref::run(&client).await?;
    println!();
    polymorphic::run(&client).await?;
    println!();
    attribute::run(&client).await?;
    println!();
    relation::run(&client).await?;
    println!();
    approximation::run(&client).await?;
    println!();
    outlier::run(&client).await?;
    println!();
    tree::run(&client).await?;
    println!();
    preallocation::run(&client).await?;
    println!();
    schema_version::run(&client).await?;
    println!();
    maintainer::run(&client).await?;
    println!();
    doctor::run(&client).await?;

    println!("\nThe tour is over.");
    Ok(())
}

/// A fresh database for a chapter, with the server-side validators of the chapter's models
/// (and of the documents their patterns keep beside them) at `strict` and `error`, other fields
/// forbidden: every write the chapter makes through the toolkit must be what its types say.
pub async fn chapter_db(
    client: &mongodb::Client,
    name: &str,
) -> Result<mongodb::Database, Box<dyn Error>> {
    let db = unvalidated_chapter_db(client, name).await?;
    let report = pattern_testkit::install_validators_of(&db, &format!("tour::{name}")).await?;
    let (none, installed): (Vec<_>, Vec<_>) = report.models.iter().partition(|s| {
        matches!(
            s.state,
            pattern_runtime::validator::ValidatorState::NotGenerated { .. }
        )
    });
    println!(
        "(validators on {} collection(s): strict, error, no other fields)",
        installed.len()
    );
    for status in none {
        println!("({status})");
    }
    println!();
    Ok(db)
}

/// A fresh database for a chapter that writes what its models do not describe on purpose
/// (documents of an older shape).
pub async fn unvalidated_chapter_db(
    client: &mongodb::Client,
    name: &str,
) -> mongodb::error::Result<mongodb::Database> {
    let db = client.database(&format!("tour_{name}"));
    db.drop().await?;
    Ok(db)
}

/// A chapter heading.
pub fn heading(title: &str) {
    println!("{title}\n{}", "=".repeat(title.chars().count()));
}

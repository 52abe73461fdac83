//! How each pattern's main operations scale with the data already stored: every operation runs at
//! three sizes spanning at least 50x (usually 200, 2 000 and 20 000 documents), and the program
//! prints how its time grows. A regression that makes an operation proportional to the
//! collection's size (a scan where an index seek was meant), or quadratic, shows as a verdict
//! other than the one expected. Nothing is asserted: timings are printed, never checked.
//!
//! ```text
//! cargo bench --ignore-rust-version -p pattern-tests --bench scaling            # every operation
//! cargo bench --ignore-rust-version -p pattern-tests --bench scaling -- outlier # names containing "outlier"
//! MONGODB_URI='mongodb://127.0.0.1:27017/?directConnection=true' cargo bench --ignore-rust-version -p pattern-tests --bench scaling
//! SCALING_SMALL=1 cargo bench --ignore-rust-version -p pattern-tests --bench scaling  # every size / 10
//! SCALING_COMMANDS=1 cargo bench --ignore-rust-version -p pattern-tests --bench scaling # and what each sent
//! ```
//!
//! Without `MONGODB_URI` the operations run against the embedded server `pattern_testkit` starts
//! in-process (sharing the machine's cores with this program); with it, against that server.
//! The first argument that does not start with `-` is a filter: only the operations whose name
//! contains it run (cargo adds `--bench` to the arguments, which is ignored). `SCALING_SMALL=1`
//! divides every size by 10, for slow servers (the goal printed under `converge` too).
//! `SCALING_COMMANDS=1` prints, under each table, the commands the last timed operation of each
//! size sent. The whole run takes three to four minutes on the embedded server on 2 cores (most
//! of it the 20 000-node tree moves and the 50 000-document `converge`), and about ten against a
//! slow server with `SCALING_SMALL=1`.
//!
//! Each operation gets a fresh database per size (`pattern_testkit::test_db_unvalidated`, dropped
//! after its size), loaded in bulk with the driver (`insert_many`, raw documents for older
//! schema versions) or with the toolkit's own bulk calls where the stored shape is the pattern's
//! (a grid's `allocate`, an outlier's `push_many`, a subset's `rebuild`). Setup is never timed.
//! Each size first runs a few operations untimed (warm-up), then times each operation on its own
//! and takes the median (20 to 30 operations, fewer for operations taking seconds: the loop
//! stops after a time budget once it has 3).
//!
//! # The tables
//!
//! One table per operation:
//!
//! | column | meaning |
//! | --- | --- |
//! | `size` | what grows, named in the table's title (documents in the collection, items already pushed, nodes in the moved subtree, distinct ids loaded) |
//! | `ops` | operations timed at that size |
//! | `cmds` | the median number of commands one operation sent (from the driver's command monitoring): a change here is a change in round trips |
//! | `median/op` | the median time of one operation |
//! | `per unit` | where an operation's work grows with the size by design (a tree move rewrites its subtree, `converge` every older document, `load` every id): the median divided by the units of work (time per document, or documents per second) |
//! | `growth` | the judged figure at this size divided by the same at the smallest size |
//!
//! The judged figure is `per unit` where the table has one, else `median/op`, so for every
//! operation it should stay flat. Under the table, the verdict compares the judged figure at the
//! largest size with the smallest: `flat` when within 2x; otherwise the exponent
//! `k = ln(growth) / ln(size ratio)` says how it grows, `sublinear` below 0.6, `linear` up to
//! 1.3 (roughly proportional to the size), `superlinear` above; `incomplete` when an operation
//! returned an error (printed as a note; the larger sizes of that operation are skipped, the
//! other operations still run). Each table also states what is
//! expected and marks a worse verdict `UNEXPECTED`. A summary of every verdict ends the run.
//!
//! The operations (their names are what the filter matches):
//!
//! - `subset_push`: `Subset::push` of one review (which enters the top 10) to a product that
//!   already has N reviews in the full collection. Expected flat.
//! - `computed_insert`: `ScOrder::collection(&db).insert` of one order of a user whose `totalSpent`
//!   and `orderCount` are computed from the orders, with N orders stored (half of them the
//!   user's). Expected flat.
//! - `outlier_push_normal`: `Outlier::push` to a normal member (10 items, under the limit of 50)
//!   among N members. Expected flat.
//! - `outlier_push_overflowing`: `Outlier::push` to one member that already has 50 items
//!   embedded and N in overflow documents of 100 (N = 20 000 is 200 overflow documents).
//!   Expected flat.
//! - `tree_move`: `Tree::move_under` of a node whose subtree holds N nodes, back and forth
//!   between two parents; judged per document rewritten (`Propagation::modified`). Expected flat
//!   per document.
//! - `versioned_save`: `ModelCollection::save` of an article with N - 1 revisions in its history,
//!   among N articles. Expected flat.
//! - `preallocated_book`: `Slots::book` of a free slot in a grid of N allocated slots. Expected
//!   flat.
//! - `converge`: `ModelCollection::converge` of N documents all in older schema versions (half
//!   version 1 without the field, half version 2), at N = 1 000, 10 000 and 50 000; judged per
//!   document, with the throughput in documents/s (the goal: at least 5 000 documents/s at 50 000
//!   on the embedded server, reported under the table). Expected flat per document.
//! - `writing_back_get`: `writing_back().get(id)` of one older document (read, upgraded and
//!   written back) in a collection of N older documents. Expected flat.
//! - `relation_load`: `Relation::load` of sources holding N distinct ids (N = 100, 1 000 and
//!   10 000, out of a collection of 20 000), with the default chunk (1 000 ids per `$in`) and
//!   with `chunk_size(10000)` (one `$in` of every id, the default before): two tables, judged
//!   per id. Expected flat per id with the default; the one-query table shows what a `$in` of
//!   10 000 ids costs on the server (superlinear on the embedded server and on secantusdb).
//! - `doctor`: `doctor(&db).models(..)` with the default options over a computed target (N / 10
//!   accounts) and its source (N invoices). Its checks sample 100 documents per collection, but
//!   the validator check counts `{$nor: [validator]}` over each whole collection, and the
//!   embedded server scans the collection for a `$sample` (both documented under "Load" in the
//!   `doctor` module): expected at worst linear.

use std::future::Future;
use std::io::Write as _;
use std::time::{Duration, Instant};

use bson::oid::ObjectId;
use bson::{doc, DateTime, Document};
use mongodb::Database;
use pattern_runtime::schema_version::{SchemaVersion, CONVERGE_BATCH};
use pattern_runtime::{DoctorOptions, Fields, Model, ModelSchema, Ref, SyncOptions};
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};

// ----- the models -----

/// The subset's parent: the 10 newest reviews embedded, a count and a sum of all of them.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_products")]
struct ScProduct {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = ScReview, parent = product_id)]
    recent_reviews: Vec<ScReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
    #[summary(sum = recent_reviews.stars)]
    rating_sum: i64,
}

/// The subset's full items.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_reviews")]
struct ScReview {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

/// A review as the product embeds it.
#[derive(Debug, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct ScReviewExcerpt {
    review_id: String,
    stars: i32,
    excerpt: String,
    created_at: DateTime,
}

impl From<&ScReview> for ScReviewExcerpt {
    fn from(r: &ScReview) -> Self {
        ScReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            excerpt: r.content.chars().take(20).collect(),
            created_at: r.created_at,
        }
    }
}

/// The computed target: a sum and a count of its orders.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_users")]
struct ScUser {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(sum = ScOrder.amount, by = user_id)]
    total_spent: i64,
    #[computed(count = ScOrder, by = user_id)]
    order_count: i64,
}

/// The computed source.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_orders")]
struct ScOrder {
    #[serde(rename = "_id")]
    id: i64,
    user_id: i64,
    amount: i64,
}

/// An outlier's item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ScPost {
    n: i64,
    text: String,
}

/// Outlier: 50 items embedded, then overflow documents of 100.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_members")]
struct ScMember {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "scaling_member_posts", capacity = 100, flag = is_outlier, count = posts_count)]
    posts: Vec<ScPost>,
    is_outlier: bool,
    posts_count: i64,
}

/// A tree keyed by name.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "scaling_nodes")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct ScNode {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

/// A versioned document, every revision kept.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "scaling_articles")]
#[versioned(history = "scaling_article_revisions")]
struct ScArticle {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
    body: String,
}

/// A grid of room-nights.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_room_days")]
#[preallocated(resource = room_id, slot = date, holder = booked_by)]
struct ScRoomDay {
    #[serde(rename = "_id")]
    id: ObjectId,
    room_id: String,
    date: DateTime,
    booked_by: Option<String>,
}

/// Schema version 1: one name (stored without the version field).
#[derive(Deserialize)]
struct ScPersonV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    email: String,
}

/// Schema version 2: first and last names.
#[derive(Deserialize)]
struct ScPersonV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    email: String,
}

/// Schema version 3, the current one.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "scaling_people")]
#[schema_version(older(ScPersonV1 = 1, ScPersonV2 = 2))]
struct ScPerson {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<3>,
    first: String,
    last: String,
    email: String,
}

impl From<ScPersonV1> for ScPersonV2 {
    fn from(p: ScPersonV1) -> Self {
        let (first, last) = p.name.split_once(' ').unwrap_or((&p.name, ""));
        ScPersonV2 {
            id: p.id,
            first: first.to_owned(),
            last: last.to_owned(),
            email: p.email,
        }
    }
}

impl From<ScPersonV2> for ScPerson {
    fn from(p: ScPersonV2) -> Self {
        ScPerson {
            id: p.id,
            v: SchemaVersion,
            first: p.first,
            last: p.last,
            email: p.email,
        }
    }
}

/// A relation's target.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "scaling_parts")]
struct ScPart {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    price: f64,
}

/// A relation's source: 10 references each (only held in memory: `load` reads the targets).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "scaling_assemblies")]
struct ScAssembly {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation]
    parts: Vec<Ref<ScPart>>,
}

/// The doctor's computed target.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_accounts")]
struct ScAccount {
    #[serde(rename = "_id")]
    id: i64,
    #[index(unique)]
    email: String,
    #[computed(count = ScInvoice, by = account_id)]
    invoice_count: i64,
}

/// The doctor's computed source.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "scaling_invoices")]
struct ScInvoice {
    #[serde(rename = "_id")]
    id: i64,
    account_id: i64,
    #[index(-1)]
    issued_at: DateTime,
    amount: i64,
}

// ----- measuring -----

/// The sizes most operations run at.
const SIZES: [u64; 3] = [200, 2_000, 20_000];
/// `converge`'s sizes (older documents).
const CONVERGE_SIZES: [u64; 3] = [1_000, 10_000, 50_000];
/// `Relation::load`'s sizes (distinct ids), and the parts stored.
const LOAD_SIZES: [u64; 3] = [100, 1_000, 10_000];
const PARTS: u64 = 20_000;
/// Untimed operations before each size's timed ones.
const WARMUP: usize = 3;
/// Operations timed per size for the quick operations.
const REPS: usize = 30;
/// Past this, a size's loop stops once it has 3 operations.
const BUDGET: Duration = Duration::from_secs(20);

struct Config {
    filter: Option<String>,
    small: bool,
    /// Print the commands of the last operation timed at each size (`SCALING_COMMANDS=1`).
    commands: bool,
}

impl Config {
    fn sizes(&self, sizes: [u64; 3]) -> [u64; 3] {
        if self.small {
            sizes.map(|n| (n / 10).max(1))
        } else {
            sizes
        }
    }
}

/// How the judged figure grows, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Flat,
    Sublinear,
    Linear,
    Superlinear,
    /// An operation failed, or fewer than two sizes ran.
    Incomplete,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Flat => "flat",
            Verdict::Sublinear => "sublinear",
            Verdict::Linear => "linear",
            Verdict::Superlinear => "superlinear",
            Verdict::Incomplete => "incomplete",
        }
    }
}

/// What the `per unit` column shows, when the work grows with the size by design.
#[derive(Clone, Copy)]
enum PerUnit {
    None,
    /// Time per unit (the label names the unit: "document rewritten").
    Time(&'static str),
    /// Units per second, judged as time per unit.
    Rate(&'static str),
}

struct Row {
    size: u64,
    ops: usize,
    median: Duration,
    /// Units of work per operation (1 without a `per unit` column).
    units: f64,
    /// The median number of commands one operation sent.
    commands: usize,
    /// The commands of the last operation timed.
    last_commands: Vec<String>,
}

impl Row {
    /// The judged figure, in seconds.
    fn judged(&self, per_unit: PerUnit) -> f64 {
        match per_unit {
            PerUnit::None => self.median.as_secs_f64(),
            PerUnit::Time(_) | PerUnit::Rate(_) => self.median.as_secs_f64() / self.units.max(1.0),
        }
    }
}

struct Table {
    name: String,
    title: String,
    size_label: &'static str,
    per_unit: PerUnit,
    expected: Verdict,
    rows: Vec<Row>,
    notes: Vec<String>,
    /// An operation failed: the verdict is `incomplete`.
    failed: bool,
}

impl Table {
    fn new(name: &str, title: &str, size_label: &'static str, expected: Verdict) -> Self {
        Table {
            name: name.to_owned(),
            title: title.to_owned(),
            size_label,
            per_unit: PerUnit::None,
            expected,
            rows: Vec::new(),
            notes: Vec::new(),
            failed: false,
        }
    }

    fn per_unit(mut self, per_unit: PerUnit) -> Self {
        self.per_unit = per_unit;
        self
    }

    /// Adds a size's row from its timings, with a note of the error that ended them. Whether
    /// the next sizes should run (false after an error).
    fn row<R>(&mut self, size: u64, timed: Timed<R>, units: f64) -> bool {
        let go_on = timed.error.is_none();
        if let Some(e) = &timed.error {
            self.notes.push(format!(
                "{}: FAILED after {} timed operations, larger sizes skipped: {e}",
                thousands(size),
                timed.times.len()
            ));
            self.failed = true;
        }
        if timed.times.is_empty() {
            return go_on;
        }
        // Progress on stderr: the table is printed once every size has run.
        eprintln!(
            "  {} at {}: median {} over {} operations",
            self.name,
            thousands(size),
            show(median(timed.times.clone())),
            timed.times.len()
        );
        let mut counts: Vec<usize> = timed.commands.iter().map(Vec::len).collect();
        counts.sort_unstable();
        self.rows.push(Row {
            size,
            ops: timed.times.len(),
            median: median(timed.times),
            units,
            commands: counts.get(counts.len() / 2).copied().unwrap_or(0),
            last_commands: timed.commands.last().cloned().unwrap_or_default(),
        });
        go_on
    }

    /// The verdict, the growth of the judged figure and its exponent, from the smallest size to
    /// the largest.
    fn verdict(&self) -> (Verdict, f64, f64) {
        let (Some(first), Some(last)) = (self.rows.first(), self.rows.last()) else {
            return (Verdict::Incomplete, 1.0, 0.0);
        };
        let growth = last.judged(self.per_unit) / first.judged(self.per_unit).max(1e-12);
        let ratio = last.size as f64 / first.size.max(1) as f64;
        let exponent = if ratio > 1.0 && growth > 0.0 {
            growth.ln() / ratio.ln()
        } else {
            0.0
        };
        let verdict = if self.failed || self.rows.len() < 2 {
            Verdict::Incomplete
        } else if growth <= 2.0 {
            Verdict::Flat
        } else if exponent < 0.6 {
            Verdict::Sublinear
        } else if exponent <= 1.3 {
            Verdict::Linear
        } else {
            Verdict::Superlinear
        };
        (verdict, growth, exponent)
    }

    fn print(&self, show_commands: bool) {
        let mut out = String::new();
        out.push_str(&format!("\n## {}: {}\n", self.name, self.title));
        let unit_header = match self.per_unit {
            PerUnit::None => String::new(),
            PerUnit::Time(unit) => format!("  {:>22}", format!("per {unit}")),
            PerUnit::Rate(unit) => format!("  {:>22}", format!("{unit}/s")),
        };
        out.push_str(&format!(
            "{:>10}  {:>4}  {:>5}  {:>11}{}  {:>8}\n",
            self.size_label, "ops", "cmds", "median/op", unit_header, "growth"
        ));
        let base = self.rows.first().map(|r| r.judged(self.per_unit));
        for r in &self.rows {
            let unit = match self.per_unit {
                PerUnit::None => String::new(),
                PerUnit::Time(_) => format!(
                    "  {:>22}",
                    show(Duration::from_secs_f64(r.judged(self.per_unit)))
                ),
                PerUnit::Rate(_) => {
                    format!("  {:>22.0}", 1.0 / r.judged(self.per_unit).max(1e-12))
                }
            };
            let growth = base.map_or(1.0, |b| r.judged(self.per_unit) / b.max(1e-12));
            out.push_str(&format!(
                "{:>10}  {:>4}  {:>5}  {:>11}{}  {:>7.2}x\n",
                thousands(r.size),
                r.ops,
                r.commands,
                show(r.median),
                unit,
                growth
            ));
        }
        let (verdict, growth, exponent) = self.verdict();
        let ratio = match (self.rows.first(), self.rows.last()) {
            (Some(a), Some(b)) => b.size as f64 / a.size.max(1) as f64,
            _ => 1.0,
        };
        let judged = match self.per_unit {
            PerUnit::None => "time per op",
            PerUnit::Time(_) | PerUnit::Rate(_) => "time per unit",
        };
        out.push_str(&format!(
            "verdict: {} ({judged} x{growth:.2} for x{ratio:.0} the size, exponent {exponent:.2}; expected {}){}\n",
            verdict.word(),
            self.expected.word(),
            if verdict > self.expected {
                "  <-- UNEXPECTED"
            } else {
                ""
            }
        ));
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        if show_commands {
            for r in &self.rows {
                out.push_str(&format!(
                    "commands at {}: {}\n",
                    thousands(r.size),
                    r.last_commands.join(", ")
                ));
            }
        }
        print!("{out}");
        let _ = std::io::stdout().flush();
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    match times.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => times[n / 2],
        n => (times[n / 2 - 1] + times[n / 2]) / 2,
    }
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// What [`time_ops`] measured.
struct Timed<R> {
    times: Vec<Duration>,
    /// What each timed operation returned.
    results: Vec<R>,
    /// The commands each timed operation sent (name and collection).
    commands: Vec<Vec<String>>,
    /// The error that ended the loop, if one did.
    error: Option<String>,
}

/// Runs `op(0..WARMUP)` untimed (or fewer, once a tenth of `BUDGET` has passed), then times
/// `op(WARMUP..)` one by one, `reps` of them or fewer once `BUDGET` has passed with 3 timed.
/// Each call gets a different index. `db`'s command log says what each timed operation sent. An
/// error ends the loop: it is kept in [`Timed::error`], with what was timed before it.
async fn time_ops<F, Fut, R>(db: &TestDb, reps: usize, mut op: F) -> Timed<R>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = pattern_runtime::Result<R>>,
{
    let mut timed = Timed {
        times: Vec::with_capacity(reps),
        results: Vec::with_capacity(reps),
        commands: Vec::with_capacity(reps),
        error: None,
    };
    // One warm-up operation when it takes over a tenth of the budget (large tree moves).
    let warming = Instant::now();
    for i in 0..WARMUP {
        if let Err(e) = op(i).await {
            timed.error = Some(format!("warm-up operation {i}: {e}"));
            return timed;
        }
        if warming.elapsed() > BUDGET / 10 {
            break;
        }
    }
    let started = Instant::now();
    for i in 0..reps {
        db.take_commands();
        let t = Instant::now();
        let r = match op(WARMUP + i).await {
            Ok(r) => r,
            Err(e) => {
                timed.error = Some(format!("operation {}: {e}", WARMUP + i));
                break;
            }
        };
        timed.times.push(t.elapsed());
        timed.results.push(r);
        timed.commands.push(
            db.take_commands()
                .into_iter()
                .map(|c| {
                    if c.target.is_empty() {
                        c.name
                    } else {
                        format!("{} {}", c.name, c.target)
                    }
                })
                .collect(),
        );
        if timed.times.len() >= 3 && started.elapsed() > BUDGET {
            break;
        }
    }
    timed
}

/// A fresh database for one operation at one size.
async fn fresh(op: &str, size: u64, models: &[&'static ModelSchema]) -> TestDb {
    let db = pattern_testkit::test_db_unvalidated(&format!("scaling_{op}_{size}")).await;
    pattern_runtime::sync(&db)
        .models(models)
        .options(&SyncOptions::new())
        .await
        .expect("index sync");
    db
}

/// Drops a size's database (the embedded server keeps every database until the process ends).
async fn done(db: TestDb) {
    db.take_commands();
    let _ = db.db().drop().await;
}

/// The time of each batch from the instants a progress callback saw, starting at `start`.
fn batch_durations(start: Instant, ends: &[Instant]) -> Vec<Duration> {
    let mut previous = start;
    ends.iter()
        .map(|&end| {
            let d = end - previous;
            previous = end;
            d
        })
        .collect()
}

/// Inserts `docs` in batches of 10 000.
async fn insert_all<T: Serialize + Send + Sync>(coll: &mongodb::Collection<T>, docs: Vec<T>) {
    let mut docs = docs;
    while !docs.is_empty() {
        let rest = docs.split_off(docs.len().min(10_000));
        coll.insert_many(&docs).await.expect("insert_many");
        docs = rest;
    }
}

/// A spread of distinct indexes below `n` (7 919 is a prime, so it steps through every one
/// before repeating when `n` is not a multiple of it).
fn spread(i: usize, n: u64) -> u64 {
    (i as u64 * 7_919) % n.max(1)
}

/// How many operations to time when each needs a distinct one of `n` entities.
fn reps_within(n: u64) -> usize {
    REPS.min((n as usize).saturating_sub(WARMUP)).max(1)
}

// ----- the operations -----

fn review(n: u64, at_ms: i64) -> ScReview {
    ScReview {
        id: format!("r{n}"),
        product_id: "p".into(),
        stars: (n % 5) as i32 + 1,
        content: format!("review {n}: sturdy, well made, would buy again"),
        created_at: DateTime::from_millis(at_ms),
    }
}

async fn subset_push(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "subset_push",
        "Subset::push of one review to a product with N reviews stored",
        "reviews",
        Verdict::Flat,
    );
    const T0: i64 = 1_700_000_000_000;
    for n in cfg.sizes(SIZES) {
        let db = fresh("subset_push", n, &[ScProduct::SCHEMA, ScReview::SCHEMA]).await;
        let reviews: Vec<ScReview> = (0..n).map(|i| review(i, T0 + i as i64 * 1000)).collect();
        insert_all(ScReview::collection(&db).raw(), reviews).await;
        ScProduct::collection(&db)
            .raw()
            .insert_one(ScProduct {
                id: "p".into(),
                recent_reviews: vec![],
                rating_count: 0,
                rating_sum: 0,
            })
            .await
            .expect("the product");
        let subset = ScProduct::collection(&db).subset(ScProduct::FIELDS.recent_reviews);
        subset.rebuild("p").await.expect("rebuild");
        let subset = &subset;
        let timed = time_ops(&db, REPS, |i| async move {
            // Newer than every stored review: it enters the embedded top 10.
            let r = review(n + i as u64, T0 + (n as i64 + i as i64) * 1000);
            subset.push("p", r).await
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

async fn computed_insert(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "computed_insert",
        "ScOrder::collection(..).insert of one order (user's sum and count kept), N orders stored",
        "orders",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("computed_insert", n, &[ScUser::SCHEMA, ScOrder::SCHEMA]).await;
        let users = (n / 10).max(1) as i64;
        let orders: Vec<ScOrder> = (0..n as i64)
            .map(|i| ScOrder {
                id: i,
                // Half the orders are user 0's, the one inserted for.
                user_id: if i % 2 == 0 { 0 } else { i % users },
                amount: 100 + i % 50,
            })
            .collect();
        let mut totals = vec![(0_i64, 0_i64); users as usize];
        for o in &orders {
            let t = &mut totals[o.user_id as usize];
            t.0 += o.amount;
            t.1 += 1;
        }
        let user_docs: Vec<ScUser> = totals
            .iter()
            .enumerate()
            .map(|(id, (sum, count))| ScUser {
                id: id as i64,
                total_spent: *sum,
                order_count: *count,
            })
            .collect();
        insert_all(ScUser::collection(&db).raw(), user_docs).await;
        insert_all(ScOrder::collection(&db).raw(), orders).await;
        let computing = ScOrder::collection(&db);
        let computing = &computing;
        let timed = time_ops(&db, REPS, |i| async move {
            let order = ScOrder {
                id: n as i64 + i as i64,
                user_id: 0,
                amount: 100,
            };
            computing.insert(&order).await
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

fn post(n: i64) -> ScPost {
    ScPost {
        n,
        text: format!("post {n}: today's photos, thanks everyone"),
    }
}

async fn outlier_push_normal(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "outlier_push_normal",
        "Outlier::push to a member with 10 items (limit 50), among N members",
        "members",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("outlier_push_normal", n, &[ScMember::SCHEMA]).await;
        let members: Vec<ScMember> = (0..n)
            .map(|i| ScMember {
                id: format!("m{i}"),
                posts: (0..10).map(post).collect(),
                is_outlier: false,
                posts_count: 10,
            })
            .collect();
        insert_all(ScMember::collection(&db).raw(), members).await;
        let outlier = ScMember::collection(&db).outlier(ScMember::FIELDS.posts);
        let outlier = &outlier;
        let timed = time_ops(&db, REPS, |i| async move {
            let id = format!("m{}", spread(i, n));
            outlier.push(id.as_str(), post(100 + i as i64)).await
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

async fn outlier_push_overflowing(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "outlier_push_overflowing",
        "Outlier::push to a member that already has 50 items embedded and N in overflow \
         documents of 100",
        "overflow",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("outlier_push_overflowing", n, &[ScMember::SCHEMA]).await;
        ScMember::collection(&db)
            .raw()
            .insert_one(ScMember {
                id: "big".into(),
                posts: vec![],
                is_outlier: false,
                posts_count: 0,
            })
            .await
            .expect("the member");
        let outlier = ScMember::collection(&db).outlier(ScMember::FIELDS.posts);
        let total = 50 + n as i64;
        let mut pushed = 0_i64;
        while pushed < total {
            let end = (pushed + 1_000).min(total);
            outlier
                .push_many("big", (pushed..end).map(post).collect())
                .await
                .expect("push_many");
            pushed = end;
        }
        let state = outlier.state("big").await.expect("state");
        table.notes.push(format!(
            "{} overflow items: {} overflow documents before the timed pushes",
            thousands(n),
            state.overflow_documents
        ));
        let outlier = &outlier;
        let timed = time_ops(&db, REPS, |i| async move {
            outlier.push("big", post(total + i as i64)).await
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

fn node(name: String, parent: Option<String>, ancestors: Vec<String>) -> ScNode {
    ScNode {
        id: ObjectId::new(),
        name,
        parent,
        ancestors,
    }
}

async fn tree_move(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "tree_move",
        "Tree::move_under of a node whose subtree holds N nodes (3 children each), between two \
         parents",
        "subtree",
        Verdict::Flat,
    )
    .per_unit(PerUnit::Time("document rewritten"));
    for n in cfg.sizes(SIZES) {
        let db = fresh("tree_move", n, &[ScNode::SCHEMA]).await;
        // Roots `A` and `B`; `n0` under `A`, the subtree's root; `n{i}` under `n{(i - 1) / 3}`.
        let mut nodes = vec![
            node("A".into(), None, vec![]),
            node("B".into(), None, vec![]),
        ];
        let mut ancestors: Vec<Vec<String>> = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let (parent, path) = if i == 0 {
                ("A".to_owned(), vec!["A".to_owned()])
            } else {
                let p = (i - 1) / 3;
                let mut path = ancestors[p].clone();
                path.push(format!("n{p}"));
                (format!("n{p}"), path)
            };
            ancestors.push(path.clone());
            nodes.push(node(format!("n{i}"), Some(parent), path));
        }
        drop(ancestors);
        insert_all(ScNode::collection(&db).raw(), nodes).await;
        let tree = ScNode::collection(&db).tree();
        let tree = &tree;
        let timed = time_ops(&db, REPS, |i| async move {
            let to = if i.is_multiple_of(2) { "B" } else { "A" };
            tree.move_under("n0", to)
                .await
                .map(|moved| moved.modified())
        })
        .await;
        let units = timed.results.iter().sum::<u64>() as f64 / timed.results.len().max(1) as f64;
        if !timed.results.is_empty() {
            table.notes.push(format!(
                "{} nodes: {units:.0} documents rewritten per move",
                thousands(n)
            ));
        }
        let go_on = table.row(n, timed, units);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

async fn versioned_save(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "versioned_save",
        "ModelCollection::save of an article with N - 1 revisions, among N articles",
        "articles",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("versioned_save", n, &[ScArticle::SCHEMA]).await;
        let body = "lorem ipsum dolor sit amet ".repeat(20);
        let articles: Vec<ScArticle> = (0..n as i64)
            .map(|id| ScArticle {
                id,
                version: if id == 0 { n as i64 } else { 1 },
                title: format!("article {id}"),
                body: body.clone(),
            })
            .collect();
        insert_all(ScArticle::collection(&db).raw(), articles).await;
        let revisions: Vec<Document> = (1..n as i64)
            .map(|v| {
                doc! {
                    "docId": 0_i64,
                    "version": v,
                    "snapshot": { "_id": 0_i64, "version": v, "title": format!("article 0 v{v}"), "body": body.as_str() },
                    "archivedAt": DateTime::now(),
                }
            })
            .collect();
        insert_all(
            &db.collection::<Document>("scaling_article_revisions"),
            revisions,
        )
        .await;
        let handle = ScArticle::collection(&db);
        let article = handle.get(0_i64).await.expect("get").expect("article 0");
        // The version held: each save goes on from the one before.
        let held = std::cell::Cell::new(article.version);
        let (handle, article, held) = (&handle, &article, &held);
        let timed = time_ops(&db, REPS, |i| async move {
            let mut a = article.clone();
            a.version = held.get();
            a.title = format!("article 0, edit {i}");
            handle.replace(&mut a).await?;
            held.set(a.version);
            Ok(())
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

const DAY_MS: i64 = 24 * 3600 * 1000;
const AUG_20: i64 = 1_755_648_000_000;

/// Slot `k` of a grid of 100 rooms.
fn slot(k: u64) -> (String, DateTime) {
    (
        format!("room{}", k % 100),
        DateTime::from_millis(AUG_20 + (k / 100) as i64 * DAY_MS),
    )
}

async fn preallocated_book(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "preallocated_book",
        "Slots::book of a free slot in a grid of N allocated slots",
        "slots",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("preallocated_book", n, &[ScRoomDay::SCHEMA]).await;
        let slots = ScRoomDay::collection(&db).slots();
        slots
            .allocate((0..n).map(|k| {
                let (room_id, date) = slot(k);
                ScRoomDay {
                    id: ObjectId::new(),
                    room_id,
                    date,
                    booked_by: None,
                }
            }))
            .await
            .expect("allocate");
        let slots = &slots;
        let timed = time_ops(&db, reps_within(n), |i| async move {
            let (room, date) = slot(spread(i, n));
            slots.book(room, date, "guest").await.map(drop)
        })
        .await;
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

/// Person `i` in an older version: 1 (no version field) for even `i`, 2 for odd.
fn older_person(i: i64) -> Document {
    let email = format!("p{i}@example.com");
    if i % 2 == 0 {
        doc! { "_id": i, "name": format!("First{i} Last{i}"), "email": email }
    } else {
        doc! { "_id": i, "v": 2, "first": format!("First{i}"), "last": format!("Last{i}"), "email": email }
    }
}

async fn insert_older_people(db: &Database, n: u64) {
    let docs: Vec<Document> = (0..n as i64).map(older_person).collect();
    insert_all(&db.collection::<Document>("scaling_people"), docs).await;
}

async fn converge(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "converge",
        "ModelCollection::converge of N documents stored in older schema versions",
        "older",
        Verdict::Flat,
    )
    .per_unit(PerUnit::Rate("documents"));
    let sizes = cfg.sizes(CONVERGE_SIZES);
    for n in sizes {
        let db = fresh("converge", n, &[ScPerson::SCHEMA]).await;
        let people = ScPerson::collection(&db);
        // Each run needs older documents again: not timed. Fewer runs for the largest.
        let runs = if n >= 20_000 { 2 } else { 3 };
        let mut timed = Timed {
            times: Vec::new(),
            results: Vec::new(),
            commands: Vec::new(),
            error: None,
        };
        let mut batch_times = Vec::new();
        for _ in 0..runs {
            people.raw().drop().await.expect("drop");
            insert_older_people(&db, n).await;
            db.take_commands();
            let mut batches: Vec<Instant> = Vec::new();
            let t = Instant::now();
            let converged = match people
                .converge_with_progress(|_| batches.push(Instant::now()))
                .await
            {
                Ok(c) => c,
                Err(e) => {
                    timed.error = Some(format!("converge: {e}"));
                    break;
                }
            };
            timed.times.push(t.elapsed());
            batch_times = batch_durations(t, &batches);
            timed
                .commands
                .push(db.take_commands().into_iter().map(|c| c.name).collect());
            timed.results.push(converged.upgraded);
            if converged.upgraded != n {
                table.notes.push(format!(
                    "{}: converge upgraded {} documents, not {n}",
                    thousands(n),
                    converged.upgraded
                ));
            }
        }
        let go_on = table.row(n, timed, n as f64);
        // The batches of the last run: a batch taking longer as the run goes on is work that
        // grows with the documents already converged.
        let tenth = (batch_times.len() / 10).max(1);
        let mean = |d: &[Duration]| d.iter().sum::<Duration>() / d.len().max(1) as u32;
        if batch_times.len() >= 2 {
            table.notes.push(format!(
                "{}: {} batches of {CONVERGE_BATCH}; the first {tenth} took {} each, the last \
                 {tenth} {} each",
                thousands(n),
                batch_times.len(),
                show(mean(&batch_times[..tenth])),
                show(mean(&batch_times[batch_times.len() - tenth..])),
            ));
        }
        done(db).await;
        if !go_on {
            break;
        }
    }
    if let Some(last) = table.rows.last() {
        let rate = last.units / last.median.as_secs_f64().max(1e-12);
        let goal = if cfg.small { 500.0 } else { 5_000.0 };
        table.notes.push(format!(
            "{:.0} documents/s at {} (the goal, on the embedded server: at least {goal:.0}{}): {}",
            rate,
            thousands(last.size),
            if cfg.small {
                ", scaled down with the sizes"
            } else {
                ""
            },
            if rate >= goal { "met" } else { "NOT met" }
        ));
    }
    vec![table]
}

async fn writing_back_get(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "writing_back_get",
        "writing_back().get(id) of one older document (read, upgraded, written back), N older \
         documents stored",
        "older",
        Verdict::Flat,
    );
    for n in cfg.sizes(SIZES) {
        let db = fresh("writing_back_get", n, &[ScPerson::SCHEMA]).await;
        insert_older_people(&db, n).await;
        let lazy = ScPerson::collection(&db).writing_back();
        let lazy = &lazy;
        let timed = time_ops(&db, reps_within(n), |i| async move {
            let id = spread(i, n) as i64;
            let person = lazy.get(id).await?;
            Ok(person.is_some_and(|p| p.id == id))
        })
        .await;
        if !timed.results.iter().all(|f| *f) {
            table
                .notes
                .push(format!("{}: a get did not return its person", thousands(n)));
        }
        let left = ScPerson::collection(&db)
            .schema_versions()
            .await
            .expect("schema_versions")
            .older();
        table.notes.push(format!(
            "{}: {} older documents left after the gets (each get writes back its document)",
            thousands(n),
            thousands(left)
        ));
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

async fn relation_load(cfg: &Config) -> Vec<Table> {
    let parts_stored = if cfg.small { PARTS / 10 } else { PARTS };
    let title = format!(
        "Relation::load of sources (10 references each) naming N distinct ids, of {} parts stored",
        thousands(parts_stored)
    );
    let mut default_chunk =
        Table::new("relation_load", &title, "ids", Verdict::Flat).per_unit(PerUnit::Time("id"));
    // What the default was before (one `$in` of every id up to 10 000), for comparison: on
    // these servers a `$in` grows faster than its ids.
    let mut chunked = Table::new(
        "relation_load_one_query",
        &format!("{title}, chunk_size(10000)"),
        "ids",
        Verdict::Linear,
    )
    .per_unit(PerUnit::Time("id"));
    let db = fresh("relation_load", parts_stored, &[ScPart::SCHEMA]).await;
    let parts: Vec<ScPart> = (0..parts_stored)
        .map(|n| ScPart {
            id: ObjectId::new(),
            partno: format!("{:03}-aff-{:03}", n % 1_000, n * 37 % 1_000),
            name: format!("#{} grommet", n % 12),
            price: 1.99 + (n % 40) as f64 * 0.1,
        })
        .collect();
    let ids: Vec<ObjectId> = parts.iter().map(|p| p.id).collect();
    insert_all(ScPart::collection(&db).raw(), parts).await;
    let mut failed = false;
    for n in cfg.sizes(LOAD_SIZES) {
        // N distinct parts, scattered over the collection, 10 per source.
        let chosen: Vec<ObjectId> = (0..n as usize)
            .map(|i| ids[spread(i, parts_stored) as usize])
            .collect();
        let sources: Vec<ScAssembly> = chosen
            .chunks(10)
            .map(|c| ScAssembly {
                id: ObjectId::new(),
                parts: c.iter().map(|id| Ref::new(*id)).collect(),
            })
            .collect();
        for (table, relation) in [
            (
                &mut default_chunk,
                ScAssembly::collection(&db).relation(ScAssembly::FIELDS.parts),
            ),
            (
                &mut chunked,
                ScAssembly::collection(&db)
                    .relation(ScAssembly::FIELDS.parts)
                    .chunk_size(10_000),
            ),
        ] {
            let (relation, sources) = (&relation, &sources);
            let timed = time_ops(&db, REPS, |_| async move {
                let loaded = relation.load(sources).await?;
                let complete = loaded.targets().len() == n as usize && loaded.dangling().is_empty();
                Ok((loaded.queries(), complete))
            })
            .await;
            let (queries, complete) = timed.results.last().copied().unwrap_or((0, false));
            if !complete {
                table
                    .notes
                    .push(format!("{} ids: NOT every part loaded", thousands(n)));
            }
            table
                .notes
                .push(format!("{} ids: {queries} find per load", thousands(n)));
            if !table.row(n, timed, n as f64) {
                failed = true;
            }
        }
        if failed {
            break;
        }
    }
    done(db).await;
    vec![default_chunk, chunked]
}

async fn doctor(cfg: &Config) -> Vec<Table> {
    let mut table = Table::new(
        "doctor",
        "doctor(..).models(..) (default options) over a computed target (N / 10 accounts) and its source \
         (N invoices)",
        "invoices",
        Verdict::Linear,
    );
    let models = [ScAccount::SCHEMA, ScInvoice::SCHEMA];
    for n in cfg.sizes(SIZES) {
        let db = fresh("doctor", n, &models).await;
        let accounts = (n / 10).max(1) as i64;
        let invoices: Vec<ScInvoice> = (0..n as i64)
            .map(|i| ScInvoice {
                id: i,
                account_id: i % accounts,
                issued_at: DateTime::from_millis(AUG_20 + i * 60_000),
                amount: 100 + i % 70,
            })
            .collect();
        let mut counts = vec![0_i64; accounts as usize];
        for invoice in &invoices {
            counts[invoice.account_id as usize] += 1;
        }
        let account_docs: Vec<ScAccount> = counts
            .iter()
            .enumerate()
            .map(|(id, count)| ScAccount {
                id: id as i64,
                email: format!("a{id}@example.com"),
                invoice_count: *count,
            })
            .collect();
        insert_all(ScAccount::collection(&db).raw(), account_docs).await;
        insert_all(ScInvoice::collection(&db).raw(), invoices).await;
        let (db_ref, models) = (db.db(), &models);
        let timed = time_ops(&db, 20, |_| async move {
            let report = pattern_runtime::doctor(db_ref)
                .models(models)
                .options(&DoctorOptions::default())
                .await?;
            Ok(format!(
                "{} findings, {} checks skipped, sampled {:?}",
                report.findings.len(),
                report.skipped.len(),
                report.sampled
            ))
        })
        .await;
        let summary = timed.results.last().cloned().unwrap_or_default();
        table.notes.push(format!("{}: {summary}", thousands(n)));
        let go_on = table.row(n, timed, 1.0);
        done(db).await;
        if !go_on {
            break;
        }
    }
    vec![table]
}

// ----- the program -----

type Run = for<'a> fn(&'a Config) -> std::pin::Pin<Box<dyn Future<Output = Vec<Table>> + 'a>>;

/// Every operation, by the name the filter matches (a table's name starts with it).
const OPERATIONS: [(&str, Run); 11] = [
    ("subset_push", |c| Box::pin(subset_push(c))),
    ("computed_insert", |c| Box::pin(computed_insert(c))),
    ("outlier_push_normal", |c| Box::pin(outlier_push_normal(c))),
    ("outlier_push_overflowing", |c| {
        Box::pin(outlier_push_overflowing(c))
    }),
    ("tree_move", |c| Box::pin(tree_move(c))),
    ("versioned_save", |c| Box::pin(versioned_save(c))),
    ("preallocated_book", |c| Box::pin(preallocated_book(c))),
    ("converge", |c| Box::pin(converge(c))),
    ("writing_back_get", |c| Box::pin(writing_back_get(c))),
    ("relation_load", |c| Box::pin(relation_load(c))),
    ("doctor", |c| Box::pin(doctor(c))),
];

#[tokio::main]
async fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let on = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
    let cfg = Config {
        filter,
        small: on("SCALING_SMALL"),
        commands: on("SCALING_COMMANDS"),
    };
    println!(
        "# Scaling of the patterns' operations on {}{}{}",
        pattern_testkit::server().describe(),
        if cfg.small {
            " (SCALING_SMALL: every size / 10)"
        } else {
            ""
        },
        cfg.filter
            .as_deref()
            .map(|f| format!(", operations matching `{f}`"))
            .unwrap_or_default()
    );
    let started = Instant::now();
    let mut summary: Vec<(String, Verdict, Verdict, f64)> = Vec::new();
    for (name, run) in OPERATIONS {
        if cfg.filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let op_started = Instant::now();
        let tables = run(&cfg).await;
        for table in &tables {
            table.print(cfg.commands);
            let (verdict, growth, _) = table.verdict();
            summary.push((table.name.clone(), verdict, table.expected, growth));
        }
        println!(
            "({name}: {:.1} s with setup)",
            op_started.elapsed().as_secs_f64()
        );
    }
    println!("\n## Summary ({:.0} s)", started.elapsed().as_secs_f64());
    for (name, verdict, expected, growth) in &summary {
        println!(
            "{name:<26} {:<12} x{growth:<8.2} expected {}{}",
            verdict.word(),
            expected.word(),
            if verdict > expected {
                "  <-- UNEXPECTED"
            } else {
                ""
            }
        );
    }
    if summary.is_empty() {
        println!("no operation matches the filter");
    }
}

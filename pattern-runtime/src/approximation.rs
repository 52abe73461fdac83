//! The approximation pattern's counters: three ways to avoid one write per event on a hot
//! counter (a page's views, a product's likes).
//!
//! | counter | writes | the stored value |
//! | --- | --- | --- |
//! | [`BatchedCounter`] | one `$inc` per `threshold` events of a key (and at [`flush`](BatchedCounter::flush)) | exact once flushed; what is counted but not yet flushed is lost if the process dies |
//! | [`SampledCounter`] | one `$inc` of `1/p` with probability `p` per event | an estimate: relative standard error `sqrt((1 - p) / (n p))` after `n` events |
//! | [`ShardedCounter`] | one upsert per event, spread over `shards` documents | exact; the read sums the shards in one query |
//!
//! Each is a standalone handle on a collection of your choice, or the handle of a model's
//! integer field declared with `#[approximate(..)]`. A standalone handle validates its settings
//! when it is made (a zero threshold, a probability outside `(0, 1]`, zero shards or a field name
//! that is not a plain key are typed errors before anything is written); a declared one is
//! checked at compile time, its field an integer and its settings in range.
//!
//! ```
//! use pattern_runtime::approximation::{BatchedCounter, SampledCounter, ShardedCounter};
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let pages = db.collection::<bson::Document>("pages");
//! // One `$inc` per 100 views of a page; `flush` before the program ends.
//! let views = BatchedCounter::new(pages.clone(), "views", 100)?;
//! views.add("home", 1).await?;
//! views.flush().await?;
//! // One write per 100 likes on average, each adding 100.
//! let likes = SampledCounter::new(pages.clone(), "likes", 0.01)?;
//! likes.add("home").await?;
//! // 16 shard documents for one hot counter; the read is exact.
//! let hits = ShardedCounter::new(db.collection("counters"), "hits", 16)?;
//! hits.add(1).await?;
//! assert_eq!(hits.read().await?, 1);
//! # Ok(()) }
//! ```
//!
//! # On a model's fields
//!
//! | form | generates | the field |
//! | --- | --- | --- |
//! | `#[approximate(batched, threshold = 100)]` | `Page::views_counter(&db) -> BatchedCounter` | written by `$inc` of the pending count |
//! | `#[approximate(sampled, p = 0.01)]` | `Page::likes_counter(&db) -> SampledCounter` | written by `$inc` of `1/p` (an integer: see [`SampledCounter`]) |
//! | `#[approximate(sharded, shards = 16)]` | `Page::hits_counter(&db, id) -> ShardedField` | a snapshot of the shards' exact total, by [`ShardedField::snapshot`]; the shards are documents `{_id: {of: id, shard: k}, count}` of `pages.hits` (`collection = ".."` to choose) |
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use pattern_runtime::approximation::BatchedCounter;
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! struct Page {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[approximate(batched, threshold = 100)]
//!     views: i64,
//!     #[approximate(sharded, shards = 16)]
//!     hits: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! // Flushed every second and once more at shutdown: no counted view is lost on a normal exit.
//! let views = Arc::new(Page::views_counter(&db));
//! let flusher = BatchedCounter::flush_every(views.clone(), Duration::from_secs(1));
//! views.add("home", 1).await?;
//! flusher.stop().await?;
//!
//! let hits = Page::hits_counter(&db, "home");
//! hits.add(1).await?;
//! let exact = hits.snapshot().await?; // also stored in the page's `hits`
//! # Ok(()) }
//! ```
//!
//! # In the caller's transaction
//!
//! [`SampledCounter::in_transaction`], [`ShardedCounter::in_transaction`] and
//! [`ShardedField::in_transaction`] bind a counter to the caller's
//! [`Transaction`](crate::Transaction): its writes are kept or dropped with it. A
//! [`BatchedCounter`] has no such form: one of its writes carries the events of every caller
//! since the last flush, so no single caller's transaction can own it.
//!
//! The counted fields are not watched by the [map of derived data](mod@crate::derived): a copy
//! or a sum of an approximate counter would cost each write a transaction and two reads, which
//! the pattern exists to avoid. Declare no extended-reference copy or computed value over them.
//!
//! A declared counter writes into the model's existing documents only: a count for a document
//! that is gone (deleted while its count waited for a flush) is dropped with a `WARN` event,
//! never creating a document the model did not write. A standalone counter creates its
//! documents on their first write.
//!
//! What a crash loses: a [`BatchedCounter`] holds at most `threshold - 1` events per document
//! in memory (fewer with [`BatchedCounter::flush_every`]: what arrived since the last flush); a
//! [`SampledCounter`] and a [`ShardedCounter`] hold nothing.
//!
//! # Tracing
//!
//! Each write is a `DEBUG` event of target `pattern_runtime::approximation` (the counter's
//! collection and field, the key or shard, the amount); a [`BatchedCounter`] dropped with events
//! not flushed is a `WARN` event saying how many.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bson::{doc, Bson, Document};
use mongodb::Collection;
use serde::Serialize;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{validate_key, Error, Result};
use crate::model::IntoId;
use crate::schema::{ModelSchema, PatternSpec};

/// How a model field declared with `#[approximate(..)]` is counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Approximation {
    /// `#[approximate(batched, threshold = N)]`: a [`BatchedCounter`].
    Batched {
        /// Events per write.
        threshold: u32,
    },
    /// `#[approximate(sampled, p = P)]`: a [`SampledCounter`].
    Sampled {
        /// The probability of a write per event.
        p: f64,
    },
    /// `#[approximate(sharded, shards = N)]`: a [`ShardedField`].
    Sharded {
        /// Shard documents per counted document.
        shards: u32,
        /// The collection of the shard documents.
        collection: &'static str,
    },
}

/// A model field counted approximately, as `#[approximate(..)]` declares it.
#[derive(Debug)]
pub struct ApproximateSpec {
    parts: ApproximateParts,
}

/// The parts of an [`ApproximateSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ApproximateParts {
    /// The field's BSON name.
    pub field: &'static str,
    pub approximation: Approximation,
}

impl ApproximateSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: ApproximateParts) -> Self {
        ApproximateSpec { parts }
    }

    /// The counted field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// How it is counted.
    pub fn approximation(&self) -> Approximation {
        self.parts.approximation
    }
}

impl PatternSpec for ApproximateSpec {}

impl ModelSchema {
    /// The fields of this model counted approximately.
    pub fn approximated(&self) -> impl Iterator<Item = &'static ApproximateSpec> {
        self.specs::<ApproximateSpec>()
    }
}

/// A source of uniform numbers in `[0, 1)`: [`SampledCounter`] and [`ShardedCounter`] draw
/// from it. [`Random::seeded`] makes runs repeatable (tests); [`Random::new`] seeds from the clock.
pub struct Random {
    state: Mutex<u64>,
}

impl fmt::Debug for Random {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Random")
    }
}

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}

impl Random {
    /// Seeded from the clock and a process-wide counter.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Random::seeded(nanos ^ NEXT.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed))
    }

    /// A new sequence seeded from this one's next number: repeatable when this one is, and not
    /// the same draws.
    fn split(&self) -> Random {
        Random::seeded((self.next_f64() * (1u64 << 53) as f64) as u64 ^ 0x5851_F42D_4C95_7F2D)
    }

    /// A repeatable sequence (SplitMix64) from `seed`.
    pub fn seeded(seed: u64) -> Self {
        Random {
            state: Mutex::new(seed),
        }
    }

    /// The next number, uniform in `[0, 1)`.
    pub fn next_f64(&self) -> f64 {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The top 53 bits, as a fraction.
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn checked_field(field: &str) -> Result<String> {
    validate_key(field)?;
    Ok(field.to_owned())
}

/// Where a counter writes: upserting `$inc`s of one field, counted, each a `DEBUG` event.
#[derive(Debug)]
struct Increments {
    collection: Collection<Document>,
    field: String,
    /// Whether a write creates the document when it is missing: a standalone counter's (its
    /// documents are its own), not a model field's (a model's document is the model's to create).
    upsert: bool,
    writes: AtomicU64,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
}

impl Increments {
    fn new(collection: Collection<Document>, field: String) -> Self {
        Increments {
            collection,
            field,
            upsert: true,
            writes: AtomicU64::new(0),
            tx: None,
        }
    }

    /// The field of a model's documents: written only where the document exists.
    fn of_model(collection: Collection<Document>, field: String) -> Self {
        Increments {
            upsert: false,
            ..Increments::new(collection, field)
        }
    }

    /// The same target in the caller's transaction `tx` (its own count of writes).
    fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        Increments {
            collection: self.collection.clone(),
            field: self.field.clone(),
            upsert: self.upsert,
            writes: AtomicU64::new(0),
            tx: Some(tx.clone()),
        }
    }

    /// `$inc` of `amount` on the document `id`, created if missing.
    async fn inc(&self, id: &Bson, amount: Bson, what: &'static str) -> Result<()> {
        crate::literal::check_id("_id", id)?;
        let inc = self
            .collection
            .update_one(
                doc! { "_id": id.clone() },
                doc! { "$inc": { self.field.as_str(): amount.clone() } },
            )
            .upsert(self.upsert);
        let written = match &self.tx {
            Some(tx) => {
                let mut session = crate::txn::Transaction::session_of(Some(tx)).await?;
                crate::txn::in_session!(inc, session.as_deref_mut())?
            }
            None => inc.await?,
        };
        if written.matched_count == 0 && written.upserted_id.is_none() {
            // A model's document that is gone (deleted while its count waited): the count has
            // nowhere to go, and creating a document the model did not write would be worse.
            tracing::warn!(
                target: "pattern_runtime::approximation",
                collection = self.collection.name(),
                field = self.field.as_str(),
                id = %id,
                amount = %amount,
                counter = what,
                "the counted document does not exist: the count is dropped"
            );
            return Ok(());
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            target: "pattern_runtime::approximation",
            collection = self.collection.name(),
            field = self.field.as_str(),
            id = %id,
            amount = %amount,
            counter = what,
            "count written"
        );
        Ok(())
    }

    fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
}

// ----- batched -----

/// Counts in memory per document and writes one `$inc` when a document's count reaches the
/// threshold: `threshold` events cost one write. Call [`flush`](BatchedCounter::flush) before
/// the program ends; a counter dropped with unflushed events says so in a `WARN` event (it cannot
/// write from `drop`). If the process dies, at most `threshold - 1` events per document are lost.
///
/// `Id` is the type of the documents' `_id`: the model's [`Model::Id`](crate::Model::Id) for a
/// counter generated by `#[approximate(batched, ..)]`, [`Bson`] for one made with
/// [`new`](BatchedCounter::new).
pub struct BatchedCounter<Id = Bson> {
    target: Increments,
    threshold: i64,
    pending: Mutex<HashMap<String, (Bson, i64)>>,
    _id: PhantomData<fn(Id)>,
}

impl<Id> fmt::Debug for BatchedCounter<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchedCounter")
            .field("collection", &self.target.collection.name())
            .field("field", &self.target.field)
            .field("threshold", &self.threshold)
            .field("pending", &self.pending())
            .finish()
    }
}

impl BatchedCounter {
    /// A counter of `field` in the documents of `collection`, writing every `threshold` events
    /// of a document. [`Error::InvalidValue`] for a zero threshold, [`Error::InvalidKey`] for a
    /// field name with `$` or `.`.
    pub fn new(collection: Collection<Document>, field: &str, threshold: u32) -> Result<Self> {
        let field = checked_field(field)?;
        if threshold == 0 {
            return Err(Error::InvalidValue {
                field,
                reason: "a batched counter's threshold is at least 1".into(),
            });
        }
        Ok(BatchedCounter {
            target: Increments::new(collection, field),
            threshold: i64::from(threshold),
            pending: Mutex::new(HashMap::new()),
            _id: PhantomData,
        })
    }
}

impl<Id> BatchedCounter<Id> {
    /// A counter declared with `#[approximate(batched, threshold = ..)]` (checked at compile
    /// time).
    #[doc(hidden)]
    pub fn declared(collection: Collection<Document>, field: &'static str, threshold: u32) -> Self {
        BatchedCounter {
            target: Increments::of_model(collection, field.to_owned()),
            threshold: i64::from(threshold.max(1)),
            pending: Mutex::new(HashMap::new()),
            _id: PhantomData,
        }
    }

    /// Flushes `counter` every `interval` in a background task (a Tokio runtime is needed), so
    /// a document that gets few events is not left behind for long. A failed periodic flush is
    /// a `WARN` event and its counts wait for the next flush; [`Flusher::stop`] ends the task
    /// with a last flush and returns its outcome: call it at shutdown.
    pub fn flush_every(counter: Arc<BatchedCounter<Id>>, interval: Duration) -> Flusher<Id>
    where
        Id: 'static,
    {
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task_counter = counter.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = &mut stopped => return,
                }
                if let Err(e) = task_counter.flush().await {
                    tracing::warn!(
                        target: "pattern_runtime::approximation",
                        collection = task_counter.target.collection.name(),
                        field = task_counter.target.field.as_str(),
                        error = %e,
                        "a periodic flush failed; its counts wait for the next flush"
                    );
                }
            }
        });
        Flusher {
            counter,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Counts `n` events of the document `id` (created by the first write if missing); writes
    /// its pending count when it reaches the threshold in either direction (`n` may be
    /// negative: a pending count of -5 against a threshold of 3 is written).
    pub async fn add(&self, id: impl IntoId<Id>, n: i64) -> Result<()>
    where
        Id: Serialize,
    {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        let due = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let key = crate::finding::id_key(&id);
            let entry = pending.entry(key.clone()).or_insert((id, 0));
            entry.1 += n;
            if entry.1.abs() >= self.threshold {
                // Written now: the entry goes, so memory follows the documents with events
                // pending, not every document ever counted.
                pending.remove(&key)
            } else {
                None
            }
        };
        match due {
            Some((id, amount)) => self.write(id, amount).await,
            None => Ok(()),
        }
    }

    /// Events counted and not written yet, over every document.
    pub fn pending(&self) -> i64 {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.values().map(|(_, n)| n).sum()
    }

    /// `$inc` writes sent so far.
    pub fn writes(&self) -> u64 {
        self.target.writes()
    }

    /// Writes every pending count: one `$inc` per document with events pending. Returns how
    /// many writes it sent. A failed write puts its count back, to be written by a later flush.
    pub async fn flush(&self) -> Result<u64> {
        let due: Vec<(Bson, i64)> = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending
                .drain()
                .map(|(_, entry)| entry)
                .filter(|(_, n)| *n != 0)
                .collect()
        };
        let mut sent = 0;
        let mut first_error = None;
        for (id, amount) in due {
            match self.write(id, amount).await {
                Ok(()) => sent += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(sent),
        }
    }

    async fn write(&self, id: Bson, amount: i64) -> Result<()> {
        let written = self.target.inc(&id, Bson::Int64(amount), "batched").await;
        if written.is_err() {
            // Nothing counted is dropped: the amount waits for the next write of `id`.
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending
                .entry(crate::finding::id_key(&id))
                .or_insert((id, 0))
                .1 += amount;
        }
        written
    }
}

impl<Id> Drop for BatchedCounter<Id> {
    fn drop(&mut self) {
        let pending = self.pending();
        if pending != 0 {
            tracing::warn!(
                target: "pattern_runtime::approximation",
                collection = self.target.collection.name(),
                field = self.target.field.as_str(),
                pending,
                "a batched counter was dropped with events not written: call flush() first"
            );
        }
    }
}

/// The background flushes of a [`BatchedCounter`], from [`BatchedCounter::flush_every`].
/// Dropping it stops the task without the last flush (a `WARN` event says so when counts are
/// pending): call [`stop`](Flusher::stop).
pub struct Flusher<Id = Bson> {
    counter: Arc<BatchedCounter<Id>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl<Id> fmt::Debug for Flusher<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flusher")
            .field("counter", &self.counter)
            .finish()
    }
}

impl<Id> Flusher<Id> {
    /// Stops the periodic flushes (waiting for one under way) and flushes what is pending:
    /// how many writes that last flush sent.
    pub async fn stop(mut self) -> Result<u64> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.counter.flush().await
    }
}

impl<Id> Drop for Flusher<Id> {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

// ----- sampled -----

/// Writes each event with probability `p`, as an increment of `1/p`: about `n p` writes for `n`
/// events, and an unbiased estimate whose relative standard error is `sqrt((1 - p) / (n p))`
/// (3.1% for 100 000 events at `p = 0.01`; four times that is exceeded about once in 16 000 runs).
/// The stored field stays an integer: when `1/p` is not a whole number, each write adds
/// `floor(1/p)` or `floor(1/p) + 1`, the latter with probability `1/p - floor(1/p)`, so the
/// estimate stays unbiased (and its error grows by less than `1/(2n)` relative).
///
/// `Id` is the type of the documents' `_id`, as for [`BatchedCounter`].
pub struct SampledCounter<Id = Bson> {
    target: Increments,
    p: f64,
    random: Random,
    _id: PhantomData<fn(Id)>,
}

impl<Id> fmt::Debug for SampledCounter<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampledCounter")
            .field("target", &self.target)
            .field("p", &self.p)
            .field("random", &self.random)
            .finish()
    }
}

impl SampledCounter {
    /// A sampled counter of `field` in `collection`, with probability `p` in `(0, 1]`.
    pub fn new(collection: Collection<Document>, field: &str, p: f64) -> Result<Self> {
        SampledCounter::with_random(collection, field, p, Random::new())
    }

    /// The same with the given randomness ([`Random::seeded`] for repeatable runs).
    pub fn with_random(
        collection: Collection<Document>,
        field: &str,
        p: f64,
        random: Random,
    ) -> Result<Self> {
        let field = checked_field(field)?;
        if !(p > 0.0 && p <= 1.0) {
            return Err(Error::InvalidValue {
                field,
                reason: format!("a sampling probability is in (0, 1], not {p}"),
            });
        }
        Ok(SampledCounter {
            target: Increments::new(collection, field),
            p,
            random,
            _id: PhantomData,
        })
    }
}

impl<Id> SampledCounter<Id> {
    /// The same counter in the caller's transaction `tx`: each write [`add`](Self::add) makes
    /// runs in `tx`'s session, and is kept or dropped with it. It draws from its own sequence,
    /// split from this one's. See [`Transaction`](crate::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        SampledCounter {
            target: self.target.in_transaction(tx),
            p: self.p,
            random: self.random.split(),
            _id: PhantomData,
        }
    }

    /// Counts one event of the document `id`: with probability `p`, one `$inc` of `1/p`
    /// (creating the document if missing). Returns whether it wrote.
    pub async fn add(&self, id: impl IntoId<Id>) -> Result<bool>
    where
        Id: Serialize,
    {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        if self.random.next_f64() >= self.p {
            return Ok(false);
        }
        let step = 1.0 / self.p;
        let whole = step.floor();
        let frac = step - whole;
        let amount = whole as i64 + i64::from(frac > 1e-9 && self.random.next_f64() < frac);
        self.target.inc(&id, Bson::Int64(amount), "sampled").await?;
        Ok(true)
    }

    /// The same counter drawing from `random` ([`Random::seeded`] for repeatable runs): for a
    /// handle generated by `#[approximate(sampled, ..)]`.
    pub fn with_randomness(mut self, random: Random) -> Self {
        self.random = random;
        self
    }

    /// A counter declared with `#[approximate(sampled, p = ..)]` (checked at compile time).
    #[doc(hidden)]
    pub fn declared(collection: Collection<Document>, field: &'static str, p: f64) -> Self {
        SampledCounter {
            target: Increments::of_model(collection, field.to_owned()),
            p,
            random: Random::new(),
            _id: PhantomData,
        }
    }

    /// `$inc` writes sent so far.
    pub fn writes(&self) -> u64 {
        self.target.writes()
    }

    /// The relative standard error of the estimate after `n` events: `sqrt((1 - p) / (n p))`.
    pub fn relative_error(&self, n: u64) -> f64 {
        ((1.0 - self.p) / (n as f64 * self.p)).sqrt()
    }
}

// ----- sharded -----

/// One hot counter split over `shards` documents `{_id: "<name>:<k>", count}`: each increment
/// upserts a random shard, so concurrent writers rarely touch the same document; the read sums
/// the shards in one aggregation and is exact.
#[derive(Debug)]
pub struct ShardedCounter {
    target: Increments,
    key: ShardKey,
    shards: u32,
    random: Random,
}

/// How a counter's shard documents are named.
#[derive(Debug, Clone)]
enum ShardKey {
    /// A standalone counter: `"<name>:<k>"`.
    Named(String),
    /// A model field's counter of one document: `{of: <its _id>, shard: k}`.
    Of(Bson),
}

impl ShardedCounter {
    /// The counter `name` over `shards` documents of `collection`. [`Error::InvalidValue`] for
    /// zero shards.
    pub fn new(collection: Collection<Document>, name: &str, shards: u32) -> Result<Self> {
        ShardedCounter::with_random(collection, name, shards, Random::new())
    }

    /// The same with the given randomness.
    pub fn with_random(
        collection: Collection<Document>,
        name: &str,
        shards: u32,
        random: Random,
    ) -> Result<Self> {
        if shards == 0 {
            return Err(Error::InvalidValue {
                field: name.to_owned(),
                reason: "a sharded counter has at least 1 shard".into(),
            });
        }
        Ok(ShardedCounter {
            target: Increments::new(collection, "count".to_owned()),
            key: ShardKey::Named(name.to_owned()),
            shards,
            random,
        })
    }

    fn shard_id(&self, k: u32) -> Bson {
        match &self.key {
            ShardKey::Named(name) => Bson::String(format!("{name}:{k}")),
            ShardKey::Of(id) => Bson::Document(doc! { "of": id.clone(), "shard": k }),
        }
    }

    /// The same counter in the caller's transaction `tx`: each upsert [`add`](Self::add)
    /// sends, and [`read`](Self::read), run in `tx`'s session (a read sees the transaction's
    /// own adds). See [`Transaction`](crate::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        ShardedCounter {
            target: self.target.in_transaction(tx),
            key: self.key.clone(),
            shards: self.shards,
            random: self.random.split(),
        }
    }

    /// Adds `n` to a random shard (one upsert).
    pub async fn add(&self, n: i64) -> Result<()> {
        let k = ((self.random.next_f64() * f64::from(self.shards)) as u32).min(self.shards - 1);
        let id = self.shard_id(k);
        self.target.inc(&id, Bson::Int64(n), "sharded").await?;
        Ok(())
    }

    /// Upserts sent so far (one per [`add`](ShardedCounter::add)).
    pub fn writes(&self) -> u64 {
        self.target.writes()
    }

    /// The exact total: the shards summed in one aggregation.
    pub async fn read(&self) -> Result<i64> {
        let ids: Vec<Bson> = (0..self.shards).map(|k| self.shard_id(k)).collect();
        let sum = self.target.collection.aggregate([
            doc! { "$match": { "_id": { "$in": ids } } },
            doc! { "$group": { "_id": Bson::Null, "total": { "$sum": "$count" } } },
        ]);
        let mut session = crate::txn::Transaction::session_of(self.target.tx.as_ref()).await?;
        let found = crate::txn::collect_in!(sum, session.as_deref_mut())?;
        let total = match found.into_iter().next() {
            Some(d) => match d.get("total") {
                Some(Bson::Int32(n)) => i64::from(*n),
                Some(Bson::Int64(n)) => *n,
                Some(Bson::Double(n)) => *n as i64,
                _ => 0,
            },
            None => 0,
        };
        Ok(total)
    }
}

/// The sharded counter of one document's field, declared with
/// `#[approximate(sharded, shards = N)]`: its shards are documents `{_id: {of: <the document's
/// _id>, shard: k}, count}` of the collection `<collection>.<field>` (or the one declared), and
/// [`snapshot`](ShardedField::snapshot) copies the exact total into the document's field, for
/// readers of the document.
#[derive(Debug)]
pub struct ShardedField {
    counter: ShardedCounter,
    owner: Collection<Document>,
    field: &'static str,
    id: Bson,
    /// Why the id could not be serialized, if it could not: every operation refuses it.
    unstorable: Option<String>,
}

impl ShardedField {
    /// The counter of the document `id` of `owner`, its shards in `shards_collection`.
    #[doc(hidden)]
    pub fn declared<Id: Serialize>(
        owner: Collection<Document>,
        field: &'static str,
        shards_collection: Collection<Document>,
        shards: u32,
        id: Id,
    ) -> Self {
        let (id, unstorable) = match bson::serialize_to_bson(&id) {
            Ok(id) => (id, None),
            Err(e) => (Bson::Null, Some(format!("cannot be stored: {e}"))),
        };
        ShardedField {
            counter: ShardedCounter {
                target: Increments::new(shards_collection, "count".to_owned()),
                key: ShardKey::Of(id.clone()),
                shards: shards.max(1),
                random: Random::new(),
            },
            owner,
            field,
            id,
            unstorable,
        }
    }

    /// The id, checked: it is an equality in every filter.
    fn check_id(&self) -> Result<()> {
        if let Some(reason) = &self.unstorable {
            return Err(Error::InvalidValue {
                field: "_id".to_owned(),
                reason: reason.clone(),
            });
        }
        crate::literal::check_id("_id", &self.id)
    }

    /// The same counter drawing its shards from `random`.
    pub fn with_randomness(mut self, random: Random) -> Self {
        self.counter.random = random;
        self
    }

    /// The same counter in the caller's transaction `tx`: [`add`](Self::add),
    /// [`read`](Self::read) and [`snapshot`](Self::snapshot) run in `tx`'s session (a read
    /// sees the transaction's own adds). See [`Transaction`](crate::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        ShardedField {
            counter: self.counter.in_transaction(tx),
            owner: self.owner.clone(),
            field: self.field,
            id: self.id.clone(),
            unstorable: self.unstorable.clone(),
        }
    }

    /// The collection of the shard documents.
    pub fn shards_collection(&self) -> &str {
        self.counter.target.collection.name()
    }

    /// Adds `n` to a random shard (one upsert).
    pub async fn add(&self, n: i64) -> Result<()> {
        self.check_id()?;
        self.counter.add(n).await
    }

    /// The exact total (one aggregation over the shards).
    pub async fn read(&self) -> Result<i64> {
        self.check_id()?;
        self.counter.read().await
    }

    /// Upserts sent so far.
    pub fn writes(&self) -> u64 {
        self.counter.writes()
    }

    /// Reads the exact total and `$set`s it into the document's field; returns it.
    /// [`Error::NotFound`] when the document does not exist (nothing is written).
    pub async fn snapshot(&self) -> Result<i64> {
        self.check_id()?;
        let total = self.read().await?;
        let set = self.owner.update_one(
            doc! { "_id": self.id.clone() },
            doc! { "$set": { self.field: total } },
        );
        let mut session =
            crate::txn::Transaction::session_of(self.counter.target.tx.as_ref()).await?;
        let result = crate::txn::in_session!(set, session.as_deref_mut())?;
        if result.matched_count == 0 {
            return Err(Error::NotFound {
                collection: self.owner.name().to_owned(),
                id: Box::new(self.id.clone()),
            });
        }
        tracing::debug!(
            target: "pattern_runtime::approximation",
            collection = self.owner.name(),
            field = self.field,
            id = %self.id,
            total,
            "sharded total copied into the document"
        );
        Ok(total)
    }
}

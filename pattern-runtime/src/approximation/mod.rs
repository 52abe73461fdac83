#![doc = include_str!("../../docs/approximation.md")]

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bson::{doc, Bson, Document};
use mongodb::Collection;
use serde::Serialize;

use crate::error::{validate_key, Error, Result};
use crate::model::IntoId;
use crate::schema::{spec, ModelSchema, PatternSpec};

mod batched;
mod sampled;
mod sharded;
mod spec;

pub use batched::{BatchedCounter, Flusher};
pub use sampled::SampledCounter;
pub use sharded::{ShardedCounter, ShardedField, ShardedFields};
pub use spec::{ApproximateParts, ApproximateSpec, Approximation};

crate::model::field_handle! {
    /// An `#[approximate(..)]` field's typed name: what [`ModelCollection::counter`](crate::model::ModelCollection::counter) takes.
    pub trait CounterField {
        message = "`{Self}` is not an `#[approximate(..)]` field of `{M}`",
        label = "not a counter field of `{M}`",
        note = "pass a field of `{M}::FIELDS` declared with `#[approximate(batched | sampled | sharded, ..)]`",
    }
    /// The counter of `field` in `M`'s documents: a [`BatchedCounter`], a [`SampledCounter`]
    /// or the [`ShardedFields`], as the field declares. A batched counter's flushes gather
    /// many callers' events and never run in a caller's transaction; the other two are bound
    /// to this handle's transaction when it has one
    /// ([`in_transaction`](crate::model::ModelCollection::in_transaction)).
    pub fn counter;
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

    /// `$inc` of `amount` on the document `id`, created if missing (a standalone counter's);
    /// whether it reached a document (a model's document may be gone: the count is dropped).
    /// A model's field keeps its stored integer type: an `i32` count stays an `Int32` (its
    /// validator says `"int"`), an `i64` one an `Int64`.
    async fn inc(&self, id: &Bson, amount: Bson, what: &'static str) -> Result<bool> {
        crate::literal::check_id("_id", id)?;
        let amount = match amount {
            Bson::Int64(n) if !self.upsert => crate::schema::shape::narrowest(n),
            other => other,
        };
        let inc = self
            .collection
            .update_one(
                doc! { "_id": id.clone() },
                doc! { "$inc": { self.field.as_str(): amount.clone() } },
            )
            .upsert(self.upsert);
        // An `$inc` the server refuses because the count would leave the 64-bit range is
        // `Error::InvalidValue`, nothing written.
        let overflow = |e| {
            let counted = format!("`{}` in `{}`", self.field, self.collection.name());
            crate::error::inc_overflow(e, &[self.field.as_str()], &counted)
        };
        let written = match &self.tx {
            Some(tx) => {
                let mut session = crate::txn::Transaction::session_of(Some(tx)).await?;
                crate::txn::in_session!(inc, session.as_deref_mut()).map_err(overflow)?
            }
            None => inc.await.map_err(overflow)?,
        };
        let collection = self.collection.name();
        let field = self.field.as_str();
        // The event of the write, at `$level`: the same fields either way.
        macro_rules! count_event {
            ($level:ident, $message:literal) => {
                tracing::$level!(
                    target: "pattern_runtime::approximation",
                    collection,
                    field,
                    id = %id,
                    amount = %amount,
                    counter = what,
                    $message
                )
            };
        }
        if written.matched_count == 0 && written.upserted_id.is_none() {
            // A model's document that is gone (deleted while its count waited): the count has
            // nowhere to go, and creating a document the model did not write would be worse.
            count_event!(
                warn,
                "the counted document does not exist: the count is dropped"
            );
            return Ok(false);
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        count_event!(debug, "count written");
        Ok(true)
    }

    fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
}

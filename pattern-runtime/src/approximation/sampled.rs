//! `SampledCounter`: each event written with probability `p`, as an increment of `1/p`.

use super::*;

// ----- sampled -----

crate::txn::bound!(impl<Id> SampledCounter<Id>);

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
    /// [`with_random`](SampledCounter::with_random) sets its randomness.
    pub fn new(collection: Collection<Document>, field: &str, p: f64) -> Result<Self> {
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
            random: Random::new(),
            _id: PhantomData,
        })
    }
}

impl<Id> SampledCounter<Id> {
    /// The same counter in the caller's transaction `tx`: each write [`add`](Self::add) makes
    /// runs in `tx`'s session, and is kept or dropped with it. It draws from its own sequence,
    /// split from this one's. See [`Transaction`](crate::txn::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        SampledCounter {
            target: self.target.in_transaction(tx),
            p: self.p,
            random: self.random.split(),
            _id: PhantomData,
        }
    }

    /// Counts one event of the document `id`: with probability `p`, one `$inc` of `1/p`.
    /// Returns whether it wrote. A standalone counter creates the document if missing; a
    /// declared one writes into the model's existing documents only (for a document that does
    /// not exist, the count is dropped with a `WARN` event and `add` returns `false`).
    pub fn add<'a>(&'a self, id: impl IntoId<Id>) -> crate::model::Pending<'a, Result<bool>>
    where
        Id: Serialize,
    {
        crate::model::Pending::new(self.add_op(crate::literal::typed_id("_id", id.into_id())))
    }

    async fn add_op(&self, id: Result<Bson>) -> Result<bool> {
        let id = id?;
        if self.random.next_f64() >= self.p {
            return Ok(false);
        }
        let step = 1.0 / self.p;
        let whole = step.floor();
        let frac = step - whole;
        let amount = whole as i64 + i64::from(frac > 1e-9 && self.random.next_f64() < frac);
        self.target.inc(&id, Bson::Int64(amount), "sampled").await
    }

    /// The same counter drawing from `random` ([`Random::seeded`] for repeatable runs).
    pub fn with_random(mut self, random: Random) -> Self {
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

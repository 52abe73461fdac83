//! `ShardedCounter` and `ShardedField`: one hot counter spread over shard documents, read
//! exactly.

use super::*;

// ----- sharded -----

/// One hot counter split over `shards` documents `{_id: "<name>:<k>", count}`: each increment
/// upserts a random shard, so concurrent writers rarely touch the same document; the read sums
/// the shards in one `find` and is exact.
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
    /// zero shards. [`with_random`](ShardedCounter::with_random) sets its randomness.
    pub fn new(collection: Collection<Document>, name: &str, shards: u32) -> Result<Self> {
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
            random: Random::new(),
        })
    }

    /// The same counter drawing its shards from `random` ([`Random::seeded`] for repeatable
    /// runs).
    pub fn with_random(mut self, random: Random) -> Self {
        self.random = random;
        self
    }

    fn shard_id(&self, k: u32) -> Bson {
        match &self.key {
            ShardKey::Named(name) => Bson::String(format!("{name}:{k}")),
            ShardKey::Of(id) => Bson::Document(doc! { "of": id.clone(), "shard": k }),
        }
    }

    /// The same counter in the caller's transaction `tx`: each upsert [`add`](Self::add)
    /// sends, and [`read`](Self::read), run in `tx`'s session (a read sees the transaction's
    /// own adds). See [`Transaction`](crate::txn::Transaction).
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

    /// The exact total: the shards read in one `find` and summed here, exactly.
    /// [`Error::InvalidValue`] when the total leaves the 64-bit range (each shard holds at most
    /// `i64::MAX`, but several together may pass it).
    pub async fn read(&self) -> Result<i64> {
        let ids: Vec<Bson> = (0..self.shards).map(|k| self.shard_id(k)).collect();
        let shards = self
            .target
            .collection
            .find(doc! { "_id": { "$in": ids } })
            .projection(doc! { "_id": 0, "count": 1 });
        let mut session = crate::txn::Transaction::session_of(self.target.tx.as_ref()).await?;
        let found = crate::txn::collect_in!(shards, session.as_deref_mut())?;
        let total: i128 = found
            .iter()
            .map(|d| match d.get("count") {
                Some(Bson::Int32(n)) => i128::from(*n),
                Some(Bson::Int64(n)) => i128::from(*n),
                Some(Bson::Double(n)) => *n as i128,
                _ => 0,
            })
            .sum();
        i64::try_from(total).map_err(|_| Error::InvalidValue {
            field: self.target.field.clone(),
            reason: format!(
                "the {} shards of `{}` add up to {total}, past the 64-bit range",
                found.len(),
                self.target.collection.name()
            ),
        })
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
    pub fn with_random(mut self, random: Random) -> Self {
        self.counter.random = random;
        self
    }

    /// The same counter in the caller's transaction `tx`: [`add`](Self::add),
    /// [`read`](Self::read) and [`snapshot`](Self::snapshot) run in `tx`'s session (a read
    /// sees the transaction's own adds). See [`Transaction`](crate::txn::Transaction).
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

    /// The exact total (one `find` of the shards); [`Error::InvalidValue`] past the 64-bit range.
    pub async fn read(&self) -> Result<i64> {
        self.check_id()?;
        self.counter.read().await
    }

    /// Upserts sent so far.
    pub fn writes(&self) -> u64 {
        self.counter.writes()
    }

    /// The registered model of the owner's collection that has the counted field.
    fn owner_model(&self) -> Option<&'static crate::schema::ModelSchema> {
        crate::schema::registered_models().into_iter().find(|m| {
            m.collection() == self.owner.name() && m.field_by_bson_name(self.field).is_some()
        })
    }

    /// Reads the exact total and `$set`s it into the document's field; returns it.
    /// [`Error::NotFound`] when the document does not exist (nothing is written).
    pub async fn snapshot(&self) -> Result<i64> {
        self.check_id()?;
        let total = self.read().await?;
        // A document stored in an older schema version is rewritten at the current one first,
        // as before every toolkit update.
        let model = self.owner_model();
        if let Some(model) = model {
            let db = self.owner.client().database(&self.owner.namespace().db);
            crate::stored::upgrade::upgrade_matching_in(
                &db,
                self.counter.target.tx.as_ref(),
                model,
                &doc! { "_id": self.id.clone() },
            )
            .await?;
        }
        // The field's own integer type: an `i32` field of the registered model stays an `Int32`.
        let stored = model.map_or(Bson::Int64(total), |m| {
            crate::schema::shape::integer_for(m, self.field, total)
        });
        let set = self.owner.update_one(
            doc! { "_id": self.id.clone() },
            doc! { "$set": { self.field: stored } },
        );
        let mut session =
            crate::txn::Transaction::session_of(self.counter.target.tx.as_ref()).await?;
        let result = crate::txn::in_session!(set, session.as_deref_mut())?;
        if result.matched_count == 0 {
            return Err(Error::NotFound {
                collection: self.owner.name().to_owned(),
                missing: Box::new(crate::error::Missing::Document {
                    id: self.id.clone(),
                }),
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

/// The sharded counters of one `#[approximate(sharded, ..)]` field, one per document of the
/// model: `Page::collection(&db).counter(Page::FIELDS.hits)`. [`of`](Self::of) is one
/// document's.
pub struct ShardedFields<Id> {
    owner: Collection<Document>,
    field: &'static str,
    shards_collection: Collection<Document>,
    shards: u32,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
    _id: PhantomData<fn(Id)>,
}

impl<Id> Clone for ShardedFields<Id> {
    fn clone(&self) -> Self {
        ShardedFields {
            owner: self.owner.clone(),
            field: self.field,
            shards_collection: self.shards_collection.clone(),
            shards: self.shards,
            tx: self.tx.clone(),
            _id: PhantomData,
        }
    }
}

impl<Id> fmt::Debug for ShardedFields<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardedFields")
            .field("collection", &self.owner.name())
            .field("field", &self.field)
            .field("shards", &self.shards)
            .finish()
    }
}

impl<Id: Serialize> ShardedFields<Id> {
    /// The counters of `field` of `owner`'s documents, their shards in `shards_collection`.
    #[doc(hidden)]
    pub fn declared(
        owner: Collection<Document>,
        field: &'static str,
        shards_collection: Collection<Document>,
        shards: u32,
    ) -> Self {
        ShardedFields {
            owner,
            field,
            shards_collection,
            shards,
            tx: None,
            _id: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same counters in the caller's transaction `tx`: each [`of`](Self::of) is bound to
        /// it (see [`ShardedField::in_transaction`]).
    }

    /// The counter of the document `id`.
    pub fn of(&self, id: impl IntoId<Id>) -> ShardedField {
        let field = ShardedField::declared(
            self.owner.clone(),
            self.field,
            self.shards_collection.clone(),
            self.shards,
            id.into_id(),
        );
        match &self.tx {
            Some(tx) => field.in_transaction(tx),
            None => field,
        }
    }
}

crate::txn::bound!(impl<Id: Serialize> ShardedFields<Id>);

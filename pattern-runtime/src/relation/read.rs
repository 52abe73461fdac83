//! Loading references: the targets of many documents in a few `$in` queries, and a
//! parent's children.

use super::*;
use crate::txn::{collect_in, Transaction};

// ----- loading -----

crate::txn::bound!(impl<S: Identified, T: Identified> Relation<S, T>);

crate::model::field_handle! {
    /// A `#[relation]` field's typed name: what [`ModelCollection::relation`](crate::model::ModelCollection::relation) takes.
    pub trait RelationField {
        message = "`{Self}` is not a `#[relation]` field of `{M}`",
        label = "not a relation field of `{M}`",
        note = "pass a field of `{M}::FIELDS` declared with `#[relation(..)]`",
    }
    /// The relation `field` of `M`: batch loading of the documents it refers to, and for a
    /// two-way relation `assign`, `check` and `repair` (see [`Relation`] and [`TwoWay`]).
    ///
    /// Bound to this handle's transaction when it has one
    /// ([`in_transaction`](crate::model::ModelCollection::in_transaction)): a [`Relation`]'s reads,
    /// and a [`TwoWay`]'s reads and writes, then run in it and see what it wrote before the
    /// commit.
    pub fn relation;
}

/// The operations of one `#[relation]` field of model `S` referring to model `T`:
/// `Post::collection(&db).relation(Post::FIELDS.author)`. See the [module documentation](super).
/// It only reads; bound to a transaction ([`in_transaction`](Relation::in_transaction), or
/// reached from a bound model handle), it reads in it: its loads and children queries see that
/// transaction's uncommitted writes.
#[derive_where::derive_where(Clone)]
pub struct Relation<S, T: Identified> {
    pub(super) db: Database,
    pub(super) spec: &'static RelationSpec,
    ids: for<'a> fn(&'a S) -> Vec<&'a <T as Model>::Id>,
    chunk: usize,
    /// The caller's transaction, when bound to one.
    pub(super) tx: Option<Transaction>,
}

impl<S, T: Identified> fmt::Debug for Relation<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relation")
            .field("model", &self.spec.model().name())
            .field("field", &self.spec.field())
            .field("target", &self.spec.target().name())
            .field("chunk", &self.chunk)
            .finish()
    }
}

/// A reference whose document does not exist.
pub struct Dangling<S: Identified, T: Identified> {
    /// The `_id` of the document holding the reference.
    pub source: S::Id,
    /// The field holding it (BSON name).
    pub field: &'static str,
    /// Its position in the field's array; `None` for a single reference.
    pub position: Option<usize>,
    /// The `_id` no document has.
    pub target: T::Id,
}

// By hand: derived impls would ask `S` and `T` themselves to be `Debug`, `Clone`, `PartialEq`.
impl<S: Identified, T: Identified> fmt::Debug for Dangling<S, T>
where
    S::Id: fmt::Debug,
    T::Id: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dangling")
            .field("source", &self.source)
            .field("field", &self.field)
            .field("position", &self.position)
            .field("target", &self.target)
            .finish()
    }
}

impl<S: Identified, T: Identified> Clone for Dangling<S, T>
where
    S::Id: Clone,
    T::Id: Clone,
{
    fn clone(&self) -> Self {
        Dangling {
            source: self.source.clone(),
            field: self.field,
            position: self.position,
            target: self.target.clone(),
        }
    }
}

impl<S: Identified, T: Identified> PartialEq for Dangling<S, T>
where
    S::Id: PartialEq,
    T::Id: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
            && self.field == other.field
            && self.position == other.position
            && self.target == other.target
    }
}

impl<S: Identified, T: Identified> fmt::Display for Dangling<S, T>
where
    S::Id: fmt::Debug,
    T::Id: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?}: `{}`",
            S::SCHEMA.name(),
            self.source,
            self.field
        )?;
        if let Some(p) = self.position {
            write!(f, "[{p}]")?;
        }
        write!(
            f,
            " refers to {} {:?}, which does not exist",
            T::SCHEMA.name(),
            self.target
        )
    }
}

/// The documents a batch of sources refers to, from [`Relation::load`].
pub struct Loaded<'a, S: Identified, T: Identified> {
    sources: &'a [S],
    ids: for<'b> fn(&'b S) -> Vec<&'b T::Id>,
    targets: HashMap<T::Id, T>,
    dangling: Vec<Dangling<S, T>>,
    queries: usize,
}

impl<'a, S: Identified, T: Identified> Loaded<'a, S, T>
where
    T::Id: Eq + Hash,
{
    /// `source`'s references resolved, in the field's order with its duplicates; `None` for a
    /// reference whose document does not exist (listed in [`dangling`](Loaded::dangling)).
    pub fn of(&self, source: &S) -> Vec<Option<&T>> {
        (self.ids)(source)
            .into_iter()
            .map(|id| self.targets.get(id))
            .collect()
    }

    /// Each source with its references resolved, in the order given to `load`.
    pub fn iter(&self) -> impl Iterator<Item = (&'a S, Vec<Option<&T>>)> + '_ {
        self.sources.iter().map(move |s| (s, self.of(s)))
    }

    /// The loaded document with this `_id`.
    pub fn get(&self, id: &T::Id) -> Option<&T> {
        self.targets.get(id)
    }

    /// Every loaded document, once each, by `_id`.
    pub fn targets(&self) -> &HashMap<T::Id, T> {
        &self.targets
    }

    /// Every loaded document, once each, by `_id`.
    pub fn into_targets(self) -> HashMap<T::Id, T> {
        self.targets
    }

    /// The references whose documents do not exist, in source order.
    pub fn dangling(&self) -> &[Dangling<S, T>] {
        &self.dangling
    }

    /// How many `find` queries the load sent (one per chunk of distinct ids; 0 without ids).
    pub fn queries(&self) -> usize {
        self.queries
    }
}

impl<S: Identified, T: Identified> fmt::Debug for Loaded<'_, S, T>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loaded")
            .field("sources", &self.sources.len())
            .field("targets", &self.targets.len())
            .field("dangling", &self.dangling.len())
            .field("queries", &self.queries)
            .finish()
    }
}

impl<S: Identified, T: Identified> Relation<S, T> {
    #[doc(hidden)]
    pub fn new(
        db: &Database,
        spec: &'static RelationSpec,
        ids: for<'a> fn(&'a S) -> Vec<&'a T::Id>,
    ) -> Self {
        Relation {
            db: db.clone(),
            spec,
            ids,
            chunk: DEFAULT_CHUNK,
            tx: None,
        }
    }

    crate::txn::in_transaction! {
        /// The same relation in the caller's transaction `tx`: [`load`](Self::load),
        /// [`load_one`](Self::load_one) and [`children_of`](Self::children_of) read in `tx`'s
        /// session, so they see what the transaction wrote before its commit (the same round
        /// trips as outside it). A relation reached from a bound model handle
        /// (`M::collection(&db).in_transaction(&tx).relation(..)`) is bound already. See
        /// [`Transaction`](crate::txn::Transaction).
    }

    /// At most `n` distinct ids per `$in` query of [`load`](Relation::load) (at least 1); the
    /// default is [`DEFAULT_CHUNK`].
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.chunk = n.max(1);
        self
    }

    /// The relation's static description.
    pub fn spec(&self) -> &'static RelationSpec {
        self.spec
    }

    /// Loads the documents `sources` refer to: one `find({_id: {$in: ids}})` per chunk of
    /// distinct ids, whatever the number of sources and references. References to documents
    /// that do not exist are reported in [`Loaded::dangling`], not dropped. Bound to a
    /// transaction, it reads in it ([`in_transaction`](Self::in_transaction)).
    pub async fn load<'a>(&self, sources: &'a [S]) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        let span = tracing::debug_span!(
            "pattern_runtime::relation.load",
            model = self.spec.model().name(),
            collection = self.spec.model().collection(),
            field = self.spec.field(),
            sources = sources.len(),
        );
        tracing::Instrument::instrument(self.load_inner(sources), span).await
    }

    async fn load_inner<'a>(&self, sources: &'a [S]) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        let mut seen: HashSet<&T::Id> = HashSet::new();
        let mut distinct: Vec<&T::Id> = Vec::new();
        for s in sources {
            for id in (self.ids)(s) {
                if seen.insert(id) {
                    distinct.push(id);
                }
            }
        }
        let collection = self
            .db
            .collection::<bson::RawDocumentBuf>(self.spec.target().collection());
        let mut targets: HashMap<T::Id, T> = HashMap::with_capacity(distinct.len());
        let mut queries = 0;
        // Held for the whole load: its chunks' queries are the only operations sent meanwhile.
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        for chunk in distinct.chunks(self.chunk) {
            let ids = chunk
                .iter()
                .map(bson::serialize_to_bson)
                .collect::<std::result::Result<Vec<Bson>, _>>()?;
            // One more than can match: with exactly as many as match, the server would keep
            // the cursor open and the driver would send an empty `getMore`.
            let batch = u32::try_from(ids.len() + 1).unwrap_or(u32::MAX);
            let find = collection
                .find(doc! { "_id": { "$in": ids } })
                .batch_size(batch);
            let raws: Vec<bson::RawDocumentBuf> = collect_in!(find, session.as_deref_mut())?;
            let found = raws
                .iter()
                .map(|raw| crate::model::read::decode_raw::<T>(raw))
                .collect::<Result<Vec<T>>>()?;
            queries += 1;
            tracing::debug!(
                target: "pattern_runtime::relation",
                collection = self.spec.target().collection(),
                asked = chunk.len(),
                found = found.len(),
                "loaded referenced documents"
            );
            for t in found {
                targets.insert(t.id().clone(), t);
            }
        }
        let mut dangling = Vec::new();
        for s in sources {
            let ids = (self.ids)(s);
            let many = self.spec.is_many();
            for (position, id) in ids.into_iter().enumerate() {
                if !targets.contains_key(id) {
                    dangling.push(Dangling {
                        source: s.id().clone(),
                        field: self.spec.field(),
                        position: many.then_some(position),
                        target: id.clone(),
                    });
                }
            }
        }
        if !dangling.is_empty() {
            tracing::debug!(
                target: "pattern_runtime::relation",
                dangling = dangling.len(),
                "references to documents that do not exist"
            );
        }
        Ok(Loaded {
            sources,
            ids: self.ids,
            targets,
            dangling,
            queries,
        })
    }

    /// [`load`](Relation::load) for one source.
    pub async fn load_one<'a>(&self, source: &'a S) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        self.load(std::slice::from_ref(source)).await
    }

    /// The documents of `S` whose field refers to `target`, in the declared `sort` order: a
    /// parent's children, through the `{field: 1, sort..}` index `#[relation(parent)]` declares.
    /// Bound to a transaction, it reads in it ([`Children::stream`]).
    pub fn children_of(&self, target: &T::Id) -> Children<S> {
        Children {
            db: self.db.clone(),
            tx: self.tx.clone(),
            spec: self.spec,
            target: bson::serialize_to_bson(target).map_err(|e| e.to_string()),
            limit: None,
            filter: Document::new(),
            _model: PhantomData,
        }
    }
}

/// A query for the children of one parent: [`Relation::children_of`].
pub struct Children<S> {
    db: Database,
    /// The relation's transaction, when bound to one.
    tx: Option<Transaction>,
    spec: &'static RelationSpec,
    target: std::result::Result<Bson, String>,
    limit: Option<i64>,
    filter: Document,
    _model: PhantomData<fn() -> S>,
}

impl<S> fmt::Debug for Children<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("model", &self.spec.model().name())
            .field("field", &self.spec.field())
            .field("limit", &self.limit)
            .field("filter", &self.filter)
            .finish()
    }
}

impl<S: Model> Children<S> {
    /// At most `n` children (the first `n` in the declared order).
    pub fn limit(mut self, n: i64) -> Self {
        self.limit = Some(n);
        self
    }

    /// More conditions on the children, beside the parent's id (`{$and: [{<field>: id},
    /// filter]}`: it narrows the children, never replaces the parent's condition).
    pub fn filter(mut self, filter: Document) -> Self {
        self.filter = filter;
        self
    }

    /// The query's filter and sort.
    pub fn query(&self) -> Result<(Document, Document)> {
        let target = match &self.target {
            Ok(t) => t.clone(),
            Err(e) => {
                return Err(Error::InvalidValue {
                    field: self.spec.field().to_owned(),
                    reason: format!("the id cannot be stored as BSON: {e}"),
                })
            }
        };
        crate::literal::check_id(self.spec.field(), &target)?;
        let parent = doc! { self.spec.field(): target };
        // Beside the parent's id, never instead of it: a caller's filter naming the same field
        // narrows the children, it cannot widen them to another parent's.
        let filter = if self.filter.is_empty() {
            parent
        } else {
            doc! { "$and": [parent, self.filter.clone()] }
        };
        let mut sort = Document::new();
        for (f, dir) in self.spec.sort() {
            sort.insert(*f, *dir);
        }
        Ok((filter, sort))
    }

    /// The children as a stream, in the declared order.
    ///
    /// From a relation bound to a transaction, the children are read whole in its session (a
    /// stream cannot hold the session, which the transaction's other operations wait for), then
    /// streamed from memory; outside a transaction, from the server's cursor, a batch at a time.
    pub async fn stream(self) -> Result<impl Stream<Item = Result<S>> + Send + Unpin> {
        let span = tracing::debug_span!(
            "pattern_runtime::relation.children_of",
            model = self.spec.model().name(),
            collection = self.spec.model().collection(),
            field = self.spec.field(),
        );
        let (filter, sort) = span.in_scope(|| self.query())?;
        let collection = self
            .db
            .collection::<bson::RawDocumentBuf>(self.spec.model().collection());
        let mut find = collection.find(filter).sort(sort);
        if let Some(n) = self.limit {
            find = find.limit(n);
        }
        let read = async {
            let mut session = Transaction::session_of(self.tx.as_ref()).await?;
            Ok::<_, Error>(match session.as_deref_mut() {
                Some(s) => {
                    let all = collect_in!(find, Some(s))?;
                    futures_util::future::Either::Left(futures_util::stream::iter(
                        all.into_iter().map(Ok),
                    ))
                }
                None => futures_util::future::Either::Right(find.await?),
            })
        };
        let documents = tracing::Instrument::instrument(read, span).await?;
        Ok(
            documents.map(|r: mongodb::error::Result<bson::RawDocumentBuf>| {
                r.map_err(Error::from)
                    .and_then(|raw| crate::model::read::decode_raw::<S>(&raw))
            }),
        )
    }

    /// The children, collected.
    pub async fn to_vec(self) -> Result<Vec<S>> {
        self.stream().await?.try_collect().await
    }
}

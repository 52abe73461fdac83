//! The target's side: `ComputedFields` checks, repairs and rebuilds the computed values of a model
//! from their sources, once, in batches or in the background.

use super::*;
use pattern_derive::operation;

pub(super) async fn audit_computed(
    spec: &'static ComputedFromSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    if sample.documents.is_empty() {
        return Ok(Vec::new());
    }
    let feeds = Feed::group(sample.model, std::iter::once(spec));
    let Some(feed) = feeds.first() else {
        return Ok(Vec::new());
    };
    let found =
        aggregate_many_within(sample.db, None, feed, &sample.ids(), Some(sample.max_time)).await?;
    let mut drifted = Vec::new();
    let mut first = None;
    for (id, target) in sample.identified() {
        let values = feed.values(found.get(&id_key(id)));
        let computed = values.get(spec.field()).cloned().unwrap_or(Bson::Null);
        let stored = target.get(spec.field());
        if !agrees(spec.aggregate(), stored, &computed) {
            first.get_or_insert_with(|| {
                let stored = stored.map_or_else(|| "missing".to_owned(), ToString::to_string);
                format!("`_id` {id} holds {stored}, its sources say {computed}")
            });
            drifted.push(id.clone());
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            Check::ComputedDrift,
            spec.field(),
            format!(
                "{} of {} sampled documents disagree with their `{}` documents; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.source().name()
            ),
            format!(
                "`{model}::computed(&db).repair()` (or `rebuild(id)` for each); writes through \
             `{source}::collection(&db)` keep it exact",
                model = sample.model.name(),
                source = spec.source().name()
            ),
        )
        .about(drifted)])
}

// ----- the target's side: check, repair and rebuild -----

/// What one run of a [`Refresher`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recomputed {
    /// Target documents read.
    pub checked: u64,
    /// Documents whose computed fields were rewritten (they had drifted).
    pub repaired: u64,
    /// Documents left alone because their value changed between the read and the write (only
    /// without transactions: a later run sees them again).
    pub skipped: u64,
}

impl std::ops::AddAssign for Recomputed {
    fn add_assign(&mut self, other: Recomputed) {
        self.checked += other.checked;
        self.repaired += other.repaired;
        self.skipped += other.skipped;
    }
}

/// The operations on the computed fields of a target model: `User::computed(&db)`. See the
/// [module documentation](super).
#[derive_where::derive_where(Clone)]
pub struct ComputedFields<M> {
    db: Database,
    feeds: Vec<Feed>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

crate::span::spanned!(impl<M: Model> ComputedFields<M> => M::SCHEMA, M::SCHEMA.collection());

impl<M: Model> fmt::Debug for ComputedFields<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<&str> = self
            .feeds
            .iter()
            .flat_map(|feed| feed.specs.iter().map(|s| s.field()))
            .collect();
        f.debug_struct("ComputedFields")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.db.name())
            .field("fields", &fields)
            .finish()
    }
}

/// What one batch did.
struct Batch {
    done: Recomputed,
}

impl<M: Model> ComputedFields<M> {
    /// The computed fields of `M` in `db`.
    pub fn new(db: &Database) -> Self {
        ComputedFields {
            db: db.clone(),
            feeds: Feed::group(M::SCHEMA, M::SCHEMA.specs::<ComputedFromSpec>()),
            tx: None,
            _model: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same computed fields in the caller's transaction `tx`: [`check`](Self::check),
        /// [`repair`](Self::repair) and [`rebuild`](Self::rebuild) read and write in `tx`'s
        /// session (one transaction for the whole run: keep it to a few documents). See
        /// [`Transaction`](crate::Transaction).
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// Recomputes the computed fields of the document `id` from its sources and writes those
    /// that differ, in one transaction: `repaired` is 1 when it rewrote them, 0 when they
    /// agreed. [`Error::NotFound`] when there is no such document.
    pub fn rebuild<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
    ) -> crate::model::Pending<'a, Result<crate::finding::RebuildReport>> {
        crate::model::Pending::new(self.rebuild_op(id.into_id()))
    }

    #[operation(computed.rebuild, later(id))]
    async fn rebuild_op(&self, id: M::Id) -> Result<crate::finding::RebuildReport> {
        let id = crate::literal::span_id(id)?;
        let batch = self.batch(vec![id.clone()]).await?;
        if batch.done.checked == 0 {
            return Err(Error::NotFound {
                collection: M::SCHEMA.collection().to_owned(),
                missing: Box::new(crate::error::Missing::Document { id }),
            });
        }
        Ok(crate::finding::RebuildReport::new(batch.done.repaired))
    }

    /// One pass of a [`Refresher`]: recomputes the computed fields of every document of the
    /// model, [`BATCH`] documents per transaction, and writes those that differ.
    async fn refresh_all(&self) -> Result<Recomputed> {
        let mut done = Recomputed::default();
        self.each_batch(|batch, total| {
            done += batch.done;
            tracing::info!(
                checked = done.checked,
                repaired = done.repaired,
                skipped = done.skipped,
                total,
                "recomputing"
            );
        })
        .await?;
        Ok(done)
    }

    /// Reads every document of the model, a page at a time, and reports the computed values
    /// that disagree with their sources ([`Check::ComputedDrift`], one finding per field and
    /// page, listing the documents), as the [doctor](mod@crate::doctor) does over a sample.
    /// Writes nothing.
    #[operation(computed.check)]
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        let targets = crate::maintenance::targets::<ComputedFromSpec>(M::SCHEMA);
        crate::maintenance::check(&self.db, &targets).await
    }

    /// [`check`](Self::check), then a recomputation of each document it lists ([`BATCH`] per
    /// transaction, as [`rebuild`](Self::rebuild)), then a check again.
    #[operation(computed.repair)]
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        let targets = crate::maintenance::targets::<ComputedFromSpec>(M::SCHEMA);
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let mut repaired = 0;
        for ids in found.documents().chunks(BATCH) {
            repaired += self.batch(ids.to_vec()).await?.done.repaired;
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// Runs `batch` over every document's `_id`, in pages of [`BATCH`] by `_id`.
    async fn each_batch(&self, mut each: impl FnMut(Batch, u64) + Send) -> Result<()> {
        let raw = self.raw();
        let total = raw.estimated_document_count().await?;
        let mut last: Option<Bson> = None;
        loop {
            let filter = match &last {
                Some(l) => doc! { "_id": { "$gt": l.clone() } },
                None => Document::new(),
            };
            let find = raw
                .find(filter)
                .projection(doc! { "_id": 1 })
                .sort(doc! { "_id": 1 })
                .limit(BATCH as i64)
                .batch_size(BATCH as u32 + 1);
            let read = {
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                collect_in!(find, session.as_deref_mut())?
            };
            let page: Vec<Bson> = read
                .into_iter()
                .filter_map(|d| d.get("_id").cloned())
                .collect();
            let Some(end) = page.last().cloned() else {
                return Ok(());
            };
            let full = page.len() == BATCH;
            each(self.batch(page).await?, total);
            if !full {
                return Ok(());
            }
            last = Some(end);
        }
    }

    /// Reads the targets `ids`, aggregates their sources, and rewrites what differs: one
    /// transaction.
    async fn batch(&self, ids: Vec<Bson>) -> Result<Batch> {
        let raw = self.raw();
        // The computed fields: what is read, rewritten, and watched for what derives from them.
        let fields: Vec<&str> = self
            .feeds
            .iter()
            .flat_map(|feed| feed.specs.iter().map(|spec| spec.field()))
            .collect();
        let mut projection = doc! { "_id": 1 };
        for field in &fields {
            projection.insert(*field, 1);
        }
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let read = raw
                .find(doc! { "_id": { "$in": ids.clone() } })
                .projection(projection.clone())
                .batch_size(ids.len() as u32 + 1);
            let stored: Vec<Document> = collect_in!(read, s.as_deref_mut())?;
            // Per target: `$set` of the recomputed values, filter on the values replaced.
            let mut fixes: Vec<(Bson, Document, Document)> = Vec::new();
            for feed in &self.feeds {
                feed.upgrade_sources(&self.db, s.as_deref_mut(), &ids)
                    .await?;
                let found = aggregate_many(&self.db, s.as_deref_mut(), feed, &ids).await?;
                for target in &stored {
                    let Some(id) = target.get("_id") else {
                        continue;
                    };
                    let values = feed.values(found.get(&id_key(id)));
                    for spec in &feed.specs {
                        let computed = values.get(spec.field()).cloned().unwrap_or(Bson::Null);
                        let current = target.get(spec.field());
                        if agrees(spec.aggregate(), current, &computed) {
                            continue;
                        }
                        let fix = match fixes.iter_mut().find(|(i, _, _)| id_key(i) == id_key(id)) {
                            Some(fix) => fix,
                            None => {
                                fixes.push((
                                    id.clone(),
                                    doc! { "_id": id.clone() },
                                    Document::new(),
                                ));
                                fixes.last_mut().expect("just pushed")
                            }
                        };
                        let was = match current {
                            Some(v) => v.clone(),
                            None => Bson::Document(doc! { "$exists": false }),
                        };
                        fix.1.insert(spec.field(), was);
                        fix.2.insert(spec.field(), computed);
                    }
                }
            }
            let mut done = Recomputed {
                checked: stored.len() as u64,
                ..Recomputed::default()
            };
            if !fixes.is_empty() {
                // What derives from the values rewritten (a copy of a computed value, a sum of
                // it) is rebuilt from them after the write, in the same transaction: the
                // values before were wrong, so nothing moves by the difference. One `find`
                // before, only when something derives from them.
                let rewritten: Vec<Bson> = fixes.iter().map(|(id, _, _)| id.clone()).collect();
                let watch = crate::derived::watch(
                    &self.db,
                    s.as_deref_mut(),
                    M::SCHEMA,
                    Some(&fields),
                    &doc! { "_id": { "$in": rewritten } },
                )
                .await?;
                let updates: Vec<Document> = fixes
                    .iter()
                    .map(|(_, q, set)| doc! { "q": q.clone(), "u": { "$set": set.clone() } })
                    .collect();
                let command = doc! {
                    "update": M::SCHEMA.collection(),
                    "updates": updates,
                    "ordered": false,
                };
                let run = self.db.run_command(command);
                let reply = in_session!(run, s.as_deref_mut())?;
                if let Some(watch) = watch {
                    watch.rebuilt(&self.db, s).await?;
                }
                let matched = match reply.get("n") {
                    Some(Bson::Int32(n)) => *n as u64,
                    Some(Bson::Int64(n)) => *n as u64,
                    _ => 0,
                };
                done.repaired = matched;
                done.skipped = fixes.len() as u64 - matched.min(fixes.len() as u64);
                tracing::debug!(
                    repaired = done.repaired,
                    skipped = done.skipped,
                    "computed values rewritten"
                );
            }
            Ok(Batch { done })
        })
    }

    /// Recomputes every document every `interval`, in a background task, starting now: for
    /// values whose freshness need is low (a dashboard's totals). Each run's outcome is kept
    /// until read ([`Refresher::next`]) or returned by [`Refresher::stop`]; a failed run is
    /// also an `ERROR` event. Needs a Tokio runtime.
    pub fn refresh_every(&self, interval: Duration) -> Refresher
    where
        M: Send + Sync + 'static,
    {
        let fields = self.clone();
        Periodic::start(
            "computed.refresh",
            M::SCHEMA.name(),
            interval,
            false,
            move || {
                let fields = fields.clone();
                async move { fields.refresh_all().await }
            },
        )
    }
}

/// A background recomputation from [`ComputedFields::refresh_every`]: a [`Periodic`] whose
/// runs recompute every document of the model and rewrite those that differ.
pub type Refresher = Periodic<Recomputed>;

/// What a [`Refresher`] did, from [`Periodic::stop`].
pub type Refreshed = Stopped<Recomputed>;

impl Feed {
    /// Before a recomputation that writes: the sources of `targets` still stored in an older
    /// shape are rewritten at the current one, since the server aggregates stored field names.
    /// Nothing is sent for a source model without older versions.
    pub(super) async fn upgrade_sources(
        &self,
        db: &Database,
        s: Option<&mut ClientSession>,
        targets: &[Bson],
    ) -> mongodb::error::Result<()> {
        let filter = doc! { self.by: { "$in": targets.to_vec() } };
        crate::schema_version::upgrade::upgrade_matching(db, s, self.source, &filter).await
    }
}

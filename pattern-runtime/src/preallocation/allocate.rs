//! Allocating a grid's slots: in batches, skipping the slots that exist, once or in the
//! background.

use super::*;
use crate::span::Spanned as _;

/// What [`Slots::allocate`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocated {
    /// Slot documents inserted.
    pub inserted: u64,
    /// Slots that existed already (left as they were).
    pub existing: u64,
}

impl fmt::Display for Allocated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} slots inserted, {} existing left as they were",
            self.inserted, self.existing
        )
    }
}

/// How many slot documents one `insert` command carries.
const BATCH: usize = 1000;

/// The write errors of an insert that are not a slot existing already.
struct OtherFailures {
    /// Write errors in all.
    total: u64,
    /// Those that are not a duplicate on the grid's index.
    other: u64,
    /// The code of the first of those.
    code: Option<i32>,
}

/// How many of the insert's documents were slots that exist already (duplicates on the grid's
/// unique index `index`), when that is all that failed.
fn grid_duplicates(
    e: &mongodb::error::Error,
    index: &str,
) -> std::result::Result<Vec<usize>, OtherFailures> {
    let mongodb::error::ErrorKind::InsertMany(m) = e.kind.as_ref() else {
        return Err(OtherFailures {
            total: 0,
            other: 1,
            code: None,
        });
    };
    let errors = m.write_errors.as_deref().unwrap_or_default();
    // A slot whose `_id` exists is taken as allocated too: `_id`s made from the resource and
    // the slot (`"r1-1"`) name the slot, and a second run must skip it as well.
    let existing = |w: &&mongodb::error::IndexedWriteError| {
        w.code == DUPLICATE_KEY && (w.message.contains(index) || w.message.contains("index: _id_ "))
    };
    let others: Vec<_> = errors.iter().filter(|w| !existing(w)).collect();
    if others.is_empty() && m.write_concern_error.is_none() && !errors.is_empty() {
        return Ok(errors.iter().map(|w| w.index).collect());
    }
    Err(OtherFailures {
        total: errors.len() as u64,
        other: others.len().max(1) as u64,
        code: others.first().map(|w| w.code),
    })
}

/// A slot to allocate is free: no holder, no bit set.
fn check_free(spec: &SlotSpec, d: &Document) -> Result<()> {
    let taken = |field: &str, what: &Bson| Error::InvalidValue {
        field: field.to_owned(),
        reason: format!("a slot is allocated free, and this one holds {what}"),
    };
    if let Some(holder) = spec.holder() {
        match d.get(holder) {
            None | Some(Bson::Null) => {}
            Some(other) => return Err(taken(holder, other)),
        }
    }
    if let Some(bitmap) = spec.bitmap() {
        match d.get(bitmap) {
            Some(Bson::Int32(0)) | Some(Bson::Int64(0)) => {}
            None | Some(Bson::Null) => {
                return Err(Error::InvalidValue {
                    field: bitmap.to_owned(),
                    reason: "the bitmap is stored as 0 while every sub-slot is free; a missing \
                             or null bitmap never matches a booking"
                        .to_owned(),
                })
            }
            Some(other) => return Err(taken(bitmap, other)),
        }
    }
    Ok(())
}

/// A background allocation from [`Slots::allocate_every`]: a [`Periodic`] whose runs are
/// [`Slots::allocate`] of what the generator returns.
pub type Allocator = Periodic<Allocated>;

/// What an [`Allocator`] did, from [`Periodic::stop`].
pub type AllocatorStopped = Stopped<Allocated>;

impl<M: Preallocated> Slots<M> {
    /// Inserts the free slot documents `slots` (built by the caller, holder `None` and bitmap 0),
    /// 1 000 per unordered `insert`: one that exists already (same resource and slot, by the
    /// grid's unique index, or the same `_id`) is skipped and counted as `existing`, never
    /// overwritten; so is a repeat within `slots`. Run it as often as you like. (A slot whose
    /// `_id` is another slot's is skipped too: give each slot its own `_id`, an `ObjectId` or
    /// one made from its resource and slot.) It needs the grid's unique index,
    /// which [`sync`](crate::sync()) creates: it checks first (one `listIndexes`)
    /// and refuses to run without it ([`Error::CollectionConflict`]).
    ///
    /// A slot that is not free (a holder, a set bit) is [`Error::InvalidValue`], one over
    /// 16 MiB [`Error::DocumentTooLarge`], one that another pattern refuses as a whole
    /// document (an attribute array holding a key twice) [`Error::InvalidValue`], each before its
    /// batch is sent. A slot that sits in a tree (`#[in_tree]`) gets the path of the node it
    /// names, read once per batch, whatever path it was given ([`Error::NotFound`] of the node for a missing
    /// node). What other models derive from the slots (a subset of them, a
    /// count) follows each batch, after it: allocation runs in no transaction, so a failure in
    /// between is left for that pattern's `repair()`. Any other failure of
    /// an insert (another unique index, a validator) is returned too. When earlier batches were
    /// written, the error is [`Error::Incomplete`] with how many slots were inserted: run it again
    /// once the cause is fixed.
    pub async fn allocate(&self, slots: impl IntoIterator<Item = M>) -> Result<Allocated> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.allocate",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move { self.allocate_with_progress(slots, |_| {}).await },
        )
        .await
    }

    /// [`Slots::allocate`], calling `progress` after each batch: `done` counts the slots
    /// written or found existing so far (the total is not known: `slots` is an iterator).
    pub async fn allocate_with_progress(
        &self,
        slots: impl IntoIterator<Item = M>,
        mut progress: impl FnMut(&crate::progress::Progress),
    ) -> Result<Allocated> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.allocate",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let mut total = Allocated::default();
                // After a batch was written, an error says how much was.
                let partly = |total: Allocated, failed: usize, e: Error| {
                    if total.inserted + total.existing == 0 {
                        e
                    } else {
                        Error::Incomplete {
                            written: total.inserted as usize,
                            failed,
                            source: Box::new(e),
                        }
                    }
                };
                self.check_unique_index().await?;
                let mut batch = Vec::with_capacity(BATCH);
                let mut slots = slots.into_iter().peekable();
                while slots.peek().is_some() {
                    batch.clear();
                    for slot in slots.by_ref().take(BATCH) {
                        let d = bson::serialize_to_document(&slot)?;
                        // A slot placed in a tree gets its node's path below (as `Holders::insert`).
                        let not_holder = |spec: &'static dyn PatternSpec| {
                            (spec as &dyn std::any::Any).is::<crate::tree::HolderSpec>()
                        };
                        let checked = check_size(&d, M::SCHEMA.name())
                            .and_then(|_| check_free(M::SLOTS, &d))
                            .and_then(|_| {
                                crate::derived::check_document_write_except(
                                    M::SCHEMA,
                                    "insert",
                                    Some(&d),
                                    &not_holder,
                                )
                            });
                        if let Err(e) = checked {
                            return Err(partly(total, 1, e));
                        }
                        batch.push(d);
                    }
                    for holder in M::SCHEMA.specs::<crate::tree::HolderSpec>() {
                        if let Err(e) = holder.set_paths(&self.db, &mut batch).await {
                            return Err(partly(total, batch.len(), e));
                        }
                    }
                    let sent = batch.len() as u64;
                    let skipped = match self.raw().insert_many(batch.clone()).ordered(false).await {
                        Ok(_) => Vec::new(),
                        Err(e) => match grid_duplicates(&e, M::SLOTS.index().name()) {
                            Ok(skipped) => skipped,
                            Err(failed) => {
                                let inserted = sent.saturating_sub(failed.total);
                                total.inserted += inserted;
                                let code = crate::error::server_code(&e);
                                tracing::debug!(
                                    inserted,
                                    failed = failed.other,
                                    "allocation batch failed"
                                );
                                return Err(Error::Incomplete {
                                    written: total.inserted as usize,
                                    failed: failed.other as usize,
                                    source: Box::new(Error::Driver {
                                        code: failed.code.or(code),
                                        source: Box::new(e),
                                    }),
                                });
                            }
                        },
                    };
                    let existing = skipped.len() as u64;
                    // What derives from the slots (a subset of them, a count per holder) gets the
                    // slots this batch inserted, after the batch: allocation runs in no transaction,
                    // so a failure between the two leaves them for the dependents' `repair()`.
                    if crate::derived::has_insert_dependents(M::SCHEMA) {
                        let inserted: Vec<Document> = batch
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| !skipped.contains(i))
                            .map(|(_, d)| d.clone())
                            .collect();
                        let kept =
                            crate::derived::inserted(&self.db, None, M::SCHEMA, &inserted).await;
                        if let Err(e) = kept {
                            total.inserted += sent - existing;
                            return Err(partly(total, 0, e.into()));
                        }
                    }
                    total.inserted += sent - existing;
                    total.existing += existing;
                    tracing::info!(
                        inserted = sent - existing,
                        existing,
                        "allocation batch written"
                    );
                    progress(&crate::progress::Progress::new(
                        "preallocation.allocate",
                        "slots",
                        total.inserted + total.existing,
                        None,
                    ));
                }
                Ok(total)
            },
        )
        .await
    }

    /// The grid's unique index is on the server (one `listIndexes`): without it, allocating
    /// twice would store every slot twice.
    async fn check_unique_index(&self) -> Result<()> {
        let s = M::SLOTS;
        let ascending =
            |b: &Bson| matches!(b, Bson::Int32(1) | Bson::Int64(1)) || b.as_f64() == Some(1.0);
        let indexes = crate::sync::list_indexes(&self.db, s.collection()).await?;
        let found = indexes.iter().any(|i| {
            let keys: Vec<(&String, &Bson)> = i
                .get_document("key")
                .map(|k| k.iter().collect())
                .unwrap_or_default();
            i.get_bool("unique").unwrap_or(false)
                && keys.len() == 2
                && keys[0].0 == s.resource()
                && keys[1].0 == s.slot()
                && keys.iter().all(|(_, d)| ascending(d))
        });
        if found {
            return Ok(());
        }
        Err(Error::CollectionConflict {
            collection: s.collection().to_owned(),
            reason: format!(
                "the unique index `{}` on {{{}: 1, {}: 1}} is missing, and without it an \
                 allocation run twice would store every slot twice; create it with \
                 `pattern_runtime::sync(&db)` first",
                s.index().name(),
                s.resource(),
                s.slot()
            ),
        })
    }

    /// Runs `generate` now and then every `interval` in a background task, allocating what it
    /// returns (the slots of the next N days, say: the existing ones are skipped). Each run's
    /// outcome is kept for [`Periodic::next`]; a failed run is an `ERROR` event too, and the
    /// next run is one interval later. [`Periodic::stop`] ends it after the run under way.
    pub fn allocate_every<F>(&self, interval: Duration, mut generate: F) -> Allocator
    where
        M: Send + Sync + 'static,
        F: FnMut() -> Vec<M> + Send + 'static,
    {
        let slots = self.clone();
        Periodic::start(
            "preallocation.allocate",
            M::SCHEMA.name(),
            interval,
            false,
            move || {
                let (slots, batch) = (slots.clone(), generate());
                async move { slots.allocate(batch).await }
            },
        )
    }
}

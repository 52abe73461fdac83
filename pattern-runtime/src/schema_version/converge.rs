//! `converge`: rewriting every document stored in an older version at the current one, in
//! batches, each rewrite conditional on the document as it was read.

use crate::span::Spanned as _;
use std::collections::BTreeMap;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;

use super::SchemaVersioned;
use crate::error::{check_size, Error, Result};
use crate::model::{Model, ModelCollection};
use crate::progress::Progress;

/// How many documents `converge` reads and rewrites per batch: its memory is bounded by this
/// many documents, twice (as read and as rewritten).
pub const CONVERGE_BATCH: i64 = 500;

/// Passes over the collection in a row whose every rewrite lost its condition, after which
/// `converge` ends with the documents left older ([`Converged::left`]).
const IDLE_PASSES: u32 = 3;

/// What [`converge`](ModelCollection::converge) did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Converged {
    /// Documents this run rewrote at the current version, each once. Those another writer's
    /// toolkit update upgraded meanwhile (an update upgrades what it matches first) are not
    /// counted here (a rewrite of one that lost to that writer is in `retried`).
    pub upgraded: u64,
    /// Rewrites skipped because the document changed between its read and its rewrite (another
    /// writer won): each was read again and retried, until it was rewritten or found current.
    pub retried: u64,
    /// Older documents left as stored because every rewrite of three passes in a row over the
    /// collection lost its condition: documents written again between each read and its
    /// rewrite, or a server that does not find a document equal to itself as read (secantusdb,
    /// a document holding a NaN). The run ends there rather than retry for ever; run it again.
    pub left: u64,
    /// The documents that do not upgrade ([`Error::Upgrade`], or an upgraded document over the
    /// size limit), left as stored.
    pub failed: Vec<Error>,
}

/// The stored versions of a model's documents: what [`ModelCollection::schema_versions`]
/// counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VersionCounts {
    /// Documents per declared version (those without the field counted at the version that
    /// means), ascending.
    pub known: BTreeMap<u32, u64>,
    /// Documents whose version field holds a value the model does not declare, with that
    /// value (as its extended JSON) and how many.
    pub unknown: Vec<(String, u64)>,
    /// The current version.
    pub current: u32,
}

impl VersionCounts {
    /// Documents stored in an older version: what `converge` would rewrite.
    pub fn older(&self) -> u64 {
        self.known
            .iter()
            .filter(|(v, _)| **v != self.current)
            .map(|(_, n)| n)
            .sum()
    }

    /// Documents of an unknown version.
    pub fn unknown_total(&self) -> u64 {
        self.unknown.iter().map(|(_, n)| n).sum()
    }
}

impl<M: SchemaVersioned> ModelCollection<M> {
    /// Rewrites every document stored in an older version at the current one; see
    /// [`converge_with_progress`](Self::converge_with_progress).
    pub async fn converge(&self) -> Result<Converged> {
        self.converge_with_progress(|_| {}).await
    }

    /// Rewrites every document stored in an older version (those without the version field
    /// included, when that is an older version) at the current one, calling `progress` after
    /// each batch: `done` counts the documents upgraded, of `total` (those older when the run
    /// started).
    ///
    /// - **Batches.** [`CONVERGE_BATCH`] documents are read, upgraded, and rewritten in one
    ///   `update` command, never one transaction over the collection. Memory is bounded by the
    ///   batch. The batches come from one cursor over the older documents in `_id` order, so
    ///   the run's time grows linearly with them; when another writer changed documents
    ///   between their read and their rewrite, another pass from the start retries them.
    /// - **Concurrent writers lose nothing.** Each rewrite is conditional on the whole document
    ///   as it was read: a document another writer changed in between is left as that writer
    ///   left it, then read again and retried (counted in [`Converged::retried`]). Each document
    ///   is written once, from its stored version straight to the current one.
    /// - **Resumable and idempotent.** Stopped at any point (the future dropped, the process
    ///   killed), every document is either as stored or current: run it again and it goes on
    ///   with what is still older. Two runs at once each write a document at most once between
    ///   them.
    /// - **What it leaves.** Documents of an unknown (newer) version are not read. A document
    ///   that does not upgrade is left as stored and listed in [`Converged::failed`]; the run
    ///   goes on.
    /// - **Derived data.** When other models keep data from this one (extended-reference
    ///   copies, computed values), each document is rewritten on its own, and the dependents
    ///   of each one written are rebuilt once its batch is rewritten (outside a transaction: a
    ///   failure between the two is what `rebuild`/`repair` mends).
    ///
    /// Not in the caller's transaction: a handle bound to one is refused with
    /// [`Error::Unsupported`], before anything is sent.
    pub async fn converge_with_progress(
        &self,
        mut progress: impl FnMut(&Progress) + Send,
    ) -> Result<Converged> {
        crate::span::operation(tracing::info_span!("pattern_runtime::schema_version.converge", model = self.span_model(), collection = self.span_collection()), async move {
        if self.transaction().is_some() {
            return Err(Error::Unsupported {
                operation: "converge".to_owned(),
                reason: "converge runs its own batches and cannot run in a caller's transaction: \
                         call it on a handle without `in_transaction`",
            });
        }
        let spec = M::VERSIONS;
        let older = spec.older_filter();
        let coll = self.documents();
        let total = coll.count_documents(older.clone()).await?;
        let mut done = Converged::default();
        let mut refused: Vec<Bson> = Vec::new();
        // Passes in a row that sent rewrites and wrote none.
        let mut idle = 0;
        loop {
            // One pass: one cursor over the older documents in `_id` order, read a batch at a
            // time. (A `find` per batch, going on from the last `_id`, costs the embedded server
            // time in proportion to the documents after it: `converge` was quadratic.) A
            // document another writer changes ahead of the cursor is read as it is then.
            let mut after: Option<Bson> = None;
            let mut cursor = self.older_cursor(&older, &refused, None).await?;
            // What this pass sent rewrites for, wrote, and lost to another writer.
            let (mut worked, mut wrote, mut missed) = (false, 0u64, 0u64);
            loop {
                let batch = match next_batch(&mut cursor).await {
                    Ok(batch) => batch,
                    // The server dropped the cursor (idle too long, a restart): open another from
                    // the last `_id` read. `$gt` compares within a BSON type; the documents of
                    // other types are read by the next run.
                    Err(e)
                        if crate::error::server_code(&e)
                            == Some(crate::error::CURSOR_NOT_FOUND) =>
                    {
                        tracing::debug!(
                            "converge's cursor was lost; reading on from the last `_id`"
                        );
                        cursor = self.older_cursor(&older, &refused, after.as_ref()).await?;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                let Some(last) = batch.last() else {
                    break;
                };
                after = Some(last.get("_id").cloned().unwrap_or(Bson::Null));
                // A server whose `$nin` does not exclude an `_id` it cannot compare (secantusdb
                // and a NaN) returns a document already refused: it is not tried again.
                let batch: Vec<Document> = batch
                    .into_iter()
                    .filter(|d| {
                        let id = d.get("_id").unwrap_or(&Bson::Null);
                        !refused.iter().any(|r| crate::finding::same_stored(r, id))
                    })
                    .collect();
                if batch.is_empty() {
                    continue;
                }
                worked = true;
                let mut rewrites = Vec::with_capacity(batch.len());
                for stored in batch {
                    let id = stored.get("_id").cloned().unwrap_or(Bson::Null);
                    let upgraded = spec
                        .upgrade_document(M::SCHEMA, stored.clone())
                        .and_then(|new| check_size(&new, "an upgraded document").map(|_| new));
                    match upgraded {
                        Ok(new) => rewrites.push((stored, new)),
                        Err(e) => {
                            tracing::warn!(id = %id, error = %e, "document does not upgrade; left as stored");
                            refused.push(id);
                            done.failed.push(e);
                        }
                    }
                }
                let sent = rewrites.len() as u64;
                let rewritten = self.rewrite(rewrites).await?;
                let refused_now = rewritten.refused.len() as u64;
                for (id, e) in rewritten.refused {
                    refused.push(id);
                    done.failed.push(e);
                }
                done.upgraded += rewritten.written;
                let retried = sent.saturating_sub(rewritten.written + refused_now);
                done.retried += retried;
                wrote += rewritten.written;
                missed += retried;
                tracing::info!(
                    upgraded = done.upgraded,
                    retried = done.retried,
                    failed = done.failed.len(),
                    total,
                    "converging"
                );
                progress(&Progress::new(
                    "schema_version.converge",
                    "documents",
                    done.upgraded,
                    Some(total),
                ));
            }
            // Another pass from the start only for the documents another writer changed between
            // their read and their rewrite.
            if !worked || missed == 0 {
                break;
            }
            idle = if wrote > 0 { 0 } else { idle + 1 };
            if idle >= IDLE_PASSES {
                tracing::warn!(
                    left = missed,
                    passes = idle,
                    "passes in a row wrote nothing: every rewrite lost its condition; the \
                     documents are left older"
                );
                done.left = missed;
                break;
            }
        }
        Ok(done)
    })
        .await
    }

    /// The same handle, whose reads ([`get`](Self::get), [`find`](Self::find),
    /// [`find_one`](Self::find_one), [`find_each`](Self::find_each)) write back the documents
    /// they upgrade: the lazy half of converging. After the read, one `update` rewrites them at
    /// the current version, each conditional on the whole document as read, so that a write
    /// made in between wins and nothing is lost (that document is upgraded again at its next
    /// read). Documents other models keep data from are rewritten one by one with their
    /// dependents rebuilt, as [`converge`](Self::converge) does. Not in a transaction: a handle
    /// bound to one reads without writing back. A failed write-back is a `WARN` event; the
    /// read still returns.
    #[must_use]
    pub fn writing_back(&self) -> Self {
        self.with_write_back(true)
    }

    /// The documents of the collection per stored version (one aggregation over the whole
    /// collection): how far a [`converge`](Self::converge) has to go, and the documents of
    /// versions the model does not know.
    pub async fn schema_versions(&self) -> Result<VersionCounts> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::schema_version.counts",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move { version_counts(self.database(), M::SCHEMA, M::VERSIONS, None).await },
        )
        .await
    }
}

impl<M: Model> ModelCollection<M> {
    /// A cursor over the documents matching `older`, in `_id` order, but those `refused` (and
    /// those up to `after`, when given), [`CONVERGE_BATCH`] to a batch.
    async fn older_cursor(
        &self,
        older: &Document,
        refused: &[Bson],
        after: Option<&Bson>,
    ) -> Result<mongodb::Cursor<Document>> {
        // One condition on `_id` beside the version's, at the top level.
        let mut on_id = Document::new();
        if let Some(last) = after {
            on_id.insert("$gt", last.clone());
        }
        if !refused.is_empty() {
            on_id.insert("$nin", refused.to_vec());
        }
        let mut filter = older.clone();
        if !on_id.is_empty() {
            filter.insert("_id", on_id);
        }
        Ok(self
            .documents()
            .find(filter)
            .sort(doc! { "_id": 1 })
            .batch_size(CONVERGE_BATCH as u32)
            .await?)
    }
}

/// The next [`CONVERGE_BATCH`] documents of `cursor` (fewer at its end, none after it).
async fn next_batch(
    cursor: &mut mongodb::Cursor<Document>,
) -> mongodb::error::Result<Vec<Document>> {
    let mut batch = Vec::with_capacity(CONVERGE_BATCH as usize);
    while (batch.len() as i64) < CONVERGE_BATCH {
        match cursor.try_next().await? {
            Some(doc) => batch.push(doc),
            None => break,
        }
    }
    Ok(batch)
}

/// The documents of `model` per stored version.
pub(crate) async fn version_counts(
    db: &mongodb::Database,
    model: &'static crate::schema::ModelSchema,
    spec: &'static crate::stored::SchemaVersionSpec,
    max_time: Option<std::time::Duration>,
) -> Result<VersionCounts> {
    let coll: mongodb::Collection<Document> = db.collection(model.collection());
    let field = format!("${}", spec.field());
    let pipeline = vec![doc! { "$group": { "_id": field, "n": { "$sum": 1 } } }];
    let aggregate = coll.aggregate(pipeline);
    let aggregate = match max_time {
        Some(t) => aggregate.max_time(t),
        None => aggregate,
    };
    let groups: Vec<Document> = aggregate.await?.try_collect().await?;
    let mut counts = VersionCounts {
        current: spec.current(),
        ..VersionCounts::default()
    };
    for group in groups {
        let n = match group.get("n") {
            Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        // `$group` puts a missing field under `null`: the version without the field.
        let probe = match group.get("_id") {
            None | Some(Bson::Null) => Document::new(),
            Some(v) => doc! { spec.field(): v.clone() },
        };
        match spec.version_of(&probe) {
            Ok(v) => *counts.known.entry(v).or_default() += n,
            Err(value) => counts.unknown.push((value.to_string(), n)),
        }
    }
    Ok(counts)
}

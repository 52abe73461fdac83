//! Writing back documents read in an older schema version, upgraded: each rewrite conditional
//! on the document as it was read, in `update` commands, or one by one with their dependents
//! when other models keep data from this one. The model handle's reads write back what they
//! upgraded (on a handle that writes back); `converge` rewrites a whole collection.

use bson::{doc, Bson, Document, RawDocumentBuf};

use crate::derived;
use crate::error::{Error, Result};
use crate::model::{Model, ModelCollection};
use crate::stored::upgrade::replace_unchanged;

/// The command size a rewrite keeps each `update` under (the server takes 16 MiB).
const COMMAND_BYTES: usize = 8 * 1024 * 1024;

/// What a rewrite of upgraded documents did.
#[derive(Debug, Default)]
pub(crate) struct Rewritten {
    /// Documents written.
    pub(crate) written: u64,
    /// Documents the server refused (a unique index, a validator), with why.
    pub(crate) refused: Vec<(Bson, Error)>,
}

impl<M: Model> ModelCollection<M> {
    /// Rewrites `(stored, upgraded)` pairs: in `update` commands, or one by one with their
    /// dependents rebuilt when other models keep data from this one. How many were written
    /// (the others changed since they were read, or were refused).
    pub(crate) async fn rewrite(&self, rewrites: Vec<(Document, Document)>) -> Result<Rewritten> {
        if derived::has_dependents(M::SCHEMA, None) {
            self.rewrite_each(rewrites).await
        } else {
            self.rewrite_batch(rewrites).await
        }
    }

    /// Rewrites `(stored, upgraded)` pairs in `update` commands under the size limit.
    async fn rewrite_batch(&self, rewrites: Vec<(Document, Document)>) -> Result<Rewritten> {
        let mut done = Rewritten::default();
        let mut statements: Vec<Document> = Vec::new();
        let mut ids: Vec<Bson> = Vec::new();
        let mut bytes = 0;
        for (stored, new) in rewrites {
            let (q, u) = replace_unchanged(&stored, new);
            let statement = doc! { "q": q, "u": u, "multi": false, "upsert": false };
            let size = RawDocumentBuf::try_from(&statement).map_or(0, |r| r.as_bytes().len());
            if !statements.is_empty() && bytes + size > COMMAND_BYTES {
                self.send_updates(
                    std::mem::take(&mut statements),
                    std::mem::take(&mut ids),
                    &mut done,
                )
                .await?;
                bytes = 0;
            }
            bytes += size;
            ids.push(stored.get("_id").cloned().unwrap_or(Bson::Null));
            statements.push(statement);
        }
        if !statements.is_empty() {
            self.send_updates(statements, ids, &mut done).await?;
        }
        Ok(done)
    }

    /// One `update` command of `statements` (rewriting the documents `ids`, in order): the
    /// statements matched are written, those the server refused are listed with its reason.
    async fn send_updates(
        &self,
        statements: Vec<Document>,
        ids: Vec<Bson>,
        done: &mut Rewritten,
    ) -> Result<()> {
        let count = statements.len();
        let reply = self
            .database()
            .run_command(doc! {
                "update": M::SCHEMA.collection(),
                "updates": statements,
                "ordered": false,
            })
            .await?;
        if let Ok(errors) = reply.get_array("writeErrors") {
            for e in errors.iter().filter_map(Bson::as_document) {
                let index = match e.get("index") {
                    Some(Bson::Int32(i)) => usize::try_from(*i).ok(),
                    Some(Bson::Int64(i)) => usize::try_from(*i).ok(),
                    _ => None,
                };
                let id = index
                    .and_then(|i| ids.get(i))
                    .cloned()
                    .unwrap_or(Bson::Null);
                let reason = e.get_str("errmsg").unwrap_or("no message").to_owned();
                tracing::warn!(id = %id, reason, "rewrite refused by the server; left as stored");
                done.refused.push((id, self.refused(&reason)));
            }
        }
        // Matched by `_id`, written only when unchanged since the read: the modified ones.
        let written = match reply.get("nModified") {
            Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        done.written += written;
        tracing::debug!(sent = count, written, "documents rewritten");
        Ok(())
    }

    /// Rewrites each pair on its own, then rebuilds the data other models keep from each one
    /// written. The rebuilds come after the whole batch is rewritten: a rebuild that aggregates
    /// this model's documents upgrades those it reads first, so rebuilding after each rewrite
    /// would upgrade the rest of the batch behind this run's back (and its count).
    async fn rewrite_each(&self, rewrites: Vec<(Document, Document)>) -> Result<Rewritten> {
        let coll = self.documents();
        let mut done = Rewritten::default();
        let mut rebuilds = Vec::new();
        for (stored, new) in rewrites {
            let id = stored.get("_id").cloned().unwrap_or(Bson::Null);
            let watch = derived::watch_read(M::SCHEMA, None, std::slice::from_ref(&stored));
            let (filter, update) = replace_unchanged(&stored, new);
            match coll.update_one(filter, update).await {
                Ok(result) if result.modified_count == 1 => {
                    done.written += 1;
                    rebuilds.extend(watch);
                }
                Ok(_) => {}
                Err(e) => match Error::from(e) {
                    // The server refused this document (a unique index, a validator, its size):
                    // the others go on.
                    e @ (Error::DuplicateKey { .. }
                    | Error::DocumentTooLarge { .. }
                    | Error::ValidationFailed { .. }) => {
                        tracing::warn!(id = %id, error = %e, "rewrite refused by the server; left as stored");
                        done.refused.push((id, e));
                    }
                    e => return Err(e),
                },
            }
        }
        for watch in rebuilds {
            watch.rebuilt(self.database(), None).await?;
        }
        tracing::debug!(
            written = done.written,
            "documents rewritten, dependents rebuilt"
        );
        Ok(done)
    }

    /// The error of a rewrite the server refused.
    fn refused(&self, reason: &str) -> Error {
        Error::Malformed {
            collection: M::SCHEMA.collection().to_owned(),
            reason: format!("the server refused the upgraded document: {reason}"),
        }
    }
}

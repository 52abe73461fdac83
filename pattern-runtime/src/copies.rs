//! Copies of data held in other documents, rewritten with one `updateMany` per place that holds
//! them: the write loop and the report that [extended references](crate::extended_ref) (copied
//! fields) and [trees](crate::tree) (copied ancestor paths) share.

use std::fmt;

use bson::Document;
use mongodb::options::UpdateModifications;
use mongodb::{ClientSession, Database};

use crate::derived;
use crate::error::Error;
use crate::schema::ModelSchema;

/// What one propagation wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Propagation {
    /// One entry per `updateMany` sent, in the order sent.
    pub copies: Vec<CopiesUpdated>,
}

impl Propagation {
    /// Documents changed, over every embedding.
    pub fn modified(&self) -> u64 {
        self.copies.iter().map(|c| c.modified).sum()
    }
}

/// One `updateMany` of a propagation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiesUpdated {
    /// The embedding model.
    pub model: &'static str,
    /// Its collection.
    pub collection: &'static str,
    /// The copies' path (`customer`, `items.product`).
    pub path: String,
    /// The fields set (BSON names).
    pub fields: Vec<&'static str>,
    /// Documents holding a copy of the source.
    pub matched: u64,
    /// Documents changed.
    pub modified: u64,
}

impl fmt::Display for Propagation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.copies.is_empty() {
            return f.write_str("no copies to update");
        }
        for (i, c) in self.copies.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(
                f,
                "{}.{} [{}]: {} matched, {} modified",
                c.collection,
                c.path,
                c.fields.join(", "),
                c.matched,
                c.modified
            )?;
        }
        Ok(())
    }
}

/// One `updateMany` of copies, ready to send.
pub(crate) struct CopyWrite {
    /// The model holding the copies.
    pub(crate) model: &'static ModelSchema,
    /// The copies' path, for the report.
    pub(crate) path: String,
    /// The fields set, for the report.
    pub(crate) fields: Vec<&'static str>,
    pub(crate) filter: Document,
    /// An operator update or a pipeline.
    pub(crate) update: UpdateModifications,
    pub(crate) array_filters: Vec<Document>,
}

/// Without a transaction: the first `done` writes went through, then `error`.
pub(crate) struct Partial {
    pub(crate) done: usize,
    pub(crate) left: usize,
    pub(crate) error: mongodb::error::Error,
}

impl Partial {
    /// [`Error::Incomplete`]: what was written before the failure, and the failure.
    pub(crate) fn into_error(self) -> Error {
        Error::Incomplete {
            written: self.done,
            failed: self.left,
            source: Box::new(Error::from(self.error)),
        }
    }
}

/// Sends `writes` in order. In a transaction an error aborts everything; without one, it is
/// reported as [`Partial`] (the writes before it stay).
pub(crate) async fn write_copies(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    writes: Vec<CopyWrite>,
) -> mongodb::error::Result<std::result::Result<Propagation, Partial>> {
    let total = writes.len();
    let mut copies = Vec::with_capacity(total);
    for (done, w) in writes.into_iter().enumerate() {
        // Through the map of derived data: what derives from the fields it writes follows.
        let result = derived::update_many(
            db,
            session.as_deref_mut(),
            w.model,
            w.filter,
            w.update,
            w.array_filters,
            true,
        )
        .await;
        let result = match result {
            Ok(r) => r,
            Err(e) if session.is_none() => {
                tracing::debug!(
                    done,
                    left = total - done,
                    copies_model = w.model.name(),
                    copies_collection = w.model.collection(),
                    code = crate::error::server_code(&e),
                    error = %e,
                    "copies not updated: the writes without a transaction are incomplete"
                );
                return Ok(Err(Partial {
                    done,
                    left: total - done,
                    error: e,
                }));
            }
            Err(e) => return Err(e),
        };
        let c = CopiesUpdated {
            model: w.model.name(),
            collection: w.model.collection(),
            path: w.path,
            fields: w.fields,
            matched: result.matched_count,
            modified: result.modified_count,
        };
        tracing::debug!(
            copies_model = c.model,
            copies_collection = c.collection,
            path = %c.path,
            fields = ?c.fields,
            matched = c.matched,
            modified = c.modified,
            in_transaction = session.is_some(),
            "copies updated"
        );
        copies.push(c);
    }
    Ok(Ok(Propagation { copies }))
}

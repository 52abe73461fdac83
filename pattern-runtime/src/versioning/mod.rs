#![doc = include_str!("../../docs/versioning.md")]

use bson::{doc, Bson, DateTime, Document};
use mongodb::options::ReturnDocument;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::derived;
use crate::error::{check_size, Error, Result};
use crate::index::IndexSpec;
use crate::model::writes::{At, Revised, Writes, Written};
use crate::model::{IntoId, Model, ModelCollection, Pending};
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact};

mod read;
mod spec;
mod write;

pub use crate::model::Unversioned;
pub use spec::{VersionParts, VersionSpec, Versioned};

/// One archived revision.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(deserialize = "M: DeserializeOwned"))]
pub struct Revision<M> {
    /// The document's `_id`.
    pub doc_id: Bson,
    /// The version this snapshot had.
    pub version: i64,
    /// The document as it was at that version.
    pub snapshot: M,
    /// When it was archived (replaced, reverted or deleted).
    pub archived_at: DateTime,
    /// Whether this revision was archived by a delete (the document's last version).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

fn spec<M: Versioned>() -> &'static VersionSpec {
    match M::SCHEMA.spec::<VersionSpec>() {
        Some(v) => v,
        // The derive implements `Versioned` only with `#[versioned]`.
        None => unreachable!("Versioned without #[versioned]"),
    }
}

fn version_of(doc: &Document, field: &str) -> Option<i64> {
    match doc.get(field) {
        Some(Bson::Int32(i)) => Some(i64::from(*i)),
        Some(Bson::Int64(i)) => Some(*i),
        _ => None,
    }
}

/// A change to the current document.
#[derive(Clone, Copy)]
enum Change<'a> {
    /// Replace it with this document.
    Replace(&'a Document),
    /// Apply this operator update.
    Update(&'a Document),
}

/// One call's write, over the runs of its transaction's body: the `_id` its revision gets,
/// the same in every run, and how many runs began. A run after the first finds the document
/// already changed when an earlier run's commit went through though its result was lost (a
/// server that forgets its commit records across a restart answers the re-sent commit with a
/// `TransientTransactionError`, and the body runs again): the revision, committed with the
/// change, says whether it did.
struct Attempt {
    revision: Bson,
    runs: std::sync::atomic::AtomicU32,
}

impl Attempt {
    fn new() -> Self {
        Attempt {
            revision: Bson::ObjectId(bson::oid::ObjectId::new()),
            runs: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Counts a run of the body: whether an earlier one began.
    fn rerun(&self) -> bool {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) > 0
    }
}

/// What a write found when it did not go through.
enum Outcome<T> {
    Done(T),
    Missing,
    Stale(i64),
}

impl<M: Versioned> ModelCollection<M> {
    fn history_coll(&self) -> mongodb::Collection<Document> {
        self.database().collection(spec::<M>().history())
    }

    /// The caller's result; the errors are `DEBUG` events of the operation's span.
    fn outcome<T>(&self, id: Bson, expected: i64, outcome: Outcome<T>) -> Result<T> {
        match outcome {
            Outcome::Done(v) => Ok(v),
            Outcome::Missing => Err(Error::NotFound {
                collection: M::SCHEMA.collection().to_owned(),
                missing: Box::new(crate::error::Missing::Document { id }),
            }),
            Outcome::Stale(found) => Err(Error::VersionConflict {
                collection: M::SCHEMA.collection().to_owned(),
                id: Box::new(id),
                expected,
                found,
            }),
        }
    }
}

/// `DEBUG`: the current document was replaced or updated from version `v` to `v + 1`.
fn document_written(change: Change<'_>, v: i64, in_transaction: bool) {
    tracing::debug!(
        change = match change {
            Change::Replace(_) => "replace",
            Change::Update(_) => "update",
        },
        from_version = v,
        version = v + 1,
        in_transaction,
        "document written"
    );
}

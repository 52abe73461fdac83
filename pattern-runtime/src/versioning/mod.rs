//! Document versioning with optimistic locking: `#[versioned(history = "...")]`.
//!
//! The current document lives in the model's collection with an integer version; every change
//! first copies the stored document into the history collection as
//! `{ docId, version, snapshot, archivedAt }` (unique on `{docId, version}`), then replaces or
//! updates the current one under `{ _id, version: v }` with version `v + 1`, both in one
//! transaction. A caller holding a stale version gets [`Error::VersionConflict`], a missing
//! document [`Error::NotFound`]: never one for the other.
//!
//! ```
//! use pattern_runtime::query::Update;
//! use pattern_runtime::{At, Model, Versioned};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[model(collection = "articles")]
//! #[versioned(history = "article_revisions", keep = 50)]
//! struct Article {
//!     #[serde(rename = "_id")]
//!     id: u32,
//!     #[version]
//!     version: i64,
//!     title: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let articles = Article::collection(&db);
//! let mut a = Article { id: 1, version: 0, title: "v1".into() };
//! articles.insert(&mut a).await?;              // version 1
//! a.title = "v2".into();
//! articles.replace(&mut a).await?;             // version 2; revision 1 in article_revisions
//! // An operator update names the version it read:
//! articles.update(At(1, 2), Update::new().set(Article::FIELDS.title, "v3")).await?;
//! // Load, change, save; reload and retry on a conflict, at most 5 tries:
//! let saved = articles.modify(1, 5, |a| a.title.push('!')).await?;
//! let history = articles.history(1).await?;    // newest first
//! articles.revert(1, 1).await?;                // version 3, equal to revision 1
//! # Ok(()) }
//! ```
//!
//! # The `#[versioned]` attribute
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `history = "article_revisions"` | the history collection (not the model's own) | required |
//! | `keep = 50` | revisions kept per document; older ones are deleted after each write | all |
//! | `expire_after = "90d"` or seconds | a TTL on the revisions' `archivedAt` | never |
//!
//! One integer field (`i64`, `i32` or `u32`) carries `#[version]`: the version the document was
//! read at, set by the toolkit on every write.
//!
//! Data other models derive from a versioned model (its [extended reference](crate::extended_ref)
//! copies, fields [computed](crate::computed) from it) follows each `insert`, `replace`, `update`
//! and `delete`, in the same transaction, through the [map of derived data](crate::derived):
//! when such data exists, `update` reads the document once more after the write (the document
//! before it comes back from the write itself; a `replace` knows both, since it sends the new
//! document whole), `replace`, `insert` and `delete` read nothing more; otherwise nothing more is
//! sent. An `update` (whose result the toolkit does not build
//! itself) always reads the new document's size once, in its transaction, so that a document
//! too large to be archived later is refused now ([`Error::DocumentTooLarge`]); a `replace` checks
//! the size before sending. [`patterns`](crate::patterns) gives each operation's round trips.
//!
//! # Deleted, then inserted again
//!
//! `delete` archives the document's last version (marked [`deleted`](Revision::deleted)) and
//! keeps its history. A document inserted later with the same `_id` goes on from it: `insert`
//! reads the history's last version and inserts at the next one (a first insert is at version
//! 1), in one transaction, so `history` shows both lives as one gapless sequence and every
//! `replace` of the new document archives a version nobody archived before. A `delete` of the same
//! `_id` committing meanwhile makes the transaction run again. Without transactions (a
//! standalone server), an insert racing the `delete` of its `_id` may read the history before
//! the deleted revision is written: its first `replace` is then an [`Error::DuplicateKey`],
//! nothing written.
//!
//! A version field narrower than 64 bits (`i32`, `u32`) at its maximum takes no further
//! version: `insert`, `replace` and `update` are then [`Error::InvalidValue`], nothing written.
//!
//! # Without transactions
//!
//! On a deployment without transactions (a standalone server), the revision is written first,
//! under the unique `{docId, version}` index, then the current document under the version
//! condition. Two writers racing for one version cannot both archive it (the second gets a
//! conflict from the index), and no change is ever made without its revision; but a failure
//! between the two writes leaves a revision of a version that stays current: harmless for
//! `history`, and the next successful `replace` replaces it.
//!
//! # Tracing
//!
//! `insert`, `replace`, `update`, `revert` and `delete` run in `INFO` spans named
//! `pattern_runtime::versioning.<operation>`, `history` and `revision` in `DEBUG` spans, with the
//! fields `model`, `collection`, `id` and the version the caller holds (`expected_version`) or
//! asks for (`version`). Each write is followed by a `DEBUG` event: the document written at its
//! new version, the revision archived, old revisions trimmed. A version conflict or a missing
//! document is a `DEBUG` event of the span (the caller gets the error).

use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use mongodb::options::ReturnDocument;
use mongodb::ClientSession;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::derived;
use crate::error::{check_size, Error, Result};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model, ModelCollection, Pending};
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact};
use crate::writes::{At, Revised, Writes, Written};

mod read;
mod spec;
mod write;

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

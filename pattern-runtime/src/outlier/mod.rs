//! The outlier pattern: an embedded array that stays small for almost every document, and
//! overflows into linked documents for the few that grow far past the rest (`#[outlier]`).
//!
//! A social network keeps a user's posts in the user document; a few celebrities have
//! far too many. Their document carries `isOutlier: true` and `postsCount`, and the rest of their
//! posts live in overflow documents `{_id: "posts_user123_1", userId: "user123", seq: 1, posts:
//! [...]}` that point back at the user (and `full: true` once the next one exists). A reader of
//! a normal user reads one document; only an outlier's reader queries the overflow collection.
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `limit = 50` | items kept in the main document; the first item past it makes the document an outlier | required |
//! | `overflow = "user_posts"` | the collection of the overflow documents | required |
//! | `capacity = 1000` | items per overflow document | 1000 |
//! | `max_bytes = 8_388_608` | the byte budget of each document holding items (the main document and each overflow document), 1 KiB to 15 MiB | 8 MiB |
//! | `flag = is_outlier` | the model's `bool` field set once the array overflows | required |
//! | `count = posts_count` | the model's integer field counting every item, embedded or not | required |
//! | `parent = "userId"` | the overflow documents' field holding the main document's `_id` | `<model>Id`, the model's name in lower camel case |
//!
//! ```
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! struct Post {
//!     text: String,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count = posts_count)]
//!     posts: Vec<Post>,
//!     is_outlier: bool,
//!     posts_count: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! User::collection(&db)
//!     .raw()
//!     .insert_one(User { id: "user123".into(), posts: vec![], is_outlier: false, posts_count: 0 })
//!     .await?;
//! let posts = User::collection(&db).outlier(User::FIELDS.posts);
//! posts.push("user123", Post { text: "hello".into() }).await?;
//! let page = posts.page("user123", 0, 20).await?; // the first 20, wherever they live
//! assert_eq!(posts.count("user123").await?, 1);
//! # Ok(()) }
//! ```
//!
//! # Writes
//!
//! No write needs a transaction of its own. [`Outlier::push`] and [`push_many`](Outlier::push_many)
//! send one `findAndModify` of the main document, whatever it holds: an update pipeline
//! appends the items and adds them to the count where the document is not an outlier and its
//! count, its array and its size leave room for all of them; otherwise it adds them to the
//! count and sets the flag, and returns the count and the flag. That is the whole write for a
//! normal document: one round trip. A push that does not fit whole (by count or by bytes) goes
//! whole to the overflow documents, and every push after it too, so the items read back in the
//! order they were pushed (pushes running at the same moment may land in either order); the
//! main document keeps the items it had, up to `limit`. Only the last overflow document is
//! open: one conditional append to it (`{userId, seq: {$gte: <where the count puts it, minus
//! one>}, full: {$ne: true}, "posts.<capacity - n>": {$exists: false}}`, one or two documents
//! through the index, the size checked in the update's pipeline) is the common write, so a
//! push to an outlier costs two round trips. When it is full, the
//! writer closes it (`full: true`) and creates the next one with the next `seq`, by an insert
//! that the unique `{parent, seq}` index guards (a writer that loses the race reads the last
//! document again). A closed document never takes an item again, even after removals made room
//! in it. Concurrent pushers never wait on a lock or a transaction: no item is lost or stored
//! twice, the count stays exact, the main document never passes its limit and no overflow
//! document passes its capacity (tested with 8 writers).
//!
//! # Sizes: no document becomes unwritable
//!
//! Each document holding items keeps a byte budget (`max_bytes`, half of MongoDB's 16 MiB by
//! default) as well as its item count. The main document's pipeline also requires
//! `{$lte: [{$bsonSize: "$$ROOT"}, max_bytes - <the items' bytes>]}` (evaluated on that one
//! document: the filter is its `_id` alone, which every server answers through the index):
//! when the items would take it past its budget, the document becomes an outlier there,
//! before its `limit`, and the items go to the overflow documents. An overflow document that has no room left by
//! bytes is closed like one at its capacity, and the push goes on in the next. So the main
//! document keeps room for its other fields (up to 8 MiB by default), no document comes near
//! 16 MiB, and a user whose items are large keeps posting. An item that is alone over the
//! budget (but within 16 MiB) gets an overflow document of its own; one that would pass 16 MiB
//! inside an overflow document is refused ([`Error::DocumentTooLarge`]) before anything is
//! written. Item keys starting with `$` or holding `.` are refused ([`Error::InvalidValue`]).
//!
//! On a model with older schema versions (`#[schema_version]`), a push or a removal first
//! rewrites the main document at the current version when it is still stored in an older
//! one, as every toolkit update does (one `find` more): an upgrade after the push would not
//! know its items.
//!
//! A push that fails after counting its items returns [`Error::Incomplete`] (how many items
//! were written): the count is then ahead of the items, and [`Outlier::rebuild`] repairs it.
//! [`Outlier::remove`] and [`rebuild`](Outlier::rebuild) run in a transaction.
//!
//! # With other patterns, and in the caller's transaction
//!
//! When another pattern keeps data derived from the main document's items, count or flag (a
//! computed sum of the counts, an extended-reference copy of the count: the
//! [map of derived data](mod@crate::derived)), a push runs the same writes in one transaction
//! with a `find` of those fields before and after, and brings that data up to date in it.
//! [`Outlier::in_transaction`] binds the handle to the caller's [`Transaction`]: pushes,
//! removals and rebuilds run once in its session, and any error is returned as it is (nothing
//! is [`Incomplete`](Error::Incomplete): the caller's abort keeps nothing). Without either,
//! a push sends exactly the writes above.
//!
//! A main document deleted through another handle (the model handle ([`ModelCollection`](crate::ModelCollection)), a tree
//! cascade) takes its overflow documents with it, in that delete's transaction. The items,
//! the count and the flag are the pattern's own: another handle's update of them is refused
//! ([`Error::KeptField`]).
//!
//! # Reads
//!
//! [`items`](Outlier::items) reads the main document, then (for an outlier only) its overflow
//! documents in `seq` order through the `{parent, seq}` index, declared with the model and
//! synced with it; [`stream`](Outlier::stream) yields the same items as the cursor brings them. [`page`](Outlier::page) reads the main document, then for an outlier the
//! sizes of the overflow documents (one aggregation returning numbers) and only the overflow
//! documents holding the page. [`count`](Outlier::count) reads the count field.
//!
//! # Tracing
//!
//! Every operation runs in a span `pattern_runtime::outlier.<operation>` with `model`,
//! `collection`, `field` and `id`; a push records `overflowed` (how many of its items went to
//! overflow documents) and a `DEBUG` event per overflow document written.

use std::fmt;
use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use futures_util::stream::{self, BoxStream};
use futures_util::{StreamExt, TryStreamExt};
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection, Database};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{check_size, value_cost, Error, Result, ELEMENT_OVERHEAD};
use crate::finding::{CheckReport, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod check;
mod read;
mod spec;
mod write;

pub use check::OutlierState;
pub use spec::{OutlierParts, OutlierSpec};

/// The overflow documents' sequence field.
const SEQ: &str = "seq";
/// Set on an overflow document once the next one exists: it takes no more items.
const FULL: &str = "full";

/// An overflow document's field holding the bytes its writes added (the document without its
/// items, then each item's): an upper bound of its size, never lowered by a removal (a closed
/// document never takes an item again anyway), so that a push checks the byte budget with one
/// comparison.
const BYTES: &str = "bytes";
/// The bytes of an empty BSON document.
const EMPTY_DOCUMENT: usize = 5;

/// The operations of an `#[outlier]` field: `User::collection(&db).outlier(User::FIELDS.posts)`.
/// `P` is the model, `T` the item type. See the [module documentation](self).
#[derive_where::derive_where(Clone)]
pub struct Outlier<P, T> {
    db: Database,
    spec: &'static OutlierSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _types: PhantomData<fn() -> (P, T)>,
}

crate::span::spanned!(impl<P: Model, T> Outlier<P, T> => P::SCHEMA, P::SCHEMA.collection());

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> crate::txn::Bound
    for Outlier<P, T>
{
    fn bound(self, tx: Option<&Transaction>) -> Self {
        match tx {
            Some(tx) => self.in_transaction(tx),
            None => self,
        }
    }
}

crate::model::field_handle! {
    /// An `#[outlier(..)]` field's typed name: what [`ModelCollection::outlier`](crate::ModelCollection::outlier) takes.
    pub trait OutlierField {
        message = "`{Self}` is not an `#[outlier(..)]` field of `{M}`",
        label = "not an outlier field of `{M}`",
        note = "pass the array field of `{M}::FIELDS` declared with `#[outlier(..)]`",
    }
    /// The outlier array `field` of `M`'s documents: `push`, `items`, `page`, `check`, `repair`
    /// (see [`Outlier`]).
    pub fn outlier;
}

impl<P: Model, T> fmt::Debug for Outlier<P, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outlier")
            .field("model", &P::SCHEMA.name())
            .field("field", &self.spec.field())
            .field("limit", &self.spec.limit())
            .field("overflow", &self.spec.overflow())
            .field("capacity", &self.spec.capacity())
            .finish()
    }
}

/// A body's reason to abort its transaction.
#[derive(Debug, Clone, Copy)]
struct NoParent;

/// The text of an `_id` inside an overflow document's `_id` (`posts_user123_1`).
fn id_text(id: &Bson) -> String {
    match id {
        Bson::String(s) => s.clone(),
        Bson::ObjectId(o) => o.to_hex(),
        Bson::Int32(n) => n.to_string(),
        Bson::Int64(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// The items of the array `field` of `doc`.
fn items_in<T: DeserializeOwned>(doc: &Document, field: &str) -> Result<Vec<T>> {
    match doc.get(field) {
        Some(Bson::Array(a)) => Ok(a
            .iter()
            .map(|b| bson::deserialize_from_bson(b.clone()))
            .collect::<std::result::Result<Vec<T>, _>>()?),
        _ => Ok(Vec::new()),
    }
}

/// The key under which a projection of the main document returns its array's length: not the
/// count's or the flag's name (a count field may well be called `n`).
fn length_key(spec: &OutlierSpec) -> String {
    let mut key = "__length".to_owned();
    while key == spec.count() || key == spec.flag() {
        key.push('_');
    }
    key
}

fn int(value: Option<&Bson>) -> i64 {
    match value {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Double(n)) => *n as i64,
        _ => 0,
    }
}

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> Outlier<P, T> {
    /// The operations of the field `spec` of `P` in `db`.
    pub fn new(db: &Database, spec: &'static OutlierSpec) -> Self {
        Outlier {
            db: db.clone(),
            spec,
            tx: None,
            _types: PhantomData,
        }
    }

    /// The same field in the caller's transaction `tx`: its pushes, removals and rebuilds,
    /// with whatever derives from the main document's fields, run once in `tx`'s session;
    /// committing, aborting and retrying are the caller's. See [`Transaction`].
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        Outlier {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    /// The field's spec.
    pub fn spec(&self) -> &'static OutlierSpec {
        self.spec
    }

    fn main(&self) -> Collection<Document> {
        self.db.collection(P::SCHEMA.collection())
    }

    fn overflow(&self) -> Collection<Document> {
        self.db.collection(self.spec.overflow())
    }

    fn not_found(&self, id: Bson) -> Error {
        Error::NotFound {
            collection: P::SCHEMA.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Document { id }),
        }
    }
}

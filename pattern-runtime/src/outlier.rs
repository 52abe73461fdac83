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
//! let posts = User::posts_outlier(&db);
//! posts.push("user123", Post { text: "hello".into() }).await?;
//! let page = posts.page("user123", 0, 20).await?; // the first 20, wherever they live
//! assert_eq!(posts.count("user123").await?, 1);
//! # Ok(()) }
//! ```
//!
//! # Writes
//!
//! No write needs a transaction of its own. [`Outlier::push`] and [`push_many`](Outlier::push_many) first
//! try one conditional update of the main document: `$push` and `$inc` of the count where the
//! document is not an outlier and both its count and its array leave room. That is the whole
//! write for a normal document: one round trip. When it matches nothing, one `findAndModify`
//! increments the count and sets the flag, returning the count before: the one push that
//! crosses the limit puts what still fits into the main document (guarded by the array's
//! length, so it never passes the limit), and every item after that goes to the overflow
//! documents, so the items read back in the order they were pushed (pushes running at the same
//! moment may land in either order). Only the last overflow document is open: one conditional
//! `$push` into it (`{userId, seq: {$gte: <where the count puts it, minus one>}, full: {$ne:
//! true}, "posts.<capacity - n>": {$exists: false}}`, one or two documents through the index) is
//! the common write, so a push to an outlier costs three round trips (the main document's
//! conditional update, which misses on the flag; the count; the `$push`). When it is full, the
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
//! default) as well as its item count. The main document's conditional update also requires
//! `{$expr: {$lte: [{$bsonSize: "$$ROOT"}, max_bytes - <the items' bytes>]}}`: when the items
//! would take it past its budget, the document becomes an outlier there, before its `limit`,
//! and the items go to the overflow documents. An overflow document that has no room left by
//! bytes is closed like one at its capacity, and the push goes on in the next. So the main
//! document keeps room for its other fields (up to 8 MiB by default), no document comes near
//! 16 MiB, and a user whose items are large keeps posting. An item that is alone over the
//! budget (but within 16 MiB) gets an overflow document of its own; one that would pass 16 MiB
//! inside an overflow document is refused ([`Error::DocumentTooLarge`]) before anything is
//! written. Item keys starting with `$` or holding `.` are refused ([`Error::InvalidValue`]).
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
//! A main document deleted through another handle ([`Computing`](crate::Computing), a tree
//! cascade) takes its overflow documents with it, in that delete's transaction. The items,
//! the count and the flag are the pattern's own: another handle's update of them is refused
//! ([`Error::InvalidKey`]).
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

use crate::error::{check_size, room_for, value_cost, Error, Result, ELEMENT_OVERHEAD};
use crate::finding::{CheckReport, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact, Transaction};

/// An `#[outlier(...)]` field, as static data.
#[derive(Debug, Clone, Copy)]
pub struct OutlierSpec {
    parts: OutlierParts,
}

/// The parts of an [`OutlierSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct OutlierParts {
    /// The array field (BSON name), in the main and the overflow documents.
    pub field: &'static str,
    pub limit: u32,
    pub capacity: u32,
    /// The byte budget of a document holding items.
    pub max_bytes: u32,
    pub overflow: &'static str,
    /// The overflow documents' field holding the main document's `_id`.
    pub parent: &'static str,
    /// The main document's `bool` flag (BSON name).
    pub flag: &'static str,
    /// The main document's count of every item (BSON name).
    pub count: &'static str,
    /// `{parent: 1, seq: 1}`, unique.
    pub index: IndexSpec,
}

impl OutlierSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: OutlierParts) -> Self {
        OutlierSpec { parts }
    }

    /// The array field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// Items kept in the main document.
    pub fn limit(&self) -> u32 {
        self.parts.limit
    }

    /// Items per overflow document.
    pub fn capacity(&self) -> u32 {
        self.parts.capacity
    }

    /// The byte budget of a document holding items (the main document and each overflow
    /// document): a push that would take one past it goes to the next document instead.
    pub fn max_bytes(&self) -> u32 {
        self.parts.max_bytes
    }

    /// The overflow collection.
    pub fn overflow(&self) -> &'static str {
        self.parts.overflow
    }

    /// The overflow documents' field holding the main document's `_id`.
    pub fn parent(&self) -> &'static str {
        self.parts.parent
    }

    /// The flag field's BSON name.
    pub fn flag(&self) -> &'static str {
        self.parts.flag
    }

    /// The count field's BSON name.
    pub fn count(&self) -> &'static str {
        self.parts.count
    }

    /// The overflow collection's `{parent: 1, seq: 1}` unique index.
    pub fn index(&'static self) -> &'static IndexSpec {
        &self.parts.index
    }
}

/// The overflow documents of a main document, gone with it: one entry of the
/// [map of derived data](crate::derived), read on the `_id` alone so that only an insert or a
/// delete reaches it (no update changes an `_id`). A main document deleted through any handle
/// ([`Computing`](crate::Computing), a tree cascade) takes its overflow documents with it.
#[derive(Debug)]
struct OverflowOfDeleted {
    spec: &'static OutlierSpec,
    model: &'static ModelSchema,
}

impl crate::schema::Dependent for OverflowOfDeleted {
    fn source(&self) -> &'static ModelSchema {
        self.model
    }

    fn reads(&self) -> Vec<&'static str> {
        vec!["_id"]
    }

    fn pattern(&self) -> &'static str {
        "outlier"
    }

    fn describe(&self) -> String {
        format!(
            "{} (overflow documents of {}.{})",
            self.spec.overflow(),
            self.model.name(),
            self.spec.field()
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        session: Option<&'a mut ClientSession>,
        changes: &'a [crate::schema::Change],
    ) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            let gone: Vec<Bson> = changes
                .iter()
                .filter(|c| c.before.is_some() && c.after.is_none())
                .map(|c| c.id.clone())
                .collect();
            if gone.is_empty() {
                return Ok(());
            }
            let overflow: Collection<Document> = db.collection(self.spec.overflow());
            let delete = overflow.delete_many(doc! { self.spec.parent(): { "$in": gone } });
            let deleted = in_session!(delete, session)?;
            tracing::debug!(
                deleted = deleted.deleted_count,
                "overflow documents of deleted documents deleted"
            );
            Ok(())
        })
    }
}

impl PatternSpec for OutlierSpec {
    /// The overflow documents, deleted with their main document.
    fn dependents(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        vec![Box::new(OverflowOfDeleted { spec: self, model })]
    }

    /// The items, the count and the flag: pushes and removals keep them together.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        let why = "the outlier pattern keeps the items, their count and the flag together: \
                   `push`, `remove` or `rebuild` through the field's `Outlier` handle";
        vec![(self.field(), why), (self.count(), why), (self.flag(), why)]
    }

    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(self.parts.overflow, self.index())]
    }
    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded {
            field: self.parts.field,
            by: "`#[outlier]` (overflow documents past the limit)",
        }]
    }

    /// The sampled documents whose count or flag disagrees with their items: one aggregation
    /// of the overflow documents, as [`Outlier::check`] reads them.
    fn audit<'a>(
        &'static self,
        sample: &'a crate::schema::Sample<'a>,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        Some(Box::pin(audit_outlier(self, sample)))
    }
}

async fn audit_outlier(
    spec: &'static OutlierSpec,
    sample: &crate::schema::Sample<'_>,
) -> Result<Vec<crate::finding::Finding>> {
    let ids = sample.ids();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let groups: Vec<Document> = sample
        .db
        .collection::<Document>(spec.overflow())
        .aggregate([
            doc! { "$match": { spec.parent(): { "$in": ids } } },
            doc! { "$group": {
                "_id": format!("${}", spec.parent()),
                "docs": { "$sum": 1 },
                "items": { "$sum": { "$size": { "$ifNull": [format!("${}", spec.field()), []] } } },
            } },
        ])
        .max_time(sample.max_time)
        .await?
        .try_collect()
        .await?;
    let overflow: std::collections::HashMap<String, (i64, i64)> = groups
        .iter()
        .filter_map(|g| {
            Some((
                crate::finding::id_key(g.get("_id")?),
                (int(g.get("docs")), int(g.get("items"))),
            ))
        })
        .collect();
    let mut drifted = Vec::new();
    let mut first = None;
    for d in sample.documents {
        let Some(id) = d.get("_id") else {
            continue;
        };
        let embedded = match d.get(spec.field()) {
            Some(Bson::Array(items)) => items.len() as i64,
            _ => 0,
        };
        let (docs, items) = overflow
            .get(&crate::finding::id_key(id))
            .copied()
            .unwrap_or((0, 0));
        let count = int(d.get(spec.count()));
        let flag = d.get_bool(spec.flag()).unwrap_or(false);
        if count == embedded + items && flag == (docs > 0) {
            continue;
        }
        first.get_or_insert_with(|| {
            format!(
                "`_id` {id} counts {count} and flags {flag}, but holds {embedded} items and \
                 {items} more in {docs} overflow documents"
            )
        });
        drifted.push(id.clone());
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            crate::finding::Check::OutlierDrift,
            spec.count(),
            format!(
                "{} of {} sampled documents disagree with their `{}` items; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.field()
            ),
            format!(
                "`{}::{}_outlier(&db).repair()` (or `rebuild(id)` for each: {}); pushes and \
                 removals through it keep them",
                sample.model.name(),
                sample
                    .model
                    .field_by_bson_name(spec.field())
                    .map_or(spec.field(), |f| f.rust_name()),
                crate::finding::examples(&drifted)
            ),
        )
        .about(drifted)])
}

impl ModelSchema {
    /// The model's `#[outlier(...)]` fields.
    pub fn outliers(&self) -> impl Iterator<Item = &'static OutlierSpec> {
        self.specs::<OutlierSpec>()
    }
}

/// The overflow documents' sequence field.
const SEQ: &str = "seq";
/// Set on an overflow document once the next one exists: it takes no more items.
const FULL: &str = "full";
/// The bytes of an empty BSON document.
const EMPTY_DOCUMENT: usize = 5;

/// What [`Outlier::check`] found, and [`Outlier::rebuild`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlierState {
    /// Items in the main document.
    pub embedded: u64,
    /// Items in the overflow documents.
    pub overflowed: u64,
    /// Overflow documents.
    pub overflow_documents: u64,
    /// The stored count.
    pub stored_count: i64,
    /// The stored flag.
    pub stored_flag: bool,
}

impl OutlierState {
    /// Whether the count and the flag agree with the items (the flag: set exactly when overflow
    /// documents exist).
    pub fn is_consistent(&self) -> bool {
        self.stored_count == (self.embedded + self.overflowed) as i64
            && self.stored_flag == (self.overflow_documents > 0)
    }
}

/// The operations of an `#[outlier]` field: `User::posts_outlier(&db)`. `P` is the model, `T`
/// the item type. See the [module documentation](self).
pub struct Outlier<P, T> {
    db: Database,
    spec: &'static OutlierSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _types: PhantomData<fn() -> (P, T)>,
}

impl<P, T> Clone for Outlier<P, T> {
    fn clone(&self) -> Self {
        Outlier {
            db: self.db.clone(),
            spec: self.spec,
            tx: self.tx.clone(),
            _types: PhantomData,
        }
    }
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

/// How many of `items`, from the first, fit in `count` more items and `bytes` more bytes.
fn fit(items: &[(Bson, usize)], count: usize, bytes: usize) -> usize {
    let mut used = 0usize;
    items
        .iter()
        .take(count)
        .take_while(|(_, c)| {
            used = used.saturating_add(*c);
            used <= bytes
        })
        .count()
}

/// The items' values and their added bytes.
fn split(items: &[(Bson, usize)]) -> (Vec<Bson>, usize) {
    (
        items.iter().map(|(b, _)| b.clone()).collect(),
        items.iter().map(|(_, c)| *c).sum(),
    )
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
            id: Box::new(id),
        }
    }

    /// Appends `item` to the document `id`'s items. See [`push_many`](Self::push_many).
    pub async fn push(&self, id: impl IntoId<P::Id>, item: T) -> Result<()> {
        self.push_many(id, vec![item]).await
    }

    /// Appends `items`, in order, to the document `id`'s items: embedded while the main
    /// document has room and is no outlier, else into the overflow documents. One conditional
    /// update when they fit; otherwise the count (one `findAndModify`), then the `$push`es
    /// (no transaction: see the [module documentation](self)). [`Error::NotFound`] when there
    /// is no such document, [`Error::DocumentTooLarge`] for an item that alone would pass
    /// 16 MiB inside its document: nothing is written then. [`Error::Incomplete`] when a write
    /// after the count fails: [`rebuild`](Self::rebuild) repairs the count.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.push",
        skip_all,
        fields(
            model = P::SCHEMA.name(),
            collection = P::SCHEMA.collection(),
            field = self.spec.field(),
            id = tracing::field::Empty,
            items = items.len(),
            overflowed = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn push_many(&self, id: impl IntoId<P::Id>, items: Vec<T>) -> Result<()> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        if items.is_empty() {
            return Ok(());
        }
        let spec = self.spec;
        // An item alone in an overflow document: `_id`, parent, seq and the array around it,
        // measured once with an empty item; each item adds its own bytes to that.
        let around = check_size(
            &doc! {
                "_id": format!("{}_{}_0000000000", spec.field(), id_text(&id)),
                spec.parent(): id.clone(),
                SEQ: 0,
                spec.field(): [Document::new()],
            },
            "an outlier's overflow document",
        )? - EMPTY_DOCUMENT;
        let mut docs: Vec<(Bson, usize)> = Vec::with_capacity(items.len());
        for item in &items {
            // A document or a scalar (a `Vec<String>` of tags): stored as serde gives it.
            let doc = bson::serialize_to_bson(item)?;
            crate::literal::check_value(spec.field(), &doc)?;
            let c = value_cost(&doc)?;
            let alone = around + c - ELEMENT_OVERHEAD;
            if alone > crate::error::MAX_DOCUMENT_SIZE {
                return Err(Error::DocumentTooLarge {
                    what: "an item of an outlier array, inside its overflow document,".to_owned(),
                    size: Some(alone),
                    limit: crate::error::MAX_DOCUMENT_SIZE,
                });
            }
            docs.push((doc, c));
        }
        let fields = [spec.field(), spec.count(), spec.flag()];
        if self.tx.is_none() && !crate::derived::has_dependents(P::SCHEMA, Some(&fields)) {
            // Nothing derives from the main document's items or count: no transaction (see
            // the module documentation).
            return self.push_in(None, &id, docs).await;
        }
        // In the caller's transaction, or in one of its own so that what derives from the
        // count or the items moves with them: the same writes, in one session.
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            self.push_in(s.as_deref_mut(), &id, docs.clone())
                .await
                .map_err(crate::error::into_body)?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok(())
        })
    }

    /// The writes of [`push_many`](Self::push_many), in `s` when there is one (then an error
    /// is returned as it is: the transaction keeps nothing, so nothing is incomplete).
    async fn push_in(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
        docs: Vec<(Bson, usize)>,
    ) -> Result<()> {
        let spec = self.spec;
        let span = tracing::Span::current();
        let budget = spec.max_bytes() as usize;
        let in_transaction = s.is_some();
        let id = id.clone();
        let n = docs.len() as i64;
        let limit = i64::from(spec.limit());
        let main = self.main();
        let (all, all_bytes) = split(&docs);
        // Fast path: the items fit into a main document that is no outlier. The count, the
        // array and the byte budget all say there is room, so none can be passed.
        if n <= limit && all_bytes <= budget {
            let room = format!("{}.{}", spec.field(), limit - n);
            let update = main.update_one(
                doc! {
                    "_id": id.clone(),
                    spec.flag(): { "$ne": true },
                    spec.count(): { "$lte": limit - n },
                    room: { "$exists": false },
                    "$expr": room_for(budget, all_bytes),
                },
                doc! {
                    "$push": { spec.field(): { "$each": all } },
                    "$inc": { spec.count(): n },
                },
            );
            let result = in_session!(update, s.as_deref_mut())?;
            if result.matched_count == 1 {
                span.record("overflowed", 0);
                return Ok(());
            }
        }
        // The items do not all fit: count them and flag the document in one update, which
        // returns the count before them.
        let count = main
            .find_one_and_update(
                doc! { "_id": id.clone() },
                doc! { "$inc": { spec.count(): n }, "$set": { spec.flag(): true } },
            )
            .projection(doc! { spec.flag(): 1, spec.count(): 1 })
            .return_document(ReturnDocument::Before);
        let before =
            in_session!(count, s.as_deref_mut())?.ok_or_else(|| self.not_found(id.clone()))?;
        let outlier = before.get_bool(spec.flag()).unwrap_or(false);
        let stored = int(before.get(spec.count()));
        // Only the push that crosses the limit has items for the main document: every later
        // one finds the flag set.
        let room = if outlier {
            0
        } else {
            (limit - stored).clamp(0, n)
        } as usize;
        let mut rest: Vec<(Bson, usize)> = docs[room..].to_vec();
        if room > 0 {
            let (embedded, bytes) = split(&docs[..room]);
            let guard = format!("{}.{}", spec.field(), limit - room as i64);
            let push = if bytes > budget {
                None
            } else {
                let update = main.update_one(
                    doc! {
                        "_id": id.clone(),
                        guard: { "$exists": false },
                        "$expr": room_for(budget, bytes),
                    },
                    doc! { "$push": { spec.field(): { "$each": embedded } } },
                );
                Some(in_session!(update, s.as_deref_mut()))
            };
            match push {
                Some(Ok(r)) if r.matched_count == 1 => {}
                None | Some(Ok(_)) => {
                    // No room by bytes, or the count said there was room and the array
                    // disagrees (edited by hand): nothing goes past the limit or the budget,
                    // the items overflow instead.
                    let mut all = docs[..room].to_vec();
                    all.extend(rest);
                    rest = all;
                }
                Some(Err(e)) if in_transaction => return Err(e.into()),
                Some(Err(e)) => {
                    return Err(Error::Incomplete {
                        written: 0,
                        failed: docs.len(),
                        source: Box::new(e.into()),
                    })
                }
            }
        }
        let overflowed = rest.len();
        span.record("overflowed", overflowed);
        let total = rest.len();
        // Where the open overflow document should be, from the count: the search for it starts
        // one document before (a count lowered by removals, or overflow documents closed by
        // their byte budget before their capacity, only widen the search; one ahead of the
        // items makes it miss, and the slow path reads the last document instead).
        let first = (stored + room as i64 - limit).max(0);
        let from_seq = (first / i64::from(spec.capacity())).max(1);
        if let Err(e) = self.overflow_push(s, &id, &mut rest, from_seq).await {
            if in_transaction {
                return Err(e);
            }
            let failed = rest.len();
            tracing::debug!(
                written = docs.len() - failed,
                failed,
                "push incomplete: the count is ahead of the items; `rebuild` repairs it"
            );
            return Err(Error::Incomplete {
                written: docs.len() - failed,
                failed,
                source: Box::new(e),
            });
        }
        debug_assert!(rest.is_empty() && total == overflowed);
        Ok(())
    }

    /// Appends `rest` (items and their bytes) to the overflow documents of `id`, removing from
    /// it what it wrote.
    ///
    /// Only the last overflow document is open (`full` not set): one conditional `$push` into
    /// it, with room for the items by count and by bytes, is the common write; its filter
    /// starts at `from_seq` (from the count), so the `{parent, seq}` index reads one or two
    /// documents, not every one. When it has no room, the writer reads the last document and
    /// its size, fills what room it has, closes it (`full: true`) and creates the next one, at
    /// the next `seq`, by an insert that the unique `{parent, seq}` index guards; a writer that
    /// loses a race to another reads the last document again. A closed document never takes an
    /// item again, even after removals made room in it: the items stay in push order. An item
    /// larger than the byte budget (but within 16 MiB) gets a document of its own.
    ///
    /// In a session (`s`), a duplicate key is returned at once: the transaction is over, and a
    /// retry of the whole transaction reads the documents again.
    async fn overflow_push(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
        rest: &mut Vec<(Bson, usize)>,
        from_seq: i64,
    ) -> Result<()> {
        let spec = self.spec;
        let overflow = self.overflow();
        let capacity = spec.capacity() as usize;
        let budget = spec.max_bytes() as usize;
        while !rest.is_empty() {
            // The open document, if it has room for all (up to a document's worth).
            let take = fit(rest, capacity, budget).max(1);
            let (items, bytes) = split(&rest[..take]);
            let guard = format!("{}.{}", spec.field(), capacity - take);
            let push = overflow.update_one(
                doc! {
                    spec.parent(): id.clone(),
                    SEQ: { "$gte": from_seq },
                    FULL: { "$ne": true },
                    guard: { "$exists": false },
                    "$expr": room_for(budget, bytes),
                },
                doc! { "$push": { spec.field(): { "$each": items } } },
            );
            let pushed = in_session!(push, s.as_deref_mut())?;
            if pushed.matched_count == 1 {
                rest.drain(..take);
                continue;
            }
            // No room for all: the last document, its items and its bytes.
            let read = overflow.aggregate([
                doc! { "$match": { spec.parent(): id.clone() } },
                doc! { "$sort": { SEQ: -1 } },
                doc! { "$limit": 1 },
                doc! { "$project": {
                    SEQ: 1,
                    FULL: 1,
                    "n": { "$size": format!("${}", spec.field()) },
                    "bytes": { "$bsonSize": "$$ROOT" },
                } },
            ]);
            let last: Option<Document> = collect_in!(read, s.as_deref_mut())?.pop();
            let (seq, size, bytes_used, open) = match &last {
                Some(d) => (
                    int(d.get(SEQ)),
                    usize::try_from(int(d.get("n"))).unwrap_or(0),
                    usize::try_from(int(d.get("bytes"))).unwrap_or(budget),
                    !d.get_bool(FULL).unwrap_or(false),
                ),
                None => (0, capacity, budget, false),
            };
            if open && size < capacity {
                let take = fit(rest, capacity - size, budget.saturating_sub(bytes_used));
                if take > 0 {
                    let (items, bytes) = split(&rest[..take]);
                    let guard = format!("{}.{}", spec.field(), capacity - take);
                    let fill = overflow.update_one(
                        doc! {
                            spec.parent(): id.clone(),
                            SEQ: seq,
                            FULL: { "$ne": true },
                            guard: { "$exists": false },
                            "$expr": room_for(budget, bytes),
                        },
                        doc! { "$push": { spec.field(): { "$each": items } } },
                    );
                    let filled = in_session!(fill, s.as_deref_mut())?;
                    if filled.matched_count == 1 {
                        rest.drain(..take);
                        tracing::debug!(seq, added = take, "overflow document filled");
                    }
                    // Else another writer changed it first: read it again.
                    continue;
                }
                // Room by count, none by bytes: it is full.
            }
            if last.is_some() && open {
                let close = overflow.update_one(
                    doc! { spec.parent(): id.clone(), SEQ: seq },
                    doc! { "$set": { FULL: true } },
                );
                in_session!(close, s.as_deref_mut())?;
                tracing::debug!(
                    seq,
                    items = size,
                    bytes = bytes_used,
                    "overflow document closed"
                );
            }
            let seq = seq + 1;
            let take = fit(rest, capacity, budget).max(1);
            let (items, _) = split(&rest[..take]);
            let mut doc = doc! {
                "_id": format!("{}_{}_{seq}", spec.field(), id_text(id)),
                spec.parent(): id.clone(),
                SEQ: seq,
                spec.field(): items,
            };
            let insert = overflow.insert_one(doc.clone());
            let mut inserted = in_session!(insert, s.as_deref_mut());
            if let Err(e) = &inserted {
                if s.is_some() {
                    return Err(e.clone().into());
                }
                if Error::from(e.clone()).is_duplicate_key()
                    && overflow
                        .find_one(doc! { spec.parent(): id.clone(), SEQ: seq })
                        .projection(doc! { "_id": 1 })
                        .await?
                        .is_none()
                {
                    // The readable `_id` is another parent's (`7` and `"7"` read alike in it):
                    // this document takes an ObjectId instead.
                    doc.insert("_id", bson::oid::ObjectId::new());
                    inserted = overflow.insert_one(doc).await;
                }
            }
            match inserted {
                Ok(_) => {
                    rest.drain(..take);
                    tracing::debug!(seq, added = take, "overflow document created");
                }
                Err(e) if Error::from(e.clone()).is_duplicate_key() => {
                    // Another writer created it first (read the last document again), unless
                    // the `_id` is another parent's (`1` and `"1"` read alike in an `_id`).
                    let raced = overflow
                        .find_one(doc! { spec.parent(): id.clone(), SEQ: seq })
                        .projection(doc! { "_id": 1 })
                        .await?;
                    if raced.is_none() {
                        return Err(e.into());
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Reads the main document's flag, count and embedded items.
    async fn read_main(&self, id: &Bson) -> Result<(bool, i64, Vec<T>)> {
        let spec = self.spec;
        let main = self
            .main()
            .find_one(doc! { "_id": id.clone() })
            .projection(doc! { spec.flag(): 1, spec.count(): 1, spec.field(): 1 })
            .await?
            .ok_or_else(|| self.not_found(id.clone()))?;
        Ok((
            main.get_bool(spec.flag()).unwrap_or(false),
            int(main.get(spec.count())),
            items_in(&main, spec.field())?,
        ))
    }

    /// Every item of the document `id` as a stream, in push order: the embedded ones (read
    /// with the main document), then (for an outlier only) each overflow document's as the
    /// cursor brings it, so a long list is never all in memory. [`Error::NotFound`] when there
    /// is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.stream",
        level = "debug",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn stream(&self, id: impl IntoId<P::Id>) -> Result<BoxStream<'static, Result<T>>> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        self.stream_at(id).await
    }

    /// [`stream`](Self::stream) of an id already checked.
    async fn stream_at(&self, id: Bson) -> Result<BoxStream<'static, Result<T>>> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let (outlier, _, items) = self.read_main(&id).await?;
        let embedded = stream::iter(items.into_iter().map(Ok));
        if !outlier {
            return Ok(embedded.boxed());
        }
        let field = self.spec.field();
        let cursor = self
            .overflow()
            .find(doc! { self.spec.parent(): id })
            .projection(doc! { field: 1 })
            .sort(doc! { SEQ: 1 })
            .await?;
        let overflowed = cursor
            .map_err(Error::from)
            .and_then(move |d| async move { items_in::<T>(&d, field) })
            .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
            .try_flatten();
        Ok(embedded.chain(overflowed).boxed())
    }

    /// Every item of the document `id`, in the order they were pushed: the embedded ones, then
    /// (for an outlier only) the overflow documents' in `seq` order. [`Error::NotFound`] when
    /// there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.items",
        level = "debug",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn items(&self, id: impl IntoId<P::Id>) -> Result<Vec<T>> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        self.stream_at(id).await?.try_collect().await
    }

    /// The items `skip..skip + limit` of the document `id`, in push order: reads the main
    /// document, and for an outlier whose page reaches past it, the overflow documents' sizes
    /// (one aggregation) and only the overflow documents holding the page.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.page",
        level = "debug",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty, skip, limit),
        err(level = "debug")
    )]
    pub async fn page(&self, id: impl IntoId<P::Id>, skip: u64, limit: u64) -> Result<Vec<T>> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let (outlier, _, embedded) = self.read_main(&id).await?;
        let (skip, limit) = (
            usize::try_from(skip).unwrap_or(usize::MAX),
            usize::try_from(limit).unwrap_or(usize::MAX),
        );
        let embedded_len = embedded.len();
        let end = skip.saturating_add(limit);
        let mut page: Vec<T> = embedded.into_iter().skip(skip).take(limit).collect();
        if !outlier || end <= embedded_len || limit == 0 {
            return Ok(page);
        }
        // Overflow item k is item `embedded_len + k`: the page wants overflow items from..to.
        let (from, to) = (skip.saturating_sub(embedded_len), end - embedded_len);
        let mut wanted: Vec<i64> = Vec::new();
        let mut skip_in_first = 0;
        let mut at = 0usize;
        for (seq, n) in self.overflow_sizes(&id).await? {
            if at + n > from && at < to {
                if wanted.is_empty() {
                    skip_in_first = from.saturating_sub(at);
                }
                wanted.push(seq);
            }
            at += n;
            if at >= to {
                break;
            }
        }
        if wanted.is_empty() {
            return Ok(page);
        }
        let mut cursor = self
            .overflow()
            .find(doc! { self.spec.parent(): id, SEQ: { "$in": wanted } })
            .projection(doc! { self.spec.field(): 1 })
            .sort(doc! { SEQ: 1 })
            .await?;
        let mut items = Vec::new();
        while let Some(d) = cursor.try_next().await? {
            items.extend(items_in(&d, self.spec.field())?);
        }
        let room = limit - page.len();
        page.extend(items.into_iter().skip(skip_in_first).take(room));
        Ok(page)
    }

    /// The overflow documents of `id`: `(seq, items)`, in `seq` order (one aggregation).
    async fn overflow_sizes(&self, id: &Bson) -> Result<Vec<(i64, usize)>> {
        let cursor = self
            .overflow()
            .aggregate([
                doc! { "$match": { self.spec.parent(): id.clone() } },
                doc! { "$sort": { SEQ: 1 } },
                doc! { "$project": { SEQ: 1, "n": { "$size": format!("${}", self.spec.field()) } } },
            ])
            .await?;
        let docs: Vec<Document> = cursor.try_collect().await?;
        Ok(docs
            .iter()
            .map(|d| {
                (
                    int(d.get(SEQ)),
                    usize::try_from(int(d.get("n"))).unwrap_or(0),
                )
            })
            .collect())
    }

    /// How many items the document `id` has: its count field (one read of one field).
    #[tracing::instrument(
        name = "pattern_runtime::outlier.count",
        level = "debug",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn count(&self, id: impl IntoId<P::Id>) -> Result<i64> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let main = self
            .main()
            .find_one(doc! { "_id": id.clone() })
            .projection(doc! { self.spec.count(): 1 })
            .await?
            .ok_or_else(|| self.not_found(id))?;
        Ok(int(main.get(self.spec.count())))
    }

    /// Removes every item equal to `item`, wherever it lives (`$pull` from the main document
    /// and the overflow documents), and writes the count and flag again, in one transaction.
    /// Returns how many items were removed. Overflow documents left empty are deleted.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.remove",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn remove(&self, id: impl IntoId<P::Id>, item: &T) -> Result<u64> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let item = bson::serialize_to_bson(item)?;
        crate::literal::check_value(self.spec.field(), &item)?;
        // `$eq`: the item is compared whole, never read as a query on its fields (a regex in
        // it would match by pattern).
        let item = Bson::Document(doc! { "$eq": item });
        let spec = self.spec;
        let (main, overflow) = (self.main(), self.overflow());
        let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            let before = self.state_in(s.as_deref_mut(), &id).await?;
            let pull = main.update_one(
                doc! { "_id": id.clone() },
                doc! { "$pull": { spec.field(): item.clone() } },
            );
            in_session!(pull, s.as_deref_mut())?;
            let pull = overflow.update_many(
                doc! { spec.parent(): id.clone() },
                doc! { "$pull": { spec.field(): item.clone() } },
            );
            in_session!(pull, s.as_deref_mut())?;
            let empty = overflow
                .delete_many(doc! { spec.parent(): id.clone(), spec.field(): { "$size": 0 } });
            in_session!(empty, s.as_deref_mut())?;
            let after = self.write_state(s.as_deref_mut(), &id).await?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok((before.embedded + before.overflowed) - (after.embedded + after.overflowed))
        });
        self.map_no_parent(id, outcome)
    }

    /// Before a write of the main document's items, count or flag: what other patterns keep
    /// from them, as stored now (`None`, nothing sent, when nothing derives from them).
    async fn watch_main(
        &self,
        s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<Option<crate::derived::Watch>> {
        let spec = self.spec;
        crate::derived::watch(
            &self.db,
            s,
            P::SCHEMA,
            Some(&[spec.field(), spec.count(), spec.flag()]),
            &doc! { "_id": id.clone() },
        )
        .await
    }

    fn map_no_parent<R>(&self, id: Bson, outcome: Result<R>) -> Result<R> {
        match outcome {
            Err(Error::Driver { source, .. }) if source.get_custom::<NoParent>().is_some() => {
                Err(self.not_found(id))
            }
            other => other,
        }
    }

    /// What the document `id` holds, against its count and flag; writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.state",
        level = "debug",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn state(&self, id: impl IntoId<P::Id>) -> Result<OutlierState> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let outcome = self.state_in(None, &id).await.map_err(Error::from);
        self.map_no_parent(id, outcome)
    }

    /// Reads every document of the model, a page at a time, with its overflow documents'
    /// sizes, and reports those whose count or flag disagrees with their items
    /// ([`Check::OutlierDrift`](crate::doctor::Check::OutlierDrift), listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.check",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<CheckReport> {
        crate::maintenance::check(&self.db, &[(P::SCHEMA, self.spec as &dyn PatternSpec)]).await
    }

    /// [`check`](Self::check), then [`rebuild`](Self::rebuild) of each document it lists,
    /// then a check again.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.repair",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<RepairReport> {
        let targets = [(P::SCHEMA, self.spec as &dyn PatternSpec)];
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let mut repaired = 0;
        for id in found.documents() {
            match self.rebuild_at(id).await {
                Ok(_) => repaired += 1,
                // Deleted since the check: nothing to repair.
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// Writes the count and the flag of the document `id` from its items (after edits made
    /// around the toolkit), in one transaction; returns the state found before.
    #[tracing::instrument(
        name = "pattern_runtime::outlier.rebuild",
        skip_all,
        fields(model = P::SCHEMA.name(), collection = P::SCHEMA.collection(), field = self.spec.field(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn rebuild(&self, id: impl IntoId<P::Id>) -> Result<OutlierState> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        self.rebuild_at(id).await
    }

    /// [`rebuild`](Self::rebuild) of an id already checked.
    async fn rebuild_at(&self, id: Bson) -> Result<OutlierState> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            let before = self.state_in(s.as_deref_mut(), &id).await?;
            self.write_state(s.as_deref_mut(), &id).await?;
            if let Some(watch) = watch {
                // The count before may have been written around the toolkit: what derives
                // from it is rebuilt, not moved by the difference.
                watch.rebuilt(&self.db, s).await?;
            }
            Ok(before)
        });
        self.map_no_parent(id, outcome)
    }

    /// The state of `id` read in `s`: the main document's items, count and flag, and the
    /// overflow documents' sizes (one aggregation).
    async fn state_in(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<OutlierState> {
        let spec = self.spec;
        let main_collection = self.main();
        let read = main_collection.aggregate([
            doc! { "$match": { "_id": id.clone() } },
            doc! { "$project": {
                spec.flag(): 1,
                spec.count(): 1,
                "n": { "$size": { "$ifNull": [format!("${}", spec.field()), []] } },
            } },
        ]);
        let main: Option<Document> = collect_in!(read, s.as_deref_mut())?.pop();
        let Some(main) = main else {
            return Err(mongodb::error::Error::custom(NoParent));
        };
        let overflow_collection = self.overflow();
        let read = overflow_collection.aggregate([
            doc! { "$match": { spec.parent(): id.clone() } },
            doc! { "$group": {
                "_id": Bson::Null,
                "docs": { "$sum": 1 },
                "items": { "$sum": { "$size": format!("${}", spec.field()) } },
            } },
        ]);
        let overflow: Option<Document> = collect_in!(read, s)?.pop();
        let (docs, items) = overflow
            .map(|d| (int(d.get("docs")), int(d.get("items"))))
            .unwrap_or((0, 0));
        Ok(OutlierState {
            embedded: u64::try_from(int(main.get("n"))).unwrap_or(0),
            overflowed: u64::try_from(items).unwrap_or(0),
            overflow_documents: u64::try_from(docs).unwrap_or(0),
            stored_count: int(main.get(spec.count())),
            stored_flag: main.get_bool(spec.flag()).unwrap_or(false),
        })
    }

    /// Reads the state of `id` and writes its count and flag from it; returns the state after.
    async fn write_state(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<OutlierState> {
        let mut state = self.state_in(s.as_deref_mut(), id).await?;
        let count = (state.embedded + state.overflowed) as i64;
        let flag = state.overflow_documents > 0;
        let main = self.main();
        let write = main.update_one(
            doc! { "_id": id.clone() },
            doc! { "$set": { self.spec.count(): count, self.spec.flag(): flag } },
        );
        in_session!(write, s)?;
        state.stored_count = count;
        state.stored_flag = flag;
        Ok(state)
    }
}

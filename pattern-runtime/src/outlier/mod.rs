#![doc = include_str!("../../docs/outlier.md")]

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
/// How many receipts of its last pushes a main document keeps (see
/// [`OutlierSpec::receipts`]): a push sent again finds its own among them unless this many
/// other pushes of the same document came in between.
const RECEIPTS: usize = 4;
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
    /// An `#[outlier(..)]` field's typed name: what [`ModelCollection::outlier`](crate::model::ModelCollection::outlier) takes.
    pub trait OutlierField {
        message = "`{Self}` is not an `#[outlier(..)]` field of `{M}`",
        label = "not an outlier field of `{M}`",
        note = "pass the array field of `{M}::FIELDS` declared with `#[outlier(..)]`",
    }
    /// The outlier array `field` of `M`'s documents: `push`, `items`, `page`, `check`, `repair`
    /// (see [`Outlier`]).
    ///
    /// Bound to this handle's transaction when it has one
    /// ([`in_transaction`](crate::model::ModelCollection::in_transaction)).
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

/// The condition on an overflow document's parent field naming the main document `id`: equal,
/// and not an array (an array holding `id` would match a plain equality, and the checks, which
/// group by the field, do not count such a document as `id`'s).
fn parent_is(id: &Bson) -> Document {
    doc! { "$eq": id.clone(), "$not": { "$type": "array" } }
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
    /// committing, aborting and retrying are the caller's. Its reads ([`items`](Self::items),
    /// [`page`](Self::page), [`count`](Self::count), [`stream`](Self::stream),
    /// [`state`](Self::state), [`check`](Self::check)) run in that session too, and see the
    /// transaction's own writes. See [`Transaction`].
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

#![doc = include_str!("../../docs/attribute.md")]

use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{check_size, validate_key, Error, Result};
use crate::finding::{examples, Check, CheckReport, Finding, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{Fields, ModelSchema, PatternSpec, Sample};
use futures_util::future::BoxFuture;

mod check;
mod read;
mod spec;
mod write;

pub use read::{and, or, Condition, Order};
pub use spec::{AttributeItem, AttributeKey, AttributeParts, AttributeSpec};

/// The operations on one `#[attribute]` field of model `M`:
/// `Record::collection(&db).attributes(Record::FIELDS.specs)`.
#[derive_where::derive_where(Clone)]
pub struct Attributes<M, I> {
    db: mongodb::Database,
    spec: &'static AttributeSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
    _types: PhantomData<fn() -> (M, I)>,
}

crate::span::spanned!(impl<M: Model, I> Attributes<M, I> => M::SCHEMA, M::SCHEMA.collection());

crate::txn::bound!(impl<M, I> Attributes<M, I>);

crate::model::field_handle! {
    /// An `#[attribute]` field's typed name: what [`ModelCollection::attributes`](crate::model::ModelCollection::attributes) takes.
    pub trait AttributeField {
        message = "`{Self}` is not an `#[attribute]` field of `{M}`",
        label = "not an attribute field of `{M}`",
        note = "pass the field of `{M}::FIELDS` declared with `#[attribute]`",
    }
    /// The attributes of `field` in `M`'s documents: `set`, `unset`, `find`, `check`,
    /// `repair` (see [`Attributes`]).
    ///
    /// Bound to this handle's transaction when it has one
    /// ([`in_transaction`](crate::model::ModelCollection::in_transaction)).
    pub fn attributes;
}

impl<M: Model, I> std::fmt::Debug for Attributes<M, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attributes")
            .field("model", &M::SCHEMA.name())
            .field("field", &self.spec.field())
            .finish()
    }
}

// Unbounded, so the generated constructor of a field whose items are no attribute items does
// not repeat the error the derive reports at the item type.
impl<M, I> Attributes<M, I> {
    /// The operations on `spec`'s field of `M` in `db` (what the model handle's
    /// [`attributes`](crate::model::ModelCollection::attributes) calls).
    pub fn new(db: &mongodb::Database, spec: &'static AttributeSpec) -> Self {
        Attributes {
            db: db.clone(),
            spec,
            tx: None,
            _types: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same field in the caller's transaction `tx`: [`set`](Self::set) and
        /// [`unset`](Self::unset), with whatever derives from the field, run once in `tx`'s
        /// session; committing, aborting and retrying are the caller's. Its reads
        /// ([`get`](Self::get), [`find`](Self::find), [`find_sorted`](Self::find_sorted)) run in
        /// that session too, and see the transaction's own writes. See
        /// [`Transaction`](crate::txn::Transaction).
    }

    /// The field's static description.
    pub fn spec(&self) -> &'static AttributeSpec {
        self.spec
    }
}

impl<M: Model, I: AttributeItem> Attributes<M, I> {
    fn raw(&self) -> mongodb::Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// [`Error::NotFound`] for document `id` of `M`'s collection.
    fn not_found(id: Bson) -> Error {
        Error::NotFound {
            collection: M::SCHEMA.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Document { id }),
        }
    }

    /// The checked key.
    fn key_str(key: &I::Key) -> Result<String> {
        let k = key.as_key();
        validate_key(k)?;
        Ok(k.to_owned())
    }
}

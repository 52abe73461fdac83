//! The attribute pattern: measurements, specifications or prices that differ from document to
//! document, stored as an array of `{key, value, qualifiers...}` items with one compound
//! multikey index on `{<field>.<key>: 1, <field>.<value>: 1}` instead of one field and one index
//! per attribute.
//!
//! The item struct says which of its fields is the key and which the value, beside
//! `#[derive(Fields)]`; the model's field holding the items says `#[attribute]`:
//!
//! ```no_run
//! use bson::Bson;
//! use pattern_runtime::attribute::Order;
//! use pattern_runtime::query::Filter;
//! use pattern_runtime::{Fields, Model};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, Fields)]
//! #[attribute(key = name, value = value, qualifiers(unit))]
//! struct Vital {
//!     name: String,
//!     value: Bson,
//!     #[serde(skip_serializing_if = "Option::is_none")]
//!     unit: Option<String>,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[model(collection = "records")]
//! struct Record {
//!     #[serde(rename = "_id")]
//!     id: i32,
//!     // Declares the index {attributes.name: 1, attributes.value: 1}.
//!     #[attribute]
//!     attributes: Vec<Vital>,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let attributes = Record::collection(&db).attributes(Record::FIELDS.attributes);
//! // Replace the `bmi` item of record 1001, or append it: one atomic update.
//! let bmi = Vital { name: "bmi".into(), value: Bson::Double(26.1), unit: None };
//! attributes.set(1001, &bmi).await?;
//! // {attributes: {$elemMatch: {name: "bmi", value: {$gt: 25}}}}
//! let heavy = attributes.find(attributes.key(&"bmi".to_owned()).gt(25)?).await?;
//! // Records with a blood sugar, highest first.
//! let ranked = attributes
//!     .find_sorted(Filter::default(), &"blood_sugar".to_owned(), Order::Descending)
//!     .await?;
//! # let _ = (heavy, ranked);
//! # Ok(()) }
//! ```
//!
//! | where | option | meaning |
//! | --- | --- | --- |
//! | item struct, with `#[derive(Fields)]` | `#[attribute(key = name, value = value)]` | the item's key and value fields (Rust names; stored under serde's names) |
//! | item struct | `qualifiers(unit, ..)` | the other fields an item carries (units, sources); every field of the item must be the key, the value or a qualifier |
//! | item struct | the key field's type | `String`, or a fieldless enum with `#[derive(AttributeKey)]` (its serde names are the keys, so the set of keys is checked at compile time) |
//! | model field | `#[attribute]` on a `Vec` of such items | the index `{<field>.<key>: 1, <field>.<value>: 1}` and `M::collection(&db).attributes(M::FIELDS.field)` |
//! | model field | `#[attribute(name = "...")]` | the index name; by default mongod's (`attributes.name_1_attributes.value_1`) |
//!
//! # Operations
//! [`Attributes::set`] replaces the item with the same key in place, or appends it, in one
//! pipeline update: concurrent writers never leave two items with one key, and no item is lost.
//! [`Attributes::unset`] pulls every item with the key. Keys are checked before anything is sent:
//! an empty key, or one starting with `$` or containing `.` or NUL, is [`Error::InvalidKey`]; an
//! update the server refuses for size is [`Error::DocumentTooLarge`].
//!
//! Values are data: the item goes into the pipeline as `{$literal: item}`, so a value `"$120"`
//! or `"$patient"` and a unit `"$/month"` are stored as given, never read as field paths; an
//! item whose value is a document with a `$` key (`{$gt: 1}`, `{$concat: ..}`) is refused
//! ([`Error::InvalidValue`]) before anything is sent. NaN and the infinities are stored as
//! given: NaN sorts below every number in [`Attributes::find_sorted`] and matches no `gt`/`lt`
//! condition, as MongoDB compares it. Conditions compare with `$eq` and the comparison
//! operators: a regex or a document is compared as a value, never matched as a pattern.
//!
//! # A duplicate key written by someone else
//! Documents written outside the toolkit may hold two items with one key. Reading them works as
//! it does for any array (the model holds both items). [`Attributes::get`] and
//! [`Attributes::find_sorted`] use the *first* item with the key; a query matches when *any* item
//! with the key matches; the next [`Attributes::set`] of that key keeps the first position and
//! drops the others.

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
    /// An `#[attribute]` field's typed name: what [`ModelCollection::attributes`](crate::ModelCollection::attributes) takes.
    pub trait AttributeField {
        message = "`{Self}` is not an `#[attribute]` field of `{M}`",
        label = "not an attribute field of `{M}`",
        note = "pass the field of `{M}::FIELDS` declared with `#[attribute]`",
    }
    /// The attributes of `field` in `M`'s documents: `set`, `unset`, `find`, `check`,
    /// `repair` (see [`Attributes`]).
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
    /// [`attributes`](crate::ModelCollection::attributes) calls).
    pub fn new(db: &mongodb::Database, spec: &'static AttributeSpec) -> Self {
        Attributes {
            db: db.clone(),
            spec,
            tx: None,
            _types: PhantomData,
        }
    }

    crate::txn::in_transaction! {
        /// The same field in the caller's transaction `tx`: [`set`](Self::set),
        /// [`unset`](Self::unset) and [`get`](Self::get), with whatever derives from the field,
        /// run once in `tx`'s session; committing, aborting and retrying are the caller's. See
        /// [`Transaction`](crate::Transaction).
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

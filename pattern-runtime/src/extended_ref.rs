//! Extended references: copies of a few fields of another document, kept next to its `_id`, so
//! the common read needs no second query (`#[extended_ref]`).
//!
//! An order shows its customer's name and address on every page; the customer document holds much
//! more (email, loyalty points, preferences). The extended reference pattern stores the
//! customer's `_id` *and* copies of the fields the order needs. Copy fields that rarely change:
//! every change of a copied field has to reach every copy.
//!
//! # Declaring the reference: on the source
//!
//! `#[extended_ref(CustomerRef(name, address))]` on a `#[derive(Model)]` struct generates
//! `CustomerRef` next to it: a struct with the source's `_id` and the listed fields, under the
//! same serialized names, the same types and the same serde attributes, and
//! `From<&Customer> for CustomerRef`. A reference is always built from a source document, so a
//! copy cannot drift from its source's names or types. Several shapes may be declared, one per
//! attribute. Add `snapshot` to a shape whose copies must stay frozen at write time (a price at
//! order time): marking such a field `propagate` is then a compile error. A `#[versioned]` model
//! keeps its `propagate` copies through its own writes (`save`, `update`, `delete`, in the
//! transaction that archives the revision) and has no [`References`]. Add `derive(PartialEq)`
//! (any derives) to derive more than `Clone`, `Debug`, `Serialize` and `Deserialize`.
//!
//! # The `#[extended_ref]` options
//!
//! On the source model (the shape):
//!
//! | form | meaning | default |
//! | --- | --- | --- |
//! | `#[extended_ref(CustomerRef(name, address))]` | generates `CustomerRef { id, name, address }` (Rust field names of the source; `_id` always copied) | required: a name and at least one field |
//! | `snapshot` (`#[extended_ref(PriceRef(price), snapshot)]`) | copies are frozen when written; holders can only be `snapshot` | kept in sync where a holder says `propagate` |
//! | `derive(PartialEq, Hash)` | more derives on the generated type | `Clone`, `Debug`, `Serialize`, `Deserialize` |
//!
//! On the field of a model that holds references (the holder):
//!
//! | form | meaning | default |
//! | --- | --- | --- |
//! | `#[extended_ref(propagate)]` | kept in sync by [`References`] | none: a field holding references needs a mode |
//! | `#[extended_ref(snapshot)]` | frozen as written; never touched | none |
//! | `path = product` (with a mode) | the references are in the `product` field of the array's items (`Vec<OrderItem>`, `OrderItem: Fields`) | the field holds the references itself |
//!
//! # Embedding it: on the models that copy
//!
//! A field holding a reference (`CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or
//! `Option<Vec<CustomerRef>>`) carries a mode:
//! - `#[extended_ref(propagate)]`: kept in sync: [`References::update`] and
//!   [`References::replace`] carry every change of a copied field to it, and so does every
//!   other pattern's write of the source (a tree's rename, a versioned save, a
//!   [`Computing`](crate::Computing) update: the [map of derived data](crate::derived)). A
//!   deleted source leaves its copies as they are (the copy is the point: an order keeps its
//!   customer's name);
//! - `#[extended_ref(snapshot)]`: frozen as written; nothing in the toolkit ever touches it.
//!
//! For references inside the items of an array, mark the `Vec` of items and name the item's field
//! with `path`: `#[extended_ref(propagate, path = product)] items: Vec<OrderItem>`, where
//! `OrderItem` derives [`Fields`](crate::Fields) (its typed field names) and has a
//! `product: ProductRef` (or `Option<ProductRef>`, `Vec<ProductRef>`, ...) field. A stored field
//! that holds references but has no mode is a compile error: the choice between a live copy and a
//! frozen one is the point of the pattern, so it is never made by default. That covers references
//! nested deeper (`Vec<Vec<CustomerRef>>`, which propagation cannot address) and the fields of a
//! `#[derive(Fields)]` struct the model holds (`items: Vec<OrderItem>` without a mode, when
//! `OrderItem` holds a `ProductRef`). It cannot see into a struct without `#[derive(Fields)]`.
//! One `path` per field: when the items hold two references, only the one named is tracked.
//!
//! Every embedding declares an index on the copy's `_id` (`customer._id_1`,
//! `items.product._id_1`), created by [`sync_indexes`](crate::sync_indexes): propagation finds the
//! copies through it, and "the orders of this customer" is the same query.
//!
//! ```
//! use bson::oid::ObjectId;
//! use pattern_runtime::{Fields, Model, Referenced};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[extended_ref(CustomerRef(name, address))]
//! struct Customer {
//!     #[serde(rename = "_id")]
//!     id: ObjectId,
//!     name: String,
//!     address: String,
//!     loyalty_points: i64, // changes often: not copied
//! }
//!
//! #[derive(Clone, Serialize, Deserialize, Model)]
//! #[extended_ref(ProductRef(sku, title))]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: ObjectId,
//!     sku: String,
//!     title: String,
//!     price: f64,
//! }
//!
//! #[derive(Serialize, Deserialize, Fields)]
//! #[serde(rename_all = "camelCase")]
//! struct OrderItem {
//!     product: ProductRef,
//!     quantity: u32,
//!     price_at_order: f64, // the order's own snapshot of the price
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: ObjectId,
//!     #[extended_ref(propagate)]
//!     customer: CustomerRef,
//!     #[extended_ref(propagate, path = product)]
//!     items: Vec<OrderItem>,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let ada = Customer { id: ObjectId::new(), name: "Ada".into(), address: "1 Main St".into(), loyalty_points: 0 };
//! let pen = Product { id: ObjectId::new(), sku: "P-1".into(), title: "Pen".into(), price: 2.5 };
//! Customer::collection(&db).raw().insert_one(&ada).await?;
//! let order = Order {
//!     id: ObjectId::new(),
//!     customer: CustomerRef::from(&ada),
//!     items: vec![OrderItem { product: ProductRef::from(&pen), quantity: 2, price_at_order: pen.price }],
//! };
//! Order::collection(&db).raw().insert_one(&order).await?;
//!
//! // One transaction: the customer, then every `propagate` copy of `name`.
//! let report = Customer::references(&db)
//!     .update(ada.id, bson::doc! { "$set": { Customer::FIELDS.name: "Ada L." } })
//!     .await?;
//! assert_eq!(report.modified(), 1);
//! // A field nobody copies: one write, to the customer only.
//! Customer::references(&db)
//!     .update(ada.id, bson::doc! { "$inc": { Customer::FIELDS.loyalty_points: 10 } })
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Propagation
//!
//! [`References::update`] applies an operator update to the source and reads back the copied
//! fields it touched (one `findAndModify`), then sends one `updateMany` per embedding in
//! `propagate` mode whose reference copies one of them: `{<path>._id: id}` with `$set` of the new
//! values (`$unset` for a field the update removed), through `arrayFilters` for references inside
//! arrays, so only the matching elements change. Both run in one transaction, retried on
//! transient errors: a failure anywhere leaves the source and every copy as they were. An update
//! that touches no copied field is a single `update` of the source: no transaction, no
//! `updateMany`. [`References::replace`] does the same for a whole document and compares the old
//! copied values with the new ones. [`References::resync`] rewrites every copy from the stored
//! source, to repair copies after changes made outside the toolkit.
//!
//! The embedding models come from the registry of every `#[derive(Model)]` in the program (the one
//! [`registered_models`] reads): nothing is listed by hand. They are
//! looked for in the source's database.
//!
//! On a deployment without transactions (a standalone server) the source is written first, then
//! the copies, unprotected: a failure in between is [`Error::Incomplete`] (the source and
//! `written` embeddings are updated, `failed` are not) and [`References::resync`] repairs it; two
//! writers changing one source at once may leave the copies with the older value.
//!
//! Changes made with the driver directly (`Customer::collection(&db).raw().update_one(..)`), by other
//! programs or in the shell are not propagated by these calls: [`References::resync`] repairs one
//! document's copies, and [`References::watch`] follows a change stream on the source collection
//! and propagates each change as it comes.
//!
//! # Tracing
//!
//! [`References::update`], [`replace`](References::replace), [`resync`](References::resync) and
//! [`watch`](References::watch) run in `INFO` spans named `pattern_runtime::extended_ref.<operation>`
//! with the fields `model` and `collection` (the source's), `id` and `embeddings` (how many
//! `updateMany`s the propagation sends); each change a [`Watcher`] propagates runs in an `INFO`
//! span `pattern_runtime::extended_ref.watcher.next` (opened once the change has arrived, so the
//! wait is not in it) with `operation` (`update` or `replace`). Each `updateMany` is followed by a
//! `DEBUG` event with the embedding's model, collection and path, the fields set, and the copies
//! matched and modified; a partial propagation without a transaction is a `DEBUG` event too, and
//! the [`Error::Incomplete`] it returns says the rest.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use futures_util::{StreamExt, TryStreamExt};
use mongodb::change_stream::event::{ChangeStreamEvent, OperationType, ResumeToken};
use mongodb::change_stream::ChangeStream;
use mongodb::options::{FullDocumentType, ReturnDocument};
use mongodb::{ClientSession, Collection, Database};
use tracing::Instrument;

use crate::copies::{write_copies, CopyWrite, Partial};
pub use crate::copies::{CopiesUpdated, Propagation};
use crate::derived::{self, Change, Dependent};
use crate::error::{check_size, Error, Result};
use crate::finding::{id_key, Check, Finding};
use crate::index::IndexSpec;
use crate::literal::touched_fields;
use crate::model::{IntoId, Model};
pub use crate::schema::Mode;
use crate::schema::{registered_models, FieldName, ModelSchema, PatternSpec, Sample};
use crate::txn::{in_session, transact, Transaction};

/// A reference type generated by `#[extended_ref(Name(fields..))]` on its source model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extended reference",
    label = "not an extended reference",
    note = "declare the reference on its source model, `#[extended_ref(CustomerRef(name, ..))]`, \
            and hold `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or \
            `Option<Vec<CustomerRef>>`"
)]
pub trait ExtendedRef: Sized + 'static {
    /// The model the reference points to and copies from.
    type Source: Model;
    /// Which fields are copied.
    const SPEC: &'static RefSpec;
}

/// A model with `#[extended_ref(...)]` reference shapes that can be kept in sync: documents
/// other models copy from. Generated by the derive (not for a model whose shapes are all
/// `snapshot`: nothing is ever propagated from it; nor for a `#[versioned]` model, whose own
/// writes keep its copies).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `References` writes",
    label = "no copies kept through `References`",
    note = "a `#[versioned]` source keeps its copies through its own writes (`save`, `update`, `delete`), which also archive its revisions (`References::<{Self}>::new(&db)` still checks, resyncs and repairs its copies); a source whose shapes are all `snapshot` has no copies to keep"
)]
pub trait Referenced: Model {
    /// The operations that change this model's documents and keep every copy in sync.
    fn references(db: &Database) -> References<Self> {
        References::new(db)
    }
}

/// One reference shape, as static data: `CustomerRef(name, address)` on `Customer`.
#[derive(Debug, Clone, Copy)]
pub struct RefSpec {
    parts: RefParts,
}

/// The parts of a [`RefSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RefParts {
    pub name: &'static str,
    pub source: &'static str,
    pub source_collection: &'static str,
    pub fields: &'static [&'static str],
    pub snapshot_only: bool,
}

impl RefSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: RefParts) -> Self {
        RefSpec { parts }
    }

    /// The reference type's name (`CustomerRef`).
    pub fn name(&self) -> &'static str {
        self.parts.name
    }

    /// The source model's name (`Customer`).
    pub fn source(&self) -> &'static str {
        self.parts.source
    }

    /// The source's collection.
    pub fn source_collection(&self) -> &'static str {
        self.parts.source_collection
    }

    /// The copied fields' BSON names (the `_id` is always copied and not listed).
    pub fn fields(&self) -> &'static [&'static str] {
        self.parts.fields
    }

    /// Whether the shape was declared `snapshot`: it can only be embedded frozen.
    pub fn is_snapshot_only(&self) -> bool {
        self.parts.snapshot_only
    }

    /// Every registered field holding this reference, in any mode.
    pub fn embeddings(&'static self) -> Vec<&'static Embedding> {
        registered_models()
            .into_iter()
            .flat_map(|schema| schema.embeddings())
            .filter(|e| std::ptr::eq(e.reference(), self))
            .collect()
    }
}

impl PatternSpec for RefSpec {}

impl PatternSpec for Embedding {
    /// A `propagate` copy's copied fields (`customer.name`), not a single-document copy itself
    /// (`customer`: re-pointing it to another source writes it whole): they follow the source.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        if self.mode() != Mode::Propagate {
            return Vec::new();
        }
        static PATHS: std::sync::OnceLock<std::sync::Mutex<HashMap<usize, Vec<&'static str>>>> =
            std::sync::OnceLock::new();
        let paths = PATHS.get_or_init(Default::default);
        let mut paths = paths
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // One leaked string per copied field of each embedding, made once.
        let kept = paths
            .entry(self as *const Embedding as usize)
            .or_insert_with(|| {
                self.reference()
                    .fields()
                    .iter()
                    .map(|f| &*Box::leak(format!("{}.{f}", self.path()).into_boxed_str()))
                    .collect()
            });
        kept.iter()
            .map(|p| {
                (
                    *p,
                    "a propagated copy follows its source: change the source (through \
                     `References`, or its versioned writes), or `resync` the copy",
                )
            })
            .collect()
    }

    /// The index on the copies' `_id`, in the embedding model's collection.
    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(self.collection(), self.index())]
    }

    /// A `propagate` embedding's copies, kept from the source's copied fields.
    fn dependents(&'static self, _model: &'static ModelSchema) -> Vec<Box<dyn Dependent>> {
        let r = self.reference();
        match (
            self.mode(),
            derived::model_named(r.source(), r.source_collection()),
        ) {
            (Mode::Propagate, Some(source)) => vec![Box::new(Copies {
                embedding: self,
                source,
            })],
            _ => Vec::new(),
        }
    }

    /// The copies in the sampled documents that differ from their source (`propagate` only:
    /// a snapshot differs by design). One `find` of the sources.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        (self.mode() == Mode::Propagate).then(|| Box::pin(audit_copies(self, sample)) as _)
    }
}

async fn audit_copies(embedding: &'static Embedding, sample: &Sample<'_>) -> Result<Vec<Finding>> {
    let copies: Vec<&Document> = sample
        .documents
        .iter()
        .flat_map(|d| embedding.copies_in(d))
        .collect();
    let ids: Vec<Bson> = copies
        .iter()
        .filter_map(|c| c.get("_id").cloned())
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let reference = embedding.reference();
    let mut projection = doc! { "_id": 1 };
    for f in reference.fields() {
        projection.insert(*f, 1);
    }
    let sources: HashMap<String, Document> = sample
        .db
        .collection::<Document>(reference.source_collection())
        .find(doc! { "_id": { "$in": ids } })
        .projection(projection)
        .max_time(sample.max_time)
        .await?
        .try_collect::<Vec<Document>>()
        .await?
        .into_iter()
        .map(|d| (d.get("_id").map(id_key).unwrap_or_default(), d))
        .collect();
    let mut stale: Vec<Bson> = Vec::new();
    let mut first = None;
    for copy in &copies {
        let Some(source) = copy.get("_id").and_then(|id| sources.get(&id_key(id))) else {
            continue; // a dangling reference: the relation check's, not a stale copy
        };
        if let Some(f) = reference
            .fields()
            .iter()
            .find(|f| !crate::finding::same_value(copy.get(**f), source.get(**f)))
        {
            let id = copy.get("_id").cloned().unwrap_or(Bson::Null);
            first.get_or_insert_with(|| {
                let show =
                    |v: Option<&Bson>| v.map_or_else(|| "missing".to_owned(), ToString::to_string);
                format!(
                    "`{f}` of {id} is {} in the copy, {} in the source",
                    show(copy.get(*f)),
                    show(source.get(*f))
                )
            });
            if !stale.contains(&id) {
                stale.push(id);
            }
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    let n = copies.len();
    Ok(vec![sample
        .finding(
            Check::StaleCopy,
            embedding.path(),
            format!(
                "copies of {} `{}` documents (of {n} copies in {} sampled documents) differ from \
             their source; {first}",
                stale.len(),
                reference.source(),
                sample.documents.len()
            ),
            {
                let versioned =
                    crate::derived::model_named(reference.source(), reference.source_collection())
                        .is_some_and(|m| m.versioning().is_some());
                let (handle, kept) = if versioned {
                    (
                        format!("References::<{}>::new(&db)", reference.source()),
                        "the versioned model's own writes keep them in sync",
                    )
                } else {
                    (
                        format!("{}::references(&db)", reference.source()),
                        "writes through `references` keep them in sync",
                    )
                };
                format!(
                    "`{handle}.repair()` (or `resync(id)` for each source `_id` listed: {}), \
                     which rewrites every copy; {kept}",
                    crate::finding::examples(&stale)
                )
            },
        )
        .about(stale)])
}

impl ModelSchema {
    /// The extended reference shapes declared on this model (`#[extended_ref(CustomerRef(..))]`):
    /// what other models copy from it.
    pub fn references(&self) -> Vec<&'static RefSpec> {
        self.specs().collect()
    }

    /// The fields of this model that hold extended references to other models.
    pub fn embeddings(&self) -> Vec<&'static Embedding> {
        self.specs().collect()
    }
}

/// The copies of one `propagate` embedding, as the [map of derived data](crate::derived) keeps
/// them: every write of a copied field of the source, by any pattern, rewrites them.
#[derive(Debug)]
struct Copies {
    embedding: &'static Embedding,
    source: &'static ModelSchema,
}

impl Dependent for Copies {
    fn source(&self) -> &'static ModelSchema {
        self.source
    }

    fn pattern(&self) -> &'static str {
        "extended_ref"
    }

    fn reads(&self) -> Vec<&'static str> {
        self.embedding.reference().fields().to_vec()
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} (extended reference copies of {})",
            self.embedding.model(),
            self.embedding.path(),
            self.source.name()
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        session: Option<&'a mut ClientSession>,
        changes: &'a [Change],
    ) -> BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            let e = self.embedding;
            // A deleted source leaves its copies as they were (see the module docs).
            let writes = changes
                .iter()
                .filter_map(|c| {
                    let after = c.after.as_ref()?;
                    let fields: Vec<&'static str> = e
                        .reference()
                        .fields()
                        .iter()
                        .copied()
                        .filter(|f| c.changed(f))
                        .collect();
                    if fields.is_empty() {
                        return None;
                    }
                    let (filter, update, array_filters) = e.copy_update(&c.id, after, &fields);
                    Some(CopyWrite {
                        model: e.model(),
                        collection: e.collection(),
                        path: e.path(),
                        fields,
                        filter,
                        update: update.into(),
                        array_filters,
                    })
                })
                .collect();
            match write_copies(db, session, writes).await? {
                Ok(_) => Ok(()),
                Err(partial) => Err(partial.error),
            }
        })
    }
}

/// A field of a model that holds an extended reference: `Order.customer`, `Order.items[].product`.
#[derive(Debug, Clone, Copy)]
pub struct Embedding {
    parts: EmbeddingParts,
}

/// The parts of an [`Embedding`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct EmbeddingParts {
    pub model: &'static str,
    pub collection: &'static str,
    /// The model's field (BSON name).
    pub field: &'static str,
    /// Whether `field` is an array of items (`path = ..`) whose `slot` field holds the references.
    pub items: bool,
    /// The field holding the references: `field` itself, or the items' field.
    pub slot: Slot,
    pub mode: Mode,
}

/// A field holding references, as the derive's compile-time checks resolve it. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    pub reference: &'static RefSpec,
    /// An array of references.
    pub many: bool,
    /// The field's BSON name.
    pub name: &'static str,
}

impl Embedding {
    #[doc(hidden)]
    pub const fn from_parts(parts: EmbeddingParts) -> Self {
        Embedding { parts }
    }

    /// The embedding model's name.
    pub fn model(&self) -> &'static str {
        self.parts.model
    }

    /// The embedding model's collection.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// `propagate` or `snapshot`.
    pub fn mode(&self) -> Mode {
        self.parts.mode
    }

    /// The embedded reference shape.
    pub fn reference(&self) -> &'static RefSpec {
        self.parts.slot.reference
    }

    /// The dotted path of the copies: `customer`, `items.product`.
    pub fn path(&self) -> String {
        if self.parts.items {
            format!("{}.{}", self.parts.field, self.parts.slot.name)
        } else {
            self.parts.field.to_owned()
        }
    }

    /// The copies held in one stored document of the embedding model.
    fn copies_in<'d>(&self, document: &'d Document) -> Vec<&'d Document> {
        let refs = |value: Option<&'d Bson>| -> Vec<&'d Document> {
            match value {
                Some(Bson::Document(d)) => vec![d],
                Some(Bson::Array(items)) => items.iter().filter_map(Bson::as_document).collect(),
                _ => Vec::new(),
            }
        };
        if self.parts.items {
            refs(document.get(self.parts.field))
                .into_iter()
                .flat_map(|item| refs(item.get(self.parts.slot.name)))
                .collect()
        } else {
            refs(document.get(self.parts.field))
        }
    }

    /// The index on the copies' `_id` (`{ "items.product._id": 1 }`, named as mongod would).
    pub fn index(&'static self) -> &'static IndexSpec {
        // The path is only known at run time (an item's field name comes from another type's
        // derive), and index specifications are static data: build each one once per process.
        static BUILT: OnceLock<Mutex<HashMap<usize, &'static IndexSpec>>> = OnceLock::new();
        let built = BUILT.get_or_init(Default::default);
        let mut built = built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = std::ptr::from_ref(self) as usize;
        built.entry(key).or_insert_with(|| {
            let path: &'static str = Box::leak(format!("{}._id", self.path()).into_boxed_str());
            Box::leak(Box::new(IndexSpec::ascending_leaked(path)))
        })
    }

    /// The filter, update and array filters that set `fields` of every copy of `id` to their
    /// values in `source` (`$unset` where `source` lacks one).
    pub(crate) fn copy_update(
        &self,
        id: &Bson,
        source: &Document,
        fields: &[&str],
    ) -> (Document, Document, Vec<Document>) {
        let field = self.parts.field;
        let item = self.parts.slot.name;
        let (filter_path, prefix, array_filters) = match (self.parts.items, self.parts.slot.many) {
            (false, false) => (format!("{field}._id"), format!("{field}."), vec![]),
            (false, true) => (
                format!("{field}._id"),
                format!("{field}.$[r]."),
                vec![doc! { "r._id": id.clone() }],
            ),
            (true, false) => (
                format!("{field}.{item}._id"),
                format!("{field}.$[i].{item}."),
                vec![doc! { format!("i.{item}._id"): id.clone() }],
            ),
            (true, true) => (
                format!("{field}.{item}._id"),
                format!("{field}.$[i].{item}.$[r]."),
                vec![
                    doc! { format!("i.{item}._id"): id.clone() },
                    doc! { "r._id": id.clone() },
                ],
            ),
        };
        let mut set = Document::new();
        let mut unset = Document::new();
        for f in fields {
            match source.get(*f) {
                Some(value) => set.insert(format!("{prefix}{f}"), value.clone()),
                None => unset.insert(format!("{prefix}{f}"), ""),
            };
        }
        let mut update = Document::new();
        if !set.is_empty() {
            update.insert("$set", set);
        }
        if !unset.is_empty() {
            update.insert("$unset", unset);
        }
        (doc! { filter_path: id.clone() }, update, array_filters)
    }
}

/// The operations on a [`Referenced`] model that keep its copies in sync: from
/// `Customer::references(&db)`. See the [module documentation](self).
pub struct References<M> {
    db: Database,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for References<M> {
    fn clone(&self) -> Self {
        References {
            db: self.db.clone(),
            tx: self.tx.clone(),
            _model: PhantomData,
        }
    }
}

impl<M: Model> fmt::Debug for References<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("References")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.db.name())
            .finish()
    }
}

/// What the body of a propagation came to.
enum Step {
    Done(Propagation),
    Missing,
    /// Without a transaction: the source and some copies were written, then an error.
    Partial(Partial),
}

/// The `updateMany`s of one propagation: which embedding, which of its fields.
type Targets = Vec<(&'static Embedding, Vec<&'static str>)>;

impl<M: Model> References<M> {
    /// The operations on `M` in `db`.
    pub fn new(db: &Database) -> Self {
        References {
            db: db.clone(),
            tx: None,
            _model: PhantomData,
        }
    }

    /// The same writes in the caller's transaction `tx`: [`update`](References::update),
    /// [`replace`](References::replace) and [`resync`](References::resync) run in it, with their
    /// copies, and commit or abort with it (see [`Transaction`]).
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        References {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// Every field of every registered model that keeps a copy of `M` in sync.
    pub fn propagated(&self) -> Vec<&'static Embedding> {
        M::SCHEMA
            .references()
            .iter()
            .flat_map(|r| r.embeddings())
            .filter(|e| e.mode() == Mode::Propagate)
            .collect()
    }

    /// The embeddings to update when `touched` copied fields change, with the fields of each.
    fn targets(&self, touched: &dyn Fn(&str) -> bool) -> Targets {
        self.propagated()
            .into_iter()
            .filter_map(|e| {
                let fields: Vec<&'static str> = e
                    .reference()
                    .fields()
                    .iter()
                    .copied()
                    .filter(|f| touched(f))
                    .collect();
                (!fields.is_empty()).then_some((e, fields))
            })
            .collect()
    }

    fn projection(targets: &Targets) -> Document {
        let fields: BTreeSet<&str> = targets
            .iter()
            .flat_map(|(_, f)| f.iter().copied())
            .collect();
        fields
            .into_iter()
            .map(|f| (f.to_owned(), Bson::Int32(1)))
            .collect()
    }

    fn not_found(&self, id: Bson) -> Error {
        Error::NotFound {
            collection: M::SCHEMA.collection().to_owned(),
            id: Box::new(id),
        }
    }

    fn finish(&self, id: Bson, step: Step) -> Result<Propagation> {
        match step {
            Step::Done(p) => Ok(p),
            Step::Missing => Err(self.not_found(id)),
            Step::Partial(partial) => Err(partial.into_error()),
        }
    }
}

impl<M: Referenced> References<M> {
    /// Applies an operator update (`{ "$set": { "name": "Ada L." } }`) to the document `id`, and
    /// carries the copied fields it touches to every copy in `propagate` mode, in one transaction.
    ///
    /// A copied field counts as touched when an update key is that field or a path below it
    /// (`address.city` touches `address`). Updates touching no copied field send one `update`
    /// and nothing else. Keys are checked before anything is sent: only operators at the top, no
    /// `$` or empty segments in field paths, and never `_id` ([`Error::InvalidKey`]). A missing
    /// document is [`Error::NotFound`], with nothing written.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.update",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            id = tracing::field::Empty,
            embeddings = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn update(&self, id: impl IntoId<M::Id>, update: Document) -> Result<Propagation> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let touched = touched_fields(
            &update,
            "an extended reference's `_id` never changes: the copies are found by it",
        )?;
        derived::check_kept(
            M::SCHEMA,
            derived::update_paths(&update).iter().map(String::as_str),
        )?;
        let targets = self.targets(&|f| touched.contains(f));
        span.record("embeddings", targets.len());
        // The other data derived from the fields it touches (counts, ...), kept through the map.
        let touched_list: Vec<&str> = touched.iter().map(String::as_str).collect();
        let others = !derived::reading(M::SCHEMA, Some(&touched_list), &not_copies).is_empty();
        if targets.is_empty() && !others && self.tx.is_none() {
            let result = self
                .raw()
                .update_one(doc! { "_id": id.clone() }, update)
                .await?;
            tracing::debug!(
                matched = result.matched_count,
                modified = result.modified_count,
                "source updated; it touched no copied field, so no copy to update"
            );
            if result.matched_count == 0 {
                return Err(self.not_found(id));
            }
            return Ok(Propagation::default());
        }
        let projection = Self::projection(&targets);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let filter = doc! { "_id": id.clone() };
            let watch = derived::watch_except(
                &self.db,
                s.as_deref_mut(),
                M::SCHEMA,
                Some(&touched_list),
                &filter,
                &not_copies,
            )
            .await?;
            let find = raw
                .find_one_and_update(filter, update.clone())
                .return_document(ReturnDocument::After)
                .projection(projection.clone());
            let source = in_session!(find, s.as_deref_mut())?;
            if source.is_some() {
                source_written(s.is_some());
            }
            let step = self
                .copy_from(s.as_deref_mut(), &id, source, &targets)
                .await?;
            if let (Some(watch), Step::Done(_)) = (watch, &step) {
                watch.after(&self.db, s).await?;
            }
            Ok(step)
        })?;
        self.finish(id, step)
    }

    /// Replaces the stored document with `doc` (matched by its `_id`) and carries the copied
    /// fields whose values changed to every copy in `propagate` mode, in one transaction.
    ///
    /// [`Error::DocumentTooLarge`] over 16 MiB and [`Error::NotFound`] when no document has that
    /// `_id`; [`Error::InvalidKey`] when `doc` changes a field another pattern keeps (a tree
    /// node's key or parent, a holder's node, a computed value, an outlier's count: read the
    /// document first and change it through that pattern); nothing is written then. The kept
    /// fields ride in the replace's filter, so this costs nothing when none changes.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.replace",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            id = tracing::field::Empty,
            embeddings = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn replace(&self, doc: &M) -> Result<Propagation> {
        let new = bson::serialize_to_document(doc)?;
        crate::derived::check_document_write(M::SCHEMA, "replace", Some(&new))?;
        check_size(&new, M::SCHEMA.name())?;
        let Some(id) = new.get("_id").cloned() else {
            return Err(Error::InvalidKey {
                key: "_id".to_owned(),
                reason:
                    "`replace` finds the stored document by the new one's `_id`, and it has none",
            });
        };
        crate::literal::check_id("_id", &id)?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let all = self.targets(&|_| true);
        let projection = Self::projection(&all);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let filter = doc! { "_id": id.clone() };
            let watch = derived::watch_except(
                &self.db,
                s.as_deref_mut(),
                M::SCHEMA,
                None,
                &filter,
                &not_copies,
            )
            .await?;
            let mut kept = filter.clone();
            kept.extend(derived::kept_filter(M::SCHEMA, &new));
            let find = raw
                .find_one_and_replace(kept, new.clone())
                .return_document(ReturnDocument::Before)
                .projection(projection.clone());
            let Some(old) = in_session!(find, s.as_deref_mut())? else {
                let refused =
                    derived::kept_refusal(&self.db, s.as_deref_mut(), M::SCHEMA, &id, &new).await?;
                if let Some(refused) = refused {
                    return Err(crate::error::refusal(refused));
                }
                tracing::debug!("no document with this _id: nothing written");
                return Ok(Step::Missing);
            };
            source_written(s.is_some());
            let changed = |f: &str| old.get(f) != new.get(f);
            let targets = self.targets(&changed);
            span.record("embeddings", targets.len());
            let step = self
                .write_copies(s.as_deref_mut(), &id, &new, &targets)
                .await?;
            if let (Some(watch), Step::Done(_)) = (watch, &step) {
                watch.after(&self.db, s).await?;
            }
            Ok(step)
        })?;
        self.finish(id, step)
    }
}

impl<M: Model> References<M> {
    /// The `propagate` embeddings of `M`, each on its embedding model: what a check audits.
    fn copy_targets(&self) -> Vec<crate::maintenance::Target> {
        self.propagated()
            .into_iter()
            .filter_map(|e| {
                let model = crate::derived::model_named(e.model(), e.collection())?;
                Some((model, e as &dyn PatternSpec))
            })
            .collect()
    }

    /// Reads every document of every model that keeps a `propagate` copy of `M`, a page at a
    /// time, and reports the copies that differ from their source
    /// ([`Check::StaleCopy`]; a finding lists the *source*
    /// `_id`s, what [`resync`](Self::resync) takes), as the [doctor](mod@crate::doctor) does
    /// over a sample. Writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.check",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        crate::maintenance::check(&self.db, &self.copy_targets()).await
    }

    /// [`check`](Self::check), then [`resync`](Self::resync) of each source it lists, then a
    /// check again. `repaired` counts the embedding documents rewritten.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.repair",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        let targets = self.copy_targets();
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let mut repaired = 0;
        for id in found.documents() {
            repaired += self.resync_at(id).await?.modified();
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// Rewrites every `propagate` copy of the document `id` from its stored version: after
    /// changes made outside the toolkit, or an [`Error::Incomplete`] propagation. One read and
    /// one `updateMany` per embedding, in one transaction. Snapshot copies are left alone.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.resync",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            id = tracing::field::Empty,
            embeddings = tracing::field::Empty,
        ),
        err(level = "debug")
    )]
    pub async fn resync(&self, id: impl IntoId<M::Id>) -> Result<Propagation> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        self.resync_at(id).await
    }

    /// [`resync`](Self::resync) of an id already checked.
    async fn resync_at(&self, id: Bson) -> Result<Propagation> {
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let targets = self.targets(&|_| true);
        span.record("embeddings", targets.len());
        let projection = Self::projection(&targets);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let find = raw
                .find_one(doc! { "_id": id.clone() })
                .projection(projection.clone());
            let source = in_session!(find, s.as_deref_mut())?;
            self.copy_from(s, &id, source, &targets).await
        })?;
        self.finish(id, step)
    }
}

impl<M: Referenced> References<M> {
    /// Watches the source collection (a change stream; needs a replica set or a sharded cluster)
    /// and propagates every change as it comes, whoever made it: writes with the driver
    /// directly, other programs, the shell. Each [`Watcher::next`] waits for the next update or
    /// replacement of a source document and propagates the copied fields it touched, without a
    /// transaction (the source change is already committed). `resume_after` is a token from
    /// [`Watcher::resume_token`], to go on after a restart without missing a change.
    ///
    /// Changes made through [`References`] are seen too and propagated a second time, which
    /// changes nothing (`modified` is 0): run a watcher when writes also come from elsewhere.
    #[tracing::instrument(
        name = "pattern_runtime::extended_ref.watch",
        skip_all,
        fields(
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            resumed = resume_after.is_some(),
        ),
        err(level = "debug")
    )]
    pub async fn watch(&self, resume_after: Option<ResumeToken>) -> Result<Watcher<M>> {
        let stream = self
            .raw()
            .watch()
            .pipeline([doc! {
                "$match": { "operationType": { "$in": ["update", "replace"] } }
            }])
            .full_document(FullDocumentType::UpdateLookup)
            .resume_after(resume_after)
            .await?;
        tracing::debug!("change stream opened");
        Ok(Watcher {
            references: self.clone(),
            stream,
        })
    }
}

impl<M: Model> References<M> {
    /// [`Self::write_copies`] from the source as read, or `Missing`.
    async fn copy_from(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: Option<Document>,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        match source {
            None => {
                tracing::debug!("no document with this _id: no copy to update");
                Ok(Step::Missing)
            }
            Some(source) => self.write_copies(session, id, &source, targets).await,
        }
    }

    /// One `updateMany` per target. In a transaction an error aborts everything; without one,
    /// it is reported as a partial propagation.
    async fn write_copies(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: &Document,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        let writes = targets
            .iter()
            .map(|(embedding, fields)| {
                let (filter, update, array_filters) = embedding.copy_update(id, source, fields);
                CopyWrite {
                    model: embedding.model(),
                    collection: embedding.collection(),
                    path: embedding.path(),
                    fields: fields.clone(),
                    filter,
                    update: update.into(),
                    array_filters,
                }
            })
            .collect();
        Ok(match write_copies(&self.db, session, writes).await? {
            Ok(propagation) => Step::Done(propagation),
            Err(partial) => Step::Partial(partial),
        })
    }
}

/// A change stream on a source collection that propagates changes as they come: from
/// [`References::watch`].
pub struct Watcher<M> {
    references: References<M>,
    stream: ChangeStream<ChangeStreamEvent<Document>>,
}

impl<M: Model> fmt::Debug for Watcher<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher")
            .field("model", &M::SCHEMA.name())
            .finish_non_exhaustive()
    }
}

impl<M: Referenced> Watcher<M> {
    /// Waits for the next update or replacement of a source document and propagates the copied
    /// fields it touched (all of them for a replacement, whose old values the stream does not
    /// carry), from the document as it is now. A change to fields nobody copies gives an empty
    /// [`Propagation`] and writes nothing; so does a document deleted since the change. `None`
    /// when the stream ends (the collection was dropped or renamed).
    pub async fn next(&mut self) -> Option<Result<Propagation>> {
        let event = match self.stream.next().await? {
            Ok(event) => event,
            Err(e) => return Some(Err(e.into())),
        };
        let id = event
            .document_key
            .as_ref()
            .and_then(|k| k.get("_id"))
            .cloned()
            .unwrap_or(Bson::Null);
        let touched: BTreeSet<String> = match (&event.operation_type, &event.update_description) {
            (OperationType::Update, Some(d)) => d
                .updated_fields
                .keys()
                .map(String::as_str)
                .chain(d.removed_fields.iter().map(String::as_str))
                .chain(
                    d.truncated_arrays
                        .iter()
                        .flatten()
                        .map(|t| t.field.as_str()),
                )
                .map(|path| path.split('.').next().unwrap_or(path).to_owned())
                .collect(),
            // A replacement: the stream does not say what changed.
            _ => M::SCHEMA
                .references()
                .iter()
                .flat_map(|r| r.fields().iter().map(|f| (*f).to_owned()))
                .collect(),
        };
        let span = tracing::info_span!(
            "pattern_runtime::extended_ref.watcher.next",
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            id = %id,
            operation = match event.operation_type {
                OperationType::Update => "update",
                OperationType::Replace => "replace",
                _ => "other",
            },
            embeddings = tracing::field::Empty,
        );
        let Some(source) = event.full_document else {
            span.in_scope(|| tracing::debug!("the document is gone: no copy to update"));
            return Some(Ok(Propagation::default()));
        };
        let targets = self.references.targets(&|f| touched.contains(f));
        span.record("embeddings", targets.len());
        let step = self
            .references
            .write_copies(None, &id, &source, &targets)
            .instrument(span.clone())
            .await;
        let result = match step {
            Ok(step) => self.references.finish(id, step),
            Err(e) => Err(e.into()),
        };
        if let Err(e) = &result {
            span.in_scope(|| tracing::debug!(error = %e, "propagation failed"));
        }
        Some(result)
    }

    /// Where the stream is: give it to [`References::watch`] to resume after a restart.
    pub fn resume_token(&self) -> Option<ResumeToken> {
        self.stream.resume_token()
    }
}

/// `DEBUG`: the source was written (one `findAndModify`).
/// The dependents [`References`] keeps itself: its copies.
fn not_copies(d: &dyn Dependent) -> bool {
    d.pattern() == "extended_ref"
}

fn source_written(in_transaction: bool) {
    tracing::debug!(written = 1, in_transaction, "source written");
}

/// A source field copied into the reference shape `R`: every `Clone` type, copied by cloning.
///
/// The shape's `From<&Source>` and `Clone` impls copy each field through this trait, so a copied
/// field that is not `Clone` is one error at the field, saying which shape copies it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is copied into `{R}`, so it must implement `Clone`",
    label = "copied into `{R}`",
    note = "derive `Clone` on it, or leave the field out of the reference shape"
)]
pub trait Copied<R: ?Sized>: Sized {
    /// The copy put into `R`.
    fn copied(&self) -> Self;
}
#[diagnostic::do_not_recommend]
impl<T: Clone, R: ?Sized> Copied<R> for T {
    fn copied(&self) -> Self {
        self.clone()
    }
}

/// Compile-time plumbing of the derives: what a field holding references is, and the checks
/// that point at the user's tokens. Not a stable API.
///
/// The checks classify a field's type by autoref specialisation: `(&&&Probe::<T>::new())`
/// resolves a method on the most specific of `&&Probe<T>`, `&Probe<T>` and `Probe<T>` whose
/// bounds hold, and the method's return type is the verdict. No trait bound fails on a user's
/// mistake: each check is a constant that reads the verdict and fails to evaluate with the
/// derive's message (E0080), spanned at the user's tokens, so a mistake is one error saying what
/// to do, without naming this module. Even the slot of a misdeclared field is built (on a
/// placeholder reference), since the build fails at its check anyway.
#[doc(hidden)]
pub mod slot {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    /// A field type holding extended references in a layout propagation can address: `R`,
    /// `Option<R>`, `Vec<R>` or `Option<Vec<R>>`.
    pub trait RefSlot {
        /// The reference type.
        type Ref: ExtendedRef;
        /// Whether the field is an array of references.
        const MANY: bool;
    }
    #[diagnostic::do_not_recommend]
    impl<T: ExtendedRef> RefSlot for T {
        type Ref = T;
        const MANY: bool = false;
    }
    #[diagnostic::do_not_recommend]
    impl<T: ExtendedRef> RefSlot for Option<T> {
        type Ref = T;
        const MANY: bool = false;
    }
    #[diagnostic::do_not_recommend]
    impl<T: ExtendedRef> RefSlot for Vec<T> {
        type Ref = T;
        const MANY: bool = true;
    }
    #[diagnostic::do_not_recommend]
    impl<T: ExtendedRef> RefSlot for Option<Vec<T>> {
        type Ref = T;
        const MANY: bool = true;
    }

    /// A type holding extended references at any depth (`Vec<Vec<R>>`, `HashMap<K, R>`, ...).
    pub trait HoldsRef {}
    impl<T: ExtendedRef> HoldsRef for T {}
    impl<T: HoldsRef> HoldsRef for Option<T> {}
    impl<T: HoldsRef> HoldsRef for Vec<T> {}
    impl<T: HoldsRef, const N: usize> HoldsRef for [T; N] {}
    impl<K, T: HoldsRef> HoldsRef for BTreeMap<K, T> {}
    impl<K, T: HoldsRef, S> HoldsRef for HashMap<K, T, S> {}

    /// A reference shape that may be kept in sync (not declared `snapshot`).
    pub trait Propagatable: ExtendedRef {}

    /// The reference spec a [`Slot`] holds while its field's check fails the build: never read
    /// at run time, since a program with such a field does not compile.
    static UNRESOLVED: RefSpec = RefSpec::from_parts(RefParts {
        name: "",
        source: "",
        source_collection: "",
        fields: &[],
        snapshot_only: true,
    });

    /// The slot of a field marked with a mode, from its `held()` verdict (the check that the
    /// verdict is [`Held`] is [`mode_error`]'s, a separate constant).
    pub const fn slot<V: Verdict>(_check: fn() -> V, name: &'static str) -> Slot {
        match V::SLOT {
            Some((reference, many)) => Slot {
                reference,
                many,
                name,
            },
            None => Slot {
                reference: &UNRESOLVED,
                many: false,
                name,
            },
        }
    }

    /// The error of a field marked with a mode: `not_refs` unless it holds references,
    /// `too_deep` unless propagation can address them.
    pub const fn mode_error<V: Verdict>(
        _check: fn() -> V,
        not_refs: &'static str,
        too_deep: &'static str,
    ) -> Option<&'static str> {
        match (V::HOLDS, V::SLOT.is_some()) {
            (false, _) => Some(not_refs),
            (true, false) => Some(too_deep),
            (true, true) => None,
        }
    }

    /// The error of a field marked `propagate`: `message` if its reference shape is declared
    /// `snapshot` on the source.
    pub const fn propagate_error<V: SyncVerdict>(
        _check: fn() -> V,
        message: &'static str,
    ) -> Option<&'static str> {
        if V::SNAPSHOT_ONLY {
            Some(message)
        } else {
            None
        }
    }

    /// The probe of a type: see the module docs.
    pub struct Probe<T: ?Sized>(PhantomData<fn() -> T>);
    impl<T: ?Sized> Probe<T> {
        /// The probe of `T`.
        pub const fn new() -> Self {
            Probe(PhantomData)
        }
        /// The probe of a field's type.
        pub const fn of(_field: FieldName<T>) -> Self {
            Probe(PhantomData)
        }
    }
    impl<T: ?Sized> Default for Probe<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// Verdict: nothing to say.
    pub struct Plain;
    /// Verdict: `T` holds references in a layout propagation addresses.
    pub struct Held<T: ?Sized>(PhantomData<fn() -> T>);
    /// Verdict: `T` holds references deeper than propagation addresses.
    pub struct Nested<T: ?Sized>(PhantomData<fn() -> T>);
    /// Verdict: `T` holds a reference declared `snapshot` on its source.
    pub struct SnapshotOnly<R: ?Sized>(PhantomData<fn() -> R>);
    /// Verdict: `T` has `#[derive(Fields)]`, which says what its fields hold.
    pub struct ItemsOf<T: ?Sized>(PhantomData<fn() -> T>);

    /// `held()` when `T` holds references addressably.
    pub trait ProbeHeld {
        /// The verdict.
        type Verdict;
        /// Classifies.
        fn held(&self) -> Self::Verdict;
    }
    impl<T: RefSlot> ProbeHeld for &&Probe<T> {
        type Verdict = Held<T>;
        fn held(&self) -> Held<T> {
            Held(PhantomData)
        }
    }
    /// `held()` when `T` holds references deeper.
    pub trait ProbeNested {
        /// The verdict.
        type Verdict;
        /// Classifies.
        fn held(&self) -> Self::Verdict;
    }
    impl<T: HoldsRef> ProbeNested for &Probe<T> {
        type Verdict = Nested<T>;
        fn held(&self) -> Nested<T> {
            Nested(PhantomData)
        }
    }
    /// `propagation()` when `T` holds references that may be kept in sync.
    pub trait ProbeSyncable {
        /// Classifies.
        fn propagation(&self) -> Plain {
            Plain
        }
    }
    impl<T: RefSlot> ProbeSyncable for &&Probe<T> where T::Ref: Propagatable {}
    /// `propagation()` when `T` holds references declared `snapshot`.
    pub trait ProbeSnapshotOnly {
        /// The verdict.
        type Verdict;
        /// Classifies.
        fn propagation(&self) -> Self::Verdict;
    }
    impl<T: RefSlot> ProbeSnapshotOnly for &Probe<T> {
        type Verdict = SnapshotOnly<T::Ref>;
        fn propagation(&self) -> SnapshotOnly<T::Ref> {
            SnapshotOnly(PhantomData)
        }
    }
    /// `items()` when `T` has `#[derive(Fields)]`.
    pub trait ProbeItems {
        /// The verdict.
        type Verdict;
        /// Classifies.
        fn items(&self) -> Self::Verdict;
    }
    impl<T: HeldRefs> ProbeItems for &&Probe<T> {
        type Verdict = ItemsOf<T>;
        fn items(&self) -> ItemsOf<T> {
            ItemsOf(PhantomData)
        }
    }
    /// Every method, when nothing more specific holds.
    pub trait ProbeOther {
        /// Nothing to say.
        fn held(&self) -> Plain {
            Plain
        }
        /// Nothing to say (not a reference: [`RefSlot`] reports it).
        fn propagation(&self) -> Plain {
            Plain
        }
        /// Nothing to say.
        fn items(&self) -> Plain {
            Plain
        }
    }
    impl<T: ?Sized> ProbeOther for Probe<T> {}

    /// What a `held()` verdict says.
    pub trait Verdict {
        /// Whether the type holds references.
        const HOLDS: bool;
        /// The reference and whether the field holds an array of them, when propagation can
        /// address them.
        const SLOT: Option<(&'static RefSpec, bool)>;
    }
    impl Verdict for Plain {
        const HOLDS: bool = false;
        const SLOT: Option<(&'static RefSpec, bool)> = None;
    }
    impl<T: RefSlot + ?Sized> Verdict for Held<T> {
        const HOLDS: bool = true;
        const SLOT: Option<(&'static RefSpec, bool)> =
            Some((<T::Ref as ExtendedRef>::SPEC, T::MANY));
    }
    impl<T: ?Sized> Verdict for Nested<T> {
        const HOLDS: bool = true;
        const SLOT: Option<(&'static RefSpec, bool)> = None;
    }

    /// The error of a stored field without a mode: `no_mode` if it holds references,
    /// `too_deep` if it holds them deeper than propagation can address.
    pub const fn no_mode_error<V: Verdict>(
        _check: fn() -> V,
        no_mode: &'static str,
        too_deep: &'static str,
    ) -> Option<&'static str> {
        match (V::HOLDS, V::SLOT.is_some()) {
            (false, _) => None,
            (true, true) => Some(no_mode),
            (true, false) => Some(too_deep),
        }
    }

    /// What a `propagation()` verdict says.
    pub trait SyncVerdict {
        /// Whether the reference shape is declared `snapshot` on its source.
        const SNAPSHOT_ONLY: bool;
    }
    impl SyncVerdict for Plain {
        const SNAPSHOT_ONLY: bool = false;
    }
    impl<R: ?Sized> SyncVerdict for SnapshotOnly<R> {
        const SNAPSHOT_ONLY: bool = true;
    }

    /// A field of a `#[derive(Fields)]` struct that holds references, with the messages for a
    /// model field holding the struct.
    #[derive(Clone, Copy, Debug)]
    pub struct HeldRef {
        /// The field's Rust name (what `path` names).
        pub field: &'static str,
        /// The model field holds the struct in an array, without a mode.
        pub in_array: &'static str,
        /// The model field holds the struct directly, without a mode.
        pub nested: &'static str,
        /// The model field names another field of the items with `path`.
        pub beside: &'static str,
    }

    /// What `#[derive(Fields)]` says of a struct's fields holding references.
    pub trait HeldRefs {
        /// One entry per stored field, `Some` for those holding references.
        const HELD: &'static [Option<HeldRef>];
    }

    /// What an `items()` verdict says.
    pub trait ItemVerdict {
        /// See [`HeldRefs::HELD`].
        const HELD: &'static [Option<HeldRef>];
    }
    impl ItemVerdict for Plain {
        const HELD: &'static [Option<HeldRef>] = &[];
    }
    impl<T: HeldRefs + ?Sized> ItemVerdict for ItemsOf<T> {
        const HELD: &'static [Option<HeldRef>] = T::HELD;
    }

    /// `held` when the verdict holds references.
    pub const fn when_held<V: Verdict>(_check: fn() -> V, held: HeldRef) -> Option<HeldRef> {
        if V::HOLDS {
            Some(held)
        } else {
            None
        }
    }

    /// The error of a model field without a mode holding the struct (in an array or not), if
    /// one of its fields holds references.
    pub const fn items_without_mode<V: ItemVerdict>(
        _check: fn() -> V,
        in_array: bool,
    ) -> Option<&'static str> {
        let held = V::HELD;
        let mut i = 0;
        while i < held.len() {
            if let Some(h) = held[i] {
                return Some(if in_array { h.in_array } else { h.nested });
            }
            i += 1;
        }
        None
    }

    /// The error of a model field marked with `path`, if another field of its items holds
    /// references (which no mode covers).
    pub const fn items_beside_path<V: ItemVerdict>(
        _check: fn() -> V,
        path: &'static str,
    ) -> Option<&'static str> {
        let held = V::HELD;
        // A `path` that names no field holding references has its own error.
        let mut named = false;
        let mut i = 0;
        while i < held.len() {
            if let Some(h) = held[i] {
                named |= crate::checks::str_eq(h.field, path);
            }
            i += 1;
        }
        let mut i = 0;
        while named && i < held.len() {
            if let Some(h) = held[i] {
                if !crate::checks::str_eq(h.field, path) {
                    return Some(h.beside);
                }
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static CUSTOMER_REF: RefSpec = RefSpec::from_parts(RefParts {
        name: "CustomerRef",
        source: "Customer",
        source_collection: "customers",
        fields: &["name", "address"],
        snapshot_only: false,
    });

    fn embedding(field: &'static str, items: bool, many: bool, name: &'static str) -> Embedding {
        Embedding::from_parts(EmbeddingParts {
            model: "Order",
            collection: "orders",
            field,
            items,
            slot: Slot {
                reference: &CUSTOMER_REF,
                many,
                name,
            },
            mode: Mode::Propagate,
        })
    }

    #[test]
    fn copy_updates_address_each_layout() {
        let id = Bson::Int32(7);
        let source = doc! { "_id": 7, "name": "Ada" }; // no address: it was unset
        let fields = ["name", "address"];

        let (f, u, a) =
            embedding("customer", false, false, "customer").copy_update(&id, &source, &fields);
        assert_eq!(f, doc! { "customer._id": 7 });
        assert_eq!(
            u,
            doc! { "$set": { "customer.name": "Ada" }, "$unset": { "customer.address": "" } }
        );
        assert!(a.is_empty());

        let (f, u, a) =
            embedding("members", false, true, "members").copy_update(&id, &source, &fields[..1]);
        assert_eq!(f, doc! { "members._id": 7 });
        assert_eq!(u, doc! { "$set": { "members.$[r].name": "Ada" } });
        assert_eq!(a, [doc! { "r._id": 7 }]);

        let e = embedding("items", true, false, "product");
        assert_eq!(e.path(), "items.product");
        let (f, u, a) = e.copy_update(&id, &source, &fields[..1]);
        assert_eq!(f, doc! { "items.product._id": 7 });
        assert_eq!(u, doc! { "$set": { "items.$[i].product.name": "Ada" } });
        assert_eq!(a, [doc! { "i.product._id": 7 }]);

        let (f, u, a) =
            embedding("items", true, true, "products").copy_update(&id, &source, &fields[..1]);
        assert_eq!(f, doc! { "items.products._id": 7 });
        assert_eq!(
            u,
            doc! { "$set": { "items.$[i].products.$[r].name": "Ada" } }
        );
        assert_eq!(a, [doc! { "i.products._id": 7 }, doc! { "r._id": 7 }]);
    }

    #[test]
    fn the_index_is_built_once_and_named_as_mongod_would() {
        static E: Embedding = Embedding::from_parts(EmbeddingParts {
            model: "Order",
            collection: "orders",
            field: "items",
            items: true,
            slot: Slot {
                reference: &CUSTOMER_REF,
                many: false,
                name: "product",
            },
            mode: Mode::Snapshot,
        });
        let index = E.index();
        assert!(std::ptr::eq(index, E.index()));
        assert_eq!(index.name(), "items.product._id_1");
        assert_eq!(index.key_document(), doc! { "items.product._id": 1 });
    }
}

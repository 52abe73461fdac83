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
//! keeps its `propagate` copies through its own writes (`replace`, `update`, `delete`, in the
//! transaction that archives the revision). The source's writes are its model handle's
//! (`Author::collection(&db)`), whatever the model; its [`References`] handle
//! (`Author::collection(&db).references()`) checks, rebuilds and repairs the copies, and has no writes.
//! Add `derive(PartialEq)`
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
//! - `#[extended_ref(propagate)]`: kept in sync: the source's model handle
//!   ([`ModelCollection`](crate::ModelCollection)) carries every change of a copied field to
//!   it, and so does every other pattern's write of the source (a tree's rename, a versioned
//!   `replace`: the [map of derived data](crate::derived)). A
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
//! use pattern_runtime::query::Update;
//! use pattern_runtime::{Fields, Model};
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
//! Customer::collection(&db).insert(&ada).await?;
//! let order = Order {
//!     id: ObjectId::new(),
//!     customer: CustomerRef::from(&ada),
//!     items: vec![OrderItem { product: ProductRef::from(&pen), quantity: 2, price_at_order: pen.price }],
//! };
//! Order::collection(&db).insert(&order).await?;
//!
//! // One transaction: the customer, then every `propagate` copy of `name`.
//! let customers = Customer::collection(&db);
//! customers
//!     .update(ada.id, Update::new().set(Customer::FIELDS.name, "Ada L."))
//!     .await?;
//! // A field nobody copies: one write, to the customer only.
//! customers
//!     .update(ada.id, Update::new().inc(Customer::FIELDS.loyalty_points, 10))
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Propagation
//!
//! The source's own handle's [`update`](crate::ModelCollection::update) (`Customer::collection(&db)`)
//! applies an operator update to the source and reads back the copied fields it touched (one
//! `findAndModify`), then sends one `updateMany` per embedding in
//! `propagate` mode whose reference copies one of them: `{<path>._id: id}` with `$set` of the new
//! values (`$unset` for a field the update removed), through `arrayFilters` for references inside
//! arrays, so only the matching elements change. Both run in one transaction, retried on
//! transient errors: a failure anywhere leaves the source and every copy as they were. An update
//! that touches no copied field is a single `update` of the source: no transaction, no
//! `updateMany`. Its [`replace`](crate::ModelCollection::replace) does the same for a whole
//! document and compares the old copied values with the new ones. [`References::rebuild`]
//! rewrites every copy from the stored
//! source, to repair copies after changes made outside the toolkit.
//!
//! The embedding models come from the registry of every `#[derive(Model)]` in the program (the one
//! [`registered_models`](crate::registered_models) reads): nothing is listed by hand. They are
//! looked for in the source's database.
//!
//! On a deployment without transactions (a standalone server) the source is written first, then
//! the copies, unprotected: a failure in between is [`Error::Incomplete`] (the source and
//! `written` copy writes of the embedding that failed are done, `failed` are not; the embeddings
//! after it are not written) and [`References::rebuild`] repairs it; two
//! writers changing one source at once may leave the copies with the older value.
//!
//! Changes made with the driver directly (`Customer::collection(&db).raw().update_one(..)`), by other
//! programs or in the shell are not propagated by these calls: [`References::rebuild`] repairs one
//! document's copies, and [`References::watch`] follows a change stream on the source collection
//! and propagates each change as it comes.
//!
//! # Tracing
//!
//! [`rebuild`](References::rebuild) and [`watch`](References::watch) run in `INFO` spans named
//! `pattern_runtime::extended_ref.<operation>` with the fields `model` and `collection` (the
//! source's), `id` and `embeddings` (how many `updateMany`s the propagation sends); the model
//! handle's writes run in `pattern_runtime::model.<operation>` spans; each change a [`Watcher`] propagates runs in an `INFO`
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
use mongodb::options::FullDocumentType;
use mongodb::{ClientSession, Collection};
use tracing::Instrument;

use crate::copies::{write_copies, CopyWrite, Partial};
pub use crate::copies::{CopiesUpdated, Propagation};
use crate::derived::Dependent;
use crate::error::{Error, Result};
use crate::finding::{id_key, Check, Finding};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
pub use crate::schema::Mode;
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{in_session, transact};

mod check;
mod spec;
mod watch;
mod write;

pub use spec::{
    Copied, Embedding, EmbeddingParts, ExtendedRef, RefParts, RefSpec, Referenced, Slot,
};

pub use watch::Watcher;

crate::span::model_handle! {
    /// The operations on a model other models copy from that keep the copies in sync: from
    /// `Customer::collection(&db).references()`. See the [module documentation](self).
    pub struct References<M: Model> => M::SCHEMA.collection();
}

/// A model whose documents other models hold `propagate` copies of (`#[extended_ref(..)]`):
/// what [`ModelCollection::references`](crate::ModelCollection::references) needs. Generated by
/// the derive.
#[diagnostic::on_unimplemented(
    message = "no model keeps a copy of `{Self}` in sync",
    label = "`{Self}` has no `#[extended_ref(..)]` shape that is propagated",
    note = "declare a shape on `{Self}` with `#[extended_ref(Name(fields..))]` (not `snapshot`) and embed it in another model"
)]
pub trait HasCopies: Model {}

impl<M: Model> crate::ModelCollection<M> {
    /// The copies other models keep of `M`'s documents: `check`, `repair`, `rebuild`, `watch`
    /// (see [`References`]). `M`'s own writes (`insert`, `update`, ...) keep them already.
    /// Bound to this handle's transaction when it has one.
    pub fn references(&self) -> References<M>
    where
        M: HasCopies,
    {
        crate::txn::Bound::bound(References::new(self.database()), self.transaction())
    }
}

crate::txn::bound!(impl<M: Model> References<M>);

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
    crate::txn::in_transaction! {
        /// The same handle in the caller's transaction `tx`: [`rebuild`](References::rebuild)
        /// and [`repair`](References::repair) run in it, with their copies, and commit or abort
        /// with it (see [`Transaction`](crate::Transaction)).
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// Every field of every registered model that keeps a copy of `M` in sync.
    pub fn propagated(&self) -> Vec<&'static Embedding> {
        M::SCHEMA
            .specs::<RefSpec>()
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
            missing: Box::new(crate::error::Missing::Document { id }),
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

/// Compile-time plumbing of the derives (see the module). Not a stable API.
#[doc(hidden)]
pub mod slot;

#[cfg(test)]
mod tests {
    use super::*;

    static CUSTOMER: ModelSchema = ModelSchema::bare("Customer", "customers");
    static ORDER: ModelSchema = ModelSchema::bare("Order", "orders");

    static CUSTOMER_REF: RefSpec = RefSpec::from_parts(RefParts {
        name: "CustomerRef",
        source: || &CUSTOMER,
        fields: &["name", "address"],
        snapshot_only: false,
    });

    fn embedding(field: &'static str, items: bool, many: bool, name: &'static str) -> Embedding {
        Embedding::from_parts(EmbeddingParts {
            model: || &ORDER,
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
            model: || &ORDER,
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

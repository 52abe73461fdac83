//! Relationships between models: typed references, loading them in batches (one `$in` query per
//! referenced model, never one per reference), children found by their parent reference, and
//! two-way references kept consistent (`#[relation]`).
//!
//! How to relate two kinds of documents depends on how many there are on the "many" side and on
//! whether they live on their own:
//! - **one-to-few**, not needed on their own: embed them (a person's `addresses: Vec<Address>`);
//!   nothing here is needed;
//! - **one-to-many**: an array of references in the parent (a product's `parts: Vec<Ref<Part>>`),
//!   loaded with one `find({_id: {$in: ...}})`;
//! - **one-to-squillions**: a reference to the parent in each child (a log message's
//!   `host: Ref<Host>`), and the children queried through an index on it;
//! - **two-way**: both (a person's `tasks` and each task's `owner`); reassigning a task then
//!   changes three documents, which [`TwoWay::assign`] does in one transaction.
//!
//! # References
//!
//! [`Ref<T>`] holds the `_id` of a `T` and is serialized exactly as the bare id: documents
//! written by hand, by other programs or before the field became a `Ref` read and write
//! unchanged. Its id type is `T`'s, so a reference with another type of id does not compile. An
//! [extended reference](crate::extended_ref) (`PartRef`, the id plus copies of a few fields, kept
//! in sync) is a reference too: a product's `parts: Vec<PartRef>` denormalises the part names the
//! product page shows and still loads the whole parts in one query.
//!
//! # Declaring a relation
//!
//! `#[relation]` on a field holding references (`Ref<T>`, `Option<Ref<T>>`, `Vec<Ref<T>>`,
//! `Option<Vec<Ref<T>>>`, or the same with an extended reference type) generates
//! `M::collection(&db).relation(M::FIELDS.field)`, a [`Relation`] handle:
//!
//! | form | meaning | index |
//! | --- | --- | --- |
//! | `#[relation]` | loadable references ([`Relation::load`]) | none |
//! | `#[relation(parent)]` | a reference to the parent, in a child; [`Relation::children_of`] | `{field: 1}` |
//! | `#[relation(parent, sort(time = -1))]` | the children come newest first | `{field: 1, time: -1}` |
//! | `#[relation(inverse = owner)]` | one side of a two-way relation: the target's field `owner` must say `#[relation(inverse = <this field>)]`, one side an array, the other a single reference | `{field: 1}` on each side |
//!
//! On the single side of a two-way relation, `relation(M::FIELDS.field)` is a [`TwoWay`]
//! handle instead (which derefs to the [`Relation`]): [`assign`](TwoWay::assign),
//! [`check`](TwoWay::check), [`repair`](TwoWay::repair).
//!
//! Every mistake is a compile error at the offending token: a reference to a type that is not a
//! model, `#[relation]` on a field that holds no reference, `parent` on an array, a sort field
//! that does not exist, a two-way relation whose sides do not name each other or are both arrays.
//!
//! ```
//! use bson::oid::ObjectId;
//! use pattern_runtime::{Model, Ref};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! struct Part {
//!     #[serde(rename = "_id")]
//!     id: ObjectId,
//!     partno: String,
//!     name: String,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: ObjectId,
//!     name: String,
//!     #[relation]
//!     parts: Vec<Ref<Part>>,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let grommet = Part { id: ObjectId::new(), partno: "123-aff-456".into(), name: "#4 grommet".into() };
//! Part::collection(&db).insert(&grommet).await?;
//! let product = Product { id: ObjectId::new(), name: "smoke shifter".into(), parts: vec![Ref::to(&grommet)] };
//! // Stored as `parts: [ObjectId(..)]`, the bare ids.
//! Product::collection(&db).insert(&product).await?;
//!
//! let products: Vec<Product> = Vec::from([product]);
//! // One `find({_id: {$in: [..]}})` for the parts of every product.
//! let loaded = Product::collection(&db).relation(Product::FIELDS.parts).load(&products).await?;
//! let parts = loaded.of(&products[0]);
//! assert_eq!(parts[0].map(|p| p.name.as_str()), Some("#4 grommet"));
//! assert!(loaded.dangling().is_empty());
//! # Ok(()) }
//! ```
//!
//! # Loading
//!
//! [`Relation::load`] collects the distinct ids the sources refer to and sends one `find` with
//! `{_id: {$in: ids}}` per chunk of [`DEFAULT_CHUNK`] ids (set with
//! [`Relation::chunk_size`]), asking for the whole answer in one batch. [`Loaded::of`] gives a
//! source's references in the order of its array, duplicates included, `None` where the
//! referenced document does not exist; every such dangling reference is also listed in
//! [`Loaded::dangling`], with the source's id, the field and the position in the array.
//!
//! # Two-way references
//!
//! [`TwoWay::assign`] moves a child to a new owner in one transaction: it adds the child to the
//! new owner's array (`$addToSet`), sets the child's owner field, and pulls the child from every
//! other array that lists it; transient errors (two writers on one document) rerun the whole
//! transaction. A failure in between leaves all of them as they were. Without transactions (a
//! standalone server) the same writes run in that order, unprotected; [`TwoWay::repair`] then
//! repairs what a failure left. [`TwoWay::check`] reads both collections and reports every
//! disagreement; [`TwoWay::repair`] makes the arrays agree with the children's owner fields, the
//! side that says which owner a child has.
//!
//! The owners' arrays are in the [map of derived data](crate::derived): a child inserted or
//! deleted through another pattern's handle (the model handle ([`ModelCollection`](crate::ModelCollection)), a subset's push,
//! a tree cascade), or whose owner field another pattern writes (a grid booking its holder),
//! moves between the arrays in the same transaction; a new owner that does not exist is
//! [`Error::NotFound`], nothing written. When an owner is deleted, the children naming it get `null`
//! in their field if it is an `Option`; if it is not, the delete is refused
//! ([`Error::StillNamed`]), nothing written: `assign` the children first. The two sides are the
//! relation's own otherwise: another
//! handle's update of either is refused ([`Error::KeptField`]), and so is an `assign` of an
//! owner field another pattern keeps (a grid's holder: book the slot instead).
//!
//! # Tracing
//!
//! `load`, `children_of`, `assign`, `check` and `repair` run in spans named
//! `pattern_runtime::relation.<operation>` (`INFO` for writes, `DEBUG` for reads) with the fields
//! `model`, `collection` and `field`; each query and write is a `DEBUG` event.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use futures_util::{Stream, StreamExt, TryStreamExt};
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection, Database};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::finding::{CheckReport, Finding, RepairReport};
use crate::index::IndexSpec;
use crate::model::Model;
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{in_session, transact};

mod check;
mod identity;
mod read;
mod spec;
mod two_way;

pub use identity::{Identified, Ref, RefField, Reference};
pub use read::{Children, Dangling, Loaded, Relation, RelationField};
pub use spec::{inverse_error, RelationKind, RelationParts, RelationSide, RelationSpec, Relations};
pub(crate) use two_way::Disagreement;
pub use two_way::{Assigned, TwoWay};

/// How many distinct ids one `$in` query of [`Relation::load`] carries at most.
///
/// Chosen from measurements (the `scaling` bench, `relation_load`, one run each) on two
/// servers whose `$in` grows faster than its ids. On the embedded server, 10 000 ids cost
/// 123 µs each as one `$in` and 41 µs each as ten of 1 000 (100 and 1 000 ids: 26 to 32 µs
/// each). On secantusdb, one `$in` of 1 000 ids already costs 2.0 ms per id against 0.32 ms
/// for 100, so 1 000 bounds the cost there too, at a round trip per 1 000 ids; a slow server
/// is faster still with [`Relation::chunk_size`]`(100)`. A `mongod` answers a `$in` by one
/// index seek per id, where a larger chunk only saves round trips.
pub const DEFAULT_CHUNK: usize = 1_000;

/// Compile-time checks of a field that holds the `_id` of a model (see the module).
#[doc(hidden)]
pub mod id_probe;

//! MongoDB schema design patterns, typed and checked at compile time, on the official `mongodb`
//! driver.
//!
//! You annotate your structs; `#[derive(Model)]` checks the annotations against the struct and its
//! serde names at compile time, and turns them into index specifications, typed field names and
//! operations. This crate runs them on the driver, keeping every pattern's invariants whichever
//! handle writes. This page is a tour, in the order a new user meets things; each chapter ends
//! with the page that has the details.
//!
//! # A model
//!
//! A model is a serde struct with an `_id` field. Indexes are declared where the fields are, and
//! every name goes through serde, as it is stored:
//!
//! ```
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[model(collection = "products")]
//! #[index(keys(category = 1, price = -1))]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[index(unique, collation(locale = "en", strength = 2))]
//!     name: String,
//!     category: String,
//!     price: f64,
//!     #[index(-1, partial(rating_count(gt = 0)))]
//!     rating_count: i64,
//! }
//!
//! let names: Vec<_> = Product::SCHEMA.indexes().iter().map(|i| i.name()).collect();
//! assert_eq!(names, ["category_1_price_-1", "name_1", "ratingCount_-1"]);
//! assert_eq!(Product::FIELDS.rating_count, "ratingCount");
//! assert_eq!(Product::SCHEMA.collection(), "products");
//! ```
//!
//! A mistake in an annotation (an unknown option, a key that is not a field, a TTL on a field
//! that is no date) is a compile error at the offending token, with the fix in the message.
//! The derive adds no function to your type, only the `FIELDS` constant (and the types an
//! attribute names: an extended reference's shape, an enum model's variant structs). Details:
//! [models](guide::models)
//! (what the derive generates, `#[model]`, `#[index]`, shard keys, features).
//!
//! # The one handle
//!
//! At start-up, [`sync`](sync()) creates the declared indexes of every model in the program that
//! are missing, and reports those that differ. Then every model's documents are read and written
//! through one handle, `M::collection(&db)` (a [`ModelCollection`]), with one set of verbs:
//! `get`, `find`, `find_one`, `count`, `insert`, `update`, `replace`, `delete` and their `_many`
//! forms. Each write keeps what the model's patterns keep: copies and computed values follow,
//! fields a pattern keeps are refused, older schema versions are upgraded, a versioned model's
//! version is checked and its revision archived.
//!
//! ```no_run
//! # use pattern_runtime::Model;
//! # #[derive(serde::Serialize, serde::Deserialize, Model)]
//! # #[serde(rename_all = "camelCase")]
//! # struct Product {
//! #     #[serde(rename = "_id")] id: String, name: String, category: String, price: f64,
//! #     rating_count: i64,
//! # }
//! # async fn run() -> pattern_runtime::Result<()> {
//! use pattern_runtime::query::{Filter, Update};
//!
//! let client = mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
//! let db = client.database("shop");
//! print!("{}", pattern_runtime::sync(&db).await?);
//!
//! let products = Product::collection(&db);
//! let p = Product {
//!     id: "p1".into(),
//!     name: "Lamp".into(),
//!     category: "lighting".into(),
//!     price: 25.0,
//!     rating_count: 0,
//! };
//! products.insert(&p).await?;
//! products.update("p1", Update::new().inc(Product::FIELDS.price, 5.0)).await?;
//! let lamp: Option<Product> = products.get("p1").await?;
//! let cheap: Vec<Product> = products.find(Filter::lt(Product::FIELDS.price, 40.0)).await?;
//! # let _ = (lamp, cheap);
//! # Ok(()) }
//! ```
//!
//! `find` also sorts, limits, streams from the server's cursor and pages by keyset
//! ([`Find`](crate::query::Find)). [`ModelCollection::raw`] is the driver's collection: the explicit way around
//! the toolkit, whose writes keep nothing.
//!
//! # Typed queries
//!
//! Filters, sorts and updates are built from the typed field names: a value of the wrong type,
//! an `$inc` of a string, a `$push` to a field that is not a `Vec`, an `$unset` of a field that
//! is not an `Option`, and a setter of a field a pattern keeps do not compile. A value is always
//! a literal, never an operator. A `bson::Document` is still accepted wherever a filter or an
//! update is, checked at run time. Details: [`query`].
//!
//! # Patterns
//!
//! A pattern is an attribute on the model or on one of its fields. Its own operations are one
//! call from the model's handle, by one rule: a pattern of the whole model is named after its
//! handle (`categories.tree()`), a pattern of one field takes the field's typed name
//! (`products.subset(Product::FIELDS.recent_reviews)`). A field of another pattern, or of another
//! model, is a compile error at the field. Each pattern's page has the same sections: the
//! scenario, the attribute, the handle, the operations with their round trips, check and repair,
//! what it refuses. [`patterns`] puts them all on one page.
//!
//! | pattern | attribute | handle |
//! | --- | --- | --- |
//! | [`versioning`]: document versions with optimistic locking and a history | `#[versioned(history = "article_revisions")]`, `#[version]` on an integer field | the model's handle ([`ModelCollection`]) |
//! | [`subset`]: the newest items embedded, all of them in their own collection, with their count, sum or average | `#[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]` on a `Vec`, `#[summary(count = recent_reviews)]`, `sum`, `avg` beside it | `products.subset(Product::FIELDS.recent_reviews)` → [`Subset`] |
//! | [`extended_ref`]: copied fields kept in sync, or kept as snapshots | `#[extended_ref(CustomerRef(name, address))]` on the source, `#[extended_ref(propagate)]` on the field holding it | `customers.references()` → [`References`] |
//! | [`attribute`]: varying properties as `[{key, value}]` under one index | `#[attribute(key = name, value = value)]` on the item, `#[attribute]` on the `Vec` | `records.attributes(Record::FIELDS.specs)` → [`Attributes`] |
//! | [`polymorphic`]: several shapes in one collection, told apart by a tag | `#[derive(Model)]` on an enum with `#[serde(tag = "type")]` | `NotificationEmail::collection(&db)` → [`VariantCollection`] |
//! | [`relation`]: references loaded in batches, parent references, two-way references | `Ref<Part>` fields with `#[relation]`, `#[relation(parent, ..)]`, `#[relation(inverse = ..)]` | `products.relation(Product::FIELDS.parts)` → [`Relation`]; on a two-way relation's single side, `tasks.relation(Task::FIELDS.owner)` → [`TwoWay`] |
//! | [`computed`]: a total of other documents, kept exact as they are written | `#[computed(sum = Order.amount, by = user_id)]`, `count`, `min`, `max` | `users.computed()` → [`ComputedFields`] |
//! | [`approximation`]: counters that avoid a write per event | `#[approximate(batched, threshold = 100)]`, `sampled`, `sharded` | `pages.counter(Page::FIELDS.views)` |
//! | [`outlier`]: an array that overflows into linked documents for the few that grow far | `#[outlier(limit = 50, overflow = "user_posts", ..)]` on a `Vec` | `users.outlier(User::FIELDS.posts)` → [`Outlier`] |
//! | [`tree`]: nodes that keep their ancestors, documents that keep their node's path | `#[tree(parent = parent, ancestors = ancestors)]`, `#[in_tree(Category, ..)]` | `categories.tree()` → [`Tree`], [`Holders`] |
//! | [`preallocation`]: a grid of slots created ahead, booked atomically | `#[preallocated(resource = room_id, slot = date, holder = booked_by)]` | `room_days.slots()` → [`Slots`] |
//! | [`schema_version`]: older shapes read as the current one, converged in the background | `#[schema_version(older(UserV1 = 1))]`, a `SchemaVersion<2>` field | the model's handle; `converge()`, `writing_back()` |
//! | [`bucket`]: time series in buckets or a native time-series collection | `#[derive(Measurement)]` with `#[bucket(key = .., time = .., ..)]` | `Reading::series(&db)` → [`Series`] |
//! | [`validator`]: every model's `$jsonSchema`, with the patterns' bounds | none: every model has one | [`validator::sync_validators`] |
//!
//! # Transactions
//!
//! Several operations, of several patterns, run in one caller's [`Transaction`]: bind each
//! handle with `.in_transaction(&tx)`, then commit or abort. Aborted, nothing is kept; committed,
//! every write and everything derived from it is there. A bound handle's reads run in it too,
//! and see its writes before the commit. Details: [patterns
//! together](guide::together), which also tables every combination of patterns and what holds.
//!
//! # Safety
//!
//! A caller's value is data: stored literally, or refused with a typed error before anything is
//! written, never an operator, a field path or an expression. No write leaves a document that can
//! no longer be written: every growing array has a count and a byte budget. Ids are typed: an
//! operator document, or an id of another type, does not compile. Details:
//! [safety](guide::safety).
//!
//! # Check, repair and the doctor
//!
//! Every pattern handle with derived data or invariants answers `check()` (a [`CheckReport`](crate::doctor::CheckReport):
//! each finding with its documents and the call that repairs it) and `repair()` (a
//! [`RepairReport`](crate::doctor::RepairReport)); those whose derived data belongs to one document also answer
//! `rebuild(id)`. Each pattern's page says which it has (a polymorphic model, a versioned one
//! and the counters have nothing to repair). [`doctor`](fn@doctor) audits a live
//! database against the models compiled into the program (unbounded arrays, sizes, missing,
//! unused or redundant indexes, each pattern's drift on a sample) and never writes. Details:
//! [`doctor`](mod@doctor), [patterns together](guide::together).
//!
//! # Writes made around the toolkit
//!
//! The toolkit's own writes keep what derives from them; a [`maintainer`] keeps it after
//! anyone's (`raw()`, another service, the shell). It follows one change stream per database
//! over every collection other documents derive data from, and rebuilds the dependents of each
//! changed document from the sources as they are: with eight writers writing around the
//! toolkit at full speed on the embedded server, a write's dependents were right after 0.12 to
//! 0.24 s at the median and 0.41 to 0.46 s at the 99th percentile. Its first start rebuilds
//! everything once (what was written before had no one to follow it). It stores its resume
//! token after each batch and resumes there after a restart; a token the server no longer
//! keeps, or a dropped source, is a full rebuild, recorded, never a silent restart from "now";
//! replicas share it through a lease; the doctor reports whether it runs, its lag and the
//! events it is behind.
//!
//! # Sync
//!
//! [`sync(&db)`](sync()) syncs every model's indexes in one database; models in several
//! databases take a `#[model(group = "..")]` and `.group(..)`, or a list (`.models(..)`). Each
//! takes `.options(..)`, [`SyncOptions`], whose
//! [`validators`](SyncOptions::validators) installs the validators in the same sync
//! ([`validator`]). Nothing is dropped or replaced unless asked. Details: [models](guide::models).
//!
//! # Tracing
//!
//! Every operation runs in a [`tracing`](https://docs.rs/tracing) span named after it
//! (`pattern_runtime::subset.push`), with events for retries, fallbacks and documents written.
//! Details: [tracing](guide::tracing).
//!
//! # Errors
//!
//! Every operation returns [`Result`], whose [`Error`] gives each failure a caller may handle its
//! own variant (a duplicate key, an index conflict, ...) and carries the server's code otherwise.
//! Whatever the pattern, something an operation names that does not exist is one
//! [`Error::NotFound`]: its [`Missing`] says what was looked for (a document, a revision, a
//! tree's node, a preallocated slot) and which one. What the toolkit refuses of the caller's
//! input before anything is sent has four variants (besides a value over 16 MiB,
//! [`Error::DocumentTooLarge`]), and [`Error::is_refused_input`] says yes to each: a value that would not
//! be stored or compared as given ([`Error::InvalidValue`]), a key that cannot be a field name or
//! that the operation does not take ([`Error::InvalidKey`]), a field another pattern keeps
//! ([`Error::KeptField`]), and a call that does not apply to the model as declared
//! ([`Error::Unsupported`]).

#![warn(missing_docs)]

// The layers, bottom up (a module imports only from the layers below it):
// - the ground: the error type, spans, progress, background runs, a caller's values as data,
//   index and shard-key specifications, transactions, what the doctor reports;
// - the schema: models, typed field names and their kinds, validator shapes, the registry and
//   the plugin traits the patterns implement (`PatternSpec`, `Dependent`);
// - the typed filters, sorts and updates; what is stored (schema versions and their upgrade);
// - the map of derived data; the model handle (its reads, writes and keyset pages), which
//   every pattern builds on; the check and repair every handle shares;
// - one module per pattern, the sync and the doctor;
// - this file: the public surface, `query`'s face among it.
mod checks;
mod error;
mod finding;
pub mod index;
mod literal;
mod periodic;
mod progress;
pub mod shard;
mod span;
mod txn;

mod schema;
mod stored;
mod typed;

mod copies;
pub mod derived;
mod maintenance;
mod model;

// One line per pattern.
pub mod approximation;
pub mod attribute;
pub mod bounded;
pub mod bucket;
pub mod computed;
pub mod doctor;
pub mod extended_ref;
pub mod maintainer;
pub mod outlier;
pub mod polymorphic;
pub mod preallocation;
pub mod query {
    #![doc = include_str!("../docs/query.md")]
    pub use crate::model::read::{Find, Projected};
    pub use crate::typed::*;
}
pub mod relation;
pub mod schema_version;
pub mod subset;
pub mod sync;
pub mod tree;
pub mod validator;
pub mod versioning;

// The page every pattern shares; `tests/integration/round_trips.rs` checks its figures against the server.
#[doc = include_str!("../docs/patterns.md")]
pub mod patterns {}

/// The limits MongoDB sets on documents and keys, and the checks the toolkit runs against them
/// before it sends anything.
pub mod limits {
    pub use crate::error::{check_size, validate_key, BYTE_BUDGET, MAX_DOCUMENT_SIZE};
    pub use crate::literal::MAX_VALUE_DEPTH;
}

/// Topic pages: the reference behind the tour of the [crate documentation](crate).
pub mod guide {
    /// A topic page: a markdown file of `docs/`, whose links resolve against the crate root's
    /// names and the limits.
    macro_rules! page {
        ($name:ident, $file:literal) => {
            pub mod $name {
                #![doc = include_str!($file)]
                #[allow(unused_imports)]
                use crate::{limits::*, *};
            }
        };
    }

    page!(models, "../docs/models.md");
    page!(safety, "../docs/safety.md");
    page!(together, "../docs/together.md");
    page!(tracing, "../docs/tracing.md");
}

pub use attribute::{AttributeKey, Attributes};
pub use bucket::{Measurement, Series};
pub use computed::ComputedFields;
pub use doctor::{doctor, DoctorOptions};
pub use error::{Error, Missing, Result};
pub use extended_ref::References;
pub use model::writes::{At, Target, Updated, Written};
pub use model::{IntoId, Model, ModelCollection, Pending};
pub use outlier::Outlier;
pub use periodic::{Periodic, Stopped};
pub use polymorphic::{Polymorphic, Variant, VariantCollection};
pub use preallocation::{Preallocated, Slots};
pub use progress::Progress;
pub use relation::{Ref, Relation, TwoWay};
pub use schema::{FieldName, Fields, ModelSchema};
// The plugin interface between the patterns and the schema, and what generated code names: not
// a user's API (each pattern's handle is), so not on the crate's face.
#[doc(hidden)]
pub use schema::{
    Annotation, Companion, FieldSchema, IndexesNeeded, KeptFields, Nests, PatternSpec,
};
pub use subset::Subset;
pub use sync::{sync, SyncOptions};
pub use tree::{Holders, Tree};
pub use txn::Transaction;

/// `#[derive(Model)]`: see the [crate documentation](crate).
#[cfg(feature = "derive")]
pub use pattern_derive::Model;

/// `#[derive(Fields)]`: typed field names (`OrderItem::FIELDS`) for a struct nested in models;
/// see [`Fields`](trait@Fields).
#[cfg(feature = "derive")]
pub use pattern_derive::Fields;

/// `#[derive(AttributeKey)]`: a fieldless enum of attribute keys; see the [`attribute`] module.
#[cfg(feature = "derive")]
pub use pattern_derive::AttributeKey;

/// `#[derive(Measurement)]`: see the [`bucket`] module.
#[cfg(feature = "derive")]
pub use pattern_derive::Measurement;

/// What generated code reaches for. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

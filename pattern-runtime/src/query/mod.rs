//! Typed filters, sorts and updates, made from a model's typed field names (`Model::FIELDS`).
//!
//! A [`Filter`], a [`Sort`] or an [`Update`] names each field through its
//! [`FieldName`](crate::FieldName), which knows the field's Rust type: a value of another type,
//! an `$inc` of a string, a `$push` to a field that is not a `Vec`, an `$unset` of a field that
//! is not an `Option` are compile errors, and so is a setter of a field a pattern keeps (a
//! computed value, an extended-reference copy, a tree's parent or ancestors, the version,
//! `_id`, ...: the [`kept`] kinds).
//!
//! ```
//! use pattern_runtime::query::{Filter, Sort, Update};
//! use pattern_runtime::{Fields, Model};
//!
//! #[derive(serde::Serialize, serde::Deserialize, Fields)]
//! #[serde(rename_all = "camelCase")]
//! struct Dimensions { weight_grams: u32 }
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     price: f64,
//!     tags: Vec<String>,
//!     nickname: Option<String>,
//!     dimensions: Dimensions,
//! }
//!
//! let f = Product::FIELDS;
//! let cheap_and_light = Filter::lt(f.price, 10.0)
//!     .and(Filter::lte(f.dimensions.then(|d| d.weight_grams), 500u32));
//! assert_eq!(
//!     cheap_and_light.into_document()?,
//!     bson::doc! { "$and": [
//!         { "price": { "$lt": 10.0 } },
//!         // A `u32` is stored as BSON's 64-bit integer: so is the value.
//!         { "dimensions.weightGrams": { "$lte": 500_i64 } },
//!     ] },
//! );
//!
//! let update = Update::new()
//!     .inc(f.price, 1.5)
//!     .push(f.tags, "sale")
//!     .unset(f.nickname);
//! assert_eq!(
//!     update.into_document()?,
//!     bson::doc! {
//!         "$inc": { "price": 1.5 },
//!         "$push": { "tags": "sale" },
//!         "$unset": { "nickname": "" },
//!     },
//! );
//!
//! assert_eq!(Sort::desc(f.price).then_asc(f.id).into_document(), bson::doc! { "price": -1, "_id": 1 });
//! # Ok::<(), pattern_runtime::Error>(())
//! ```
//!
//! # Of one model
//!
//! A filter, sort or update is of the model whose field names it is built from:
//! `Filter::lt(Product::FIELDS.price, 10.0)` is a `Filter<Product>`, and only a handle on
//! `Product`'s documents takes it. Given to another model's handle, or joined with another
//! model's filter, it is a compile error:
//!
//! ```compile_fail
//! # use pattern_runtime::query::Filter;
//! # use pattern_runtime::Model;
//! # #[derive(serde::Serialize, serde::Deserialize, Model)]
//! # struct Product { #[serde(rename = "_id")] id: String, price: f64 }
//! # #[derive(serde::Serialize, serde::Deserialize, Model)]
//! # struct Order { #[serde(rename = "_id")] id: String, total: f64 }
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! // error: `Filter<Order>` is not a filter of `Product`
//! let _ = Product::collection(&db).find(Filter::gt(Order::FIELDS.total, 10.0)).await?;
//! # Ok(()) }
//! ```
//!
//! A dotted path ([`then`](crate::FieldName::then)) is of the model it starts from; the
//! condition inside [`elem_match`](Filter::elem_match) is over the item's own names. A
//! polymorphic model's handle takes the enum's names (`Notification::FIELDS`, its common
//! fields), and a variant's handle those of the variant's struct.
//!
//! # Values are data
//!
//! A value is serialized as the field's own type serializes it (serde's names inside it), and is
//! always a literal: an equality is sent as `{field: {$eq: value}}` (so a document value is
//! compared, never read as operators), a value stored by `$set` or `$push` is checked as every
//! stored value is (no `$`-prefixed or dotted keys, no nesting past
//! [`MAX_VALUE_DEPTH`](crate::limits::MAX_VALUE_DEPTH)), `pull` sends `$pullAll` (exact equality, where
//! `$pull` would read a document as a condition). Refused in a filter, where the server would
//! read the value as something else or cannot take it: a regular expression in `$in`, `$nin`
//! or `$all` (a pattern), a document with a `$` key among their items (an operator), a regex
//! under `$ne` or an order operator, a key holding NUL and `undefined` anywhere. A value that
//! cannot be serialized or stored is [`Error::InvalidValue`](crate::Error::InvalidValue) naming the field,
//! from [`into_document`](Filter::into_document), before anything is sent.
//!
//! A field declared with `#[serde(with = ..)]` or `serialize_with` has the kind
//! [`kept::Custom`]: its stored form is the serializer's, so it takes no typed value (filter it
//! with a `doc!`).
//!
//! # Where they go
//!
//! Every handle operation that takes a filter or an update document takes these too
//! ([`IntoFilter`], [`IntoUpdate`], and [`IntoSort`] for a find's sort). A `bson::Document` is still accepted there: the explicit
//! escape, checked at run time as before.
//!
//! # Sorts, limits, keyset pages, projections
//!
//! [`ModelCollection::find`](crate::ModelCollection::find) returns a
//! [`Find`]: `.sort(Sort::desc(f.price).then_asc(f.id))`, `.limit(n)`, `.await`
//! for a `Vec`, `.stream()` for the cursor, `.project::<P>()` to read only the fields of a
//! `#[projection(of = M)]` struct, and `.after(&last)` for the page after the last document
//! read. A keyset page needs a sort that ends with `_id` and whose other keys an index of the
//! model serves. A typed sort of the model's fields carries its keys in its type
//! ([`order`]), and `after` on a find without a sort, or sorted in an order no index serves,
//! does not compile. A sort given as a `bson::Document`, through a dotted path, or
//! [`erase`](Sort::erase)d is checked at run time instead:
//! [`Error::Unsupported`](crate::Error::Unsupported) before anything is sent. An optional key's `null`s take their place in the order (first
//! ascending, last descending), and so do an `f64` key's NaNs (below every other number) and,
//! in a field of several BSON types (a `Bson`), the values of each type, in the server's order
//! of types. A page cannot come after a regex, JavaScript code, `MinKey`, `MaxKey` or an array key
//! ([`Error::InvalidValue`](crate::Error::InvalidValue)). See [`Find::after`](crate::query::Find::after).
//!
//! # Each form and its document
//!
//! | typed | sent |
//! | --- | --- |
//! | `Filter::eq(f, v)` / `ne` / `gt` / `gte` / `lt` / `lte` | `{f: {$eq: v}}` / `$ne` / `$gt` / `$gte` / `$lt` / `$lte` |
//! | `Filter::is_in(f, [a, b])` / `not_in` | `{f: {$in: [a, b]}}` / `$nin` |
//! | `Filter::exists(f, true)` | `{f: {$exists: true}}` |
//! | `Filter::all(f, [a, b])` (a `Vec` field) | `{f: {$all: [a, b]}}` |
//! | `Filter::size(f, 3)` (a `Vec` field) | `{f: {$size: 3}}` |
//! | `Filter::elem_match(f, \|item\| filter)` (a `Vec` of `Fields` structs) | `{f: {$elemMatch: filter}}` |
//! | `a.and(b)`, `Filter::and_all([..])` / `a.or(b)`, `Filter::or_any([..])` / `Filter::none_of([..])` | `{$and: [a, b]}` / `$or` / `$nor` |
//! | `!a` | `{$nor: [a]}` |
//! | `Update::new().set(f, v)` | `{$set: {f: v}}` |
//! | `.unset(f)` (an `Option` field) | `{$unset: {f: ""}}` |
//! | `.inc(f, n)` / `mul` / `min` / `max` (a number field) | `{$inc: {f: n}}` / `$mul` / `$min` / `$max` |
//! | `.push(f, item)` / `push_each(f, items)` / `add_to_set(f, item)` (a `Vec` field) | `{$push: {f: item}}` / `{$push: {f: {$each: items}}}` / `$addToSet` |
//! | `.pull(f, item)` (a `Vec` field) | `{$pullAll: {f: [item]}}` |
//! | `.current_date(f)` (a `bson::DateTime` field) | `{$currentDate: {f: true}}` |
//! | `Sort::asc(f).then_desc(g)` | `{f: 1, g: -1}` |

mod filter;
mod kinds;
pub mod order;
mod update;
mod value;

pub use filter::{Filter, IntoFilter, IntoSort, Sort};
pub use kinds::{
    kept, Array, Comparable, Direct, FieldKind, FieldPath, Handled, Items, Number, Optional, Path,
    Settable, Step, Then, When,
};
pub use update::{IntoUpdate, Update};
pub use value::IntoValue;

pub use crate::schema::Free;
pub use crate::schema_version::read::{Find, Projected};

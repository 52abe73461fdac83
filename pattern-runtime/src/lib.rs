//! MongoDB schema design patterns, typed and checked at compile time, on the official `mongodb`
//! driver.
//!
//! Annotate a struct with `#[derive(Model)]` and the pattern attributes; the derive checks the
//! annotations against the struct and its serde names at compile time and generates the index
//! specifications, typed field names and operations; this crate runs them on the driver.
//!
//! # Models and indexes
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
//! // The derive resolved every name through serde: keys and index names use BSON names.
//! let names: Vec<_> = Product::SCHEMA.indexes().iter().map(|i| i.name()).collect();
//! assert_eq!(names, ["category_1_price_-1", "name_1", "ratingCount_-1"]);
//! assert_eq!(Product::FIELDS.rating_count, "ratingCount");
//! assert_eq!(Product::SCHEMA.collection(), "products");
//! ```
//!
//! At start-up, [`sync_indexes`] creates the declared indexes of every model in the program that
//! are missing, and reports the ones that differ and the ones no model declares:
//!
//! ```no_run
//! # use pattern_runtime::Model;
//! # #[derive(serde::Serialize, serde::Deserialize, Model)]
//! # struct Product { #[serde(rename = "_id")] id: String }
//! # async fn run() -> pattern_runtime::Result<()> {
//! let client = mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
//! let db = client.database("shop");
//! let report = pattern_runtime::sync_indexes(&db).await?;
//! print!("{report}");
//!
//! let products = Product::collection(&db); // the model's one handle
//! let count = products.count(pattern_runtime::query::Filter::default()).await?;
//! # Ok(()) }
//! ```
//!
//! # What `#[derive(Model)]` generates
//!
//! For `struct Product`, inside a `const _: () = { ... };` block so nothing is added to the
//! surrounding scope:
//! - `impl Model for Product`, whose [`Model::SCHEMA`] is a static [`ModelSchema`]: the
//!   collection, every serialized field with its BSON name, and the [`IndexSpec`](index::IndexSpec)s;
//! - `Product::FIELDS`, an inherent constant of an unnameable `ProductFields` struct with one
//!   [`FieldName`] per serialized field (so a user-defined `Product::FIELDS` would clash), and the
//!   same names through the [`Fields`](trait@Fields) trait;
//! - a registration that makes [`registered_models`] and [`sync_indexes`] see the model, with no
//!   hand-kept list;
//! - `impl Identified for Product` (its `_id` type and value, what a [`Ref<Product>`](Ref) holds;
//!   not when the `_id` has `#[serde(with = ..)]`) and the list of its `#[relation]` fields that
//!   other models' two-way relations are checked against (see [`relation`]);
//! - the way from the model's collection to its pattern handles (next section): trait impls on
//!   the model and on its typed field names, no function of the model's own.
//!
//! The one exception: each `#[extended_ref(ProductRef(..))]` shape declares its reference type,
//! `ProductRef`, next to the model (with the model's visibility), since other models hold it; see
//! [`extended_ref`].
//!
//! The input must be a non-generic struct with named fields, one of them serialized as `_id`.
//! The serde attributes are read by serde's own front end, so `rename`, `rename_all` and raw
//! identifiers give the same names serde writes; `flatten`, `transparent`, `into`, `from`,
//! `try_from` and `remote` are refused, since the stored keys could not be known.
//!
//! # The `#[model]` attribute
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `collection = "name"` | the collection | the type name in snake case, pluralised with `s` (`OrderLine` -> `order_lines`) |
//! | `group = "name"` | the group [`sync_group`] syncs, for programs whose models live in several databases (on a measurement: `#[bucket(group = "...")]`) | none: only [`sync_indexes`] and [`sync_models`] sync it |
//! | `crate = "path"` | where generated code finds this crate | `::pattern_runtime` |
//! | `derive(Clone, PartialEq)` | on an enum model: derives added to the types it generates (see [`polymorphic`]) | `Debug`, `Serialize`, `Deserialize` only |
//!
//! # The `#[index]` attribute
//!
//! On a field, the index is on that field: `#[index]` (ascending), `#[index(-1)]`,
//! `#[index("text")]`, `#[index("2dsphere")]`, `#[index("hashed")]`, followed by options.
//! On the struct, `keys(...)` lists the keys of a compound index in order:
//! `#[index(keys(category = 1, price = -1))]`, with `address.city = 1` for a path below a field.
//! Keys are Rust field names; the generated index uses their serialized names.
//!
//! A dotted path goes through the nested struct's names too: `dimensions.weight_grams` is
//! resolved through the serde names of the struct `dimensions` holds (directly, or in an
//! `Option`, `Vec`, `Box` or array), which must derive [`Fields`](trait@Fields) (or `Model`). A
//! misspelt segment is a compile error at that segment, and a `rename_all` on the nested struct
//! shows in the key (`dimensions.weightGrams`) and in the default name. Below a `bson::Document`,
//! `Bson` or map field the path is kept as written, and so is everything below an array position
//! (`items.0.sku`). The same holds for partial filter paths.
//!
//! Two indexes of one model with the same keys, `unique`, `sparse`, partial filter and collation
//! (two TTLs on one key, say) are a compile error: MongoDB keeps one index per such signature.
//!
//! | option | meaning |
//! | --- | --- |
//! | `unique`, `sparse`, `hidden` | the flag (`unique = false` also accepted); `sparse` skips documents *without* the field, and serde stores an `Option`'s `None` as `null`, so a unique sparse index on an `Option` field takes one `None` only, unless the field has `#[serde(skip_serializing_if = "Option::is_none")]` (or index only the set values with `partial(field(type = "string"))`, the field's BSON type) |
//! | `name = "..."` | the index name; default mongod's (`category_1_price_-1`) |
//! | `expire_after = "30d"` or `= 2592000` | TTL, on a single date field: `s`, `m`, `h`, `d`, `w` units, combinable (`"1d12h"`) |
//! | `collation(locale = "en", strength = 2)` | also `case_level = bool`, `numeric_ordering = bool` |
//! | `partial(status = "active", price(gt = 0), email(exists = true))` | `partialFilterExpression`; operators `eq`, `gt`, `gte`, `lt`, `lte`, `exists`, `type` |
//!
//! Every mistake is a compile error at the offending token: an unknown option, a key that is not
//! a field, a TTL on a compound index or on a field that is not a BSON date, `unique` on a hashed
//! key, two indexes with one name, a model without an `_id` field, `#[serde(flatten)]`.
//!
//! # Shard keys
//!
//! `#[shard_key(user_id)]` (or `id = "hashed"`, or several fields) declares the key a sharded
//! cluster distributes the collection by. A unique index that does not start with it, or a
//! ranged key on a field that only grows, is a compile error; the index sync shards the
//! collection on a sharded cluster and says why not elsewhere. See [`shard`].
//!
//! # The doctor
//!
//! [`doctor`](fn@doctor) audits a live database against the models compiled into the program, the
//! source article's checklist as code: arrays that can grow without bound (`#[bounded(n)]` on a
//! `Vec` declares the bound the application keeps; see [`bounded`]), document sizes and nesting
//! in a sample, indexes missing, undeclared, unused or redundant, TTLs missing, and each
//! pattern's invariants on a sample, each finding with the call that repairs it. It never
//! writes. See [`doctor`](mod@doctor).
//!
//! # Patterns
//!
//! | pattern | attribute | module |
//! | --- | --- | --- |
//! | document versioning with optimistic locking | `#[versioned(history = "article_revisions", keep = 50)]` on the struct, `#[version]` on an integer field | [`versioning`] |
//! | subset, with computed count / sum / average | `#[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]` on a `Vec`, `#[computed(count = ..)]` | [`subset`] |
//! | extended reference: copied fields kept in sync, or kept as snapshots | `#[extended_ref(CustomerRef(name, address))]` on the source, `#[extended_ref(propagate)]` / `#[extended_ref(snapshot)]` / `#[extended_ref(propagate, path = product)]` on the fields holding it | [`extended_ref`] |
//! | attribute: varying measurements as `[{key, value, qualifiers}]` with one compound index | `#[attribute(key = name, value = value, qualifiers(unit))]` on the item struct (with `#[derive(Fields)]`), `#[attribute]` on the model's `Vec` of items | [`attribute`] |
//! | polymorphic: one collection of several shapes told apart by a tag, typed per variant | `#[derive(Model)]` on an enum with `#[serde(tag = "type")]`; `#[index]` on the enum (common fields) or on a variant (partial, restricted to it) | [`polymorphic`] |
//! | relationships: typed references loaded in batches (one `$in` per referenced model), parent references with indexed children queries, two-way references kept consistent | `Ref<Part>` fields with `#[relation]`, `#[relation(parent, sort(time = -1))]`, `#[relation(inverse = owner)]` | [`relation`] |
//! | computed across collections: a user's total of its orders, kept exact as orders are written | `#[computed(sum = Order.amount, by = user_id)]`, `count = Order`, `min`, `max`; writes through `Order::collection(&db)` | [`computed`] |
//! | approximation: counters that avoid a write per event (batched in memory, sampled with probability p, sharded over documents) | `#[approximate(batched, threshold = 100)]`, `sampled, p = 0.01`, `sharded, shards = 16` on an integer field, or standalone handles | [`approximation`] |
//! | outlier: an embedded array that overflows into linked documents for the few documents that grow far past the rest | `#[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]` on a `Vec` | [`outlier`] |
//! | tree: nodes that keep their ancestors, and documents placed in a node that keep its path, so everything under a node is one indexed query; moves, renames and deletions rewrite every copy in one transaction | `#[tree(parent = parent, ancestors = ancestors)]` on the node model, `#[in_tree(Category, node = category, path = category_path)]` on the models placed in it | [`tree`] |
//! | preallocation: a grid of slot documents created ahead of time, booked by one atomic conditional update; bitmaps for sub-slots | `#[preallocated(resource = room_id, slot = date, holder = booked_by)]` (or `bitmap = half_hours, sub_slots = 48`) on the struct | [`preallocation`] |
//! | schema versioning: documents of older shapes read as the current one, converged in the background | `#[schema_version(older(UserV1 = 1, UserV2 = 2))]` on the struct, a field of type `SchemaVersion<3>` | [`schema_version`] |
//! | server-side validators: the `$jsonSchema` of every model, with the patterns' bounds, installed without surprises | nothing: every `#[derive(Model)]` struct and enum has one; [`validator::sync_validators`] installs it | [`validator`] |
//! | bucket (time series), or a native time-series collection | `#[derive(Measurement)]` with `#[bucket(key = device_id, time = timestamp, max_count = 200, span = "1h", summary(value(min, max, sum)))]`, or `#[bucket(native, key = .., time = .., granularity = "minutes")]` | [`bucket`] |
//!
//! # Several databases
//!
//! [`sync_indexes`] syncs every model of the program in one database. Where models live in
//! several, give each database's models a group and sync each group in its database
//! ([`sync_group`]), or list the models ([`sync_models`]):
//!
//! ```no_run
//! # use pattern_runtime::{Model, SyncOptions};
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! #[model(group = "audit")]
//! struct LoginEvent { #[serde(rename = "_id")] id: i64 }
//!
//! # async fn run(client: mongodb::Client) -> pattern_runtime::Result<()> {
//! let audit = client.database("audit");
//! pattern_runtime::sync_group(&audit, "audit", &SyncOptions::new()).await?;
//! pattern_runtime::sync_models(&audit, &[LoginEvent::SCHEMA], &SyncOptions::new()).await?;
//! # Ok(()) }
//! ```
//!
//! # Tracing
//!
//! Every operation runs in a [`tracing`](https://docs.rs/tracing) span named after it
//! (`pattern_runtime::subset.push`, ...) with the model, the collection and the `_id` where it is
//! at hand, and emits events for transaction retries (attempt, server code, label, backoff), the
//! fallback taken without transactions, and the documents written. Install any subscriber to see
//! them (`RUST_LOG=pattern_runtime=debug` with `tracing-subscriber`'s `EnvFilter`); without one
//! they cost nothing.
//!
//! | what | level | target |
//! | --- | --- | --- |
//! | operation spans: writes / reads | `INFO` / `DEBUG` | `pattern_runtime::<module>` |
//! | a transaction run again, a commit sent again (attempt, code, label, backoff) | `INFO` | `pattern_runtime::txn` |
//! | giving up after retrying for 120 s | `WARN` | `pattern_runtime::txn` |
//! | the fallback without transactions | `WARN` once per process, then `DEBUG` | `pattern_runtime::txn` |
//! | documents written, copies updated, indexes created / changed / hidden | `DEBUG` | the pattern's module |
//! | one summary per index sync | `INFO` when it changed something or found a mismatch, else `DEBUG` | `pattern_runtime::sync` |
//! | errors returned to the caller | `DEBUG` (never `ERROR`: the caller decides) | the operation's |
//!
//! `RUST_LOG=pattern_runtime=info` shows retries and syncs, `pattern_runtime::txn=info` retries
//! only, `pattern_runtime=debug` every write.
//!
//! # What the toolkit sends
//!
//! A caller's value is data: it is stored literally, or refused with a typed error before
//! anything is written. Never an operator, a field path or an expression.
//!
//! Ids are typed. An operation takes the model's own [`Model::Id`] (the `_id` field's type), a
//! grid's [`Preallocated::Resource`] and [`Preallocated::Slot`], a tree's key type, or what
//! converts to one without loss ([`IntoId`]): an operator document, or an id of another type,
//! does not compile. Where the stored type is not known (an `_id: Bson`, an `_id` under
//! `#[serde(with = ..)]`, an enum whose variants do not share one `_id` type, a slot's holder),
//! any value is accepted and checked when the operation runs, as the table says. A typed id is
//! checked too, once serialized: a `Document`-shaped id type cannot carry a `$` key either.
//!
//! | a caller's ... | goes into | kept literal by | refused ([`Error::InvalidValue`], nothing sent) |
//! | --- | --- | --- | --- |
//! | id, parent id, tree key, holder node, resource, slot, holder, bucket key, computed `by` value | filters, as equalities; `arrayFilters`; upsert filters | an equality of a checked value | a document with a `$` key at any depth (an operator), a regex or JavaScript code (a pattern), an array, a key with `.` or NUL, nesting past [`MAX_VALUE_DEPTH`] |
//! | item, attribute value or qualifier, measurement | `$set`, `$push`, `$addToSet`, inserts | update operators store values as given | keys starting with `$` or holding `.` or NUL, nesting past [`MAX_VALUE_DEPTH`] |
//! | the same, inside a pipeline (`Attributes::set`, tree moves) | pipeline stages | `{$literal: ..}`: a string starting with `$` is a string | as above |
//! | an item compared whole (`Outlier::remove`) | `$pull` | `{$eq: item}`: never a query on its fields | as above |
//! | attribute condition values (`eq`, `gt`, `is_in`, ...) | `$elemMatch` | `$eq` and comparison operands compare values | a regex in `is_in` (it would match as a pattern), `$` keys |
//! | field names (`Push::set` keys, counter fields, update paths) | key paths | | [`Error::InvalidKey`]: empty, a leading `$`, `.` inside a name, NUL |
//!
//! What a caller passes *as* a query or an update (`find(filter)`, `update(id, update)`) is
//! sent as written: that is its purpose. Update documents are still checked to be operators of
//! named fields that leave `_id` (and a versioned model's version) alone, and every value they
//! store as given (`$set`, `$setOnInsert`, `$min`, `$max`, `$push` and `$addToSet` with their
//! `$each` items, `$pullAll`) is checked like any stored value; a `$pull` condition is a query,
//! sent as written.
//!
//! Strings are stored as they are (`"$120"`, `"$/month"`, empty, NUL bytes, long), and so are
//! NaN and the infinities: MongoDB sorts NaN below every number and matches it with `$eq` NaN,
//! so an attribute holding NaN comes first in an ascending
//! [`find_sorted`](Attributes::find_sorted) and no `gt`/`lt` condition matches it. Summed
//! fields (bucket summaries, subset and computed sums) refuse NaN and the infinities
//! ([`Error::InvalidValue`]): one would poison the sum for good.
//!
//! No write leaves a document that can no longer be written:
//!
//! | pattern | what grows | budget |
//! | --- | --- | --- |
//! | outlier | the main document's array, each overflow document | `limit`/`capacity` items and `max_bytes` (8 MiB by default) each: the next push overflows or opens the next document |
//! | array buckets | a bucket's measurements | `max_count` and half of 16 MiB ([`BYTE_BUDGET`]), counted in the bucket's `bytes`: the next measurement opens a new bucket |
//! | keyed slots, rollups | one window | fixed by the window (the derive refuses slot windows over half of 16 MiB) |
//! | versioned documents | the document and its revision | the document stays small enough to be archived (16 MiB less the revision's fields): a larger replace or update is [`Error::DocumentTooLarge`], nothing written |
//! | subset | the parent's capped array | `limit` items; a push that would take the parent past 16 MiB is [`Error::DocumentTooLarge`] and nothing is written, and the parent stays writable |
//! | attribute arrays, two-way reference arrays | one item per key or per child | 16 MiB: the write that would pass it is [`Error::DocumentTooLarge`], nothing written; removing items still works |
//!
//! A whole document of the model's own type (an insert or a replace) is not held to
//! [`MAX_VALUE_DEPTH`]: its shape is the type's, and it reads back as it was written. Its keys
//! are still checked: one holding NUL cannot be encoded, and is [`Error::InvalidValue`]. A
//! subset's full item is an item, whichever handle writes it: it and its embedded form are
//! held to the table above (the embedded form goes into the parent's array).
//!
//! A single value (an item, a document, an update) over 16 MiB is refused before it is sent
//! ([`Error::DocumentTooLarge`]); a write whose *result* would pass a budget is refused by its
//! guard or by the server, and nothing is written.
//!
//! # Patterns together
//!
//! A model may use several patterns, and models derive data from each other: copies
//! ([extended references](extended_ref)), counts and sums ([computed fields](computed)). The
//! [map of derived data](derived) knows, for each model, which other documents keep data from
//! which of its fields, and the pattern handles' writes go through it: the data derived from
//! the fields a write changes follows it, in the same transaction, and a copy of a computed
//! value follows the value. A write that changes no field anything derives from sends exactly
//! what it did alone.
//!
//! Declared in the map: extended-reference `propagate` copies, `#[computed]` fields, a
//! two-way relation's owner arrays (a child inserted or deleted through any handle, or whose
//! owner field a grid booking writes, moves between the owners' arrays) and a subset's
//! embedded items and counters (a full item written through another handle, such as
//! the model handle or a polymorphic variant, rebuilds its parents' subsets in the same
//! transaction: one read of the first items and one `$group` per parent). Each pattern's own
//! fields are kept by its own handle: another handle's update of them is refused (below).
//! A two-way relation's children also follow their owner: an owner deleted through any handle
//! (a tree cascade, the model handle) leaves no child naming it (an optional side is set to
//! `null`; a required one refuses the deletion while children name it).
//! [`Slots::allocate`] hands each batch's new slots to the map after the batch (below).
//!
//! A write that points a document at a count's or sum's target that does not exist (an
//! insert, a booking, a `by` moved) is [`Error::NotFound`] with nothing written, through
//! every handle; a document that pointed at a target since deleted stays writable (the
//! [`computed`] module docs). A sum that would leave the 64-bit range is
//! [`Error::InvalidValue`] naming the field, nothing written; so is an `$inc` or `$mul` of a
//! field the model declares as an integer by a double or a decimal (the server would store a
//! double the model cannot read), through every handle.
//!
//! Every pair of patterns is tested against the server, each write of each pattern then every
//! `check()` and the doctor; the combinations below are tested one by one, and what cannot be
//! kept correct is refused at compile time.
//!
//! | combination | what holds |
//! | --- | --- |
//! | tree node + extended-reference source (the key copied) | `rename`, `move_under`, `delete` rewrite the copies of what they change |
//! | tree holder + `#[computed]` count or sum of the holders per node | `Holders::insert`, `insert_many`, `place` and `Tree::delete` (leaf, reparent, cascade) keep every count and sum |
//! | tree nodes counted by another model | `Tree::insert`, `insert_many` and `delete` move the counts |
//! | computed source + extended-reference source (one model) | the model handle's writes rewrite the copies and move the counts |
//! | a computed field copied by an extended reference | every write that moves the value rewrites the copies |
//! | versioned model + extended-reference source + computed source | `insert`, `replace`, `update`, `delete` keep copies and counts with the revision, in one transaction; a stale version writes nothing |
//! | polymorphic enum + computed source | counts and sums by a common field; variant writes keep them |
//! | two-way relation + computed count of the children per owner | `assign` moves the count with the owner, in its transaction |
//! | two-way relation + a grid whose holder is the child's owner field | `book`, `cancel`, `release` move the slot between the owners' arrays; `assign` of a held slot is refused (book it) |
//! | two-way children inserted or deleted through the model handle, a subset push or a tree cascade | the owners' arrays follow |
//! | subset full items + computed count of them | a push or a removal moves the count, in the push's transaction |
//! | outlier + extended-reference copy of its count + computed sum of the counts | `push`, `push_many`, `remove`, `rebuild` keep the copy and the sum (also under 8 writers) |
//! | attribute array copied by an extended reference | `set` and `unset` rewrite the copies |
//! | preallocated grid + computed count of the slots per holder | `book`, `book_all`, `cancel`, `release` move the holder's count |
//! | subset parent's array or counters copied or summed by another model | `push`, `remove`, `rebuild` keep them |
//! | a field another pattern keeps (a tree's parent, ancestors and key; a holder's node and path; a computed value; a subset's array and counters; an outlier's items, count and flag; an attribute array; a two-way side; a slot's holder and bitmap) written through another handle's update or a subset push's `set` | refused: a typed update has no setter for it (a compile error naming the handle), a `doc!` update is [`Error::KeptField`] naming the operation to use, nothing written |
//! | a tree node inserted or deleted, or a holder inserted in a node, through the model handle | refused ([`Error::Unsupported`]): `Tree` and `Holders` compute the ancestors and paths (a replace is accepted when it keeps the tree's fields: next row) |
//! | a whole document replaced (the model handle's [`replace`](ModelCollection::replace)) with another value in a field a pattern keeps (a tree's key or parent, a holder's node, a computed value, an outlier's count, a subset's items, a two-way side) | refused ([`Error::KeptField`]), nothing written; the kept fields ride in the replace's filter, so a replace that keeps them costs nothing more. An attribute array may change in a replace, one item per key (checked before sending) |
//! | grid slots that are tree holders, allocated | each slot gets the path of the node it names (read once per batch, as `Holders::insert` computes it); a missing node is [`Error::NotFound`] of the node, the batch not sent |
//! | a subset whose full items are grid slots (the holder embedded) | `allocate`, `book`, `book_all`, `cancel`, `release` keep the parents' items and counts |
//! | a grid whose holder is an extended-reference copy | `cancel` finds the holder by the copy's `_id`, whatever a rename rewrote since |
//! | tree nodes or holders that are two-way sides | a cascade deleting a child pulls it from its owner's array; deleting an owner sets its children's optional side to `null`, and is refused ([`Error::StillNamed`], nothing written) while a required side names it |
//! | a computed sum, min or max of an `#[approximate]` counter; a kept copy of one | refused at compile time: a counter's events are single `$inc`s nothing follows (a count of the documents, and a `snapshot` copy, are accepted) |
//! | a two-way relation whose side is an extended-reference copy | refused at compile time: `assign` and `repair` write bare `_id`s there |
//! | versioned model written many at once (`insert_many`, `update_many`, `delete_many`) | refused at compile time: each write of a versioned model archives a revision |
//! | versioned model + [`References`] writes | refused at compile time (`References::<M>::new(&db)` still checks and repairs its copies) |
//! | versioned model + outlier, subset, attribute, approximate counter, preallocated grid, two-way relation, tree or holder, `propagate` copy held | refused at compile time: their writes would change the document without a new version, and the next `replace` would undo them |
//! | versioned model as a subset's full items | refused at compile time: the subset's `push` and `remove` write them |
//! | polymorphic enum + subset, computed field, extended reference, attribute, outlier, relation, grid, tree, holder, bound or counter on it | refused at compile time: keep that data in a struct model of its own (an enum may be a computed *source*, a subset's full items, a grid's holder) |
//! | schema versioning + versioned model | old-shape revisions and documents read as the current type (`history`, `revision`, `modify`, `revert`); `replace` stores the current shape |
//! | schema versioning + extended-reference source, subset full items, tree nodes and holders, relation targets, computed source | reads, `rebuild`, the copy check, subset `rebuild` and `page`, tree reads and moves see each older document as its current shape; every toolkit update upgrades the documents it matches first; `converge` and `writing_back` rebuild the copies of what they rewrite. repairs (subset `rebuild`, computed `recompute`) upgrade the sources they aggregate first, and `References::watch` propagates an older-shape source's upgrade. The read-only checks aggregate stored field names: a summed field renamed by an upgrade reports drift until converged |
//! | schema versioning on a polymorphic enum | refused at compile time: its documents are read per variant by their tag |
//! | a measurement + versioning or a model's patterns | refused at compile time: buckets are shared by many writers |
//! | `#[subset]` and `#[outlier]` on one field; an outlier on a two-way relation's array | refused at compile time: choose one |
//! | an outlier's overflow in the model's own collection | refused at compile time: its unique index would admit one document |
//!
//! A document with overflow documents deleted through any handle (the model handle, a tree
//! cascade) takes them with it (the outlier's entry in the map reads the `_id`: only inserts and
//! deletes reach it).
//!
//!
//! Several operations, of several patterns, run in one caller's [`Transaction`]: bind each
//! handle with `in_transaction(&tx)`, then commit or abort. Aborted, nothing is kept; committed,
//! every write and everything derived from it is there. Bound handles:
//! [`ModelCollection`] (every model's writes, and a polymorphic model's
//! [`variant`](ModelCollection::variant) handles), [`ComputedFields`], [`References`],
//! [`Slots`], [`Subset`], [`Tree`] and the [`Holders`] taken from a
//! bound tree, [`Outlier`], [`Attributes`], [`TwoWay`], [`Series`],
//! [`SampledCounter`](approximation::SampledCounter),
//! [`ShardedCounter`](approximation::ShardedCounter) and
//! [`ShardedField`](approximation::ShardedField). A
//! [`BatchedCounter`](approximation::BatchedCounter) has none: one of its writes carries the
//! events of every caller since its last flush. An error of the server's ends the transaction
//! (MongoDB has no savepoints), and so does a refusal made once the operation had written
//! (a count's missing target, found by the count's write): the operation returns the typed
//! error, and the transaction is then ended, nothing of it kept. See [`Transaction`].
//!
//! Writes that do not go through the map (documented on each): approximate counters (a copy
//! or a sum of one would cost each counted event a transaction and two reads, which the
//! pattern exists to avoid: refused at compile time), bucket documents (no model derives data
//! from them), and the tree's and the two-way relation's `repair()` (they rewrite only the
//! pattern's own fields). [`Slots::allocate`] inserts free slots 1 000 at a time with
//! duplicates skipped, outside any transaction: what derives from the slots gets each batch's
//! new ones after it. The driver's collection is an explicit choice,
//! [`ModelCollection::raw`]: its writes keep nothing, the doctor reports the drift they leave,
//! and each pattern's repair call fixes it. A repair's writes rebuild what derives from them
//! (a sum is recomputed from its sources, not moved by the difference the repair wrote), so
//! repairs may run in any order.
//!
//! # One check, repair and rebuild
//!
//! Every pattern handle with derived data or invariants answers `check()`, a [`CheckReport`]
//! (documents read; each finding with its documents and the call that repairs it), and
//! `repair()`, a [`RepairReport`] (documents rewritten; what a check after it still finds):
//! [`Tree`] (nodes and holders), [`Subset`], [`ComputedFields`], [`References`] (every copy of
//! the source), [`TwoWay`], [`Outlier`], [`Series`] (bucket caps), [`Attributes`] (keys held
//! twice) and [`Slots`] (the grid). A check reads every document a page at a time and runs the
//! same audit the [doctor](mod@doctor) runs over a sample; a repair works from what the check
//! listed, and leaves what it cannot decide (an orphan's owner, a slot allocated twice) in
//! `left`. The test suite seeds one drift per pattern: the check and the doctor find exactly
//! it, and the repair fixes it.
//!
//! The handles whose derived data belongs to one document also answer `rebuild(id)`, a
//! [`RebuildReport`] (documents rewritten), which rewrites that document's derived data from
//! what it derives from: [`ComputedFields`] (the document's computed values), [`References`]
//! (every copy of the source `id`), [`Subset`] (the parent's excerpt) and [`Outlier`] (the
//! document's count and flag).
//!
//! # Features
//!
//! `derive` (the re-exported derives, on by default; `pattern-derive` is built either way, since
//! the runtime's own operations use its span attribute) and the driver's features, passed through: `rustls-tls`
//! and `dns-resolver` (on by default, as in the driver), `rustls-tls-aws-lc`, `openssl-tls`,
//! `zstd-compression`, `zlib-compression`, `snappy-compression`, `aws-auth`, `gssapi-auth`,
//! `cert-key-password`, `in-use-encryption`, `socks5-proxy`. The driver needs exactly one TLS
//! backend: to choose another, turn the defaults off and pick one.
//!
//! ```toml
//! pattern-runtime = { version = "0.1", default-features = false, features = ["derive", "openssl-tls", "dns-resolver"] }
//! ```
//!
//! Any other driver feature: depend on `mongodb` 3.9 yourself with it; Cargo builds one driver
//! with the union of the features.
//!
//! # One way in: the model's collection
//!
//! Every handle on a model's documents starts at `M::collection(&db)` (a [`ModelCollection`];
//! `use pattern_runtime::Model` brings the trait with the derive). The model's own documents are
//! written and read through it; a pattern's own operations are one call further, by one rule:
//! a pattern of the whole model is named after its handle, a pattern of one field takes the
//! field's typed name. Nothing is added to your types but the `FIELDS` constant.
//!
//! | call | handle | for |
//! | --- | --- | --- |
//! | `Product::collection(&db)` | [`ModelCollection`] | every model's own documents: `get`, `find`, `find_one`, `count`, `insert`, `update`, `replace`, `delete` and their `_many` forms, each keeping what the model's patterns keep; an enum's reads over every variant; the index sync; the driver's collection (`raw()`) |
//! | `products.subset(Product::FIELDS.recent_reviews)` | [`Subset`] | a `#[subset(..)]` field |
//! | `users.outlier(User::FIELDS.posts)` | [`Outlier`] | an `#[outlier(..)]` field |
//! | `records.attributes(Record::FIELDS.specs)` | [`Attributes`] | an `#[attribute]` field |
//! | `people.relation(Person::FIELDS.tasks)` | [`Relation`], or [`TwoWay`] on a two-way relation's single side | a `#[relation(..)]` field |
//! | `pages.counter(Page::FIELDS.views)` | [`BatchedCounter`](approximation::BatchedCounter), [`SampledCounter`](approximation::SampledCounter), or [`ShardedFields`](approximation::ShardedFields) (`.of(id)`: one document's [`ShardedField`](approximation::ShardedField)) | an `#[approximate(..)]` field |
//! | `categories.tree()` | [`Tree`] | a `#[tree]` node model (its holders: [`Tree::holders`]) |
//! | `room_days.slots()` | [`Slots`] | a `#[preallocated]` grid |
//! | `customers.references()` | [`References`] | the source of `#[extended_ref(..)]` copies |
//! | `users.computed()` | [`ComputedFields`] | a model with `#[computed(.. = Order.amount, by = ..)]` fields |
//! | `NotificationEmail::collection(&db)` | [`VariantCollection`] | a variant of a polymorphic enum |
//! | `Reading::series(&db)` | [`Series`] | a [`Measurement`] (`use pattern_runtime::Measurement`) |
//!
//! A field of another pattern, or of another model, is a compile error at the field
//! (`` `FieldName<String>` is not a `#[subset(..)]` field of `Product` ``); so is `tree()` on a
//! model that is no tree.
//!
//! A handle in the caller's transaction is the same call followed by `.in_transaction(&tx)`; a
//! pattern's handle reached from a model handle in a transaction is in it too (a batched
//! counter's flushes and a relation's loads excepted: they never take part in one).
//! The handle types' own constructors (`ModelCollection::<Order>::new(&db)`, ...) are the same
//! handles, for generic code. Counters and grids that belong to no model have constructors of
//! their own ([`approximation`]); database-wide jobs are functions: [`sync_indexes`],
//! [`doctor`](fn@doctor). [`patterns`] puts every pattern on one page, with the round trips
//! of each operation.
//!
//! # The names of operations
//!
//! Every handle uses the same verbs for the same meaning. An operation on one thing the caller
//! names (by value, `_id`, key or slot) is a bare verb: `insert`, `get`, `update`, `replace`,
//! `delete`, `push`, `book`. Its form for many documents adds `_many` (`insert_many`,
//! `push_many`), and so does a write of every document a filter matches (`update_many`,
//! `delete_many`). Reads by filter are `find`, `find_one` and `count`. On the model and
//! variant handles one verb returns one type: `insert`, `update` and `replace` a [`Written`]
//! (the `_id`, and a versioned model's new version), `update_many` an [`Updated`], `delete`
//! nothing. A pattern handle's `insert` returns what that pattern wrote: the tree's node with
//! its kept fields filled in, nothing for a bucket's measurement or a tree's holder.
//!
//! # Errors
//!
//! Every operation returns [`Result`], whose [`Error`] gives each failure a caller may handle its
//! own variant (a duplicate key, an index conflict, ...) and carries the server's code otherwise.
//! Whatever the pattern, something an operation names that does not exist is one
//! [`Error::NotFound`]: its [`Missing`] says what was looked for (a document, a revision, a
//! tree's node, a preallocated slot) and which one. What the toolkit refuses before anything is
//! sent has four variants, [`Error::is_refused_input`] says yes to each: a value that would not
//! be stored or compared as given ([`Error::InvalidValue`]), a key that cannot be a field name
//! ([`Error::InvalidKey`]), a field another pattern keeps ([`Error::KeptField`]), and a call
//! that does not apply to the model as declared ([`Error::Unsupported`]).

#![warn(missing_docs)]

// The layers, bottom up: errors and index specifications; the schema (models, fields, the
// registry and `PatternSpec`); the index sync and the `Model` trait; one module per pattern; this
// file, the public surface. A module imports only from the layers below it.
mod checks;
mod copies;
pub mod derived;
pub(crate) mod error;
mod finding;
pub mod index;
mod literal;
mod maintenance;
mod schema;
pub mod shard;
mod sync;
pub(crate) mod txn;

mod model;
mod periodic;
mod progress;
mod span;
mod writes;

// One line per pattern.
pub mod approximation;
pub mod attribute;
pub mod bounded;
pub mod bucket;
pub mod computed;
pub mod doctor;
pub mod extended_ref;
pub mod outlier;
pub mod polymorphic;
pub mod preallocation;
pub mod query;
pub mod relation;
pub mod schema_version;
pub mod subset;
pub mod tree;
pub mod validator;
pub mod versioning;

// The page every pattern shares; `tests/integration/round_trips.rs` checks its figures against the server.
#[doc = include_str!("../docs/patterns.md")]
pub mod patterns {}

pub use attribute::{AttributeItem, AttributeKey, Attributes};
pub use bucket::{
    BatchReport, Granularity, KeepsMeasurements, Measurement, Measurements, Series, SplitReport,
    Storage, Summary,
};
pub use computed::{Aggregate, ComputedFields, Recomputed, Refreshed, Refresher};
pub use doctor::{doctor, doctor_group, doctor_models, DoctorOptions, DoctorReport};
pub use error::{
    check_size, validate_key, Error, IndexConflict, Missing, Result, BYTE_BUDGET, MAX_DOCUMENT_SIZE,
};
pub use extended_ref::{
    Copied, CopiesUpdated, Embedding, ExtendedRef, Mode, Propagation, Referenced, References,
    Watcher,
};
pub use finding::{CheckReport, RebuildReport, RepairReport};
pub use literal::MAX_VALUE_DEPTH;
pub use model::{IntoId, Model, ModelCollection, Pending, Unversioned};
pub use outlier::{Outlier, OutlierState};
pub use periodic::{Periodic, Stopped};
pub use polymorphic::{Polymorphic, Projection, Variant, VariantCollection};
pub use preallocation::{Allocated, Allocator, AllocatorStopped, Preallocated, Slots};
pub use progress::Progress;
pub use relation::{Dangling, Identified, Loaded, Ref, Relation, TwoWay};
pub use schema::{
    registered_models, Annotation, Companion, FieldName, FieldSchema, Fields, IndexesNeeded,
    KeptFields, ModelSchema, Nests, PatternSpec,
};
pub use schema_version::{Find, Projected};
pub use shard::{ShardKey, ShardReport, ShardStatus};
pub use subset::{Computed, ComputedKind, Subset};
pub use sync::{
    list_indexes, sync_group, sync_indexes, sync_indexes_with, sync_models, IndexReport,
    IndexStatus, OnMismatch, OnUnmanaged, SyncOptions, SyncReport,
};
pub use tree::{Deleted, Deletion, Holders, InTree, RenamableTree, Tree, TreeNode};
pub use txn::Transaction;
pub use versioning::{Revision, Versioned};
pub use writes::{At, Target, Updated, Written};

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

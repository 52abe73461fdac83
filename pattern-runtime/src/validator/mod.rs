//! Server-side validators made from the models: a `$jsonSchema` per model that every writer
//! meets (other services, the shell, scripts), with the bounds the patterns keep.
//!
//! `#[derive(Model)]` records each stored field's shape (through [`BsonShape`]);
//! [`ModelSchema::validator`](crate::ModelSchema::validator) turns it into a validator,
//! [`sync_validators`] installs it, [`refused_documents`] (and the [doctor](mod@crate::doctor))
//! counts the stored documents it would refuse, and a write the server refuses is
//! [`Error::ValidationFailed`](crate::Error::ValidationFailed) naming the fields.
//!
//! ```no_run
//! use pattern_runtime::validator::{sync_validators, ValidatorOptions};
//! use pattern_runtime::Model;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! struct Review {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     stars: i32,
//!     text: Option<String>,
//! }
//!
//! # async fn start(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! // Installed where there is none, as `moderate` and `warn`: nothing refused yet.
//! let report = sync_validators(&db, &[Review::SCHEMA], &ValidatorOptions::new()).await?;
//! for drift in report.drifted() {
//!     eprintln!("{drift}");
//! }
//! // Once the doctor finds no document the validator refuses: refuse bad writes.
//! let strict = ValidatorOptions::new().strict().error().replace();
//! sync_validators(&db, &[Review::SCHEMA], &strict).await?;
//! # Ok(()) }
//! ```
//!
//! # What the validator says
//!
//! | Rust | `$jsonSchema` |
//! | --- | --- |
//! | `i32` | `bsonType: "int"` (a `long` may not fit) |
//! | `i8`, `i16`, `u8`, `u16` | `"int"` with the type's `minimum` and `maximum` |
//! | `i64` | `["long", "int"]`: the `bson` serializer writes a `long`, the server's `$inc` and `$sum` keep small integers an `int`, and both read back exactly |
//! | `u32`, `u64` | `["long", "int"]`, `minimum: 0` (and `u32`'s `maximum`) |
//! | `f32`, `f64` | `["double", "int", "long"]`: a float reads back from any number |
//! | `String`, `&str`, `char` | `"string"` |
//! | `bool`; `bson::DateTime`; `ObjectId`; `Binary`; `Decimal128`; `Timestamp`; `Regex`; `Document` | `"bool"`; `"date"`; `"objectId"`; `"binData"`; `"decimal"`; `"timestamp"`; `"regex"`; `"object"` |
//! | `Option<T>` | `T`'s type or `"null"`, and not required |
//! | `Vec<T>`, `VecDeque<T>`, sets, arrays, slices | `"array"` with `items` of `T` (a `[T; N]`'s length is not checked) |
//! | `HashMap`, `BTreeMap` | `"object"` |
//! | a struct deriving `Model` or `Fields` | `"object"` with its own `required` and `properties` |
//! | `Box<T>`, `Arc<T>`, `&T` | `T` |
//! | a subset's or an outlier's array, `#[bounded(n)]` | `maxItems`: the `limit`, `n` |
//! | a `#[bucket]` measurement | its bucket document (below) |
//!
//! Every stored field of a known shape is `required`, except an `Option` and a field with
//! `#[serde(skip_serializing_if = ..)]`. Fields beside the declared ones are allowed unless
//! [`ValidatorOptions::forbid_other_fields`].
//!
//! [`Error::ValidationFailed`](crate::Error::ValidationFailed) names each failing field by its
//! dotted path; a key that itself holds a `.` makes that path ambiguous.
//!
//! The doctor judges with the default options (other fields allowed), whatever is installed:
//! [`refused_documents`] with the installed options counts for a closed validator.
//!
//! **Left out** (any value accepted there, the field not required): a field whose type has no
//! [`BsonShape`] (a struct deriving only serde, an enum, `Bson`, a type of another crate;
//! implement `BsonShape` for it, or derive `Fields` on a struct), and a field with a custom
//! serializer (`#[serde(with = ..)]`, `serialize_with`), whose stored type the derive cannot
//! know, unless declared with `#[validate]`. A struct nested in itself is an object without
//! properties past 16 levels.
//!
//! # Declaring a field's type: `#[validate]`
//!
//! On a field of a `Model`, `Fields` or `Measurement` struct, or of a variant of an enum
//! model:
//!
//! | attribute | the field in the validator |
//! | --- | --- |
//! | `#[validate(bson_type = "string")]` | that BSON type (a `$jsonSchema` alias), required; an `Option` field is also `null` and not required |
//! | `#[validate(bson_type = ["long", "int"])]` | any of these |
//! | `#[validate(skip)]` | anything, not required: a field other writers store in several types |
//!
//! ```
//! use pattern_runtime::Model;
//!
//! /// serde stores it as its string; it has no `BsonShape`.
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Sku(String);
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! struct Item {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     #[validate(bson_type = "string")]
//!     sku: Sku,
//!     #[validate(skip)]
//!     legacy: Option<bson::Bson>,
//! }
//!
//! let v = Item::SCHEMA.validator(&Default::default()).unwrap();
//! let sku = v.get_document("$jsonSchema").unwrap()
//!     .get_document("properties").unwrap()
//!     .get_document("sku").unwrap();
//! assert_eq!(sku.get_str("bsonType").unwrap(), "string");
//! ```
//!
//! An alias that is not one of `$jsonSchema`'s (`"strnig"`), `skip` with `bson_type`, an
//! unknown or repeated option, and `#[validate]` on a field serde never stores are compile
//! errors at the token. The declared type is the user's word: the derive does not check it
//! against the serializer.
//!
//! An enum model (`#[serde(tag = ..)]`) has one `oneOf` branch per tag value, each requiring
//! its tag and holding its variant's fields; an unknown tag fails every branch (and is named
//! as the failing field), unless a `#[serde(other)]` variant reads other tags.
//!
//! # Beside the model's documents
//!
//! [`ModelSchema::validators`](crate::ModelSchema::validators) lists, after the model's own, a
//! validator for each collection where its patterns keep documents, and [`sync_validators`]
//! installs them all:
//!
//! | pattern | collection | documents |
//! | --- | --- | --- |
//! | `#[versioned(history = ..)]` | the history | `{_id: objectId, docId: <the model's _id>, version, snapshot: <any object>, archivedAt: date, deleted?: bool}`: a snapshot keeps the document as it was stored, in whichever shape |
//! | `#[outlier(overflow = ..)]` | the overflow documents | `{_id: string (an objectId where two parents' ids read alike, `7` and `"7"`), <parent>: <the model's _id>, seq, <field>: [at most capacity items of the field's item shape], full?: bool}` |
//! | `#[approximate(sharded)]` | the shards | `{_id: {of: <the model's _id>, shard}, count}` |
//! | `#[bucket(max_count = ..)]` | the series (the measurement's own collection) | `{_id: objectId, <keys>, start, end, first, last: date, count: 0..=max_count, bytes?, summary?: object, measurements: [at most max_count measurements without their keys]}` |
//!
//! A `slots` series' windows: `{_id: objectId, <keys>, <time>: date, <value>?: object}` (the
//! maps of slots are objects; what is in them is not checked). A `rollup` series' windows:
//! `{_id: objectId, <keys>, <time>: date, <field>_num: a count, <field>_sum?, <field>_min?,
//! <field>_max?}` for each summarised field, the extremes of the field's own shape and a sum of
//! integers an `int` or `long` (absent until a measurement has the field).
//!
//! An integer the server widens is refused, not stored: a count or sum in an `i32` field
//! pushed past `i32::MAX` (a computed sum, a batched counter's flush, a sharded field's
//! snapshot) becomes a `long`, which the field's `"int"` refuses under `error`
//! ([`Error::ValidationFailed`](crate::Error::ValidationFailed), nothing written; a batched
//! count stays pending). Declare such a field `i64`.
//!
//! **None:** a native time-series series gets no validator ([`ValidatorState::NotGenerated`]):
//! the server refuses one on a time-series collection. **Not yet:** a collection holding
//! documents of several shapes (the variants of a polymorphic collection declared as separate
//! structs, or two models naming one collection) gets none either: declare an enum model to
//! have one `oneOf` validator. A
//! `#[schema_version]` model's validator describes its current shape, so its older documents
//! fail it until converged (install at `moderate` until then).
//!
//! # Installing
//!
//! [`sync_validators`] creates a missing collection with its validator, and applies it with
//! `collMod` where there is none, at the options' level and action (`moderate` and `warn` by
//! default: they suit a collection that already holds data). An installed validator, level or
//! action that differs from the declaration (a change by hand, or a model that changed) is
//! reported ([`ValidatorState::Drift`]) and left as it is: a validator is never replaced,
//! tightened or switched to `error` unless asked ([`ValidatorOptions::replace`]).
//!
//! # Tracing
//!
//! [`sync_validators`] runs in an `INFO` span `pattern_runtime::validator.sync_validators`, with
//! a `DEBUG` event per model and an `INFO` event counting the drifted ones.

pub(crate) mod check;
pub(crate) mod shape;
mod spec;
mod sync;

pub use check::{refused_documents, Refused};
pub use shape::{BsonShape, Property, Shape};
pub use spec::{Action, Declared, Installed, Level, ValidatorOptions};
pub use sync::{sync_validators, ValidatorReport, ValidatorState, ValidatorStatus};

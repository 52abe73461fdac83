//! Fields computed from another collection (the computed pattern): a user's `totalSpent`, the
//! sum of the `amount` of the user's orders, kept in the user document so that reading it costs
//! nothing.
//!
//! The subset pattern's `#[computed(..)]` fields summarise the items of a subset; this module's
//! summarise the documents of another model that point back at this one. Declare them on the
//! model that holds the value (the target), naming the source model, its field and the source's
//! field that holds the target's `_id`:
//!
//! | form | keeps | kept by |
//! | --- | --- | --- |
//! | `#[computed(sum = Order.amount, by = user_id)]` | the sum of `amount` over the orders whose `user_id` is this document's `_id` | `$inc` |
//! | `#[computed(count = Order, by = user_id)]` | how many such orders | `$inc` |
//! | `#[computed(max = Order.amount, by = user_id)]` (`min`) | the largest (smallest) `amount`, `null` without orders | `$max` (`$min`) when an order is added; recomputed from the orders when one is removed or lowered |
//!
//! The checks at compile time: the source is a model (`Order: Model`), the summed field and the
//! kept field are numbers, a sum of a float is kept in a float, a count in an integer, a min or
//! max in an `Option` (there may be no orders), and `by` holds the target's `_id` type
//! (`String` for a `String` `_id`, `Option<String>`, or `Ref<User>`, `Option<Ref<User>>`).
//! The source's `by` field gets an index (`userId_1`), synced with the target model: the
//! recomputations and the min/max repairs read through it.
//!
//! ```
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[computed(sum = Order.amount, by = user_id)]
//!     total_spent: i64,
//!     #[computed(count = Order, by = user_id)]
//!     order_count: i64,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     user_id: String,
//!     amount: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! User::collection(&db)
//!     .insert(&User { id: "u1".into(), total_spent: 0, order_count: 0 })
//!     .await?;
//! // Each write of an order and the `$inc` of its user, in one transaction.
//! let orders = Order::collection(&db);
//! orders.insert(&Order { id: 1, user_id: "u1".into(), amount: 1200 }).await?;
//! orders.insert(&Order { id: 2, user_id: "u1".into(), amount: 3000 }).await?;
//! orders.update(2, bson::doc! { "$set": { Order::FIELDS.amount: 2500 } }).await?;
//! orders.delete(1).await?;
//!
//! // Repairs: what was written around the toolkit.
//! let users = User::collection(&db).computed();
//! assert!(users.check().await?.is_clean());
//! users.rebuild("u1").await?;
//! # Ok(()) }
//! ```
//!
//! # Writes of the source
//!
//! The source model's own handle (`Order::collection(&db)`, a [`ModelCollection`](crate::ModelCollection))
//! writes it and keeps every field computed from it exact: it finds them in the registry of the
//! program's models (every `#[derive(Model)]`), so the source model declares nothing.
//! [`insert`](crate::ModelCollection::insert), [`replace`](crate::ModelCollection::replace),
//! [`update`](crate::ModelCollection::update) (an operator update; one that touches neither
//! `by` nor a summed field is a plain `update`, no transaction; one that changes them by
//! top-level `$set`, `$unset` or `$inc` needs no read back, others one `find`) and
//! [`delete`](crate::ModelCollection::delete)
//! each write the source (one command that also returns the old values), then one update per
//! target document concerned (the old and the new one when an order
//! moves to another user), in one transaction retried on transient errors: concurrent writers
//! leave every value exact. A write that points a source at a target that does not exist (an
//! insert, a `by` changed) is [`Error::NotFound`] and nothing is written, so a target is
//! inserted before its sources, with its computed fields empty (`0`, `None`): an insert of a
//! target stores the values it is given, unchecked, and [`ComputedFields::check`] reports any
//! other value (`rebuild(id)` repairs it). A write that points a source at a missing target is
//! refused whichever pattern's
//! handle writes the source (a slot booked for a holder counted per holder, a variant
//! inserted); a source that already pointed at a target since deleted can still be written
//! (an outlier push, an attribute set, an update of other fields), its contribution kept
//! nowhere: a deleted target must not make its sources unwritable. A source whose `by` is
//! `null` or missing counts for nobody. A NaN or infinite value
//! in a field a sum, a min or a max reads is [`Error::InvalidValue`], before anything is sent
//! (the computed value would keep it for good), and so is a `by` value that cannot name one
//! target (an operator document, a regex), whichever handle writes the source: in an insert, a
//! replace, a pushed item, the `$set` of an update or an `$inc`, `$mul`, `$min` or
//! `$max` by a NaN or an infinity. What only the write can tell (an `$inc` that overflows a
//! double) is refused once it is sent: the toolkit's transaction keeps nothing, and a caller's
//! transaction it ran in is ended ([`Transaction::ended`](crate::Transaction::ended) says
//! `aborted after a refusal`).
//!
//! Without transactions (a standalone server) the same writes run in the same order, source
//! first: a failure in between leaves the computed value behind its source, and
//! [`ComputedFields::rebuild`] repairs it. Writes made around the toolkit (the driver, the
//! shell, another program) are not seen: [`ComputedFields::check`] reports the drift and
//! [`ComputedFields::repair`] repairs it, or a [`Refresher`] does so on an interval (for
//! values whose freshness need is low, such as a dashboard's totals).
//!
//! # Recomputing
//!
//! [`ComputedFields::repair`] and a [`Refresher`]'s runs read the targets' `_id`s in pages of
//! [`BATCH`] (the repair, those its check listed); for each
//! page, one transaction reads the page's stored values, runs one aggregation per source (a
//! `$group` of the sources whose `by` is in the page) and sends one `update` command with a
//! statement per document that differs. Each statement's filter carries the value it replaces,
//! so without transactions a value changed meanwhile is left alone (and counted as skipped)
//! rather than overwritten with an older one. Sums are compared exactly between integers, and
//! to a relative 1e-9 where a double is involved (a sum of doubles depends on the order of the
//! additions).
//!
//! # Tracing
//!
//! Every operation runs in an `INFO` span `pattern_runtime::computed.<operation>` with the
//! fields `model` and `collection` (the source's for the model handle's writes, the target's for
//! [`ComputedFields`]) and `id` where there is one. Each target update is a `DEBUG` event (its
//! collection, `_id`, the update); each recomputed page an `INFO` event (documents checked,
//! repaired, skipped so far); each failed [`Refresher`] run an `ERROR` event.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection, Database};

use crate::derived::{self, Change, Dependent};
use crate::error::{check_size, Error, Result};
use crate::finding::{id_key, Check, Finding};
use crate::index::IndexSpec;
use crate::literal::touched_fields;
use crate::model::{IntoId, Model};
use crate::periodic::{Periodic, Stopped};
use crate::schema::{registered_models, ModelSchema, PatternSpec, Sample};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod check;
mod feed;
mod num;
mod spec;
pub(crate) mod write;

pub use check::{ComputedFields, HasComputedFields, Recomputed, Refreshed, Refresher};
use feed::{abort, aggregate_many, aggregate_many_within, Abort, Feed};
use num::{agrees, Num};
pub use spec::{Aggregate, ComputedFromParts, ComputedFromSpec};

/// How many target documents [`ComputedFields::repair`] and a [`Refresher`] read, aggregate and
/// write per round.
pub const BATCH: usize = 1000;

#![doc = include_str!("../../docs/relation.md")]

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

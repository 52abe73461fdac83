#![doc = include_str!("../../docs/computed.md")]

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
use crate::schema::{registered_models, ModelSchema, PatternSpec, Sample};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod check;
mod feed;
mod num;
mod spec;
pub(crate) mod write;

pub use check::{ComputedFields, HasComputedFields};
use feed::{abort, aggregate_many, aggregate_many_within, Abort, Feed};
use num::{agrees, Num};
pub use spec::{Aggregate, ComputedFromParts, ComputedFromSpec};

/// How many target documents [`ComputedFields::repair`] reads, aggregates and
/// writes per round.
pub const BATCH: usize = 1000;

//! The model handle's writes: one verb set for every model's own documents.
//!
//! [`ModelCollection`] writes a model's documents with `insert`, `insert_many`, `update`,
//! `update_many`, `replace`, `delete` and `delete_many`, whatever patterns the model carries.
//! Each write keeps what the model's patterns keep: the counts, sums and copies other models
//! derive from it (the [map of derived data](mod@crate::derived)), the fields a pattern keeps
//! itself (refused), the older schema versions (upgraded first), and, on a `#[versioned]` model,
//! the version check and the revision archived. How is the model's [`Writes`], chosen by the
//! derive: the verbs are the same.
//!
//! What differs on a `#[versioned]` model is what the verbs take, so that the version is never
//! forgotten:
//!
//! | verb | any other model | a `#[versioned]` model |
//! | --- | --- | --- |
//! | `insert(doc)` | `&doc` | `&mut doc` (its version is set) |
//! | `replace(doc)` | `&doc` | `&mut doc` (checked against the version it holds, which moves on) |
//! | `update(target, update)` | the `_id` | [`At`]`(id, version read)` |
//! | `insert_many`, `update_many`, `delete_many` | as for one document | not built yet: write each one |

use std::borrow::Borrow;

use bson::{Bson, Document};

use crate::error::Result;
use crate::model::{IntoId, Model, ModelCollection, Pending, Unversioned};
use crate::typed::{IntoFilter, IntoUpdate};

/// What one document's write did: `insert`, `update` and `replace` return it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Written {
    /// The document's `_id` (the driver's new `ObjectId` when an inserted document had none).
    pub id: Bson,
    /// A `#[versioned]` model's version after the write; `None` for any other model.
    pub version: Option<i64>,
}

impl Written {
    pub(crate) fn new(id: Bson, version: Option<i64>) -> Self {
        Written { id, version }
    }
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.version {
            Some(v) => write!(f, "document {} written, at version {v}", self.id),
            None => write!(f, "document {} written", self.id),
        }
    }
}

/// What an `update_many` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Updated {
    /// How many documents matched the filter.
    pub matched: u64,
    /// How many of them changed.
    pub modified: u64,
}

impl Updated {
    pub(crate) fn new(matched: u64, modified: u64) -> Self {
        Updated { matched, modified }
    }
}

impl From<mongodb::results::UpdateResult> for Updated {
    fn from(result: mongodb::results::UpdateResult) -> Self {
        Updated::new(result.matched_count, result.modified_count)
    }
}

impl std::fmt::Display for Updated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} matched, {} modified", self.matched, self.modified)
    }
}

/// A `#[versioned]` model's document at the version it was read at: what its `update` names,
/// as `At(id, version)`. The update is refused with
/// [`Error::VersionConflict`](crate::error::Error::VersionConflict) when someone wrote the document
/// since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At<I>(pub I, pub i64);

/// How a model's own documents are written, chosen by the derive: [`Plain`] for a model
/// without `#[versioned]`, [`Revised`] for a versioned one. Generated; not a stable API.
#[doc(hidden)]
pub trait Writes<M: Model>: Send + Sync + 'static {
    /// What `insert` and `replace` take: `&M`, or `&mut M` where the write sets the version.
    type Doc<'a>: Send + 'a;
    /// What `update` names: the `_id`, or the `_id` at the version read.
    type Target: Send;

    /// Inserts one document.
    fn insert<'a>(on: &'a ModelCollection<M>, doc: Self::Doc<'a>) -> Pending<'a, Result<Written>>;

    /// Replaces the document with `doc`'s `_id` by `doc`.
    fn replace<'a>(on: &'a ModelCollection<M>, doc: Self::Doc<'a>) -> Pending<'a, Result<Written>>;

    /// Applies an operator update to one document.
    fn update<'a>(
        on: &'a ModelCollection<M>,
        target: Self::Target,
        update: Result<Document>,
    ) -> Pending<'a, Result<Written>>;

    /// Deletes one document.
    fn delete<'a>(on: &'a ModelCollection<M>, id: M::Id) -> Pending<'a, Result<()>>;
}

/// The writes of many documents at once, for a model without `#[versioned]`. Not a stable API.
#[doc(hidden)]
pub trait WritesMany<M: Model> {
    /// Inserts `docs` (serialized), in order.
    fn insert_many<'a>(
        on: &'a ModelCollection<M>,
        docs: Result<Vec<Document>>,
    ) -> Pending<'a, Result<Vec<Written>>>;

    /// Applies an operator update to every document matching `filter`.
    fn update_many<'a>(
        on: &'a ModelCollection<M>,
        filter: Result<Document>,
        update: Result<Document>,
    ) -> Pending<'a, Result<Updated>>;

    /// Deletes every document matching `filter`.
    fn delete_many<'a>(
        on: &'a ModelCollection<M>,
        filter: Result<Document>,
    ) -> Pending<'a, Result<u64>>;
}

/// The writes of a model without `#[versioned]`. Generated; not a stable API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Plain;

/// The writes of a `#[versioned]` model: each checks the version and archives the revision.
/// Generated; not a stable API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Revised;

#[diagnostic::on_unimplemented(
    message = "`{Self}` does not name a document of `{M}` to update",
    label = "not a target of `{M}`'s `update`",
    note = "a `#[versioned]` model's `update` names the version it read, `At(id, version)`, and \
            is refused if someone wrote the document since; any other model's takes the `_id` \
            (see `IntoId` for what converts)"
)]
/// What `update` names: the `_id` (anything [`IntoId`] of it) for a model without
/// `#[versioned]`, [`At`]`(id, version)` for a versioned one.
pub trait Target<W: Writes<M>, M: Model> {
    /// The target, as the model's writes take it.
    fn into_target(self) -> W::Target;
}

impl<M: Model, T: IntoId<M::Id>> Target<Plain, M> for T
where
    Plain: Writes<M, Target = M::Id>,
{
    fn into_target(self) -> M::Id {
        self.into_id()
    }
}

impl<M: Model, I: IntoId<M::Id>> Target<Revised, M> for At<I>
where
    Revised: Writes<M, Target = At<M::Id>>,
{
    fn into_target(self) -> At<M::Id> {
        At(self.0.into_id(), self.1)
    }
}

/// The model handle's writes: one verb set for every model (see [`ModelCollection`]).
impl<M: Model> ModelCollection<M> {
    /// Inserts `doc`, and adds it to everything other models derive from it (counts, sums,
    /// copies, two-way arrays), in one transaction when there is any. A `#[versioned]` model's
    /// `doc` is passed `&mut`: it is inserted at version 1 (or after the revisions an earlier
    /// document of the same `_id` left), and `doc`'s version is set.
    ///
    /// Refused with nothing written: [`Error::DuplicateKey`](crate::error::Error::DuplicateKey) for a
    /// taken `_id`, [`Error::InvalidValue`](crate::error::Error::InvalidValue) for a value that cannot
    /// be stored as given, [`Error::DocumentTooLarge`](crate::error::Error::DocumentTooLarge) over
    /// 16 MiB, [`Error::NotFound`](crate::error::Error::NotFound) when a document it counts into does
    /// not exist, [`Error::Unsupported`](crate::error::Error::Unsupported) where a pattern inserts the
    /// model's documents itself (a tree's nodes: `Tree::insert`).
    pub fn insert<'a>(
        &'a self,
        doc: <M::Writes as Writes<M>>::Doc<'a>,
    ) -> Pending<'a, Result<Written>> {
        M::Writes::insert(self, doc)
    }

    /// Replaces the stored document with `doc`'s `_id` by `doc`, and moves what other models
    /// derive from it from the old values to the new ones. On a `#[versioned]` model `doc` is
    /// passed `&mut`: the stored document must still be at the version `doc` holds
    /// ([`Error::VersionConflict`](crate::error::Error::VersionConflict) otherwise), goes to history,
    /// and `doc` becomes the next version.
    ///
    /// [`Error::NotFound`](crate::error::Error::NotFound) when no document has that `_id`;
    /// [`Error::KeptField`](crate::error::Error::KeptField) when `doc` changes a field another
    /// pattern keeps (a tree's parent, a computed value, an outlier's count: read the document
    /// first, and change those through their pattern); nothing is written then.
    pub fn replace<'a>(
        &'a self,
        doc: <M::Writes as Writes<M>>::Doc<'a>,
    ) -> Pending<'a, Result<Written>> {
        M::Writes::replace(self, doc)
    }

    /// Applies an operator update (a typed [`Update`](crate::typed::Update), or an update
    /// document, checked) to one document, and moves what other models derive from the fields
    /// it changes. `target` is the `_id`, or for a `#[versioned]` model [`At`]`(id, version)`:
    /// the stored version is checked and archived, and [`Written::version`] is the new one.
    ///
    /// Refused before anything is sent: [`Error::InvalidKey`](crate::error::Error::InvalidKey) for a
    /// key that is not an operator of a named field, or `_id`;
    /// [`Error::KeptField`](crate::error::Error::KeptField) for a field a pattern keeps (a computed
    /// value, a copy, a tree's parent, the version, the schema version; the message names the
    /// handle that writes it). [`Error::NotFound`](crate::error::Error::NotFound) when there
    /// is no such document.
    pub fn update<'a>(
        &'a self,
        target: impl Target<M::Writes, M>,
        update: impl IntoUpdate<M>,
    ) -> Pending<'a, Result<Written>> {
        M::Writes::update(self, target.into_target(), update.into_update())
    }

    /// Deletes the document `id`, and removes it from what other models derive from it (on a
    /// `#[versioned]` model, its last version is archived, marked deleted).
    /// [`Error::NotFound`](crate::error::Error::NotFound) when there is no such document;
    /// [`Error::Unsupported`](crate::error::Error::Unsupported) where a pattern deletes the model's
    /// documents itself (a tree's nodes: `Tree::delete`).
    pub fn delete<'a>(&'a self, id: impl IntoId<M::Id>) -> Pending<'a, Result<()>> {
        M::Writes::delete(self, id.into_id())
    }

    /// Inserts every document of `docs` (a slice, a `Vec`, an array of values or of
    /// references), in order, after checking them all: one `insert`, in one transaction with
    /// what derives from them, so that a taken `_id` ([`Error::DuplicateKey`](crate::error::Error::DuplicateKey))
    /// leaves none of them (without transactions, a standalone server keeps those before it).
    /// Not for a `#[versioned]` model yet: insert each document.
    pub fn insert_many<'a, I>(&'a self, docs: I) -> Pending<'a, Result<Vec<Written>>>
    where
        M: Unversioned,
        I: IntoIterator,
        I::Item: Borrow<M>,
    {
        let docs = docs
            .into_iter()
            .map(|d| bson::serialize_to_document(d.borrow()).map_err(crate::error::Error::from))
            .collect();
        <Plain as WritesMany<M>>::insert_many(self, docs)
    }

    /// Applies an operator update to every document matching `filter`, and moves what other
    /// models derive from the fields it changes (a `find` before and after, in one
    /// transaction, when something derives from them; one `update` otherwise). Checked as
    /// [`update`](Self::update) is. Not for a `#[versioned]` model yet: update each document.
    pub fn update_many<'a>(
        &'a self,
        filter: impl IntoFilter<M>,
        update: impl IntoUpdate<M>,
    ) -> Pending<'a, Result<Updated>>
    where
        M: Unversioned,
    {
        let (filter, update) = (filter.into_filter(), update.into_update());
        <Plain as WritesMany<M>>::update_many(self, filter, update)
    }

    /// Deletes every document matching `filter`, and removes them from what other models
    /// derive from them; returns how many. Not for a `#[versioned]` model yet: delete each
    /// document.
    pub fn delete_many<'a>(&'a self, filter: impl IntoFilter<M>) -> Pending<'a, Result<u64>>
    where
        M: Unversioned,
    {
        let filter = filter.into_filter();
        <Plain as WritesMany<M>>::delete_many(self, filter)
    }
}

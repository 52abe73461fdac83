//! The static description of models: schemas, fields, typed field names, the registry, and
//! the [`PatternSpec`] trait through which each pattern adds its own data.
//!
//! This is the bottom layer of the crate: it knows models, fields and indexes, and nothing of any
//! pattern. A pattern's static data (a [`SubsetSpec`](crate::SubsetSpec), a
//! [`VersionSpec`](crate::VersionSpec), ...) implements [`PatternSpec`] and is listed in its
//! model's schema; the pattern's module reads it back by type ([`ModelSchema::specs`]), and the
//! index sync asks every spec which indexes it needs and what must exist first.

use std::any::Any;
use std::fmt;
use std::time::Duration;

use bson::{Bson, Document};

use futures_util::future::BoxFuture;
use mongodb::{ClientSession, Database};

use crate::error::{Error, Result};
use crate::finding::{Bounded, Check, Finding};
use crate::index::IndexSpec;
use crate::schema::shape::Shape;
use crate::shard::ShardKey;

pub(crate) mod kinds;
mod names;
pub(crate) mod shape;
pub(crate) use names::Typed;
pub use names::{FieldName, Fields, Free, Nests};

/// Declares a spec that generated code builds from its parts: the spec struct, whose one field
/// `parts` is not public (its methods read it), the parts struct generated code writes
/// (`#[doc(hidden)]`, `Debug, Clone, Copy`, more derives written before it), and the spec's
/// `#[doc(hidden)] const fn from_parts`:
///
/// ```ignore
/// spec! {
///     /// A tree, as static data.
///     #[derive(Debug, Clone, Copy)]
///     pub struct TreeSpec { pub(super) parts: TreeParts }
///     pub struct TreeParts {
///         pub model: &'static str,
///     }
/// }
/// ```
macro_rules! spec {
    (
        $(#[$spec_attr:meta])*
        pub struct $spec:ident { $vis:vis parts: $parts:ident }
        $(#[$parts_attr:meta])*
        pub struct $parts_again:ident { $($fields:tt)* }
    ) => {
        $(#[$spec_attr])*
        pub struct $spec {
            $vis parts: $parts,
        }

        #[doc = concat!("The parts of [`", stringify!($spec), "`], as generated code writes them. Not a stable API.")]
        #[doc(hidden)]
        #[derive(Debug, Clone, Copy)]
        $(#[$parts_attr])*
        pub struct $parts_again { $($fields)* }

        impl $spec {
            #[doc(hidden)]
            pub const fn from_parts(parts: $parts) -> Self {
                $spec { parts }
            }
        }
    };
}
pub(crate) use spec;

/// `of_model!(TreeSpec, "node")`: the `model()`, `collection()` and `schema()` of a spec whose
/// parts name their model as `model: fn() -> &'static ModelSchema` (a function: the spec is
/// part of that model's schema), their docs saying which model it is.
macro_rules! of_model {
    ($spec:ty, $role:literal) => {
        impl $spec {
            #[doc = concat!("The ", $role, " model's name.")]
            pub fn model(&self) -> &'static str {
                self.schema().name()
            }

            #[doc = concat!("The ", $role, " model's collection.")]
            pub fn collection(&self) -> &'static str {
                self.schema().collection()
            }

            #[doc = concat!("The ", $role, " model's schema.")]
            pub fn schema(&self) -> &'static $crate::schema::ModelSchema {
                (self.parts.model)()
            }
        }
    };
}
pub(crate) use of_model;

spec! {
    /// The static description of a model: its collection, serialized fields and indexes.
    #[derive(Debug, Clone, Copy)]
    pub struct ModelSchema { parts: SchemaParts }
    pub struct SchemaParts {
        pub name: &'static str,
        pub collection: &'static str,
        pub group: Option<&'static str>,
        pub fields: &'static [FieldSchema],
        pub indexes: &'static [IndexSpec],
        pub shard_key: Option<&'static ShardKey>,
        pub patterns: &'static [&'static dyn PatternSpec],
        /// The orders the derive knows an index of the model serves (each index's keys up to
        /// its first dotted, `_id`, text, hashed or geo key): what a typed keyset page may
        /// follow, compiled into impls; listed here so that a test can compare them with the
        /// indexes ([`keyset_orders`](ModelSchema::keyset_orders)).
        pub orders: &'static [&'static [(&'static str, i32)]],
        /// The stored shape, for the validator: `None` where the derive makes none (a bucket's
        /// measurement).
        pub shape: Option<fn() -> Shape>,
    }
}

impl ModelSchema {
    /// A schema with a name and a collection and nothing else: a placeholder where no model
    /// is known.
    pub(crate) const fn bare(name: &'static str, collection: &'static str) -> ModelSchema {
        ModelSchema::from_parts(SchemaParts {
            name,
            collection,
            group: None,
            fields: &[],
            indexes: &[],
            shard_key: None,
            patterns: &[],
            orders: &[],
            shape: None,
        })
    }

    /// The Rust type name (`Product`).
    pub const fn name(&self) -> &'static str {
        self.parts.name
    }

    /// The orders the derive compiled into keyset impls (see `SchemaParts::orders`).
    #[doc(hidden)]
    pub fn orders(&self) -> &'static [&'static [(&'static str, i32)]] {
        self.parts.orders
    }

    /// The collection name.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// Every serialized field, in declaration order.
    pub fn fields(&self) -> &'static [FieldSchema] {
        self.parts.fields
    }

    /// The declared indexes: struct-level `#[index]` attributes first, then field-level ones.
    pub fn indexes(&self) -> &'static [IndexSpec] {
        self.parts.indexes
    }

    /// The stored shape the derive records (each field's [`BsonShape`](crate::schema::shape::BsonShape)),
    /// from which [`validator`](Self::validator) is made: `None` for a bucket's measurement.
    pub fn shape(&self) -> Option<crate::schema::shape::Shape> {
        self.parts.shape.map(|shape| shape())
    }

    /// The shard key declared with `#[shard_key(...)]`, if any: see [`shard`](crate::shard).
    pub fn shard_key(&self) -> Option<&'static ShardKey> {
        self.parts.shard_key
    }

    /// The group named by `#[model(group = "...")]`, if any: see
    /// [`sync(..).group(..)`](crate::sync::SyncRun::group).
    pub fn group(&self) -> Option<&'static str> {
        self.parts.group
    }

    /// The static data of every pattern the model uses, in declaration order.
    pub fn patterns(&self) -> &'static [&'static dyn PatternSpec] {
        self.parts.patterns
    }

    /// The pattern data of type `T`, in declaration order: `schema.specs::<SubsetSpec>()` is
    /// every `#[subset]` field of the model, `specs::<Embedding>()` every field holding extended
    /// references. One way for every pattern: each pattern's data is its `*Spec` type (or
    /// [`Embedding`](crate::extended_ref::Embedding), [`HolderSpec`](crate::tree::HolderSpec)
    /// for the fields of models that hold references or sit in a tree).
    pub fn specs<T: PatternSpec>(&self) -> impl Iterator<Item = &'static T> + use<T> {
        self.parts.patterns.iter().filter_map(|p| {
            let any: &'static dyn Any = *p;
            any.downcast_ref::<T>()
        })
    }

    /// The first pattern data of type `T`: for the patterns a model has at most once,
    /// `schema.spec::<VersionSpec>()` is its `#[versioned]` settings, `spec::<TreeSpec>()` its
    /// `#[tree]`, `spec::<SeriesSpec>()` a measurement's `#[bucket]`.
    pub fn spec<T: PatternSpec>(&self) -> Option<&'static T> {
        self.specs().next()
    }

    /// The field with this Rust name.
    pub fn field(&self, rust_name: &str) -> Option<&'static FieldSchema> {
        self.parts
            .fields
            .iter()
            .find(|f| f.rust_name() == rust_name)
    }

    /// The field serialized under this BSON name.
    pub fn field_by_bson_name(&self, bson_name: &str) -> Option<&'static FieldSchema> {
        self.parts
            .fields
            .iter()
            .find(|f| f.bson_name() == bson_name)
    }
}

/// What [`PatternSpec::indexes`] returns: the indexes a pattern needs, each with the
/// collection it belongs to.
pub type IndexesNeeded = Vec<(&'static str, &'static IndexSpec)>;

/// What [`PatternSpec::kept_fields`] returns: each field a pattern keeps itself, with the
/// operation to use instead of writing it.
pub type KeptFields = Vec<(&'static str, &'static str)>;

/// The static data of one pattern on one model, listed in its [`ModelSchema`]: what makes a
/// pattern known to the rest of the toolkit without the toolkit knowing the pattern.
///
/// The derives list a model's specs; [`ModelSchema::specs`] finds them by type; the index sync
/// ([`sync`](crate::sync())) calls [`indexes`](PatternSpec::indexes) and
/// [`prepare`](PatternSpec::prepare) on each. Both have defaults that do nothing.
pub trait PatternSpec: Any + Send + Sync + fmt::Debug {
    /// The indexes this pattern needs, each with its collection (the model's own, or another
    /// one: a history or full-item collection). Synced with the model's declared indexes.
    fn indexes(&'static self, model: &'static ModelSchema) -> IndexesNeeded {
        let _ = model;
        Vec::new()
    }

    /// What must exist before the model's indexes are synced (a native time-series collection
    /// must be created before an index creates a normal collection of that name).
    fn prepare<'a>(&'static self, db: &'a Database) -> Option<BoxFuture<'a, Result<()>>> {
        let _ = db;
        None
    }

    /// The model's array fields this pattern keeps bounded: the [doctor](mod@crate::doctor) does
    /// not report them as arrays that can grow without bound.
    fn bounded_arrays(&'static self) -> Vec<Bounded> {
        Vec::new()
    }

    /// Checks a sample of the model's stored documents against the pattern's invariants (a
    /// subset within its limit and in order, copies equal to their source, ...), each problem a
    /// [`Finding`] naming the call that repairs it. Never writes. Called by the
    /// [doctor](mod@crate::doctor).
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        let _ = sample;
        None
    }

    /// Checks the documents this pattern keeps in another collection for `model`'s documents
    /// against the documents that are there: those of a document that no longer exists (a
    /// subset's full items whose parent is gone, a sharded counter's shards of a deleted
    /// document), a [`Check::Orphans`] finding each. Once per check of every document
    /// (`sample: None`: all of them), once per doctor run (`Some(n)`: a `$sample` of at most
    /// `n`). Never writes; each command within `max_time`, in the caller's transaction `tx` when
    /// the check runs in one. Defaults to nothing.
    fn audit_orphans<'a>(
        &'static self,
        db: &'a Database,
        tx: Option<&'a crate::txn::Transaction>,
        model: &'static ModelSchema,
        sample: Option<u32>,
        max_time: Duration,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        let _ = (db, tx, model, sample, max_time);
        None
    }

    /// The fields of the model holding one kept copy each of a document of `source` (an
    /// extended reference in `propagate` mode, not in an array): the field's BSON name and the
    /// source fields copied beside the `_id`. A pattern that points a document at one of
    /// `source`'s (a tree's holder at its node) keeps such a copy pointing at the same one.
    /// Defaults to none.
    fn single_copies_of(
        &'static self,
        source: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static [&'static str])> {
        let _ = source;
        Vec::new()
    }

    /// The fields of `model` this pattern keeps itself, each with why another write may not
    /// touch them (which operation to use instead): an operator update through another
    /// pattern's handle that touches one is [`Error::KeptField`](crate::error::Error::KeptField), nothing written. Defaults to
    /// none.
    fn kept_fields(&'static self, model: &'static ModelSchema) -> KeptFields {
        let _ = model;
        Vec::new()
    }

    /// Whether another pattern's handle must refuse `operation` (`insert`, `replace` or
    /// `delete`) of `model`'s whole document `doc` (the new document, `None` for a delete), and
    /// with which error: [`Error::Unsupported`](crate::error::Error::Unsupported) naming the call to
    /// use where this pattern writes the document itself (a tree computes a node's ancestors
    /// when it inserts it, and keeps its subtree when it deletes it; a replace that keeps its
    /// fields is another pattern's to make, [`kept_on_replace`](Self::kept_on_replace)), or
    /// [`Error::InvalidValue`](crate::error::Error::InvalidValue) for a document this pattern could
    /// not keep (an attribute array holding a key twice). Defaults to `None`.
    fn document_writes(
        &'static self,
        operation: &str,
        doc: Option<&bson::Document>,
    ) -> Option<crate::error::Error> {
        let _ = (operation, doc);
        None
    }

    /// Whether another pattern's replace of a whole document must leave this pattern's
    /// [`kept_fields`](Self::kept_fields) as stored (they derive from elsewhere: a tree's
    /// ancestors, a count). `false` where the kept field is the document's own data with a
    /// rule that [`document_writes`](Self::document_writes) checks in the replacement instead
    /// (an attribute array's one item per key). Defaults to `true`.
    fn kept_on_replace(&'static self) -> bool {
        true
    }

    /// The data this pattern keeps in `model`'s documents derived from other models' fields
    /// (copies, counts, sums): one [`Dependent`] each, listed in the
    /// [map of derived data](mod@crate::derived) so that every write of those fields, whichever
    /// pattern makes it, keeps them. Defaults to none.
    fn dependents(&'static self, model: &'static ModelSchema) -> Vec<Box<dyn Dependent>> {
        let _ = model;
        Vec::new()
    }

    /// Data derived from other documents that the pattern's own handle keeps in its writes,
    /// and that only a [maintainer](crate::maintainer) rebuilds after a change made around the
    /// toolkit (a tree's ancestors and its holders' paths): not in the map of derived data, so
    /// no other write pays for it. Only [`Dependent::rebuild`] is called. Defaults to none.
    fn maintained(&'static self, model: &'static ModelSchema) -> Vec<Box<dyn Dependent>> {
        let _ = model;
        Vec::new()
    }

    /// The documents this pattern keeps for `model` in other collections (a history of
    /// revisions, overflow documents, counter shards), each with its collection and shape: the
    /// validators [`sync_validators`](crate::validator::sync_validators) installs beside the
    /// model's own. Defaults to none.
    fn companions(&'static self, model: &'static ModelSchema) -> Vec<Companion> {
        let _ = model;
        Vec::new()
    }

    /// The shape of the documents in the model's own collection, given the model's `shape`:
    /// `shape` itself unless the pattern stores something else there (a bucket's documents
    /// hold many measurements each); `Err(why not)` where no validator can be made. Defaults
    /// to `Ok(shape)`.
    fn stored_shape(&'static self, shape: Shape) -> std::result::Result<Shape, &'static str> {
        Ok(shape)
    }
}

/// Documents a pattern keeps in a collection other than its model's, and their shape (see
/// [`PatternSpec::companions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Companion {
    /// The collection.
    pub collection: &'static str,
    /// What they are, for reports (`"revisions"`, `"overflow documents"`, `"counter shards"`).
    pub documents: &'static str,
    /// Their shape.
    pub shape: Shape,
}

/// One source document changed by a write: its `_id`, and the fields its dependents read before
/// and after (`None` before an insert, after a delete).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The source document's `_id`.
    pub id: Bson,
    /// The fields the dependents read, as they were (`None`: the document did not exist).
    pub before: Option<Document>,
    /// The same fields as they are now (`None`: the document was deleted).
    pub after: Option<Document>,
}

impl Change {
    /// Whether the field's value differs between before and after (a document that appeared or
    /// went away changes every field).
    pub fn changed(&self, field: &str) -> bool {
        match (&self.before, &self.after) {
            (Some(b), Some(a)) => !crate::finding::same_value(b.get(field), a.get(field)),
            _ => true,
        }
    }
}

/// What a [`Dependent`] brings its data up to date with: the source's changes, and where to
/// write (the database, in the caller's session when there is one).
#[non_exhaustive]
pub struct Changed<'a> {
    /// The database.
    pub db: &'a Database,
    /// The session of the write the changes come from, when it runs in one (a transaction).
    pub session: Option<&'a mut ClientSession>,
    /// The changes, those where a field the dependent reads changed.
    pub changes: &'a [Change],
}

impl<'a> Changed<'a> {
    /// The database, the session and the changes, to use apart.
    pub fn into_parts(self) -> (&'a Database, Option<&'a mut ClientSession>, &'a [Change]) {
        (self.db, self.session, self.changes)
    }
}

/// The write of [`Dependent::apply`] and [`Dependent::rebuild`], to await.
pub type Applying<'a> = BoxFuture<'a, mongodb::error::Result<()>>;

/// Data kept in other documents from the fields of one model: one entry of the map.
///
/// Implemented by the patterns that keep such data; returned by their spec's
/// [`PatternSpec::dependents`].
pub trait Dependent: Send + Sync + fmt::Debug + 'static {
    /// The model whose fields the data derives from.
    fn source(&self) -> &'static ModelSchema;

    /// The source's fields it reads (top-level BSON names).
    fn reads(&self) -> Vec<&'static str>;

    /// The collection whose documents' changes it follows: by default the source model's own;
    /// another for data a pattern keeps from documents of its own that are no model (an
    /// outlier's count, from the overflow documents). A [maintainer](crate::maintainer) watches
    /// it, and hands this dependent those documents' changes (`reads` names their fields).
    fn collection(&self) -> &'static str {
        self.source().collection()
    }

    /// The pattern that keeps it (`extended_ref`, `computed`), as the module is named.
    fn pattern(&self) -> &'static str;

    /// What it keeps, for reports: `Book.category (extended reference)`.
    fn describe(&self) -> String;

    /// Brings the derived data up to date with `changed.changes` (only those where a field it
    /// reads changed), in `changed.session` when there is one. An error aborts the caller's
    /// transaction.
    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a>;

    /// Refuses a value it could not keep, found in `fields` of a source document about to be
    /// written: a whole document to insert or replace, or the top-level fields an update sets.
    /// Called before anything is sent, so a refusal leaves a caller's transaction open; what
    /// only the write can tell (a `$mul` to infinity) [`apply`](Self::apply) still refuses. By
    /// default nothing is refused.
    fn check_written(&self, fields: &Document) -> Result<()> {
        let _ = fields;
        Ok(())
    }

    /// Whether it keeps data only about the source's deleted documents (the children naming a
    /// deleted owner): then it is left out of updates and inserts, which cost nothing more.
    fn deletions_only(&self) -> bool {
        false
    }

    /// After a repair rewrote the source documents of `changes` (their `before` may be a value
    /// written around the toolkit, which the derived data never saw): brings the derived data
    /// up to date from what the sources hold now, not by the difference. By default the same as
    /// [`apply`](Self::apply), right for data copied whole; an aggregate (a sum) recomputes.
    fn rebuild<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        self.apply(changed)
    }

    /// After a lost history, when no event says which source documents went away: a delete
    /// for each document this data may still be kept for, whose [`rebuild`](Self::rebuild)
    /// brings it back in line with the sources as they are (a count of an owner whose last
    /// order was deleted). `before` holds what the data names the source by. By default none:
    /// the data outlives its source (a copy), or its pattern's check reports it.
    fn held<'a>(&'a self, db: &'a Database) -> Held<'a> {
        let _ = db;
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// What [`Dependent::held`] finds, to await.
pub type Held<'a> = BoxFuture<'a, mongodb::error::Result<Vec<Change>>>;

/// A sample of one model's stored documents, as the doctor hands it to each of the model's
/// patterns ([`PatternSpec::audit`](crate::schema::PatternSpec::audit)). Read only.
#[derive(Debug)]
pub struct Sample<'a> {
    /// The database.
    pub db: &'a Database,
    /// The model whose documents these are.
    pub model: &'static ModelSchema,
    /// Documents drawn at random (`$sample`) from the model's collection, whole, those over
    /// 1 MiB left out (they are reported by size).
    pub documents: &'a [Document],
    /// The time limit of each command a check sends (`maxTimeMS`).
    pub max_time: Duration,
    /// The caller's transaction, when the check runs in one (a bound handle's `check`): the
    /// audit's commands read in it.
    pub tx: Option<&'a crate::txn::Transaction>,
}

impl<'a> Sample<'a> {
    /// A finding about this sample's model.
    pub fn finding(
        &self,
        check: Check,
        subject: impl Into<String>,
        figure: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check,
            model: Some(self.model.name()),
            collection: self.model.collection().to_owned(),
            subject: subject.into(),
            figure: figure.into(),
            fix: fix.into(),
            documents: Vec::new(),
        }
    }

    /// The `_id`s of the sampled documents.
    pub fn ids(&self) -> Vec<Bson> {
        self.identified().map(|(id, _)| id.clone()).collect()
    }

    /// Each sampled document with its `_id` (those without one are skipped).
    pub fn identified(&self) -> impl Iterator<Item = (&'a Bson, &'a Document)> + use<'a> {
        self.documents
            .iter()
            .filter_map(|d| d.get("_id").map(|id| (id, d)))
    }
}

/// How an embedded [extended reference](crate::extended_ref) is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Kept in sync with the source by [`References`](crate::extended_ref::References).
    Propagate,
    /// Frozen as written.
    Snapshot,
}

spec! {
    /// One serialized field of a model.
    #[derive(Debug, Clone, Copy)]
    pub struct FieldSchema { parts: FieldParts }
    pub struct FieldParts {
        pub rust_name: &'static str,
        pub bson_name: &'static str,
        pub rust_type: &'static str,
        pub annotations: &'static [Annotation],
    }
}

impl FieldSchema {
    /// The Rust field name, without `r#`.
    pub fn rust_name(&self) -> &'static str {
        self.parts.rust_name
    }

    /// The BSON key, after `#[serde(rename)]` and `#[serde(rename_all)]`.
    pub fn bson_name(&self) -> &'static str {
        self.parts.bson_name
    }

    /// The field's Rust type, as written in the source.
    pub fn rust_type(&self) -> &'static str {
        self.parts.rust_type
    }

    /// The pattern annotations on this field.
    pub fn annotations(&self) -> &'static [Annotation] {
        self.parts.annotations
    }

    /// Whether this field is the document's `_id`.
    pub fn is_id(&self) -> bool {
        self.parts.bson_name == "_id"
    }
}

/// A pattern annotation on a field, as the schema records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Annotation {
    /// The field is the first key of the named index (`#[index]` on the field, or the first key
    /// of a struct-level `#[index(keys(...))]`).
    Index {
        /// The index name.
        name: &'static str,
    },
    /// The field is a `#[subset(...)]` array of the first items of another collection.
    Subset {
        /// The collection of the full items.
        full_model: &'static str,
        /// How many items are kept.
        limit: u32,
    },
    /// The field is the version of a `#[versioned]` model.
    Version,
    /// The field summarises a subset's full items (`#[summary(...)]`).
    Summary {
        /// The subset's field (BSON name).
        subset: &'static str,
    },
    /// The field holds extended references (`#[extended_ref(propagate | snapshot)]`).
    ExtendedRef {
        /// How the copies are kept.
        mode: Mode,
    },
}

/// A model's entry in the registry that [`sync`](crate::sync()) reads.
#[doc(hidden)]
pub struct Registration {
    pub schema: &'static ModelSchema,
    /// The module the model is declared in (`module_path!()`).
    pub module: &'static str,
}

inventory::collect!(Registration);

/// The registered models of `group` (`#[model(group = "...")]`); [`Error::UnknownGroup`], with
/// the groups there are, when no model names it (a misspelt name would otherwise do nothing).
pub(crate) fn group_members(group: &str) -> Result<Vec<&'static ModelSchema>> {
    let all = registered_models();
    let members: Vec<_> = all
        .iter()
        .copied()
        .filter(|m| m.group() == Some(group))
        .collect();
    if members.is_empty() {
        let mut known: Vec<&'static str> = all.iter().filter_map(|m| m.group()).collect();
        known.sort_unstable();
        known.dedup();
        return Err(Error::UnknownGroup {
            group: group.to_owned(),
            known,
        });
    }
    Ok(members)
}

/// Every model compiled into this program with `#[derive(Model)]` or `#[derive(Measurement)]`,
/// sorted by collection then name.
pub fn registered_models() -> Vec<&'static ModelSchema> {
    let mut all: Vec<&'static ModelSchema> = inventory::iter::<Registration>
        .into_iter()
        .map(|r| r.schema)
        .collect();
    all.sort_by_key(|s| (s.collection(), s.name()));
    all
}

/// The pattern data of type `T` of every registered model: `registered_specs::<HolderSpec>()`
/// is every `#[in_tree]` declaration of the program.
pub(crate) fn registered_specs<T: PatternSpec>() -> impl Iterator<Item = &'static T> {
    registered_models().into_iter().flat_map(|s| s.specs::<T>())
}

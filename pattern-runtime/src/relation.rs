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
//! `Model::<field>_relation(&db)`, a [`Relation`] handle:
//!
//! | form | meaning | index |
//! | --- | --- | --- |
//! | `#[relation]` | loadable references ([`Relation::load`]) | none |
//! | `#[relation(parent)]` | a reference to the parent, in a child; [`Relation::children_of`] | `{field: 1}` |
//! | `#[relation(parent, sort(time = -1))]` | the children come newest first | `{field: 1, time: -1}` |
//! | `#[relation(inverse = owner)]` | one side of a two-way relation: the target's field `owner` must say `#[relation(inverse = <this field>)]`, one side an array, the other a single reference | `{field: 1}` on each side |
//!
//! On the single side of a two-way relation, `Model::<field>_relation(&db)` is a [`TwoWay`]
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
//! Part::collection(&db).raw().insert_one(&grommet).await?;
//! let product = Product { id: ObjectId::new(), name: "smoke shifter".into(), parts: vec![Ref::to(&grommet)] };
//! // Stored as `parts: [ObjectId(..)]`, the bare ids.
//! Product::collection(&db).raw().insert_one(&product).await?;
//!
//! let products: Vec<Product> = Vec::from([product]);
//! // One `find({_id: {$in: [..]}})` for the parts of every product.
//! let loaded = Product::parts_relation(&db).load(&products).await?;
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
//! deleted through another pattern's handle ([`Computing`](crate::Computing), a subset's push,
//! a tree cascade), or whose owner field another pattern writes (a grid booking its holder),
//! moves between the arrays in the same transaction; a new owner that does not exist is
//! [`Error::NotFound`], nothing written. The two sides are the relation's own otherwise: another
//! handle's update of either is refused ([`Error::InvalidKey`]), and so is an `assign` of an
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

/// How many distinct ids one `$in` query of [`Relation::load`] carries at most.
pub const DEFAULT_CHUNK: usize = 10_000;

// ----- identity -----

/// A model whose documents can be referenced: its `_id` value, of type [`Model::Id`]. Generated by
/// `#[derive(Model)]` for struct models whose `_id` is stored as its type's own serialization.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be referenced",
    label = "not a referenceable model",
    note = "a reference points to a `#[derive(Model)]` struct: derive `Model` for `{Self}` (with \
            an `_id` field) or refer to a model; an enum model, and a model whose `_id` has \
            `#[serde(with = ..)]` (its stored form is not its type's), cannot be referenced yet"
)]
pub trait Identified: Model {
    /// The document's `_id`.
    fn id(&self) -> &Self::Id;
}

/// A reference to a document of model `T`: its `_id`, serialized exactly as the bare id.
pub struct Ref<T: Identified> {
    id: T::Id,
    _target: PhantomData<fn() -> T>,
}

impl<T: Identified> Ref<T> {
    /// The reference to the document whose `_id` is `id`.
    pub fn new(id: T::Id) -> Self {
        Ref {
            id,
            _target: PhantomData,
        }
    }

    /// The reference to `doc`.
    pub fn to(doc: &T) -> Self
    where
        T::Id: Clone,
    {
        Ref::new(doc.id().clone())
    }

    /// The referenced `_id`.
    pub fn id(&self) -> &T::Id {
        &self.id
    }

    /// The referenced `_id`, by value.
    pub fn into_id(self) -> T::Id {
        self.id
    }
}

impl<T: Identified> From<&T> for Ref<T>
where
    T::Id: Clone,
{
    fn from(doc: &T) -> Self {
        Ref::to(doc)
    }
}

impl<T: Identified> Clone for Ref<T>
where
    T::Id: Clone,
{
    fn clone(&self) -> Self {
        Ref::new(self.id.clone())
    }
}

impl<T: Identified> Copy for Ref<T> where T::Id: Copy {}

impl<T: Identified> fmt::Debug for Ref<T>
where
    T::Id: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ref<{}>({:?})", T::SCHEMA.name(), self.id)
    }
}

impl<T: Identified> PartialEq for Ref<T>
where
    T::Id: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<T: Identified> Eq for Ref<T> where T::Id: Eq {}

impl<T: Identified> Hash for Ref<T>
where
    T::Id: Hash,
{
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl<T: Identified> Serialize for Ref<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.id.serialize(serializer)
    }
}

impl<'de, T: Identified> Deserialize<'de> for Ref<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        T::Id::deserialize(deserializer).map(Ref::new)
    }
}

/// A value that refers to one document of another model: [`Ref<T>`], or an
/// [extended reference](crate::extended_ref) type (its `_id` plus copied fields).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a reference to a model",
    label = "not a reference",
    note = "a reference is `Ref<T>` (or an extended reference type) where `T` is a \
            `#[derive(Model)]` struct; a `#[relation]` field holds one directly, in an `Option`, \
            a `Vec` or an `Option<Vec<..>>`"
)]
pub trait Reference: 'static {
    /// The referenced model.
    type Target: Identified;
    /// The referenced `_id`.
    fn target_id(&self) -> &<Self::Target as Model>::Id;
}

impl<T: Identified> Reference for Ref<T> {
    type Target = T;
    fn target_id(&self) -> &T::Id {
        &self.id
    }
}

/// A field's type that holds references: `R`, `Option<R>`, `Vec<R>` or `Option<Vec<R>>` for a
/// [`Reference`] `R`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` holds no references to a model: `#[relation]` goes on a field holding them",
    label = "not `Ref<T>`, `Option<Ref<T>>`, `Vec<Ref<T>>` or `Option<Vec<Ref<T>>>` of a model `T`",
    note = "hold `Ref<T>` (serialized as the bare `_id`) or an extended reference type, directly, \
            in an `Option`, a `Vec` or an `Option<Vec<..>>`, where `T` is a `#[derive(Model)]` \
            struct"
)]
pub trait RefField {
    /// The referenced model.
    type Target: Identified;
    /// Whether the field holds an array of references.
    const MANY: bool;
    /// The referenced ids, in order, duplicates included.
    fn ids(&self) -> Vec<&<Self::Target as Model>::Id>;
}

impl<R: Reference> RefField for R {
    type Target = R::Target;
    const MANY: bool = false;
    fn ids(&self) -> Vec<&<R::Target as Model>::Id> {
        vec![self.target_id()]
    }
}

impl<R: Reference> RefField for Option<R> {
    type Target = R::Target;
    const MANY: bool = false;
    fn ids(&self) -> Vec<&<R::Target as Model>::Id> {
        self.iter().map(Reference::target_id).collect()
    }
}

impl<R: Reference> RefField for Vec<R> {
    type Target = R::Target;
    const MANY: bool = true;
    fn ids(&self) -> Vec<&<R::Target as Model>::Id> {
        self.iter().map(Reference::target_id).collect()
    }
}

impl<R: Reference> RefField for Option<Vec<R>> {
    type Target = R::Target;
    const MANY: bool = true;
    fn ids(&self) -> Vec<&<R::Target as Model>::Id> {
        self.iter().flatten().map(Reference::target_id).collect()
    }
}

// ----- static data -----

/// What a `#[relation]` field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// `#[relation]`: loadable references.
    Reference,
    /// `#[relation(parent)]`: a child's reference to its parent.
    Parent,
    /// `#[relation(inverse = ..)]`: one side of a two-way relation.
    TwoWay,
}

/// One `#[relation]` field, as static data.
#[derive(Debug, Clone, Copy)]
pub struct RelationSpec {
    parts: RelationParts,
}

/// The parts of a [`RelationSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RelationParts {
    /// The model holding the field.
    pub model: &'static ModelSchema,
    /// The field's BSON name.
    pub field: &'static str,
    /// The referenced model's schema. A function: two models referring to each other would
    /// make their schema constants depend on each other.
    pub target: fn() -> &'static ModelSchema,
    pub kind: RelationKind,
    pub many: bool,
    /// The Rust name of the other side's field, for a two-way relation.
    pub inverse: Option<&'static str>,
    /// The index the access path needs (parent references and both sides of a two-way one).
    pub index: Option<IndexSpec>,
    /// The children's order (`sort(time = -1)`), BSON names.
    pub sort: &'static [(&'static str, i32)],
}

impl RelationSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: RelationParts) -> Self {
        RelationSpec { parts }
    }

    /// The model holding the field.
    pub fn model(&self) -> &'static ModelSchema {
        self.parts.model
    }

    /// The field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// The referenced model.
    pub fn target(&self) -> &'static ModelSchema {
        (self.parts.target)()
    }

    /// What the field is.
    pub fn kind(&self) -> RelationKind {
        self.parts.kind
    }

    /// Whether the field holds an array of references.
    pub fn is_many(&self) -> bool {
        self.parts.many
    }

    /// The BSON name of the other side's field, for a two-way relation.
    pub fn inverse(&self) -> Option<&'static str> {
        // Resolved through the target's schema: a constant could not read it without a cycle
        // (each side's static refers to the other's schema).
        let rust = self.parts.inverse?;
        self.target().field(rust).map(|f| f.bson_name())
    }

    /// The index the relation's access path needs, if any.
    pub fn index(&'static self) -> Option<&'static IndexSpec> {
        self.parts.index.as_ref()
    }

    /// The children's order, as `(BSON name, 1 or -1)` pairs.
    pub fn sort(&self) -> &'static [(&'static str, i32)] {
        self.parts.sort
    }
}

/// A two-way relation's owner arrays, kept from the children's owner field: one entry of the
/// [map of derived data](crate::derived). A child inserted, deleted, or whose owner field
/// another pattern writes (a grid booking its holder, a tree cascade deleting it) moves from
/// the old owner's array to the new one's.
#[derive(Debug)]
struct OwnerArrays {
    spec: &'static RelationSpec,
}

/// The owner a child's field names: the value, or the `_id` of an extended-reference copy.
fn owner_named(value: Option<&Bson>) -> Option<Bson> {
    match value {
        None | Some(Bson::Null) => None,
        Some(Bson::Document(d)) => d.get("_id").cloned(),
        Some(other) => Some(other.clone()),
    }
}

impl crate::schema::Dependent for OwnerArrays {
    fn source(&self) -> &'static ModelSchema {
        self.spec.model()
    }

    fn reads(&self) -> Vec<&'static str> {
        vec![self.spec.field()]
    }

    fn pattern(&self) -> &'static str {
        "relation"
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} (two-way relation, from {}.{})",
            self.spec.target().name(),
            self.spec.inverse().unwrap_or_default(),
            self.spec.model().name(),
            self.spec.field()
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        mut session: Option<&'a mut ClientSession>,
        changes: &'a [crate::schema::Change],
    ) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            let (field, inverse) = (self.spec.field(), self.spec.inverse().unwrap_or_default());
            let target = self.spec.target();
            for c in changes {
                let old = owner_named(c.before.as_ref().and_then(|d| d.get(field)));
                let new = owner_named(c.after.as_ref().and_then(|d| d.get(field)));
                if old.as_ref().map(crate::finding::id_key)
                    == new.as_ref().map(crate::finding::id_key)
                {
                    continue;
                }
                if let Some(old) = old {
                    crate::derived::update_many(
                        db,
                        session.as_deref_mut(),
                        target,
                        doc! { "_id": old },
                        doc! { "$pull": { inverse: c.id.clone() } },
                        Vec::new(),
                        false,
                    )
                    .await?;
                }
                if let Some(new) = new {
                    let added = crate::derived::update_many(
                        db,
                        session.as_deref_mut(),
                        target,
                        doc! { "_id": new.clone() },
                        doc! { "$addToSet": { inverse: c.id.clone() } },
                        Vec::new(),
                        false,
                    )
                    .await?;
                    if added.matched_count == 0 {
                        return Err(crate::error::refusal(Error::NotFound {
                            collection: target.collection().to_owned(),
                            id: Box::new(new),
                        }));
                    }
                }
            }
            Ok(())
        })
    }
}

/// The children's owner field of a two-way relation, kept from the owners' documents: an owner
/// deleted (by any pattern's handle: a tree cascade, `Computing::delete`) leaves no child naming
/// it. Its children's field is set to `null` when it is an `Option`; otherwise the deletion is
/// refused while children name the owner (reassign them first).
#[derive(Debug)]
struct ChildSides {
    spec: &'static RelationSpec,
}

impl ChildSides {
    /// The children's field, and whether it may hold `null`.
    fn child_field(&self) -> (&'static str, bool) {
        let field = self.spec.inverse().unwrap_or_default();
        let optional = self
            .spec
            .target()
            .field_by_bson_name(field)
            .is_some_and(|f| {
                // `Option<..>`, however it is spelt (`std::option::Option<..>`).
                let head = f.rust_type().split('<').next().unwrap_or_default();
                head.trim().rsplit("::").next() == Some("Option")
            });
        (field, optional)
    }
}

impl crate::schema::Dependent for ChildSides {
    fn source(&self) -> &'static ModelSchema {
        self.spec.model()
    }

    fn reads(&self) -> Vec<&'static str> {
        vec![self.spec.field()]
    }

    fn pattern(&self) -> &'static str {
        "relation"
    }

    fn deletions_only(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} (two-way relation, the owner named by {}.{})",
            self.spec.target().name(),
            self.spec.inverse().unwrap_or_default(),
            self.spec.model().name(),
            self.spec.field()
        )
    }

    fn apply<'a>(
        &'a self,
        db: &'a Database,
        mut session: Option<&'a mut ClientSession>,
        changes: &'a [crate::schema::Change],
    ) -> futures_util::future::BoxFuture<'a, mongodb::error::Result<()>> {
        Box::pin(async move {
            let (field, optional) = self.child_field();
            let children = self.spec.target();
            for c in changes.iter().filter(|c| c.after.is_none()) {
                let naming = doc! { "$or": [
                    { field: { "$eq": c.id.clone() } },
                    { format!("{field}._id"): { "$eq": c.id.clone() } },
                ] };
                if !optional {
                    let coll: Collection<Document> = db.collection(children.collection());
                    let count = coll.count_documents(naming.clone()).limit(1);
                    let named = match session.as_deref_mut() {
                        Some(s) => count.session(s).await?,
                        None => count.await?,
                    };
                    if named > 0 {
                        return Err(crate::error::refusal(Error::InvalidKey {
                            key: field.to_owned(),
                            reason: "a deleted owner of a two-way relation would leave children                                      naming it, and their field cannot be empty: `assign` them                                      to another owner first",
                        }));
                    }
                    continue;
                }
                crate::derived::update_many(
                    db,
                    session.as_deref_mut(),
                    children,
                    naming,
                    doc! { "$set": { field: Bson::Null } },
                    Vec::new(),
                    true,
                )
                .await?;
            }
            Ok(())
        })
    }
}

impl PatternSpec for RelationSpec {
    /// The two sides of a two-way relation: on the child side (the single owner field), the
    /// owners' arrays; on the owner side (the array), the children's field of a deleted owner.
    fn dependents(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        if self.inverse().is_none() {
            return Vec::new();
        }
        if self.is_many() {
            return vec![Box::new(ChildSides { spec: self })];
        }
        vec![Box::new(OwnerArrays { spec: self })]
    }

    /// A two-way relation's side (the child's owner field, the owner's array): `assign`
    /// writes both together.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        if self.inverse().is_none() {
            return Vec::new();
        }
        vec![(
            self.field(),
            "a two-way relation writes both sides together: `assign` through the child's \
             `TwoWay` handle (`repair` after writes made around it)",
        )]
    }

    fn indexes(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        self.index()
            .map(|i| (model.collection(), i))
            .into_iter()
            .collect()
    }

    /// A two-way relation's sampled documents whose side disagrees with the other: a child
    /// whose owner does not list it, an owner listing a child that names someone else or does
    /// not exist. One `find` of the other side for the sample.
    fn audit<'a>(
        &'static self,
        sample: &'a crate::schema::Sample<'a>,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        (self.kind() == RelationKind::TwoWay && self.inverse().is_some())
            .then(|| Box::pin(audit_two_way(self, sample)) as _)
    }
}

/// [`RelationSpec::audit`] of a two-way relation: this side's sampled documents against the
/// other side.
async fn audit_two_way(
    spec: &'static RelationSpec,
    sample: &crate::schema::Sample<'_>,
) -> Result<Vec<crate::finding::Finding>> {
    let Some(inverse) = spec.inverse() else {
        return Ok(Vec::new());
    };
    let field = spec.field();
    let as_list = |v: Option<&Bson>| -> Vec<Bson> {
        match v {
            Some(Bson::Array(a)) => a.clone(),
            Some(Bson::Null) | None => Vec::new(),
            Some(one) => vec![one.clone()],
        }
    };
    // The other side's documents this sample names.
    let named: Vec<Bson> = sample
        .documents
        .iter()
        .flat_map(|d| as_list(d.get(field)))
        .collect();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let others: HashMap<String, Vec<Bson>> = sample
        .db
        .collection::<Document>(spec.target().collection())
        .find(doc! { "_id": { "$in": named } })
        .projection(doc! { inverse: 1 })
        .max_time(sample.max_time)
        .await?
        .try_collect::<Vec<Document>>()
        .await?
        .into_iter()
        .filter_map(|d| {
            let id = crate::finding::id_key(d.get("_id")?);
            Some((id, as_list(d.get(inverse))))
        })
        .collect();
    let mut drifted = Vec::new();
    let mut first = None;
    for d in sample.documents {
        let Some(id) = d.get("_id") else {
            continue;
        };
        let key = crate::finding::id_key(id);
        for other in as_list(d.get(field)) {
            let problem = match others.get(&crate::finding::id_key(&other)) {
                None => format!("{id} names {other} in `{field}`, which does not exist"),
                Some(back) if back.iter().any(|b| crate::finding::id_key(b) == key) => continue,
                Some(_) => format!(
                    "{id} names {other} in `{field}`, whose `{inverse}` does not name it back"
                ),
            };
            first.get_or_insert(problem);
            if !drifted.contains(id) {
                drifted.push(id.clone());
            }
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    // The repair runs from the single side (the child's owner field says which owner it has).
    let (single_model, single_field) = if spec.is_many() {
        (spec.target(), inverse)
    } else {
        (spec.model(), field)
    };
    let rust = single_model
        .field_by_bson_name(single_field)
        .map_or(single_field, |f| f.rust_name());
    Ok(vec![sample
        .finding(
            crate::finding::Check::TwoWayDrift,
            field,
            format!(
                "{} of {} sampled documents disagree with `{}.{inverse}`; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.target().name()
            ),
            format!(
                "`{}::{rust}_relation(&db).repair()` makes every owner's array agree with the \
             children's owner fields ({}); `assign` keeps both sides",
                single_model.name(),
                crate::finding::examples(&drifted)
            ),
        )
        .about(drifted)])
}

impl ModelSchema {
    /// The model's `#[relation]` fields.
    pub fn relations(&self) -> Vec<&'static RelationSpec> {
        self.specs().collect()
    }
}

// ----- compile-time checks of two-way relations -----

/// One `#[relation]` field, as the compile-time checks of other models read it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RelationSide {
    /// The Rust field name.
    pub rust: &'static str,
    /// The BSON name.
    pub bson: &'static str,
    /// The referenced model's name.
    pub target: &'static str,
    /// The Rust name of the field `inverse = ..` names.
    pub inverse: Option<&'static str>,
    pub many: bool,
}

/// The `#[relation]` fields of a model, for the compile-time checks of the models that name them
/// as the other side of a two-way relation. Generated for every `#[derive(Model)]` struct.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the other side of a two-way relation",
    label = "not a `#[derive(Model)]` struct",
    note = "both sides of `#[relation(inverse = ..)]` are `#[derive(Model)]` structs"
)]
pub trait Relations {
    /// The fields, in declaration order.
    const RELATIONS: &'static [RelationSide];
}

/// The error of `#[relation(inverse = <inverse>)]` on field `field` of model `model` (holding
/// an array when `many`), or `None`: the other side's field `inverse` must exist, refer to
/// `model`, name `field` back, and be single where this one is an array (or the reverse).
/// `messages`: [no such relation field, refers to another model, names another field, both
/// arrays, both single].
#[doc(hidden)]
pub const fn inverse_error(
    other: &'static [RelationSide],
    inverse: &str,
    model: &str,
    field: &str,
    many: bool,
    messages: [&'static str; 5],
) -> Option<&'static str> {
    let mut i = 0;
    while i < other.len() {
        let side = &other[i];
        if crate::checks::str_eq(side.rust, inverse) {
            if !crate::checks::str_eq(side.target, model) {
                return Some(messages[1]);
            }
            return match side.inverse {
                Some(back) if crate::checks::str_eq(back, field) => {
                    if many && side.many {
                        Some(messages[3])
                    } else if !many && !side.many {
                        Some(messages[4])
                    } else {
                        None
                    }
                }
                _ => Some(messages[2]),
            };
        }
        i += 1;
    }
    Some(messages[0])
}

// ----- loading -----

/// The operations of one `#[relation]` field of model `S` referring to model `T`:
/// `Model::<field>_relation(&db)`. See the [module documentation](self).
pub struct Relation<S, T: Identified> {
    db: Database,
    spec: &'static RelationSpec,
    ids: for<'a> fn(&'a S) -> Vec<&'a <T as Model>::Id>,
    chunk: usize,
}

impl<S, T: Identified> Clone for Relation<S, T> {
    fn clone(&self) -> Self {
        Relation {
            db: self.db.clone(),
            spec: self.spec,
            ids: self.ids,
            chunk: self.chunk,
        }
    }
}

impl<S, T: Identified> fmt::Debug for Relation<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relation")
            .field("model", &self.spec.model().name())
            .field("field", &self.spec.field())
            .field("target", &self.spec.target().name())
            .field("chunk", &self.chunk)
            .finish()
    }
}

/// A reference whose document does not exist.
pub struct Dangling<S: Identified, T: Identified> {
    /// The `_id` of the document holding the reference.
    pub source: S::Id,
    /// The field holding it (BSON name).
    pub field: &'static str,
    /// Its position in the field's array; `None` for a single reference.
    pub position: Option<usize>,
    /// The `_id` no document has.
    pub target: T::Id,
}

// By hand: derived impls would ask `S` and `T` themselves to be `Debug`, `Clone`, `PartialEq`.
impl<S: Identified, T: Identified> fmt::Debug for Dangling<S, T>
where
    S::Id: fmt::Debug,
    T::Id: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dangling")
            .field("source", &self.source)
            .field("field", &self.field)
            .field("position", &self.position)
            .field("target", &self.target)
            .finish()
    }
}

impl<S: Identified, T: Identified> Clone for Dangling<S, T>
where
    S::Id: Clone,
    T::Id: Clone,
{
    fn clone(&self) -> Self {
        Dangling {
            source: self.source.clone(),
            field: self.field,
            position: self.position,
            target: self.target.clone(),
        }
    }
}

impl<S: Identified, T: Identified> PartialEq for Dangling<S, T>
where
    S::Id: PartialEq,
    T::Id: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
            && self.field == other.field
            && self.position == other.position
            && self.target == other.target
    }
}

impl<S: Identified, T: Identified> fmt::Display for Dangling<S, T>
where
    S::Id: fmt::Debug,
    T::Id: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?}: `{}`",
            S::SCHEMA.name(),
            self.source,
            self.field
        )?;
        if let Some(p) = self.position {
            write!(f, "[{p}]")?;
        }
        write!(
            f,
            " refers to {} {:?}, which does not exist",
            T::SCHEMA.name(),
            self.target
        )
    }
}

/// The documents a batch of sources refers to, from [`Relation::load`].
pub struct Loaded<'a, S: Identified, T: Identified> {
    sources: &'a [S],
    ids: for<'b> fn(&'b S) -> Vec<&'b T::Id>,
    targets: HashMap<T::Id, T>,
    dangling: Vec<Dangling<S, T>>,
    queries: usize,
}

impl<'a, S: Identified, T: Identified> Loaded<'a, S, T>
where
    T::Id: Eq + Hash,
{
    /// `source`'s references resolved, in the field's order with its duplicates; `None` for a
    /// reference whose document does not exist (listed in [`dangling`](Loaded::dangling)).
    pub fn of(&self, source: &S) -> Vec<Option<&T>> {
        (self.ids)(source)
            .into_iter()
            .map(|id| self.targets.get(id))
            .collect()
    }

    /// Each source with its references resolved, in the order given to `load`.
    pub fn iter(&self) -> impl Iterator<Item = (&'a S, Vec<Option<&T>>)> + '_ {
        self.sources.iter().map(move |s| (s, self.of(s)))
    }

    /// The loaded document with this `_id`.
    pub fn get(&self, id: &T::Id) -> Option<&T> {
        self.targets.get(id)
    }

    /// Every loaded document, once each, by `_id`.
    pub fn targets(&self) -> &HashMap<T::Id, T> {
        &self.targets
    }

    /// Every loaded document, once each, by `_id`.
    pub fn into_targets(self) -> HashMap<T::Id, T> {
        self.targets
    }

    /// The references whose documents do not exist, in source order.
    pub fn dangling(&self) -> &[Dangling<S, T>] {
        &self.dangling
    }

    /// How many `find` queries the load sent (one per chunk of distinct ids; 0 without ids).
    pub fn queries(&self) -> usize {
        self.queries
    }
}

impl<S: Identified, T: Identified> fmt::Debug for Loaded<'_, S, T>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loaded")
            .field("sources", &self.sources.len())
            .field("targets", &self.targets.len())
            .field("dangling", &self.dangling.len())
            .field("queries", &self.queries)
            .finish()
    }
}

impl<S: Identified, T: Identified> Relation<S, T> {
    #[doc(hidden)]
    pub fn new(
        db: &Database,
        spec: &'static RelationSpec,
        ids: for<'a> fn(&'a S) -> Vec<&'a T::Id>,
    ) -> Self {
        Relation {
            db: db.clone(),
            spec,
            ids,
            chunk: DEFAULT_CHUNK,
        }
    }

    /// At most `n` distinct ids per `$in` query of [`load`](Relation::load) (at least 1); the
    /// default is [`DEFAULT_CHUNK`].
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.chunk = n.max(1);
        self
    }

    /// The relation's static description.
    pub fn spec(&self) -> &'static RelationSpec {
        self.spec
    }

    /// Loads the documents `sources` refer to: one `find({_id: {$in: ids}})` per chunk of
    /// distinct ids, whatever the number of sources and references. References to documents
    /// that do not exist are reported in [`Loaded::dangling`], not dropped.
    pub async fn load<'a>(&self, sources: &'a [S]) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        let span = tracing::debug_span!(
            "pattern_runtime::relation.load",
            model = self.spec.model().name(),
            collection = self.spec.model().collection(),
            field = self.spec.field(),
            sources = sources.len(),
        );
        tracing::Instrument::instrument(self.load_inner(sources), span).await
    }

    async fn load_inner<'a>(&self, sources: &'a [S]) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        let mut seen: HashSet<&T::Id> = HashSet::new();
        let mut distinct: Vec<&T::Id> = Vec::new();
        for s in sources {
            for id in (self.ids)(s) {
                if seen.insert(id) {
                    distinct.push(id);
                }
            }
        }
        let collection = self.db.collection::<T>(self.spec.target().collection());
        let mut targets: HashMap<T::Id, T> = HashMap::with_capacity(distinct.len());
        let mut queries = 0;
        for chunk in distinct.chunks(self.chunk) {
            let ids = chunk
                .iter()
                .map(bson::serialize_to_bson)
                .collect::<std::result::Result<Vec<Bson>, _>>()?;
            // One more than can match: with exactly as many as match, the server would keep
            // the cursor open and the driver would send an empty `getMore`.
            let batch = u32::try_from(ids.len() + 1).unwrap_or(u32::MAX);
            let found: Vec<T> = collection
                .find(doc! { "_id": { "$in": ids } })
                .batch_size(batch)
                .await?
                .try_collect()
                .await?;
            queries += 1;
            tracing::debug!(
                target: "pattern_runtime::relation",
                collection = self.spec.target().collection(),
                asked = chunk.len(),
                found = found.len(),
                "loaded referenced documents"
            );
            for t in found {
                targets.insert(t.id().clone(), t);
            }
        }
        let mut dangling = Vec::new();
        for s in sources {
            let ids = (self.ids)(s);
            let many = self.spec.is_many();
            for (position, id) in ids.into_iter().enumerate() {
                if !targets.contains_key(id) {
                    dangling.push(Dangling {
                        source: s.id().clone(),
                        field: self.spec.field(),
                        position: many.then_some(position),
                        target: id.clone(),
                    });
                }
            }
        }
        if !dangling.is_empty() {
            tracing::debug!(
                target: "pattern_runtime::relation",
                dangling = dangling.len(),
                "references to documents that do not exist"
            );
        }
        Ok(Loaded {
            sources,
            ids: self.ids,
            targets,
            dangling,
            queries,
        })
    }

    /// [`load`](Relation::load) for one source.
    pub async fn load_one<'a>(&self, source: &'a S) -> Result<Loaded<'a, S, T>>
    where
        S::Id: Clone,
        T::Id: Eq + Hash + Clone,
    {
        self.load(std::slice::from_ref(source)).await
    }

    /// The documents of `S` whose field refers to `target`, in the declared `sort` order: a
    /// parent's children, through the `{field: 1, sort..}` index `#[relation(parent)]` declares.
    pub fn children_of(&self, target: &T::Id) -> Children<S> {
        Children {
            db: self.db.clone(),
            spec: self.spec,
            target: bson::serialize_to_bson(target).map_err(|e| e.to_string()),
            limit: None,
            filter: Document::new(),
            _model: PhantomData,
        }
    }
}

/// A query for the children of one parent: [`Relation::children_of`].
pub struct Children<S> {
    db: Database,
    spec: &'static RelationSpec,
    target: std::result::Result<Bson, String>,
    limit: Option<i64>,
    filter: Document,
    _model: PhantomData<fn() -> S>,
}

impl<S> fmt::Debug for Children<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("model", &self.spec.model().name())
            .field("field", &self.spec.field())
            .field("limit", &self.limit)
            .field("filter", &self.filter)
            .finish()
    }
}

impl<S: Model> Children<S> {
    /// At most `n` children (the first `n` in the declared order).
    pub fn limit(mut self, n: i64) -> Self {
        self.limit = Some(n);
        self
    }

    /// More conditions on the children, beside the parent's id (`{$and: [{<field>: id},
    /// filter]}`: it narrows the children, never replaces the parent's condition).
    pub fn filter(mut self, filter: Document) -> Self {
        self.filter = filter;
        self
    }

    /// The query's filter and sort.
    pub fn query(&self) -> Result<(Document, Document)> {
        let target = match &self.target {
            Ok(t) => t.clone(),
            Err(e) => {
                return Err(Error::InvalidValue {
                    field: self.spec.field().to_owned(),
                    reason: format!("the id cannot be stored as BSON: {e}"),
                })
            }
        };
        crate::literal::check_id(self.spec.field(), &target)?;
        let parent = doc! { self.spec.field(): target };
        // Beside the parent's id, never instead of it: a caller's filter naming the same field
        // narrows the children, it cannot widen them to another parent's.
        let filter = if self.filter.is_empty() {
            parent
        } else {
            doc! { "$and": [parent, self.filter.clone()] }
        };
        let mut sort = Document::new();
        for (f, dir) in self.spec.sort() {
            sort.insert(*f, *dir);
        }
        Ok((filter, sort))
    }

    /// The children as a stream, in the declared order.
    pub async fn stream(self) -> Result<impl Stream<Item = Result<S>> + Send + Unpin> {
        let span = tracing::debug_span!(
            "pattern_runtime::relation.children_of",
            model = self.spec.model().name(),
            collection = self.spec.model().collection(),
            field = self.spec.field(),
        );
        let (filter, sort) = span.in_scope(|| self.query())?;
        let collection = self.db.collection::<S>(self.spec.model().collection());
        let mut find = collection.find(filter).sort(sort);
        if let Some(n) = self.limit {
            find = find.limit(n);
        }
        let cursor =
            tracing::Instrument::instrument(std::future::IntoFuture::into_future(find), span)
                .await?;
        Ok(cursor.map(|r| r.map_err(Error::from)))
    }

    /// The children, collected.
    pub async fn to_vec(self) -> Result<Vec<S>> {
        self.stream().await?.try_collect().await
    }
}

// ----- two-way -----

/// The single side of a two-way relation (a task's `owner`, whose target's array lists the
/// task): `Model::<field>_relation(&db)`. Derefs to its [`Relation`].
pub struct TwoWay<S, T: Identified> {
    relation: Relation<S, T>,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
}

impl<S, T: Identified> Clone for TwoWay<S, T> {
    fn clone(&self) -> Self {
        TwoWay {
            relation: self.relation.clone(),
            tx: self.tx.clone(),
        }
    }
}

impl<S, T: Identified> fmt::Debug for TwoWay<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TwoWay").field(&self.relation).finish()
    }
}

impl<S, T: Identified> std::ops::Deref for TwoWay<S, T> {
    type Target = Relation<S, T>;
    fn deref(&self) -> &Relation<S, T> {
        &self.relation
    }
}

/// What [`TwoWay::assign`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    /// The previous owner (`None` when the child had none), as stored.
    pub previous: Option<Bson>,
    /// Arrays the child was pulled from.
    pub pulled: u64,
    /// Whether the new owner's array gained the child (`false`: it listed it already).
    pub added: bool,
}

/// A disagreement between the two sides of a two-way relation, from [`TwoWay::check`].
#[derive(Debug, Clone, PartialEq)]
pub enum Disagreement {
    /// The child's owner field names an owner whose array does not list the child.
    NotListed {
        /// The child's `_id`.
        child: Bson,
        /// The owner its field names.
        owner: Bson,
    },
    /// An owner's array lists a child whose owner field names someone else (or no one).
    ListedElsewhere {
        /// The owner whose array lists the child.
        owner: Bson,
        /// The child's `_id`.
        child: Bson,
        /// The owner the child's field names.
        actual: Option<Bson>,
    },
    /// An owner's array lists a child that does not exist.
    MissingChild {
        /// The owner whose array lists it.
        owner: Bson,
        /// The `_id` no child has.
        child: Bson,
    },
    /// A child's owner field names an owner that does not exist.
    MissingOwner {
        /// The child's `_id`.
        child: Bson,
        /// The `_id` no owner has.
        owner: Bson,
    },
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disagreement::NotListed { child, owner } => {
                write!(
                    f,
                    "child {child} names owner {owner}, whose array does not list it"
                )
            }
            Disagreement::ListedElsewhere {
                owner,
                child,
                actual,
            } => match actual {
                Some(a) => write!(f, "owner {owner} lists child {child}, whose owner is {a}"),
                None => write!(f, "owner {owner} lists child {child}, which has no owner"),
            },
            Disagreement::MissingChild { owner, child } => {
                write!(f, "owner {owner} lists child {child}, which does not exist")
            }
            Disagreement::MissingOwner { child, owner } => {
                write!(f, "child {child} names owner {owner}, which does not exist")
            }
        }
    }
}

impl<S: Identified, T: Identified> TwoWay<S, T> {
    #[doc(hidden)]
    pub fn new(
        db: &Database,
        spec: &'static RelationSpec,
        ids: for<'a> fn(&'a S) -> Vec<&'a T::Id>,
    ) -> Self {
        TwoWay {
            relation: Relation::new(db, spec, ids),
            tx: None,
        }
    }

    /// The same relation in the caller's transaction `tx`: [`assign`](Self::assign), with
    /// whatever derives from the fields it writes, and [`repair`](Self::repair)'s writes run
    /// in `tx`'s session; committing,
    /// aborting and retrying are the caller's. See [`Transaction`](crate::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        TwoWay {
            relation: self.relation.clone(),
            tx: Some(tx.clone()),
        }
    }

    /// The relation, for loading and children queries.
    pub fn relation(&self) -> &Relation<S, T> {
        &self.relation
    }

    fn inverse(&self) -> &'static str {
        self.relation.spec.inverse().unwrap_or_default()
    }

    /// Makes `owner` the owner of `child`, in one transaction: `owner`'s array gains the child,
    /// the child's field names `owner`, and every other array listing the child loses it.
    ///
    /// [`Error::NotFound`] when the child or the new owner does not exist;
    /// [`Error::InvalidValue`] when either id would not act as an equality (an operator
    /// document, a regex, ...: see "What the toolkit sends" in the crate docs); nothing is
    /// written then. (Without transactions, a missing child is found after the owner's array
    /// gained it: [`repair`](TwoWay::repair) removes such entries.)
    pub async fn assign(&self, child: &S::Id, owner: &T::Id) -> Result<Assigned> {
        let spec = self.relation.spec;
        let span = tracing::info_span!(
            "pattern_runtime::relation.assign",
            model = spec.model().name(),
            collection = spec.model().collection(),
            field = spec.field(),
            child = tracing::field::Empty,
            owner = tracing::field::Empty,
        );
        let child = bson::serialize_to_bson(child)?;
        let owner = bson::serialize_to_bson(owner)?;
        span.record("child", tracing::field::display(&child));
        span.record("owner", tracing::field::display(&owner));
        tracing::Instrument::instrument(self.assign_inner(child, owner), span).await
    }

    async fn assign_inner(&self, child: Bson, owner: Bson) -> Result<Assigned> {
        let spec = self.relation.spec;
        // Both go into filters (`{_id: owner}`, `{tasks: child}`): an operator document or a
        // regex there would match other documents.
        crate::literal::check_id("_id", &child)?;
        crate::literal::check_id(spec.field(), &owner)?;
        // The owner field may be kept by another pattern too (a grid's holder: book it).
        crate::derived::check_kept_except(spec.model(), [spec.field()], &|s| {
            (s as &dyn std::any::Any).is::<RelationSpec>()
        })?;
        let db = &self.relation.db;
        let children = db.collection::<Document>(spec.model().collection());
        let owners = db.collection::<Document>(spec.target().collection());
        let field = spec.field();
        let inverse = self.inverse();
        /// A document found missing after the owner's array was written: returned as the
        /// body's error, so the transaction is aborted and that write undone.
        #[derive(Debug, Clone, Copy)]
        struct NoChild;
        let step = transact!(db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            // What derives from the owners' arrays (a copy of them, a count over them): the
            // new owner and those listing the child now.
            let owners_watch = crate::derived::watch(
                db,
                s.as_deref_mut(),
                spec.target(),
                Some(&[inverse]),
                &doc! { "$or": [{ "_id": owner.clone() }, { inverse: child.clone() }] },
            )
            .await?;
            let add = owners.update_one(
                doc! { "_id": owner.clone() },
                doc! { "$addToSet": { inverse: child.clone() } },
            );
            let added = in_session!(add, s.as_deref_mut())?;
            if added.matched_count == 0 {
                return Ok(None);
            }
            // What derives from the child's owner field (a count of children per owner), but
            // the owners' arrays, which this write keeps itself.
            let watch = crate::derived::watch_except(
                db,
                s.as_deref_mut(),
                spec.model(),
                Some(&[field]),
                &doc! { "_id": child.clone() },
                &|d| d.pattern() == "relation",
            )
            .await?;
            let set = children
                .find_one_and_update(
                    doc! { "_id": child.clone() },
                    doc! { "$set": { field: owner.clone() } },
                )
                .projection(doc! { field: 1 })
                .return_document(ReturnDocument::Before);
            let Some(before) = in_session!(set, s.as_deref_mut())? else {
                return Err(mongodb::error::Error::custom(NoChild));
            };
            if let Some(watch) = watch {
                watch.after(db, s.as_deref_mut()).await?;
            }
            let pull = owners.update_many(
                doc! { inverse: child.clone(), "_id": { "$ne": owner.clone() } },
                doc! { "$pull": { inverse: child.clone() } },
            );
            let pulled = in_session!(pull, s.as_deref_mut())?;
            if let Some(watch) = owners_watch {
                watch.after(db, s).await?;
            }
            Ok(Some(Assigned {
                previous: before
                    .get(field)
                    .filter(|b| !matches!(b, Bson::Null))
                    .cloned(),
                pulled: pulled.modified_count,
                added: added.modified_count == 1,
            }))
        });
        match step {
            Ok(Some(a)) => {
                tracing::debug!(
                    target: "pattern_runtime::relation",
                    pulled = a.pulled,
                    added = a.added,
                    "assigned"
                );
                Ok(a)
            }
            Ok(None) => Err(Error::NotFound {
                collection: spec.target().collection().to_owned(),
                id: Box::new(owner),
            }),
            Err(Error::Driver { source, .. }) if source.get_custom::<NoChild>().is_some() => {
                Err(Error::NotFound {
                    collection: spec.model().collection().to_owned(),
                    id: Box::new(child),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Reads both collections (every child's owner field, every owner's array) and reports
    /// the disagreements as findings ([`Check::TwoWayDrift`]), one per kind, each listing
    /// its documents: owners listing a child that names another owner or does not exist,
    /// children their owner does not list, children whose owner does not exist. A full scan
    /// of both: for audits and after edits made outside the toolkit, not for every request.
    /// [`disagreements`](Self::disagreements) lists them one by one.
    ///
    /// [`Check::TwoWayDrift`]: crate::doctor::Check::TwoWayDrift
    pub async fn check(&self) -> Result<CheckReport> {
        let spec = self.relation.spec;
        let span = tracing::debug_span!(
            "pattern_runtime::relation.check",
            model = spec.model().name(),
            collection = spec.model().collection(),
            field = spec.field(),
        );
        tracing::Instrument::instrument(
            async {
                let (examined, found) = self.check_inner().await?;
                Ok(CheckReport {
                    examined,
                    findings: self.findings(&found),
                })
            },
            span,
        )
        .await
    }

    /// Every disagreement between the two sides, one by one (what [`check`](Self::check)
    /// reports by kind).
    pub async fn disagreements(&self) -> Result<Vec<Disagreement>> {
        Ok(self.check_inner().await?.1)
    }

    /// The disagreements as findings, one per kind.
    fn findings(&self, found: &[Disagreement]) -> Vec<Finding> {
        let spec = self.relation.spec;
        let inverse = self.inverse();
        let rust = spec
            .model()
            .field_by_bson_name(spec.field())
            .map_or(spec.field(), |f| f.rust_name());
        let repair = format!(
            "`{}::{rust}_relation(&db).repair()` makes every owner's array agree with the \
             children's owner fields; `assign` keeps both sides",
            spec.model().name()
        );
        let (model, target) = (spec.model(), spec.target());
        let kinds: [(&str, &ModelSchema, &str, Vec<Bson>); 4] = [
            (
                "list a child that names another owner",
                target,
                inverse,
                found
                    .iter()
                    .filter_map(|d| match d {
                        Disagreement::ListedElsewhere { owner, .. } => Some(owner.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            (
                "list a child that does not exist",
                target,
                inverse,
                found
                    .iter()
                    .filter_map(|d| match d {
                        Disagreement::MissingChild { owner, .. } => Some(owner.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            (
                "are not listed by their owner",
                model,
                spec.field(),
                found
                    .iter()
                    .filter_map(|d| match d {
                        Disagreement::NotListed { child, .. } => Some(child.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            (
                "name an owner that does not exist",
                model,
                spec.field(),
                found
                    .iter()
                    .filter_map(|d| match d {
                        Disagreement::MissingOwner { child, .. } => Some(child.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
        ];
        let mut findings = Vec::new();
        for (what, on, field, mut ids) in kinds {
            let mut seen = std::collections::HashSet::new();
            ids.retain(|id| seen.insert(crate::finding::id_key(id)));
            if ids.is_empty() {
                continue;
            }
            let orphans = std::ptr::eq(on, model) && what.starts_with("name an owner");
            findings.push(
                Finding {
                    check: crate::finding::Check::TwoWayDrift,
                    model: Some(on.name()),
                    collection: on.collection().to_owned(),
                    subject: field.to_owned(),
                    figure: format!(
                        "{} documents {what}; {}",
                        ids.len(),
                        crate::finding::examples(&ids)
                    ),
                    fix: if orphans {
                        format!(
                            "`assign` each to an existing `{}`, or create the owner: a repair \
                             cannot invent one",
                            target.name()
                        )
                    } else {
                        repair.clone()
                    },
                    documents: Vec::new(),
                }
                .about(ids),
            );
        }
        findings
    }

    /// Documents read, and every disagreement.
    async fn check_inner(&self) -> Result<(u64, Vec<Disagreement>)> {
        let spec = self.relation.spec;
        let db = &self.relation.db;
        let field = spec.field();
        let inverse = self.inverse();
        // Bson is not `Hash`: key both sides as the server compares them (`1` and `1i64` alike).
        let key = crate::finding::id_key;
        let mut owner_of: HashMap<String, (Bson, Option<Bson>)> = HashMap::new();
        for (id, owner) in scan(db, spec.model().collection(), field).await? {
            let owner = owner.filter(|b| !matches!(b, Bson::Null));
            owner_of.insert(key(&id), (id, owner));
        }
        let mut lists: HashMap<String, (Bson, Vec<Bson>)> = HashMap::new();
        for (id, listed) in scan(db, spec.target().collection(), inverse).await? {
            let listed = match listed {
                Some(Bson::Array(a)) => a,
                _ => Vec::new(),
            };
            lists.insert(key(&id), (id, listed));
        }
        let mut out = Vec::new();
        for (owner_key, (owner, listed)) in &lists {
            for child in listed {
                match owner_of.get(&key(child)) {
                    None => out.push(Disagreement::MissingChild {
                        owner: owner.clone(),
                        child: child.clone(),
                    }),
                    Some((_, actual)) if actual.as_ref().map(key).as_ref() != Some(owner_key) => {
                        out.push(Disagreement::ListedElsewhere {
                            owner: owner.clone(),
                            child: child.clone(),
                            actual: actual.clone(),
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        for (child, owner) in owner_of.values() {
            let Some(owner) = owner else { continue };
            match lists.get(&key(owner)) {
                None => out.push(Disagreement::MissingOwner {
                    child: child.clone(),
                    owner: owner.clone(),
                }),
                Some((_, listed)) if !listed.iter().any(|c| key(c) == key(child)) => {
                    out.push(Disagreement::NotListed {
                        child: child.clone(),
                        owner: owner.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        tracing::debug!(
            target: "pattern_runtime::relation",
            children = owner_of.len(),
            owners = lists.len(),
            disagreements = out.len(),
            "checked"
        );
        Ok(((owner_of.len() + lists.len()) as u64, out))
    }

    /// Makes every owner's array agree with the children's owner fields (the side that says
    /// which owner a child has): adds missing entries, pulls wrong ones and those of children
    /// that do not exist; then checks again. Children whose owner does not exist are left,
    /// and reported in [`RepairReport::left`].
    pub async fn repair(&self) -> Result<RepairReport> {
        let spec = self.relation.spec;
        let span = tracing::info_span!(
            "pattern_runtime::relation.repair",
            model = spec.model().name(),
            collection = spec.model().collection(),
            field = spec.field(),
        );
        tracing::Instrument::instrument(
            async {
                let owners = self
                    .relation
                    .db
                    .collection::<Document>(spec.target().collection());
                let inverse = self.inverse();
                let (mut added, mut pulled, mut orphans) = (0u64, 0u64, 0usize);
                // One `update_one` of an owner's array per disagreement it can mend.
                let mend = |owner: Bson, op: &str, child: Bson| {
                    owners.update_one(doc! { "_id": owner }, doc! { op: { inverse: child } })
                };
                for d in self.check_inner().await?.1 {
                    let mut session = crate::txn::Transaction::session_of(self.tx.as_ref()).await?;
                    match d {
                        Disagreement::NotListed { child, owner } => {
                            let op = mend(owner, "$addToSet", child);
                            added += in_session!(op, session.as_deref_mut())?.modified_count;
                        }
                        Disagreement::ListedElsewhere { owner, child, .. }
                        | Disagreement::MissingChild { owner, child } => {
                            let op = mend(owner, "$pull", child);
                            pulled += in_session!(op, session.as_deref_mut())?.modified_count;
                        }
                        Disagreement::MissingOwner { .. } => orphans += 1,
                    }
                }
                tracing::debug!(
                    target: "pattern_runtime::relation",
                    added,
                    pulled,
                    orphans,
                    "repaired"
                );
                let (_, left) = self.check_inner().await?;
                Ok(RepairReport {
                    repaired: added + pulled,
                    left: self.findings(&left),
                })
            },
            span,
        )
        .await
    }
}

/// Every document of `collection` as its `_id` and the value of `field` (a full scan, projected).
async fn scan(db: &Database, collection: &str, field: &str) -> Result<Vec<(Bson, Option<Bson>)>> {
    let mut cursor = db
        .collection::<Document>(collection)
        .find(doc! {})
        .projection(doc! { field: 1 })
        .await?;
    let mut out = Vec::new();
    while let Some(mut d) = cursor.try_next().await? {
        let id = d.remove("_id").unwrap_or(Bson::Null);
        out.push((id, d.remove(field)));
    }
    Ok(out)
}

/// Compile-time checks of a field that holds the `_id` of a `U` (generated code: a computed
/// field's `by`): the probe of the field's type `T` for the model `U`, by autoref
/// specialisation as in `checks`.
#[doc(hidden)]
pub mod id_probe {
    use std::marker::PhantomData;

    use super::{Identified, Ref};
    use crate::checks::{Fail, Pass};
    use crate::schema::FieldName;

    /// The probe of a field of type `T` meant to hold the `_id` of a `U`.
    pub struct IdProbe<T: ?Sized, U>(PhantomData<fn() -> U>, PhantomData<fn() -> T>);

    impl<T: ?Sized, U> IdProbe<T, U> {
        /// The probe of `field`'s type.
        pub const fn of(_field: FieldName<T>) -> Self {
            IdProbe(PhantomData, PhantomData)
        }
    }

    /// `T` is `U`'s `_id` type.
    pub trait ProbeId {
        /// Passes.
        fn id(&self) -> Pass {
            Pass
        }
    }
    impl<U: Identified> ProbeId for &IdProbe<U::Id, U> {}

    /// `T` is `Option` of `U`'s `_id` type.
    pub trait ProbeOptionalId {
        /// Passes.
        fn optional_id(&self) -> Pass {
            Pass
        }
    }
    impl<U: Identified> ProbeOptionalId for &IdProbe<Option<U::Id>, U> {}

    /// `T` is `Ref<U>`.
    pub trait ProbeRefTo {
        /// Passes.
        fn ref_to(&self) -> Pass {
            Pass
        }
    }
    impl<U: Identified> ProbeRefTo for &IdProbe<Ref<U>, U> {}

    /// `T` is `Option<Ref<U>>`.
    pub trait ProbeOptionalRefTo {
        /// Passes.
        fn optional_ref_to(&self) -> Pass {
            Pass
        }
    }
    impl<U: Identified> ProbeOptionalRefTo for &IdProbe<Option<Ref<U>>, U> {}

    /// Every check, when nothing more specific holds.
    pub trait ProbeOtherId {
        /// Fails.
        fn id(&self) -> Fail {
            Fail
        }
        /// Fails.
        fn optional_id(&self) -> Fail {
            Fail
        }
        /// Fails.
        fn ref_to(&self) -> Fail {
            Fail
        }
        /// Fails.
        fn optional_ref_to(&self) -> Fail {
            Fail
        }
    }
    impl<T: ?Sized, U> ProbeOtherId for IdProbe<T, U> {}
}

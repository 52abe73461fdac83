//! The relation pattern's static data: the spec generated code builds, the two sides of a
//! two-way relation as the map of derived data keeps them, and the compile-time checks of
//! inverses.

use super::*;
use crate::schema::{spec, Applying, Changed, IndexesNeeded, KeptFields};

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

spec! {
    /// One `#[relation]` field, as static data.
    #[derive(Debug, Clone, Copy)]
    pub struct RelationSpec { pub(super) parts: RelationParts }
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
}

impl RelationSpec {
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

/// What a dependent of a two-way relation keeps: the target's array, kept from the model's
/// field, which the dependent reads as `from` says.
fn describe_two_way(spec: &RelationSpec, from: &str) -> String {
    format!(
        "{}.{} (two-way relation, {from} {}.{})",
        spec.target().name(),
        spec.inverse().unwrap_or_default(),
        spec.model().name(),
        spec.field()
    )
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
        describe_two_way(self.spec, "from")
    }

    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, mut session, changes) = changed.into_parts();
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
                            missing: Box::new(crate::error::Missing::Document { id: new }),
                        }));
                    }
                }
            }
            Ok(())
        })
    }
}

/// The children's owner field of a two-way relation, kept from the owners' documents: an owner
/// deleted (by any pattern's handle: a tree cascade, the model handle's `delete`) leaves no child naming
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
        describe_two_way(self.spec, "the owner named by")
    }

    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, mut session, changes) = changed.into_parts();
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
                        return Err(crate::error::refusal(Error::StillNamed {
                            collection: self.spec.model().collection().to_owned(),
                            id: Box::new(c.id.clone()),
                            named_by: children.collection().to_owned(),
                            field: field.to_owned(),
                            reason: "`assign` them to another owner first, or make their field \
                                     an `Option` (a deleted owner then empties it)",
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
    fn kept_fields(&'static self, _model: &'static ModelSchema) -> KeptFields {
        if self.inverse().is_none() {
            return Vec::new();
        }
        vec![(
            self.field(),
            "a two-way relation writes both sides together: `assign` through the child's \
             `TwoWay` handle (`repair` after writes made around it)",
        )]
    }

    fn indexes(&'static self, model: &'static ModelSchema) -> IndexesNeeded {
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
            .then(|| Box::pin(super::check::audit_two_way(self, sample)) as _)
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

//! The outlier pattern's static data: the spec generated code builds, what the sync, the doctor
//! and the map of derived data read from it.

use super::*;
use crate::schema::shape::{Property, Shape};
use crate::schema::{spec, Applying, Changed, Companion, IndexesNeeded, KeptFields};

spec! {
    /// An `#[outlier(...)]` field, as static data.
    #[derive(Debug, Clone, Copy)]
    pub struct OutlierSpec { parts: OutlierParts }
    pub struct OutlierParts {
        /// The array field (BSON name), in the main and the overflow documents.
        pub field: &'static str,
        pub limit: u32,
        pub capacity: u32,
        /// The byte budget of a document holding items.
        pub max_bytes: u32,
        pub overflow: &'static str,
        /// The overflow documents' field holding the main document's `_id`.
        pub parent: &'static str,
        /// The main document's `bool` flag (BSON name).
        pub flag: &'static str,
        /// The main document's count of every item (BSON name).
        pub count: &'static str,
        /// The main document's receipts of its last pushes (`__<field>Pushes`): what makes a
        /// push sent twice (a transaction's body run again after a commit whose answer was
        /// lost) apply once.
        pub receipts: &'static str,
        /// `{parent: 1, seq: 1}`, unique.
        pub index: IndexSpec,
    }
}

impl OutlierSpec {
    /// The array field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// Items kept in the main document.
    pub fn limit(&self) -> u32 {
        self.parts.limit
    }

    /// Items per overflow document.
    pub fn capacity(&self) -> u32 {
        self.parts.capacity
    }

    /// The byte budget of a document holding items (the main document and each overflow
    /// document): a push that would take one past it goes to the next document instead.
    pub fn max_bytes(&self) -> u32 {
        self.parts.max_bytes
    }

    /// The overflow collection.
    pub fn overflow(&self) -> &'static str {
        self.parts.overflow
    }

    /// The overflow documents' field holding the main document's `_id`.
    pub fn parent(&self) -> &'static str {
        self.parts.parent
    }

    /// The flag field's BSON name.
    pub fn flag(&self) -> &'static str {
        self.parts.flag
    }

    /// The count field's BSON name.
    pub fn count(&self) -> &'static str {
        self.parts.count
    }

    /// The main document's field keeping the receipts of its last pushes (BSON name):
    /// `[{t, k, from}, ..]`, the last four, each with the push's
    /// token, how many items it embedded and the count before it.
    pub fn receipts(&self) -> &'static str {
        self.parts.receipts
    }

    /// The overflow collection's `{parent: 1, seq: 1}` unique index.
    pub fn index(&'static self) -> &'static IndexSpec {
        &self.parts.index
    }
}

/// The overflow documents of a main document, gone with it: one entry of the
/// [map of derived data](crate::derived), read on the `_id` alone so that only an insert or a
/// delete reaches it (no update changes an `_id`). A main document deleted through any handle
/// (the model handle ([`ModelCollection`](crate::model::ModelCollection)), a tree cascade) takes its overflow documents with it.
#[derive(Debug)]
struct OverflowOfDeleted {
    spec: &'static OutlierSpec,
    model: &'static ModelSchema,
}

impl crate::schema::Dependent for OverflowOfDeleted {
    fn source(&self) -> &'static ModelSchema {
        self.model
    }

    fn reads(&self) -> Vec<&'static str> {
        vec!["_id"]
    }

    fn pattern(&self) -> &'static str {
        "outlier"
    }

    fn describe(&self) -> String {
        format!(
            "{} (overflow documents of {}.{})",
            self.spec.overflow(),
            self.model.name(),
            self.spec.field()
        )
    }

    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, session, changes) = changed.into_parts();
        Box::pin(async move {
            let gone: Vec<Bson> = changes
                .iter()
                .filter(|c| c.before.is_some() && c.after.is_none())
                .map(|c| c.id.clone())
                .collect();
            if gone.is_empty() {
                return Ok(());
            }
            let overflow: Collection<Document> = db.collection(self.spec.overflow());
            let delete = overflow.delete_many(doc! { self.spec.parent(): { "$in": gone } });
            let deleted = in_session!(delete, session)?;
            tracing::debug!(
                deleted = deleted.deleted_count,
                "overflow documents of deleted documents deleted"
            );
            Ok(())
        })
    }

    /// The main documents whose overflow documents are left: a delete of each.
    fn held<'a>(&'a self, db: &'a mongodb::Database) -> crate::derived::Held<'a> {
        Box::pin(crate::maintenance::held_for_gone(
            db,
            self.model,
            self.spec.overflow(),
            self.spec.parent(),
        ))
    }
}

/// The count and the flag of a main document, as a [maintainer](crate::maintainer) rebuilds them
/// after its items changed around the toolkit: in the main document (`overflow: false`), or in
/// its overflow documents (`overflow: true`, the changes of the overflow collection, whose
/// main documents they name by `parent`). The toolkit's pushes and removals keep them
/// themselves: not in the map of derived data.
#[derive(Debug)]
struct OutlierCount {
    spec: &'static OutlierSpec,
    model: &'static ModelSchema,
    overflow: bool,
}

impl crate::schema::Dependent for OutlierCount {
    fn source(&self) -> &'static ModelSchema {
        self.model
    }

    fn collection(&self) -> &'static str {
        if self.overflow {
            self.spec.overflow()
        } else {
            self.model.collection()
        }
    }

    /// The items and, in a main document, the count and the flag themselves (derived data
    /// written around the toolkit is rebuilt too); in an overflow document, the items and the
    /// main document it names.
    fn reads(&self) -> Vec<&'static str> {
        if self.overflow {
            vec![self.spec.field(), self.spec.parent()]
        } else {
            vec![self.spec.field(), self.spec.count(), self.spec.flag()]
        }
    }

    fn pattern(&self) -> &'static str {
        "outlier"
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} and {} (from {}.{}{})",
            self.model.name(),
            self.spec.count(),
            self.spec.flag(),
            self.model.name(),
            self.spec.field(),
            if self.overflow {
                format!(" in {}", self.spec.overflow())
            } else {
                String::new()
            }
        )
    }

    /// Nothing: the toolkit's pushes and removals keep the count and the flag.
    fn apply<'a>(&'a self, _changed: Changed<'a>) -> Applying<'a> {
        Box::pin(async { Ok(()) })
    }

    fn rebuild<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, session, changes) = changed.into_parts();
        Box::pin(async move {
            let mut ids: Vec<Bson> = Vec::new();
            for change in changes {
                if self.overflow {
                    for d in [&change.before, &change.after].into_iter().flatten() {
                        if let Some(parent) = d.get(self.spec.parent()) {
                            ids.push(parent.clone());
                        }
                    }
                } else if let Some(after) = &change.after {
                    // A push through the toolkit (its receipt changed): it keeps the count
                    // itself, and its items may still be on their way to the overflow
                    // documents (the count goes first), so a rebuild now would undercount.
                    let receipts = self.spec.receipts();
                    let pushed = change
                        .before
                        .as_ref()
                        .is_some_and(|before| before.get(receipts) != after.get(receipts));
                    if !pushed {
                        ids.push(change.id.clone());
                    }
                }
            }
            ids.dedup();
            if ids.is_empty() {
                return Ok(());
            }
            let rewritten =
                super::check::rebuild_counts(db, session, self.spec, self.model, ids).await?;
            tracing::debug!(
                model = self.model.name(),
                field = self.spec.field(),
                rewritten,
                "outlier counts rebuilt"
            );
            Ok(())
        })
    }
}

impl PatternSpec for OutlierSpec {
    /// The count and the flag follow the items, whoever writes them: a maintainer rebuilds
    /// them after a change of the main documents' items or of the overflow documents.
    fn maintained(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        [false, true]
            .into_iter()
            .map(|overflow| {
                Box::new(OutlierCount {
                    spec: self,
                    model,
                    overflow,
                }) as Box<dyn crate::schema::Dependent>
            })
            .collect()
    }

    /// The overflow documents, deleted with their main document.
    fn dependents(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        vec![Box::new(OverflowOfDeleted { spec: self, model })]
    }

    /// The items, the count and the flag: pushes and removals keep them together. (Not the
    /// receipts: a replace through another handle drops them, which only forgets pushes made
    /// already.)
    fn kept_fields(&'static self, _model: &'static ModelSchema) -> KeptFields {
        let why = "the outlier pattern keeps the items, their count and the flag together: \
                   `push`, `remove` or `rebuild` through the field's `Outlier` handle";
        vec![(self.field(), why), (self.count(), why), (self.flag(), why)]
    }

    /// The model's documents, with the receipts of the last pushes (optional: a document no
    /// push reached has none).
    fn stored_shape(&'static self, shape: Shape) -> std::result::Result<Shape, &'static str> {
        let Shape::Object(mut properties) = shape else {
            return Ok(shape);
        };
        let long = || Shape::Types(vec!["long"]);
        properties.push(Property::new(
            self.receipts(),
            Shape::BoundedArray {
                items: Box::new(Shape::Object(vec![
                    Property::new("t", Shape::of("objectId"), true),
                    Property::new("k", long(), true),
                    Property::new("from", long(), true),
                ])),
                max: super::RECEIPTS as u32,
            },
            false,
        ));
        Ok(Shape::Object(properties))
    }

    fn indexes(&'static self, _model: &'static ModelSchema) -> IndexesNeeded {
        vec![(self.parts.overflow, self.index())]
    }

    /// The overflow documents: `{_id, <parent>, seq, <field>: [at most capacity items],
    /// full?}`, the items of the main document's array shape.
    fn companions(&'static self, model: &'static ModelSchema) -> Vec<Companion> {
        let items = match model.property_shape(self.field()) {
            Shape::Array(items) | Shape::BoundedArray { items, .. } => *items,
            Shape::Nullable(inner) => match *inner {
                Shape::Array(items) | Shape::BoundedArray { items, .. } => *items,
                _ => Shape::Any,
            },
            _ => Shape::Any,
        };
        let property = Property::new;
        vec![Companion {
            collection: self.overflow(),
            documents: "overflow documents",
            shape: Shape::Object(vec![
                // Readable text, or an ObjectId where two parents' ids read alike (`7`, `"7"`).
                property("_id", Shape::Types(vec!["string", "objectId"]), true),
                property(self.parent(), model.id_shape(), true),
                property(super::SEQ, Shape::Types(vec!["long", "int"]), true),
                property(
                    self.field(),
                    Shape::BoundedArray {
                        items: Box::new(items),
                        max: self.capacity(),
                    },
                    true,
                ),
                property(super::FULL, Shape::of("bool"), false),
                property(super::BYTES, Shape::Types(vec!["long", "int"]), false),
            ]),
        }]
    }
    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded::new(
            self.parts.field,
            "`#[outlier]` (overflow documents past the limit)",
        )
        .at_most(self.limit())]
    }

    /// The sampled documents whose count or flag disagrees with their items: one aggregation
    /// of the overflow documents, as [`Outlier::check`] reads them.
    fn audit<'a>(
        &'static self,
        sample: &'a crate::schema::Sample<'a>,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        Some(Box::pin(super::check::audit_outlier(self, sample)))
    }
}

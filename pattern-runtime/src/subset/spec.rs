//! The subset pattern's static data: the spec generated code builds, the summaries it
//! keeps, the map of derived data's dependent (full items' writes reach the parent), and the
//! probe that gives generated code the typed rebuild.

use super::check::Embed;
use super::*;
use crate::schema::{Applying, Changed, IndexesNeeded, KeptFields};

/// What a summary field keeps of a subset's full items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SummaryKind {
    /// The number of items.
    Count,
    /// The sum of an item field (BSON name in the full item).
    Sum {
        /// The item field.
        item_field: &'static str,
    },
    /// The mean of an item field: its sum divided by the count, `null` while there are no items.
    Avg {
        /// The item field.
        item_field: &'static str,
        /// The parent field holding the sum of that item field.
        sum_field: &'static str,
        /// The parent field holding the count.
        count_field: &'static str,
    },
}

/// A parent field summarising a subset's full items (`#[summary(..)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The parent field's BSON name.
    pub field: &'static str,
    /// What it holds.
    pub kind: SummaryKind,
}

/// A `#[subset(...)]` field, as static data.
#[derive(Debug, Clone, Copy)]
pub struct SubsetSpec {
    pub(super) parts: SubsetParts,
}

/// A subset's embedded items and counters, kept from the full items: one entry of the
/// [map of derived data](crate::derived). A full item inserted, written or deleted through
/// another handle (the model handle ([`ModelCollection`](crate::model::ModelCollection)), a polymorphic variant) rebuilds the subset
/// of its parent (before and after), in the same transaction.
#[derive(Debug)]
struct SubsetItems {
    spec: &'static SubsetSpec,
    parent: &'static ModelSchema,
    full: &'static ModelSchema,
}

impl crate::schema::Dependent for SubsetItems {
    fn source(&self) -> &'static ModelSchema {
        self.full
    }

    /// Every field of the full item: the embedded form is the application's `From`, which may
    /// read any of them.
    fn reads(&self) -> Vec<&'static str> {
        self.full.fields().iter().map(|f| f.bson_name()).collect()
    }

    fn pattern(&self) -> &'static str {
        "subset"
    }

    /// A full item is an item, whichever handle writes it (a push, the model handle ([`ModelCollection`](crate::model::ModelCollection)),
    /// a variant): it goes into the parent's array as given, so no key with a leading `$`, a
    /// `.` or NUL and no nesting past [`MAX_VALUE_DEPTH`](crate::limits::MAX_VALUE_DEPTH) (the crate
    /// docs: [safety](crate::guide::safety)), and its summed fields are finite.
    fn check_written(&self, fields: &Document) -> crate::error::Result<()> {
        crate::literal::check_document(self.full.name(), fields)?;
        for c in self.spec.parts.summaries {
            if let SummaryKind::Sum { item_field } | SummaryKind::Avg { item_field, .. } = c.kind {
                crate::error::check_finite(fields, item_field, "a summary's sum or average")?;
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "{}.{} (subset of {})",
            self.parent.name(),
            self.spec.field(),
            self.full.name()
        )
    }

    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, mut session, changes) = changed.into_parts();
        Box::pin(async move {
            let key = self.spec.parts.parent_key;
            let mut parents: Vec<Bson> = Vec::new();
            for c in changes {
                for d in [&c.before, &c.after].into_iter().flatten() {
                    if let Some(p) = d.get(key).filter(|p| !matches!(p, Bson::Null))
                        && !parents.iter().any(|q| id_key(q) == id_key(p))
                    {
                        parents.push(p.clone());
                    }
                }
            }
            if parents.is_empty() {
                return Ok(());
            }
            // What derives from the parents' subsets (a copy of a count) follows too.
            let mut fields: Vec<&str> = vec![self.spec.parts.field];
            fields.extend(self.spec.parts.summaries.iter().map(|c| c.field));
            let watch = derived::watch(
                db,
                session.as_deref_mut(),
                self.parent,
                Some(&fields),
                &doc! { "_id": { "$in": parents.clone() } },
            )
            .await?;
            let embed = (self.spec.parts.embed)();
            for p in &parents {
                self.spec
                    .rebuild_parent(db, self.parent, embed, session.as_deref_mut(), p)
                    .await?;
            }
            if let Some(watch) = watch {
                watch.after(db, session).await?;
            }
            Ok(())
        })
    }

    /// Every parent: one whose full items are all gone still embeds them.
    fn held<'a>(&'a self, db: &'a mongodb::Database) -> crate::derived::Held<'a> {
        Box::pin(crate::derived::held_in(
            db,
            self.parent.collection(),
            self.spec.parts.parent_key,
        ))
    }
}

impl PatternSpec for SubsetSpec {
    /// The subset's items, kept from the full model's documents.
    fn dependents(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        vec![Box::new(SubsetItems {
            spec: self,
            parent: model,
            full: self.full_schema(),
        })]
    }

    /// The embedded array and its counters: pushes, removals and rebuilds write them.
    fn kept_fields(&'static self, _model: &'static ModelSchema) -> KeptFields {
        let why = "the subset keeps it from its full items: `push`, `remove` or `rebuild` \
                   through the field's `Subset` handle";
        std::iter::once(self.parts.field)
            .chain(self.parts.summaries.iter().map(|c| c.field))
            .map(|f| (f, why))
            .collect()
    }

    /// The full collection's `{parent key, sort fields}` index.
    fn indexes(&'static self, _model: &'static ModelSchema) -> IndexesNeeded {
        vec![(self.full_collection(), self.full_index())]
    }

    fn bounded_arrays(&'static self) -> Vec<Bounded> {
        vec![Bounded::new(self.field(), "`#[subset]`").at_most(self.limit())]
    }

    /// The sampled parents whose subset is over its limit, out of its order, or (with a
    /// summary count) disagrees with the full collection: a count that differs, or fewer items
    /// than the full collection could fill. One aggregation of the full collection.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(super::check::audit_subset(self, sample)))
    }

    /// Full items whose parent is gone: a deleted parent leaves them (they are the data, not
    /// a copy), and they are reported here.
    fn audit_orphans<'a>(
        &'static self,
        db: &'a Database,
        tx: Option<&'a crate::txn::Transaction>,
        model: &'static ModelSchema,
        sample: Option<u32>,
        max_time: std::time::Duration,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(async move {
            let full = self.full_collection();
            let key = self.parent_key();
            let (parents, items) =
                crate::maintenance::orphans(db, tx, model, full, key, sample, max_time).await?;
            if parents.is_empty() {
                return Ok(Vec::new());
            }
            let sampled = if sample.is_some() { " sampled" } else { "" };
            Ok(vec![Finding {
                check: Check::Orphans,
                model: Some(model.name()),
                collection: full.to_owned(),
                subject: key.to_owned(),
                figure: format!(
                    "{items}{sampled} items of `{full}` name {} parents `{}` does not hold \
                     (a parent deleted leaves its full items); {}",
                    parents.len(),
                    model.collection(),
                    crate::finding::examples(&parents)
                ),
                fix: format!(
                    "delete the items whose `{key}` names no parent (by `{key}`, with the \
                     driver), or restore their parents"
                ),
                documents: parents,
            }])
        }))
    }
}

/// The parts of a [`SubsetSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SubsetParts {
    pub field: &'static str,
    pub limit: u32,
    pub sort: &'static [(&'static str, i32)],
    pub parent_key: &'static str,
    /// The full model's schema. A function: two models referring to each other would make
    /// their schema constants depend on each other.
    pub full: fn() -> &'static ModelSchema,
    pub full_index: IndexSpec,
    pub summaries: &'static [Summary],
    /// A full item as the parent embeds it, for the rebuild of one parent that the map of
    /// derived data runs when a full item is written through another handle. A function giving
    /// it, so that generated code picks it by autoref (`RebuildProbe`) and a wrong type is
    /// reported once, by the derive's own check.
    pub embed: fn() -> Embed,
}

/// Picks the `Embed` of `F` as `E` when the types allow it (generated code:
/// `(&&RebuildProbe::<P, F, E>::new()).embed()`), a function that embeds nothing otherwise
/// (the derive reports the types' error itself).
#[doc(hidden)]
#[allow(clippy::type_complexity)] // a marker of three types
pub struct RebuildProbe<P, F, E>(PhantomData<fn() -> (P, F, E)>);

impl<P, F, E> RebuildProbe<P, F, E> {
    /// The probe.
    #[allow(clippy::new_without_default)] // built in generated code only
    pub const fn new() -> Self {
        RebuildProbe(PhantomData)
    }
}

/// The embedding of a subset whose types are right.
#[doc(hidden)]
pub trait ProbeRebuild {
    /// `E::from(&F)`, serialized.
    fn embed(&self) -> Embed;
}
impl<P, F, E> ProbeRebuild for &RebuildProbe<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    fn embed(&self) -> Embed {
        super::check::embed::<F, E>
    }
}

/// The embedding of a subset whose types are wrong (never called: the code does not compile).
#[doc(hidden)]
pub trait ProbeNoRebuild {
    /// Embeds nothing.
    fn embed(&self) -> Embed {
        |_| Ok(Bson::Null)
    }
}
impl<P, F, E> ProbeNoRebuild for RebuildProbe<P, F, E> {}

impl SubsetSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: SubsetParts) -> Self {
        SubsetSpec { parts }
    }

    /// The parent's array field (BSON name).
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// How many items the parent keeps.
    pub fn limit(&self) -> u32 {
        self.parts.limit
    }

    /// The order of the items: item fields (BSON names) with `1` or `-1`.
    pub fn sort(&self) -> &'static [(&'static str, i32)] {
        self.parts.sort
    }

    /// The field of the full item that holds the parent's `_id`.
    pub fn parent_key(&self) -> &'static str {
        self.parts.parent_key
    }

    /// The collection of the full items.
    pub fn full_collection(&self) -> &'static str {
        self.full_schema().collection()
    }

    /// The full model's schema.
    pub fn full_schema(&self) -> &'static ModelSchema {
        (self.parts.full)()
    }

    /// The index the full collection needs: `{parent key, sort fields}`. Synced with the parent.
    pub fn full_index(&'static self) -> &'static IndexSpec {
        &self.parts.full_index
    }

    /// The parent's summary fields of this subset (`#[summary(..)]`).
    pub fn summaries(&self) -> &'static [Summary] {
        self.parts.summaries
    }

    /// The model name of the full items.
    pub fn full_model(&self) -> &'static str {
        self.full_schema().name()
    }

    /// The `$sort` document (`{ "createdAt": -1 }`).
    pub fn sort_document(&self) -> Document {
        self.parts
            .sort
            .iter()
            .map(|(k, d)| ((*k).to_owned(), Bson::Int32(*d)))
            .collect()
    }

    pub(super) fn count_field(&self) -> Option<&'static str> {
        self.parts
            .summaries
            .iter()
            .find(|c| c.kind == SummaryKind::Count)
            .map(|c| c.field)
    }
}

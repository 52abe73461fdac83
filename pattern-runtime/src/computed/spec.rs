//! The computed pattern's static data: what a computed field keeps of its sources, the spec
//! generated code builds, and what the sync and the doctor read from it.

use super::*;
use crate::schema::{IndexesNeeded, KeptFields};

/// What a computed field keeps of its sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// How many sources point at the document.
    Count,
    /// The sum of a numeric field of the sources (0 without sources).
    Sum,
    /// The smallest value of the field (`null` without sources).
    Min,
    /// The largest value of the field (`null` without sources).
    Max,
}

impl Aggregate {
    /// The `$group` accumulator of the source field `field`.
    pub(super) fn accumulator(self, field: &str) -> Document {
        let path = format!("${field}");
        match self {
            Aggregate::Count => doc! { "$sum": 1 },
            Aggregate::Sum => doc! { "$sum": path },
            Aggregate::Min => doc! { "$min": path },
            Aggregate::Max => doc! { "$max": path },
        }
    }

    /// The value without any source.
    pub(super) fn empty(self) -> Bson {
        match self {
            Aggregate::Count | Aggregate::Sum => Bson::Int32(0),
            Aggregate::Min | Aggregate::Max => Bson::Null,
        }
    }
}

/// One field computed from another model's documents, as `#[computed(.., by = ..)]` declares it.
pub struct ComputedFromSpec {
    pub(super) parts: ComputedFromParts,
    index: OnceLock<IndexSpec>,
}

/// The parts of a [`ComputedFromSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ComputedFromParts {
    /// The kept field's BSON name.
    pub field: &'static str,
    pub aggregate: Aggregate,
    /// The source model's schema (a function: schemas may name each other).
    pub source: fn() -> &'static ModelSchema,
    /// The source's summed field (empty for a count).
    pub source_field: &'static str,
    /// The source's field holding the target's `_id`.
    pub by: &'static str,
}

impl fmt::Debug for ComputedFromSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComputedFromSpec")
            .field("field", &self.parts.field)
            .field("aggregate", &self.parts.aggregate)
            .field("source", &self.source().name())
            .field("source_field", &self.parts.source_field)
            .field("by", &self.parts.by)
            .finish()
    }
}

impl ComputedFromSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: ComputedFromParts) -> Self {
        ComputedFromSpec {
            parts,
            index: OnceLock::new(),
        }
    }

    /// The kept field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// What it keeps.
    pub fn aggregate(&self) -> Aggregate {
        self.parts.aggregate
    }

    /// The source model.
    pub fn source(&self) -> &'static ModelSchema {
        (self.parts.source)()
    }

    /// The source's summed field (`None` for a count).
    pub fn source_field(&self) -> Option<&'static str> {
        (!self.parts.source_field.is_empty()).then_some(self.parts.source_field)
    }

    /// The source's field holding the target's `_id`.
    pub fn by(&self) -> &'static str {
        self.parts.by
    }

    /// The index on the source's `by` field, named as MongoDB names it by default (`userId_1`),
    /// so that the same index declared elsewhere counts once.
    pub fn index(&'static self) -> &'static IndexSpec {
        self.index
            .get_or_init(|| IndexSpec::ascending_leaked(self.parts.by))
    }
}

impl PatternSpec for ComputedFromSpec {
    fn indexes(&'static self, _model: &'static ModelSchema) -> IndexesNeeded {
        vec![(self.source().collection(), self.index())]
    }

    /// The computed field: written by the source's writes through its model handle.
    fn kept_fields(&'static self, _model: &'static ModelSchema) -> KeptFields {
        vec![(
            self.field(),
            "a computed field follows its sources: write the sources through their model \
             handle (`Source::collection(&db)`), or repair it with `rebuild`",
        )]
    }

    /// The fields of `model` computed from the same source through the same `by` as this one,
    /// listed once (by the first of them): one update of a target per source change.
    fn dependents(&'static self, model: &'static ModelSchema) -> Vec<Box<dyn Dependent>> {
        Feed::group(model, model.specs::<ComputedFromSpec>())
            .into_iter()
            .filter(|f| f.specs.first().is_some_and(|s| std::ptr::eq(*s, self)))
            .map(|f| Box::new(f) as Box<dyn Dependent>)
            .collect()
    }

    /// The sampled documents whose value disagrees with their sources: one aggregation of the
    /// source collection, as `check` runs it over every page.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(super::check::audit_computed(self, sample)))
    }
}

//! What generated code reaches for. Not a public API: it changes without notice.

pub use crate::approximation::{
    ApproximateParts, ApproximateSpec, Approximation, BatchedCounter, CounterField, SampledCounter,
    ShardedFields,
};
pub use crate::attribute::{
    AttributeField, AttributeItem, AttributeKey, AttributeParts, AttributeSpec, Attributes,
};
pub use crate::bounded::{BoundParts, BoundSpec};
pub use crate::bucket::{
    Granularity, KeepsMeasurements, Measurement, SeriesParts, SeriesSpec, Storage, SummarySpec,
};
pub use crate::checks::{
    contains_str, passes, str_eq, unless, CheckProbe, ModelProbe, ProbeBool, ProbeFloat,
    ProbeInteger, ProbeNumeric, ProbeOptional, ProbeOther as ProbeOtherCheck, ProbeUnversioned,
    ProbeVersioned,
};
pub use crate::computed::{
    Aggregate, ComputedFields, ComputedFromParts, ComputedFromSpec, HasComputedFields,
};
pub use crate::error::Error;
pub use crate::extended_ref::slot::{
    items_beside_path, items_without_mode, mode_error, no_mode_error, propagate_error,
    slot as ref_slot, when_held, HeldRef, HeldRefs, ProbeHeld, ProbeItems, ProbeNested, ProbeOther,
    ProbeSnapshotOnly, ProbeSyncable, Propagatable, RefProbe,
};
pub use crate::extended_ref::{
    Copied, Embedding, EmbeddingParts, ExtendedRef, HasCopies, RefParts, RefSpec, References, Slot,
};
pub use crate::index::{
    Collation, IndexKey, IndexKind, IndexParts, IndexSpec, Literal, PartialClause, PartialOp,
};
pub use crate::model::writes::{Plain, Revised};
pub use crate::model::{IntoId, Model, Unversioned};
pub use crate::outlier::{Outlier, OutlierField, OutlierParts, OutlierSpec};
pub use crate::polymorphic::{
    unreadable_variant, Polymorphic, PolymorphicSpec, Projection, Variant, VariantCollection,
};
pub use crate::preallocation::slot_probe::{
    bits_of, ProbeBits32, ProbeBits64, ProbeOtherSlot, ProbeSlotKey, SlotProbe,
};
pub use crate::preallocation::{Preallocated, SlotParts, SlotSpec, Slots};
pub use crate::relation::id_probe::{
    IdProbe, ProbeId, ProbeOptionalId, ProbeOptionalRefTo, ProbeOtherId, ProbeRefTo,
};
pub use crate::relation::{
    inverse_error, Identified, RefField, Reference, Relation, RelationField, RelationKind,
    RelationParts, RelationSide, RelationSpec, Relations, TwoWay,
};
pub use crate::schema::shape::{
    object_shape, property, tagged_shape, HasShape, NoShape, ShapeProbe,
};
pub use crate::schema::shape::{BsonShape, Shape};
pub use crate::schema::{
    Annotation, FieldName, FieldParts, FieldSchema, Fields, Mode, ModelSchema, Nests, PatternSpec,
    Registration, SchemaParts,
};
pub use crate::schema_version::{
    read_shape, undeclared, upgrade_step, upgraded, SchemaVersion, SchemaVersionParts,
    SchemaVersionSpec, SchemaVersioned, UpgradeFailure,
};
pub use crate::shard::{ShardKey, ShardKeyParts};
pub use crate::subset::{
    ProbeNoRebuild, ProbeRebuild, RebuildProbe, Subset, SubsetField, SubsetParts, SubsetSpec,
    Summary, SummaryKind,
};
pub use crate::tree::key_probe::{KeyProbe, ProbeKey, ProbeKeys, ProbeOptionalKey, ProbeOtherKey};
pub use crate::tree::{
    HolderParts, HolderSpec, InTree, NodeCopy, RenamableTree, Tree, TreeNode, TreeParts, TreeSpec,
};
pub use crate::typed::{kept, order, Direct, Free, Handled};
pub use crate::versioning::{VersionParts, VersionSpec, Versioned};
pub use bson;
pub use bson::Bson;
pub use inventory;
pub use mongodb::Database;
pub use serde;

/// An integer that can be a document's version.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a version: use i64, i32 or u32",
    label = "not an integer version"
)]
pub trait VersionInt: Sized {
    /// As i64.
    fn to_i64(&self) -> i64;
    /// From i64, saturating.
    fn from_i64(v: i64) -> Self;
}
impl VersionInt for i64 {
    fn to_i64(&self) -> i64 {
        *self
    }
    fn from_i64(v: i64) -> Self {
        v
    }
}
impl VersionInt for i32 {
    fn to_i64(&self) -> i64 {
        i64::from(*self)
    }
    fn from_i64(v: i64) -> Self {
        i32::try_from(v).unwrap_or(i32::MAX)
    }
}
impl VersionInt for u32 {
    fn to_i64(&self) -> i64 {
        i64::from(*self)
    }
    fn from_i64(v: i64) -> Self {
        u32::try_from(v).unwrap_or(u32::MAX)
    }
}
/// The BSON name of a version field (a compile error at the field when it is no integer).
pub const fn version_name<T: VersionInt, K, M, const I: usize>(
    field: FieldName<T, K, M, I>,
) -> &'static str {
    field.as_str()
}

/// Compile-time check: `T` is a model.
pub fn assert_model<T: Model>() {}

/// The BSON name of a path step.
pub const fn step<T: ?Sized, K, M, const I: usize>(field: FieldName<T, K, M, I>) -> &'static str {
    field.as_str()
}
/// The length of the concatenation of `parts`.
pub const fn concat_len(parts: &[&str]) -> usize {
    let mut len = 0;
    let mut i = 0;
    while i < parts.len() {
        len += parts[i].len();
        i += 1;
    }
    len
}
/// The concatenation of `parts`, `N` bytes long (`N` = [`concat_len`]).
pub const fn concat_bytes<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            out[at] = bytes[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out
}
/// `bytes` (a concatenation of `&str`s) as a `&str`.
pub const fn utf8(bytes: &'static [u8]) -> &'static str {
    match ::core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("a concatenation of strings is UTF-8"),
    }
}

/// An index's keys a sort can follow from its start: `(path, direction)`s.
pub type Order = Vec<(&'static str, i32)>;

/// The orders a typed keyset page of `model` may follow: as the derive compiled them, and as
/// the indexes of its collection give them at run time. A test compares the two for every
/// registered model: a pattern whose index the derive does not list would otherwise refuse a
/// page the index serves.
pub fn keyset_orders(model: &'static ModelSchema) -> (Vec<Order>, Vec<Order>) {
    let compiled = model.orders().iter().map(|o| o.to_vec()).collect();
    (compiled, crate::model::keyset::orders(model))
}

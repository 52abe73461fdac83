//! Who writes a field (its kind) and how a dotted path steps into a nested struct: the
//! type-level facts of a typed field name ([`FieldName`](super::FieldName)'s `K`), which the typed forms of
//! [`query`](crate::typed) check.

use std::fmt;
use std::marker::PhantomData;

use super::Free;

/// Who writes a field: [`Free`] (the model's own writes) or one of the [`kept`] kinds.
pub trait FieldKind {
    /// The kind of a field below a field of this kind: a path below a kept field is kept.
    #[doc(hidden)]
    type Then<Inner>;
}

impl FieldKind for Free {
    type Then<Inner> = Inner;
}

/// The kinds of the fields a pattern keeps. A typed [`Update`](crate::typed::Update) has no setter for
/// them (`Settable` is not implemented); filters and sorts name them freely, except
/// [`Custom`](kept::Custom) fields, which take no typed value.
pub mod kept {
    macro_rules! kinds {
        ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $name;
            impl super::FieldKind for $name {
                type Then<Inner> = $name;
            }
        )*};
    }
    kinds! {
        /// `_id`: written once, by `insert`.
        IdField,
        /// A `#[computed(..)]` value: kept by the toolkit from the other model's documents it is
        /// computed from (write those documents).
        ComputedValue,
        /// A `#[summary(..)]` value: a subset's count, sum or average of its full items, kept by
        /// the subset's handle (`push`, `remove`).
        SummaryValue,
        /// An `#[extended_ref(..)]` copy: kept from its source document (write the source).
        ExtendedRefCopy,
        /// A tree's parent, ancestors or path (`#[tree]`), or a holder's place in a tree
        /// (`#[in_tree]`): written by the tree's handle (`move_under`, `place`).
        TreeLink,
        /// A `#[versioned]` model's version: written by each versioned write.
        VersionField,
        /// A `#[subset(..)]` array: written by the subset's handle (`push`, `remove`).
        SubsetArray,
        /// An `#[outlier(..)]` array or count: written by the outlier's handle (`push`).
        OutlierArray,
        /// A `SchemaVersion<N>` field: written with each document in the current shape.
        SchemaVersionField,
        /// A side of a two-way `#[relation]`: written by the relation's handle (`assign`).
        TwoWaySide,
        /// An `#[attribute]` array: written by its handle (`set`, `unset`), one item per key.
        AttributeItems,
        /// A `#[preallocated]` slot's holder or bitmap: written by the grid's handle (`book`,
        /// `cancel`).
        SlotBooking,
        /// A field below an array's items (`items.qty`, through a `Vec`): a filter matches a
        /// document when any item matches; an update cannot name one item this way.
        ArrayItems,
        /// A field with `#[serde(with = ..)]` or `serialize_with`: its stored form is its
        /// serializer's, so no typed value is taken for it (filter it with a `doc!`).
        Custom,
    }
}

/// The kind of a field that leads to its pattern's handle (a `#[subset]`, `#[outlier]`,
/// `#[attribute]`, `#[approximate]` or `#[relation]` field): `K`, who writes it, and `FIELD`, the
/// field's place in its model, which tells the model handle which of the model's handles it
/// names (`products.subset(Product::FIELDS.recent_reviews)`). It behaves as `K` in every typed
/// form.
pub struct Handled<K, const FIELD: usize>(PhantomData<fn() -> K>);

impl<K, const FIELD: usize> fmt::Debug for Handled<K, FIELD> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handled<{}, {FIELD}>", std::any::type_name::<K>())
    }
}

impl<K: FieldKind, const FIELD: usize> FieldKind for Handled<K, FIELD> {
    type Then<Inner> = K::Then<Inner>;
}
impl<K: Settable, const FIELD: usize> Settable for Handled<K, FIELD> {}
impl<K: Comparable, const FIELD: usize> Comparable for Handled<K, FIELD> {}

/// The kinds whose fields a typed [`Update`](crate::typed::Update) may write: [`Free`] only.
#[diagnostic::on_unimplemented(
    message = "this field is kept by a pattern (`{Self}`): a typed update has no setter for it",
    label = "kept: written by its pattern, not by an update",
    note = "write it through the pattern's handle (the docs of `{Self}` name it), or update the data it is kept from"
)]
pub trait Settable: FieldKind {}
impl Settable for Free {}

/// The kinds whose fields take a typed value in a filter: every kind but
/// [`kept::Custom`].
#[diagnostic::on_unimplemented(
    message = "this field has a custom serializer (`serde(with)`): a typed value would not be stored as the field is",
    label = "serialized by `serde(with)` or `serialize_with`",
    note = "filter this field with a `bson::doc!` in the form its serializer stores"
)]
pub trait Comparable: FieldKind {}
impl Comparable for Free {}
macro_rules! comparable {
    ($($k:ident),*) => { $(impl Comparable for kept::$k {})* };
}
comparable!(
    IdField,
    ComputedValue,
    SummaryValue,
    ExtendedRefCopy,
    TreeLink,
    VersionField,
    SubsetArray,
    OutlierArray,
    SchemaVersionField,
    TwoWaySide,
    AttributeItems,
    SlotBooking,
    ArrayItems
);

/// How a path steps into a nested struct: [`Direct`], or [`Array`] through an array's items.
pub trait Step {
    /// The kind of the nested field reached this way.
    #[doc(hidden)]
    type Kind<K>;
}
/// A step into a struct field (possibly inside `Option` or `Box`).
#[derive(Debug)]
pub enum Direct {}
/// A step into the items of a `Vec` or an array.
#[derive(Debug)]
pub enum Array {}
impl Step for Direct {
    type Kind<K> = K;
}
impl Step for Array {
    type Kind<K> = kept::ArrayItems;
}

/// The kind of a nested field `K2` reached from a field of kind `K` through step `S`.
pub type Then<K, S, K2> = <K as FieldKind>::Then<<S as Step>::Kind<K2>>;

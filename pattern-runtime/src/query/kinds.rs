//! The type-level facts the typed forms check: who writes a field (its kind), what its type
//! allows (a number, a `Vec`, an `Option`, a date), and paths through nested structs.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use crate::schema::{FieldName, Free};

/// Who writes a field: [`Free`] (the model's own writes) or one of the [`kept`] kinds.
pub trait FieldKind {
    /// The kind of a field below a field of this kind: a path below a kept field is kept.
    #[doc(hidden)]
    type Then<Inner>;
}

impl FieldKind for Free {
    type Then<Inner> = Inner;
}

/// The kinds of the fields a pattern keeps. A typed [`Update`](super::Update) has no setter for
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
        /// A `#[computed(..)]` value: kept by the toolkit from the items it is computed from.
        ComputedValue,
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

/// The kinds whose fields a typed [`Update`](super::Update) may write: [`Free`] only.
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

/// A field or a dotted path to one: what the typed forms name. Sealed: a [`FieldName`] or a
/// [`Path`], so that a sort's keys ([`order`](super::order)) are the model's own.
pub trait FieldPath: sealed::Sealed {
    /// The Rust type of the value stored there.
    type Value: ?Sized;
    /// Who writes it.
    type Kind;
    /// The model whose field it is: what a [`Filter`](super::Filter),
    /// [`Sort`](super::Sort) or [`Update`](super::Update) naming it is of.
    type Model;
    /// Which of the model's fields it is, for a typed sort's keys:
    /// [`Field<I>`](super::order::Field) for a field of the model,
    /// [`Nested`](super::order::Nested) for a dotted path.
    #[doc(hidden)]
    type Tag;
    /// The path, as the server reads it.
    fn path(&self) -> Cow<'static, str>;
}

mod sealed {
    pub trait Sealed {}
    impl<T: ?Sized, K, M, const I: usize> Sealed for crate::FieldName<T, K, M, I> {}
    impl<T: ?Sized, K, M> Sealed for super::Path<T, K, M> {}
}

impl<T: ?Sized, K, M, const I: usize> FieldPath for FieldName<T, K, M, I> {
    type Value = T;
    type Kind = K;
    type Model = M;
    type Tag = super::order::Field<I>;
    fn path(&self) -> Cow<'static, str> {
        Cow::Borrowed(self.as_str())
    }
}

/// A dotted path to a nested field, typed as that field: from [`FieldName::then`].
pub struct Path<T: ?Sized, K, M>(String, crate::schema::Typed<T, K, M>);

impl<T: ?Sized, K, M> Path<T, K, M> {
    pub(crate) fn new(path: String) -> Self {
        Path(path, PhantomData)
    }

    /// The dotted path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// One more step down: `FIELDS.order.then(|o| o.shipping).then(|s| s.city)`.
    pub fn then<U: ?Sized, K2, N, const J: usize>(
        self,
        step: impl FnOnce(<T::Inner as crate::Fields>::Names) -> FieldName<U, K2, N, J>,
    ) -> Path<U, Then<K, T::Step, K2>, M>
    where
        T: crate::Nests,
        K: FieldKind,
    {
        let inner = step(<T::Inner as crate::Fields>::FIELDS);
        Path::new(format!("{}.{}", self.0, inner.as_str()))
    }
}

impl<T: ?Sized, K, M> FieldPath for Path<T, K, M> {
    type Value = T;
    type Kind = K;
    type Model = M;
    type Tag = super::order::Nested;
    fn path(&self) -> Cow<'static, str> {
        Cow::Owned(self.0.clone())
    }
}

impl<T: ?Sized, K, M> Clone for Path<T, K, M> {
    fn clone(&self) -> Self {
        Path::new(self.0.clone())
    }
}

impl<T: ?Sized, K, M> fmt::Debug for Path<T, K, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Path").field(&self.0).finish()
    }
}

impl<T: ?Sized, K, M> fmt::Display for Path<T, K, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A number field (or an `Option` of one): what `$inc`, `$mul`, `$min` and `$max` take.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number: `$inc`, `$mul`, `$min` and `$max` need a number field",
    label = "not a number field",
    note = "use `set` to replace the value"
)]
pub trait Number {
    /// The number type a change is given in.
    type Num: serde::Serialize;
}
macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Number for $t { type Num = $t; }
        impl Number for Option<$t> { type Num = $t; }
    )*};
}
numbers!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    bson::Decimal128
);

/// A `Vec` field (or an `Option` of one): what `$push`, `$addToSet`, `$pullAll`, `$all`,
/// `$size` and `$elemMatch` take.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Vec`: this operation works on an array field",
    label = "not a `Vec` field",
    note = "use `set` (an update) or `eq` (a filter) for a single value"
)]
pub trait Items {
    /// The item type.
    type Item: serde::Serialize;
}
impl<I: serde::Serialize> Items for Vec<I> {
    type Item = I;
}
impl<I: serde::Serialize> Items for Option<Vec<I>> {
    type Item = I;
}

/// An `Option` field: what `$unset` takes (a required field cannot be removed and still read).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an `Option`: after `$unset` the document would no longer read as the model",
    label = "a required field",
    note = "make the field an `Option` to remove it, or `set` it to another value"
)]
pub trait Optional {}
impl<T> Optional for Option<T> {}

/// A date field (`bson::DateTime`, or an `Option` of one): what `$currentDate` takes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `bson::DateTime`: `$currentDate` stores a date",
    label = "not a date field"
)]
pub trait When {}
impl When for bson::DateTime {}
impl When for Option<bson::DateTime> {}

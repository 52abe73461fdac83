//! The type-level facts the typed forms check: who writes a field (its kind), what its type
//! allows (a number, a `Vec`, an `Option`, a date), and paths through nested structs.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use crate::schema::kinds::{FieldKind, Then};
use crate::schema::{FieldName, Fields, Nests};

// A typed path is built here, from a field name of the schema: the schema knows nothing of paths.
impl<T: ?Sized, K, M, const I: usize> FieldName<T, K, M, I> {
    /// A typed dotted path to a field of the struct this field holds, for typed
    /// [filters](crate::typed::Filter), [sorts](crate::typed::Sort) and
    /// [updates](crate::typed::Update): `Product::FIELDS.dimensions.then(|d| d.weight_grams)`
    /// is `"dimensions.weightGrams"`, typed as the nested field. A misspelt step is a compile
    /// error naming the nested struct's fields.
    ///
    /// A path through a `Vec` (or an array) reaches the field in every item: a filter matches a
    /// document when any item matches, and an update cannot write it (its kind is
    /// [`kept::ArrayItems`](crate::typed::kept::ArrayItems)).
    pub fn then<U: ?Sized, K2, N, const J: usize>(
        self,
        step: impl FnOnce(<T::Inner as Fields>::Names) -> FieldName<U, K2, N, J>,
    ) -> Path<U, Then<K, T::Step, K2>, M>
    where
        T: Nests,
        K: FieldKind,
    {
        Path::<T, K, M>::new(String::from(&*self)).then(step)
    }
}

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
    impl<T: ?Sized, K, M, const I: usize> Sealed for crate::schema::FieldName<T, K, M, I> {}
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
        step: impl FnOnce(<T::Inner as crate::schema::Fields>::Names) -> FieldName<U, K2, N, J>,
    ) -> Path<U, Then<K, T::Step, K2>, M>
    where
        T: crate::schema::Nests,
        K: FieldKind,
    {
        let inner = step(<T::Inner as crate::schema::Fields>::FIELDS);
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

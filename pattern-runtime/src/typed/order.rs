//! The keys of a typed [`Sort`](super::Sort), in its type: what lets a keyset page
//! ([`Find::after`](crate::query::Find::after)) over a sort no index serves be a compile error.
//!
//! A sort's keys are a list of [`Asc`] and [`Desc`] of [`Field`] (a field of the model, by its
//! place) or [`Nested`] (a dotted path), last key first: `Sort::desc(f.created_at)
//! .then_asc(f.id)` has the keys `(Asc<Field<0>>, (Desc<Field<3>>, ()))`. `#[derive(Model)]`
//! implements [`ServedBy`] for each list an index of the model serves; a list with a dotted
//! path, or a sort given as a `bson::Document` ([`Unchecked`]), is checked at run time instead.

/// A field of the model, by its place in it.
#[derive(Debug)]
pub enum Field<const I: usize> {}

/// A dotted path: which index serves it is checked at run time.
#[derive(Debug)]
pub enum Nested {}

/// An ascending key.
#[derive(Debug)]
pub struct Asc<T>(std::marker::PhantomData<fn() -> T>);

/// A descending key.
#[derive(Debug)]
pub struct Desc<T>(std::marker::PhantomData<fn() -> T>);

/// The keys of a sort given as a `bson::Document`: checked at run time.
#[derive(Debug)]
pub enum Unchecked {}

/// The keys of a find without a sort.
#[derive(Debug)]
pub enum NoSort {}

/// Every key of the list is a field of the model: whether an index serves it is known at
/// compile time.
#[derive(Debug)]
pub enum Known {}

/// Some key is a dotted path, or the sort is a document: checked at run time.
#[derive(Debug)]
pub enum Unknown {}

/// Whether the keys of a sort are all known at compile time ([`Known`]) or not ([`Unknown`]).
pub trait SortKeys {
    /// [`Known`] or [`Unknown`].
    type Known;
}

/// One key's tag: [`Field`] is known, [`Nested`] is not.
pub trait Tag {
    /// [`Known`] or [`Unknown`].
    type Known;
}
impl<const I: usize> Tag for Field<I> {
    type Known = Known;
}
impl Tag for Nested {
    type Known = Unknown;
}

/// Both known.
pub trait And<B> {
    /// [`Known`] when both are.
    type Out;
}
impl And<Known> for Known {
    type Out = Known;
}
impl And<Unknown> for Known {
    type Out = Unknown;
}
impl<B> And<B> for Unknown {
    type Out = Unknown;
}

impl SortKeys for () {
    type Known = Known;
}
impl<T: Tag, R: SortKeys> SortKeys for (Asc<T>, R)
where
    T::Known: And<R::Known>,
{
    type Known = <T::Known as And<R::Known>>::Out;
}
impl<T: Tag, R: SortKeys> SortKeys for (Desc<T>, R)
where
    T::Known: And<R::Known>,
{
    type Known = <T::Known as And<R::Known>>::Out;
}
impl SortKeys for Unchecked {
    type Known = Unknown;
}
impl SortKeys for NoSort {
    type Known = Known;
}

/// `(Known, keys)`: an index of `M` serves a sort of these keys, ending with `_id`, so that a
/// keyset page can follow it. Implemented by `#[derive(Model)]` for each such list, and for
/// every `(Unknown, keys)`, which [`Find::after`](crate::query::Find::after) checks at run time.
#[diagnostic::on_unimplemented(
    message = "`after` needs a sort ending with `_id` whose other keys an index of `{M}` serves",
    label = "a keyset page after a document, in this find's order",
    note = "sort the find (`.sort(..)`), end the sort with `_id` (`.then_desc(f.id)`), and sort by fields an index of `{M}` has first, in its order and directions or all reversed (`#[index(-1)]` on a `created_at` serves `Sort::desc(f.created_at).then_desc(f.id)`); an index that is sparse, hidden, partial or collated, or on an array field, does not serve it. A sort given as a `bson::Document` is checked at run time"
)]
pub trait ServedBy<M> {}

#[diagnostic::do_not_recommend]
impl<M, S> ServedBy<M> for (Unknown, S) {}

/// What [`Find::after`](crate::query::Find::after) asks of a find's sort keys `S`.
pub trait Keyset<M> {}
impl<M, S: SortKeys> Keyset<M> for S where (S::Known, S): ServedBy<M> {}

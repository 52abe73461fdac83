//! Typed field names: [`Fields`] (`T::FIELDS`), each name a [`FieldName`] that knows the type
//! it names, and [`Nests`], through which the names of a nested struct are reached.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

/// A struct with typed field names, `T::FIELDS`: every `#[derive(Model)]`, and
/// `#[derive(Fields)]` for the structs nested in models (the items of an array holding extended
/// references, for instance).
///
/// `#[derive(Fields)]` also tells the models holding the struct which of its fields hold
/// [extended references](crate::extended_ref): a model field holding such items needs a mode
/// (`#[extended_ref(propagate, path = product)] items: Vec<OrderItem>`), or it is a compile
/// error. The mode goes on that model field, never on the item's own field.
///
/// ```
/// use pattern_runtime::Fields;
///
/// #[derive(serde::Serialize, serde::Deserialize, Fields)]
/// #[serde(rename_all = "camelCase")]
/// struct OrderItem {
///     quantity: u32,
///     price_at_order: f64,
/// }
///
/// assert_eq!(OrderItem::FIELDS.price_at_order, "priceAtOrder");
/// assert_eq!(<OrderItem as Fields>::FIELDS.quantity, "quantity");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no typed field names",
    label = "no `FIELDS`",
    note = "add `#[derive(Fields)]` (or `#[derive(Model)]`) to `{Self}`"
)]
pub trait Fields {
    /// The struct of [`FieldName`]s, one per serialized field.
    type Names: Copy + 'static;
    /// The serialized (BSON) name of every stored field.
    const FIELDS: Self::Names;
    /// The same names as a list, in declaration order: what a projection onto this type asks
    /// the server for.
    const KEYS: &'static [&'static str];
    /// The names of the fields that are `#[approximate]` counters: fields no other pattern may
    /// derive data from (their events are written without reading the document).
    #[doc(hidden)]
    const APPROXIMATE: &'static [&'static str] = &[];
}

/// The serialized name of a model field, from `Model::FIELDS`: use it to build filters and
/// updates without spelling BSON keys by hand. `T` is the field's Rust type, which lets other
/// derives check at compile time what they do with the field.
///
/// ```
/// use pattern_runtime::Model;
///
/// #[derive(serde::Serialize, serde::Deserialize, Model)]
/// #[serde(rename_all = "camelCase")]
/// struct Product {
///     #[serde(rename = "_id")]
///     id: String,
///     rating_count: i64,
/// }
///
/// let filter = bson::doc! { Product::FIELDS.rating_count: { "$gt": 10 } };
/// assert_eq!(filter, bson::doc! { "ratingCount": { "$gt": 10 } });
/// assert_eq!(Product::FIELDS.id, "_id");
/// ```
///
/// `K` says who writes the field: [`Free`](crate::typed::Free) for a field the model's own
/// writes set, or one of [`query::kept`](crate::typed::kept) for a field a pattern keeps (a
/// computed value, a copy, a tree's ancestors, the version, `_id`, ...): a typed
/// [`Update`](crate::typed::Update) has no setter for those.
///
/// `M` is the model whose names these are (the struct itself for a `#[derive(Fields)]` struct,
/// the enum for a polymorphic model's common fields): a typed
/// [`Filter`](crate::typed::Filter), [`Sort`](crate::typed::Sort) or
/// [`Update`](crate::typed::Update) built from them is of that model, and another model's
/// handle does not take it. `I` tells the field apart from the model's others (its place in
/// the model): a typed [`Sort`](crate::typed::Sort) knows its keys, so that a keyset page
/// ([`Find::after`](crate::query::Find::after)) over a sort no index serves is a compile error.
pub struct FieldName<T: ?Sized, K, M, const I: usize>(&'static str, Typed<T, K, M>);

/// The marker of a name typed by a value type `T`, a kind `K` and a model `M` (covariant,
/// `Send`, `Sync`).
pub(crate) type Typed<T, K, M> = PhantomData<(fn() -> K, fn() -> T, fn() -> M)>;

/// The kind of a field the model's own writes set: a typed [`Update`](crate::typed::Update) may
/// write it. The fields a pattern keeps have a kind of [`query::kept`](crate::typed::kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Free;

impl<T: ?Sized, K, M, const I: usize> FieldName<T, K, M, I> {
    #[doc(hidden)]
    pub const fn new(name: &'static str) -> Self {
        FieldName(name, PhantomData)
    }

    /// The BSON key.
    pub const fn as_str(&self) -> &'static str {
        self.0
    }

    /// A dotted path below this field: `Order::FIELDS.customer.path("name")` is `"customer.name"`.
    pub fn path(&self, rest: &str) -> String {
        format!("{}.{rest}", self.0)
    }

    /// The typed field names of the struct this field holds (see [`Nests`]): one step of a
    /// dotted path. `FieldName::nested(Product::FIELDS.dimensions).weight_grams` is the
    /// nested field's name, as serde writes it within `Dimensions`.
    pub const fn nested(self) -> <T::Inner as Fields>::Names
    where
        T: Nests,
    {
        <T::Inner as Fields>::FIELDS
    }
}

/// A field type whose stored value is a struct with typed field names, possibly inside
/// `Option`, `Vec`, `Box` or an array: what a dotted path in an attribute
/// (`#[index(keys(dimensions.weight_grams = 1))]`) goes through, so each segment becomes the name
/// serde writes.
///
/// `#[derive(Fields)]` and `#[derive(Model)]` implement it for the struct. Implement it for a
/// wrapper of your own (an `Arc<T>` newtype, say) with `type Inner = T::Inner;` and
/// `type Step = T::Step;`.
#[diagnostic::on_unimplemented(
    message = "a path below this field cannot be resolved through serde's names: `{Self}` holds no struct with typed field names",
    label = "the path goes through this field",
    note = "add `#[derive(Fields)]` to the nested struct (paths are Rust field names, resolved to the names serde writes); a path below a `bson::Document` or a map field is kept as written"
)]
pub trait Nests {
    /// The struct the path continues in.
    type Inner: Fields;
    /// [`Direct`](super::kinds::Direct), or [`Array`](super::kinds::Array) when the path goes
    /// through the items of an array (an update cannot write such a path).
    #[doc(hidden)]
    type Step: super::kinds::Step;
}
#[diagnostic::do_not_recommend]
impl<T: Nests> Nests for Option<T> {
    type Inner = T::Inner;
    type Step = T::Step;
}
#[diagnostic::do_not_recommend]
impl<T: Nests> Nests for Vec<T> {
    type Inner = T::Inner;
    type Step = super::kinds::Array;
}
#[diagnostic::do_not_recommend]
impl<T: Nests> Nests for Box<T> {
    type Inner = T::Inner;
    type Step = T::Step;
}
#[diagnostic::do_not_recommend]
impl<T: Nests, const N: usize> Nests for [T; N] {
    type Inner = T::Inner;
    type Step = super::kinds::Array;
}

// By hand: derives would demand `T: Clone`, `T: Debug`, ... of the field's type.
impl<T: ?Sized, K, M, const I: usize> Clone for FieldName<T, K, M, I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized, K, M, const I: usize> Copy for FieldName<T, K, M, I> {}

impl<T: ?Sized, K, M, const I: usize> fmt::Debug for FieldName<T, K, M, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldName").field(&self.0).finish()
    }
}

impl<T: ?Sized, K, M, const I: usize> Deref for FieldName<T, K, M, I> {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl<T: ?Sized, K, M, const I: usize> AsRef<str> for FieldName<T, K, M, I> {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl<T: ?Sized, K, M, const I: usize> fmt::Display for FieldName<T, K, M, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl<T: ?Sized, K, M, const I: usize> From<FieldName<T, K, M, I>> for String {
    fn from(name: FieldName<T, K, M, I>) -> String {
        name.0.to_owned()
    }
}

impl<T: ?Sized, K, M, const I: usize> From<FieldName<T, K, M, I>> for bson::Bson {
    fn from(name: FieldName<T, K, M, I>) -> bson::Bson {
        bson::Bson::String(name.0.to_owned())
    }
}

impl<T: ?Sized, K, M, const I: usize> PartialEq for FieldName<T, K, M, I> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<T: ?Sized, K, M, const I: usize> Eq for FieldName<T, K, M, I> {}

impl<T: ?Sized, K, M, const I: usize> PartialEq<str> for FieldName<T, K, M, I> {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl<T: ?Sized, K, M, const I: usize> PartialEq<&str> for FieldName<T, K, M, I> {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

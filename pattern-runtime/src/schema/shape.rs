//! What a Rust type is stored as: [`BsonShape`], implemented for the types whose BSON form is
//! known (numbers, strings, dates, ids, arrays, options, and every struct deriving `Model` or
//! `Fields`), and the [`Shape`] a `$jsonSchema` is made from.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use bson::{doc, Bson, Document};

/// The BSON shape a type serializes to, for the validator `#[derive(Model)]` generates.
///
/// Implemented for the standard and `bson` types whose stored form is known, for `Option`,
/// `Vec` and the other collections of a known type, and by `#[derive(Model)]` and
/// `#[derive(Fields)]` for the struct (an object with its fields). A field whose type has no
/// `BsonShape` is left out of the validator: any value is accepted there, and the field is not
/// required. Implement it for a type of yours (a newtype id, say) to have it checked:
///
/// ```
/// use pattern_runtime::validator::{BsonShape, Shape};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Sku(String);
///
/// impl BsonShape for Sku {
///     fn bson_shape() -> Shape {
///         Shape::of("string")
///     }
/// }
/// ```
pub trait BsonShape {
    /// The shape of a stored value of this type.
    fn bson_shape() -> Shape;
}

/// The stored form of a value: one or more BSON types, an array of items, an object of
/// properties, or anything.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// Any value: a type whose stored form is not known (it is not checked).
    Any,
    /// One of these BSON types, by their `$jsonSchema` alias (`"int"`, `"string"`, ...).
    Types(Vec<&'static str>),
    /// `null`, or the inner shape (an `Option`).
    Nullable(Box<Shape>),
    /// An array of items of one shape.
    Array(Box<Shape>),
    /// An array of at most `max` items of one shape (`maxItems`): a capped array a pattern
    /// keeps (a bucket's measurements, an overflow document's items).
    BoundedArray {
        /// The items' shape.
        items: Box<Shape>,
        /// The most items.
        max: u32,
    },
    /// An embedded document with these properties (a struct).
    Object(Vec<Property>),
    /// One of these values (`enum`).
    OneOf(Vec<Bson>),
    /// An integer of one of these BSON types within `min..=max` (`minimum`, `maximum`): the
    /// integer types narrower than 64 bits, and the unsigned ones.
    Integer {
        /// The BSON types (`"int"`, `"long"`).
        types: Vec<&'static str>,
        /// The smallest value.
        min: i64,
        /// The largest value (`None`: up to the BSON type's own).
        max: Option<i64>,
    },
    /// A document of one of several shapes told apart by a tag field (an enum model with
    /// `#[serde(tag = ..)]`): each tag value with its properties; `open` when other tag values
    /// are read too (a `#[serde(other)]` variant), any properties then.
    Tagged {
        /// The tag field's BSON name.
        tag: &'static str,
        /// Each variant's tag value and properties.
        variants: Vec<(&'static str, Vec<Property>)>,
        /// Whether other tag values are accepted.
        open: bool,
    },
}

/// One property of an object [`Shape`]: a field's BSON name, its shape, and whether every
/// stored document has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// The BSON name (borrowed from the derive's constants, or made at run time: a rollup's
    /// `speed_sum`).
    pub name: Cow<'static, str>,
    /// Its shape.
    pub shape: Shape,
    /// Whether the field is always stored (not an `Option`, no `skip_serializing_if`, its type's
    /// shape known).
    pub required: bool,
}

impl Property {
    /// A property: its BSON name, its shape, whether every stored document has it.
    pub fn new(name: impl Into<Cow<'static, str>>, shape: Shape, required: bool) -> Property {
        Property {
            name: name.into(),
            shape,
            required,
        }
    }
}

impl Shape {
    /// One BSON type, by its `$jsonSchema` alias (`"int"`, `"long"`, `"double"`, `"string"`,
    /// `"bool"`, `"date"`, `"objectId"`, `"object"`, `"array"`, `"binData"`, `"decimal"`, ...).
    pub fn of(alias: &'static str) -> Shape {
        Shape::Types(vec![alias])
    }

    /// `null` or this shape.
    pub fn nullable(self) -> Shape {
        match self {
            Shape::Any | Shape::Nullable(_) => self,
            inner => Shape::Nullable(Box::new(inner)),
        }
    }

    /// Whether a field of this shape may be `null` (or absent: a `None` may be skipped).
    pub fn is_nullable(&self) -> bool {
        matches!(self, Shape::Nullable(_))
    }

    /// Whether a value of this shape is an integer (or `null`): the server's arithmetic by a
    /// double would store a double the type cannot read back.
    pub(crate) fn is_integer(&self) -> bool {
        match self {
            Shape::Integer { .. } => true,
            Shape::Types(types) => {
                !types.is_empty() && types.iter().all(|t| matches!(*t, "int" | "long"))
            }
            Shape::Nullable(inner) => inner.is_integer(),
            _ => false,
        }
    }

    /// Whether this shape says anything about a value (not [`Shape::Any`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Shape::Any)
    }

    /// The `$jsonSchema` of this shape (without the `$jsonSchema` key), with `max_items` on an
    /// array at the top (`maxItems`) and `additional` for objects (`additionalProperties`).
    pub(crate) fn schema(&self, additional: bool) -> Document {
        match self {
            Shape::Any => Document::new(),
            Shape::Types(types) => match types.as_slice() {
                [one] => doc! { "bsonType": *one },
                many => doc! { "bsonType": many.to_vec() },
            },
            Shape::Nullable(inner) => {
                let mut inner = inner.schema(additional);
                match inner.get_mut("bsonType") {
                    Some(Bson::String(t)) => {
                        let t = std::mem::take(t);
                        inner.insert("bsonType", vec![t, "null".to_owned()]);
                        inner
                    }
                    Some(Bson::Array(types)) => {
                        types.push(Bson::from("null"));
                        inner
                    }
                    _ => doc! { "anyOf": [{ "bsonType": "null" }, inner] },
                }
            }
            Shape::Array(items) => {
                let items = items.schema(additional);
                if items.is_empty() {
                    doc! { "bsonType": "array" }
                } else {
                    doc! { "bsonType": "array", "items": items }
                }
            }
            Shape::BoundedArray { items, max } => {
                let mut schema = Shape::Array(items.clone()).schema(additional);
                schema.insert("maxItems", i64::from(*max));
                schema
            }
            Shape::Object(properties) => object_schema(properties, additional),
            Shape::OneOf(values) => doc! { "enum": values.clone() },
            Shape::Integer { types, min, max } => {
                let mut schema = Shape::Types(types.clone()).schema(additional);
                schema.insert("minimum", *min);
                if let Some(max) = max {
                    schema.insert("maximum", *max);
                }
                schema
            }
            Shape::Tagged {
                tag,
                variants,
                open,
            } => {
                let known: Vec<Bson> = variants.iter().map(|(v, _)| Bson::from(*v)).collect();
                let mut branches: Vec<Bson> = variants
                    .iter()
                    .map(|(value, properties)| {
                        let mut with_tag = vec![Property::new(
                            *tag,
                            Shape::OneOf(vec![Bson::from(*value)]),
                            true,
                        )];
                        with_tag.extend(properties.iter().filter(|p| p.name != *tag).cloned());
                        Bson::Document(object_schema(&with_tag, additional))
                    })
                    .collect();
                if *open {
                    branches.push(Bson::Document(doc! {
                        "bsonType": "object",
                        "required": [*tag],
                        "properties": { *tag: { "not": { "enum": known } } },
                    }));
                }
                doc! { "bsonType": "object", "required": [*tag], "oneOf": branches }
            }
        }
    }
}

/// A variant of an enum model, as generated code lists it: its tag value and its struct's
/// shape.
#[doc(hidden)]
pub type VariantShape = (&'static str, fn() -> Shape);

/// The [`Shape::Tagged`] of an enum model, as generated code lists its variants: each tag value
/// with its variant struct's shape.
#[doc(hidden)]
pub fn tagged_shape(tag: &'static str, variants: &[VariantShape], open: bool) -> Shape {
    Shape::Tagged {
        tag,
        variants: variants
            .iter()
            .map(|(value, shape)| {
                let properties = match shape() {
                    Shape::Object(properties) => properties,
                    _ => Vec::new(),
                };
                (*value, properties)
            })
            .collect(),
        open,
    }
}

/// `n` as the narrowest BSON integer that holds it: an `Int32` when it fits. The toolkit's
/// `$inc`s add it, so a field stored as an `Int32` (an `i32` count, which its validator keeps
/// an `"int"`) stays one, and an `Int64` field stays an `Int64`.
pub(crate) fn narrowest(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

/// `n` as the BSON integer `model`'s field `field` (its BSON name) is stored as, for a `$set`
/// or `$max`, which replace the stored type: an `Int32` (when it fits) for an integer type
/// narrower than 64 bits (`i32`, `u16`, ...), whose validator says `"int"`; an `Int64` for any
/// other (`i64`, or a field the model does not declare), as the `bson` serializer writes it.
pub(crate) fn integer_for(model: &crate::schema::ModelSchema, field: &str, n: i64) -> Bson {
    let narrow = declared_type(model, field)
        .is_some_and(|ty| matches!(ty.as_str(), "i32" | "i16" | "i8" | "u16" | "u8"));
    if narrow {
        narrowest(n)
    } else {
        Bson::Int64(n)
    }
}

/// The Rust type `model`'s field `field` (its BSON name) is declared with, without an
/// `Option<..>` around it or a path before it (`i32` for `Option<std::primitive::i32>`).
pub(crate) fn declared_type(model: &crate::schema::ModelSchema, field: &str) -> Option<String> {
    let ty = model
        .field_by_bson_name(field)?
        .rust_type()
        .replace(' ', "");
    let ty = ty
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(&ty);
    Some(ty.rsplit("::").next().unwrap_or(ty).to_owned())
}

/// The `$jsonSchema` of an object of `properties`.
pub(crate) fn object_schema(properties: &[Property], additional: bool) -> Document {
    let required: Vec<&str> = properties
        .iter()
        .filter(|p| p.required)
        .map(|p| &*p.name)
        .collect();
    let mut props = Document::new();
    for p in properties {
        props.insert(&*p.name, p.shape.schema(additional));
    }
    let mut schema = doc! { "bsonType": "object" };
    if !required.is_empty() {
        schema.insert("required", required);
    }
    schema.insert("properties", props);
    if !additional {
        schema.insert("additionalProperties", false);
    }
    schema
}

/// How deep structs nest in a validator: a type that contains itself (a comment's replies) is
/// an object without properties past this depth.
const MAX_SHAPE_DEPTH: u32 = 16;

thread_local! {
    static SHAPE_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A struct's object [`Shape`], its `properties` listed by generated code; past
/// [`MAX_SHAPE_DEPTH`] nested structs, an object without properties.
#[doc(hidden)]
pub fn object_shape(properties: fn() -> Vec<Property>) -> Shape {
    let depth = SHAPE_DEPTH.with(std::cell::Cell::get);
    if depth >= MAX_SHAPE_DEPTH {
        return Shape::of("object");
    }
    SHAPE_DEPTH.with(|d| d.set(depth + 1));
    let shape = Shape::Object(properties());
    SHAPE_DEPTH.with(|d| d.set(depth));
    shape
}

/// A field's [`Property`], as generated code lists them: its shape when its type has one
/// (`None`: left out of the validator), and whether serde may leave it out.
#[doc(hidden)]
pub fn property(name: &'static str, shape: Option<Shape>, omittable: bool) -> Property {
    let shape = shape.unwrap_or(Shape::Any);
    let required = shape.is_known() && !shape.is_nullable() && !omittable;
    Property::new(name, shape, required)
}

/// Whether a type has a [`BsonShape`], asked by generated code through autoref: `Some` of its
/// shape when it has one, `None` otherwise (the field is then left out of the validator).
#[doc(hidden)]
pub struct ShapeProbe<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> ShapeProbe<T> {
    #[doc(hidden)]
    pub const NEW: Self = ShapeProbe(std::marker::PhantomData);
}

/// The probe's answer for a type with a shape (found first, through one more reference).
#[doc(hidden)]
pub trait HasShape {
    fn shape_of(&self) -> Option<Shape>;
}

impl<T: BsonShape + ?Sized> HasShape for &ShapeProbe<T> {
    fn shape_of(&self) -> Option<Shape> {
        Some(T::bson_shape())
    }
}

/// The probe's answer for any other type.
#[doc(hidden)]
pub trait NoShape {
    fn shape_of(&self) -> Option<Shape>;
}

impl<T: ?Sized> NoShape for ShapeProbe<T> {
    fn shape_of(&self) -> Option<Shape> {
        None
    }
}

macro_rules! shapes {
    ($($aliases:tt: $($ty:ty),+;)*) => {
        $($(
            impl BsonShape for $ty {
                fn bson_shape() -> Shape {
                    Shape::Types(vec!$aliases)
                }
            }
        )+)*
    };
}

// The BSON types a value of the type is stored as and reads back from without loss. The
// `bson` serializer writes `i64`, `u32` and `u64` as `Int64`, but the server's own arithmetic
// (`$inc`, `$sum`) keeps a small integer an `Int32`, which reads back into them exactly; an
// `Int64` in an `i32` field may not fit, and is refused. A float reads back from any number.
shapes! {
    ["int"]: i32;
    ["long", "int"]: i64;
    ["double", "int", "long"]: f32, f64;
    ["string"]: String, str, char;
    ["bool"]: bool;
    ["date"]: bson::DateTime;
    ["objectId"]: bson::oid::ObjectId;
    ["binData"]: bson::Binary;
    ["decimal"]: bson::Decimal128;
    ["timestamp"]: bson::Timestamp;
    ["regex"]: bson::Regex;
    ["object"]: Document;
}

macro_rules! ranged {
    ($($ty:ty: $types:tt;)*) => {
        $(
            impl BsonShape for $ty {
                fn bson_shape() -> Shape {
                    // Whatever fits in an `i64` is exact; `u64`'s top is past every BSON integer.
                    let max = i64::try_from(<$ty>::MAX).ok();
                    Shape::Integer {
                        types: vec!$types,
                        min: i64::try_from(<$ty>::MIN).unwrap_or(0),
                        max,
                    }
                }
            }
        )*
    };
}

// The narrower and the unsigned integers: their range, since a wider stored value would not
// read back.
ranged! {
    i8: ["int"];
    i16: ["int"];
    u8: ["int"];
    u16: ["int"];
    u32: ["long", "int"];
    u64: ["long", "int"];
}

impl BsonShape for Bson {
    fn bson_shape() -> Shape {
        Shape::Any
    }
}

impl<T: BsonShape> BsonShape for Option<T> {
    fn bson_shape() -> Shape {
        T::bson_shape().nullable()
    }
}

impl<T: BsonShape + ?Sized> BsonShape for Box<T> {
    fn bson_shape() -> Shape {
        T::bson_shape()
    }
}

impl<T: BsonShape + ?Sized> BsonShape for std::sync::Arc<T> {
    fn bson_shape() -> Shape {
        T::bson_shape()
    }
}

impl<T: BsonShape + ?Sized> BsonShape for &T {
    fn bson_shape() -> Shape {
        T::bson_shape()
    }
}

macro_rules! arrays {
    ($($ty:ident),*) => {
        $(
            impl<T: BsonShape> BsonShape for $ty<T> {
                fn bson_shape() -> Shape {
                    Shape::Array(Box::new(T::bson_shape()))
                }
            }
        )*
    };
}

arrays!(Vec, VecDeque, BTreeSet, HashSet);

impl<T: BsonShape> BsonShape for [T] {
    fn bson_shape() -> Shape {
        Shape::Array(Box::new(T::bson_shape()))
    }
}

impl<T: BsonShape, const N: usize> BsonShape for [T; N] {
    fn bson_shape() -> Shape {
        Shape::Array(Box::new(T::bson_shape()))
    }
}

impl<K, V, S> BsonShape for HashMap<K, V, S> {
    fn bson_shape() -> Shape {
        Shape::of("object")
    }
}

impl<K, V> BsonShape for BTreeMap<K, V> {
    fn bson_shape() -> Shape {
        Shape::of("object")
    }
}

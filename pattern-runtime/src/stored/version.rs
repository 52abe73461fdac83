//! The schema-versioning pattern's static data: the version field's type, the upgrade trait,
//! the spec generated code builds, and what a stored version is.

use std::fmt;

use bson::{Bson, Document};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::schema::spec;

/// The version field of a model whose current shape is version `N`: it always holds `N`.
///
/// Stored as an `Int32` under the field's serde name, written by every write of the model (the
/// toolkit's and the driver's alike, since it is part of the struct). Reading a document whose
/// field holds anything but `N` through serde alone fails; reading it through the toolkit
/// upgrades it first (see [`schema_version`](crate::schema_version)). A zero-sized value:
/// `SchemaVersion` (or `Default::default()`) in a struct literal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SchemaVersion<const N: u32>;

impl<const N: u32> SchemaVersion<N> {
    /// The version, `N`.
    pub const VERSION: u32 = N;
}

impl<const N: u32> fmt::Debug for SchemaVersion<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SchemaVersion<{N}>")
    }
}

impl<const N: u32> Serialize for SchemaVersion<N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match i32::try_from(N) {
            Ok(n) => serializer.serialize_i32(n),
            Err(_) => serializer.serialize_i64(i64::from(N)),
        }
    }
}

impl<'de, const N: u32> Deserialize<'de> for SchemaVersion<N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Exactly<const N: u32>;
        impl<const N: u32> Visitor<'_> for Exactly<N> {
            type Value = SchemaVersion<N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "schema version {N}")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                if v == i64::from(N) {
                    Ok(SchemaVersion)
                } else {
                    Err(E::invalid_value(de::Unexpected::Signed(v), &self))
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                if v == u64::from(N) {
                    Ok(SchemaVersion)
                } else {
                    Err(E::invalid_value(de::Unexpected::Unsigned(v), &self))
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v == f64::from(N) {
                    Ok(SchemaVersion)
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(v), &self))
                }
            }
        }
        deserializer.deserialize_any(Exactly::<N>)
    }
}

/// Only the current version: the validator describes the current shape, and a document of
/// that shape labelled with an older version would not read.
impl<const N: u32> crate::schema::shape::BsonShape for SchemaVersion<N> {
    fn bson_shape() -> crate::schema::shape::Shape {
        let n = match i32::try_from(N) {
            Ok(n) => Bson::Int32(n),
            Err(_) => Bson::Int64(i64::from(N)),
        };
        crate::schema::shape::Shape::OneOf(vec![n])
    }
}

/// How an older shape becomes the next one: implemented for every `New: TryFrom<Old>` whose
/// error displays (so for every `From<Old>`). Implement `From` (or `TryFrom`, when an old
/// document may not convert: its error is the reason [`Error::Upgrade`](crate::error::Error::Upgrade)
/// reports), not this.
#[diagnostic::on_unimplemented(
    message = "no upgrade from `{Old}` to `{Self}`",
    label = "`{Self}` does not implement `From<{Old}>`",
    note = "each declared shape upgrades to the next one: implement `From<{Old}> for {Self}` (or `TryFrom`, whose error must implement `Display`)"
)]
pub trait UpgradeFrom<Old>: Sized {
    /// `old`, upgraded; the reason when it cannot be.
    fn upgrade_from(old: Old) -> Result<Self, String>;
}

impl<Old, New> UpgradeFrom<Old> for New
where
    New: TryFrom<Old>,
    <New as TryFrom<Old>>::Error: fmt::Display,
{
    fn upgrade_from(old: Old) -> Result<Self, String> {
        New::try_from(old).map_err(|e| e.to_string())
    }
}

/// Why an upgrade failed: generated code's result, which the runtime turns into
/// [`Error::Upgrade`](crate::error::Error::Upgrade). Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeFailure {
    /// The version upgraded from at the failing step (the stored version when the document did
    /// not read as that version's shape).
    pub from: u32,
    /// Why.
    pub reason: String,
}

/// The upgrade function generated code writes: the stored document of version `from` (an
/// older one), read as that version's shape, upgraded step by step, and serialized again.
#[doc(hidden)]
pub type UpgradeFn = fn(Document, u32) -> Result<Document, UpgradeFailure>;

spec! {
    /// `#[schema_version(...)]`, as static data: the version field, the current version, the
    /// older ones and how their documents upgrade.
    #[derive(Debug, Clone, Copy)]
    pub struct SchemaVersionSpec { pub(super) parts: SchemaVersionParts }
    pub struct SchemaVersionParts {
        pub field: &'static str,
        pub current: u32,
        pub missing: u32,
        pub older: &'static [u32],
        pub upgrade: UpgradeFn,
    }
}

impl SchemaVersionSpec {
    /// The version field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// The current version: what every write stores.
    pub fn current(&self) -> u32 {
        self.parts.current
    }

    /// The version of a document without the field.
    pub fn missing(&self) -> u32 {
        self.parts.missing
    }

    /// The older versions, ascending.
    pub fn older(&self) -> &'static [u32] {
        self.parts.older
    }

    /// Every version a document may be stored in, ascending, the current one last.
    pub fn known(&self) -> Vec<u32> {
        let mut all = self.parts.older.to_vec();
        all.push(self.parts.current);
        all
    }

    /// The version `doc` is stored in: the field's value (an integer, or a whole double), the
    /// [`missing`](Self::missing) version without it (or with `null`); `Err` with the value when it names no
    /// version this model knows (a newer application's, or not a number).
    pub fn version_of(&self, doc: &Document) -> Result<u32, Bson> {
        let value = match doc.get(self.parts.field) {
            // `null` is no version, as `$group` and a `{field: null}` query take it.
            None | Some(Bson::Null) => return Ok(self.parts.missing),
            Some(v) => v,
        };
        let number = match value {
            Bson::Int32(i) => i64::from(*i),
            Bson::Int64(i) => *i,
            Bson::Double(d) if d.fract() == 0.0 && d.abs() < 1e15 => *d as i64,
            _ => return Err(value.clone()),
        };
        match u32::try_from(number) {
            Ok(v) if v == self.parts.current || self.parts.older.contains(&v) => Ok(v),
            _ => Err(value.clone()),
        }
    }

    /// The filter of the documents stored in an older version (those without the field
    /// included, when that is an older version).
    pub(crate) fn older_filter(&self) -> Document {
        let mut older: Vec<Bson> = self.parts.older.iter().map(|v| Bson::from(*v)).collect();
        if self.parts.missing != self.parts.current {
            // `null` in a `$in` matches a missing field too. One condition on the field, no
            // `$or`: a server's planner may then use the `_id` index for what a caller adds
            // (`converge` reads on by `_id`).
            older.push(Bson::Null);
        }
        bson::doc! { self.parts.field: { "$in": older } }
    }
}

/// Reads `doc` as `T`, the shape of version `from`. For generated code.
#[doc(hidden)]
pub fn read_shape<T: serde::de::DeserializeOwned>(
    doc: Document,
    from: u32,
) -> Result<T, UpgradeFailure> {
    bson::deserialize_from_document(doc).map_err(|e| UpgradeFailure {
        from,
        reason: format!(
            "not a version {from} document ({}): {e}",
            std::any::type_name::<T>()
        ),
    })
}

/// One upgrade step, from version `from`. For generated code.
#[doc(hidden)]
pub fn upgrade_step<Old, New: UpgradeFrom<Old>>(
    old: Old,
    from: u32,
) -> Result<New, UpgradeFailure> {
    New::upgrade_from(old).map_err(|reason| UpgradeFailure { from, reason })
}

/// The upgraded value as a document. For generated code.
#[doc(hidden)]
pub fn upgraded<M: Serialize>(value: &M, from: u32) -> Result<Document, UpgradeFailure> {
    bson::serialize_to_document(value).map_err(|e| UpgradeFailure {
        from,
        reason: format!("the upgraded document does not serialize: {e}"),
    })
}

/// A stored version the model does not declare. For generated code.
#[doc(hidden)]
pub fn undeclared(from: u32) -> UpgradeFailure {
    UpgradeFailure {
        from,
        reason: format!("version {from} is not declared"),
    }
}

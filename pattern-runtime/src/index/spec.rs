//! Index specifications: what `#[index(...)]` declares, as static data.

use std::fmt;

use bson::{doc, Bson, Document};

/// How one key of an index is ordered or interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexKind {
    /// `1`: ascending.
    Ascending,
    /// `-1`: descending.
    Descending,
    /// `"text"`: a text index key.
    Text,
    /// `"2dsphere"`: a geospatial index on GeoJSON or legacy points.
    Geo2dSphere,
    /// `"hashed"`: a hashed index key.
    Hashed,
}

impl IndexKind {
    /// The value this key has in the index's key document (`1`, `-1`, `"text"`, ...).
    pub fn to_bson(self) -> Bson {
        match self {
            IndexKind::Ascending => Bson::Int32(1),
            IndexKind::Descending => Bson::Int32(-1),
            IndexKind::Text => Bson::String("text".into()),
            IndexKind::Geo2dSphere => Bson::String("2dsphere".into()),
            IndexKind::Hashed => Bson::String("hashed".into()),
        }
    }

    /// The suffix mongod uses for this key in a default index name (`1`, `-1`, `text`, ...).
    pub fn name_suffix(self) -> &'static str {
        match self {
            IndexKind::Ascending => "1",
            IndexKind::Descending => "-1",
            IndexKind::Text => "text",
            IndexKind::Geo2dSphere => "2dsphere",
            IndexKind::Hashed => "hashed",
        }
    }
}

/// One key of an index: a BSON path and its [`IndexKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexKey {
    /// The dotted BSON path (serialized names, `address.city`).
    pub path: &'static str,
    /// Direction or special index type.
    pub kind: IndexKind,
}

/// A literal value in a partial filter expression.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// A string.
    Str(&'static str),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl Literal {
    /// The literal as BSON (integers that fit in 32 bits become `Int32`, as the shell writes them).
    pub fn to_bson(self) -> Bson {
        match self {
            Literal::Str(s) => Bson::String(s.to_owned()),
            Literal::Int(i) => match i32::try_from(i) {
                Ok(small) => Bson::Int32(small),
                Err(_) => Bson::Int64(i),
            },
            Literal::Float(f) => Bson::Double(f),
            Literal::Bool(b) => Bson::Boolean(b),
        }
    }
}

/// A comparison in a partial filter expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartialOp {
    /// Equality (`{path: value}`).
    Eq,
    /// `$gt`.
    Gt,
    /// `$gte`.
    Gte,
    /// `$lt`.
    Lt,
    /// `$lte`.
    Lte,
    /// `$exists` (the value is a boolean).
    Exists,
    /// `$type` (the value is a BSON type alias such as `"string"`).
    Type,
}

impl PartialOp {
    /// The query operator, or `None` for plain equality.
    pub fn operator(self) -> Option<&'static str> {
        match self {
            PartialOp::Eq => None,
            PartialOp::Gt => Some("$gt"),
            PartialOp::Gte => Some("$gte"),
            PartialOp::Lt => Some("$lt"),
            PartialOp::Lte => Some("$lte"),
            PartialOp::Exists => Some("$exists"),
            PartialOp::Type => Some("$type"),
        }
    }
}

/// One condition of a partial filter expression: `path op value`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartialClause {
    /// The dotted BSON path.
    pub path: &'static str,
    /// The comparison.
    pub op: PartialOp,
    /// The value compared with.
    pub value: Literal,
}

/// A collation for an index (`collation(locale = "en", strength = 2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collation {
    /// ICU locale (`"en"`, `"fr_CA"`, `"simple"`).
    pub locale: &'static str,
    /// Comparison level, 1 to 5 (2: case-insensitive).
    pub strength: Option<u8>,
    /// Whether case is compared at strength 1 or 2.
    pub case_level: Option<bool>,
    /// Whether numeric strings compare as numbers.
    pub numeric_ordering: Option<bool>,
}

impl Collation {
    /// The collation document, with only the fields that were declared.
    pub fn to_document(&self) -> Document {
        let mut d = doc! { "locale": self.locale };
        if let Some(s) = self.strength {
            d.insert("strength", i32::from(s));
        }
        if let Some(c) = self.case_level {
            d.insert("caseLevel", c);
        }
        if let Some(n) = self.numeric_ordering {
            d.insert("numericOrdering", n);
        }
        d
    }
}

/// A declared index: keys, name and options, as `#[index(...)]` wrote them.
///
/// Specifications are static data produced by `#[derive(Model)]`; read them through
/// [`ModelSchema::indexes`](crate::schema::ModelSchema::indexes) and turn them into the server's form with
/// [`IndexSpec::to_document`].
///
/// ```
/// use pattern_runtime::index::IndexKind;
/// use pattern_runtime::Model;
///
/// #[derive(serde::Serialize, serde::Deserialize, Model)]
/// #[model(collection = "users")]
/// #[index(keys(country = 1, last_login = -1), name = "country_lastLogin_idx")]
/// struct User {
///     #[serde(rename = "_id")]
///     id: u32,
///     country: String,
///     #[index(unique)]
///     email: String,
///     last_login: bson::DateTime,
/// }
///
/// let [compound, email] = User::SCHEMA.indexes() else { panic!("two indexes") };
/// assert_eq!(compound.name(), "country_lastLogin_idx");
/// assert_eq!(compound.keys()[1].kind, IndexKind::Descending);
/// assert_eq!(email.name(), "email_1"); // mongod's default naming
/// assert!(email.is_unique());
/// assert_eq!(
///     email.to_document(),
///     bson::doc! { "key": { "email": 1 }, "name": "email_1", "unique": true },
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexSpec {
    parts: IndexParts,
}

/// The parts of an [`IndexSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexParts {
    pub keys: &'static [IndexKey],
    pub name: &'static str,
    pub unique: bool,
    pub sparse: bool,
    pub hidden: bool,
    pub expire_after_seconds: Option<u64>,
    pub collation: Option<Collation>,
    pub partial: &'static [PartialClause],
}

impl IndexSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: IndexParts) -> Self {
        IndexSpec { parts }
    }

    /// An ascending index on one path known only at run time, under mongod's default name
    /// (`path_1`). Its parts are leaked: build each one once per process.
    pub(crate) fn ascending_leaked(path: &'static str) -> Self {
        let name: &'static str = Box::leak(format!("{path}_1").into_boxed_str());
        let keys: &'static [IndexKey] = Box::leak(Box::new([IndexKey {
            path,
            kind: IndexKind::Ascending,
        }]));
        IndexSpec::plain(keys, name)
    }

    /// An index on `keys` named `name`, every option at its default: not unique, not sparse,
    /// not hidden, no TTL, no collation, no partial filter.
    pub(crate) const fn plain(keys: &'static [IndexKey], name: &'static str) -> Self {
        IndexSpec::from_parts(IndexParts {
            keys,
            name,
            unique: false,
            sparse: false,
            hidden: false,
            expire_after_seconds: None,
            collation: None,
            partial: &[],
        })
    }

    /// The index name: the one given with `name = "..."`, else mongod's default (`a_1_b_-1`).
    pub fn name(&self) -> &'static str {
        self.parts.name
    }

    /// The keys, in declaration order.
    pub fn keys(&self) -> &'static [IndexKey] {
        self.parts.keys
    }

    /// `unique`.
    pub fn is_unique(&self) -> bool {
        self.parts.unique
    }

    /// `sparse`.
    pub fn is_sparse(&self) -> bool {
        self.parts.sparse
    }

    /// `hidden`: maintained but not used by the query planner.
    pub fn is_hidden(&self) -> bool {
        self.parts.hidden
    }

    /// TTL: documents expire this many seconds after the date in the key field.
    pub fn expire_after_seconds(&self) -> Option<u64> {
        self.parts.expire_after_seconds
    }

    /// The collation, if declared.
    pub fn collation(&self) -> Option<&Collation> {
        self.parts.collation.as_ref()
    }

    /// The partial filter's conditions (empty when the index is not partial).
    pub fn partial(&self) -> &'static [PartialClause] {
        self.parts.partial
    }

    /// The key document, `{ "category": 1, "price": -1 }`.
    pub fn key_document(&self) -> Document {
        self.parts
            .keys
            .iter()
            .map(|k| (k.path.to_owned(), k.kind.to_bson()))
            .collect()
    }

    /// The `partialFilterExpression`, or `None` when the index is not partial.
    ///
    /// Conditions on the same path merge into one operator document
    /// (`{ "price": { "$gt": 0, "$lt": 100 } }`).
    pub fn partial_filter(&self) -> Option<Document> {
        if self.parts.partial.is_empty() {
            return None;
        }
        let mut filter = Document::new();
        for clause in self.parts.partial {
            let value = clause.value.to_bson();
            match clause.op.operator() {
                None => {
                    filter.insert(clause.path, value);
                }
                Some(op) => match filter.get_mut(clause.path) {
                    Some(Bson::Document(ops)) => {
                        ops.insert(op, value);
                    }
                    _ => {
                        filter.insert(clause.path, doc! { op: value });
                    }
                },
            }
        }
        Some(filter)
    }

    /// The options the server compares, as they appear in `listIndexes` output
    /// (`unique`, `sparse`, `hidden`, `expireAfterSeconds`, `collation`, `partialFilterExpression`);
    /// options left at their default are absent.
    pub fn options_document(&self) -> Document {
        let p = &self.parts;
        let mut d = Document::new();
        if p.unique {
            d.insert("unique", true);
        }
        if p.sparse {
            d.insert("sparse", true);
        }
        if p.hidden {
            d.insert("hidden", true);
        }
        if let Some(secs) = p.expire_after_seconds {
            d.insert("expireAfterSeconds", secs_to_bson(secs));
        }
        if let Some(c) = &p.collation {
            d.insert("collation", c.to_document());
        }
        if let Some(f) = self.partial_filter() {
            d.insert("partialFilterExpression", f);
        }
        d
    }

    /// The index as `createIndexes` takes it: `{ key, name, ...options }`.
    pub fn to_document(&self) -> Document {
        let mut d = doc! { "key": self.key_document(), "name": self.parts.name };
        d.extend(self.options_document());
        d
    }
}

fn secs_to_bson(secs: u64) -> Bson {
    match i32::try_from(secs) {
        Ok(small) => Bson::Int32(small),
        Err(_) => Bson::Int64(i64::try_from(secs).unwrap_or(i64::MAX)),
    }
}

impl fmt::Display for IndexSpec {
    /// `name {key} {options}`, as the shell would print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.parts.name, self.key_document())?;
        let options = self.options_document();
        if !options.is_empty() {
            write!(f, " {options}")?;
        }
        Ok(())
    }
}

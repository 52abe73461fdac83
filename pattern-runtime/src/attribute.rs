//! The attribute pattern: measurements, specifications or prices that differ from document to
//! document, stored as an array of `{key, value, qualifiers...}` items with one compound
//! multikey index on `{<field>.<key>: 1, <field>.<value>: 1}` instead of one field and one index
//! per attribute.
//!
//! The item struct says which of its fields is the key and which the value, beside
//! `#[derive(Fields)]`; the model's field holding the items says `#[attribute]`:
//!
//! ```no_run
//! use bson::{doc, Bson};
//! use pattern_runtime::attribute::Order;
//! use pattern_runtime::{Fields, Model};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, Fields)]
//! #[attribute(key = name, value = value, qualifiers(unit))]
//! struct Measurement {
//!     name: String,
//!     value: Bson,
//!     #[serde(skip_serializing_if = "Option::is_none")]
//!     unit: Option<String>,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[model(collection = "records")]
//! struct Record {
//!     #[serde(rename = "_id")]
//!     id: i32,
//!     // Declares the index {attributes.name: 1, attributes.value: 1}.
//!     #[attribute]
//!     attributes: Vec<Measurement>,
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let attributes = Record::attributes_attribute(&db);
//! // Replace the `bmi` item of record 1001, or append it: one atomic update.
//! let bmi = Measurement { name: "bmi".into(), value: Bson::Double(26.1), unit: None };
//! attributes.set(1001, &bmi).await?;
//! // {attributes: {$elemMatch: {name: "bmi", value: {$gt: 25}}}}
//! let heavy = attributes.find(attributes.key(&"bmi".to_owned()).gt(25)?).await?;
//! // Records with a blood sugar, highest first.
//! let ranked = attributes
//!     .find_sorted(doc! {}, &"blood_sugar".to_owned(), Order::Descending)
//!     .await?;
//! # let _ = (heavy, ranked);
//! # Ok(()) }
//! ```
//!
//! | where | option | meaning |
//! | --- | --- | --- |
//! | item struct, with `#[derive(Fields)]` | `#[attribute(key = name, value = value)]` | the item's key and value fields (Rust names; stored under serde's names) |
//! | item struct | `qualifiers(unit, ..)` | the other fields an item carries (units, sources); every field of the item must be the key, the value or a qualifier |
//! | item struct | the key field's type | `String`, or a fieldless enum with `#[derive(AttributeKey)]` (its serde names are the keys, so the set of keys is checked at compile time) |
//! | model field | `#[attribute]` on a `Vec` of such items | the index `{<field>.<key>: 1, <field>.<value>: 1}` and `Model::<field>_attribute(&db)` |
//! | model field | `#[attribute(name = "...")]` | the index name; by default mongod's (`attributes.name_1_attributes.value_1`) |
//!
//! # Operations
//! [`Attributes::set`] replaces the item with the same key in place, or appends it, in one
//! pipeline update: concurrent writers never leave two items with one key, and no item is lost.
//! [`Attributes::unset`] pulls every item with the key. Keys are checked before anything is sent:
//! an empty key, or one starting with `$` or containing `.` or NUL, is [`Error::InvalidKey`]; an
//! update the server refuses for size is [`Error::DocumentTooLarge`].
//!
//! Values are data: the item goes into the pipeline as `{$literal: item}`, so a value `"$120"`
//! or `"$patient"` and a unit `"$/month"` are stored as given, never read as field paths; an
//! item whose value is a document with a `$` key (`{$gt: 1}`, `{$concat: ..}`) is refused
//! ([`Error::InvalidValue`]) before anything is sent. NaN and the infinities are stored as
//! given: NaN sorts below every number in [`Attributes::find_sorted`] and matches no `gt`/`lt`
//! condition, as MongoDB compares it. Conditions compare with `$eq` and the comparison
//! operators: a regex or a document is compared as a value, never matched as a pattern.
//!
//! # A duplicate key written by someone else
//! Documents written outside the toolkit may hold two items with one key. Reading them works as
//! it does for any array (the model holds both items). [`Attributes::get`] and
//! [`Attributes::find_sorted`] use the *first* item with the key; a query matches when *any* item
//! with the key matches; the next [`Attributes::set`] of that key keeps the first position and
//! drops the others.

use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{check_size, validate_key, Error, Result};
use crate::finding::{examples, Check, CheckReport, Finding, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{Fields, ModelSchema, PatternSpec, Sample};
use futures_util::future::BoxFuture;

/// A string-like key of an attribute item: `String`, or a fieldless enum with
/// `#[derive(AttributeKey)]` (serialized as its serde names).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an attribute key",
    label = "not a string-like key",
    note = "use `String`, or a fieldless enum with `#[derive(Serialize, Deserialize, AttributeKey)]` (its serde names are the keys, checked at compile time)"
)]
pub trait AttributeKey: Serialize + DeserializeOwned + Send + Sync {
    /// The key as stored.
    fn as_key(&self) -> &str;
}

impl AttributeKey for String {
    fn as_key(&self) -> &str {
        self
    }
}

/// An item of an attribute array: `#[attribute(key = .., value = ..)]` beside
/// `#[derive(Fields)]` implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an attribute item",
    label = "items of an `#[attribute]` field declare their key and value",
    note = "add `#[attribute(key = name, value = value)]` to `{Self}`, beside `#[derive(Fields)]`"
)]
pub trait AttributeItem:
    Fields + Serialize + DeserializeOwned + Send + Sync + Unpin + 'static
{
    /// The key field's type.
    type Key: AttributeKey;
    /// The key field's BSON name.
    const KEY: &'static str;
    /// The value field's BSON name.
    const VALUE: &'static str;
    /// This item's key.
    fn key(&self) -> &Self::Key;
}

/// A model's `#[attribute]` field, as the derive declares it.
#[derive(Debug)]
pub struct AttributeSpec {
    parts: AttributeParts,
}

/// The parts of an [`AttributeSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct AttributeParts {
    /// The field's BSON name.
    pub field: &'static str,
    /// The compound index.
    pub index: IndexSpec,
}

impl AttributeSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: AttributeParts) -> Self {
        AttributeSpec { parts }
    }

    /// The field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// The `{<field>.<key>: 1, <field>.<value>: 1}` index.
    pub fn index(&'static self) -> &'static IndexSpec {
        &self.parts.index
    }

    /// The items' key field (BSON name), from the index's first key.
    fn key_field(&self) -> &'static str {
        let path = self.parts.index.keys().first().map_or("", |k| k.path);
        path.strip_prefix(self.field())
            .and_then(|p| p.strip_prefix('.'))
            .unwrap_or(path)
    }

    /// The item list of `doc` with the later duplicates of a key dropped (as
    /// [`Attributes::set`] keeps them), and whether any was; `None` when the field is not an
    /// array.
    fn deduplicated(&self, doc: &Document) -> Option<(Vec<Bson>, bool)> {
        let Some(Bson::Array(items)) = doc.get(self.field()) else {
            return None;
        };
        let key = self.key_field();
        let mut seen: Vec<&Bson> = Vec::new();
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            let k = match item {
                Bson::Document(d) => d.get(key),
                _ => None,
            };
            match k {
                Some(k) if seen.contains(&k) => continue,
                Some(k) => seen.push(k),
                None => {}
            }
            kept.push(item.clone());
        }
        let dropped = kept.len() != items.len();
        Some((kept, dropped))
    }
}

/// The sampled documents whose attribute array holds a key twice (a write around
/// [`Attributes::set`]), and those holding an item a query cannot name: no key, a key that is
/// not a string, or one starting with `$` or holding `.`.
async fn audit_attributes(
    spec: &'static AttributeSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let key = spec.key_field();
    let (mut twice, mut unnamed) = (Vec::new(), Vec::new());
    for d in sample.documents {
        let Some(id) = d.get("_id") else { continue };
        if spec.deduplicated(d).is_some_and(|(_, dropped)| dropped) {
            twice.push(id.clone());
        }
        let Some(Bson::Array(items)) = d.get(spec.field()) else {
            continue;
        };
        let bad = items.iter().any(|item| match item {
            Bson::Document(i) => match i.get(key) {
                Some(Bson::String(k)) => validate_key(k).is_err(),
                _ => true,
            },
            _ => true,
        });
        if bad {
            unnamed.push(id.clone());
        }
    }
    let n = sample.documents.len();
    let model = sample.model.name();
    let rust = sample
        .model
        .field_by_bson_name(spec.field())
        .map_or(spec.field(), |f| f.rust_name());
    let mut findings = Vec::new();
    if !twice.is_empty() {
        findings.push(
            sample
                .finding(
                    Check::AttributeDrift,
                    spec.field(),
                    format!(
                        "{} of {n} documents hold a key twice; {}",
                        twice.len(),
                        examples(&twice)
                    ),
                    format!(
                        "`{model}::{rust}_attribute(&db).repair()` keeps the first item of each \
                         key (what `get` reads); `set` never writes a key twice"
                    ),
                )
                .about(twice),
        );
    }
    if !unnamed.is_empty() {
        findings.push(
            sample
                .finding(
                    Check::AttributeDrift,
                    spec.field(),
                    format!(
                        "{} of {n} documents hold an item without a usable `{key}` (missing, not \
                         a string, or starting with `$` or holding `.`); {}",
                        unnamed.len(),
                        examples(&unnamed)
                    ),
                    "no repair can name them: `$pull` those items by hand, then `set` them \
                     again through `Attributes` (which refuses such keys)"
                        .to_owned(),
                )
                .about(unnamed),
        );
    }
    Ok(findings)
}

impl PatternSpec for AttributeSpec {
    fn indexes(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(model.collection(), self.index())]
    }
    /// The items: `set` keeps one per key, which a `$push` would not.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        vec![(
            self.field(),
            "the attribute pattern keeps one item per key: `set` or `unset` through the field's \
             `Attributes` handle",
        )]
    }

    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded {
            field: self.field(),
            by: "`#[attribute]` (one item per key)",
        }]
    }

    /// A replacement may carry other items: its own data, checked by `document_writes`.
    fn kept_on_replace(&'static self) -> bool {
        false
    }

    /// A whole document written by another pattern (a replace, an insert) whose attribute
    /// array holds a key twice, or an item no query can name, is refused.
    fn document_writes(
        &'static self,
        _operation: &str,
        doc: Option<&Document>,
    ) -> Option<&'static str> {
        let doc = doc?;
        if self.deduplicated(doc).is_some_and(|(_, dropped)| dropped) {
            return Some(
                "the attribute array holds a key twice: the attribute pattern keeps one item                  per key (`set` replaces the item of its key)",
            );
        }
        let Some(Bson::Array(items)) = doc.get(self.field()) else {
            return None;
        };
        let key = self.key_field();
        items
            .iter()
            .any(|item| match item {
                Bson::Document(i) => match i.get(key) {
                    Some(Bson::String(k)) => validate_key(k).is_err(),
                    _ => true,
                },
                _ => true,
            })
            .then_some(
                "an attribute item has no usable key (missing, not a string, starting with `$`                  or holding `.`): no query could name it",
            )
    }

    /// Keys held twice, and items a query cannot name (no `find` beyond the sample).
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(audit_attributes(self, sample)))
    }
}

/// Sort order of [`Attributes::find_sorted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Lowest value first.
    Ascending,
    /// Highest value first.
    Descending,
}

/// The operations on one `#[attribute]` field of model `M`: `Model::<field>_attribute(&db)`.
pub struct Attributes<M, I> {
    db: mongodb::Database,
    spec: &'static AttributeSpec,
    /// The caller's transaction, when bound to one.
    tx: Option<crate::txn::Transaction>,
    _types: PhantomData<fn() -> (M, I)>,
}

impl<M, I> Clone for Attributes<M, I> {
    fn clone(&self) -> Self {
        Attributes {
            db: self.db.clone(),
            spec: self.spec,
            tx: self.tx.clone(),
            _types: PhantomData,
        }
    }
}

impl<M: Model, I> std::fmt::Debug for Attributes<M, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attributes")
            .field("model", &M::SCHEMA.name())
            .field("field", &self.spec.field())
            .finish()
    }
}

/// One attribute's condition: from [`Attributes::key`].
#[derive(Debug, Clone)]
pub struct Condition {
    field: &'static str,
    key_field: &'static str,
    value_field: &'static str,
    key: String,
    /// Why the key is refused, if it is.
    invalid: Option<&'static str>,
}

impl Condition {
    fn elem_match(&self, value: Option<Bson>) -> Result<Document> {
        if let Some(reason) = self.invalid {
            return Err(Error::InvalidKey {
                key: self.key.clone(),
                reason,
            });
        }
        let key = self.key.clone();
        // A checked key is a plain string: an equality as it is.
        let mut inner = doc! { self.key_field: key };
        if let Some(v) = value {
            inner.insert(self.value_field, v);
        }
        Ok(doc! { self.field: { "$elemMatch": inner } })
    }

    /// `{value: {op: value}}`: the value is checked (no operator keys, not too deep) and
    /// compared as it is.
    fn op(&self, op: &str, value: Bson) -> Result<Document> {
        crate::literal::check_value(self.value_field, &value)?;
        if op != "$eq" && matches!(value, Bson::RegularExpression(_)) {
            return Err(Error::InvalidValue {
                field: self.value_field.to_owned(),
                reason: format!("a regex cannot be compared with `{op}`; only `eq` compares it"),
            });
        }
        self.elem_match(Some(Bson::Document(doc! { op: value })))
    }

    /// The attribute equals `value` (`$eq`: a regex or a document is compared as a value, never
    /// matched as a pattern or read as an operator).
    pub fn eq(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$eq", value.into())
    }
    /// The attribute is present and differs from `value` (a document without it does not match).
    pub fn ne(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$ne", value.into())
    }
    /// The attribute is above `value`.
    pub fn gt(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$gt", value.into())
    }
    /// The attribute is at least `value`.
    pub fn gte(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$gte", value.into())
    }
    /// The attribute is below `value`.
    pub fn lt(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$lt", value.into())
    }
    /// The attribute is at most `value`.
    pub fn lte(&self, value: impl Into<Bson>) -> Result<Document> {
        self.op("$lte", value.into())
    }
    /// The attribute is one of `values`. A regex among them is refused
    /// ([`Error::InvalidValue`]): `$in` would match it as a pattern.
    pub fn is_in(&self, values: impl IntoIterator<Item = impl Into<Bson>>) -> Result<Document> {
        let values: Vec<Bson> = values.into_iter().map(Into::into).collect();
        if values
            .iter()
            .any(|v| matches!(v, Bson::RegularExpression(_)))
        {
            return Err(Error::InvalidValue {
                field: self.value_field.to_owned(),
                reason: "a regex in `is_in` would match as a pattern, not as a value".to_owned(),
            });
        }
        self.op("$in", Bson::Array(values))
    }
    /// The document has the attribute, whatever its value.
    pub fn exists(&self) -> Result<Document> {
        self.elem_match(None)
    }
}

/// `{$and: [filters...]}`: every filter holds (several attribute conditions on one document, or
/// an attribute condition beside ordinary filters).
pub fn and(filters: impl IntoIterator<Item = Document>) -> Document {
    doc! { "$and": filters.into_iter().map(Bson::Document).collect::<Vec<_>>() }
}

/// `{$or: [filters...]}`: one of the filters holds.
pub fn or(filters: impl IntoIterator<Item = Document>) -> Document {
    doc! { "$or": filters.into_iter().map(Bson::Document).collect::<Vec<_>>() }
}

// Unbounded, so the generated constructor of a field whose items are no attribute items does
// not repeat the error the derive reports at the item type.
impl<M, I> Attributes<M, I> {
    /// The operations on `spec`'s field of `M` in `db` (what the generated
    /// `Model::<field>_attribute` calls).
    pub fn new(db: &mongodb::Database, spec: &'static AttributeSpec) -> Self {
        Attributes {
            db: db.clone(),
            spec,
            tx: None,
            _types: PhantomData,
        }
    }

    /// The same field in the caller's transaction `tx`: [`set`](Self::set),
    /// [`unset`](Self::unset) and [`get`](Self::get), with whatever derives from the field,
    /// run once in `tx`'s session; committing, aborting and retrying are the caller's. See
    /// [`Transaction`](crate::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        Attributes {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    /// The field's static description.
    pub fn spec(&self) -> &'static AttributeSpec {
        self.spec
    }
}

impl<M: Model, I: AttributeItem> Attributes<M, I> {
    fn raw(&self) -> mongodb::Collection<Document> {
        self.db.collection(M::SCHEMA.collection())
    }

    /// [`Error::NotFound`] for document `id` of `M`'s collection.
    fn not_found(id: Bson) -> Error {
        Error::NotFound {
            collection: M::SCHEMA.collection().to_owned(),
            id: Box::new(id),
        }
    }

    /// The checked key.
    fn key_str(key: &I::Key) -> Result<String> {
        let k = key.as_key();
        validate_key(k)?;
        Ok(k.to_owned())
    }

    /// A condition on the attribute `key`, to compare with a value.
    pub fn key(&self, key: &I::Key) -> Condition {
        let invalid = match validate_key(key.as_key()) {
            Err(Error::InvalidKey { reason, .. }) => Some(reason),
            _ => None,
        };
        Condition {
            field: self.spec.field(),
            key_field: I::KEY,
            value_field: I::VALUE,
            key: key.as_key().to_owned(),
            invalid,
        }
    }

    /// Sets `item` on document `id`: replaces the item with the same key where it is (dropping
    /// any later duplicate of it), or appends it, in one atomic pipeline update.
    /// [`Error::NotFound`] when there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.set",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn set(&self, id: impl IntoId<M::Id>, item: &I) -> Result<()> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let key = Self::key_str(item.key())?;
        let item = bson::serialize_to_document(item)?;
        crate::literal::check_document(self.spec.field(), &item)?;
        check_size(&item, "the attribute item")?;
        // The item and the key are data: `$literal` keeps the pipeline from reading a string
        // starting with `$` as a field path or a document as an expression.
        let item = crate::literal::literal(item);
        let key_value = crate::literal::literal(key.as_str());
        let f = format!("${}", self.spec.field());
        // The keys through `$map`, not `$$a.<key>`: not every server traverses arrays in
        // expression paths (the embedded test server does not).
        let names = doc! { "$map": { "input": "$$a", "in": format!("$$this.{}", I::KEY) } };
        let this_key = format!("$$this.{}", I::KEY);
        // a: the items (none yet: []); i: the first with the key, or -1.
        let value = doc! {
            "$let": {
                "vars": { "a": { "$ifNull": [&f, []] } },
                "in": { "$let": {
                    "vars": { "i": { "$indexOfArray": [&names, &key_value] } },
                    "in": { "$cond": [
                        { "$eq": ["$$i", -1] },
                        { "$concatArrays": ["$$a", [item.clone()]] },
                        { "$concatArrays": [
                            { "$slice": ["$$a", "$$i"] },
                            [item],
                            { "$filter": {
                                "input": { "$slice": ["$$a", { "$subtract": [{ "$add": ["$$i", 1] }, { "$size": "$$a" }] }] },
                                "cond": { "$ne": [&this_key, &key_value] },
                            } },
                        ] },
                    ] },
                } },
            }
        };
        let pipeline = vec![doc! { "$set": { self.spec.field(): value } }];
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            doc! { "_id": id.clone() },
            pipeline,
            &[self.spec.field()],
        )
        .await?;
        if result.matched_count == 0 {
            return Err(Self::not_found(id));
        }
        tracing::debug!(key, modified = result.modified_count, "attribute set");
        Ok(())
    }

    /// Removes every item with `key` from document `id` (nothing to remove is not an error).
    /// [`Error::NotFound`] when there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.unset",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), id = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn unset(&self, id: impl IntoId<M::Id>, key: &I::Key) -> Result<()> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        tracing::Span::current().record("id", tracing::field::display(&id));
        let key = Self::key_str(key)?;
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            doc! { "_id": id.clone() },
            doc! { "$pull": { self.spec.field(): { I::KEY: &key } } },
            &[self.spec.field()],
        )
        .await?;
        if result.matched_count == 0 {
            return Err(Self::not_found(id));
        }
        tracing::debug!(key, removed = result.modified_count, "attribute unset");
        Ok(())
    }

    /// Reads every document of the model, a page at a time, and reports those holding a key
    /// twice or an item a query cannot name
    /// ([`Check::AttributeDrift`], listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.check",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<CheckReport> {
        crate::maintenance::check(&self.db, &[(M::SCHEMA, self.spec as &dyn PatternSpec)]).await
    }

    /// [`check`](Self::check), then, in each document it lists, keeps the first item of each
    /// key (what [`get`](Self::get) reads): one `update` per document, whose filter carries the
    /// array as read, so a document changed meanwhile is left for the next run. Items no
    /// query can name are left (see [`CheckReport`]). Then a check again.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.repair",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection(), field = self.spec.field()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<RepairReport> {
        let targets = [(M::SCHEMA, self.spec as &dyn PatternSpec)];
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let field = self.spec.field();
        let mut repaired = 0;
        for id in found.documents() {
            let Some(doc) = self
                .raw()
                .find_one(doc! { "_id": id.clone() })
                .projection(doc! { field: 1 })
                .await?
            else {
                continue;
            };
            let Some((kept, true)) = self.spec.deduplicated(&doc) else {
                continue;
            };
            let was = doc.get(field).cloned().unwrap_or(Bson::Null);
            repaired += crate::derived::update_one(
                &self.db,
                self.tx.as_ref(),
                M::SCHEMA,
                doc! { "_id": id, field: { "$eq": was } },
                doc! { "$set": { field: kept } },
                &[field],
            )
            .await?
            .modified_count;
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// The item with `key` of document `id` (the first, if someone wrote two); `None` when the
    /// document has no such item. [`Error::NotFound`] when there is no such document.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.get",
        level = "debug",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection())
    )]
    pub async fn get(&self, id: impl IntoId<M::Id>, key: &I::Key) -> Result<Option<I>> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        let key = Self::key_str(key)?;
        let field = self.spec.field();
        let raw = self.raw();
        let read = raw
            .find_one(doc! { "_id": id.clone() })
            .projection(doc! { field: { "$elemMatch": { I::KEY: &key } } });
        let found = match &self.tx {
            Some(tx) => {
                let mut session = crate::txn::Transaction::session_of(Some(tx)).await?;
                crate::txn::in_session!(read, session.as_deref_mut())?
            }
            None => read.await?,
        };
        let Some(doc) = found else {
            return Err(Self::not_found(id));
        };
        match doc.get_array(field).ok().and_then(|a| a.first()) {
            Some(item) => Ok(Some(bson::deserialize_from_bson(item.clone())?)),
            None => Ok(None),
        }
    }

    /// The documents matching `filter` (an attribute condition, [`and`]/[`or`] of them, or any
    /// filter).
    #[tracing::instrument(
        name = "pattern_runtime::attribute.find",
        level = "debug",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection())
    )]
    pub async fn find(&self, filter: Document) -> Result<Vec<M>> {
        let found: Vec<M> = self
            .db
            .collection::<M>(M::SCHEMA.collection())
            .find(filter)
            .await?
            .try_collect()
            .await?;
        tracing::debug!(read = found.len(), "documents read");
        Ok(found)
    }

    /// The documents matching `filter` that have the attribute `key`, sorted by its value (the
    /// first item with the key), then by `_id`. One aggregation: the documents are matched on
    /// the index (`{<field>.<key>: key}`), the sort value is computed per document; nothing is
    /// unwound.
    #[tracing::instrument(
        name = "pattern_runtime::attribute.find_sorted",
        level = "debug",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SCHEMA.collection())
    )]
    pub async fn find_sorted(
        &self,
        filter: Document,
        key: &I::Key,
        order: Order,
    ) -> Result<Vec<M>> {
        let key = Self::key_str(key)?;
        let field = self.spec.field();
        let has = doc! { field: { "$elemMatch": { I::KEY: &key } } };
        let matched = if filter.is_empty() {
            has
        } else {
            and([filter, has])
        };
        let direction = match order {
            Order::Ascending => 1,
            Order::Descending => -1,
        };
        const SORT: &str = "__patternSortValue";
        let pipeline = vec![
            doc! { "$match": matched },
            doc! { "$addFields": { SORT: { "$arrayElemAt": [
                { "$map": {
                    "input": { "$filter": {
                        "input": format!("${field}"),
                        "cond": { "$eq": [
                            format!("$$this.{}", I::KEY),
                            crate::literal::literal(key.as_str()),
                        ] },
                    } },
                    "in": format!("$$this.{}", I::VALUE),
                } },
                0,
            ] } } },
            doc! { "$sort": { SORT: direction, "_id": 1 } },
            doc! { "$project": { SORT: 0 } },
        ];
        let docs: Vec<Document> = self.raw().aggregate(pipeline).await?.try_collect().await?;
        let out = docs
            .into_iter()
            .map(|d| bson::deserialize_from_document::<M>(d).map_err(Error::from))
            .collect::<Result<Vec<M>>>()?;
        tracing::debug!(read = out.len(), "documents read");
        Ok(out)
    }
}

impl ModelSchema {
    /// The model's `#[attribute]` fields.
    pub fn attributes(&self) -> Vec<&'static AttributeSpec> {
        self.specs().collect()
    }
}

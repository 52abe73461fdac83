//! [`Filter`] and [`Sort`].

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use bson::{Bson, Document};
use serde::Serialize;

use super::kinds::{FieldPath, Items};
use super::order::{Asc, Desc, Unchecked};
use super::value::IntoValue;
use crate::error::{Error, Result};
use crate::schema::kinds::Comparable;
use crate::schema::Fields;

/// A typed filter: see the [module docs](crate::query). Combine with [`and`](Filter::and) (or
/// [`Filter::and_all`] of many), [`or`](Filter::or), `!filter`; `Filter::default()` matches
/// every document.
///
/// `M` is the model whose field names it is built from: a handle on `M`'s documents takes a
/// `Filter<M>`, and a filter of another model's fields is a compile error there.
pub struct Filter<M> {
    doc: Document,
    error: Option<Error>,
    _model: PhantomData<fn() -> M>,
}

// By hand: derives would demand `M: Default`, `M: Debug`.
impl<M> Default for Filter<M> {
    fn default() -> Self {
        Filter::of(Ok(Document::new()))
    }
}

impl<M> fmt::Debug for Filter<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("doc", &self.doc)
            .field("error", &self.error)
            .finish()
    }
}

/// A filter a handle on `M`'s documents takes: a typed [`Filter<M>`] (built from `M::FIELDS`)
/// or a `bson::Document` (the explicit escape).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a filter of `{M}`",
    label = "a filter of another model",
    note = "a handle on `{M}`'s documents takes a `Filter<{M}>`, built from `{M}::FIELDS`, or a `bson::Document`"
)]
pub trait IntoFilter<M> {
    /// The filter document, or the error a typed value met.
    fn into_filter(self) -> Result<Document>;
}

impl<M> IntoFilter<M> for Filter<M> {
    fn into_filter(self) -> Result<Document> {
        self.into_document()
    }
}

impl<M> IntoFilter<M> for Document {
    fn into_filter(self) -> Result<Document> {
        Ok(self)
    }
}

pub(crate) fn serialize<V: Serialize + ?Sized>(path: &str, value: &V) -> Result<Bson> {
    bson::serialize_to_bson(value).map_err(|e| Error::InvalidValue {
        field: path.to_owned(),
        reason: format!("cannot be serialized to BSON: {e}"),
    })
}

use crate::literal::invalid as refused;

/// Checks `value`, the operand of `op` in a typed filter on `path`, so that the server reads it
/// as the literal it is, or refuses it before anything is sent ([`Error::InvalidValue`]):
/// - at any depth, a key holding NUL (BSON cannot encode it) and `undefined` (the
///   server neither stores nor compares it);
/// - under `$ne` and the order operators, a regex (the server compares a regex for equality
///   only);
/// - among the items of `$in`, `$nin` and `$all`, a regex (it would match by pattern) and a
///   document with a `$`-prefixed key (it would be read as an operator: `{$all:
///   [{$elemMatch: ..}]}`).
fn check_operand(path: &str, op: &str, value: &Bson) -> Result<()> {
    encodable(path, value)?;
    match (op, value) {
        ("$ne" | "$gt" | "$gte" | "$lt" | "$lte", Bson::RegularExpression(_)) => Err(refused(
            path,
            format!(
                "a regular expression in `{op}`: the server compares a regex for equality \
                 only; compare it with `Filter::eq`, or match by pattern with a `doc!`"
            ),
        )),
        ("$in" | "$nin" | "$all", Bson::Array(items)) => {
            for item in items {
                match item {
                    Bson::RegularExpression(_) => {
                        return Err(refused(
                            path,
                            format!(
                                "a regular expression in `{op}` matches as a pattern, not as \
                                 a value: compare it with `Filter::eq`, or match by pattern \
                                 with a `doc!`"
                            ),
                        ))
                    }
                    Bson::Document(d) if d.keys().any(|k| k.starts_with('$')) => {
                        return Err(refused(
                            path,
                            format!(
                                "a document with a `$` key in `{op}` is read as an operator, \
                                 not as a value: compare it with `Filter::eq`, or write the \
                                 condition as a `doc!`"
                            ),
                        ))
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// [`encodable`] on each field of `doc`, and no key holding NUL.
fn encodable_fields(path: &str, doc: &Document) -> Result<()> {
    doc.iter().try_for_each(|(k, v)| {
        if k.contains('\0') {
            return Err(refused(
                path,
                format!("key `{k}` holds NUL, which BSON cannot encode"),
            ));
        }
        encodable(path, v)
    })
}

/// Refuses, at any depth of `value`, what BSON cannot encode (a NUL in a key) and `undefined`.
fn encodable(path: &str, value: &Bson) -> Result<()> {
    match value {
        Bson::Document(d) => encodable_fields(path, d),
        Bson::Array(a) => a.iter().try_for_each(|v| encodable(path, v)),
        Bson::JavaScriptCodeWithScope(code) => encodable_fields(path, &code.scope),
        Bson::Undefined => Err(refused(
            path,
            "`undefined` is deprecated BSON: MongoDB neither stores nor compares it",
        )),
        _ => Ok(()),
    }
}

/// `{path: {op: value}}`.
fn condition(path: &str, op: &str, value: impl Into<Bson>) -> Document {
    let mut cond = Document::new();
    cond.insert(op, value.into());
    let mut doc = Document::new();
    doc.insert(path, cond);
    doc
}

/// Each of `values` serialized for the field at `path`, in order.
fn serialize_each<T: Serialize>(
    path: &str,
    values: impl IntoIterator<Item = T>,
) -> Result<Vec<Bson>> {
    values.into_iter().map(|v| serialize(path, &v)).collect()
}

impl<M> Filter<M> {
    fn of(result: Result<Document>) -> Filter<M> {
        match result {
            Ok(doc) => Filter {
                doc,
                error: None,
                _model: PhantomData,
            },
            Err(e) => Filter {
                doc: Document::new(),
                error: Some(e),
                _model: PhantomData,
            },
        }
    }

    fn list<T: Serialize>(
        path: Cow<'_, str>,
        op: &str,
        values: impl IntoIterator<Item = T>,
    ) -> Filter<M> {
        Filter::of(serialize_each(&path, values).and_then(|values| {
            let values = Bson::Array(values);
            check_operand(&path, op, &values)?;
            Ok(condition(&path, op, values))
        }))
    }

    fn compare<P, V>(field: P, op: &str, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        let path = field.path();
        Filter::of(serialize(&path, &value.into_value()).and_then(|v| {
            check_operand(&path, op, &v)?;
            Ok(condition(&path, op, v))
        }))
    }

    /// `{field: {$eq: value}}`: the field equals `value`, a value of the field's own type (a
    /// whole `Vec` for a `Vec` field; [`all`](Self::all) or [`elem_match`](Self::elem_match)
    /// match one item of it). On a path through an array (`items.sku`), some item's field
    /// equals it.
    ///
    /// Two documents are equal when they hold the same fields in the same order. A struct and
    /// a `BTreeMap` serialize in one order, but a `HashMap` in its iteration order, which
    /// differs between two equal maps: compare a map field whole only when it is a `BTreeMap`
    /// (or a map type that keeps its order); otherwise filter its entries with a `doc!`.
    pub fn eq<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$eq", value)
    }

    /// `{field: {$ne: value}}`.
    pub fn ne<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$ne", value)
    }

    /// `{field: {$gt: value}}`. MongoDB compares values of the same BSON type only.
    pub fn gt<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$gt", value)
    }

    /// `{field: {$gte: value}}`.
    pub fn gte<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$gte", value)
    }

    /// `{field: {$lt: value}}`.
    pub fn lt<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$lt", value)
    }

    /// `{field: {$lte: value}}`.
    pub fn lte<P, V>(field: P, value: V) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::compare(field, "$lte", value)
    }

    /// `{field: {$in: [values]}}`: the field equals one of them.
    pub fn is_in<P, V>(field: P, values: impl IntoIterator<Item = V>) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::list(
            field.path(),
            "$in",
            values.into_iter().map(IntoValue::into_value),
        )
    }

    /// `{field: {$nin: [values]}}`: the field equals none of them (or is missing).
    pub fn not_in<P, V>(field: P, values: impl IntoIterator<Item = V>) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        Filter::list(
            field.path(),
            "$nin",
            values.into_iter().map(IntoValue::into_value),
        )
    }

    /// `{field: {$exists: present}}`.
    pub fn exists<P: FieldPath<Model = M>>(field: P, present: bool) -> Filter<M> {
        Filter::of(Ok(condition(&field.path(), "$exists", present)))
    }

    /// `{field: {$all: [items]}}`: an array field holding every one of `items`.
    pub fn all<P, V>(field: P, items: impl IntoIterator<Item = V>) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        Filter::list(
            field.path(),
            "$all",
            items.into_iter().map(IntoValue::into_value),
        )
    }

    /// `{field: {$size: len}}`: an array field of exactly `len` items.
    pub fn size<P>(field: P, len: u32) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Value: Items,
    {
        Filter::of(Ok(condition(&field.path(), "$size", i64::from(len))))
    }

    /// `{field: {$elemMatch: condition}}`: an array field with one item meeting the whole
    /// `condition`, written over the item's own field names:
    /// `Filter::elem_match(FIELDS.items, |i| Filter::gt(i.qty, 2).and(Filter::eq(i.sku, "a")))`.
    ///
    /// A conjunction is sent in its implicit form, `{$elemMatch: {qty: {$gt: 2}, sku: {$eq:
    /// "a"}}}` (conditions on one field merged into one operator document), which every server
    /// runs; it keeps `$and` only where a field or an operator repeats. `$or` and `$nor` inside
    /// `$elemMatch` are sent as written (MongoDB runs them; the embedded test server refuses
    /// them).
    pub fn elem_match<P, N>(
        field: P,
        condition: impl FnOnce(<<P::Value as Items>::Item as Fields>::Names) -> Filter<N>,
    ) -> Filter<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Comparable,
        P::Value: Items,
        <P::Value as Items>::Item: Fields,
    {
        let path = field.path();
        let inner = condition(<<P::Value as Items>::Item as Fields>::FIELDS);
        Filter::of(inner.into_document().map(|inner| {
            let inner = implicit_and(&inner).unwrap_or(inner);
            self::condition(&path, "$elemMatch", inner)
        }))
    }

    fn combine(op: &str, filters: impl IntoIterator<Item = Filter<M>>) -> Filter<M> {
        let docs: Result<Vec<Document>> = filters.into_iter().map(Filter::into_document).collect();
        Filter::of(docs.map(|docs| {
            let mut doc = Document::new();
            doc.insert(op, docs);
            doc
        }))
    }

    /// `{$and: [filters]}`: every one matches.
    pub fn and_all(filters: impl IntoIterator<Item = Filter<M>>) -> Filter<M> {
        Filter::combine("$and", filters)
    }

    /// `{$or: [filters]}`: at least one matches.
    pub fn or_any(filters: impl IntoIterator<Item = Filter<M>>) -> Filter<M> {
        Filter::combine("$or", filters)
    }

    /// `{$nor: [filters]}`: none matches.
    pub fn none_of(filters: impl IntoIterator<Item = Filter<M>>) -> Filter<M> {
        Filter::combine("$nor", filters)
    }

    /// `{$and: [self, other]}`.
    pub fn and(self, other: Filter<M>) -> Filter<M> {
        Filter::and_all([self, other])
    }

    /// `{$or: [self, other]}`.
    pub fn or(self, other: Filter<M>) -> Filter<M> {
        Filter::or_any([self, other])
    }

    /// The filter document, or [`Error::InvalidValue`] naming the field whose value could not
    /// be serialized or would not be a literal.
    pub fn into_document(self) -> Result<Document> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.doc),
        }
    }
}

/// `doc` as one document of field conditions, when it is one already or a `$and` of such
/// documents whose conditions merge without a clash: `{$and: [{a: {$gt: 1}}, {a: {$lt: 5}, b:
/// {$eq: 2}}]}` is `{a: {$gt: 1, $lt: 5}, b: {$eq: 2}}`. `None` when a field's conditions cannot
/// merge (a repeated operator, a value that is not an operator document) or a top-level
/// operator other than `$and` is there.
fn implicit_and(doc: &Document) -> Option<Document> {
    if let (1, Some(Bson::Array(parts))) = (doc.len(), doc.get("$and")) {
        let mut merged = Document::new();
        for part in parts {
            let Bson::Document(part) = part else {
                return None;
            };
            for (key, value) in implicit_and(part)? {
                match (merged.get_mut(&key), value) {
                    (None, value) => {
                        merged.insert(key, value);
                    }
                    (Some(Bson::Document(ops)), Bson::Document(more))
                        if operators_only(ops) && operators_only(&more) =>
                    {
                        for (op, v) in more {
                            if ops.contains_key(&op) {
                                return None;
                            }
                            ops.insert(op, v);
                        }
                    }
                    _ => return None,
                }
            }
        }
        return Some(merged);
    }
    doc.keys().all(|k| !k.starts_with('$')).then(|| doc.clone())
}

/// Whether every key of `doc` is an operator (`{$gt: 1, $lt: 5}`), so that two such documents on
/// one field merge into one.
fn operators_only(doc: &Document) -> bool {
    !doc.is_empty() && doc.keys().all(|k| k.starts_with('$'))
}

/// `!filter` is `{$nor: [filter]}`: the document does not match `filter`.
impl<M> std::ops::Not for Filter<M> {
    type Output = Filter<M>;
    fn not(self) -> Filter<M> {
        Filter::combine("$nor", [self])
    }
}

/// A typed sort: `Sort::desc(FIELDS.created_at).then_asc(FIELDS.id)` is
/// `{createdAt: -1, _id: 1}`. `M` is the model whose field names it is built from, as for a
/// [`Filter`]; `S` holds its keys (see [`order`](super::order)), so that a keyset page
/// ([`Find::after`](crate::query::Find::after)) over a sort no index serves is a compile error.
/// [`erase`](Sort::erase) forgets them: a `Sort<M>` is checked at run time.
pub struct Sort<M, S = Unchecked>(Document, PhantomData<fn() -> (M, S)>);

// By hand: derives would demand `M: Clone`, `M: Debug`, ...
impl<M, S> Clone for Sort<M, S> {
    fn clone(&self) -> Self {
        Sort(self.0.clone(), PhantomData)
    }
}

impl<M, S> fmt::Debug for Sort<M, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Sort").field(&self.0).finish()
    }
}

impl<M, S, S2> PartialEq<Sort<M, S2>> for Sort<M, S> {
    fn eq(&self, other: &Sort<M, S2>) -> bool {
        self.0 == other.0
    }
}

impl<M> Sort<M, ()> {
    /// Ascending by `field`.
    pub fn asc<P: FieldPath<Model = M>>(field: P) -> Sort<M, (Asc<P::Tag>, ())> {
        Sort(Document::new(), PhantomData).then_asc(field)
    }

    /// Descending by `field`.
    pub fn desc<P: FieldPath<Model = M>>(field: P) -> Sort<M, (Desc<P::Tag>, ())> {
        Sort(Document::new(), PhantomData).then_desc(field)
    }
}

impl<M, S> Sort<M, S> {
    /// Then ascending by `field`.
    pub fn then_asc<P: FieldPath<Model = M>>(mut self, field: P) -> Sort<M, (Asc<P::Tag>, S)> {
        self.0.insert(field.path().into_owned(), 1);
        Sort(self.0, PhantomData)
    }

    /// Then descending by `field`.
    pub fn then_desc<P: FieldPath<Model = M>>(mut self, field: P) -> Sort<M, (Desc<P::Tag>, S)> {
        self.0.insert(field.path().into_owned(), -1);
        Sort(self.0, PhantomData)
    }

    /// The same sort, its keys no longer in its type: where sorts of different keys must be
    /// one type (the arms of a `match`). A keyset page after it is checked at run time.
    pub fn erase(self) -> Sort<M> {
        Sort(self.0, PhantomData)
    }

    /// The sort document.
    pub fn into_document(self) -> Document {
        self.0
    }
}

/// A sort a find of `M`'s documents takes: a typed [`Sort<M>`] (built from `M::FIELDS`) or a
/// `bson::Document` (the explicit escape).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a sort of `{M}`",
    label = "a sort of another model",
    note = "a find of `{M}`'s documents takes a `Sort<{M}>`, built from `{M}::FIELDS`, or a `bson::Document`"
)]
pub trait IntoSort<M> {
    /// The sort's keys, in its type ([`Unchecked`] for a document).
    #[doc(hidden)]
    type Keys;
    /// The sort document.
    fn into_sort(self) -> Document;
}

impl<M, S> IntoSort<M> for Sort<M, S> {
    type Keys = S;
    fn into_sort(self) -> Document {
        self.0
    }
}

impl<M> IntoSort<M> for Document {
    type Keys = Unchecked;
    fn into_sort(self) -> Document {
        self
    }
}

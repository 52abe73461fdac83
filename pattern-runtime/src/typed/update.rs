//! [`Update`].

use std::fmt;
use std::marker::PhantomData;

use bson::{Bson, Document};
use serde::Serialize;

use super::filter::serialize;
use super::kinds::{FieldPath, Items, Number, Optional, When};
use super::value::IntoValue;
use crate::error::{Error, Result};
use crate::schema::kinds::Settable;

/// A typed operator update: see the [module docs](crate::query). Each setter takes a field the
/// model's own writes set ([`Free`](super::Free)); a field a pattern keeps has no setter.
///
/// Operators come out in the order of their first use, fields in call order. A field written
/// twice, or a field and a path below it (which MongoDB refuses as a conflict), is
/// [`Error::InvalidValue`] from [`into_document`](Update::into_document), before anything is
/// sent.
///
/// `M` is the model whose field names it is built from: a handle on `M`'s documents takes an
/// `Update<M>`, and an update of another model's fields is a compile error there.
pub struct Update<M> {
    doc: Document,
    error: Option<Error>,
    _model: PhantomData<fn() -> M>,
}

// By hand: derives would demand `M: Default`, `M: Debug`.
impl<M> Default for Update<M> {
    fn default() -> Self {
        Update {
            doc: Document::new(),
            error: None,
            _model: PhantomData,
        }
    }
}

impl<M> fmt::Debug for Update<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Update")
            .field("doc", &self.doc)
            .field("error", &self.error)
            .finish()
    }
}

/// An update a handle on `M`'s documents takes: a typed [`Update<M>`] (built from
/// `M::FIELDS`) or a `bson::Document` (the explicit escape, checked at run time).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an update of `{M}`",
    label = "an update of another model",
    note = "a handle on `{M}`'s documents takes an `Update<{M}>`, built from `{M}::FIELDS`, or a `bson::Document`"
)]
pub trait IntoUpdate<M> {
    /// The update document, or the error a typed value met.
    fn into_update(self) -> Result<Document>;
}

impl<M> IntoUpdate<M> for Update<M> {
    fn into_update(self) -> Result<Document> {
        self.into_document()
    }
}

impl<M> IntoUpdate<M> for Document {
    fn into_update(self) -> Result<Document> {
        Ok(self)
    }
}

fn conflict(a: &str, b: &str) -> bool {
    a == b
        || (a.len() > b.len() && a.starts_with(b) && a.as_bytes()[b.len()] == b'.')
        || (b.len() > a.len() && b.starts_with(a) && b.as_bytes()[a.len()] == b'.')
}

impl<M> Update<M> {
    /// An empty update: add operators with the methods below.
    pub fn new() -> Update<M> {
        Update::default()
    }

    fn add(mut self, op: &'static str, path: &str, value: Result<Bson>) -> Update<M> {
        if self.error.is_some() {
            return self;
        }
        let value = match value {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(e);
                return self;
            }
        };
        // Every path written so far, with its operator: the document's own keys.
        let mut written = self.doc.iter().flat_map(|(other, fields)| {
            let keys = fields.as_document().into_iter().flat_map(|f| f.keys());
            keys.map(move |p| (p, other))
        });
        if let Some((_, other)) = written.find(|(p, _)| conflict(p, path)) {
            self.error = Some(Error::InvalidValue {
                field: path.to_owned(),
                reason: format!(
                    "the update writes it twice (`{other}` and `{op}`, or a path below it): \
                     MongoDB refuses conflicting paths in one update"
                ),
            });
            return self;
        }
        match self.doc.get_mut(op) {
            Some(Bson::Document(fields)) => {
                fields.insert(path, value);
            }
            _ => {
                let mut fields = Document::new();
                fields.insert(path, value);
                self.doc.insert(op, fields);
            }
        }
        self
    }

    fn stored<V: Serialize + ?Sized>(path: &str, value: &V) -> Result<Bson> {
        let v = serialize(path, value)?;
        crate::literal::check_value(path, &v)?;
        Ok(v)
    }

    /// `{$set: {field: value}}`.
    pub fn set<P, V>(self, field: P, value: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Serialize + Sized,
        V: IntoValue<P::Value>,
    {
        let path = field.path();
        let v = Self::stored(&path, &value.into_value());
        self.add("$set", &path, v)
    }

    /// `{$unset: {field: ""}}`: removes an `Option` field (it reads back as `None`).
    pub fn unset<P>(self, field: P) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Optional,
    {
        let path = field.path();
        self.add("$unset", &path, Ok(Bson::String(String::new())))
    }

    fn number<P, V>(self, op: &'static str, field: P, by: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Value: Number,
        V: IntoValue<<P::Value as Number>::Num>,
    {
        let path = field.path();
        let v = serialize(&path, &by.into_value());
        self.add(op, &path, v)
    }

    /// `{$inc: {field: by}}`: adds `by` (a missing field starts at 0).
    ///
    /// The server adds in the stored type and widens on overflow: an `i32` field pushed past
    /// `i32::MAX` is stored as a 64-bit integer, which no longer reads as the `i32`. The model's
    /// validator (synced with [`SyncOptions::validators`](crate::sync::SyncOptions::validators)) refuses that write
    /// (the field's shape is `int`); without it, use an `i64` field where a sum can grow.
    pub fn inc<P, V>(self, field: P, by: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Number,
        V: IntoValue<<P::Value as Number>::Num>,
    {
        self.number("$inc", field, by)
    }

    /// `{$mul: {field: by}}`: multiplies by `by` (a missing field becomes 0).
    ///
    /// As with [`inc`](Self::inc), the server widens an `i32` product past `i32::MAX` to a
    /// 64-bit integer, which no longer reads as the `i32`: the model's validator refuses that
    /// write; without it, use an `i64` field. Past the `i64` range the server refuses it, as
    /// [`Error::InvalidValue`](crate::error::Error::InvalidValue) naming the field.
    pub fn mul<P, V>(self, field: P, by: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Number,
        V: IntoValue<<P::Value as Number>::Num>,
    {
        self.number("$mul", field, by)
    }

    /// `{$min: {field: value}}`: sets the field to `value` if `value` is lower.
    pub fn min<P, V>(self, field: P, value: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Number,
        V: IntoValue<<P::Value as Number>::Num>,
    {
        self.number("$min", field, value)
    }

    /// `{$max: {field: value}}`: sets the field to `value` if `value` is higher.
    pub fn max<P, V>(self, field: P, value: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Number,
        V: IntoValue<<P::Value as Number>::Num>,
    {
        self.number("$max", field, value)
    }

    fn item<P, V>(self, op: &'static str, field: P, item: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        let path = field.path();
        let v = Self::stored(&path, &item.into_value());
        self.add(op, &path, v)
    }

    /// `{$push: {field: item}}`: appends `item` to a `Vec` field.
    pub fn push<P, V>(self, field: P, item: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        self.item("$push", field, item)
    }

    /// `{$push: {field: {$each: items}}}`: appends every item, in order.
    pub fn push_each<P, V>(self, field: P, items: impl IntoIterator<Item = V>) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        let path = field.path();
        let v: Result<Vec<Bson>> = items
            .into_iter()
            .map(|i| Self::stored(&path, &i.into_value()))
            .collect();
        let v = v.map(|each| Bson::Document(bson::doc! { "$each": each }));
        self.add("$push", &path, v)
    }

    /// `{$addToSet: {field: item}}`: appends `item` unless an equal one is there.
    pub fn add_to_set<P, V>(self, field: P, item: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        self.item("$addToSet", field, item)
    }

    /// `{$pullAll: {field: [item]}}`: removes every item equal to `item`. (`$pull` would read a
    /// document as a condition on the items; `$pullAll` compares.)
    pub fn pull<P, V>(self, field: P, item: V) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: Items,
        V: IntoValue<<P::Value as Items>::Item>,
    {
        let path = field.path();
        let v = Self::stored(&path, &item.into_value()).map(|v| Bson::Array(vec![v]));
        self.add("$pullAll", &path, v)
    }

    /// `{$currentDate: {field: true}}`: the server's current time, as a `bson::DateTime`.
    pub fn current_date<P>(self, field: P) -> Update<M>
    where
        P: FieldPath<Model = M>,
        P::Kind: Settable,
        P::Value: When,
    {
        let path = field.path();
        self.add("$currentDate", &path, Ok(Bson::Boolean(true)))
    }

    /// The update document, or [`Error::InvalidValue`] naming the field whose value could not
    /// be serialized or stored as given, or that the update writes twice.
    pub fn into_document(self) -> Result<Document> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.doc),
        }
    }
}

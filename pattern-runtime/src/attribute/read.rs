//! Reading attributes: one item, and the documents whose items match conditions, through the
//! one `{k, v}` index.

use super::*;
use crate::span::Spanned as _;
use crate::txn::{collect_in, in_session, Transaction};
use bson::RawDocumentBuf;

/// Sort order of [`Attributes::find_sorted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Lowest value first.
    Ascending,
    /// Highest value first.
    Descending,
}

/// `Condition`'s comparisons with one value, each one `op` of the value as it is.
macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident $op:literal;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self, value: impl Into<Bson>) -> Result<Document> {
                self.op($op, value.into())
            }
        )*
    };
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

    comparisons! {
        /// The attribute equals `value` (`$eq`: a regex or a document is compared as a value,
        /// never matched as a pattern or read as an operator).
        eq "$eq";
        /// The attribute is present and differs from `value` (a document without it does not
        /// match).
        ne "$ne";
        /// The attribute is above `value`.
        gt "$gt";
        /// The attribute is at least `value`.
        gte "$gte";
        /// The attribute is below `value`.
        lt "$lt";
        /// The attribute is at most `value`.
        lte "$lte";
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

impl<M: Model, I: AttributeItem> Attributes<M, I> {
    /// A condition on the attribute `key` (the key's type, or a `&str` for a `String` key), to
    /// compare with a value.
    pub fn key(&self, key: impl IntoId<I::Key>) -> Condition {
        let key = key.into_id();
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

    /// The item with `key` of document `id` (the first, if someone wrote two); `None` when the
    /// document has no such item. [`Error::NotFound`] when there is no such document.
    pub fn get<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        key: impl IntoId<I::Key>,
    ) -> crate::model::Pending<'a, Result<Option<I>>> {
        crate::model::Pending::new(self.get_op(id.into_id(), key.into_id()))
    }

    async fn get_op(&self, id: M::Id, key: I::Key) -> Result<Option<I>> {
        tracing::Instrument::instrument(
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                let key = Self::key_str(&key)?;
                let field = self.spec.field();
                let raw = self.raw();
                let read = raw
                    .find_one(doc! { "_id": id.clone() })
                    .projection(doc! { field: { "$elemMatch": { I::KEY: &key } } });
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let found = in_session!(read, session.as_deref_mut())?;
                let Some(doc) = found else {
                    return Err(Self::not_found(id));
                };
                match doc.get_array(field).ok().and_then(|a| a.first()) {
                    Some(item) => Ok(Some(bson::deserialize_from_bson(item.clone())?)),
                    None => Ok(None),
                }
            },
            tracing::debug_span!(
                "pattern_runtime::attribute.get",
                model = self.span_model(),
                collection = self.span_collection()
            ),
        )
        .await
    }

    /// The documents matching `filter` (an attribute condition, [`and`]/[`or`] of them, or any
    /// filter).
    pub async fn find(&self, filter: impl crate::typed::IntoFilter<M>) -> Result<Vec<M>> {
        tracing::Instrument::instrument(
            async move {
                let filter = filter.into_filter()?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let coll = self.db.collection::<RawDocumentBuf>(M::SCHEMA.collection());
                let found = collect_in!(coll.find(filter), session.as_deref_mut())?;
                crate::model::read::decode_read(&found)
            },
            tracing::debug_span!(
                "pattern_runtime::attribute.find",
                model = self.span_model(),
                collection = self.span_collection()
            ),
        )
        .await
    }

    /// The documents matching `filter` that have the attribute `key`, sorted by its value (the
    /// first item with the key), then by `_id`. One aggregation: the documents are matched on
    /// the index (`{<field>.<key>: key}`), the sort value is computed per document; nothing is
    /// unwound.
    pub async fn find_sorted(
        &self,
        filter: impl crate::typed::IntoFilter<M>,
        key: impl IntoId<I::Key>,
        order: Order,
    ) -> Result<Vec<M>> {
        tracing::Instrument::instrument(
            async move {
                let filter = filter.into_filter()?;
                let key = Self::key_str(&key.into_id())?;
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
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let raw = self.raw();
                let sorted = raw.aggregate(pipeline).with_type::<RawDocumentBuf>();
                let found = collect_in!(sorted, session.as_deref_mut())?;
                crate::model::read::decode_read(&found)
            },
            tracing::debug_span!(
                "pattern_runtime::attribute.find_sorted",
                model = self.span_model(),
                collection = self.span_collection()
            ),
        )
        .await
    }
}

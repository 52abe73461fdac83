//! The attribute pattern's static data: the traits of keys and items, the spec generated code
//! builds, and what the sync and the doctor read from it.

use super::*;
use crate::schema::{spec, IndexesNeeded, KeptFields};

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

spec! {
    /// A model's `#[attribute]` field, as the derive declares it.
    #[derive(Debug)]
    pub struct AttributeSpec { pub(super) parts: AttributeParts }
    pub struct AttributeParts {
        /// The field's BSON name.
        pub field: &'static str,
        /// The compound index.
        pub index: IndexSpec,
    }
}

impl AttributeSpec {
    /// The field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// The `{<field>.<key>: 1, <field>.<value>: 1}` index.
    pub fn index(&'static self) -> &'static IndexSpec {
        &self.parts.index
    }

    /// The items' key field (BSON name), from the index's first key.
    pub(super) fn key_field(&self) -> &'static str {
        let path = self.parts.index.keys().first().map_or("", |k| k.path);
        path.strip_prefix(self.field())
            .and_then(|p| p.strip_prefix('.'))
            .unwrap_or(path)
    }

    /// The item list of `doc` with the later duplicates of a key dropped (as
    /// [`Attributes::set`] keeps them), and whether any was; `None` when the field is not an
    /// array.
    pub(super) fn deduplicated(&self, doc: &Document) -> Option<(Vec<Bson>, bool)> {
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

impl PatternSpec for AttributeSpec {
    fn indexes(&'static self, model: &'static ModelSchema) -> IndexesNeeded {
        vec![(model.collection(), self.index())]
    }
    /// The items: `set` keeps one per key, which a `$push` would not.
    fn kept_fields(&'static self, _model: &'static ModelSchema) -> KeptFields {
        vec![(
            self.field(),
            "the attribute pattern keeps one item per key: `set` or `unset` through the field's \
             `Attributes` handle",
        )]
    }

    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded::new(
            self.field(),
            "`#[attribute]` (one item per key)",
        )]
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
    ) -> Option<crate::error::Error> {
        let doc = doc?;
        let refused = |reason: &str| crate::error::Error::InvalidValue {
            field: self.field().to_owned(),
            reason: reason.to_owned(),
        };
        if self.deduplicated(doc).is_some_and(|(_, dropped)| dropped) {
            return Some(refused(
                "the attribute array holds a key twice: the attribute pattern keeps one item \
                 per key (`set` replaces the item of its key)",
            ));
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
            .then(|| {
                refused(
                    "an attribute item has no usable key (missing, not a string, starting with \
                     `$` or holding `.`): no query could name it",
                )
            })
    }

    /// Keys held twice, and items a query cannot name (no `find` beyond the sample).
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(super::check::audit_attributes(self, sample)))
    }
}

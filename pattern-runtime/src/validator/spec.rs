//! The `$jsonSchema` validator of a model, made from its stored shape and the bounds its
//! patterns keep, and the options it is installed with.

use bson::{doc, Bson, Document};

use crate::schema::shape::{object_schema, Shape};
use crate::schema::ModelSchema;

/// `validationLevel`: which writes the server checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Level {
    /// Inserts, and updates of documents that already pass (the default here: a collection
    /// holding documents of an older shape stays writable).
    Moderate,
    /// Every insert and update.
    Strict,
    /// Nothing is checked (only ever found installed: [`ValidatorOptions`] never installs it).
    Off,
}

/// `validationAction`: what the server does with a write that fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Logs it and writes it (the default here: nothing is refused until asked).
    Warn,
    /// Refuses it: [`Error::ValidationFailed`](crate::error::Error::ValidationFailed).
    Error,
}

impl Level {
    /// The server's name: `moderate`, `strict`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Moderate => "moderate",
            Level::Strict => "strict",
            Level::Off => "off",
        }
    }

    fn parse(s: &str) -> Option<Level> {
        match s {
            "moderate" => Some(Level::Moderate),
            "strict" => Some(Level::Strict),
            "off" => Some(Level::Off),
            _ => None,
        }
    }
}

impl Action {
    /// The server's name: `warn`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "warn",
            Action::Error => "error",
        }
    }

    fn parse(s: &str) -> Option<Action> {
        match s {
            "warn" => Some(Action::Warn),
            "error" => Some(Action::Error),
            _ => None,
        }
    }
}

/// How validators are made and installed by [`sync_validators`](super::sync_validators).
///
/// The defaults suit a collection that already holds data: `moderate` and `warn`, other fields
/// allowed beside the declared ones, and a validator installed only where there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatorOptions {
    pub(super) level: Level,
    pub(super) action: Action,
    pub(super) additional_properties: bool,
    pub(super) replace: bool,
}

impl Default for ValidatorOptions {
    fn default() -> Self {
        ValidatorOptions::new()
    }
}

impl ValidatorOptions {
    /// `moderate`, `warn`, other fields allowed, nothing replaced.
    pub fn new() -> Self {
        ValidatorOptions {
            level: Level::Moderate,
            action: Action::Warn,
            additional_properties: true,
            replace: false,
        }
    }

    /// `validationLevel: "strict"`: every write is checked.
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.level = Level::Strict;
        self
    }

    /// `validationAction: "error"`: a write that fails is refused.
    #[must_use]
    pub fn error(mut self) -> Self {
        self.action = Action::Error;
        self
    }

    /// `additionalProperties: false` on the model's documents and the structs in them: a field
    /// the model does not declare is refused.
    #[must_use]
    pub fn forbid_other_fields(mut self) -> Self {
        self.additional_properties = false;
        self
    }

    /// Replace an installed validator, level or action that differs from the declaration
    /// (`collMod`). Without it, the difference is reported ([`ValidatorState::Drift`]) and left
    /// as it is.
    ///
    /// [`ValidatorState::Drift`]: super::ValidatorState::Drift
    #[must_use]
    pub fn replace(mut self) -> Self {
        self.replace = true;
        self
    }

    /// The level installed.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The action installed.
    pub fn action(&self) -> Action {
        self.action
    }

    /// Whether fields the model does not declare are allowed.
    pub fn allows_other_fields(&self) -> bool {
        self.additional_properties
    }
}

/// A collection's validator settings as the server reports them (`listCollections`).
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    /// The validator, `None` when the collection has none.
    pub validator: Option<Document>,
    /// `validationLevel` (`strict` when the server does not say).
    pub level: Level,
    /// `validationAction` (`error` when the server does not say).
    pub action: Action,
}

impl Installed {
    /// From a `listCollections` entry's `options`.
    pub(super) fn from_options(options: &Document) -> Installed {
        let validator = match options.get("validator") {
            Some(Bson::Document(v)) if !v.is_empty() => Some(v.clone()),
            _ => None,
        };
        Installed {
            validator,
            level: options
                .get_str("validationLevel")
                .ok()
                .and_then(Level::parse)
                .unwrap_or(Level::Strict),
            action: options
                .get_str("validationAction")
                .ok()
                .and_then(Action::parse)
                .unwrap_or(Action::Error),
        }
    }
}

/// A validator a model declares: for its own collection, or for documents one of its patterns
/// keeps in another ([`ModelSchema::validators`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// The collection.
    pub collection: &'static str,
    /// What the collection holds: `"documents"` (the model's own: a measurement's are its
    /// bucket or window documents), or a pattern's (`"revisions"`, `"overflow documents"`,
    /// `"counter shards"`).
    pub documents: &'static str,
    /// The validator, or why none can be made.
    pub validator: std::result::Result<Document, &'static str>,
}

impl ModelSchema {
    /// The model's `$jsonSchema` validator (`{"$jsonSchema": {...}}`), made from its stored
    /// fields: each field's BSON type, the structs in it as objects, `Option` fields nullable
    /// and not required, the bounds its patterns keep on arrays (`maxItems`: a subset's or an
    /// outlier's `limit`, `#[bounded(n)]`); for an enum model, a `oneOf` branch per tag; for a
    /// `#[bucket]` measurement, its bucket or window documents. `None` where none can be made (a
    /// native series: the server takes no validator on a time-series collection). See
    /// [the module](super) for what is left out.
    pub fn validator(&self, options: &ValidatorOptions) -> Option<Document> {
        self.own_validator(options).ok()
    }

    /// Every validator the model declares: its own collection's ([`validator`](Self::validator))
    /// first, then one per collection where its patterns keep documents (a `#[versioned]`
    /// history, an `#[outlier]`'s overflow documents, an `#[approximate(sharded)]` field's
    /// shards).
    pub fn validators(&'static self, options: &ValidatorOptions) -> Vec<Declared> {
        let mut all = vec![Declared {
            collection: self.collection(),
            documents: "documents",
            validator: self.own_validator(options),
        }];
        for pattern in self.patterns() {
            for companion in pattern.companions(self) {
                all.push(Declared {
                    collection: companion.collection,
                    documents: companion.documents,
                    validator: Ok(doc! {
                        "$jsonSchema": companion.shape.schema(options.additional_properties),
                    }),
                });
            }
        }
        all
    }

    fn own_validator(
        &self,
        options: &ValidatorOptions,
    ) -> std::result::Result<Document, &'static str> {
        let mut shape = self
            .shape()
            .ok_or("the derive made no shape for this model")?;
        for pattern in self.patterns() {
            shape = pattern.stored_shape(shape)?;
        }
        let schema = match shape {
            Shape::Object(properties) => object_schema(&properties, options.additional_properties),
            tagged @ Shape::Tagged { .. } => tagged.schema(options.additional_properties),
            _ => return Err("the model's documents are not objects of known fields"),
        };
        let schema = with_max_items(schema, &self.max_items());
        Ok(doc! { "$jsonSchema": schema })
    }

    /// The shape of the model's `_id` ([`Shape::Any`] where it is not known), for the
    /// documents that refer to one of its documents (a revision's `docId`).
    pub(crate) fn id_shape(&self) -> Shape {
        self.property_shape("_id")
    }

    /// The shape of the model's top-level field `name` (its BSON name), [`Shape::Any`] where
    /// it is not known.
    pub(crate) fn property_shape(&self, name: &str) -> Shape {
        match self.shape() {
            Some(Shape::Object(properties)) => properties
                .into_iter()
                .find(|p| p.name == name)
                .map_or(Shape::Any, |p| p.shape),
            _ => Shape::Any,
        }
    }

    /// The `maxItems` of the model's bounded arrays, by field.
    fn max_items(&self) -> Vec<(&'static str, u32)> {
        self.patterns()
            .iter()
            .flat_map(|p| p.bounded_arrays())
            .filter_map(|b| b.max.map(|m| (b.field, m)))
            .collect()
    }
}

/// `schema` with `maxItems` on each bounded array property (a property of an unknown type
/// gets it too: `maxItems` applies to arrays only).
fn with_max_items(mut schema: Document, bounds: &[(&'static str, u32)]) -> Document {
    if let Ok(properties) = schema.get_document_mut("properties") {
        for (field, max) in bounds {
            match properties.get_document_mut(*field) {
                Ok(property) => {
                    property.insert("maxItems", i64::from(*max));
                }
                Err(_) => {
                    properties.insert(*field, doc! { "maxItems": i64::from(*max) });
                }
            }
        }
    }
    schema
}

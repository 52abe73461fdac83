//! Installing the models' validators: created with the collection, or applied with `collMod`
//! where there is none; an installed one that differs is reported, and replaced only when asked.

use std::fmt;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Database;
use tracing::Instrument;

use super::spec::{Installed, ValidatorOptions};
use crate::error::{server_code, Result, NAMESPACE_EXISTS};
use crate::schema::ModelSchema;

/// What [`sync_validators`] found and did, per model.
#[derive(Debug, Clone, Default)]
pub struct ValidatorReport {
    /// One entry per model, in the order given.
    pub models: Vec<ValidatorStatus>,
}

impl ValidatorReport {
    /// The models whose installed validator differs from the declaration and was left alone.
    pub fn drifted(&self) -> impl Iterator<Item = &ValidatorStatus> {
        self.models
            .iter()
            .filter(|s| matches!(s.state, ValidatorState::Drift { .. }))
    }
}

/// One model's validator after [`sync_validators`].
#[derive(Debug, Clone)]
pub struct ValidatorStatus {
    /// The model's name.
    pub model: &'static str,
    /// Its collection.
    pub collection: &'static str,
    /// What was found or done.
    pub state: ValidatorState,
}

/// What [`sync_validators`] found or did for one model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ValidatorState {
    /// The collection did not exist: created with the validator.
    Created,
    /// The collection had no validator: the declared one was applied (`collMod`).
    Applied,
    /// The installed validator, level and action are the declared ones.
    Unchanged,
    /// The installed validator, level or action differed and was replaced (asked with
    /// [`ValidatorOptions::replace`]); what was installed before.
    Replaced {
        /// The settings before.
        before: Installed,
    },
    /// The installed validator, level or action differs from the declaration (changed by
    /// hand, or the model changed), and was left as it is.
    Drift {
        /// What the server has.
        installed: Installed,
        /// The declared validator.
        declared: Box<Document>,
    },
    /// No validator for this model: why.
    NotGenerated {
        /// Why not (a bucket's measurement, a collection several models share).
        reason: &'static str,
    },
}

impl fmt::Display for ValidatorStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (model, collection) = (self.model, self.collection);
        match &self.state {
            ValidatorState::Created => {
                write!(f, "{model} ({collection}): created with its validator")
            }
            ValidatorState::Applied => write!(f, "{model} ({collection}): validator applied"),
            ValidatorState::Unchanged => write!(f, "{model} ({collection}): validator as declared"),
            ValidatorState::Replaced { .. } => {
                write!(f, "{model} ({collection}): validator replaced")
            }
            ValidatorState::Drift { installed, .. } => write!(
                f,
                "{model} ({collection}): the installed validator ({}, {}) differs from the \
                 declaration; left as it is (`ValidatorOptions::replace()` replaces it)",
                installed.level.as_str(),
                installed.action.as_str()
            ),
            ValidatorState::NotGenerated { reason } => {
                write!(f, "{model} ({collection}): no validator, {reason}")
            }
        }
    }
}

/// Installs the validators of `models` in `db` ([`ModelSchema::validator`]): a missing
/// collection is created with its validator, one without a validator gets it (`collMod`), with
/// the options' level and action. An installed validator, level or action that differs from the
/// declaration is [`ValidatorState::Drift`] and left as it is, unless
/// [`ValidatorOptions::replace`]: a validator is never replaced, tightened or switched to
/// `error` unless asked. Per model, one `listCollections` and at most one `create` or `collMod`.
pub async fn sync_validators(
    db: &Database,
    models: &[&'static ModelSchema],
    options: &ValidatorOptions,
) -> Result<ValidatorReport> {
    let span = tracing::info_span!(
        "pattern_runtime::validator.sync_validators",
        database = db.name(),
        models = models.len(),
    );
    async {
        let mut report = ValidatorReport::default();
        for model in models {
            let state = match declared(model, models, options) {
                Err(reason) => ValidatorState::NotGenerated { reason },
                Ok(validator) => install(db, model.collection(), validator, options).await?,
            };
            tracing::debug!(
                model = model.name(),
                collection = model.collection(),
                state = ?state,
                "validator synced"
            );
            report.models.push(ValidatorStatus {
                model: model.name(),
                collection: model.collection(),
                state,
            });
        }
        let drifted = report.drifted().count();
        tracing::info!(models = report.models.len(), drifted, "validators synced");
        Ok(report)
    }
    .instrument(span)
    .await
}

/// The validator `model` declares, or why there is none.
fn declared(
    model: &'static ModelSchema,
    models: &[&'static ModelSchema],
    options: &ValidatorOptions,
) -> std::result::Result<Document, &'static str> {
    let sharing = models
        .iter()
        .filter(|m| m.collection() == model.collection() && m.validator(options).is_some())
        .count();
    if sharing > 1 {
        return Err("several models with their own shapes share the collection");
    }
    model
        .validator(options)
        .ok_or("the derive makes none for a bucket's measurement yet")
}

/// The collection's validator settings, `None` when it does not exist.
pub(crate) async fn installed(db: &Database, collection: &str) -> Result<Option<Installed>> {
    let found: Vec<Document> = db
        .run_cursor_command(doc! {
            "listCollections": 1,
            "filter": { "name": collection },
        })
        .await?
        .try_collect()
        .await?;
    Ok(found.first().map(|entry| {
        let options = entry.get_document("options").cloned().unwrap_or_default();
        Installed::from_options(&options)
    }))
}

async fn install(
    db: &Database,
    collection: &'static str,
    validator: Document,
    options: &ValidatorOptions,
) -> Result<ValidatorState> {
    let settings = |command: Document| {
        let mut command = command;
        command.insert("validator", validator.clone());
        command.insert("validationLevel", options.level.as_str());
        command.insert("validationAction", options.action.as_str());
        command
    };
    let now = match installed(db, collection).await? {
        Some(now) => now,
        None => match db
            .run_command(settings(doc! { "create": collection }))
            .await
        {
            Ok(_) => return Ok(ValidatorState::Created),
            // Created meanwhile (another process syncing): compare with what it has, read
            // once more. Still not listed (a view of that name, say): the server's refusal.
            Err(e) if server_code(&e) == Some(NAMESPACE_EXISTS) => {
                match installed(db, collection).await? {
                    Some(now) => now,
                    None => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        },
    };
    let as_declared = now.validator.as_ref().is_some_and(|v| {
        same(
            &Bson::Document(v.clone()),
            &Bson::Document(validator.clone()),
        )
    }) && now.level == options.level
        && now.action == options.action;
    if as_declared {
        return Ok(ValidatorState::Unchanged);
    }
    if now.validator.is_none() {
        db.run_command(settings(doc! { "collMod": collection }))
            .await?;
        return Ok(ValidatorState::Applied);
    }
    if options.replace {
        db.run_command(settings(doc! { "collMod": collection }))
            .await?;
        return Ok(ValidatorState::Replaced { before: now });
    }
    Ok(ValidatorState::Drift {
        installed: now,
        declared: Box::new(validator),
    })
}

/// Whether two validators are the same: documents as maps (the server may list keys in another
/// order), integers by value.
fn same(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        (Bson::Int32(x), Bson::Int64(y)) | (Bson::Int64(y), Bson::Int32(x)) => i64::from(*x) == *y,
        _ => a == b,
    }
}

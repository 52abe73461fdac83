//! Installing the models' validators: created with the collection, or applied with `collMod`
//! where there is none; an installed one that differs is reported, and replaced only when asked.

use std::fmt;

use bson::{doc, Bson, Document};
use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::Database;
use tracing::Instrument;

use super::spec::{Declared, Installed, ValidatorOptions};
use crate::error::{server_code, Result, NAMESPACE_EXISTS};
use crate::schema::ModelSchema;

/// What [`sync_validators`] found and did, per model and collection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidatorReport {
    /// One entry per model, in the order given, each followed by one per collection where its
    /// patterns keep documents ([`ModelSchema::validators`]).
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
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatorStatus {
    /// The model's name.
    pub model: &'static str,
    /// The collection.
    pub collection: &'static str,
    /// What the collection holds: `"documents"` (the model's own: a measurement's are its
    /// bucket or window documents), or what a pattern keeps there for the model
    /// (`"revisions"`, `"overflow documents"`, `"counter shards"`).
    pub documents: &'static str,
    /// What was found or done.
    pub state: ValidatorState,
}

/// What [`sync_validators`] found or did for one model.
#[derive(Debug, Clone, PartialEq)]
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
        /// Why not (a native time-series series, a collection several models share).
        reason: &'static str,
    },
}

impl fmt::Display for ValidatorStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let model = self.model;
        let collection = match self.documents {
            "documents" => self.collection.to_owned(),
            other => format!("{}, {other}", self.collection),
        };
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

/// Installs the validators of `models` in `db` ([`ModelSchema::validators`]: each model's own,
/// and one per collection where its patterns keep documents): a missing collection is created
/// with its validator, one without a validator gets it (`collMod`), with the options' level and
/// action. An installed validator, level or action that differs from the
/// declaration is [`ValidatorState::Drift`] and left as it is, unless
/// [`ValidatorOptions::replace`]: a validator is never replaced, tightened or switched to
/// `error` unless asked. One `listCollections` for all, then per collection at most one
/// `create` or `collMod`, the collections concurrently; the first error is returned. A collection several different shapes share (two models' documents) gets none:
/// [`ValidatorState::NotGenerated`].
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
        let declared: Vec<(&'static ModelSchema, Declared)> = models
            .iter()
            .flat_map(|m| m.validators(options).into_iter().map(move |d| (*m, d)))
            .collect();
        // Per entry: why there is no validator, or the collection to install one in; each
        // collection once (the same validator declared twice, by a model listed twice, is one).
        let mut plan: Vec<std::result::Result<&'static str, &'static str>> = Vec::new();
        let mut to_install: Vec<(&'static str, &Document)> = Vec::new();
        for (_, d) in &declared {
            plan.push(match &d.validator {
                Err(reason) => Err(*reason),
                Ok(validator) => {
                    let shared = declared.iter().any(|(_, other)| {
                        other.collection == d.collection
                            && matches!(&other.validator, Ok(v) if v != validator)
                    });
                    if shared {
                        Err("documents of several shapes share the collection")
                    } else {
                        if !to_install.iter().any(|(c, _)| *c == d.collection) {
                            to_install.push((d.collection, validator));
                        }
                        Ok(d.collection)
                    }
                }
            });
        }
        // One `listCollections` for all, then the collections concurrently.
        let names: Vec<&str> = to_install.iter().map(|(c, _)| *c).collect();
        let mut now = installed_many(db, &names).await?;
        let states = join_all(to_install.iter().map(|(collection, validator)| {
            let found = now.remove(*collection);
            install(db, collection, found, (*validator).clone(), options)
        }))
        .await;
        let mut done: Vec<(&'static str, ValidatorState)> = Vec::new();
        for ((collection, _), state) in to_install.iter().zip(states) {
            done.push((collection, state?));
        }
        let mut report = ValidatorReport::default();
        for ((model, d), planned) in declared.iter().zip(plan) {
            let state = match planned {
                Err(reason) => ValidatorState::NotGenerated { reason },
                Ok(collection) => done
                    .iter()
                    .find(|(c, _)| *c == collection)
                    .map(|(_, state)| state.clone())
                    .unwrap_or(ValidatorState::NotGenerated {
                        reason: "not installed",
                    }),
            };
            tracing::debug!(
                model = model.name(),
                collection = d.collection,
                documents = d.documents,
                state = ?state,
                "validator synced"
            );
            report.models.push(ValidatorStatus {
                model: model.name(),
                collection: d.collection,
                documents: d.documents,
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

/// The validator settings of those of `names` that exist, by name: one `listCollections`.
async fn installed_many(
    db: &Database,
    names: &[&str],
) -> Result<std::collections::HashMap<String, Installed>> {
    if names.is_empty() {
        return Ok(Default::default());
    }
    let found: Vec<Document> = db
        .run_cursor_command(doc! {
            "listCollections": 1,
            "filter": { "name": { "$in": names } },
        })
        .await?
        .try_collect()
        .await?;
    Ok(found
        .iter()
        .filter_map(|entry| {
            let name = entry.get_str("name").ok()?;
            let options = entry.get_document("options").cloned().unwrap_or_default();
            Some((name.to_owned(), Installed::from_options(&options)))
        })
        .collect())
}

/// The collection's validator settings, `None` when it does not exist.
pub(crate) async fn installed(db: &Database, collection: &str) -> Result<Option<Installed>> {
    Ok(installed_many(db, &[collection]).await?.remove(collection))
}

async fn install(
    db: &Database,
    collection: &str,
    found: Option<Installed>,
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
    let now = match found {
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

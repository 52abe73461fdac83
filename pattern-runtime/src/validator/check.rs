//! The stored documents the declared validator would refuse: what the doctor counts before a
//! user switches the validator to `error`.

use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Database;

use super::spec::ValidatorOptions;
use crate::error::Result;
use crate::finding::{examples, plural, Check, Finding};
use crate::schema::ModelSchema;

/// How many `_id`s of refused documents a finding lists.
const SHOWN: i64 = 5;

/// The documents of a model's collection its declared validator refuses: how many, and the
/// `_id`s of the first few.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Refused {
    /// How many stored documents fail the validator.
    pub count: u64,
    /// The `_id`s of up to five of them.
    pub examples: Vec<Bson>,
}

/// Counts the stored documents of `model` that its declared validator
/// ([`ModelSchema::validator`]) refuses: `{$nor: [validator]}` over the whole collection, one
/// `count` and one `find` of a few `_id`s. `None` for a model without a validator.
pub async fn refused_documents(
    db: &Database,
    model: &'static ModelSchema,
    options: &ValidatorOptions,
) -> Result<Option<Refused>> {
    refused_within(db, model, options, None).await
}

/// [`refused_documents`], each command bounded by `max_time` when given.
pub(crate) async fn refused_within(
    db: &Database,
    model: &'static ModelSchema,
    options: &ValidatorOptions,
    max_time: Option<Duration>,
) -> Result<Option<Refused>> {
    let Some(validator) = model.validator(options) else {
        return Ok(None);
    };
    let filter = doc! { "$nor": [validator] };
    let coll = db.collection::<Document>(model.collection());
    let mut count = coll.count_documents(filter.clone());
    if let Some(limit) = max_time {
        count = count.max_time(limit);
    }
    let count = count.await?;
    if count == 0 {
        return Ok(Some(Refused::default()));
    }
    let mut find = coll
        .find(filter)
        .projection(doc! { "_id": 1 })
        .sort(doc! { "_id": 1 })
        .limit(SHOWN);
    if let Some(limit) = max_time {
        find = find.max_time(limit);
    }
    let shown: Vec<Document> = find.await?.try_collect().await?;
    Ok(Some(Refused {
        count,
        examples: shown.iter().filter_map(|d| d.get("_id").cloned()).collect(),
    }))
}

/// The doctor's finding for `model`: stored documents its declared validator (with the default
/// options) refuses.
pub(crate) async fn audit(
    db: &Database,
    model: &'static ModelSchema,
    max_time: Duration,
) -> Result<Option<Finding>> {
    let options = ValidatorOptions::new();
    let Some(refused) = refused_within(db, model, &options, Some(max_time)).await? else {
        return Ok(None);
    };
    if refused.count == 0 {
        return Ok(None);
    }
    Ok(Some(
        Finding {
            check: Check::Validator,
            model: Some(model.name()),
            collection: model.collection().to_owned(),
            subject: "document".to_owned(),
            figure: format!(
                "{} fail the model's validator; {}",
                plural(refused.count, "stored document"),
                examples(&refused.examples)
            ),
            fix: format!(
                "rewrite or remove them before switching the validator to `error` \
                 (`validator::refused_documents(&db, {}::SCHEMA, ..)` lists them)",
                model.name()
            ),
            documents: Vec::new(),
        }
        .about(refused.examples),
    ))
}

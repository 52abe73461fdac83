//! Native time-series collections: created with the declared options, or checked.

use std::time::Duration;

use bson::doc;
use futures_util::stream::TryStreamExt;
use mongodb::Database;

use super::SeriesSpec;
use crate::error::{server_code, Error, Result};
use crate::finding::{Check, Finding};
use crate::schema::Sample;

/// Creates the native time-series collection of `spec`, or checks the existing one. An error is
/// not an event here: the operation that called this reports it.
pub(crate) async fn ensure_timeseries(db: &Database, spec: &'static SeriesSpec) -> Result<()> {
    tracing::Instrument::instrument(
        async move {
            let name = spec.collection();
            for _ in 0..2 {
                let existing: Vec<_> = db
                    .list_collections()
                    .filter(doc! { "name": name })
                    .await?
                    .try_collect()
                    .await?;
                if let Some(found) = existing.first() {
                    check_timeseries(spec, found)?;
                    tracing::debug!("time-series collection exists with the declared options");
                    return Ok(());
                }
                let mut create = db
                    .create_collection(name)
                    .timeseries(spec.timeseries_options());
                if let Some(secs) = spec.expire_after_seconds() {
                    create = create.expire_after_seconds(Duration::from_secs(secs));
                }
                match create.await {
                    Ok(()) => {
                        tracing::debug!(created = 1, "time-series collection created");
                        return Ok(());
                    }
                    // Created concurrently (or exists as something else): check what is there.
                    Err(e) if server_code(&e) == Some(crate::error::NAMESPACE_EXISTS) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            Err(Error::CollectionConflict {
                collection: name.to_owned(),
                reason: "it could neither be created nor found".to_owned(),
            })
        },
        tracing::debug_span!(
            "pattern_runtime::bucket.ensure_timeseries",
            collection = spec.collection()
        ),
    )
    .await
}

fn check_timeseries(
    spec: &SeriesSpec,
    found: &mongodb::results::CollectionSpecification,
) -> Result<()> {
    let conflict = |reason: String| {
        Err(Error::CollectionConflict {
            collection: spec.collection().to_owned(),
            reason,
        })
    };
    let Some(ts) = found.options.timeseries.as_ref() else {
        let what = match found.collection_type {
            mongodb::results::CollectionType::View => "a view",
            _ => "a normal collection",
        };
        return conflict(format!(
            "it exists as {what}, not a time-series collection, and cannot be converted: drop \
             or rename it (or copy its documents into a new time-series collection)"
        ));
    };
    let declared = spec.timeseries_options();
    let mut differences = Vec::new();
    if ts.time_field != declared.time_field {
        differences.push(format!(
            "timeField is `{}`, declared `{}`",
            ts.time_field, declared.time_field
        ));
    }
    if ts.meta_field != declared.meta_field {
        differences.push(format!(
            "metaField is {:?}, declared {:?}",
            ts.meta_field, declared.meta_field
        ));
    }
    if declared.granularity.is_some() && ts.granularity != declared.granularity {
        differences.push(format!(
            "granularity is {:?}, declared {:?}",
            ts.granularity, declared.granularity
        ));
    }
    if declared.bucket_max_span.is_some() && ts.bucket_max_span != declared.bucket_max_span {
        differences.push(format!(
            "bucketMaxSpanSeconds is {:?}, declared {:?}",
            ts.bucket_max_span, declared.bucket_max_span
        ));
    }
    let expire = spec.expire_after_seconds().map(Duration::from_secs);
    if found.options.expire_after_seconds != expire {
        differences.push(format!(
            "expireAfterSeconds is {:?}, declared {:?} (change it with `collMod`)",
            found.options.expire_after_seconds.map(|d| d.as_secs()),
            expire.map(|d| d.as_secs())
        ));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        conflict(format!(
            "the time-series collection exists with other options: {}",
            differences.join("; ")
        ))
    }
}

/// The doctor's check of a native series declared with `expire_after = secs`: the collection's
/// `expireAfterSeconds` (one `listCollections`). No collection yet, nothing to find; a collection
/// that is not a time-series one is left to the sync, which refuses it.
pub(super) async fn audit_expiry(
    sample: &Sample<'_>,
    spec: &SeriesSpec,
    secs: u64,
) -> Result<Vec<Finding>> {
    let name = spec.collection();
    let found: Vec<_> = sample
        .db
        .list_collections()
        .filter(doc! { "name": name })
        .await?
        .try_collect()
        .await?;
    let Some(found) = found.first() else {
        return Ok(Vec::new());
    };
    if found.options.timeseries.is_none() {
        return Ok(Vec::new());
    }
    let actual = found.options.expire_after_seconds.map(|d| d.as_secs());
    if actual == Some(secs) {
        return Ok(Vec::new());
    }
    let figure = match actual {
        None => format!("declared to expire after {secs} s; the collection never expires data"),
        Some(other) => format!(
            "declared to expire after {secs} s; the collection's expireAfterSeconds is {other}"
        ),
    };
    Ok(vec![sample.finding(
        Check::MissingTtl,
        spec.time(),
        figure,
        format!(
            "`db.runCommand({{collMod: \"{name}\", expireAfterSeconds: {secs}}})`; until then \
             the series refuses the collection (its options differ from the declaration)"
        ),
    )])
}

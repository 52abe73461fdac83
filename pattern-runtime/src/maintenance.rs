//! The one `check` and `repair` of every pattern handle: the checks read every stored document
//! a page at a time and run the pattern's audit (the one the [doctor](mod@crate::doctor) runs
//! over a sample) on each page; the repairs are each pattern's, and end with a check.

use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::{Collection, Database};

use crate::error::Result;
use crate::finding::{CheckReport, RepairReport};
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{collect_in, Transaction};

/// Documents audited together: one page of a check.
pub(crate) const PAGE: usize = 500;

/// The time limit of each command a check's audit sends.
const MAX_TIME: Duration = Duration::from_secs(120);

/// One pattern on one model: what a check audits.
pub(crate) type Target = (&'static ModelSchema, &'static dyn PatternSpec);

/// The patterns of `model` whose spec is a `S`.
pub(crate) fn targets<S: PatternSpec>(model: &'static ModelSchema) -> Vec<Target> {
    model
        .patterns()
        .iter()
        .copied()
        .filter(|p| (*p as &dyn std::any::Any).is::<S>())
        .map(|p| (model, p))
        .collect()
}

/// Runs the audit of each target over every document of its model's collection, [`PAGE`] at a
/// time (one cursor per model, in `_id` order). Writes nothing. In the caller's transaction
/// `tx`, every read is made in it: the documents are read whole first (a cursor read in the
/// session cannot stay open while the audits send theirs), then audited a page at a time.
pub(crate) async fn check(
    db: &Database,
    tx: Option<&Transaction>,
    targets: &[Target],
) -> Result<CheckReport> {
    let mut report = CheckReport::default();
    let mut models: Vec<&'static ModelSchema> = Vec::new();
    for (model, _) in targets {
        if !models.iter().any(|m| std::ptr::eq(*m, *model)) {
            models.push(model);
        }
    }
    for model in models {
        let specs: Vec<&'static dyn PatternSpec> = targets
            .iter()
            .filter(|(m, _)| std::ptr::eq(*m, model))
            .map(|(_, p)| *p)
            .collect();
        let coll: Collection<Document> = db.collection(model.collection());
        let find = coll
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .batch_size(PAGE as u32);
        let audit = |page: Vec<Document>| {
            let specs = &specs;
            async move {
                let sample = Sample {
                    db,
                    model,
                    documents: &page,
                    max_time: MAX_TIME,
                    tx,
                };
                let mut findings = Vec::new();
                for spec in specs {
                    if let Some(audit) = spec.audit(&sample) {
                        findings.extend(audit.await?);
                    }
                }
                Ok::<_, crate::error::Error>((page.len() as u64, findings))
            }
        };
        if tx.is_some() {
            let all: Vec<Document> = {
                let mut session = Transaction::session_of(tx).await?;
                collect_in!(find, session.as_deref_mut())?
            };
            for page in all.chunks(PAGE) {
                let (examined, findings) = audit(page.to_vec()).await?;
                report.examined += examined;
                report.findings.extend(findings);
            }
        } else {
            let mut cursor = find.await?;
            let mut page: Vec<Document> = Vec::with_capacity(PAGE);
            loop {
                let next = cursor.try_next().await?;
                let done = next.is_none();
                page.extend(next);
                if page.len() == PAGE || (done && !page.is_empty()) {
                    let (examined, findings) = audit(std::mem::take(&mut page)).await?;
                    report.examined += examined;
                    report.findings.extend(findings);
                }
                if done {
                    break;
                }
            }
        }
        // What the patterns keep elsewhere for documents that are gone: once, over all of it.
        for spec in &specs {
            if let Some(audit) = spec.audit_orphans(db, tx, model, None, MAX_TIME) {
                report.findings.extend(audit.await?);
            }
        }
    }
    // A check of the collection rather than of its documents (a native series' expiry) is
    // found on every page: once is enough.
    let mut unique = Vec::with_capacity(report.findings.len());
    for finding in report.findings.drain(..) {
        if !unique.contains(&finding) {
            unique.push(finding);
        }
    }
    report.findings = unique;
    tracing::info!(
        examined = report.examined,
        findings = report.findings.len(),
        "checked"
    );
    Ok(report)
}

/// Runs the audit of each target once, on no documents: the checks of a collection's
/// settings, without reading its documents.
pub(crate) async fn check_settings(db: &Database, targets: &[Target]) -> Result<CheckReport> {
    let mut report = CheckReport::default();
    for &(model, spec) in targets {
        let sample = Sample {
            db,
            model,
            documents: &[],
            max_time: MAX_TIME,
            tx: None,
        };
        if let Some(audit) = spec.audit(&sample) {
            report.findings.extend(audit.await?);
        };
    }
    Ok(report)
}

/// A repair's report: `repaired` documents rewritten, then what a check of `targets` still
/// finds.
pub(crate) async fn after_repair(
    db: &Database,
    tx: Option<&Transaction>,
    targets: &[Target],
    repaired: u64,
) -> Result<RepairReport> {
    let left = check(db, tx, targets).await?.findings;
    tracing::info!(repaired, left = left.len(), "repaired");
    Ok(RepairReport { repaired, left })
}

/// The documents of `kept_in` whose `key` (a dotted path) names a document `model`'s collection
/// does not hold: the [`PatternSpec::audit_orphans`] of a pattern that keeps documents
/// elsewhere. Groups them by `key` (over a `$sample` of `sample` when given), then looks the
/// keys up a thousand at a time through the `_id` index. Returns the keys nothing holds and how
/// many documents name them.
pub(crate) async fn orphans(
    db: &Database,
    tx: Option<&Transaction>,
    model: &'static ModelSchema,
    kept_in: &str,
    key: &str,
    sample: Option<u32>,
    max_time: Duration,
) -> Result<(Vec<Bson>, u64)> {
    let mut pipeline = Vec::new();
    if let Some(n) = sample {
        pipeline.push(doc! { "$sample": { "size": i64::from(n) } });
    }
    pipeline.push(doc! { "$group": { "_id": format!("${key}"), "n": { "$sum": 1 } } });
    // In the caller's transaction when the check runs in one.
    let mut session = Transaction::session_of(tx).await?;
    let kept = db.collection::<Document>(kept_in);
    let groups: Vec<Document> = collect_in!(
        kept.aggregate(pipeline).max_time(max_time),
        session.as_deref_mut()
    )?;
    let holders: Collection<Document> = db.collection(model.collection());
    let (mut missing, mut documents) = (Vec::new(), 0u64);
    for chunk in groups.chunks(1000) {
        let ids: Vec<Bson> = chunk.iter().filter_map(|g| g.get("_id").cloned()).collect();
        let find = holders
            .find(doc! { "_id": { "$in": ids } })
            .projection(doc! { "_id": 1 })
            .max_time(max_time);
        let found: std::collections::HashSet<String> = collect_in!(find, session.as_deref_mut())?
            .iter()
            .filter_map(|d| d.get("_id").map(crate::finding::id_key))
            .collect();
        for group in chunk {
            let id = group.get("_id").cloned().unwrap_or(Bson::Null);
            if !found.contains(&crate::finding::id_key(&id)) {
                documents += group
                    .get("n")
                    .and_then(crate::finding::number)
                    .map_or(0, |n| n as u64);
                missing.push(id);
            }
        }
    }
    Ok((missing, documents))
}

/// [`Dependent::held`](crate::schema::Dependent::held) of documents kept in `kept_in` for
/// `model`'s documents (by `key`, a dotted path): a delete of each `model` document they name
/// and that is gone.
pub(crate) async fn held_for_gone(
    db: &Database,
    model: &'static ModelSchema,
    kept_in: &str,
    key: &str,
) -> mongodb::error::Result<Vec<crate::schema::Change>> {
    let (gone, _) = orphans(db, None, model, kept_in, key, None, MAX_TIME)
        .await
        .map_err(crate::error::refusal)?;
    Ok(crate::derived::deleted(gone))
}

//! The index writes a sync sends: `createIndexes`, a drop and create to replace an index,
//! `collMod` for what changes in place, and the report read back from `listIndexes`.

use super::*;

/// Whether this sync changed the report's index with `collMod` (hidden it, or changed its
/// `hidden` or `expireAfterSeconds` in place).
pub(super) fn changed_in_place(report: &IndexReport, before: &[Document]) -> bool {
    match &report.status {
        IndexStatus::HiddenUnmanaged => true,
        IndexStatus::Replaced { differences } => {
            fixable_in_place(differences)
                && before
                    .iter()
                    .any(|e| e.get_str("name").ok() == Some(report.name.as_str()))
        }
        _ => false,
    }
}

/// Corrects the statuses of what was changed in place to what `after` (the indexes as the
/// server lists them after the changes) shows.
pub(super) fn reconcile(reports: &mut [IndexReport], before: &[Document], after: &[Document]) {
    for report in reports.iter_mut() {
        if !changed_in_place(report, before) {
            continue;
        }
        let now = after
            .iter()
            .find(|e| e.get_str("name").ok() == Some(report.name.as_str()));
        match (&report.status, now, report.declared) {
            (IndexStatus::HiddenUnmanaged, Some(e), _)
                if !e.get_bool("hidden").unwrap_or(false) =>
            {
                tracing::warn!(
                    collection = %report.collection,
                    index = %report.name,
                    "the server acknowledged hiding the index, but it is still visible"
                );
                report.status = IndexStatus::NotHidden;
            }
            (IndexStatus::Replaced { .. }, Some(e), Some(spec)) => {
                let still = differences(&spec, e);
                if !still.is_empty() {
                    tracing::warn!(
                        collection = %report.collection,
                        index = %report.name,
                        differences = ?option_names(&still),
                        "the server acknowledged changing the index in place, but it still differs"
                    );
                    report.status = IndexStatus::Mismatched { differences: still };
                }
            }
            _ => {}
        }
    }
}

/// One `createIndexes` for every missing index; a server conflict becomes
/// [`Error::IndexConflict`] naming the declaration and the existing index it collides with.
pub(super) async fn create_indexes(
    db: &Database,
    collection: &str,
    missing: &[Declared],
    existing: &[Document],
) -> Result<()> {
    let indexes: Vec<Document> = missing.iter().map(|d| d.spec.to_document()).collect();
    let command = doc! { "createIndexes": collection, "indexes": indexes };
    let Err(e) = db.run_command(command).await else {
        return Ok(());
    };
    let code = server_code(&e);
    let Some(code @ (INDEX_OPTIONS_CONFLICT | INDEX_KEY_SPECS_CONFLICT)) = code else {
        return Err(e.into());
    };
    // Which declaration collided, and with what: the existing index with its name or its keys.
    let collides = |d: &Declared, x: &Document| {
        x.get_str("name").ok() == Some(d.spec.name()) || same_keys(d.spec, x)
    };
    let culprit = missing
        .iter()
        .find_map(|d| {
            existing
                .iter()
                .find(|x| collides(d, x))
                .map(|x| (d, Some(x)))
        })
        .or_else(|| missing.first().map(|d| (d, None)));
    let Some((d, other)) = culprit else {
        return Err(e.into());
    };
    Err(Error::IndexConflict(Box::new(IndexConflict {
        model: d.model,
        collection: collection.to_owned(),
        index: d.spec.name(),
        declared: d.spec.to_document(),
        existing: other.cloned(),
        code,
        message: server_message(&e),
    })))
}

pub(super) async fn replace_index(
    db: &Database,
    collection: &str,
    d: &Declared,
    existing_index: &Document,
    diffs: &[Difference],
    existing: &[Document],
) -> Result<()> {
    let existing_name = existing_index.get_str("name").unwrap_or_default();
    if existing_name == d.spec.name() && fixable_in_place(diffs) {
        let mut change = doc! { "name": d.spec.name(), "hidden": d.spec.is_hidden() };
        if let Some(secs) = d.spec.options_document().get("expireAfterSeconds") {
            change.insert("expireAfterSeconds", secs.clone());
        }
        coll_mod_index(db, collection, change).await?;
        tracing::debug!(
            index = d.spec.name(),
            differences = ?option_names(diffs),
            "index changed in place (collMod)"
        );
        return Ok(());
    }
    let drop = doc! { "dropIndexes": collection, "index": existing_name };
    match db.run_command(drop).await {
        Ok(_) => {}
        // Dropped meanwhile, e.g. by another instance syncing at the same time.
        Err(e) if server_code(&e) == Some(INDEX_NOT_FOUND) => {}
        Err(e) => return Err(e.into()),
    }
    let others: Vec<Document> = existing
        .iter()
        .filter(|x| x.get_str("name").ok() != Some(existing_name))
        .cloned()
        .collect();
    create_indexes(db, collection, std::slice::from_ref(d), &others).await?;
    tracing::debug!(
        index = d.spec.name(),
        dropped = existing_name,
        differences = ?option_names(diffs),
        "index dropped and created again"
    );
    Ok(())
}

/// The options that differ, for an event's field.
pub(super) fn option_names(diffs: &[Difference]) -> Vec<&'static str> {
    diffs.iter().map(|d| d.option).collect()
}

pub(super) async fn coll_mod_index(db: &Database, collection: &str, index: Document) -> Result<()> {
    db.run_command(doc! { "collMod": collection, "index": index })
        .await?;
    Ok(())
}

//! Index sync at start-up: create what is missing, report the rest, drop nothing by default.
//!
//! [`sync`](sync()) is at the crate root with [`SyncOptions`]: `sync(&db)` syncs every model of
//! the program, `.group(..)` a group's models, `.models(..)` a list, `.options(..)` under other
//! options. This module holds the run ([`SyncRun`]), its report ([`SyncReport`], one
//! [`IndexReport`] per index), the options' choices ([`OnMismatch`], [`OnUnmanaged`]) and
//! [`list_indexes`].
//!
//! # Tracing
//!
//! Every sync ([`sync`](sync())) runs in one `INFO` span
//! `pattern_runtime::sync.sync_indexes` with the fields `database`, `group` (for
//! [`SyncRun::group`]), `models` (how many) and `options`; each
//! collection in a `DEBUG` span `pattern_runtime::sync.collection` with `collection` and
//! `declared`. Indexes created, changed in place, dropped and created again, hidden, or found to
//! differ are `DEBUG` events; the sync ends with one event counting them, at `INFO` when it
//! changed something or found a mismatch and at `DEBUG` otherwise. An error returned is a `DEBUG`
//! event of the span. [`list_indexes`] runs in a `DEBUG` span `pattern_runtime::sync.list_indexes`.

use std::collections::BTreeMap;
use std::fmt;

use bson::{doc, Bson, Document};
use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::Database;
use tracing::Instrument;

use crate::error::{
    server_code, server_message, Error, Result, INDEX_KEY_SPECS_CONFLICT, INDEX_NOT_FOUND,
    INDEX_OPTIONS_CONFLICT, NAMESPACE_NOT_FOUND,
};
use crate::index::compare::{differences, fixable_in_place, same_keys, same_signature, Difference};
use crate::index::{IndexKind, IndexSpec};
use crate::schema::{group_members, ModelSchema};
use crate::shard::{Keyed, ShardReport, ShardStatus};

mod apply;
mod report;

pub use crate::error::IndexConflict;
pub use crate::schema::registered_models;
use apply::{
    changed_in_place, coll_mod_index, create_indexes, option_names, reconcile, replace_index,
};
pub use report::{IndexReport, IndexStatus, OnMismatch, OnUnmanaged, SyncOptions, SyncReport};

/// Syncs `db`'s indexes with the models of this program: every model registered with
/// `#[derive(Model)]`, or those of one [`group`](SyncRun::group), or a
/// [list](SyncRun::models), under the default [`SyncOptions`] or
/// [others](SyncRun::options). Awaited, it runs and returns a [`SyncReport`].
///
/// Per collection, one `listIndexes` and, when something is missing, one `createIndexes` for all
/// missing indexes; collections are synced concurrently, and a failure on one does not stop the
/// others (the first failure is returned). With [`SyncOptions::default()`] nothing is
/// ever dropped or modified, and `_id_` is never touched under any policy. Running it twice is a
/// no-op the second time.
///
/// The native time-series collection of each `#[bucket(native, ...)]` measurement is created
/// first, with its declared options; one that exists with those options is fine, a normal
/// collection of that name (or other options) is an [`Error::CollectionConflict`].
///
/// ```no_run
/// # async fn start(db: mongodb::Database) -> pattern_runtime::Result<()> {
/// let report = pattern_runtime::sync(&db).await?;
/// for index in report.mismatched() {
///     eprintln!("index {} differs from its declaration: {:?}", index.name, index.status);
/// }
/// # Ok(()) }
/// ```
pub fn sync(db: &Database) -> SyncRun<'_> {
    SyncRun {
        db,
        models: Models::All,
        options: SyncOptions::default(),
    }
}

/// Which models a [sync](sync()) or a [doctor](crate::doctor()) run covers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Models<'a> {
    /// Every model registered in this program.
    All,
    /// The models of one `#[model(group = "...")]`.
    Group(&'a str),
    /// Exactly these.
    Listed(&'a [&'static ModelSchema]),
}

/// A sync of a database's indexes, from [`sync`](sync()): choose the models and the options,
/// then `.await` it.
#[must_use = "a sync does nothing until it is awaited"]
#[derive(Debug)]
pub struct SyncRun<'a> {
    db: &'a Database,
    models: Models<'a>,
    options: SyncOptions,
}

impl<'a> SyncRun<'a> {
    /// Only the models of one group, `#[model(group = "...")]`: for a program whose models
    /// live in several databases, one sync per database.
    ///
    /// ```no_run
    /// use pattern_runtime::{Model, SyncOptions};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// #[model(group = "shop")]
    /// struct Order { #[serde(rename = "_id")] id: i64 }
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// #[model(group = "audit")]
    /// struct LoginEvent { #[serde(rename = "_id")] id: i64 }
    ///
    /// # async fn start(client: mongodb::Client) -> pattern_runtime::Result<()> {
    /// pattern_runtime::sync(&client.database("shop")).group("shop").await?;
    /// pattern_runtime::sync(&client.database("audit")).group("audit").await?;
    /// # Ok(()) }
    /// ```
    ///
    /// A group no registered model names is [`Error::UnknownGroup`] (a misspelt name would
    /// otherwise sync nothing, silently). An index on one of the group's collections counts as
    /// managed when any registered model declares it on a collection of that name, in whichever
    /// group: [`SyncOptions::hide_unmanaged`] never hides what some model of the program declares.
    ///
    /// `.group(..)` and [`.models(..)`](Self::models) each choose the models: the last one
    /// called wins.
    pub fn group(mut self, group: &'a str) -> Self {
        self.models = Models::Group(group);
        self
    }

    /// Exactly the listed models, by their schemas (`Order::SCHEMA`): for a database whose
    /// models are not a group.
    ///
    /// ```no_run
    /// # use pattern_runtime::Model;
    /// # #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// # struct Order { #[serde(rename = "_id")] id: i64 }
    /// # #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// # struct Customer { #[serde(rename = "_id")] id: i64 }
    /// # async fn start(db: mongodb::Database) -> pattern_runtime::Result<()> {
    /// pattern_runtime::sync(&db).models(&[Order::SCHEMA, Customer::SCHEMA]).await?;
    /// # Ok(()) }
    /// ```
    pub fn models(mut self, models: &'a [&'static ModelSchema]) -> Self {
        self.models = Models::Listed(models);
        self
    }

    /// Under these options instead of [`SyncOptions::default()`].
    pub fn options(mut self, options: &SyncOptions) -> Self {
        self.options = options.clone();
        self
    }
}

impl<'a> std::future::IntoFuture for SyncRun<'a> {
    type Output = Result<SyncReport>;
    type IntoFuture = crate::model::Pending<'a, Result<SyncReport>>;

    fn into_future(self) -> Self::IntoFuture {
        let SyncRun {
            db,
            models,
            options,
        } = self;
        crate::model::Pending::new(async move {
            match models {
                Models::All => sync_schemas(db, &registered_models(), &options).await,
                Models::Group(group) => sync_group(db, group, &options).await,
                Models::Listed(models) => sync_schemas(db, models, &options).await,
            }
        })
    }
}

/// The models of one group, synced in one span naming the group.
async fn sync_group(db: &Database, group: &str, options: &SyncOptions) -> Result<SyncReport> {
    let span = sync_span(db, Some(group), options);
    let result = sync_group_in(db, group, options, &span)
        .instrument(span.clone())
        .await;
    finished(&span, &result);
    result
}

async fn sync_group_in(
    db: &Database,
    group: &str,
    options: &SyncOptions,
    span: &tracing::Span,
) -> Result<SyncReport> {
    let members = group_members(group)?;
    span.record("models", members.len());
    sync_unspanned(db, &members, options).await
}

/// Lists a collection's indexes as the server reports them (`listIndexes`); a missing collection
/// has none.
pub async fn list_indexes(db: &Database, collection: &str) -> Result<Vec<Document>> {
    crate::span::operation(
        tracing::debug_span!(
            "pattern_runtime::sync.list_indexes",
            database = db.name(),
            collection = collection
        ),
        async move {
            let command = doc! { "listIndexes": collection };
            let indexes: Vec<Document> = match db.run_cursor_command(command).await {
                Ok(cursor) => cursor.try_collect().await?,
                Err(e) if server_code(&e) == Some(NAMESPACE_NOT_FOUND) => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            tracing::debug!(indexes = indexes.len(), "indexes listed");
            Ok(indexes)
        },
    )
    .await
}

/// A declared index and the model that declares it.
#[derive(Clone, Copy)]
pub(crate) struct Declared {
    pub(crate) model: &'static str,
    pub(crate) spec: &'static IndexSpec,
    /// Created for a pattern (`#[computed(.., by = ..)]`'s index on the source, a tree's
    /// `parent`), not written by the user with `#[index]`.
    pub(crate) by_pattern: bool,
}

impl Declared {
    /// A pattern's plain index whose keys begin another declared index's keys (same order and
    /// directions, no partial filter or collation on either): the longer one serves its queries,
    /// so it is not created.
    fn redundant_among(&self, declared: &[Declared]) -> Option<&'static IndexSpec> {
        let plain = |s: &IndexSpec| {
            !s.is_unique()
                && !s.is_sparse()
                && !s.is_hidden()
                && s.expire_after_seconds().is_none()
                && s.collation().is_none()
                && s.partial().is_empty()
                && s.keys()
                    .iter()
                    .all(|k| matches!(k.kind, IndexKind::Ascending | IndexKind::Descending))
        };
        if !self.by_pattern || !plain(self.spec) {
            return None;
        }
        // A longer index serves the queries of its prefix if it holds every document in key
        // order: unique or not, but not sparse, partial, hidden or with another collation.
        let serves = |s: &IndexSpec| {
            !s.is_sparse()
                && !s.is_hidden()
                && s.collation().is_none()
                && s.partial().is_empty()
                && s.keys()
                    .iter()
                    .all(|k| matches!(k.kind, IndexKind::Ascending | IndexKind::Descending))
        };
        let mine = self.spec.keys();
        declared.iter().map(|d| d.spec).find(|other| {
            serves(other)
                && other.keys().len() > mine.len()
                && mine
                    .iter()
                    .zip(other.keys())
                    .all(|(a, b)| a.path == b.path && a.kind == b.kind)
        })
    }
}

/// Leaves out of one collection's declarations the patterns' indexes another declared index
/// makes redundant (its keys begin with theirs), each with a `DEBUG` event.
pub(crate) fn without_redundant(declared: Vec<Declared>) -> Vec<Declared> {
    let kept: Vec<bool> = declared
        .iter()
        .map(|d| match d.redundant_among(&declared) {
            Some(longer) => {
                tracing::debug!(
                    index = d.spec.name(),
                    model = d.model,
                    served_by = longer.name(),
                    "a pattern's index is not created: a longer declared index serves its queries"
                );
                false
            }
            None => true,
        })
        .collect();
    declared
        .into_iter()
        .zip(kept)
        .filter_map(|(d, keep)| keep.then_some(d))
        .collect()
}

/// Syncs the collections of `schemas`. An index counts as managed when any registered model, or
/// any of `schemas`, declares it on that collection. Two of `schemas` declaring one index name
/// differently on one collection is [`Error::ConflictingDeclarations`]; other registered models
/// are not compared (they may live in another database).
pub(crate) async fn sync_schemas(
    db: &Database,
    schemas: &[&'static ModelSchema],
    options: &SyncOptions,
) -> Result<SyncReport> {
    let span = sync_span(db, None, options);
    span.record("models", schemas.len());
    let result = sync_unspanned(db, schemas, options)
        .instrument(span.clone())
        .await;
    finished(&span, &result);
    result
}

/// The span of one sync. `models` is recorded once known.
fn sync_span(db: &Database, group: Option<&str>, options: &SyncOptions) -> tracing::Span {
    tracing::info_span!(
        "pattern_runtime::sync.sync_indexes",
        database = db.name(),
        group,
        models = tracing::field::Empty,
        options = ?options,
    )
}

/// The sync's last event, in its span: what it did (`INFO` when it changed something or found a
/// mismatch, else `DEBUG`), or the error returned (`DEBUG`: the caller has it).
fn finished(span: &tracing::Span, result: &Result<SyncReport>) {
    // Counting costs little, but nothing at all without a subscriber.
    if !(tracing::enabled!(tracing::Level::INFO) || tracing::enabled!(tracing::Level::DEBUG)) {
        return;
    }
    let _entered = span.enter();
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            tracing::debug!(error = %e, "index sync failed");
            return;
        }
    };
    let count = |pred: fn(&IndexStatus) -> bool| report.with_status(pred).count();
    let created = count(|s| matches!(s, IndexStatus::Created));
    let replaced = count(|s| matches!(s, IndexStatus::Replaced { .. }));
    let hidden = count(|s| matches!(s, IndexStatus::HiddenUnmanaged));
    let mismatched = count(|s| matches!(s, IndexStatus::Mismatched { .. }));
    let in_sync = count(|s| matches!(s, IndexStatus::InSync));
    let unmanaged = count(|s| matches!(s, IndexStatus::Unmanaged { .. }));
    if created + replaced + hidden + mismatched > 0 {
        tracing::info!(
            created,
            replaced,
            hidden,
            mismatched,
            in_sync,
            unmanaged,
            "indexes synced"
        );
    } else {
        tracing::debug!(in_sync, unmanaged, "indexes synced: nothing to change");
    }
}

async fn sync_unspanned(
    db: &Database,
    schemas: &[&'static ModelSchema],
    options: &SyncOptions,
) -> Result<SyncReport> {
    let mut collections: BTreeMap<&'static str, Vec<Declared>> = BTreeMap::new();
    for schema in schemas {
        for (collection, declared) in declarations(schema) {
            push_declarations(
                collections.entry(collection).or_default(),
                collection,
                &declared,
            )?;
        }
    }
    let registry: Vec<_> = registered_models()
        .into_iter()
        .flat_map(declarations)
        .collect();
    // Native time-series collections must exist before anything (an index) creates them as
    // normal collections.
    for schema in schemas {
        for prepare in schema.patterns().iter().filter_map(|p| p.prepare(db)) {
            prepare.await?;
        }
    }
    // The validators next: a collection an index would create is created with its validator.
    let validators = match &options.validators {
        Some(v) => Some(crate::validator::sync_validators(db, schemas, v).await?),
        None => None,
    };
    let mut plans = Vec::new();
    for (collection, declared) in collections {
        let declared = without_redundant(declared);
        // Other models only make names managed: they may live in another database (another
        // group), so their declarations never conflict with the ones synced here.
        let mut managed = declared.clone();
        for (_, other) in registry.iter().filter(|(c, _)| *c == collection) {
            for d in other {
                if !managed.iter().any(|m| m.spec.name() == d.spec.name()) {
                    managed.push(*d);
                }
            }
        }
        // A shard key's supporting index is created by the shard step, on a sharded cluster
        // only: managed, never declared.
        for schema in registered_models()
            .into_iter()
            .chain(schemas.iter().copied())
        {
            if let Some(key) = schema
                .shard_key()
                .filter(|_| schema.collection() == collection)
            {
                let spec = key.supporting_index();
                if !managed.iter().any(|m| m.spec.name() == spec.name()) {
                    managed.push(Declared {
                        model: schema.name(),
                        spec,
                        by_pattern: true,
                    });
                }
            }
        }
        let span = tracing::debug_span!(
            "pattern_runtime::sync.collection",
            collection,
            declared = declared.len(),
        );
        plans.push(sync_collection(db, collection, declared, managed, options).instrument(span));
    }
    // Every collection is synced even when another fails; the first failure is returned.
    let mut indexes = Vec::new();
    for result in join_all(plans).await {
        indexes.extend(result?);
    }
    let keyed = schemas
        .iter()
        .filter_map(|s| {
            s.shard_key().map(|key| Keyed {
                model: s.name(),
                collection: s.collection(),
                key,
            })
        })
        .collect();
    let shards = crate::shard::sync(db, keyed).await?;
    Ok(SyncReport {
        indexes,
        shards,
        validators,
    })
}

/// The indexes a model declares, by collection: its own, then those of its patterns (a history
/// collection's, a full-item collection's, the copies' `_id`s), in the order the patterns list
/// them.
pub(crate) fn declarations(schema: &'static ModelSchema) -> Vec<(&'static str, Vec<Declared>)> {
    let declared = |spec, by_pattern| Declared {
        model: schema.name(),
        spec,
        by_pattern,
    };
    let mut out: Vec<(&'static str, Vec<Declared>)> = vec![(
        schema.collection(),
        schema
            .indexes()
            .iter()
            .map(|s| declared(s, false))
            .collect(),
    )];
    for (collection, spec) in schema.patterns().iter().flat_map(|p| p.indexes(schema)) {
        match out.iter_mut().find(|(c, _)| *c == collection) {
            Some((_, specs)) => specs.push(declared(spec, true)),
            None => out.push((collection, vec![declared(spec, true)])),
        }
    }
    out
}

/// Adds declarations to a collection's: the same index declared twice (by one model through two
/// schemas, or identically by two models) counts once; one name with two different
/// specifications is an error.
fn push_declarations(
    declared: &mut Vec<Declared>,
    collection: &str,
    more: &[Declared],
) -> Result<()> {
    for new in more {
        match declared.iter().find(|d| d.spec.name() == new.spec.name()) {
            Some(other) if other.spec == new.spec => {}
            Some(other) => {
                return Err(Error::ConflictingDeclarations {
                    collection: collection.to_owned(),
                    index: new.spec.name(),
                    models: [other.model, new.model],
                    same_signature_as: None,
                })
            }
            None => {
                // One index under two names: the server would refuse the second (code 85),
                // and renaming either cannot help.
                if let Some(other) = declared
                    .iter()
                    .find(|d| same_signature(new.spec, &d.spec.to_document()))
                {
                    return Err(Error::ConflictingDeclarations {
                        collection: collection.to_owned(),
                        index: new.spec.name(),
                        models: [other.model, new.model],
                        same_signature_as: Some(other.spec.name()),
                    });
                }
                declared.push(*new);
            }
        }
    }
    Ok(())
}

async fn sync_collection(
    db: &Database,
    collection: &'static str,
    declared: Vec<Declared>,
    managed: Vec<Declared>,
    options: &SyncOptions,
) -> Result<Vec<IndexReport>> {
    let existing = list_indexes(db, collection).await?;
    let name_of = |d: &Document| d.get_str("name").unwrap_or_default().to_owned();

    let mut reports = Vec::new();
    let mut missing: Vec<Declared> = Vec::new();
    let mut to_replace: Vec<(Declared, Document, Vec<Difference>)> = Vec::new();
    // Existing indexes a declaration accounts for (same name, or same keys under another name).
    let mut claimed: Vec<String> = Vec::new();

    for d in &declared {
        let by_name = existing.iter().find(|e| name_of(e) == d.spec.name());
        let found = by_name.map(|e| (e, differences(d.spec, e))).or_else(|| {
            // The declaration's signature under a name no model declares: the server would refuse
            // to create it again (code 85), so it is this declaration's index, renamed.
            existing
                .iter()
                .filter(|e| !managed.iter().any(|m| m.spec.name() == name_of(e)))
                .find(|e| same_signature(d.spec, e))
                .map(|e| {
                    let mut diffs = vec![Difference {
                        option: "name",
                        declared: Some(Bson::String(d.spec.name().to_owned())),
                        existing: e.get("name").cloned(),
                    }];
                    diffs.extend(differences(d.spec, e));
                    (e, diffs)
                })
        });
        let Some((e, diffs)) = found else {
            missing.push(*d);
            continue;
        };
        claimed.push(name_of(e));
        let status = if diffs.is_empty() {
            IndexStatus::InSync
        } else if options.on_mismatch == OnMismatch::Replace {
            to_replace.push((*d, e.clone(), diffs.clone()));
            IndexStatus::Replaced { differences: diffs }
        } else {
            tracing::debug!(
                index = d.spec.name(),
                model = d.model,
                differences = ?option_names(&diffs),
                "index differs from its declaration; left alone"
            );
            IndexStatus::Mismatched { differences: diffs }
        };
        reports.push(IndexReport {
            collection: collection.to_owned(),
            model: Some(d.model),
            name: d.spec.name().to_owned(),
            status,
            declared: Some(*d.spec),
            existing: Some(e.clone()),
        });
    }

    if !missing.is_empty() {
        create_indexes(db, collection, &missing, &existing).await?;
        tracing::debug!(
            created = missing.len(),
            indexes = ?missing.iter().map(|d| d.spec.name()).collect::<Vec<_>>(),
            "indexes created"
        );
        for d in &missing {
            reports.push(IndexReport {
                collection: collection.to_owned(),
                model: Some(d.model),
                name: d.spec.name().to_owned(),
                status: IndexStatus::Created,
                declared: Some(*d.spec),
                existing: None,
            });
        }
    }

    for (d, e, diffs) in &to_replace {
        replace_index(db, collection, d, e, diffs, &existing).await?;
    }

    for e in &existing {
        let name = name_of(e);
        if name == "_id_"
            || claimed.contains(&name)
            || managed.iter().any(|m| m.spec.name() == name)
        {
            continue;
        }
        let hidden = e.get_bool("hidden").unwrap_or(false);
        let status = if !hidden && options.on_unmanaged == OnUnmanaged::Hide {
            coll_mod_index(db, collection, doc! { "name": &name, "hidden": true }).await?;
            tracing::debug!(index = %name, "unmanaged index hidden");
            IndexStatus::HiddenUnmanaged
        } else {
            IndexStatus::Unmanaged { hidden }
        };
        reports.push(IndexReport {
            collection: collection.to_owned(),
            model: None,
            name,
            status,
            declared: None,
            existing: Some(e.clone()),
        });
    }
    // What `collMod` changed is read back, never assumed: a server may acknowledge it and do
    // nothing. One `listIndexes`, only when something was changed in place.
    if reports.iter().any(|r| changed_in_place(r, &existing)) {
        let after = crate::sync::list_indexes(db, collection).await?;
        reconcile(&mut reports, &existing, &after);
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unmanaged_hidden_now(name: &str) -> IndexReport {
        IndexReport {
            collection: "users".to_owned(),
            model: None,
            name: name.to_owned(),
            status: IndexStatus::HiddenUnmanaged,
            declared: None,
            existing: Some(doc! { "name": name, "key": { "email": 1 } }),
        }
    }

    #[test]
    fn a_hide_the_server_did_not_apply_is_reported_as_not_hidden() {
        let before = [doc! { "name": "adhoc", "key": { "email": 1 } }];
        let mut reports = [unmanaged_hidden_now("adhoc")];
        // The server acknowledged collMod but lists the index as it was.
        reconcile(&mut reports, &before, &before);
        assert_eq!(reports[0].status, IndexStatus::NotHidden);
        assert!(!SyncReport {
            indexes: reports.to_vec(),
            shards: Vec::new(),
            validators: None,
        }
        .to_string()
        .contains("hidden now"));
    }

    #[test]
    fn a_hide_the_server_applied_stays_hidden_now() {
        let before = [doc! { "name": "adhoc", "key": { "email": 1 } }];
        let after = [doc! { "name": "adhoc", "key": { "email": 1 }, "hidden": true }];
        let mut reports = [unmanaged_hidden_now("adhoc")];
        reconcile(&mut reports, &before, &after);
        assert_eq!(reports[0].status, IndexStatus::HiddenUnmanaged);
    }
}

//! The modelling checklist as code: [`doctor`](fn@doctor) audits a live database against the models
//! compiled into the program and reports each problem with the model, the field or index, a
//! figure and the fix. It never writes.
//!
//! ```no_run
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let report = pattern_runtime::doctor::doctor(&db).await?;
//! print!("{report}");
//! for finding in report.with_check(pattern_runtime::doctor::Check::UnusedIndex) {
//!     eprintln!("{} on {} is never used", finding.subject, finding.collection);
//! }
//! # Ok(()) }
//! ```
//!
//! # What it checks
//!
//! | check | from | finding |
//! | --- | --- | --- |
//! | arrays that can grow without bound | the models: a `Vec`, `VecDeque` or set field no pattern caps (`#[subset]`, `#[outlier]`, `#[attribute]`, `#[tree]`) and no `#[bounded(n)]` declares bounded; the figure is the largest in the sample | [`Check::UnboundedArray`] |
//! | `#[bounded(n)]` arrays over `n` | the sample | [`Check::OverBound`] |
//! | documents over 1 MiB (the checklist's guideline, 16 MiB being MongoDB's limit) | `$bsonSize` over a `$sample` | [`Check::LargeDocument`] |
//! | nesting deeper than 3 levels of embedded documents | the sample | [`Check::DeepNesting`] |
//! | declared indexes the server lacks; TTL indexes among them | `listIndexes` | [`Check::MissingIndex`], [`Check::MissingTtl`] |
//! | a native time-series collection whose `expireAfterSeconds` is not the declared `expire_after` | `listCollections` | [`Check::MissingTtl`] |
//! | indexes no model declares | `listIndexes` | [`Check::UndeclaredIndex`] |
//! | indexes with no access since the server started (not `_id_`, unique, TTL, hidden or shard-key ones: they work without reads), once counted for [`DoctorOptions::unused_after`] (a day by default; an index counted for less is a skipped check, not a finding) | `$indexStats` | [`Check::UnusedIndex`] |
//! | an index whose keys begin another's | `listIndexes` | [`Check::PrefixIndex`] |
//! | pattern drift: subsets over their limit, out of order or miscounted; computed values that disagree with their sources; extended-reference copies that differ from their source; array buckets over `max_count`; tree nodes whose ancestors, and holders whose path, disagree with the parents; outlier counts and flags that disagree with the items; the two sides of a two-way relation that disagree; attribute arrays holding a key twice or an item no query can name; preallocated slots allocated twice or with bitmap bits past their sub-slots | each pattern's [`PatternSpec::audit`](crate::PatternSpec::audit) over the sample | [`Check::SubsetDrift`], [`Check::ComputedDrift`], [`Check::StaleCopy`], [`Check::BucketOverCap`], [`Check::TreeDrift`], [`Check::OutlierDrift`], [`Check::TwoWayDrift`], [`Check::AttributeDrift`], [`Check::GridDrift`] |
//! | a collection not sharded on its declared shard key | `config.collections`, on a sharded cluster | [`Check::ShardKey`] |
//!
//! Each pattern drift finding lists the documents it found ([`Finding::documents`]) and names
//! the repair call. The same checks over *every* document, and the repairs, are each pattern
//! handle's `check()` and `repair()`, with one shape for all: [`CheckReport`] and
//! [`RepairReport`] (`Tree::check`, `Subset::check`, `Outlier::check`, `ComputedFields::check`,
//! `References::check`, `TwoWay::check`, `Series::check`, `Attributes::check`, `Slots::check`).
//!
//! A check the server cannot run (no `$indexStats`, no `$sample`, not a sharded cluster) is
//! listed in [`DoctorReport::skipped`] with the server's reason, never passed over in silence:
//! the report's summary says how many checks were skipped.
//!
//! Not checked: whether the application's queries have a fitting index. The models do not
//! declare their queries; the server's profiler (or `$queryStats` on a server that has it) is the
//! place to look.
//!
//! # Load
//!
//! Per collection: one `$sample` of [`DoctorOptions::sample_size`] documents projected to their
//! sizes and array lengths, one `find` of those under 1 MiB, `listIndexes`, `$indexStats`, and
//! what each pattern's audit needs (one aggregation or `find` of the sampled ids). Each command
//! is bounded by [`DoctorOptions::max_time`] (`maxTimeMS`); a check that runs out of time is an
//! error, not a finding. [`DoctorOptions::on_progress`] is called after each collection.
//!
//! # Tracing
//!
//! One `INFO` span `pattern_runtime::doctor.doctor` (`database`, `models`), a `DEBUG` span
//! `pattern_runtime::doctor.collection` per collection, a `DEBUG` event per skipped check and
//! one `INFO` event with the counts at the end.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Database;
use tracing::Instrument;

use crate::error::{server_code, server_message, Result, NAMESPACE_NOT_FOUND};
use crate::finding::{examples, number};
pub use crate::finding::{Bounded, Check, CheckReport, Finding, RepairReport};
use crate::schema::{group_members, registered_models, ModelSchema, Sample};
use crate::shard::{self, ShardKey};
use crate::sync::{declarations, Declared};

/// The checklist's guideline for a document's size.
const LARGE: i64 = 1024 * 1024;
/// Levels of embedded documents the checklist allows.
const MAX_DEPTH: usize = 3;

/// What a long run reports after each collection ([`DoctorOptions::on_progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Collections checked so far.
    pub done: usize,
    /// Collections to check.
    pub total: usize,
    /// The collection just checked.
    pub collection: &'static str,
}

type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// How much the doctor reads. [`DoctorOptions::default()`]: 100 documents per collection, 5 s
/// per command, no progress callback.
#[derive(Clone)]
pub struct DoctorOptions {
    sample_size: u32,
    max_time: Duration,
    unused_after: Duration,
    progress: Option<ProgressFn>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            sample_size: 100,
            max_time: Duration::from_secs(5),
            unused_after: Duration::from_secs(24 * 3600),
            progress: None,
        }
    }
}

impl fmt::Debug for DoctorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DoctorOptions")
            .field("sample_size", &self.sample_size)
            .field("max_time", &self.max_time)
            .field("unused_after", &self.unused_after)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl DoctorOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many documents to draw from each collection (`$sample`); at least 1.
    #[must_use]
    pub fn sample_size(mut self, documents: u32) -> Self {
        self.sample_size = documents.max(1);
        self
    }

    /// How long an index's accesses must have been counted (since its `$indexStats`
    /// `accesses.since`: the index's creation or the server's start) before 0 accesses make it
    /// unused; one day by default. An index counted for less is not judged: its collection's
    /// unused-index check is listed in [`DoctorReport::skipped`] with how long it was counted.
    /// `Duration::ZERO` judges every index.
    #[must_use]
    pub fn unused_after(mut self, counted_for: Duration) -> Self {
        self.unused_after = counted_for;
        self
    }

    /// The time limit of each command (`maxTimeMS`).
    #[must_use]
    pub fn max_time(mut self, limit: Duration) -> Self {
        self.max_time = limit;
        self
    }

    /// Called after each collection, for a progress bar on long runs.
    #[must_use]
    pub fn on_progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }
}

/// A check the server could not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The check.
    pub check: Check,
    /// The collection, when the check was skipped for one collection only.
    pub collection: Option<String>,
    /// Why: the server's error, or what the server is.
    pub reason: String,
}

/// What [`doctor`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DoctorReport {
    /// Every problem, collection by collection.
    pub findings: Vec<Finding>,
    /// The checks that could not run.
    pub skipped: Vec<Skipped>,
    /// How many documents were sampled, per collection.
    pub sampled: Vec<(String, usize)>,
}

impl DoctorReport {
    /// The findings of one check.
    pub fn with_check(&self, check: Check) -> impl Iterator<Item = &Finding> + '_ {
        self.findings.iter().filter(move |f| f.check == check)
    }

    /// No finding and no skipped check: everything was checked and nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty() && self.skipped.is_empty()
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        for s in &self.skipped {
            let on = s
                .collection
                .as_deref()
                .map_or(String::new(), |c| format!(" on {c}"));
            writeln!(f, "[skipped] {}{on}: {}", s.check, s.reason)?;
        }
        let documents: usize = self.sampled.iter().map(|(_, n)| n).sum();
        let findings = plural(self.findings.len(), "finding");
        let skipped = plural(self.skipped.len(), "check");
        let verdict = match (self.findings.len(), self.skipped.len()) {
            (0, 0) => "no findings".to_owned(),
            (0, _) => format!("no findings in the checks that ran; {skipped} skipped (see above)"),
            (_, 0) => findings,
            (_, _) => format!("{findings}; {skipped} skipped (see above)"),
        };
        writeln!(
            f,
            "{verdict} ({}, {} sampled)",
            plural(self.sampled.len(), "collection"),
            plural(documents, "document")
        )
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Audits `db` against every model registered in this program, with the default options.
pub async fn doctor(db: &Database) -> Result<DoctorReport> {
    doctor_models(db, &registered_models(), &DoctorOptions::default()).await
}

/// Audits `db` against the models of one group (`#[model(group = "...")]`): for a program whose
/// models live in several databases. A group no model names is [`Error::UnknownGroup`](crate::Error::UnknownGroup).
pub async fn doctor_group(
    db: &Database,
    group: &str,
    options: &DoctorOptions,
) -> Result<DoctorReport> {
    let members = group_members(group)?;
    doctor_models(db, &members, options).await
}

/// Audits `db` against exactly the listed models (`Order::SCHEMA`).
pub async fn doctor_models(
    db: &Database,
    models: &[&'static ModelSchema],
    options: &DoctorOptions,
) -> Result<DoctorReport> {
    let span = tracing::info_span!(
        "pattern_runtime::doctor.doctor",
        database = db.name(),
        models = models.len()
    );
    let report = run(db, models, options).instrument(span.clone()).await?;
    let _entered = span.enter();
    tracing::info!(
        findings = report.findings.len(),
        skipped = report.skipped.len(),
        "doctor done"
    );
    Ok(report)
}

async fn run(
    db: &Database,
    models: &[&'static ModelSchema],
    options: &DoctorOptions,
) -> Result<DoctorReport> {
    let mut report = DoctorReport::default();
    // Every collection a model or its patterns declare indexes on, with those declarations.
    let mut collections: BTreeMap<&'static str, Vec<Declared>> = BTreeMap::new();
    for schema in models {
        for (collection, declared) in declarations(schema) {
            collections.entry(collection).or_default().extend(declared);
        }
    }
    let registry: Vec<&'static ModelSchema> = registered_models();
    let total = collections.len();
    let mut stats_skipped = false;
    for (done, (collection, declared)) in collections.into_iter().enumerate() {
        // As the sync declares them: a pattern's index a longer one serves is not created.
        let declared = crate::sync::without_redundant(declared);
        let span = tracing::debug_span!("pattern_runtime::doctor.collection", collection);
        async {
            let own: Vec<&'static ModelSchema> = models
                .iter()
                .copied()
                .filter(|m| m.collection() == collection)
                .collect();
            for model in &own {
                check_model(db, model, options, &mut report).await?;
            }
            let on = OnCollection {
                name: collection,
                managed: managed(collection, &declared, &registry, models),
                shard_keys: own.iter().filter_map(|m| m.shard_key()).collect(),
                declared,
            };
            check_indexes(db, &on, options, &mut stats_skipped, &mut report).await
        }
        .instrument(span)
        .await?;
        if let Some(progress) = &options.progress {
            progress(Progress {
                done: done + 1,
                total,
                collection,
            });
        }
    }
    check_shard_keys(db, models, &mut report).await?;
    for s in &report.skipped {
        tracing::debug!(check = %s.check, collection = s.collection, reason = s.reason, "check skipped");
    }
    Ok(report)
}

/// The index names that count as declared on `collection`: the models', every registered
/// model's, and the shard keys' supporting indexes.
fn managed(
    collection: &str,
    declared: &[Declared],
    registry: &[&'static ModelSchema],
    models: &[&'static ModelSchema],
) -> BTreeSet<&'static str> {
    let mut names: BTreeSet<&'static str> = declared.iter().map(|d| d.spec.name()).collect();
    for schema in registry.iter().chain(models) {
        for (c, ds) in declarations(schema) {
            if c == collection {
                names.extend(ds.iter().map(|d| d.spec.name()));
            }
        }
        if schema.collection() == collection {
            if let Some(key) = schema.shard_key() {
                names.insert(key.supporting_index().name());
            }
        }
    }
    names
}

/// The sample of one model's collection, and the checks on it: sizes, nesting, arrays, and
/// each pattern's audit.
async fn check_model(
    db: &Database,
    model: &'static ModelSchema,
    options: &DoctorOptions,
    report: &mut DoctorReport,
) -> Result<()> {
    let collection = model.collection();
    let bounded: Vec<Bounded> = model
        .patterns()
        .iter()
        .flat_map(|p| p.bounded_arrays())
        .collect();
    // A measurement's fields are not the stored documents' top-level fields, and a measurement
    // is written once, never appended to: its arrays cannot grow (the bucket documents that hold
    // measurements are capped by count and bytes, which the bucket's own audit checks).
    let measurement = model.specs::<crate::bucket::SeriesSpec>().next().is_some();
    let arrays: Vec<&'static str> = model
        .fields()
        .iter()
        .filter(|f| !measurement && growable(f.rust_type()))
        .map(|f| f.bson_name())
        .collect();
    // Sizes and array lengths of a sample, without moving the documents.
    let mut projection = doc! { "_id": 1, "s": { "$bsonSize": "$$ROOT" } };
    for (i, field) in arrays.iter().enumerate() {
        let path = format!("${field}");
        projection.insert(
            format!("a{i}"),
            doc! { "$cond": [{ "$isArray": &path }, { "$size": &path }, "$$REMOVE"] },
        );
    }
    let pipeline = vec![
        doc! { "$sample": { "size": i64::from(options.sample_size) } },
        doc! { "$project": projection },
    ];
    let sizes: Vec<Document> = match db
        .collection::<Document>(collection)
        .aggregate(pipeline)
        .max_time(options.max_time)
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if server_code(&e) == Some(NAMESPACE_NOT_FOUND) => Vec::new(),
        Err(e) if unsupported(&e) => {
            report.skipped.push(Skipped {
                check: Check::LargeDocument,
                collection: Some(collection.to_owned()),
                reason: reason("`$sample` with `$bsonSize`", &e),
            });
            Vec::new()
        }
        Err(e) => return Err(e.into()),
    };
    report.sampled.push((collection.to_owned(), sizes.len()));
    // Arrays no pattern bounds.
    for (i, field) in arrays.iter().enumerate() {
        if bounded.iter().any(|b| b.field == *field) {
            continue;
        }
        let largest = sizes
            .iter()
            .filter_map(|d| d.get(format!("a{i}")).and_then(number))
            .fold(None, |m: Option<f64>, n| Some(m.map_or(n, |m| m.max(n))));
        let figure = match largest {
            #[allow(clippy::cast_possible_truncation)]
            Some(n) => format!(
                "nothing bounds it; largest in {}: {}",
                plural(sizes.len(), "sampled document"),
                plural(n as usize, "item")
            ),
            None => "nothing bounds it; no sampled document holds it yet".to_owned(),
        };
        report.findings.push(Finding {
            check: Check::UnboundedArray,
            model: Some(model.name()),
            collection: collection.to_owned(),
            subject: (*field).to_owned(),
            figure,
            fix: "cap it with `#[subset(limit = ..)]` (the first items here, all in their own \
                  collection) or `#[outlier(..)]` (overflow documents for the few that grow), \
                  move the items to their own collection with a parent reference \
                  (`#[relation(parent)]`), or declare the bound the application keeps with \
                  `#[bounded(n)]`"
                .to_owned(),
            documents: Vec::new(),
        });
    }
    // Large documents.
    let mut large: Vec<(i64, Bson)> = sizes
        .iter()
        .filter_map(|d| {
            let size = d.get("s").and_then(number)?;
            #[allow(clippy::cast_possible_truncation)]
            let size = size as i64;
            (size > LARGE).then(|| (size, d.get("_id").cloned().unwrap_or(Bson::Null)))
        })
        .collect();
    large.sort_by_key(|l| std::cmp::Reverse(l.0));
    if let Some((largest, _)) = large.first() {
        let ids: Vec<Bson> = large.iter().map(|(_, id)| id.clone()).collect();
        #[allow(clippy::cast_precision_loss)]
        let (mib, share) = (
            *largest as f64 / LARGE as f64,
            *largest as f64 / crate::error::MAX_DOCUMENT_SIZE as f64 * 100.0,
        );
        report.findings.push(Finding {
            check: Check::LargeDocument,
            model: Some(model.name()),
            collection: collection.to_owned(),
            subject: "document".to_owned(),
            figure: format!(
                "{} of {} sampled documents over 1 MiB; largest {mib:.1} MiB, {share:.0}% of \
                 the 16 MiB limit; {}",
                large.len(),
                sizes.len(),
                examples(&ids)
            ),
            fix: "move what grows out of the document: `#[subset]` keeps the first items and \
                  the rest in their own collection, `#[outlier]` overflows the few large ones, \
                  `#[bucket]` splits measurements by time"
                .to_owned(),
            documents: Vec::new(),
        });
    }
    // The documents themselves, those under 1 MiB, for nesting and the patterns' audits.
    let ids: Vec<Bson> = sizes
        .iter()
        .filter(|d| {
            d.get("s")
                .and_then(number)
                .is_none_or(|s| s <= LARGE as f64)
        })
        .filter_map(|d| d.get("_id").cloned())
        .collect();
    let documents: Vec<Document> = if ids.is_empty() {
        Vec::new()
    } else {
        db.collection::<Document>(collection)
            .find(doc! { "_id": { "$in": ids } })
            .max_time(options.max_time)
            .await?
            .try_collect()
            .await?
    };
    let mut deep: Vec<(usize, String, Bson)> = documents
        .iter()
        .filter_map(|d| {
            let (depth, path) = depth(d);
            (depth > MAX_DEPTH).then(|| (depth, path, d.get("_id").cloned().unwrap_or(Bson::Null)))
        })
        .collect();
    deep.sort_by_key(|d| std::cmp::Reverse(d.0));
    if let Some((depth, path, _)) = deep.first() {
        let ids: Vec<Bson> = deep.iter().map(|(_, _, id)| id.clone()).collect();
        report.findings.push(Finding {
            check: Check::DeepNesting,
            model: Some(model.name()),
            collection: collection.to_owned(),
            subject: path.split('.').next().unwrap_or_default().to_owned(),
            figure: format!(
                "{} of {} sampled documents nest more than {MAX_DEPTH} levels; deepest {depth} \
                 at `{path}`; {}",
                deep.len(),
                documents.len(),
                examples(&ids)
            ),
            fix: "flatten the deepest levels into their parent, or keep them in their own \
                  collection with a reference (`Ref<T>` with `#[relation]`)"
                .to_owned(),
            documents: Vec::new(),
        });
    }
    let sample = Sample {
        db,
        model,
        documents: &documents,
        max_time: options.max_time,
    };
    for audit in model.patterns().iter().filter_map(|p| p.audit(&sample)) {
        report.findings.extend(audit.await?);
    }
    Ok(())
}

/// What the index checks know of one collection.
struct OnCollection {
    name: &'static str,
    /// The indexes the checked models declare on it.
    declared: Vec<Declared>,
    /// The names any registered model declares on it, and its shard keys' supporting indexes.
    managed: BTreeSet<&'static str>,
    /// The shard keys declared for it: the indexes that support one are needed without reads.
    shard_keys: Vec<&'static ShardKey>,
}

/// The declared indexes the server lacks, the ones no model declares, the unused ones and the
/// prefixes of others, on one collection.
async fn check_indexes(
    db: &Database,
    on: &OnCollection,
    options: &DoctorOptions,
    stats_skipped: &mut bool,
    report: &mut DoctorReport,
) -> Result<()> {
    let (collection, declared, managed) = (on.name, &on.declared, &on.managed);
    let existing: Vec<Document> = match db
        .run_cursor_command(doc! { "listIndexes": collection })
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if server_code(&e) == Some(NAMESPACE_NOT_FOUND) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let name_of = |i: &Document| i.get_str("name").unwrap_or_default().to_owned();
    let key_of = |i: &Document| i.get_document("key").cloned().unwrap_or_default();
    // Declared and missing (by name, or the same keys under another name).
    let mut seen: BTreeSet<&'static str> = BTreeSet::new();
    for d in declared {
        if !seen.insert(d.spec.name()) {
            continue;
        }
        let present = existing
            .iter()
            .any(|i| name_of(i) == d.spec.name() || key_of(i) == d.spec.key_document());
        if present {
            continue;
        }
        let (check, fix) = match d.spec.expire_after_seconds() {
            Some(secs) => (
                Check::MissingTtl,
                format!(
                    "documents meant to expire after {secs} s never do: run `sync_indexes` (or \
                     `sync_group`) at start-up, which creates it"
                ),
            ),
            None => (
                Check::MissingIndex,
                "run `sync_indexes` (or `sync_group`) at start-up, which creates it".to_owned(),
            ),
        };
        report.findings.push(Finding {
            check,
            model: Some(d.model),
            collection: collection.to_owned(),
            subject: d.spec.name().to_owned(),
            figure: format!("declared {}, not on the server", d.spec.key_document()),
            fix,
            documents: Vec::new(),
        });
    }
    // On the server and declared by no model.
    for i in &existing {
        let name = name_of(i);
        if name == "_id_" || managed.contains(name.as_str()) {
            continue;
        }
        report.findings.push(Finding {
            check: Check::UndeclaredIndex,
            model: None,
            collection: collection.to_owned(),
            subject: name.clone(),
            figure: format!("{} on the server, declared by no model", key_of(i)),
            fix: format!(
                "declare it with `#[index(...)]` on the model whose queries need it; otherwise \
                 hide it first (`SyncOptions::hide_unmanaged`), watch that nothing slows down, \
                 then drop it (`dropIndexes: \"{collection}\", index: \"{name}\"`)"
            ),
            documents: Vec::new(),
        });
    }
    // A prefix of another index.
    for a in &existing {
        let name = name_of(a);
        if !plain(a) || a.get_bool("unique").unwrap_or(false) || name == "_id_" {
            continue;
        }
        let ka = key_of(a);
        let longer = existing.iter().find(|b| {
            let kb = key_of(b);
            plain(b)
                && kb.len() > ka.len()
                && ka.iter().zip(kb.iter()).all(|((pa, va), (pb, vb))| {
                    pa == pb && number(va).is_some() && number(va) == number(vb)
                })
                && a.get_document("collation").ok() == b.get_document("collation").ok()
        });
        if let Some(b) = longer {
            let declaration = declared.iter().find(|d| d.spec.name() == name);
            let declared_by = declaration.map(|d| d.model);
            let by_pattern = declaration.is_some_and(|d| d.by_pattern);
            report.findings.push(Finding {
                check: Check::PrefixIndex,
                model: declared_by,
                collection: collection.to_owned(),
                subject: name.clone(),
                figure: format!(
                    "its keys {ka} begin `{}` {}, which serves the same queries",
                    name_of(b),
                    key_of(b)
                ),
                fix: match declared_by {
                    Some(model) if by_pattern => format!(
                        "a pattern of `{model}` needs these keys, and `{b}` is declared by no \
                         model: declare `{b}` with `#[index(...)]` on the model whose queries \
                         need it (the sync then leaves this one out), then drop this one \
                         (`dropIndexes: \"{collection}\", index: \"{name}\"`)",
                        b = name_of(b)
                    ),
                    Some(model) => format!(
                        "remove this `#[index]` from `{model}` and drop the index; every write \
                         pays for it"
                    ),
                    None => format!(
                        "drop it (`dropIndexes: \"{collection}\", index: \"{name}\"`): every \
                         write pays for it"
                    ),
                },
                documents: Vec::new(),
            });
        }
    }
    // Unused since the server started.
    if existing.is_empty() || *stats_skipped {
        return Ok(());
    }
    let stats: Vec<Document> = match db
        .collection::<Document>(collection)
        .aggregate(vec![doc! { "$indexStats": {} }])
        .max_time(options.max_time)
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if unsupported(&e) => {
            *stats_skipped = true;
            report.skipped.push(Skipped {
                check: Check::UnusedIndex,
                collection: None,
                reason: reason("`$indexStats`", &e),
            });
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    // On a sharded cluster, one row per shard: the accesses add up.
    let mut ops: BTreeMap<String, (f64, Option<Bson>)> = BTreeMap::new();
    for row in &stats {
        let accesses = row.get_document("accesses").ok();
        let n = accesses
            .and_then(|a| a.get("ops"))
            .and_then(number)
            .unwrap_or(0.0);
        let entry = ops.entry(name_of(row)).or_insert((0.0, None));
        entry.0 += n;
        if entry.1.is_none() {
            entry.1 = accesses.and_then(|a| a.get("since")).cloned();
        }
    }
    for i in &existing {
        let name = name_of(i);
        let needed_without_reads = name == "_id_"
            || i.get_bool("unique").unwrap_or(false)
            || i.contains_key("expireAfterSeconds")
            || i.get_bool("hidden").unwrap_or(false)
            || on.shard_keys.iter().any(|k| k.is_supported_by(&key_of(i)));
        let Some((n, since)) = ops.get(&name) else {
            continue;
        };
        // A pattern's index serves the pattern's own operations and checks, which the user
        // does not declare and cannot remove.
        let by_pattern = declared
            .iter()
            .any(|d| d.spec.name() == name && d.by_pattern);
        if needed_without_reads || by_pattern || *n > 0.0 {
            continue;
        }
        let since = match since {
            Some(Bson::DateTime(t)) => {
                let counted = bson::DateTime::now().timestamp_millis() - t.timestamp_millis();
                let counted = Duration::from_millis(u64::try_from(counted).unwrap_or(0));
                if counted < options.unused_after {
                    // Too short a watch for 0 accesses to mean anything.
                    if !report.skipped.iter().any(|k| {
                        k.check == Check::UnusedIndex && k.collection.as_deref() == Some(collection)
                    }) {
                        report.skipped.push(Skipped {
                            check: Check::UnusedIndex,
                            collection: Some(collection.to_owned()),
                            reason: format!(
                                "its indexes' accesses were counted for {} s only (`{name}`, \
                                 for one); an index is judged once counted for {} s \
                                 (`DoctorOptions::unused_after`)",
                                counted.as_secs(),
                                options.unused_after.as_secs()
                            ),
                        });
                    }
                    continue;
                }
                t.try_to_rfc3339_string()
                    .map_or_else(|_| format!(" since {t}"), |t| format!(" since {t}"))
            }
            _ => {
                // Without `since`, a count of 0 says nothing about how long it was watched.
                if !report.skipped.iter().any(|k| {
                    k.check == Check::UnusedIndex && k.collection.as_deref() == Some(collection)
                }) {
                    report.skipped.push(Skipped {
                        check: Check::UnusedIndex,
                        collection: Some(collection.to_owned()),
                        reason: "the server's `$indexStats` gives no `accesses.since`, so a \
                                 count of 0 cannot say since when"
                            .to_owned(),
                    });
                }
                continue;
            }
        };
        let model = declared
            .iter()
            .find(|d| d.spec.name() == name)
            .map(|d| d.model);
        report.findings.push(Finding {
            check: Check::UnusedIndex,
            model,
            collection: collection.to_owned(),
            subject: name.clone(),
            figure: format!("0 accesses{since} (counted from the server's start)"),
            fix: format!(
                "if no query needs it, hide it (`collMod: \"{collection}\", index: {{name: \
                 \"{name}\", hidden: true}}`), watch that nothing slows down, then remove its \
                 declaration and drop it; counts restart with the server, so judge after a \
                 representative period"
            ),
            documents: Vec::new(),
        });
    }
    Ok(())
}

/// A shard key declared and not in place, on a sharded cluster; skipped elsewhere.
async fn check_shard_keys(
    db: &Database,
    models: &[&'static ModelSchema],
    report: &mut DoctorReport,
) -> Result<()> {
    let keyed: Vec<_> = models
        .iter()
        .filter_map(|m| m.shard_key().map(|k| (*m, k)))
        .collect();
    if keyed.is_empty() {
        return Ok(());
    }
    if let Some(reason) = shard::not_a_cluster(db).await? {
        report.skipped.push(Skipped {
            check: Check::ShardKey,
            collection: None,
            reason,
        });
        return Ok(());
    }
    for (model, key) in keyed {
        let (figure, fix) = match shard::sharded_on(db, model.collection()).await? {
            Some(existing) if shard::is_key(key, &existing) => continue,
            Some(existing) => (
                format!("sharded on {existing}, declared {}", key.key_document()),
                "changing a shard key is a decision for a person: `reshardCollection` \
                 (MongoDB 5.0+), or change the declaration to the key in place"
                    .to_owned(),
            ),
            None => (
                format!("not sharded, declared {}", key.key_document()),
                "run `sync_indexes` (or `sync_group`) at start-up, which shards it".to_owned(),
            ),
        };
        report.findings.push(Finding {
            check: Check::ShardKey,
            model: Some(model.name()),
            collection: model.collection().to_owned(),
            subject: "shard key".to_owned(),
            figure,
            fix,
            documents: Vec::new(),
        });
    }
    Ok(())
}

/// An index with plain ascending or descending keys, no partial filter, not sparse, not
/// hidden, no TTL: one whose queries another plain index can serve.
fn plain(index: &Document) -> bool {
    index
        .get_document("key")
        .is_ok_and(|k| k.iter().all(|(_, v)| number(v).is_some()))
        && !index.contains_key("partialFilterExpression")
        && !index.get_bool("sparse").unwrap_or(false)
        && !index.get_bool("hidden").unwrap_or(false)
        && !index.contains_key("expireAfterSeconds")
}

/// Whether a Rust type (as the schema writes it) is an array that can grow: `Vec`, `VecDeque`,
/// `HashSet`, `BTreeSet`, `IndexSet`, inside `Option` or not, by the last path segment.
fn growable(rust_type: &str) -> bool {
    let inner = rust_type
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(rust_type);
    let head = inner.split('<').next().unwrap_or_default();
    let last = head.rsplit("::").next().unwrap_or_default();
    matches!(
        last,
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "IndexSet"
    )
}

/// The levels of embedded documents below the root (array elements that are documents count as
/// a level, arrays do not), and the path to the deepest.
fn depth(document: &Document) -> (usize, String) {
    fn walk(value: &Bson, path: &str) -> (usize, String) {
        match value {
            Bson::Document(d) => {
                let (deepest, at) = d
                    .iter()
                    .map(|(k, v)| walk(v, &format!("{path}.{k}")))
                    .max_by_key(|(n, _)| *n)
                    .unwrap_or((0, path.to_owned()));
                (deepest + 1, at)
            }
            Bson::Array(items) => items
                .iter()
                .map(|v| walk(v, path))
                .max_by_key(|(n, _)| *n)
                .unwrap_or((0, path.to_owned())),
            _ => (0, path.to_owned()),
        }
    }
    document
        .iter()
        .map(|(k, v)| walk(v, k))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

/// Whether the server lacks what a check needs (an unknown stage or operator, a command it does
/// not have), as opposed to a failure of the check.
fn unsupported(e: &mongodb::error::Error) -> bool {
    // CommandNotFound, an unrecognized pipeline stage, an unknown expression, not supported.
    matches!(server_code(e), Some(59 | 40324 | 168 | 31325 | 115 | 40415))
}

fn reason(what: &str, e: &mongodb::error::Error) -> String {
    format!("the server cannot run {what} ({})", server_message(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growable_types() {
        assert!(growable("Vec<String>"));
        assert!(growable("Option<Vec<Ref<Part>>>"));
        assert!(growable("std::collections::BTreeSet<u32>"));
        assert!(!growable("[u8; 4]"));
        assert!(!growable("String"));
        assert!(!growable("HashMap<String, Vec<u8>>"));
        assert!(!growable("Option<VecLike>"));
    }

    #[test]
    fn nesting_depth() {
        assert_eq!(depth(&doc! { "a": 1 }).0, 0);
        assert_eq!(depth(&doc! { "a": { "b": 1 } }), (1, "a.b".to_owned()));
        assert_eq!(
            depth(&doc! { "x": 1, "a": [{ "b": { "c": { "d": 1 } } }] }),
            (3, "a.b.c.d".to_owned())
        );
        assert_eq!(depth(&doc! { "a": [[1, 2], [3]] }).0, 0);
    }
}

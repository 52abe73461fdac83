#![doc = include_str!("../../docs/doctor.md")]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Database;
use tracing::Instrument;

use crate::error::{server_code, server_message, Result, NAMESPACE_NOT_FOUND};
use crate::finding::{examples, number, plural};
pub use crate::finding::{Bounded, Check, CheckReport, Finding, RebuildReport, RepairReport};
use crate::progress::Progress;
use crate::schema::{group_members, registered_models, ModelSchema, Sample};
use crate::shard::{self, ShardKey};
use crate::sync::{declarations, Declared, Models};

mod indexes;
mod report;

use indexes::{check_indexes, check_shard_keys, OnCollection};
pub use report::{DoctorOptions, DoctorReport, Skipped};

/// The checklist's guideline for a document's size.
const LARGE: i64 = 1024 * 1024;
/// Levels of embedded documents the checklist allows.
const MAX_DEPTH: usize = 3;

/// Audits `db` against the models of this program: every model registered with
/// `#[derive(Model)]`, or those of one [`group`](DoctorRun::group), or a
/// [list](DoctorRun::models), with the default [`DoctorOptions`] or
/// [others](DoctorRun::options). Awaited, it runs and returns a [`DoctorReport`]; it never
/// writes.
///
/// ```no_run
/// # async fn audit(db: mongodb::Database) -> pattern_runtime::Result<()> {
/// let report = pattern_runtime::doctor(&db).await?;
/// println!("{report}");
/// # Ok(()) }
/// ```
pub fn doctor(db: &Database) -> DoctorRun<'_> {
    DoctorRun {
        db,
        models: Models::All,
        options: DoctorOptions::default(),
    }
}

/// An audit of a database, from [`doctor`](doctor()): choose the models and the options, then
/// `.await` it.
#[must_use = "the doctor does nothing until it is awaited"]
pub struct DoctorRun<'a> {
    db: &'a Database,
    models: Models<'a>,
    options: DoctorOptions,
}

impl fmt::Debug for DoctorRun<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DoctorRun")
            .field("database", &self.db.name())
            .field("models", &self.models)
            .finish_non_exhaustive()
    }
}

impl<'a> DoctorRun<'a> {
    /// Only the models of one group (`#[model(group = "...")]`): for a program whose models
    /// live in several databases. A group no model names is
    /// [`Error::UnknownGroup`](crate::error::Error::UnknownGroup). `.group(..)` and
    /// [`.models(..)`](Self::models) each choose the models: the last one called wins.
    pub fn group(mut self, group: &'a str) -> Self {
        self.models = Models::Group(group);
        self
    }

    /// Exactly the listed models (`Order::SCHEMA`).
    pub fn models(mut self, models: &'a [&'static ModelSchema]) -> Self {
        self.models = Models::Listed(models);
        self
    }

    /// With these options instead of [`DoctorOptions::default()`].
    pub fn options(mut self, options: &DoctorOptions) -> Self {
        self.options = options.clone();
        self
    }
}

impl<'a> std::future::IntoFuture for DoctorRun<'a> {
    type Output = Result<DoctorReport>;
    type IntoFuture = crate::model::Pending<'a, Result<DoctorReport>>;

    fn into_future(self) -> Self::IntoFuture {
        let DoctorRun {
            db,
            models,
            options,
        } = self;
        crate::model::Pending::new(async move {
            match models {
                Models::All => doctor_models(db, &registered_models(), &options).await,
                Models::Group(group) => {
                    let members = group_members(group)?;
                    doctor_models(db, &members, &options).await
                }
                Models::Listed(models) => doctor_models(db, models, &options).await,
            }
        })
    }
}

/// Audits `db` against `models`, in one span.
async fn doctor_models(
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
            let total = Some(total as u64);
            let step = Progress::new("doctor", "collections", done as u64 + 1, total);
            let mut call = progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (*call)(&step.item(collection));
        }
    }
    check_shard_keys(db, models, &mut report).await?;
    report.maintainers = crate::maintainer::stored(db).await?;
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
        if schema.collection() == collection
            && let Some(key) = schema.shard_key()
        {
            names.insert(key.supporting_index().name());
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
                plural(n as u64, "item")
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
        tx: None,
    };
    for audit in model.patterns().iter().filter_map(|p| p.audit(&sample)) {
        report.findings.extend(audit.await?);
    }
    let orphans = model.patterns().iter().filter_map(|p| {
        p.audit_orphans(db, None, model, Some(options.sample_size), options.max_time)
    });
    for audit in orphans {
        report.findings.extend(audit.await?);
    }
    let refused = crate::validator::check::audit(db, model, options.max_time).await?;
    report.findings.extend(refused);
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

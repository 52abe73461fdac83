//! The copies' check and repair: every `propagate` copy against its source.

use super::*;
use crate::span::Spanned as _;

pub(super) async fn audit_copies(
    embedding: &'static Embedding,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let copies: Vec<&Document> = sample
        .documents
        .iter()
        .flat_map(|d| embedding.copies_in(d))
        .collect();
    let ids: Vec<Bson> = copies
        .iter()
        .filter_map(|c| c.get("_id").cloned())
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let reference = embedding.reference();
    let mut projection = doc! { "_id": 1 };
    for f in reference.fields() {
        projection.insert(*f, 1);
    }
    // A source stored in an older schema version is compared as its current shape: read whole
    // and upgraded (one that does not upgrade is left out: the read reports it).
    let schema = reference.source_schema();
    let versioned = schema
        .spec::<crate::schema_version::SchemaVersionSpec>()
        .is_some();
    let coll = sample
        .db
        .collection::<Document>(reference.source_collection());
    let find = coll
        .find(doc! { "_id": { "$in": ids } })
        .max_time(sample.max_time);
    let find = if versioned {
        find
    } else {
        find.projection(projection)
    };
    let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
    let found: Vec<Document> = crate::txn::collect_in!(find, session.as_deref_mut())?;
    let sources: HashMap<String, Document> = found
        .into_iter()
        .filter_map(|d| crate::model::read::current_document(schema, d).ok())
        .map(|d| (d.get("_id").map(id_key).unwrap_or_default(), d))
        .collect();
    let mut stale: Vec<Bson> = Vec::new();
    let mut first = None;
    for copy in &copies {
        let Some(source) = copy.get("_id").and_then(|id| sources.get(&id_key(id))) else {
            continue; // a dangling reference: the relation check's, not a stale copy
        };
        if let Some(f) = reference
            .fields()
            .iter()
            .find(|f| !crate::finding::same_value(copy.get(**f), source.get(**f)))
        {
            let id = copy.get("_id").cloned().unwrap_or(Bson::Null);
            first.get_or_insert_with(|| {
                let show =
                    |v: Option<&Bson>| v.map_or_else(|| "missing".to_owned(), ToString::to_string);
                format!(
                    "`{f}` of {id} is {} in the copy, {} in the source",
                    show(copy.get(*f)),
                    show(source.get(*f))
                )
            });
            if !stale.contains(&id) {
                stale.push(id);
            }
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    let n = copies.len();
    Ok(vec![sample
        .finding(
            Check::StaleCopy,
            embedding.path(),
            format!(
                "copies of {} `{}` documents (of {n} copies in {} sampled documents) differ from \
             their source; {first}",
                stale.len(),
                reference.source(),
                sample.documents.len()
            ),
            {
                let versioned = reference
                    .source_schema()
                    .spec::<crate::versioning::VersionSpec>()
                    .is_some();
                let handle = format!("{}::collection(&db).references()", reference.source());
                let kept = if versioned {
                    "the versioned model's own writes keep them in sync"
                } else {
                    "every write through the model's handle keeps them in sync"
                };
                format!(
                    "`{handle}.repair()` (or `rebuild(id)` for each source `_id` listed: {}), \
                     which rewrites every copy; {kept}",
                    crate::finding::examples(&stale)
                )
            },
        )
        .about(stale)])
}

impl<M: Model> References<M> {
    /// The `propagate` embeddings of `M`, each on its embedding model: what a check audits.
    fn copy_targets(&self) -> Vec<crate::maintenance::Target> {
        self.propagated()
            .into_iter()
            .map(|e| (e.schema(), e as &dyn PatternSpec))
            .collect()
    }

    /// Reads every document of every model that keeps a `propagate` copy of `M`, a page at a
    /// time, and reports the copies that differ from their source
    /// ([`Check::StaleCopy`]; a finding lists the *source*
    /// `_id`s, what [`rebuild`](Self::rebuild) takes), as the [doctor](mod@crate::doctor) does
    /// over a sample. Writes nothing.
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::extended_ref.check",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                crate::maintenance::check(&self.db, self.tx.as_ref(), &self.copy_targets()).await
            },
        )
        .await
    }

    /// [`check`](Self::check), then [`rebuild`](Self::rebuild) of each source it lists, then a
    /// check again. `repaired` counts the embedding documents rewritten.
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::extended_ref.repair",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let targets = self.copy_targets();
                let found = crate::maintenance::check(&self.db, self.tx.as_ref(), &targets).await?;
                let mut repaired = 0;
                for id in found.documents() {
                    repaired += self.rebuild_at(id).await?.modified();
                }
                crate::maintenance::after_repair(&self.db, self.tx.as_ref(), &targets, repaired)
                    .await
            },
        )
        .await
    }

    /// Rewrites every `propagate` copy of the document `id` from its stored version: after
    /// changes made outside the toolkit, or an [`Error::Incomplete`] propagation. One read and
    /// one `updateMany` per embedding, in one transaction. Snapshot copies are left alone.
    /// `repaired` counts the embedding documents rewritten, once for each of their copies that
    /// changed. [`Error::NotFound`] when there is no such document.
    pub fn rebuild<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
    ) -> crate::model::Pending<'a, Result<crate::finding::RebuildReport>> {
        crate::model::Pending::new(self.rebuild_op(id.into_id()))
    }

    async fn rebuild_op(&self, id: M::Id) -> Result<crate::finding::RebuildReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::extended_ref.rebuild",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty,
                embeddings = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                let done = self.rebuild_at(id).await?;
                Ok(crate::finding::RebuildReport::new(done.modified()))
            },
        )
        .await
    }

    /// [`rebuild`](Self::rebuild) of an id already checked.
    async fn rebuild_at(&self, id: Bson) -> Result<Propagation> {
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        let targets = self.targets(&|_| true);
        span.record("embeddings", targets.len());
        let projection = Self::projection(&targets);
        let raw = self.raw();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            // A source of an older schema version: read whole, copied as its current shape.
            let versioned = M::SCHEMA
                .spec::<crate::schema_version::SchemaVersionSpec>()
                .is_some();
            let find = raw.find_one(doc! { "_id": id.clone() });
            let find = if versioned {
                find
            } else {
                find.projection(projection.clone())
            };
            let source = match in_session!(find, s.as_deref_mut())? {
                Some(d) if versioned => Some(
                    crate::model::read::current_document(M::SCHEMA, d)
                        .map_err(mongodb::error::Error::custom)?,
                ),
                other => other,
            };
            self.copy_from(s, &id, source, &targets).await
        })?;
        self.finish(id, step)
    }
}

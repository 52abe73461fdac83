//! The subset's check and repair: the embedded items and summaries against the full
//! collection, and the rebuild of one parent.

use super::*;
use crate::span::Spanned as _;

pub(super) async fn audit_subset(
    spec: &'static SubsetSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let limit = spec.limit() as usize;
    let (mut over, mut unordered, mut miscounted) = (Vec::new(), Vec::new(), Vec::new());
    let mut largest = 0;
    let mut first_miscount: Option<String> = None;
    // The sums kept beside the subset, each compared with the full items' (like the count).
    let sums: Vec<(&'static str, &'static str)> = spec
        .summaries()
        .iter()
        .filter_map(|c| match c.kind {
            SummaryKind::Sum { item_field } => Some((c.field, item_field)),
            _ => None,
        })
        .collect();
    let counts = match (spec.count_field(), sums.is_empty()) {
        (None, true) => None,
        _ if sample.documents.is_empty() => None,
        _ => {
            let mut group = doc! { "_id": format!("${}", spec.parent_key()), "n": { "$sum": 1 } };
            for (i, (_, item_field)) in sums.iter().enumerate() {
                group.insert(format!("s{i}"), doc! { "$sum": format!("${item_field}") });
            }
            let pipeline = vec![
                doc! { "$match": { spec.parent_key(): { "$in": sample.ids() } } },
                doc! { "$group": group },
            ];
            let found: Vec<Document> = {
                let coll = sample.db.collection::<Document>(spec.full_collection());
                let action = coll.aggregate(pipeline).max_time(sample.max_time);
                let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
                crate::txn::collect_in!(action, session.as_deref_mut())?
            };
            Some(found)
        }
    };
    for (id, parent) in sample.identified() {
        let items: Vec<&Document> = match parent.get(spec.field()) {
            Some(Bson::Array(a)) => a.iter().filter_map(Bson::as_document).collect(),
            _ => Vec::new(),
        };
        largest = largest.max(items.len());
        if items.len() > limit {
            over.push(id.clone());
        }
        if items.windows(2).any(|w| out_of_order(spec, w[0], w[1])) {
            unordered.push(id.clone());
        }
        let totals = counts.as_ref().and_then(|c| {
            c.iter()
                .find(|c| c.get("_id").map(id_key) == Some(id_key(id)))
        });
        let sums_differ = counts.is_some()
            && sums.iter().enumerate().any(|(i, (field, _))| {
                let full = totals
                    .and_then(|t| t.get(format!("s{i}")))
                    .and_then(number)
                    .unwrap_or(0.0);
                let stored = parent.get(*field).and_then(number);
                !stored.is_some_and(|s| (s - full).abs() <= 1e-9 * s.abs().max(full.abs()).max(1.0))
            });
        if sums_differ {
            first_miscount.get_or_insert_with(|| {
                let fields: Vec<&str> = sums.iter().map(|(f, _)| *f).collect();
                format!(
                    "`_id` {id}: `{}` disagrees with the items of `{}`",
                    fields.join("`, `"),
                    spec.full_collection()
                )
            });
            miscounted.push(id.clone());
        }
        if let (Some(_), Some(field), false) = (&counts, spec.count_field(), sums_differ) {
            let full = totals
                .and_then(|c| c.get("n"))
                .and_then(number)
                .unwrap_or(0.0);
            let stored = parent.get(field).and_then(number);
            #[allow(clippy::cast_precision_loss)]
            let short = (items.len() as f64) < full.min(limit as f64);
            if stored != Some(full) || short {
                first_miscount.get_or_insert_with(|| {
                    let stored = parent
                        .get(field)
                        .map_or_else(|| "no".to_owned(), ToString::to_string);
                    format!(
                        "`_id` {id} holds {} items and `{field}` {stored}, `{}` has {full} of \
                         its items",
                        items.len(),
                        spec.full_collection()
                    )
                });
                miscounted.push(id.clone());
            }
        }
    }
    let rust = sample
        .model
        .field_by_bson_name(spec.field())
        .map_or(spec.field(), |f| f.rust_name());
    let fix = format!(
        "`{model}::collection(&db).subset({model}::FIELDS.{rust}).repair()` (or `rebuild(parent_id)` for each), which \
         refills the subset and its summaries from `{}`",
        spec.full_collection(),
        model = sample.model.name(),
    );
    let n = sample.documents.len();
    let mut findings = Vec::new();
    for (ids, what) in [
        (
            &over,
            format!("over the limit of {limit} (largest {largest})"),
        ),
        (
            &unordered,
            format!("out of the order {}", spec.sort_document()),
        ),
        (
            &miscounted,
            format!(
                "disagreeing with `{}` (a count that differs, or fewer items than it could \
                 fill)",
                spec.full_collection()
            ),
        ),
    ] {
        if ids.is_empty() {
            continue;
        }
        let example = if std::ptr::eq(ids, &miscounted) {
            first_miscount.clone().unwrap_or_default()
        } else {
            examples(ids)
        };
        findings.push(
            sample
                .finding(
                    Check::SubsetDrift,
                    spec.field(),
                    format!("{} of {n} sampled documents {what}; {example}", ids.len()),
                    fix.clone(),
                )
                .about(ids.iter().cloned()),
        );
    }
    Ok(findings)
}

/// Whether `b` comes before `a` in the subset's order (values the check cannot compare are
/// taken as in order).
fn out_of_order(spec: &SubsetSpec, a: &Document, b: &Document) -> bool {
    for (field, direction) in spec.sort() {
        let (Some(x), Some(y)) = (a.get(*field), b.get(*field)) else {
            return false;
        };
        match compare(x, y) {
            Some(std::cmp::Ordering::Equal) => {}
            Some(o) => return (o == std::cmp::Ordering::Greater) == (*direction > 0),
            None => return false,
        }
    }
    false
}

impl<P, F, E> Subset<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    /// Reads every parent, a page at a time, and reports those whose subset is over its
    /// limit, out of order, or whose count or sums disagree with the full collection
    /// ([`Check::SubsetDrift`], listing them), as the [doctor](mod@crate::doctor) does over a
    /// sample; then those whose embedded items are not what `E::from` makes of the first full
    /// items now (one indexed `find` per parent; the doctor, which has no `E`, cannot see
    /// this). Writes nothing.
    pub async fn check(&self) -> Result<crate::finding::CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::subset.check",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                let mut report = crate::maintenance::check(
                    &self.db,
                    self.tx.as_ref(),
                    &[(P::SCHEMA, self.spec as &dyn PatternSpec)],
                )
                .await?;
                if let Some(stale) = self.stale_items(&report.documents()).await? {
                    report.findings.push(stale);
                }
                Ok(report)
            },
        )
        .await
    }

    /// The parents (not already listed in `listed`) whose embedded items are not what
    /// `E::from` makes of the first items of the full collection now (a full item changed
    /// around the toolkit), as a finding; one indexed `find` of the first items per parent.
    /// What the doctor cannot see: it has no `E` to convert with.
    async fn stale_items(&self, listed: &[Bson]) -> Result<Option<Finding>> {
        let field = self.spec.field();
        let listed: std::collections::HashSet<String> = listed.iter().map(id_key).collect();
        // In the handle's transaction when it has one: the parents read whole in it first (a
        // cursor read in the session cannot stay open while each parent's items are read).
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let coll = self.parents();
        let find = coll
            .find(doc! {})
            .projection(doc! { "_id": 1, field: 1 })
            .sort(doc! { "_id": 1 });
        let mut parents: futures_util::stream::BoxStream<'_, Result<Document>> =
            if session.is_some() {
                let all: Vec<Document> = crate::txn::collect_in!(find, session.as_deref_mut())?;
                futures_util::StreamExt::boxed(futures_util::stream::iter(all.into_iter().map(Ok)))
            } else {
                futures_util::StreamExt::boxed(find.await?.map_err(Error::from))
            };
        let (mut examined, mut stale) = (0usize, Vec::new());
        while let Some(parent) = parents.try_next().await? {
            let Some(id) = parent.get("_id") else {
                continue;
            };
            if listed.contains(&id_key(id)) {
                continue;
            }
            examined += 1;
            let expected = self.first_items(session.as_deref_mut(), id).await?;
            let agrees = match parent.get(field) {
                Some(Bson::Array(items)) => {
                    items.len() == expected.len()
                        && items
                            .iter()
                            .zip(&expected)
                            .all(|(a, b)| crate::finding::same_stored(a, b))
                }
                None | Some(Bson::Null) => expected.is_empty(),
                Some(_) => false,
            };
            if !agrees {
                stale.push(id.clone());
            }
        }
        if stale.is_empty() {
            return Ok(None);
        }
        let rust = P::SCHEMA
            .field_by_bson_name(field)
            .map_or(field, |f| f.rust_name());
        Ok(Some(Finding {
            check: Check::SubsetDrift,
            model: Some(P::SCHEMA.name()),
            collection: P::SCHEMA.collection().to_owned(),
            subject: field.to_owned(),
            figure: format!(
                "{} of {examined} documents embed items that are not the first items of `{}` \
                 as they are now; {}",
                stale.len(),
                self.spec.full_collection(),
                examples(&stale)
            ),
            fix: format!(
                "`{model}::collection(&db).subset({model}::FIELDS.{rust}).repair()` (or \
                 `rebuild(parent_id)` for each), which refills the subset from `{}`",
                self.spec.full_collection(),
                model = P::SCHEMA.name(),
            ),
            documents: stale,
        }))
    }

    /// [`check`](Self::check), then [`rebuild`](Self::rebuild) of each parent it lists, then a
    /// check again.
    pub async fn repair(&self) -> Result<crate::finding::RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::subset.repair",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                let found = self.check().await?;
                let mut repaired = 0;
                for id in found.documents() {
                    match self.rebuild_at(id).await {
                        Ok(done) => repaired += done.repaired,
                        Err(e) if e.is_not_found() => {}
                        Err(e) => return Err(e),
                    }
                }
                let left = self.check().await?.findings;
                tracing::info!(repaired, left = left.len(), "repaired");
                Ok(crate::finding::RepairReport { repaired, left })
            },
        )
        .await
    }

    /// Recomputes the embedded array and every summary from the full collection: the repair
    /// after manual edits or a crash between two non-transactional writes. Reads the first N items
    /// through the `{parent, sort}` index and sums the rest with one `$group`. `repaired` is 1
    /// when the parent changed, 0 when it already agreed. [`Error::NotFound`] when there is no
    /// such parent.
    pub fn rebuild<'a>(
        &'a self,
        parent_id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<crate::finding::RebuildReport>> {
        crate::model::Pending::new(self.rebuild_op(parent_id.into_id()))
    }

    async fn rebuild_op(&self, parent_id: P::Id) -> Result<crate::finding::RebuildReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::subset.rebuild",
                model = self.span_model(),
                collection = self.span_collection(),
                items_collection = self.spec.full_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let parent_id = crate::literal::typed_id("_id", parent_id)?;
                self.rebuild_at(parent_id).await
            },
        )
        .await
    }

    /// [`rebuild`](Self::rebuild) of an id already checked.
    async fn rebuild_at(&self, parent_id: Bson) -> Result<crate::finding::RebuildReport> {
        tracing::Span::current().record("id", tracing::field::display(&parent_id));
        match self.write_parent(&parent_id, ParentWrite::Rebuild).await? {
            Some(modified) => Ok(crate::finding::RebuildReport::new(modified)),
            None => Err(self.parent_not_found(parent_id)),
        }
    }

    /// The first items of `parent_id` in the full collection, as the parent embeds them.
    pub(super) async fn first_items(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Vec<Bson>> {
        let embed: Embed = embed::<F, E>;
        self.spec
            .first_items(&self.db, embed, session, parent_id)
            .await
    }

    /// Rebuilds the subset and counters of `parent_id` from the full collection: `None` when
    /// there is no such parent, else whether the write changed it (1 or 0).
    pub(super) async fn write_rebuild(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Option<u64>> {
        let embed: Embed = embed::<F, E>;
        self.spec
            .rebuild_parent(&self.db, P::SCHEMA, embed, session, parent_id)
            .await
    }
}

/// One full item as its parent embeds it: `E::from(&F)` of the stored item, serialized. The
/// only step of a rebuild that knows the types: generated code names `embed::<F, E>` (through
/// [`RebuildProbe`]) and the rest of the rebuild is compiled once, in this crate, whatever the
/// number of subsets in a program.
///
/// It reads `F` from a [`Document`], not from the raw bytes: deserializing from raw BSON
/// instantiates `F`'s `Deserialize` once per kind of raw value (12 copies of its `visit_map`,
/// two thirds of a user crate's generated code in the compile-cost benchmark); from a
/// `Document`, twice. A rebuild reads at most `limit` items, so the extra parse costs little.
pub type Embed = fn(Document) -> mongodb::error::Result<Bson>;

/// The [`Embed`] of the full item `F` embedded as `E`.
pub(super) fn embed<F, E>(stored: Document) -> mongodb::error::Result<Bson>
where
    F: Model,
    E: Serialize + for<'a> From<&'a F>,
{
    let full: F = crate::model::read::decode::<F>(stored).map_err(crate::error::refusal)?;
    Ok(Bson::Document(bson::serialize_to_document(&E::from(
        &full,
    ))?))
}

impl SubsetSpec {
    /// The first `limit` items of `parent_id` in the full collection, in the subset's order,
    /// each as `embed` makes it.
    pub(super) async fn first_items(
        &self,
        db: &Database,
        embed: Embed,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Vec<Bson>> {
        let coll = db.collection::<Document>(self.full_collection());
        let find = coll
            .find(doc! { self.parts.parent_key: parent_id.clone() })
            .sort(self.sort_document())
            .limit(i64::from(self.parts.limit));
        let items: Vec<Document> = match session {
            Some(s) => find.session(&mut *s).await?.stream(s).try_collect().await?,
            None => find.await?.try_collect().await?,
        };
        items.into_iter().map(embed).collect()
    }

    /// Rebuilds the subset and counters of `parent_id` (a document of `parent`) from the full
    /// collection, in `session`: one `find` of the first items, one `aggregate` of the counters,
    /// one `update` (two with averages). Whether the parent exists.
    pub(super) async fn rebuild_parent(
        &self,
        db: &Database,
        parent: &'static ModelSchema,
        embed: Embed,
        mut session: Option<&mut ClientSession>,
        parent_id: &Bson,
    ) -> mongodb::error::Result<Option<u64>> {
        let spec = &self.parts;
        // Full items still stored in an older shape are rewritten at the current one first:
        // the sums below are the server's, over the stored field names.
        let items = doc! { spec.parent_key: parent_id.clone() };
        crate::stored::upgrade::upgrade_matching(
            db,
            session.as_deref_mut(),
            self.full_schema(),
            &items,
        )
        .await?;
        let first = self
            .first_items(db, embed, session.as_deref_mut(), parent_id)
            .await?;
        let mut group = doc! { "_id": Bson::Null };
        for c in spec.summaries {
            match c.kind {
                SummaryKind::Count => group.insert(c.field, doc! { "$sum": 1 }),
                SummaryKind::Sum { item_field } => {
                    group.insert(c.field, doc! { "$sum": format!("${item_field}") })
                }
                SummaryKind::Avg { .. } => None,
            };
        }
        let pipeline = vec![
            doc! { "$match": { spec.parent_key: parent_id.clone() } },
            doc! { "$group": group },
        ];
        let fulls = db.collection::<Document>(self.full_collection());
        let totals: Vec<Document> = match session.as_deref_mut() {
            Some(s) => {
                let mut agg = fulls.aggregate(pipeline).session(&mut *s).await?;
                agg.stream(s).try_collect().await?
            }
            None => fulls.aggregate(pipeline).await?.try_collect().await?,
        };
        let totals = totals.into_iter().next().unwrap_or_default();
        let first_len = first.len();
        let mut set = doc! { spec.field: first };
        for c in spec.summaries {
            match c.kind {
                SummaryKind::Count | SummaryKind::Sum { .. } => {
                    // An integer as the field is stored (the server's `$sum` keeps small
                    // integers an `Int32`): a parent that agrees is then left unchanged.
                    let v = match totals.get(c.field) {
                        Some(Bson::Int32(n)) => {
                            crate::schema::shape::integer_for(parent, c.field, i64::from(*n))
                        }
                        Some(Bson::Int64(n)) => {
                            crate::schema::shape::integer_for(parent, c.field, *n)
                        }
                        Some(other) => other.clone(),
                        None => crate::schema::shape::integer_for(parent, c.field, 0),
                    };
                    set.insert(c.field, v);
                }
                SummaryKind::Avg { .. } => {}
            }
        }
        let parents = db.collection::<Document>(parent.collection());
        let filter = doc! { "_id": parent_id.clone() };
        let update = doc! { "$set": set };
        let average = self.average_update();
        let embedded = first_len;
        let in_transaction = session.is_some();
        let r = match session {
            Some(s) => {
                let r = parents
                    .update_one(filter.clone(), update)
                    .session(&mut *s)
                    .await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
                r
            }
            None => {
                let r = parents.update_one(filter.clone(), update).await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).await?;
                    averages_updated(&r, false);
                }
                r
            }
        };
        tracing::debug!(
            embedded,
            matched = r.matched_count,
            modified = r.modified_count,
            in_transaction,
            "parent rebuilt from the full collection"
        );
        Ok((r.matched_count > 0).then_some(r.modified_count))
    }
}

//! The outlier field's check and repair: the count and the flag against the items.

use super::*;
use crate::span::Spanned as _;

pub(super) async fn audit_outlier(
    spec: &'static OutlierSpec,
    sample: &crate::schema::Sample<'_>,
) -> Result<Vec<crate::finding::Finding>> {
    let ids = sample.ids();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let groups: Vec<Document> = {
        let coll = sample.db.collection::<Document>(spec.overflow());
        let action = coll
            .aggregate(overflow_groups(spec, ids))
            .max_time(sample.max_time);
        let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
        crate::txn::collect_in!(action, session.as_deref_mut())?
    };
    let overflow = by_parent(&groups);
    let mut drifted = Vec::new();
    let mut first = None;
    for (id, d) in sample.identified() {
        let embedded = match d.get(spec.field()) {
            Some(Bson::Array(items)) => items.len() as i64,
            _ => 0,
        };
        let (docs, items) = overflow
            .get(&crate::finding::id_key(id))
            .copied()
            .unwrap_or((0, 0));
        let count = int(d.get(spec.count()));
        let flag = d.get_bool(spec.flag()).unwrap_or(false);
        if count == embedded + items && flag == (docs > 0) {
            continue;
        }
        first.get_or_insert_with(|| {
            format!(
                "`_id` {id} counts {count} and flags {flag}, but holds {embedded} items and \
                 {items} more in {docs} overflow documents"
            )
        });
        drifted.push(id.clone());
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            crate::finding::Check::OutlierDrift,
            spec.count(),
            format!(
                "{} of {} sampled documents disagree with their `{}` items; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.field()
            ),
            format!(
                "`{model}::collection(&db).outlier({model}::FIELDS.{rust}).repair()` (or \
                 `rebuild(id)` for each: {}); pushes and removals through it keep them",
                crate::finding::examples(&drifted),
                model = sample.model.name(),
                rust = sample
                    .model
                    .field_by_bson_name(spec.field())
                    .map_or(spec.field(), |f| f.rust_name()),
            ),
        )
        .about(drifted)])
}

/// The overflow documents of the main documents `ids`, grouped by the main document: how many,
/// and how many items they hold.
fn overflow_groups(spec: &OutlierSpec, ids: Vec<Bson>) -> [Document; 2] {
    [
        doc! { "$match": { spec.parent(): { "$in": ids } } },
        doc! { "$group": {
            "_id": format!("${}", spec.parent()),
            "docs": { "$sum": 1 },
            "items": { "$sum": { "$size": { "$ifNull": [format!("${}", spec.field()), []] } } },
        } },
    ]
}

/// The main documents `filter` matches, with their count and flag and the length of their
/// items (under [`length_key`]), not the items.
fn main_lengths(spec: &OutlierSpec, filter: Document) -> [Document; 2] {
    [
        doc! { "$match": filter },
        doc! { "$project": {
            spec.flag(): 1,
            spec.count(): 1,
            length_key(spec): { "$size": { "$ifNull": [format!("${}", spec.field()), []] } },
        } },
    ]
}

/// [`overflow_groups`]' answer by main document (its `_id` as a key): documents and items.
fn by_parent(groups: &[Document]) -> std::collections::HashMap<String, (i64, i64)> {
    groups
        .iter()
        .filter_map(|g| {
            Some((
                crate::finding::id_key(g.get("_id")?),
                (int(g.get("docs")), int(g.get("items"))),
            ))
        })
        .collect()
}

/// What a document holds against its count and flag, from [`Outlier::state`]: the items in
/// the main document and in the overflow documents, and the stored count and flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlierState {
    /// Items in the main document.
    pub embedded: u64,
    /// Items in the overflow documents.
    pub overflowed: u64,
    /// Overflow documents.
    pub overflow_documents: u64,
    /// The stored count.
    pub stored_count: i64,
    /// The stored flag.
    pub stored_flag: bool,
}

impl OutlierState {
    /// Whether the count and the flag agree with the items (the flag: set exactly when overflow
    /// documents exist).
    pub fn is_consistent(&self) -> bool {
        self.stored_count == (self.embedded + self.overflowed) as i64
            && self.stored_flag == (self.overflow_documents > 0)
    }
}

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> Outlier<P, T> {
    /// What the document `id` holds, against its count and flag; writes nothing.
    pub fn state<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<OutlierState>> {
        crate::model::Pending::new(self.state_op(id.into_id()))
    }

    async fn state_op(&self, id: P::Id) -> Result<OutlierState> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::outlier.state",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let outcome = self
                    .state_in(session.as_deref_mut(), &id)
                    .await
                    .map_err(Error::from);
                self.map_no_parent(id, outcome)
            },
        )
        .await
    }

    /// Reads every document of the model, a page at a time, with its overflow documents'
    /// sizes, and reports those whose count or flag disagrees with their items
    /// ([`Check::OutlierDrift`](crate::doctor::Check::OutlierDrift), listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::outlier.check",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                crate::maintenance::check(
                    &self.db,
                    self.tx.as_ref(),
                    &[(P::SCHEMA, self.spec as &dyn PatternSpec)],
                )
                .await
            },
        )
        .await
    }

    /// [`check`](Self::check), then [`rebuild`](Self::rebuild) of each document it lists,
    /// then a check again.
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::outlier.repair",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                let targets = [(P::SCHEMA, self.spec as &dyn PatternSpec)];
                let found = crate::maintenance::check(&self.db, self.tx.as_ref(), &targets).await?;
                let mut repaired = 0;
                for id in found.documents() {
                    match self.rebuild_at(id).await {
                        Ok(_) => repaired += 1,
                        // Deleted since the check: nothing to repair.
                        Err(e) if e.is_not_found() => {}
                        Err(e) => return Err(e),
                    }
                }
                crate::maintenance::after_repair(&self.db, self.tx.as_ref(), &targets, repaired)
                    .await
            },
        )
        .await
    }

    /// Writes the count and the flag of the document `id` from its items (after edits made
    /// around the toolkit), in one transaction. `repaired` is 1 when they disagreed with the
    /// items, 0 when they agreed ([`state`](Self::state) reads them). [`Error::NotFound`] when
    /// there is no such document.
    pub fn rebuild<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
    ) -> crate::model::Pending<'a, Result<crate::finding::RebuildReport>> {
        crate::model::Pending::new(self.rebuild_op(id.into_id()))
    }

    async fn rebuild_op(&self, id: P::Id) -> Result<crate::finding::RebuildReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::outlier.rebuild",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                let before = self.rebuild_at(id).await?;
                Ok(crate::finding::RebuildReport::new(u64::from(
                    !before.is_consistent(),
                )))
            },
        )
        .await
    }

    /// [`rebuild`](Self::rebuild) of an id already checked.
    async fn rebuild_at(&self, id: Bson) -> Result<OutlierState> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            let before = self.state_in(s.as_deref_mut(), &id).await?;
            self.write_state(s.as_deref_mut(), &id).await?;
            if let Some(watch) = watch {
                // The count before may have been written around the toolkit: what derives
                // from it is rebuilt, not moved by the difference.
                watch.rebuilt(&self.db, s).await?;
            }
            Ok(before)
        });
        self.map_no_parent(id, outcome)
    }

    /// The state of `id` read in `s`: the main document's items, count and flag, and the
    /// overflow documents' sizes (one aggregation).
    pub(super) async fn state_in(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<OutlierState> {
        let spec = self.spec;
        let main_collection = self.main();
        let read = main_collection.aggregate(main_lengths(spec, doc! { "_id": id.clone() }));
        let main: Option<Document> = collect_in!(read, s.as_deref_mut())?.pop();
        let Some(main) = main else {
            return Err(mongodb::error::Error::custom(NoParent));
        };
        let overflow_collection = self.overflow();
        let read = overflow_collection.aggregate([
            doc! { "$match": { spec.parent(): parent_is(id) } },
            doc! { "$group": {
                "_id": Bson::Null,
                "docs": { "$sum": 1 },
                "items": { "$sum": { "$size": format!("${}", spec.field()) } },
            } },
        ]);
        let overflow: Option<Document> = collect_in!(read, s)?.pop();
        let (docs, items) = overflow
            .map(|d| (int(d.get("docs")), int(d.get("items"))))
            .unwrap_or((0, 0));
        Ok(OutlierState {
            embedded: u64::try_from(int(main.get(length_key(spec)))).unwrap_or(0),
            overflowed: u64::try_from(items).unwrap_or(0),
            overflow_documents: u64::try_from(docs).unwrap_or(0),
            stored_count: int(main.get(spec.count())),
            stored_flag: main.get_bool(spec.flag()).unwrap_or(false),
        })
    }

    /// Reads the state of `id` and writes its count and flag from it; returns the state after.
    pub(super) async fn write_state(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<OutlierState> {
        let mut state = self.state_in(s.as_deref_mut(), id).await?;
        let count = (state.embedded + state.overflowed) as i64;
        let flag = state.overflow_documents > 0;
        let main = self.main();
        let write = main.update_one(
            doc! { "_id": id.clone() },
            // The field's own integer type: an `i32` count stays an `Int32`, an `i64` an `Int64`.
            doc! { "$set": {
                self.spec.count(): crate::schema::shape::integer_for(P::SCHEMA, self.spec.count(), count),
                self.spec.flag(): flag,
            } },
        );
        in_session!(write, s)?;
        state.stored_count = count;
        state.stored_flag = flag;
        Ok(state)
    }
}

/// Writes the count and the flag of the main documents `ids` where they disagree with their
/// items (a [maintainer](crate::maintainer)'s rebuild after a change around the toolkit), in
/// `s`: one read of the main documents, one `$group` of their overflow documents, and a `$set`
/// for each that disagrees, conditional on the count and the flag read (a push committed in
/// between is not undone: its own event rebuilds again). Returns how many it rewrote.
pub(super) async fn rebuild_counts(
    db: &Database,
    mut s: Option<&mut ClientSession>,
    spec: &'static OutlierSpec,
    model: &'static ModelSchema,
    ids: Vec<Bson>,
) -> mongodb::error::Result<u64> {
    let main: Collection<Document> = db.collection(model.collection());
    let read = main.aggregate(main_lengths(spec, doc! { "_id": { "$in": ids.clone() } }));
    let mains: Vec<Document> = collect_in!(read, s.as_deref_mut())?;
    let overflow: Collection<Document> = db.collection(spec.overflow());
    let read = overflow.aggregate(overflow_groups(spec, ids));
    let groups: Vec<Document> = collect_in!(read, s.as_deref_mut())?;
    let overflowed = by_parent(&groups);
    let mut rewritten = 0;
    for d in &mains {
        let Some(id) = d.get("_id") else { continue };
        let (docs, items) = overflowed
            .get(&crate::finding::id_key(id))
            .copied()
            .unwrap_or((0, 0));
        let count = int(d.get(length_key(spec).as_str())) + items;
        let flag = docs > 0;
        if int(d.get(spec.count())) == count && d.get_bool(spec.flag()).unwrap_or(false) == flag {
            continue;
        }
        // As read, compared literally (`$eq`: a stored `{"$gt": 0}` is a value, not a test).
        let read_as = |field: &str| doc! { "$eq": d.get(field).cloned().unwrap_or(Bson::Null) };
        let write = main.update_one(
            doc! {
                "_id": { "$eq": id.clone() },
                spec.count(): read_as(spec.count()),
                spec.flag(): read_as(spec.flag()),
            },
            // The field's own integer type: an `i32` count stays an `Int32`, an `i64` an `Int64`.
            doc! { "$set": {
                spec.count(): crate::schema::shape::integer_for(model, spec.count(), count),
                spec.flag(): flag,
            } },
        );
        rewritten += in_session!(write, s.as_deref_mut())?.modified_count;
    }
    Ok(rewritten)
}

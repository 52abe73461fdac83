//! The grid's check and repair: holders and bitmaps that say different things, bits past the
//! sub-slots.

use super::*;
use crate::span::Spanned as _;

/// The bits of a bitmap past `sub_slots`.
fn stray_bits(value: Option<&Bson>, sub_slots: u32) -> bool {
    let bits = match value {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        _ => return false,
    };
    let Bson::Int64(mask) = full_mask(sub_slots) else {
        return false;
    };
    bits & !mask != 0
}

pub(super) async fn audit_grid(
    spec: &'static SlotSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    if sample.documents.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<Bson> = sample
        .documents
        .iter()
        .map(|d| {
            Bson::Document(doc! {
                spec.resource(): d.get(spec.resource()).cloned().unwrap_or(Bson::Null),
                spec.slot(): d.get(spec.slot()).cloned().unwrap_or(Bson::Null),
            })
        })
        .collect();
    let twice: Vec<Document> = {
        let coll = sample.db.collection::<Document>(spec.collection());
        let action = coll.aggregate([
            doc! { "$match": { "$or": keys } },
            doc! { "$group": {
                "_id": { "r": format!("${}", spec.resource()), "s": format!("${}", spec.slot()) },
                "n": { "$sum": 1 },
                "ids": { "$push": "$_id" },
            } },
            doc! { "$match": { "n": { "$gt": 1 } } },
        ]).max_time(sample.max_time);
        let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
        crate::txn::collect_in!(action, session.as_deref_mut())?
    };
    let mut findings = Vec::new();
    if !twice.is_empty() {
        let ids: Vec<Bson> = twice
            .iter()
            .flat_map(|g| match g.get("ids") {
                Some(Bson::Array(a)) => a.clone(),
                _ => Vec::new(),
            })
            .collect();
        findings.push(
            sample
                .finding(
                    Check::GridDrift,
                    format!("{}, {}", spec.resource(), spec.slot()),
                    format!(
                        "{} slots are allocated more than once ({} documents); {}",
                        twice.len(),
                        ids.len(),
                        examples(&ids)
                    ),
                    "delete the extra documents of each slot by hand (keep the booked one), \
                     then sync the grid's indexes: its unique `{resource, slot}` index keeps \
                     `allocate` from writing a slot twice"
                        .to_owned(),
                )
                .about(ids),
        );
    }
    if let Some(bitmap) = spec.bitmap() {
        let stray: Vec<Bson> = sample
            .documents
            .iter()
            .filter(|d| stray_bits(d.get(bitmap), spec.sub_slots()))
            .filter_map(|d| d.get("_id").cloned())
            .collect();
        if !stray.is_empty() {
            findings.push(
                sample
                    .finding(
                        Check::GridDrift,
                        bitmap,
                        format!(
                            "{} of {} slots have bits set past their {} sub-slots; {}",
                            stray.len(),
                            sample.documents.len(),
                            spec.sub_slots(),
                            examples(&stray)
                        ),
                        format!(
                            "`{}::collection(&db).slots().repair()` clears them; `book_range` and \
                             `free_range` never set them",
                            sample.model.name()
                        ),
                    )
                    .about(stray),
            );
        }
    }
    Ok(findings)
}

impl<M: Preallocated> Slots<M> {
    /// Reads every slot, a page at a time, and reports slots allocated more than once and
    /// bitmaps with bits past the sub-slots
    /// ([`Check::GridDrift`], listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.check",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                crate::maintenance::check(
                    &self.db,
                    self.tx.as_ref(),
                    &[(M::SCHEMA, M::SLOTS as &dyn PatternSpec)],
                )
                .await
            },
        )
        .await
    }

    /// [`check`](Self::check), then clears the bits past the sub-slots of each bitmap it lists
    /// (one read and one conditional `$set` per slot, the bitmap keeping its stored integer
    /// type), then a check again. Slots allocated twice are
    /// left: which of the documents to keep is the application's call.
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.repair",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let s = M::SLOTS;
                let targets = [(M::SCHEMA, s as &dyn PatternSpec)];
                let found = crate::maintenance::check(&self.db, self.tx.as_ref(), &targets).await?;
                let mut repaired = 0;
                if let Some(bitmap) = s.bitmap() {
                    let stray: Vec<Bson> = found
                        .findings
                        .iter()
                        .filter(|f| f.subject == bitmap)
                        .flat_map(|f| f.documents.iter().cloned())
                        .collect();
                    let Bson::Int64(mask) = full_mask(s.sub_slots()) else {
                        return crate::maintenance::after_repair(
                            &self.db,
                            self.tx.as_ref(),
                            &targets,
                            0,
                        )
                        .await;
                    };
                    let raw = self.raw();
                    for id in stray {
                        let read = raw
                            .find_one(doc! { "_id": id.clone() })
                            .projection(doc! { bitmap: 1 });
                        let found = {
                            let mut session = self.session().await?;
                            in_session!(read, session.as_deref_mut())?
                        };
                        // The bits kept, in the type stored (an `i32` bitmap stays one).
                        let (stored, kept) = match found.as_ref().and_then(|d| d.get(bitmap)) {
                            Some(Bson::Int32(b)) => {
                                (Bson::Int32(*b), Bson::Int32((i64::from(*b) & mask) as i32))
                            }
                            Some(Bson::Int64(b)) => (Bson::Int64(*b), Bson::Int64(*b & mask)),
                            _ => continue,
                        };
                        // Conditional on the bits read: a booking meanwhile is left for the next run.
                        repaired += crate::derived::update_one(
                            &self.db,
                            self.tx.as_ref(),
                            M::SCHEMA,
                            doc! { "_id": id, bitmap: stored },
                            doc! { "$set": { bitmap: kept } },
                            &[bitmap],
                        )
                        .await?
                        .modified_count;
                    }
                }
                crate::maintenance::after_repair(&self.db, self.tx.as_ref(), &targets, repaired)
                    .await
            },
        )
        .await
    }
}

//! A two-way relation's check and repair: both sides against each other.

use super::*;
use crate::span::Spanned as _;

/// [`RelationSpec::audit`] of a two-way relation: this side's sampled documents against the
/// other side.
pub(super) async fn audit_two_way(
    spec: &'static RelationSpec,
    sample: &crate::schema::Sample<'_>,
) -> Result<Vec<crate::finding::Finding>> {
    let Some(inverse) = spec.inverse() else {
        return Ok(Vec::new());
    };
    let field = spec.field();
    let as_list = |v: Option<&Bson>| -> Vec<Bson> {
        match v {
            Some(Bson::Array(a)) => a.clone(),
            Some(Bson::Null) | None => Vec::new(),
            Some(one) => vec![one.clone()],
        }
    };
    // The other side's documents this sample names.
    let named: Vec<Bson> = sample
        .documents
        .iter()
        .flat_map(|d| as_list(d.get(field)))
        .collect();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let others: HashMap<String, Vec<Bson>> = {
        let coll = sample.db.collection::<Document>(spec.target().collection());
        let action = coll
            .find(doc! { "_id": { "$in": named } })
            .projection(doc! { inverse: 1 })
            .max_time(sample.max_time);
        let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
        crate::txn::collect_in!(action, session.as_deref_mut())?
    }
    .into_iter()
    .filter_map(|d| {
        let id = crate::finding::id_key(d.get("_id")?);
        Some((id, as_list(d.get(inverse))))
    })
    .collect();
    let mut drifted = Vec::new();
    let mut first = None;
    for (id, d) in sample.identified() {
        let key = crate::finding::id_key(id);
        for other in as_list(d.get(field)) {
            let problem = match others.get(&crate::finding::id_key(&other)) {
                None => format!("{id} names {other} in `{field}`, which does not exist"),
                Some(back) if back.iter().any(|b| crate::finding::id_key(b) == key) => continue,
                Some(_) => format!(
                    "{id} names {other} in `{field}`, whose `{inverse}` does not name it back"
                ),
            };
            first.get_or_insert(problem);
            if !drifted.contains(id) {
                drifted.push(id.clone());
            }
        }
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    // The repair runs from the single side (the child's owner field says which owner it has).
    let (single_model, single_field) = if spec.is_many() {
        (spec.target(), inverse)
    } else {
        (spec.model(), field)
    };
    let rust = single_model
        .field_by_bson_name(single_field)
        .map_or(single_field, |f| f.rust_name());
    Ok(vec![sample
        .finding(
            crate::finding::Check::TwoWayDrift,
            field,
            format!(
                "{} of {} sampled documents disagree with `{}.{inverse}`; {first}",
                drifted.len(),
                sample.documents.len(),
                spec.target().name()
            ),
            format!(
                "`{model}::collection(&db).relation({model}::FIELDS.{rust}).repair()` makes every \
                 owner's array agree with the children's owner fields ({}); `assign` keeps both \
                 sides",
                crate::finding::examples(&drifted),
                model = single_model.name(),
            ),
        )
        .about(drifted)])
}

/// Every document of `collection` as its `_id` and the value of `field` (a full scan, projected),
/// in the caller's transaction `tx` when there is one.
async fn scan(
    db: &Database,
    tx: Option<&crate::txn::Transaction>,
    collection: &str,
    field: &str,
) -> Result<Vec<(Bson, Option<Bson>)>> {
    let mut session = crate::txn::Transaction::session_of(tx).await?;
    let collection = db.collection::<Document>(collection);
    let find = collection.find(doc! {}).projection(doc! { field: 1 });
    let found: Vec<Document> = crate::txn::collect_in!(find, session.as_deref_mut())?;
    Ok(found
        .into_iter()
        .map(|mut d| (d.remove("_id").unwrap_or(Bson::Null), d.remove(field)))
        .collect())
}

impl<S: Identified, T: Identified> TwoWay<S, T> {
    /// Reads both collections (every child's owner field, every owner's array) and reports
    /// the disagreements as findings ([`Check::TwoWayDrift`]), one per kind, each listing
    /// its documents: owners listing a child that names another owner or does not exist,
    /// children their owner does not list, children whose owner does not exist. A full scan
    /// of both: for audits and after edits made outside the toolkit, not for every request.
    /// Bound to a transaction ([`in_transaction`](Self::in_transaction)), it reads in it.
    ///
    /// [`Check::TwoWayDrift`]: crate::doctor::Check::TwoWayDrift
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::relation.check",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.relation.spec.field()
            ),
            async move {
                let (examined, found) = self.check_inner().await?;
                Ok(CheckReport {
                    examined,
                    findings: self.findings(&found),
                })
            },
        )
        .await
    }

    /// The disagreements as findings, one per kind.
    fn findings(&self, found: &[Disagreement]) -> Vec<Finding> {
        let spec = self.relation.spec;
        let inverse = self.inverse();
        let rust = spec
            .model()
            .field_by_bson_name(spec.field())
            .map_or(spec.field(), |f| f.rust_name());
        let repair = format!(
            "`{model}::collection(&db).relation({model}::FIELDS.{rust}).repair()` makes every \
             owner's array agree with the children's owner fields; `assign` keeps both sides",
            model = spec.model().name()
        );
        let (model, target) = (spec.model(), spec.target());
        let mut kinds: [(&str, &ModelSchema, &str, Vec<Bson>); 4] = [
            (
                "list a child that names another owner",
                target,
                inverse,
                Vec::new(),
            ),
            (
                "list a child that does not exist",
                target,
                inverse,
                Vec::new(),
            ),
            (
                "are not listed by their owner",
                model,
                spec.field(),
                Vec::new(),
            ),
            (
                "name an owner that does not exist",
                model,
                spec.field(),
                Vec::new(),
            ),
        ];
        // Each disagreement under its kind: the document it is about.
        for d in found {
            let (kind, id) = match d {
                Disagreement::ListedElsewhere { owner, .. } => (0, owner),
                Disagreement::MissingChild { owner, .. } => (1, owner),
                Disagreement::NotListed { child, .. } => (2, child),
                Disagreement::MissingOwner { child, .. } => (3, child),
            };
            kinds[kind].3.push(id.clone());
        }
        let mut findings = Vec::new();
        for (what, on, field, mut ids) in kinds {
            let mut seen = std::collections::HashSet::new();
            ids.retain(|id| seen.insert(crate::finding::id_key(id)));
            if ids.is_empty() {
                continue;
            }
            let orphans = std::ptr::eq(on, model) && what.starts_with("name an owner");
            findings.push(
                Finding {
                    check: crate::finding::Check::TwoWayDrift,
                    model: Some(on.name()),
                    collection: on.collection().to_owned(),
                    subject: field.to_owned(),
                    figure: format!(
                        "{} documents {what}; {}",
                        ids.len(),
                        crate::finding::examples(&ids)
                    ),
                    fix: if orphans {
                        format!(
                            "`assign` each to an existing `{}`, or create the owner: a repair \
                             cannot invent one",
                            target.name()
                        )
                    } else {
                        repair.clone()
                    },
                    documents: Vec::new(),
                }
                .about(ids),
            );
        }
        findings
    }

    /// Documents read, and every disagreement.
    async fn check_inner(&self) -> Result<(u64, Vec<Disagreement>)> {
        let spec = self.relation.spec;
        let db = &self.relation.db;
        let field = spec.field();
        let inverse = self.inverse();
        // Bson is not `Hash`: key both sides as the server compares them (`1` and `1i64` alike).
        let key = crate::finding::id_key;
        let mut owner_of: HashMap<String, (Bson, Option<Bson>)> = HashMap::new();
        for (id, owner) in scan(db, self.tx(), spec.model().collection(), field).await? {
            let owner = owner.filter(|b| !matches!(b, Bson::Null));
            owner_of.insert(key(&id), (id, owner));
        }
        let mut lists: HashMap<String, (Bson, Vec<Bson>)> = HashMap::new();
        for (id, listed) in scan(db, self.tx(), spec.target().collection(), inverse).await? {
            let listed = match listed {
                Some(Bson::Array(a)) => a,
                _ => Vec::new(),
            };
            lists.insert(key(&id), (id, listed));
        }
        let mut out = Vec::new();
        for (owner_key, (owner, listed)) in &lists {
            for child in listed {
                match owner_of.get(&key(child)) {
                    None => out.push(Disagreement::MissingChild {
                        owner: owner.clone(),
                        child: child.clone(),
                    }),
                    Some((_, actual)) if actual.as_ref().map(key).as_ref() != Some(owner_key) => {
                        out.push(Disagreement::ListedElsewhere {
                            owner: owner.clone(),
                            child: child.clone(),
                            actual: actual.clone(),
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        for (child, owner) in owner_of.values() {
            let Some(owner) = owner else { continue };
            match lists.get(&key(owner)) {
                None => out.push(Disagreement::MissingOwner {
                    child: child.clone(),
                    owner: owner.clone(),
                }),
                Some((_, listed)) if !listed.iter().any(|c| key(c) == key(child)) => {
                    out.push(Disagreement::NotListed {
                        child: child.clone(),
                        owner: owner.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        tracing::debug!(
            target: "pattern_runtime::relation",
            children = owner_of.len(),
            owners = lists.len(),
            disagreements = out.len(),
            "checked"
        );
        Ok(((owner_of.len() + lists.len()) as u64, out))
    }

    /// Makes every owner's array agree with the children's owner fields (the side that says
    /// which owner a child has): adds missing entries, pulls wrong ones and those of children
    /// that do not exist; then checks again. Children whose owner does not exist are left,
    /// and reported in [`RepairReport::left`].
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::relation.repair",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.relation.spec.field()
            ),
            async move {
                let spec = self.relation.spec;
                let owners = self
                    .relation
                    .db
                    .collection::<Document>(spec.target().collection());
                let inverse = self.inverse();
                let (mut added, mut pulled, mut orphans) = (0u64, 0u64, 0usize);
                // One `update_one` of an owner's array per disagreement it can mend.
                let mend = |owner: Bson, op: &str, child: Bson| {
                    owners.update_one(doc! { "_id": owner }, doc! { op: { inverse: child } })
                };
                for d in self.check_inner().await?.1 {
                    let mut session = crate::txn::Transaction::session_of(self.tx()).await?;
                    match d {
                        Disagreement::NotListed { child, owner } => {
                            let op = mend(owner, "$addToSet", child);
                            added += in_session!(op, session.as_deref_mut())?.modified_count;
                        }
                        Disagreement::ListedElsewhere { owner, child, .. }
                        | Disagreement::MissingChild { owner, child } => {
                            let op = mend(owner, "$pull", child);
                            pulled += in_session!(op, session.as_deref_mut())?.modified_count;
                        }
                        Disagreement::MissingOwner { .. } => orphans += 1,
                    }
                }
                tracing::debug!(
                    target: "pattern_runtime::relation",
                    added,
                    pulled,
                    orphans,
                    "repaired"
                );
                let (_, left) = self.check_inner().await?;
                Ok(RepairReport {
                    repaired: added + pulled,
                    left: self.findings(&left),
                })
            },
        )
        .await
    }
}

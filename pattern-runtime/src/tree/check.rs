//! The tree's check and repair: every stored copy of the shape (ancestors, holders' paths)
//! against the parents.

use super::*;
use crate::span::Spanned as _;

/// A copy of the tree that disagrees with the parents: what [`Tree::repair`] rewrites.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stale {
    /// The model of the document.
    pub model: &'static str,
    /// Its collection.
    pub collection: &'static str,
    /// Its `_id`.
    pub id: Bson,
    /// The field (BSON name): a node's ancestors, a holder's path.
    pub field: &'static str,
    /// What is stored.
    pub stored: Bson,
    /// What the parents say it should be; `None` when they cannot say: the node (or a holder's
    /// node) is missing, or its parents loop.
    pub expected: Option<Bson>,
}

/// Every stale copy of the tree, with what the parents say.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TreeCheck {
    /// Nodes read.
    pub nodes: u64,
    /// Holders read, over every holder model.
    pub holders: u64,
    /// Every stale copy.
    pub stale: Vec<Stale>,
}

/// The writes that give the holders under `key` whose path does not run through `path` (the
/// node's path as stored now, the node last) the right prefix.
pub(super) fn stale_under(
    key: &Bson,
    path: &[Bson],
    holders: &[&'static HolderSpec],
) -> Vec<CopyWrite> {
    let prefix = &path[..path.len().saturating_sub(1)];
    holders
        .iter()
        .map(|h| {
            let p = format!("${}", h.path());
            let until_key =
                doc! { "$add": [{ "$indexOfArray": [p.clone(), literal(key.clone())] }, 1] };
            CopyWrite {
                filter: doc! {
                    h.path(): key.clone(),
                    "$expr": { "$ne": [{ "$slice": [p, until_key] }, literal(path.to_vec())] },
                },
                ..copies_of(
                    key,
                    h.schema(),
                    h.path(),
                    vec![doc! { "$set": { h.path(): splice(h.path(), key, prefix) } }],
                )
            }
        })
        .collect()
}

impl Stale {
    /// The finding when the document `d`'s `field` (of `model`, stored in `collection`) is not
    /// the `expected` list (`None`: no list is right).
    fn of(
        (model, collection, field): (&'static str, &'static str, &'static str),
        d: &Document,
        expected: Option<&Vec<Bson>>,
    ) -> Option<Stale> {
        let stored = d.get(field).cloned().unwrap_or(Bson::Null);
        let expected = expected.map(|e| Bson::Array(e.clone()));
        (expected.as_ref() != Some(&stored)).then(|| Stale {
            model,
            collection,
            id: d.get("_id").cloned().unwrap_or(Bson::Null),
            field,
            stored,
            expected,
        })
    }
}

/// The ancestors the parents give a node: its parent's, then its parent. `None` when a parent
/// is missing or the parents loop.
fn expected_ancestors(
    t: &TreeSpec,
    node: &Document,
    nodes: &HashMap<String, Document>,
) -> Option<Vec<Bson>> {
    let mut chain = Vec::new();
    let mut current = node.get(t.parent()).cloned().unwrap_or(Bson::Null);
    while !matches!(current, Bson::Null) {
        if chain.len() > nodes.len() {
            return None; // the parents loop
        }
        let parent = nodes.get(&crate::finding::id_key(&current))?;
        chain.push(current);
        current = parent.get(t.parent()).cloned().unwrap_or(Bson::Null);
    }
    chain.reverse();
    Some(chain)
}

impl<M: TreeNode> Tree<M> {
    /// Reads every node and every holder of every holder model, a page at a time, and reports
    /// the ancestors lists and paths that disagree with the parents ([`Check::TreeDrift`],
    /// each finding listing its documents), as the [doctor](mod@crate::doctor) does over a
    /// sample. Writes nothing; reads everything (a tool for audits and repairs, not for a hot
    /// path).
    ///
    /// [`Check::TreeDrift`]: crate::doctor::Check::TreeDrift
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(tracing::info_span!("pattern_runtime::tree.check", model = self.span_model(), collection = self.span_collection()), async move {
        crate::maintenance::check(&self.db, self.tx.as_ref(), &Self::targets()).await
    })
        .await
    }

    /// Every ancestors list and path that disagrees with the parents, with the value the
    /// parents give (one read of every node and holder).
    async fn stale_copies(&self) -> Result<TreeCheck> {
        // In the handle's transaction when it has one: the copies it wrote are the ones to see.
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        stale_copies_of(&self.db, session.as_deref_mut(), M::TREE).await
    }

    /// Reads every node and holder, then sends one `update` per stale ancestors list or path
    /// whose right value the parents give; then checks again ([`Tree::check`]). What is left
    /// is what the parents cannot say: a node whose parent is missing or whose parents loop,
    /// a holder whose node is missing. Each update's filter carries the stale value, so a copy
    /// changed meanwhile is left as it is. Run it after an [`Error::Incomplete`] or after
    /// changes made outside the toolkit.
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.repair",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let report = self.stale_copies().await?;
                let repaired = {
                    let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                    rewrite_stale(&self.db, session.as_deref_mut(), &report).await?
                };
                crate::maintenance::after_repair(
                    &self.db,
                    self.tx.as_ref(),
                    &Self::targets(),
                    repaired,
                )
                .await
            },
        )
        .await
    }
}

/// Every stored copy of `t`'s shape (the nodes' ancestors, the holders' paths and copies of
/// their node) against the parents, read in `session` when there is one.
pub(crate) async fn stale_copies_of(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    t: &'static TreeSpec,
) -> Result<TreeCheck> {
    // The node fields the holders copy, beside the shape.
    let mut projection = doc! { "_id": 1, t.key(): 1, t.parent(): 1, t.ancestors(): 1 };
    for h in t.holders() {
        for (_, fields) in h.node_copies() {
            for f in fields {
                projection.insert(*f, 1);
            }
        }
    }
    let raw: Collection<Document> = db.collection(t.collection());
    let docs: Vec<Document> = collect_in!(
        raw.find(doc! {}).projection(projection),
        session.as_deref_mut()
    )?;
    let nodes: HashMap<String, Document> = docs
        .iter()
        .map(|d| {
            (
                d.get(t.key())
                    .map(crate::finding::id_key)
                    .unwrap_or_default(),
                d.clone(),
            )
        })
        .collect();
    let mut expected_paths: HashMap<String, Option<Vec<Bson>>> = HashMap::new();
    let mut report = TreeCheck {
        nodes: docs.len() as u64,
        ..TreeCheck::default()
    };
    for d in &docs {
        let expected = expected_ancestors(t, d, &nodes);
        let of = (t.model(), t.collection(), t.ancestors());
        report.stale.extend(Stale::of(of, d, expected.as_ref()));
        let key = d.get(t.key()).cloned().unwrap_or(Bson::Null);
        expected_paths.insert(
            crate::finding::id_key(&key),
            expected.map(|mut e| {
                e.push(key);
                e
            }),
        );
    }
    for h in t.holders() {
        let coll: Collection<Document> = db.collection(h.collection());
        let copies = h.node_copies();
        let mut projection = doc! { "_id": 1, h.node(): 1, h.path(): 1 };
        for (field, _) in &copies {
            projection.insert(*field, 1);
        }
        let holders: Vec<Document> = collect_in!(
            coll.find(doc! {}).projection(projection),
            session.as_deref_mut()
        )?;
        for d in holders {
            report.holders += 1;
            let node = d.get(h.node()).filter(|n| !matches!(n, Bson::Null));
            let expected = match node {
                None => Some(Vec::new()),
                Some(node) => expected_paths
                    .get(&crate::finding::id_key(node))
                    .cloned()
                    .flatten(),
            };
            let of = (h.model(), h.collection(), h.path());
            report.stale.extend(Stale::of(of, &d, expected.as_ref()));
            // Its copies of its node point at that node.
            let Some(node) = node.and_then(|n| nodes.get(&crate::finding::id_key(n))) else {
                continue;
            };
            for (field, fields) in &copies {
                let stored = d.get(*field).cloned().unwrap_or(Bson::Null);
                let copied = stored.as_document().and_then(|c| c.get("_id"));
                if copied.map(crate::finding::id_key) == node.get("_id").map(crate::finding::id_key)
                {
                    continue;
                }
                report.stale.push(Stale {
                    model: h.model(),
                    collection: h.collection(),
                    id: d.get("_id").cloned().unwrap_or(Bson::Null),
                    field,
                    stored,
                    expected: Some(Bson::Document(super::audit::copy_of(node, fields))),
                });
            }
        }
    }
    tracing::debug!(
        nodes = report.nodes,
        holders = report.holders,
        stale = report.stale.len(),
        "stale copies read"
    );
    Ok(report)
}

/// Rewrites each stale copy of `report` whose right value the parents give, each write
/// conditional on the stale value (a copy changed meanwhile is left as it is), in `session`
/// when there is one: the documents modified.
pub(crate) async fn rewrite_stale(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    report: &TreeCheck,
) -> mongodb::error::Result<u64> {
    let mut modified = 0;
    for s in &report.stale {
        let Some(expected) = &s.expected else {
            continue;
        };
        let coll: Collection<Document> = db.collection(s.collection);
        let op = coll.update_one(
            doc! { "_id": s.id.clone(), s.field: s.stored.clone() },
            doc! { "$set": { s.field: expected.clone() } },
        );
        modified += in_session!(op, session.as_deref_mut())?.modified_count;
    }
    Ok(modified)
}

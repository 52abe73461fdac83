//! The doctor's checks of a tree ([`PatternSpec::audit`](crate::schema::PatternSpec::audit)): sampled
//! nodes whose ancestors disagree with the chain of their parents, sampled holders whose path
//! disagrees with their node's chain. One `find` per level of the tree above the sample (the
//! parent fields only); never writes.

use std::collections::HashMap;

use bson::{doc, Bson, Document};

use super::{HolderSpec, TreeSpec};
use crate::error::Result;
use crate::finding::{id_key, Check, Finding};
use crate::schema::Sample;

/// Every node named by `keys` and every node above them up to the roots: by key, the key and
/// the parent as stored. One `find` per level of the tree.
async fn parents_up(
    sample: &Sample<'_>,
    tree: &TreeSpec,
    keys: Vec<Bson>,
) -> Result<HashMap<String, (Bson, Bson)>> {
    let mut known: HashMap<String, (Bson, Bson)> = HashMap::new();
    let mut asked: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut next = keys;
    while !next.is_empty() {
        next.retain(|k| asked.insert(id_key(k)));
        if next.is_empty() {
            break;
        }
        let found: Vec<Document> = {
            let coll = sample.db.collection::<Document>(tree.collection());
            let action = coll
                .find(doc! { tree.key(): { "$in": std::mem::take(&mut next) } })
                .projection(doc! { tree.key(): 1, tree.parent(): 1 })
                .max_time(sample.max_time);
            let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
            crate::txn::collect_in!(action, session.as_deref_mut())?
        };
        for d in found {
            let Some(key) = d.get(tree.key()).cloned() else {
                continue;
            };
            let parent = d.get(tree.parent()).cloned().unwrap_or(Bson::Null);
            if !matches!(parent, Bson::Null) {
                next.push(parent.clone());
            }
            known.insert(id_key(&key), (key, parent));
        }
    }
    Ok(known)
}

/// The path from the root to `key` (included) that the parents give; `None` when a node on
/// the way is missing or the parents loop.
fn path_to(known: &HashMap<String, (Bson, Bson)>, key: &Bson) -> Option<Vec<Bson>> {
    let mut chain = Vec::new();
    let mut current = key.clone();
    loop {
        if chain.len() > known.len() {
            return None; // the parents loop
        }
        let (k, parent) = known.get(&id_key(&current))?;
        chain.push(k.clone());
        if matches!(parent, Bson::Null) {
            break;
        }
        current = parent.clone();
    }
    chain.reverse();
    Some(chain)
}

fn array(value: Option<&Bson>) -> Vec<Bson> {
    match value {
        Some(Bson::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

fn show(path: &[Bson]) -> String {
    Bson::Array(path.to_vec()).to_string()
}

/// The finding about the sampled documents whose list `field` is not the path to the node their
/// `link` names (the empty list when it names none), if any: "`n` of the sampled `disagree`",
/// the first one's problem as `problem` words it from the document, its list and the path
/// expected (`None`: the node is missing or its parents loop), then `repair` given examples.
async fn audit_paths(
    sample: &Sample<'_>,
    tree: &TreeSpec,
    (link, field): (&'static str, &'static str),
    disagree: &str,
    problem: impl Fn(&Document, &[Bson], Option<&[Bson]>) -> String,
    repair: impl FnOnce(&str) -> String,
) -> Result<Vec<Finding>> {
    let linked: Vec<Bson> = sample
        .documents
        .iter()
        .filter_map(|d| d.get(link).filter(|n| !matches!(n, Bson::Null)).cloned())
        .collect();
    let known = parents_up(sample, tree, linked).await?;
    let mut stale = Vec::new();
    let mut first = None;
    for d in sample.documents {
        let stored = array(d.get(field));
        let expected = match d.get(link) {
            None | Some(Bson::Null) => Some(Vec::new()),
            Some(node) => path_to(&known, node),
        };
        if expected.as_ref() == Some(&stored) {
            continue;
        }
        first.get_or_insert_with(|| problem(d, &stored, expected.as_deref()));
        stale.push(d.get("_id").cloned().unwrap_or(Bson::Null));
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    let n = (stale.len(), sample.documents.len());
    let about = format!("{} of {} sampled {disagree}; {first}", n.0, n.1);
    let repair = repair(&crate::finding::examples(&stale));
    Ok(vec![sample
        .finding(Check::TreeDrift, field, about, repair)
        .about(stale)])
}

/// Sampled nodes whose ancestors are not the chain of their parents (as the parent fields
/// give it, not as the parents' own ancestors say: one stale node is one finding, not its whole
/// subtree), or whose parent is missing.
pub(super) async fn audit_nodes(
    tree: &'static TreeSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let fields = (tree.parent(), tree.ancestors());
    let problem = |d: &Document, stored: &[Bson], expected: Option<&[Bson]>| {
        let key = d.get(tree.key()).cloned().unwrap_or(Bson::Null);
        match expected {
            Some(expected) => format!(
                "node {key} holds ancestors {}, its parents say {}",
                show(stored),
                show(expected)
            ),
            None => format!(
                "node {key} names the parent {}, which does not exist or whose parents loop",
                d.get(tree.parent()).cloned().unwrap_or(Bson::Null)
            ),
        }
    };
    let repair = |examples: &str| {
        format!(
            "`{}::collection(&db).tree().repair()` recomputes every ancestors list and path from the parents \
             ({examples}); a node whose parent is missing is left by it: `move_under` an \
             existing node (or `move_to_root`). Changes of the shape through `Tree` keep them",
            tree.model()
        )
    };
    let disagree = "nodes disagree with their parent";
    audit_paths(sample, tree, fields, disagree, problem, repair).await
}

/// Sampled holders whose path is not the chain of their node's parents and the node, or whose
/// node is missing.
pub(super) async fn audit_holders(
    holder: &'static HolderSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let tree = holder.tree();
    let fields = (holder.node(), holder.path());
    let problem = |d: &Document, stored: &[Bson], expected: Option<&[Bson]>| {
        let id = d.get("_id").cloned().unwrap_or(Bson::Null);
        match expected {
            Some(expected) => format!(
                "{id} holds the path {}, its node says {}",
                show(stored),
                show(expected)
            ),
            None => format!(
                "{id} is in the node {}, which does not exist or whose parents loop",
                d.get(holder.node()).cloned().unwrap_or(Bson::Null)
            ),
        }
    };
    let repair = |examples: &str| {
        format!(
            "`{}::collection(&db).tree().repair()` rewrites every path from the nodes ({examples}); a holder \
             whose node is missing is left by it: `Holders::place` it in an existing node. \
             Placements through `Holders` keep them",
            tree.model()
        )
    };
    let disagree = "documents disagree with their node";
    audit_paths(sample, tree, fields, disagree, problem, repair).await
}

/// The copy of `node` (a node document with its `_id` and the copied fields) that a holder's
/// field copying `fields` holds: `{_id, ..fields}`, the fields the node lacks left out.
pub(super) fn copy_of(node: &Document, fields: &[&str]) -> Document {
    let mut copy = doc! { "_id": node.get("_id").cloned().unwrap_or(Bson::Null) };
    for f in fields {
        if let Some(v) = node.get(*f) {
            copy.insert(*f, v.clone());
        }
    }
    copy
}

/// Sampled holders holding a copy of a node (an extended reference to the tree's node model)
/// whose `_id` is not the node they are in: one `find` of the nodes.
pub(super) async fn audit_node_copies(
    holder: &'static HolderSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let copies = holder.node_copies();
    let tree = holder.tree();
    let keys: Vec<Bson> = sample
        .documents
        .iter()
        .filter_map(|d| {
            d.get(holder.node())
                .filter(|n| !matches!(n, Bson::Null))
                .cloned()
        })
        .collect();
    if copies.is_empty() || keys.is_empty() {
        return Ok(Vec::new());
    }
    let found: Vec<Document> = {
        let coll = sample.db.collection::<Document>(tree.collection());
        let action = coll
            .find(doc! { tree.key(): { "$in": keys } })
            .projection(doc! { "_id": 1, tree.key(): 1 })
            .max_time(sample.max_time);
        let mut session = crate::txn::Transaction::session_of(sample.tx).await?;
        crate::txn::collect_in!(action, session.as_deref_mut())?
    };
    let ids: HashMap<String, Bson> = found
        .iter()
        .filter_map(|n| Some((id_key(n.get(tree.key())?), n.get("_id")?.clone())))
        .collect();
    let mut findings = Vec::new();
    for (field, _) in copies {
        let mut stale = Vec::new();
        let mut first = None;
        for d in sample.documents {
            let Some(node) = d.get(holder.node()).filter(|n| !matches!(n, Bson::Null)) else {
                continue;
            };
            // A missing node is the path's finding.
            let Some(node_id) = ids.get(&id_key(node)) else {
                continue;
            };
            let copied = match d.get(field) {
                Some(Bson::Document(c)) => c.get("_id").cloned(),
                _ => None,
            };
            if copied.as_ref().map(id_key) == Some(id_key(node_id)) {
                continue;
            }
            let id = d.get("_id").cloned().unwrap_or(Bson::Null);
            first.get_or_insert_with(|| {
                let copied = copied.map_or_else(|| "nothing".to_owned(), |c| format!("`_id` {c}"));
                format!(
                    "{id} is in the node {node} (`_id` {node_id}), its `{field}` copies {copied}"
                )
            });
            stale.push(id);
        }
        let Some(first) = first else { continue };
        let about = format!(
            "{} of {} sampled documents copy another node than the one they are in; {first}",
            stale.len(),
            sample.documents.len()
        );
        let repair = format!(
            "`{}::collection(&db).tree().repair()` points each copy at the holder's node ({}); placements \
             through `Holders` keep them",
            tree.model(),
            crate::finding::examples(&stale)
        );
        findings.push(
            sample
                .finding(Check::TreeDrift, field, about, repair)
                .about(stale),
        );
    }
    Ok(findings)
}

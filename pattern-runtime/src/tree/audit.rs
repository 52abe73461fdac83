//! The doctor's checks of a tree ([`PatternSpec::audit`](crate::PatternSpec::audit)): sampled
//! nodes whose ancestors disagree with their parent's, sampled holders whose path disagrees with
//! their node's. One `find` of the parents (or nodes) the sample names; never writes.

use std::collections::HashMap;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;

use super::{HolderSpec, TreeSpec};
use crate::error::Result;
use crate::finding::{id_key, Check, Finding};
use crate::schema::Sample;

/// The nodes named by `keys`, by key: `(ancestors)` as stored.
async fn nodes(
    sample: &Sample<'_>,
    tree: &TreeSpec,
    keys: Vec<Bson>,
) -> Result<HashMap<String, Vec<Bson>>> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let found: Vec<Document> = sample
        .db
        .collection::<Document>(tree.collection())
        .find(doc! { tree.key(): { "$in": keys } })
        .projection(doc! { tree.key(): 1, tree.ancestors(): 1 })
        .max_time(sample.max_time)
        .await?
        .try_collect()
        .await?;
    Ok(found
        .iter()
        .filter_map(|d| Some((id_key(d.get(tree.key())?), array(d.get(tree.ancestors())))))
        .collect())
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

/// Sampled nodes whose ancestors are not their parent's ancestors and the parent, or whose
/// parent is missing.
pub(super) async fn audit_nodes(
    tree: &'static TreeSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let parents: Vec<Bson> = sample
        .documents
        .iter()
        .filter_map(|d| {
            d.get(tree.parent())
                .filter(|p| !matches!(p, Bson::Null))
                .cloned()
        })
        .collect();
    let found = nodes(sample, tree, parents).await?;
    let mut stale = Vec::new();
    let mut first = None;
    for d in sample.documents {
        let stored = array(d.get(tree.ancestors()));
        let expected = match d.get(tree.parent()) {
            None | Some(Bson::Null) => Some(Vec::new()),
            Some(parent) => found.get(&id_key(parent)).map(|ancestors| {
                let mut path = ancestors.clone();
                path.push(parent.clone());
                path
            }),
        };
        let key = d.get(tree.key()).cloned().unwrap_or(Bson::Null);
        let problem = match expected {
            Some(expected) if expected == stored => continue,
            Some(expected) => format!(
                "node {key} holds ancestors {}, its parent says {}",
                show(&stored),
                show(&expected)
            ),
            None => format!(
                "node {key} names the parent {}, which does not exist",
                d.get(tree.parent()).cloned().unwrap_or(Bson::Null)
            ),
        };
        first.get_or_insert(problem);
        stale.push(key);
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            Check::TreeDrift,
            tree.ancestors(),
            format!(
                "{} of {} sampled nodes disagree with their parent; {first}",
                stale.len(),
                sample.documents.len()
            ),
            format!(
            "`{}::tree(&db).repair()` recomputes every ancestors list and path from the parents \
             ({}); a node whose parent is missing is left by it: `move_under` an existing node \
             (or `move_to_root`). Changes of the shape through `Tree` keep them",
            tree.model(),
            crate::finding::examples(&stale)
        ),
        )
        .about(stale)])
}

/// Sampled holders whose path is not their node's ancestors and the node, or whose node is
/// missing.
pub(super) async fn audit_holders(
    holder: &'static HolderSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
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
    let found = nodes(sample, tree, keys).await?;
    let mut stale = Vec::new();
    let mut first = None;
    for d in sample.documents {
        let stored = array(d.get(holder.path()));
        let expected = match d.get(holder.node()) {
            None | Some(Bson::Null) => Some(Vec::new()),
            Some(node) => found.get(&id_key(node)).map(|ancestors| {
                let mut path = ancestors.clone();
                path.push(node.clone());
                path
            }),
        };
        let id = d.get("_id").cloned().unwrap_or(Bson::Null);
        let problem = match expected {
            Some(expected) if expected == stored => continue,
            Some(expected) => format!(
                "{id} holds the path {}, its node says {}",
                show(&stored),
                show(&expected)
            ),
            None => format!(
                "{id} is in the node {}, which does not exist",
                d.get(holder.node()).cloned().unwrap_or(Bson::Null)
            ),
        };
        first.get_or_insert(problem);
        stale.push(id);
    }
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    Ok(vec![sample
        .finding(
            Check::TreeDrift,
            holder.path(),
            format!(
                "{} of {} sampled documents disagree with their node; {first}",
                stale.len(),
                sample.documents.len()
            ),
            format!(
                "`{}::tree(&db).repair()` rewrites every path from the nodes ({}); a holder whose \
             node is missing is left by it: `Holders::place` it in an existing node. Placements \
             through `Holders` keep them",
                tree.model(),
                crate::finding::examples(&stale)
            ),
        )
        .about(stale)])
}

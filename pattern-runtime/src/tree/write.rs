//! Changing a tree's shape: inserts, moves, renames and deletions, each in one transaction
//! with every copy of the shape (descendants' ancestors, holders' paths, extended-reference
//! copies) brought along.

use super::*;
use crate::span::Spanned as _;

/// What [`Tree::delete`] does with what is below the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// Delete the node only if nothing is below it: no descendant, no holder in it or under it.
    /// Otherwise [`Error::NodeInUse`]. A holder placed in it while it is deleted moves up to its
    /// parent, as with [`Deletion::Reparent`].
    LeafOnly,
    /// Delete the node, every node below it and every holder in or under them.
    Cascade,
    /// Delete the node; its children move up to its parent (their subtrees' ancestors lose the
    /// node), and so do the holders directly in it (the paths under it lose it). A root's
    /// children become roots; a root with holders directly in it is [`Error::NodeInUse`].
    Reparent,
}

/// What [`Tree::delete`] removed and changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deleted {
    /// Nodes deleted (the node, and its descendants under [`Deletion::Cascade`]).
    pub nodes: u64,
    /// Holders deleted ([`Deletion::Cascade`]).
    pub holders: u64,
    /// The copies rewritten ([`Deletion::Reparent`]).
    pub rewritten: Propagation,
}

/// `prefix ++ field[index of key ..]`: the part of the array `field` from `key` on, under a new
/// prefix.
pub(super) fn splice(field: &str, key: &Bson, prefix: &[Bson]) -> Bson {
    let path = format!("${field}");
    Bson::Document(doc! {
        "$concatArrays": [
            literal(prefix.to_vec()),
            { "$slice": [
                path.clone(),
                { "$indexOfArray": [path.clone(), literal(key.clone())] },
                { "$size": path },
            ] },
        ]
    })
}

/// The `updateMany` of the documents of `collection` whose `field` holds `key`.
pub(super) fn copies_of(
    key: &Bson,
    model: &'static ModelSchema,
    field: &'static str,
    update: impl Into<UpdateModifications>,
) -> CopyWrite {
    CopyWrite {
        model,
        path: field.to_owned(),
        fields: vec![field],
        filter: doc! { field: key.clone() },
        update: update.into(),
        array_filters: Vec::new(),
    }
}

/// The holders' writes of a rename of `old` to `new`: the node, and the key in the paths.
fn rename_writes(old: &Bson, new: &Bson, holders: &[&'static HolderSpec]) -> Vec<CopyWrite> {
    let element = |field: &'static str| doc! { "$set": { format!("{field}.$[k]"): new.clone() } };
    holders
        .iter()
        .flat_map(|h| {
            [
                copies_of(
                    old,
                    h.schema(),
                    h.node(),
                    doc! { "$set": { h.node(): new.clone() } },
                ),
                CopyWrite {
                    array_filters: vec![doc! { "k": old.clone() }],
                    ..copies_of(old, h.schema(), h.path(), element(h.path()))
                },
            ]
        })
        .collect()
}

/// The writes that move a holder directly in `key` up to `parent` (to no node at all for a
/// root's) and take `key` out of the paths.
fn reparent_holder(key: &Bson, parent: &Bson, h: &HolderSpec) -> [CopyWrite; 2] {
    [
        copies_of(
            key,
            h.schema(),
            h.node(),
            doc! { "$set": { h.node(): parent.clone() } },
        ),
        copies_of(
            key,
            h.schema(),
            h.path(),
            doc! { "$pull": { h.path(): key.clone() } },
        ),
    ]
}

impl<M: TreeNode> Tree<M> {
    /// Inserts `node` under the parent it names (a root when it names none), its ancestors
    /// computed from the parent's, whatever `node` holds there; returns the node as stored.
    ///
    /// A parent that does not exist is [`Error::NotFound`] of the node; a key already taken is
    /// [`Error::DuplicateKey`]. Nothing is written then.
    pub async fn insert(&self, node: &M) -> Result<M> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.insert",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let mut stored = self.insert_many(std::slice::from_ref(node)).await?;
                stored.pop().ok_or_else(|| Error::InvalidValue {
                    field: M::TREE.key().to_owned(),
                    reason: "the node was not stored".to_owned(),
                })
            },
        )
        .await
    }

    /// Inserts `nodes` in one transaction, each under the parent it names: an existing node or
    /// one earlier in `nodes`. Returns them as stored. All or nothing: a missing parent is
    /// [`Error::NotFound`] of the node, a key taken [`Error::DuplicateKey`].
    pub async fn insert_many(&self, nodes: &[M]) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.insert_many",
                model = self.span_model(),
                collection = self.span_collection(),
                nodes = nodes.len()
            ),
            async move {
                let t = M::TREE;
                let mut docs = Vec::with_capacity(nodes.len());
                for node in nodes {
                    let d = bson::serialize_to_document(node)?;
                    crate::literal::check_stored_id(&d)?;
                    crate::derived::check_written(M::SCHEMA, &d)?;
                    check_size(&d, M::SCHEMA.name())?;
                    match d.get(t.key()) {
                        None | Some(Bson::Null) => {
                            return Err(Error::InvalidValue {
                                field: t.key().to_owned(),
                                reason:
                                    "a node needs its key: parents, ancestors and paths name it"
                                        .to_owned(),
                            })
                        }
                        Some(k) => crate::literal::check_id(t.key(), k)?,
                    }
                    if let Some(parent) = d.get(t.parent()).filter(|p| !matches!(p, Bson::Null)) {
                        crate::literal::check_id(t.parent(), parent)?;
                    }
                    docs.push(d);
                }
                if docs.is_empty() {
                    return Ok(Vec::new());
                }
                // Parents that are not in the batch are read from the tree.
                let in_batch: std::collections::HashSet<String> = docs
                    .iter()
                    .filter_map(|d| d.get(t.key()).map(crate::finding::id_key))
                    .collect();
                let outside: Vec<Bson> = docs
                    .iter()
                    .filter_map(|d| d.get(t.parent()))
                    .filter(|p| {
                        !matches!(p, Bson::Null) && !in_batch.contains(&crate::finding::id_key(p))
                    })
                    .cloned()
                    .collect();
                let raw = self.raw();
                let step = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    let mut known = if outside.is_empty() {
                        HashMap::new()
                    } else {
                        self.read_nodes(s.as_deref_mut(), &outside).await?
                    };
                    let mut ready = docs.clone();
                    for d in &mut ready {
                        let parent = d.get(t.parent()).cloned().unwrap_or(Bson::Null);
                        let ancestors = if matches!(parent, Bson::Null) {
                            Vec::new()
                        } else {
                            match known.get(&crate::finding::id_key(&parent)) {
                                Some(p) => p.path(),
                                None => return Ok(Step::Refused(self.no_node(parent))),
                            }
                        };
                        d.insert(t.ancestors(), ancestors.clone());
                        let n = NodeRef {
                            key: d.get(t.key()).cloned().unwrap_or(Bson::Null),
                            parent,
                            ancestors,
                        };
                        known.insert(crate::finding::id_key(&n.key), n);
                    }
                    self.lock(s.as_deref_mut()).await?;
                    let insert = raw.insert_many(ready.clone());
                    let inserted = in_session!(insert, s.as_deref_mut())?;
                    tracing::debug!(written = ready.len(), "nodes inserted");
                    // What other models derive from the nodes (a count of sections per store).
                    let mut stored = ready.clone();
                    for (i, id) in inserted.inserted_ids {
                        if let Some(d) = stored.get_mut(i) {
                            d.insert("_id", id);
                        }
                    }
                    crate::derived::inserted(&self.db, s, M::SCHEMA, &stored).await?;
                    Ok(Step::Done(ready))
                })?;
                match step {
                    Step::Done(ready) => ready
                        .into_iter()
                        .map(crate::model::read::decode::<M>)
                        .collect(),
                    Step::Refused(e) => Err(e),
                }
            },
        )
        .await
    }

    /// Moves the node and its subtree under `parent`: in one transaction, the node's parent and
    /// ancestors, the ancestors of every node below it and the path of every holder under it.
    /// Returns what was rewritten: one entry for the nodes, one per holder model.
    ///
    /// [`Error::Cycle`] when `parent` is the node or below it, [`Error::NotFound`] of the node when either is
    /// missing; nothing is written then.
    pub fn move_under<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
        parent: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Propagation>> {
        crate::model::Pending::new(self.move_under_op(key.into_id(), parent.into_id()))
    }

    async fn move_under_op(&self, key: M::Key, parent: M::Key) -> Result<Propagation> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.move_under",
                model = self.span_model(),
                collection = self.span_collection(),
                key = tracing::field::Empty
            ),
            async move {
                self.move_node(
                    key_bson::<M>(M::TREE.key(), key)?,
                    Some(key_bson::<M>(M::TREE.parent(), parent)?),
                )
                .await
            },
        )
        .await
    }

    /// Makes the node a root, with its subtree: [`Tree::move_under`] without a parent.
    pub fn move_to_root<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Propagation>> {
        crate::model::Pending::new(self.move_to_root_op(key.into_id()))
    }

    async fn move_to_root_op(&self, key: M::Key) -> Result<Propagation> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.move_to_root",
                model = self.span_model(),
                collection = self.span_collection(),
                key = tracing::field::Empty
            ),
            async move {
                self.move_node(key_bson::<M>(M::TREE.key(), key)?, None)
                    .await
            },
        )
        .await
    }

    async fn move_node(&self, key: Bson, parent: Option<Bson>) -> Result<Propagation> {
        tracing::Span::current().record("key", tracing::field::display(&key));
        let t = M::TREE;
        let holders = t.holders();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let mut keys = vec![key.clone()];
            keys.extend(parent.clone());
            let nodes = self.read_nodes(s.as_deref_mut(), &keys).await?;
            let Some(node) = nodes.get(&crate::finding::id_key(&key)) else {
                return Ok(Step::Refused(self.no_node(key.clone())));
            };
            let prefix = match &parent {
                None => Vec::new(),
                Some(p) => {
                    let Some(p_node) = nodes.get(&crate::finding::id_key(p)) else {
                        return Ok(Step::Refused(self.no_node(p.clone())));
                    };
                    if crate::finding::id_key(p) == crate::finding::id_key(&key)
                        || p_node
                            .ancestors
                            .iter()
                            .any(|a| crate::finding::id_key(a) == crate::finding::id_key(&key))
                    {
                        return Ok(Step::Refused(Error::Cycle {
                            collection: t.collection().to_owned(),
                            node: Box::new(key.clone()),
                            under: Box::new(p.clone()),
                        }));
                    }
                    p_node.path()
                }
            };
            self.lock(s.as_deref_mut()).await?;
            // The parent's key as stored (an `i64` key given as an `i32` is stored as the
            // ancestors hold it).
            let parent_key = parent
                .as_ref()
                .and_then(|p| nodes.get(&crate::finding::id_key(p)))
                .map(|p| p.key.clone());
            let writes = self.move_writes(&node.key, parent_key, &prefix, &holders);
            Ok(Step::written(write_copies(&self.db, s, writes).await?))
        })?;
        let propagation = step.outcome()?;
        tracing::debug!(modified = propagation.modified(), "moved");
        self.sweep(Late::Moved(key), &holders).await;
        Ok(propagation)
    }

    /// The `updateMany`s of a move of `key` under a parent whose path is `prefix`.
    fn move_writes(
        &self,
        key: &Bson,
        parent: Option<Bson>,
        prefix: &[Bson],
        holders: &[&'static HolderSpec],
    ) -> Vec<CopyWrite> {
        let t = M::TREE;
        let is_node = doc! { "$eq": [format!("${}", t.key()), literal(key.clone())] };
        let mut writes = vec![CopyWrite {
            model: t.schema(),
            path: t.ancestors().to_owned(),
            fields: vec![t.parent(), t.ancestors()],
            filter: doc! { "$or": [ { t.key(): key.clone() }, { t.ancestors(): key.clone() } ] },
            update: UpdateModifications::Pipeline(vec![doc! { "$set": {
                t.ancestors(): { "$cond": [
                    is_node.clone(),
                    literal(prefix.to_vec()),
                    splice(t.ancestors(), key, prefix),
                ] },
                t.parent(): { "$cond": [
                    is_node,
                    literal(parent.unwrap_or(Bson::Null)),
                    format!("${}", t.parent()),
                ] },
            } }]),
            array_filters: Vec::new(),
        }];
        for h in holders {
            writes.push(copies_of(
                key,
                h.schema(),
                h.path(),
                UpdateModifications::Pipeline(vec![
                    doc! { "$set": { h.path(): splice(h.path(), key, prefix) } },
                ]),
            ));
        }
        writes
    }

    /// After a change of the shape: in a second transaction, serialized with the other changes,
    /// the change's holder writes once more, for the holders written while it ran (after its
    /// snapshot, so it did not see them; their own check ran before its commit). Usually matches
    /// nothing. The change itself is committed: a failure here is a `WARN` event, and
    /// [`Tree::repair`] fixes what it left.
    async fn sweep(&self, late: Late, holders: &[&'static HolderSpec]) {
        // In a caller's transaction the change is not committed yet: nothing to sweep after.
        if holders.is_empty() || self.tx.is_some() {
            return;
        }
        match self.sweep_writes(&late, holders).await {
            Ok(p) if p.modified() > 0 => tracing::debug!(
                fixed = p.modified(),
                "holders written during the change fixed"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "the change is committed, but the holders written while it ran may keep an old \
                 path: `Tree::repair` fixes them"
            ),
        }
    }

    /// [`Tree::sweep`]'s transaction.
    async fn sweep_writes(
        &self,
        late: &Late,
        holders: &[&'static HolderSpec],
    ) -> Result<Propagation> {
        transact!(self.db, |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let writes = match late {
                Late::Moved(key) => {
                    let Some(path) = self.current_path(s.as_deref_mut(), key).await? else {
                        return Ok(Ok(Propagation::default())); // deleted since: its sweep ran
                    };
                    self.lock(s.as_deref_mut()).await?;
                    stale_under(key, &path, holders)
                }
                Late::Renamed { old, new } => {
                    self.lock(s.as_deref_mut()).await?;
                    rename_writes(old, new, holders)
                }
                Late::Reparented { key, parent } => {
                    self.lock(s.as_deref_mut()).await?;
                    holders
                        .iter()
                        .flat_map(|h| reparent_holder(key, parent, h))
                        .collect()
                }
                Late::Cascaded(key) => {
                    self.lock(s.as_deref_mut()).await?;
                    let mut deleted = 0;
                    for h in holders {
                        let filter = doc! { h.path(): key.clone() };
                        let of = h.schema();
                        deleted +=
                            derived::delete(&self.db, s.as_deref_mut(), of, filter, true).await?;
                    }
                    if deleted > 0 {
                        tracing::debug!(deleted, "holders placed during the deletion deleted");
                    }
                    Vec::new()
                }
            };
            Ok(write_copies(&self.db, s, writes)
                .await?
                .map_err(Partial::into_error))
        })?
    }

    /// Changes a node's key from `key` to `new_key` everywhere it is copied: the node, its
    /// children's parent, its descendants' ancestors, the node and path of every holder in it or
    /// under it, in one transaction. For trees declared with `key = ..`: on a tree named by
    /// `_id`, which never changes, it does not compile.
    ///
    /// [`Error::NotFound`] of the node when no node has `key`, [`Error::DuplicateKey`] when `new_key` is
    /// taken; nothing is written then.
    ///
    /// Not an `async fn`: a tree named by `_id` is one compile error, at the call.
    pub fn rename(
        &self,
        key: impl IntoId<M::Key>,
        new_key: impl IntoId<M::Key>,
    ) -> BoxFuture<'_, Result<Propagation>>
    where
        M: RenamableTree,
    {
        Box::pin(self.rename_keys(key.into_id(), new_key.into_id()))
    }

    async fn rename_keys(&self, key: M::Key, new_key: M::Key) -> Result<Propagation> {
        crate::span::operation(tracing::info_span!("pattern_runtime::tree.rename", model = self.span_model(), collection = self.span_collection(), key = tracing::field::Empty), async move {
        let t = M::TREE;
        let (key, new_key) = (
            key_bson::<M>(M::TREE.key(), key)?,
            key_bson::<M>(M::TREE.key(), new_key)?,
        );
        if matches!(new_key, Bson::Null) {
            return Err(Error::InvalidValue {
                field: t.key().to_owned(),
                reason: "a node needs its key: parents, ancestors and paths name it".to_owned(),
            });
        }
        tracing::Span::current().record("key", tracing::field::display(&key));
        let holders = t.holders();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let nodes = self
                .read_nodes(s.as_deref_mut(), std::slice::from_ref(&key))
                .await?;
            if nodes.is_empty() {
                return Ok(Step::Refused(self.no_node(key.clone())));
            }
            self.lock(s.as_deref_mut()).await?;
            let element =
                |field: &'static str| doc! { "$set": { format!("{field}.$[k]"): new_key.clone() } };
            let mut writes = vec![
                copies_of(
                    &key,
                    t.schema(),
                    t.parent(),
                    doc! { "$set": { t.parent(): new_key.clone() } },
                ),
                CopyWrite {
                    array_filters: vec![doc! { "k": key.clone() }],
                    ..copies_of(&key, t.schema(), t.ancestors(), element(t.ancestors()))
                },
            ];
            writes.extend(rename_writes(&key, &new_key, &holders));
            // The node last: without a transaction, a rename that failed half-way can be run
            // again (the old key still names the node). With one, a taken key aborts it all.
            writes.push(copies_of(
                &key,
                t.schema(),
                t.key(),
                doc! { "$set": { t.key(): new_key.clone() } },
            ));
            Ok(Step::written(write_copies(&self.db, s, writes).await?))
        })?;
        let propagation = step.outcome()?;
        self.sweep(
            Late::Renamed {
                old: key,
                new: new_key,
            },
            &holders,
        )
        .await;
        Ok(propagation)
    })
        .await
    }

    /// Deletes the node, and what is below it as `how` says, in one transaction. See
    /// [`Deletion`]; [`Error::NodeInUse`] or [`Error::NotFound`] of the node with nothing deleted.
    pub fn delete<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
        how: Deletion,
    ) -> crate::model::Pending<'a, Result<Deleted>> {
        crate::model::Pending::new(self.delete_op(key.into_id(), how))
    }

    async fn delete_op(&self, key: M::Key, how: Deletion) -> Result<Deleted> {
        crate::span::operation(tracing::info_span!("pattern_runtime::tree.delete", model = self.span_model(), collection = self.span_collection(), how = ?how, key = tracing::field::Empty), async move {
        let t = M::TREE;
        let key = key_bson::<M>(M::TREE.key(), key)?;
        tracing::Span::current().record("key", tracing::field::display(&key));
        let holders = t.holders();
        let step = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let raw = self.raw();
            let nodes = self
                .read_nodes(s.as_deref_mut(), std::slice::from_ref(&key))
                .await?;
            let Some(node) = nodes.get(&crate::finding::id_key(&key)) else {
                return Ok(Step::Refused(self.no_node(key.clone())));
            };
            // Below it: by ancestors, and by parent (a child whose ancestors went stale is still
            // its child).
            let count = raw.count_documents(
                doc! { "$or": [ { t.ancestors(): key.clone() }, { t.parent(): key.clone() } ] },
            );
            let descendants = in_session!(count, s.as_deref_mut())?;
            let mut under = 0;
            let mut directly_in = 0;
            for h in &holders {
                let coll: Collection<Document> = self.db.collection(h.collection());
                let count = coll.count_documents(doc! { h.path(): key.clone() });
                under += in_session!(count, s.as_deref_mut())?;
                let count = coll.count_documents(doc! { h.node(): key.clone() });
                directly_in += in_session!(count, s.as_deref_mut())?;
            }
            let refuse = |reason| {
                Ok(Step::Refused(Error::NodeInUse {
                    collection: t.collection().to_owned(),
                    node: Box::new(key.clone()),
                    descendants,
                    holders: under,
                    reason,
                }))
            };
            match how {
                Deletion::LeafOnly if descendants > 0 || under > 0 => {
                    return refuse(
                        "it is not a leaf; delete it with `Deletion::Cascade` (deletes them too) \
                         or `Deletion::Reparent` (moves them up to its parent)",
                    )
                }
                Deletion::Reparent if matches!(node.parent, Bson::Null) && directly_in > 0 => {
                    return refuse(
                        "it is a root, so the holders directly in it have no parent to move up \
                         to; place them elsewhere first, or use `Deletion::Cascade`",
                    )
                }
                _ => {}
            }
            self.lock(s.as_deref_mut()).await?;
            let mut deleted = Deleted::default();
            // What is below first, the node last: without a transaction, a deletion that failed
            // half-way can be run again.
            let writes = match how {
                Deletion::Cascade => {
                    for h in &holders {
                        let filter = doc! { h.path(): key.clone() };
                        let of = h.schema();
                        deleted.holders +=
                            derived::delete(&self.db, s.as_deref_mut(), of, filter, true).await?;
                    }
                    let filter = doc! { "$or": [ { t.ancestors(): key.clone() }, { t.key(): key.clone() } ] };
                    let of = t.schema();
                    deleted.nodes =
                        derived::delete(&self.db, s.as_deref_mut(), of, filter, true).await?;
                    Vec::new()
                }
                Deletion::LeafOnly => Vec::new(),
                Deletion::Reparent => self.reparent_writes(&key, &node.parent, &holders),
            };
            let written = match write_copies(&self.db, s.as_deref_mut(), writes).await? {
                Ok(p) => p,
                Err(partial) => return Ok(Step::Done(Err(partial.into_error()))),
            };
            deleted.rewritten = written;
            if how != Deletion::Cascade {
                let filter = doc! { t.key(): key.clone() };
                let of = t.schema();
                deleted.nodes = derived::delete(&self.db, s, of, filter, false).await?;
            }
            tracing::debug!(nodes = deleted.nodes, holders = deleted.holders, "deleted");
            Ok(Step::Done(Ok((deleted, node.parent.clone()))))
        })?;
        let (deleted, parent) = step.outcome()?;
        let late = match how {
            Deletion::Cascade => Late::Cascaded(key),
            Deletion::LeafOnly | Deletion::Reparent => Late::Reparented { key, parent },
        };
        self.sweep(late, &holders).await;
        Ok(deleted)
    })
        .await
    }

    /// The `updateMany`s that take `key` out of every copy, its children and holders moving up
    /// to `parent`.
    fn reparent_writes(
        &self,
        key: &Bson,
        parent: &Bson,
        holders: &[&'static HolderSpec],
    ) -> Vec<CopyWrite> {
        let t = M::TREE;
        let mut writes = vec![
            copies_of(
                key,
                t.schema(),
                t.parent(),
                doc! { "$set": { t.parent(): parent.clone() } },
            ),
            copies_of(
                key,
                t.schema(),
                t.ancestors(),
                doc! { "$pull": { t.ancestors(): key.clone() } },
            ),
        ];
        writes.extend(holders.iter().flat_map(|h| reparent_holder(key, parent, h)));
        writes
    }
}

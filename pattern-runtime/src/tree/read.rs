//! Reading a tree: a node, its children, descendants, subtree, ancestors and path, each one
//! indexed query, in the tree's transaction when it is bound to one.

use super::*;
use crate::span::Spanned as _;

impl<M: TreeNode> Tree<M> {
    /// The nodes with these keys, as read in `session`.
    pub(super) async fn read_nodes(
        &self,
        session: Option<&mut ClientSession>,
        keys: &[Bson],
    ) -> mongodb::error::Result<HashMap<String, NodeRef>> {
        let raw = self.raw();
        let find = raw
            .find(doc! { M::TREE.key(): { "$in": keys.to_vec() } })
            .projection(Self::projection());
        let docs = collect_in!(find, session)?;
        Ok(docs
            .iter()
            .map(|d| {
                let n = self.node_ref(d);
                (crate::finding::id_key(&n.key), n)
            })
            .collect())
    }

    /// The node with this key.
    pub fn get<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Option<M>>> {
        crate::model::Pending::new(self.get_op(key.into_id()))
    }

    async fn get_op(&self, key: M::Key) -> Result<Option<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.get",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let filter = doc! { M::TREE.key(): key_bson::<M>(M::TREE.key(), key)? };
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let raw = self.raw();
                let find = raw.find_one(filter);
                let found = in_session!(find, session.as_deref_mut())?;
                found.map(crate::model::read::decode::<M>).transpose()
            },
        )
        .await
    }

    /// The node's children, in key order: one query on the `parent` index.
    pub fn children<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<M>>> {
        crate::model::Pending::new(self.children_op(key.into_id()))
    }

    async fn children_op(&self, key: M::Key) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.children",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let t = M::TREE;
                let parent = doc! { t.parent(): key_bson::<M>(t.key(), key)? };
                self.nodes(parent, Some(doc! { t.key(): 1 })).await
            },
        )
        .await
    }

    /// Every node below the node, in no particular order: one query on the `ancestors` index.
    pub fn descendants<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<M>>> {
        crate::model::Pending::new(self.descendants_op(key.into_id()))
    }

    async fn descendants_op(&self, key: M::Key) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.descendants",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let below = doc! { M::TREE.ancestors(): key_bson::<M>(M::TREE.key(), key)? };
                self.nodes(below, None).await
            },
        )
        .await
    }

    /// The nodes `filter` matches (in `sort` order, if any), read as the current shape, in the
    /// tree's transaction if it has one.
    async fn nodes(&self, filter: Document, sort: Option<Document>) -> Result<Vec<M>> {
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let raw = self.raw();
        let find = raw.find(filter);
        let find = match sort {
            Some(sort) => find.sort(sort),
            None => find,
        };
        let docs = collect_in!(find, session.as_deref_mut())?;
        decode_all(docs)
    }

    /// The node and every node below it, shallowest first: two queries, the node by its key and
    /// [`descendants`](Tree::descendants) on the `ancestors` index. (One `find` of `{$or: [{key},
    /// {ancestors: key}]}` returns the same through the same indexes; on the embedded test
    /// server it took twice as long as the two for a subtree of 899 nodes, see the `tree`
    /// bench.) Empty when no node has this key.
    pub fn subtree<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<M>>> {
        crate::model::Pending::new(self.subtree_op(key.into_id()))
    }

    async fn subtree_op(&self, key: M::Key) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.subtree",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let t = M::TREE;
                let key = key_bson::<M>(M::TREE.key(), key)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let raw = self.raw();
                let find = raw.find_one(doc! { t.key(): key.clone() });
                let Some(node) = in_session!(find, session.as_deref_mut())? else {
                    return Ok(Vec::new());
                };
                let find = raw.find(doc! { t.ancestors(): key });
                let mut docs = collect_in!(find, session.as_deref_mut())?;
                docs.sort_by_key(|d| d.get_array(t.ancestors()).map_or(0, Vec::len));
                docs.insert(0, node);
                decode_all(docs)
            },
        )
        .await
    }

    /// The node's ancestors, root first: one aggregation (the node, then a `$lookup` of its
    /// ancestors through the key's index). [`Error::NotFound`] of the node when no node has this key.
    pub fn ancestors<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<M>>> {
        crate::model::Pending::new(self.ancestors_op(key.into_id()))
    }

    async fn ancestors_op(&self, key: M::Key) -> Result<Vec<M>> {
        crate::span::operation(tracing::info_span!("pattern_runtime::tree.ancestors", model = self.span_model(), collection = self.span_collection()), async move {
        let t = M::TREE;
        let key = key_bson::<M>(M::TREE.key(), key)?;
        let pipeline = [
            doc! { "$match": { t.key(): key.clone() } },
            doc! { "$limit": 1 },
            doc! { "$lookup": {
                "from": t.collection(),
                "localField": t.ancestors(),
                "foreignField": t.key(),
                "as": "__nodes",
            } },
            doc! { "$project": { "_id": 0, "order": format!("${}", t.ancestors()), "__nodes": 1 } },
        ];
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let raw = self.raw();
        let found = collect_in!(raw.aggregate(pipeline), session.as_deref_mut())?;
        // One document at most (`$limit: 1`).
        let Some(found) = found.into_iter().next() else {
            return Err(self.no_node(key));
        };
        let order: Vec<String> = found
            .get_array("order")
            .map(|a| a.iter().map(crate::finding::id_key).collect())
            .unwrap_or_default();
        let mut by_key: HashMap<String, Document> = found
            .get_array("__nodes")
            .map(|a| {
                a.iter()
                    .filter_map(|b| b.as_document().cloned())
                    .map(|d| {
                        (
                            d.get(t.key())
                                .map(crate::finding::id_key)
                                .unwrap_or_default(),
                            d,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let docs = order.iter().filter_map(|k| by_key.remove(k)).collect();
        decode_all(docs)
    })
        .await
    }

    /// The path of a holder placed in the node: its ancestors, then its own key.
    /// [`Error::NotFound`] of the node when no node has this key.
    pub fn path<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<M::Key>>> {
        crate::model::Pending::new(self.path_op(key.into_id()))
    }

    async fn path_op(&self, key: M::Key) -> Result<Vec<M::Key>> {
        let key = key_bson::<M>(M::TREE.key(), key)?;
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let path = self.current_path(session.as_deref_mut(), &key).await?;
        let Some(path) = path else {
            return Err(self.no_node(key));
        };
        path.into_iter()
            .map(|b| bson::deserialize_from_bson(b).map_err(Error::from))
            .collect()
    }

    /// The node's path as stored now (`None` when there is no such node).
    /// The node `filter` names (by key or by `_id`): its `_id`, key and holder path.
    pub(super) async fn node_where(
        &self,
        session: Option<&mut ClientSession>,
        filter: Document,
    ) -> mongodb::error::Result<Option<(Bson, Bson, Vec<Bson>)>> {
        let mut projection = Self::projection();
        projection.insert("_id", 1);
        let raw = self.raw();
        let find = raw.find_one(filter).projection(projection);
        let found = in_session!(find, session)?;
        Ok(found.map(|d| {
            let n = self.node_ref(&d);
            (
                d.get("_id").cloned().unwrap_or(Bson::Null),
                n.key.clone(),
                n.path(),
            )
        }))
    }

    pub(super) async fn current_path(
        &self,
        session: Option<&mut ClientSession>,
        key: &Bson,
    ) -> mongodb::error::Result<Option<Vec<Bson>>> {
        let found = self
            .node_where(session, doc! { M::TREE.key(): key.clone() })
            .await?;
        Ok(found.map(|(_, _, path)| path))
    }
}

//! [`Holders`]: the documents of a holder model placed in a tree's nodes, their paths copied
//! from the node and checked again after each write.

use crate::span::Spanned as _;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use mongodb::results::UpdateResult;
use mongodb::{ClientSession, Collection, Database};

use super::{decode_all, InTree, Tree, TreeNode};
use crate::derived;
use crate::error::{check_size, Error, Result};
use crate::model::IntoId;
use crate::txn::{collect_in, in_session, transact, Transaction};

/// A placement of an existing holder, for [`Holders::settle`]: the node's `_id` (to follow a
/// rename) and where the holder was (to go back when the node is deleted).
struct Placed {
    node_id: Bson,
    was_node: Bson,
    was_path: Bson,
}

/// The documents of a holder model `H` in the tree of `M`: from `Category::collection(&db).tree().holders::<Product>()`.
#[derive_where::derive_where(Clone)]
pub struct Holders<M, H> {
    db: Database,
    /// The caller's transaction, from the tree the holders were taken from.
    tx: Option<Transaction>,
    _models: PhantomData<fn() -> (M, H)>,
}

crate::span::spanned!(impl<M: TreeNode, H: InTree<M>> Holders<M, H> =>
    H::SCHEMA,
    H::HOLDER.collection()
);

impl<M: TreeNode, H: InTree<M>> fmt::Debug for Holders<M, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Holders")
            .field("tree", &M::SCHEMA.name())
            .field("model", &H::SCHEMA.name())
            .field("database", &self.db.name())
            .finish()
    }
}

/// How many times a holder's write is checked against a moving node before giving up.
const PLACE_ATTEMPTS: usize = 8;

impl<M: TreeNode, H: InTree<M>> Holders<M, H> {
    pub(super) fn new(db: &Database, tx: Option<Transaction>) -> Self {
        Holders {
            db: db.clone(),
            tx,
            _models: PhantomData,
        }
    }

    /// The caller's session, held for one read, when bound to a transaction. Dropped before
    /// any write (which takes it again).
    async fn session(&self) -> Result<Option<tokio::sync::MutexGuard<'_, ClientSession>>> {
        Transaction::session_of(self.tx.as_ref()).await
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(H::HOLDER.collection())
    }

    fn tree(&self) -> Tree<M> {
        match &self.tx {
            Some(tx) => Tree::new(&self.db).in_transaction(tx),
            None => Tree::new(&self.db),
        }
    }

    /// Inserts holder documents, and what derives from them (a count of the holders in each
    /// node, ...) in the same transaction when something does; one plain `insert` otherwise.
    async fn insert_docs(&self, docs: Vec<Document>) -> Result<()> {
        if self.tx.is_none() && !derived::has_insert_dependents(H::SCHEMA) {
            match <[Document; 1]>::try_from(docs) {
                Ok([one]) => self.raw().insert_one(one).await.map(drop)?,
                Err(docs) => self.raw().insert_many(docs).await.map(drop)?,
            }
            return Ok(());
        }
        let raw = self.raw();
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let insert = raw.insert_many(docs.clone());
            in_session!(insert, s.as_deref_mut())?;
            derived::inserted(&self.db, s, H::SCHEMA, &docs).await
        })
    }

    /// `updateMany` of holders (`updateOne` unless `many`), what derives from the fields it
    /// sets following in the same transaction when something does.
    async fn update_holders(
        &self,
        filter: Document,
        update: Document,
        many: bool,
    ) -> Result<UpdateResult> {
        let fields: Vec<&str> = update
            .values()
            .filter_map(Bson::as_document)
            .flat_map(|d| d.keys().map(String::as_str))
            .collect();
        if self.tx.is_none() && !derived::has_dependents(H::SCHEMA, Some(&fields)) {
            return Ok(if many {
                self.raw().update_many(filter, update).await?
            } else {
                self.raw().update_one(filter, update).await?
            });
        }
        transact!(self.db, self.tx.as_ref(), |s| async {
            let (f, u) = (filter.clone(), update.clone());
            derived::update_many(&self.db, s, H::SCHEMA, f, u, vec![], many).await
        })
    }

    /// `deleteMany` of holders (`deleteOne` unless `many`), what derives from them following
    /// in the same transaction when something does.
    async fn delete_holders(&self, filter: Document, many: bool) -> Result<u64> {
        let h = H::HOLDER;
        if self.tx.is_none() && !derived::has_dependents(H::SCHEMA, None) {
            return Ok(if many {
                self.raw().delete_many(filter).await?.deleted_count
            } else {
                self.raw().delete_one(filter).await?.deleted_count
            });
        }
        transact!(self.db, self.tx.as_ref(), |s| async {
            let of = h.schema();
            derived::delete(&self.db, s, of, filter.clone(), many).await
        })
    }

    /// The path for a holder in `node` (`[]` for none), or [`Error::NotFound`] of the node.
    async fn path_for(&self, node: &Bson) -> Result<Vec<Bson>> {
        if matches!(node, Bson::Null) {
            return Ok(Vec::new());
        }
        let found = {
            let mut session = self.session().await?;
            self.tree()
                .current_path(session.as_deref_mut(), node)
                .await?
        };
        match found {
            Some(path) => Ok(path),
            None => Err(self.tree().no_node(node.clone())),
        }
    }

    /// After writing `path` into the holder `id` in `node`: while the node's path has changed
    /// since it was read (a move ran meanwhile), write the new one. When the node went away
    /// meanwhile, the write is taken back: an inserted holder is deleted, a placed one gets the
    /// node and path it had (`before`).
    async fn settle(
        &self,
        id: &Bson,
        node: &Bson,
        mut path: Vec<Bson>,
        placed: Option<&Placed>,
    ) -> Result<()> {
        // In a caller's transaction the reads see its snapshot: no change can overtake it.
        if self.tx.is_some() {
            return Ok(());
        }
        let h = H::HOLDER;
        for _ in 0..PLACE_ATTEMPTS {
            let now = if matches!(node, Bson::Null) {
                Vec::new()
            } else {
                match self.tree().current_path(None, node).await? {
                    Some(now) => now,
                    None => {
                        // Deleted (or renamed) meanwhile, after its own sweep: take the write
                        // back. If it is no longer as written, that sweep moved it: it stays.
                        let as_written = doc! { "_id": id.clone(), h.node(): node.clone(), h.path(): path.clone() };
                        let removed = match placed {
                            None => self.delete_holders(as_written, false).await?,
                            Some(placed) => {
                                // Renamed: it goes where the node is now, and the placement
                                // stands.
                                let renamed = self
                                    .tree()
                                    .node_where(None, doc! { "_id": placed.node_id.clone() })
                                    .await?;
                                if let Some((_, key, now)) = renamed {
                                    let to = doc! { "$set": { h.node(): key, h.path(): now } };
                                    self.update_holders(as_written, to, false).await?;
                                    tracing::debug!("the node was renamed while the holder was placed: it follows");
                                    return Ok(());
                                }
                                // Deleted: back where it was.
                                let back = doc! { "$set": {
                                    h.node(): placed.was_node.clone(),
                                    h.path(): placed.was_path.clone(),
                                } };
                                self.update_holders(as_written, back, false)
                                    .await?
                                    .modified_count
                            }
                        };
                        tracing::debug!(
                            taken_back = removed,
                            "the node went away while the holder was written"
                        );
                        return if removed == 1 {
                            Err(self.tree().no_node(node.clone()))
                        } else {
                            Ok(())
                        };
                    }
                }
            };
            if now == path {
                return Ok(());
            }
            tracing::debug!("the node moved while the holder was written: writing its new path");
            self.update_holders(
                doc! { "_id": id.clone(), h.node(): node.clone(), h.path(): path.clone() },
                doc! { "$set": { h.path(): now.clone() } },
                false,
            )
            .await?;
            path = now;
        }
        Err(self.kept_moving(1))
    }

    /// Inserts `holder` with the path of the node it names (whatever it holds in its path
    /// field). [`Error::NotFound`] of the node when the node is missing, [`Error::DuplicateKey`] when the
    /// `_id` is taken; nothing is written then. Two reads and the insert when no move runs.
    pub async fn insert(&self, holder: &H) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.holders.insert",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let h = H::HOLDER;
                let mut d = bson::serialize_to_document(holder)?;
                crate::error::check_encodable(H::SCHEMA.name(), &d)?;
                crate::literal::check_stored_id(&d)?;
                derived::check_written(H::SCHEMA, &d)?;
                let node = d.get(h.node()).cloned().unwrap_or(Bson::Null);
                crate::literal::check_id(h.node(), &node)?;
                let path = self.path_for(&node).await?;
                d.insert(h.path(), path.clone());
                check_size(&d, H::SCHEMA.name())?;
                let id = match d.get("_id") {
                    Some(id) => id.clone(),
                    None => {
                        let id = Bson::ObjectId(bson::oid::ObjectId::new());
                        d.insert("_id", id.clone());
                        id
                    }
                };
                self.insert_docs(vec![d]).await?;
                tracing::debug!(written = 1, "holder inserted");
                self.settle(&id, &node, path, None).await
            },
        )
        .await
    }

    /// Inserts `holders` (one `insert` command, in order), each with the path of the node it
    /// names: the nodes' paths are read in one query first. [`Error::NotFound`] of the node when a node is
    /// missing, with nothing written. After the insert, the nodes' paths are read again (one
    /// query) and the holders of any node that moved meanwhile get its new path (one `update`
    /// per such node).
    pub async fn insert_many(&self, holders: &[H]) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.holders.insert_many",
                model = self.span_model(),
                collection = self.span_collection(),
                holders = holders.len()
            ),
            async move {
                let h = H::HOLDER;
                let mut docs = Vec::with_capacity(holders.len());
                let mut nodes: Vec<Bson> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for holder in holders {
                    let d = bson::serialize_to_document(holder)?;
                    crate::error::check_encodable(H::SCHEMA.name(), &d)?;
                    crate::literal::check_stored_id(&d)?;
                    derived::check_written(H::SCHEMA, &d)?;
                    let node = d.get(h.node()).cloned().unwrap_or(Bson::Null);
                    crate::literal::check_id(h.node(), &node)?;
                    if !matches!(node, Bson::Null) && seen.insert(crate::finding::id_key(&node)) {
                        nodes.push(node);
                    }
                    docs.push(d);
                }
                if docs.is_empty() {
                    return Ok(());
                }
                let tree = self.tree();
                let mut paths = self.paths_of(&tree, &nodes).await?;
                for d in &mut docs {
                    let path = match d.get(h.node()) {
                        None | Some(Bson::Null) => Vec::new(),
                        Some(node) => match paths.get(&crate::finding::id_key(node)) {
                            Some(path) => path.clone(),
                            None => return Err(tree.no_node(node.clone())),
                        },
                    };
                    d.insert(h.path(), path);
                    check_size(d, H::SCHEMA.name())?;
                }
                self.insert_docs(docs).await?;
                tracing::debug!(written = holders.len(), "holders inserted");
                let mut removed: u64 = 0;
                let mut gone: Option<Bson> = None;
                for _ in 0..PLACE_ATTEMPTS {
                    let now = self.paths_of(&tree, &nodes).await?;
                    let moved: Vec<&Bson> = nodes
                        .iter()
                        .filter(|n| {
                            now.get(&crate::finding::id_key(n))
                                != paths.get(&crate::finding::id_key(n))
                        })
                        .collect();
                    if moved.is_empty() {
                        return match gone {
                            None => Ok(()),
                            Some(node) => Err(Error::Incomplete {
                                written: holders.len() - removed as usize,
                                failed: removed as usize,
                                source: Box::new(tree.no_node(node)),
                            }),
                        };
                    }
                    for node in moved {
                        match (
                            paths.get(&crate::finding::id_key(node)),
                            now.get(&crate::finding::id_key(node)),
                        ) {
                            (Some(old), Some(new)) => {
                                tracing::debug!(
                            "a node moved while its holders were written: writing its new path"
                        );
                                self.update_holders(
                                    doc! { h.node(): node.clone(), h.path(): old.clone() },
                                    doc! { "$set": { h.path(): new.clone() } },
                                    true,
                                )
                                .await?;
                            }
                            (Some(old), None) => {
                                // Deleted (or renamed) meanwhile: take back its holders still as written
                                // (the change's own sweep moved the others).
                                removed += self
                                    .delete_holders(
                                        doc! { h.node(): node.clone(), h.path(): old.clone() },
                                        true,
                                    )
                                    .await?;
                                gone.get_or_insert_with(|| node.clone());
                            }
                            _ => {}
                        }
                    }
                    paths = now;
                }
                Err(self.kept_moving(holders.len()))
            },
        )
        .await
    }

    /// The paths of `nodes` as stored now, by key (missing nodes left out): one query.
    async fn paths_of(&self, tree: &Tree<M>, nodes: &[Bson]) -> Result<HashMap<String, Vec<Bson>>> {
        if nodes.is_empty() {
            return Ok(HashMap::new());
        }
        let mut session = self.session().await?;
        Ok(tree
            .read_nodes(session.as_deref_mut(), nodes)
            .await?
            .into_iter()
            .map(|(k, n)| (k, n.path()))
            .collect())
    }

    /// The error when a node kept moving while its holders were written.
    fn kept_moving(&self, written: usize) -> Error {
        let h = H::HOLDER;
        Error::Incomplete {
            written,
            failed: 0,
            source: Box::new(Error::InvalidValue {
                field: h.path().to_owned(),
                reason: format!(
                    "the node kept moving over {PLACE_ATTEMPTS} checks; `Tree::repair` puts the \
                     path right"
                ),
            }),
        }
    }

    /// Places the stored holder `id` in `node`: its node field and its path. [`Error::NotFound`] of the node
    /// when the node is missing, [`Error::NotFound`] when the holder is; nothing is written then.
    /// A node renamed while the holder is placed: the holder follows it (new key and path). A
    /// node deleted meanwhile: the holder goes back to the node and path it had, and the call
    /// returns [`Error::NotFound`] of the node (unless the deletion's own sweep moved it first: then it stays
    /// where the deletion put it). One read more than an insert.
    pub fn place<'a>(
        &'a self,
        id: impl IntoId<H::Id>,
        node: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.place_op(id.into_id(), node.into_id()))
    }

    async fn place_op(&self, id: H::Id, node: M::Key) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.holders.place",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let h = H::HOLDER;
                let (id, node) = (
                    crate::literal::typed_id("_id", id)?,
                    super::key_bson::<M>(H::HOLDER.node(), node)?,
                );
                let (node_id, path) = if matches!(node, Bson::Null) {
                    (Bson::Null, Vec::new())
                } else {
                    let found = {
                        let mut session = self.session().await?;
                        self.tree()
                            .node_where(
                                session.as_deref_mut(),
                                doc! { M::TREE.key(): node.clone() },
                            )
                            .await?
                    };
                    match found {
                        Some((node_id, _, path)) => (node_id, path),
                        None => return Err(self.tree().no_node(node.clone())),
                    }
                };
                let not_found = || Error::NotFound {
                    collection: h.collection().to_owned(),
                    missing: Box::new(crate::error::Missing::Document { id: id.clone() }),
                };
                // Where it was: what a placement the tree's changes overtake goes back to.
                let was = {
                    let mut session = self.session().await?;
                    let raw = self.raw();
                    let find = raw
                        .find_one(doc! { "_id": id.clone() })
                        .projection(doc! { h.node(): 1, h.path(): 1 });
                    in_session!(find, session.as_deref_mut())?.ok_or_else(not_found)?
                };
                let placed = Placed {
                    node_id,
                    was_node: was.get(h.node()).cloned().unwrap_or(Bson::Null),
                    was_path: was
                        .get(h.path())
                        .cloned()
                        .unwrap_or(Bson::Array(Vec::new())),
                };
                let result = self
                    .update_holders(
                        doc! { "_id": id.clone() },
                        doc! { "$set": { h.node(): node.clone(), h.path(): path.clone() } },
                        false,
                    )
                    .await?;
                if result.matched_count == 0 {
                    return Err(not_found());
                }
                self.settle(&id, &node, path, Some(&placed)).await
            },
        )
        .await
    }

    /// The holders in the node or below it: one query on the `path` index.
    pub fn under<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<H>>> {
        crate::model::Pending::new(self.under_op(key.into_id()))
    }

    async fn under_op(&self, key: M::Key) -> Result<Vec<H>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.holders.under",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move { self.holding(H::HOLDER.path(), key).await },
        )
        .await
    }

    /// The holders directly in the node: one query on the `node` index.
    pub fn directly_in<'a>(
        &'a self,
        key: impl IntoId<M::Key>,
    ) -> crate::model::Pending<'a, Result<Vec<H>>> {
        crate::model::Pending::new(self.directly_in_op(key.into_id()))
    }

    async fn directly_in_op(&self, key: M::Key) -> Result<Vec<H>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::tree.holders.directly_in",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move { self.holding(H::HOLDER.node(), key).await },
        )
        .await
    }

    /// The holders whose `field` (the path or the node) holds the node `key`.
    async fn holding(&self, field: &'static str, key: impl IntoId<M::Key>) -> Result<Vec<H>> {
        let filter = doc! { field: super::key_bson::<M>(field, key)? };
        let mut session = Transaction::session_of(self.tx.as_ref()).await?;
        let raw = self.raw();
        let docs: Vec<Document> = collect_in!(raw.find(filter), session.as_deref_mut())?;
        decode_all(docs)
    }
}

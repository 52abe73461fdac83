//! The tree pattern: each node keeps the path from the root (`#[tree]`), and documents placed in
//! a node keep a copy of that path (`#[in_tree]`), so "everything under this node" is one query
//! on a multikey index.
//!
//! A shop's catalogue: a product carries `directCategory: "固态硬盘"` and `categoryPath:
//! ["电子", "计算机部件", "存储", "固态硬盘"]`; `{categoryPath: "计算机部件"}` finds every product under
//! 计算机部件, `{directCategory: "固态硬盘"}` the ones directly in 固态硬盘. The categories form the
//! tree: each knows its parent and its ancestors.
//!
//! # Declaring a tree, and its holders
//!
//! On the node model, `#[tree(parent = parent, ancestors = ancestors)]`:
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `parent = parent` | the field holding the parent's key: `Option<K>`, `None` for a root | required |
//! | `ancestors = ancestors` | the field holding the keys from the root down to the parent: `Vec<K>` | required |
//! | `key = name` | the field that names a node in `parent`, `ancestors` and the holders' paths; it gets a unique index | `_id` |
//!
//! On a model whose documents sit in a node (the holder), `#[in_tree(Category, node =
//! direct_category, path = category_path)]`: `node` holds the node's key (`K` or `Option<K>`),
//! `path` its path from the root down to and including the node (`Vec<K>`). A model may sit in
//! several trees, one attribute each. The types are checked at compile time against the tree's
//! key type.
//!
//! Indexes, declared with the models and created by [`sync_models`](crate::sync_models):
//! `parent` and `ancestors` (multikey) on the tree, the key's unique index when it is not `_id`,
//! `node` and `path` (multikey) on each holder. The sync also creates `<collection>.tree`, which
//! holds one document through which every change of the tree's shape passes (see below).
//!
//! ```
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, Model)]
//! #[tree(parent = parent, ancestors = ancestors, key = name)]
//! struct Category {
//!     #[serde(rename = "_id")]
//!     id: bson::oid::ObjectId,
//!     name: String,
//!     parent: Option<String>,
//!     ancestors: Vec<String>,
//! }
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[in_tree(Category, node = direct_category, path = category_path)]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: bson::oid::ObjectId,
//!     name: String,
//!     direct_category: String,
//!     category_path: Vec<String>,
//! }
//!
//! fn category(name: &str, parent: Option<&str>) -> Category {
//!     let parent = parent.map(str::to_owned);
//!     Category { id: bson::oid::ObjectId::new(), name: name.into(), parent, ancestors: vec![] }
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let tree = Category::tree(&db);
//! tree.insert(&category("电子", None)).await?;
//! tree.insert(&category("计算机部件", Some("电子"))).await?;
//! tree.insert(&category("存储", Some("计算机部件"))).await?;
//! let ssd = tree.insert(&category("固态硬盘", Some("存储"))).await?;
//! assert_eq!(ssd.ancestors, ["电子", "计算机部件", "存储"]);
//!
//! let products = tree.holders::<Product>();
//! products.insert(&Product {
//!     id: bson::oid::ObjectId::new(),
//!     name: "三星 1TB SSD".into(),
//!     direct_category: "固态硬盘".into(),
//!     category_path: vec![], // filled in from the category
//! }).await?;
//! assert_eq!(products.under("计算机部件").await?.len(), 1);
//! assert_eq!(products.directly_in("固态硬盘").await?.len(), 1);
//!
//! // 存储 moves to the root: its subtree's ancestors and every product's path, in one transaction.
//! let moved = tree.move_to_root("存储").await?;
//! assert_eq!(moved.modified(), 3); // 存储, 固态硬盘, the product
//! # Ok(()) }
//! ```
//!
//! # Keys
//!
//! Every operation names nodes by the tree's key type ([`TreeNode::Key`]: the `_id`'s type, or
//! the `key = ..` field's), taking anything that converts into it (`"scifi"` for a `String`
//! key): a key of another type does not compile. A key is an equality in every filter the
//! operation sends; where the key type is `Bson`, an operator document or a regex is refused
//! ([`Error::InvalidValue`]) before anything is sent.
//!
//! # Reads
//!
//! Each is one query through an index: [`Tree::children`] (`parent`), [`Tree::descendants`]
//! (every node whose `ancestors` hold the node), [`Tree::ancestors`] (one aggregation: the node
//! and a `$lookup` of its ancestors), [`Holders::under`] (`path`) and [`Holders::directly_in`]
//! (`node`). [`Tree::subtree`] is the node and its descendants, two queries.
//!
//! # Writes
//!
//! - [`Tree::insert`] and [`insert_many`](Tree::insert_many) compute each node's ancestors from
//!   its parent (a missing parent is [`Error::NoNode`]). [`Holders::insert`],
//!   [`insert_many`](Holders::insert_many) and [`place`](Holders::place) compute a holder's path
//!   from its node.
//! - [`Tree::move_under`] and [`move_to_root`](Tree::move_to_root) rewrite the moved node, the
//!   ancestors of every node below it (one `updateMany`) and the path of every holder under it
//!   (one `updateMany` per holder model), in one transaction: a failure anywhere leaves
//!   everything as it was. Moving a node under itself or one of its descendants is
//!   [`Error::Cycle`], with nothing written.
//! - [`Tree::rename`] changes a node's key everywhere it is copied (when `key` is not `_id`).
//!   The key, the parent and the ancestors (and a holder's node and path) are the tree's: an
//!   update of them through another pattern ([`References::update`](crate::References::update),
//!   [`Computing::update`](crate::Computing::update), a versioned update) is
//!   [`Error::InvalidKey`] naming the tree's operation to use. The driver used directly is not
//!   stopped: [`Tree::check`] reports what it left and [`Tree::repair`] fixes it.
//! - [`Tree::delete`] deletes a leaf; a node with descendants or holders is [`Error::NodeInUse`]
//!   unless the [`Deletion`] says to cascade or to re-parent.
//!
//! Every change of the tree's shape (insert, move, rename, delete) writes one document of
//! `<collection>.tree` in its transaction, so two of them never run on the same tree at once:
//! two moves that would make a cycle together cannot both pass their check, and a node
//! inserted under a parent that is being moved gets the new path. They are retried on the
//! write conflict, like any transaction. Holders are not serialized that way (they are the hot
//! path): a holder placed while its node is being moved is checked again after its write, and
//! every move, rename and deletion ends with a second transaction that sends its holder writes
//! once more, for the holders written while it ran; once both have returned, the path is right.
//! A holder placed in a node deleted meanwhile ends as the deletion's other holders do (moved up,
//! or deleted by a cascade), or is taken back and its insert returns [`Error::NoNode`]. That
//! second transaction is separate from the change: if it fails, the change stays committed, a
//! `WARN` event says so, and [`Tree::repair`] fixes what it left.
//!
//! What other models derive from the nodes' and holders' fields follows every write, in the same
//! transaction (the [map of derived data](crate::derived)): extended-reference copies of a
//! renamed key, a `#[computed]` count or sum of the holders per node through reparenting and
//! cascades. Their refusals are the tree operation's: a holder moved up to a node whose count
//! target does not exist makes the deletion [`Error::NotFound`] (of that target), with nothing
//! written. A holder inserted while a rename runs, holding an extended-reference copy built
//! from the node before the rename, keeps the old key in that copy:
//! [`References::resync`](crate::References::resync) of the node rewrites it. A computed `by`
//! holds the target's `_id`: to count holders per node of a tree with `key = ..`, count them
//! in a model whose `_id` is the key, or name the tree by `_id`.
//!
//! The holder copies are rewritten by the same write loop as [extended
//! references](crate::extended_ref), and reported the same way: a [`Propagation`] with one
//! entry per `updateMany`. Without transactions (a standalone server) the writes run in the
//! same order, unprotected: a failure between them is [`Error::Incomplete`], and
//! [`Tree::repair`] puts every path right from the parents. Renames and deletions write the
//! node itself last, so one that failed half-way can be run again.
//!
//! Keys are scalars (a string, a number, an `ObjectId`): a deletion takes a key out of arrays
//! with `$pull`, which would read a document key as a condition. [`Tree::check`] reads the whole
//! tree and its holders and reports every stale copy, for tests and audits.
//!
//! # Tracing
//!
//! Every operation runs in a span `pattern_runtime::tree.<operation>` with `model` and
//! `collection` (the tree's) and the node's key where there is one; each `updateMany` of a
//! move is a `DEBUG` event with what it matched and modified.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use bson::{doc, Bson, Document};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use mongodb::options::UpdateModifications;
use mongodb::{ClientSession, Collection, Database};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::copies::Propagation;
use crate::copies::{write_copies, CopyWrite, Partial};
pub use crate::derived;
use crate::error::{check_size, Error, Result, NAMESPACE_EXISTS};
use crate::finding::{CheckReport, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::schema::{registered_models, ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod audit;
mod holders;
#[doc(hidden)]
pub mod key_probe;

pub use holders::Holders;

/// A model declared `#[tree(parent = .., ancestors = ..)]`: its documents are the nodes of a
/// tree. Generated by the derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tree",
    label = "not a tree",
    note = "declare the tree on its node model: `#[tree(parent = parent, ancestors = ancestors)]`"
)]
pub trait TreeNode: Model {
    /// The type that names a node in `parent`, `ancestors` and the holders' paths: the `_id`'s,
    /// or the `key = ..` field's.
    type Key: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The tree's fields.
    const TREE: &'static TreeSpec;
}

/// A model declared `#[in_tree(T, node = .., path = ..)]`: its documents sit in a node of the
/// tree `T` and copy its path. Generated by the derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not sit in the tree `{T}`",
    label = "not a holder of `{T}`",
    note = "declare it on the model: `#[in_tree({T}, node = category, path = category_path)]`"
)]
pub trait InTree<T>: Model {
    /// Where it keeps the node and the path.
    const HOLDER: &'static HolderSpec;
}

/// A tree, as static data: `#[tree(..)]` on `Category`.
#[derive(Debug, Clone, Copy)]
pub struct TreeSpec {
    parts: TreeParts,
}

/// The parts of a [`TreeSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct TreeParts {
    pub model: &'static str,
    pub collection: &'static str,
    /// The key field's BSON name (`_id` by default).
    pub key: &'static str,
    pub parent: &'static str,
    pub ancestors: &'static str,
    /// On `parent`, on `ancestors`, and the key's unique index when it is not `_id`.
    pub indexes: &'static [IndexSpec],
}

impl TreeSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: TreeParts) -> Self {
        TreeSpec { parts }
    }

    /// The node model's name.
    pub fn model(&self) -> &'static str {
        self.parts.model
    }

    /// The nodes' collection.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// The field naming a node (BSON name): `_id`, or the `key = ..` field.
    pub fn key(&self) -> &'static str {
        self.parts.key
    }

    /// The parent field (BSON name).
    pub fn parent(&self) -> &'static str {
        self.parts.parent
    }

    /// The ancestors field (BSON name).
    pub fn ancestors(&self) -> &'static str {
        self.parts.ancestors
    }

    /// The collection holding the document every change of the tree's shape writes:
    /// `<collection>.tree`.
    pub fn lock_collection(&self) -> String {
        format!("{}.tree", self.parts.collection)
    }

    /// Every registered model declared `#[in_tree(..)]` of this tree.
    pub fn holders(&'static self) -> Vec<&'static HolderSpec> {
        registered_models()
            .into_iter()
            .flat_map(|schema| schema.in_trees())
            .filter(|h| std::ptr::eq(h.tree(), self))
            .collect()
    }
}

impl PatternSpec for TreeSpec {
    /// The sampled nodes whose ancestors disagree with their parent's: one `find` of the
    /// parents.
    fn audit<'a>(
        &'static self,
        sample: &'a crate::schema::Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        Some(Box::pin(audit::audit_nodes(self, sample)))
    }

    /// A node is inserted, replaced and deleted through `Tree`: it computes the ancestors and
    /// keeps the subtree and the holders.
    fn document_writes(
        &'static self,
        operation: &str,
        _doc: Option<&Document>,
    ) -> Option<&'static str> {
        match operation {
            "insert" => {
                Some("a tree node is inserted through `Tree::insert`, which computes its ancestors")
            }
            "delete" => Some(
                "a tree node is deleted through `Tree::delete`, which decides what happens to \
                 its subtree and its holders",
            ),
            _ => None,
        }
    }

    /// The key (unless `_id`), the parent and the ancestors: every holder's path and the
    /// subtree's ancestors are copied from them.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        let mut kept = vec![
            (
                self.parent(),
                "the tree keeps a node's parent, with its subtree's ancestors and its holders' \
                 paths: move it with `Tree::move_under` or `Tree::move_to_root`",
            ),
            (
                self.ancestors(),
                "the tree computes the ancestors from the parents: move the node with \
                 `Tree::move_under`, or rebuild them with `Tree::repair`",
            ),
        ];
        if self.key() != "_id" {
            kept.push((
                self.key(),
                "the key is copied into children, descendants and holders: rename it with \
                 `Tree::rename`",
            ));
        }
        kept
    }

    fn indexes(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        self.parts
            .indexes
            .iter()
            .map(|i| (model.collection(), i))
            .collect()
    }

    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded {
            field: self.ancestors(),
            by: "`#[tree]` (the tree's depth)",
        }]
    }

    /// Creates `<collection>.tree` when it is missing (a transaction may not be able to create
    /// it).
    fn prepare<'a>(&'static self, db: &'a Database) -> Option<BoxFuture<'a, Result<()>>> {
        Some(Box::pin(async move {
            match db.create_collection(self.lock_collection()).await {
                Ok(()) => Ok(()),
                Err(e) if crate::error::server_code(&e) == Some(NAMESPACE_EXISTS) => Ok(()),
                Err(e) => Err(e.into()),
            }
        }))
    }
}

/// A model's place in a tree, as static data: `#[in_tree(Category, ..)]` on `Product`.
#[derive(Debug, Clone, Copy)]
pub struct HolderSpec {
    parts: HolderParts,
}

/// The parts of a [`HolderSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct HolderParts {
    pub model: &'static str,
    pub collection: &'static str,
    pub tree: &'static TreeSpec,
    /// The field holding the node's key (BSON name).
    pub node: &'static str,
    /// The field holding the path, root first, the node last (BSON name).
    pub path: &'static str,
    /// On `node` and on `path`.
    pub indexes: &'static [IndexSpec],
}

impl HolderSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: HolderParts) -> Self {
        HolderSpec { parts }
    }

    /// Writes into each of `docs` (holders about to be inserted by another pattern: a grid's
    /// allocation) the path of the node it names, read in one query, as `Holders::insert`
    /// would; [`Error::NoNode`](crate::Error::NoNode) when a node is missing. A move racing the
    /// insert can leave a path behind: `Tree::repair` (and the doctor) find it.
    pub(crate) async fn set_paths(
        &'static self,
        db: &mongodb::Database,
        docs: &mut [Document],
    ) -> crate::error::Result<()> {
        let tree = self.tree();
        let mut nodes: Vec<Bson> = Vec::new();
        for d in docs.iter() {
            match d.get(self.node()) {
                None | Some(Bson::Null) => {}
                Some(node) => {
                    crate::literal::check_id(self.node(), node)?;
                    if !nodes
                        .iter()
                        .any(|n| crate::finding::id_key(n) == crate::finding::id_key(node))
                    {
                        nodes.push(node.clone());
                    }
                }
            }
        }
        let mut paths: std::collections::HashMap<String, Vec<Bson>> =
            std::collections::HashMap::new();
        if !nodes.is_empty() {
            let found: Vec<Document> = db
                .collection::<Document>(tree.collection())
                .find(doc! { tree.key(): { "$in": nodes.clone() } })
                .projection(doc! { tree.key(): 1, tree.ancestors(): 1 })
                .await?
                .try_collect()
                .await?;
            for n in found {
                let Some(key) = n.get(tree.key()).cloned() else {
                    continue;
                };
                let mut path = match n.get(tree.ancestors()) {
                    Some(Bson::Array(a)) => a.clone(),
                    _ => Vec::new(),
                };
                path.push(key.clone());
                paths.insert(crate::finding::id_key(&key), path);
            }
        }
        for d in docs.iter_mut() {
            let path = match d.get(self.node()) {
                None | Some(Bson::Null) => Vec::new(),
                Some(node) => match paths.get(&crate::finding::id_key(node)) {
                    Some(path) => path.clone(),
                    None => {
                        return Err(crate::error::Error::NoNode {
                            collection: tree.collection().to_owned(),
                            key: tree.key(),
                            value: Box::new(node.clone()),
                        })
                    }
                },
            };
            d.insert(self.path(), path);
        }
        Ok(())
    }

    /// The holder model's name.
    pub fn model(&self) -> &'static str {
        self.parts.model
    }

    /// The holder's collection.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// The tree it sits in.
    pub fn tree(&self) -> &'static TreeSpec {
        self.parts.tree
    }

    /// The field holding the node's key (BSON name).
    pub fn node(&self) -> &'static str {
        self.parts.node
    }

    /// The field holding the path (BSON name).
    pub fn path(&self) -> &'static str {
        self.parts.path
    }
}

impl PatternSpec for HolderSpec {
    /// The sampled holders whose path disagrees with their node's: one `find` of the nodes.
    fn audit<'a>(
        &'static self,
        sample: &'a crate::schema::Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        Some(Box::pin(audit::audit_holders(self, sample)))
    }

    /// A holder in a node is inserted through `Holders`, which computes its path (one in no
    /// node, with an empty path, may be inserted by any pattern); deleting one is any
    /// pattern's.
    fn document_writes(
        &'static self,
        operation: &str,
        doc: Option<&Document>,
    ) -> Option<&'static str> {
        let in_a_node = doc
            .and_then(|d| d.get(self.node()))
            .is_some_and(|n| !matches!(n, Bson::Null));
        (operation == "insert" && in_a_node).then_some(
            "a document placed in a tree node is inserted through `Holders::insert`, which \
             computes its path (or inserted in no node, then placed)",
        )
    }

    /// The node and the path: the path is copied from the node's ancestors.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        let reason = "the tree keeps a holder's node and path together: place it with \
                      `Holders::place`";
        vec![(self.node(), reason), (self.path(), reason)]
    }

    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        self.parts
            .indexes
            .iter()
            .map(|i| (self.collection(), i))
            .collect()
    }

    fn bounded_arrays(&'static self) -> Vec<crate::finding::Bounded> {
        vec![crate::finding::Bounded {
            field: self.path(),
            by: "`#[in_tree]` (the tree's depth)",
        }]
    }
}

impl ModelSchema {
    /// The `#[tree(..)]` of a node model.
    pub fn tree(&self) -> Option<&'static TreeSpec> {
        self.specs().next()
    }

    /// The trees this model's documents sit in (`#[in_tree(..)]`).
    pub fn in_trees(&self) -> Vec<&'static HolderSpec> {
        self.specs().collect()
    }
}

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

/// The operations on a tree: from `Category::tree(&db)`. See the [module documentation](self).
pub struct Tree<M> {
    db: Database,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for Tree<M> {
    fn clone(&self) -> Self {
        Tree {
            db: self.db.clone(),
            tx: self.tx.clone(),
            _model: PhantomData,
        }
    }
}

impl<M: TreeNode> fmt::Debug for Tree<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tree")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.db.name())
            .finish()
    }
}

/// `{$literal: value}`: a value inside an aggregation expression, never read as a field path.
fn literal(value: impl Into<Bson>) -> Bson {
    Bson::Document(doc! { "$literal": value.into() })
}

/// `prefix ++ field[index of key ..]`: the part of the array `field` from `key` on, under a new
/// prefix.
fn splice(field: &str, key: &Bson, prefix: &[Bson]) -> Bson {
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
fn copies_of(
    key: &Bson,
    model: &'static str,
    collection: &'static str,
    field: &'static str,
    update: impl Into<UpdateModifications>,
) -> CopyWrite {
    CopyWrite {
        model,
        collection,
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
                    h.model(),
                    h.collection(),
                    h.node(),
                    doc! { "$set": { h.node(): new.clone() } },
                ),
                CopyWrite {
                    array_filters: vec![doc! { "k": old.clone() }],
                    ..copies_of(old, h.model(), h.collection(), h.path(), element(h.path()))
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
            h.model(),
            h.collection(),
            h.node(),
            doc! { "$set": { h.node(): parent.clone() } },
        ),
        copies_of(
            key,
            h.model(),
            h.collection(),
            h.path(),
            doc! { "$pull": { h.path(): key.clone() } },
        ),
    ]
}

/// The writes that give the holders under `key` whose path does not run through `path` (the
/// node's path as stored now, the node last) the right prefix.
fn stale_under(key: &Bson, path: &[Bson], holders: &[&'static HolderSpec]) -> Vec<CopyWrite> {
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
                    h.model(),
                    h.collection(),
                    h.path(),
                    vec![doc! { "$set": { h.path(): splice(h.path(), key, prefix) } }],
                )
            }
        })
        .collect()
}

/// A change of the shape whose holder writes [`Tree::sweep`] sends again.
enum Late {
    Moved(Bson),
    Renamed { old: Bson, new: Bson },
    Reparented { key: Bson, parent: Bson },
    Cascaded(Bson),
}

/// A node as read for a structural change: its key, parent and ancestors.
struct NodeRef {
    key: Bson,
    parent: Bson,
    ancestors: Vec<Bson>,
}

impl NodeRef {
    /// The path of a holder in this node: its ancestors, then itself.
    fn path(&self) -> Vec<Bson> {
        let mut path = self.ancestors.clone();
        path.push(self.key.clone());
        path
    }
}

/// What the body of a structural change came to.
enum Step<T> {
    Done(T),
    Refused(Error),
}

/// A caller's key of the tree `M`, as stored: serialized from the tree's key type (so a key of
/// another type does not compile) and checked as an id (a `Bson` key type still cannot carry an
/// operator or a regex).
pub(crate) fn key_bson<M: TreeNode>(field: &str, key: impl IntoId<M::Key>) -> Result<Bson> {
    crate::literal::typed_id(field, key.into_id())
}

impl<M: TreeNode> Tree<M> {
    /// The tree of `M` in `db`.
    pub fn new(db: &Database) -> Self {
        Tree {
            db: db.clone(),
            tx: None,
            _model: PhantomData,
        }
    }

    /// The same tree in the caller's transaction `tx`: `insert`, `insert_many`, `move_under`,
    /// `move_to_root`, `rename` and `delete` run in it, with what derives from them, and commit
    /// or abort with it (see [`Transaction`]); so do the holders of
    /// [`holders`](Tree::holders) taken from it. In a caller's transaction the second pass over
    /// holders written meanwhile by others does not run (it needs the change committed):
    /// [`Tree::repair`] fixes a path such a race leaves.
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        Tree {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::TREE.collection())
    }

    fn no_node(&self, value: Bson) -> Error {
        Error::NoNode {
            collection: M::TREE.collection().to_owned(),
            key: M::TREE.key(),
            value: Box::new(value),
        }
    }

    /// The documents of `M` in the tree, with the operations on holders of `H`.
    pub fn holders<H: InTree<M>>(&self) -> Holders<M, H> {
        Holders::new(&self.db, self.tx.clone())
    }

    fn projection() -> Document {
        let t = M::TREE;
        doc! { t.key(): 1, t.parent(): 1, t.ancestors(): 1 }
    }

    fn node_ref(&self, d: &Document) -> NodeRef {
        let t = M::TREE;
        NodeRef {
            key: d.get(t.key()).cloned().unwrap_or(Bson::Null),
            parent: d.get(t.parent()).cloned().unwrap_or(Bson::Null),
            ancestors: match d.get(t.ancestors()) {
                Some(Bson::Array(a)) => a.clone(),
                _ => Vec::new(),
            },
        }
    }

    /// The nodes with these keys, as read in `session`.
    async fn read_nodes(
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

    /// Writes the tree's lock document: every change of the shape does, so two never commit
    /// together (the second one's write conflicts and it runs again, reading the first's result).
    async fn lock(&self, session: Option<&mut ClientSession>) -> mongodb::error::Result<()> {
        let lock: Collection<Document> = self.db.collection(&M::TREE.lock_collection());
        let op = lock
            .update_one(
                doc! { "_id": "shape" },
                doc! { "$inc": { "changes": 1_i64 } },
            )
            .upsert(true);
        in_session!(op, session)?;
        Ok(())
    }

    /// Inserts `node` under the parent it names (a root when it names none), its ancestors
    /// computed from the parent's, whatever `node` holds there; returns the node as stored.
    ///
    /// A parent that does not exist is [`Error::NoNode`]; a key already taken is
    /// [`Error::DuplicateKey`]. Nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::tree.insert",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn insert(&self, node: &M) -> Result<M> {
        let mut stored = self.insert_many(std::slice::from_ref(node)).await?;
        stored.pop().ok_or_else(|| Error::InvalidValue {
            field: M::TREE.key().to_owned(),
            reason: "the node was not stored".to_owned(),
        })
    }

    /// Inserts `nodes` in one transaction, each under the parent it names: an existing node or
    /// one earlier in `nodes`. Returns them as stored. All or nothing: a missing parent is
    /// [`Error::NoNode`], a key taken [`Error::DuplicateKey`].
    #[tracing::instrument(
        name = "pattern_runtime::tree.insert_many",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection(), nodes = nodes.len()),
        err(level = "debug")
    )]
    pub async fn insert_many(&self, nodes: &[M]) -> Result<Vec<M>> {
        let t = M::TREE;
        let mut docs = Vec::with_capacity(nodes.len());
        for node in nodes {
            let d = bson::serialize_to_document(node)?;
            check_size(&d, M::SCHEMA.name())?;
            match d.get(t.key()) {
                None | Some(Bson::Null) => {
                    return Err(Error::InvalidKey {
                        key: t.key().to_owned(),
                        reason: "a node needs its key: parents, ancestors and paths name it",
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
            .filter(|p| !matches!(p, Bson::Null) && !in_batch.contains(&crate::finding::id_key(p)))
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
                .map(|d| bson::deserialize_from_document(d).map_err(Error::from))
                .collect(),
            Step::Refused(e) => Err(e),
        }
    }

    /// The node with this key.
    #[tracing::instrument(
        name = "pattern_runtime::tree.get",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn get(&self, key: impl IntoId<M::Key>) -> Result<Option<M>> {
        let found = self
            .raw()
            .find_one(doc! { M::TREE.key(): key_bson::<M>(M::TREE.key(), key)? })
            .await?;
        Ok(found.map(bson::deserialize_from_document).transpose()?)
    }

    /// The node's children, in key order: one query on the `parent` index.
    #[tracing::instrument(
        name = "pattern_runtime::tree.children",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn children(&self, key: impl IntoId<M::Key>) -> Result<Vec<M>> {
        let t = M::TREE;
        let docs: Vec<Document> = self
            .raw()
            .find(doc! { t.parent(): key_bson::<M>(t.key(), key)? })
            .sort(doc! { t.key(): 1 })
            .await?
            .try_collect()
            .await?;
        decode_all(docs)
    }

    /// Every node below the node, in no particular order: one query on the `ancestors` index.
    #[tracing::instrument(
        name = "pattern_runtime::tree.descendants",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn descendants(&self, key: impl IntoId<M::Key>) -> Result<Vec<M>> {
        let docs: Vec<Document> = self
            .raw()
            .find(doc! { M::TREE.ancestors(): key_bson::<M>(M::TREE.key(), key)? })
            .await?
            .try_collect()
            .await?;
        decode_all(docs)
    }

    /// The node and every node below it, shallowest first: two queries, the node by its key and
    /// [`descendants`](Tree::descendants) on the `ancestors` index. (One `find` of `{$or: [{key},
    /// {ancestors: key}]}` returns the same through the same indexes; on the embedded test
    /// server it took twice as long as the two for a subtree of 899 nodes, see the `tree`
    /// bench.) Empty when no node has this key.
    #[tracing::instrument(
        name = "pattern_runtime::tree.subtree",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn subtree(&self, key: impl IntoId<M::Key>) -> Result<Vec<M>> {
        let t = M::TREE;
        let key = key_bson::<M>(M::TREE.key(), key)?;
        let Some(node) = self.raw().find_one(doc! { t.key(): key.clone() }).await? else {
            return Ok(Vec::new());
        };
        let mut docs: Vec<Document> = self
            .raw()
            .find(doc! { t.ancestors(): key })
            .await?
            .try_collect()
            .await?;
        docs.sort_by_key(|d| d.get_array(t.ancestors()).map_or(0, Vec::len));
        docs.insert(0, node);
        decode_all(docs)
    }

    /// The node's ancestors, root first: one aggregation (the node, then a `$lookup` of its
    /// ancestors through the key's index). [`Error::NoNode`] when no node has this key.
    #[tracing::instrument(
        name = "pattern_runtime::tree.ancestors",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn ancestors(&self, key: impl IntoId<M::Key>) -> Result<Vec<M>> {
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
        let Some(found) = self.raw().aggregate(pipeline).await?.try_next().await? else {
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
    }

    /// The path of a holder placed in the node: its ancestors, then its own key.
    /// [`Error::NoNode`] when no node has this key.
    pub async fn path(&self, key: impl IntoId<M::Key>) -> Result<Vec<M::Key>> {
        let key = key_bson::<M>(M::TREE.key(), key)?;
        let path = self.current_path(None, &key).await?;
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

    async fn current_path(
        &self,
        session: Option<&mut ClientSession>,
        key: &Bson,
    ) -> mongodb::error::Result<Option<Vec<Bson>>> {
        let found = self
            .node_where(session, doc! { M::TREE.key(): key.clone() })
            .await?;
        Ok(found.map(|(_, _, path)| path))
    }

    /// Moves the node and its subtree under `parent`: in one transaction, the node's parent and
    /// ancestors, the ancestors of every node below it and the path of every holder under it.
    /// Returns what was rewritten: one entry for the nodes, one per holder model.
    ///
    /// [`Error::Cycle`] when `parent` is the node or below it, [`Error::NoNode`] when either is
    /// missing; nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::tree.move_under",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection(), key = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn move_under(
        &self,
        key: impl IntoId<M::Key>,
        parent: impl IntoId<M::Key>,
    ) -> Result<Propagation> {
        self.move_node(
            key_bson::<M>(M::TREE.key(), key)?,
            Some(key_bson::<M>(M::TREE.parent(), parent)?),
        )
        .await
    }

    /// Makes the node a root, with its subtree: [`Tree::move_under`] without a parent.
    #[tracing::instrument(
        name = "pattern_runtime::tree.move_to_root",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection(), key = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn move_to_root(&self, key: impl IntoId<M::Key>) -> Result<Propagation> {
        self.move_node(key_bson::<M>(M::TREE.key(), key)?, None)
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
            Ok(match write_copies(&self.db, s, writes).await? {
                Ok(p) => Step::Done(Ok(p)),
                Err(partial) => Step::Done(Err(partial.into_error())),
            })
        })?;
        let propagation = match step {
            Step::Done(result) => result?,
            Step::Refused(e) => return Err(e),
        };
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
            model: t.model(),
            collection: t.collection(),
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
                h.model(),
                h.collection(),
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
                        let of = (h.model(), h.collection());
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
    /// under it, in one transaction. For trees declared with `key = ..` (an `_id` never
    /// changes: [`Error::InvalidKey`]).
    ///
    /// [`Error::NoNode`] when no node has `key`, [`Error::DuplicateKey`] when `new_key` is
    /// taken; nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::tree.rename",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection(), key = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn rename(
        &self,
        key: impl IntoId<M::Key>,
        new_key: impl IntoId<M::Key>,
    ) -> Result<Propagation> {
        let t = M::TREE;
        if t.key() == "_id" {
            return Err(Error::InvalidKey {
                key: "_id".to_owned(),
                reason: "the tree's nodes are named by their `_id`, which never changes; rename \
                         a display field with an ordinary update, or declare `key = ..`",
            });
        }
        let (key, new_key) = (
            key_bson::<M>(M::TREE.key(), key)?,
            key_bson::<M>(M::TREE.key(), new_key)?,
        );
        if matches!(new_key, Bson::Null) {
            return Err(Error::InvalidKey {
                key: t.key().to_owned(),
                reason: "a node needs its key: parents, ancestors and paths name it",
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
                    t.model(),
                    t.collection(),
                    t.parent(),
                    doc! { "$set": { t.parent(): new_key.clone() } },
                ),
                CopyWrite {
                    array_filters: vec![doc! { "k": key.clone() }],
                    ..copies_of(
                        &key,
                        t.model(),
                        t.collection(),
                        t.ancestors(),
                        element(t.ancestors()),
                    )
                },
            ];
            writes.extend(rename_writes(&key, &new_key, &holders));
            // The node last: without a transaction, a rename that failed half-way can be run
            // again (the old key still names the node). With one, a taken key aborts it all.
            writes.push(copies_of(
                &key,
                t.model(),
                t.collection(),
                t.key(),
                doc! { "$set": { t.key(): new_key.clone() } },
            ));
            Ok(match write_copies(&self.db, s, writes).await? {
                Ok(p) => Step::Done(Ok(p)),
                Err(partial) => Step::Done(Err(partial.into_error())),
            })
        })?;
        let propagation = match step {
            Step::Done(result) => result?,
            Step::Refused(e) => return Err(e),
        };
        self.sweep(
            Late::Renamed {
                old: key,
                new: new_key,
            },
            &holders,
        )
        .await;
        Ok(propagation)
    }

    /// Deletes the node, and what is below it as `how` says, in one transaction. See
    /// [`Deletion`]; [`Error::NodeInUse`] or [`Error::NoNode`] with nothing deleted.
    #[tracing::instrument(
        name = "pattern_runtime::tree.delete",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection(), key = tracing::field::Empty, how = ?how),
        err(level = "debug")
    )]
    pub async fn delete(&self, key: impl IntoId<M::Key>, how: Deletion) -> Result<Deleted> {
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
                        let of = (h.model(), h.collection());
                        deleted.holders +=
                            derived::delete(&self.db, s.as_deref_mut(), of, filter, true).await?;
                    }
                    let filter = doc! { "$or": [ { t.ancestors(): key.clone() }, { t.key(): key.clone() } ] };
                    let of = (t.model(), t.collection());
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
                let of = (t.model(), t.collection());
                deleted.nodes = derived::delete(&self.db, s, of, filter, false).await?;
            }
            tracing::debug!(nodes = deleted.nodes, holders = deleted.holders, "deleted");
            Ok(Step::Done(Ok((deleted, node.parent.clone()))))
        })?;
        let (deleted, parent) = match step {
            Step::Done(result) => result?,
            Step::Refused(e) => return Err(e),
        };
        let late = match how {
            Deletion::Cascade => Late::Cascaded(key),
            Deletion::LeafOnly | Deletion::Reparent => Late::Reparented { key, parent },
        };
        self.sweep(late, &holders).await;
        Ok(deleted)
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
                t.model(),
                t.collection(),
                t.parent(),
                doc! { "$set": { t.parent(): parent.clone() } },
            ),
            copies_of(
                key,
                t.model(),
                t.collection(),
                t.ancestors(),
                doc! { "$pull": { t.ancestors(): key.clone() } },
            ),
        ];
        writes.extend(holders.iter().flat_map(|h| reparent_holder(key, parent, h)));
        writes
    }

    /// The tree's pattern on the node model, and the holders' on each holder model.
    fn targets() -> Vec<crate::maintenance::Target> {
        let t = M::TREE;
        let mut targets = crate::maintenance::targets::<TreeSpec>(M::SCHEMA);
        for h in t.holders() {
            if let Some(model) = crate::derived::model_named(h.model(), h.collection()) {
                targets.extend(crate::maintenance::targets::<HolderSpec>(model));
            }
        }
        targets
    }

    /// Reads every node and every holder of every holder model, a page at a time, and reports
    /// the ancestors lists and paths that disagree with the parents ([`Check::TreeDrift`],
    /// each finding listing its documents), as the [doctor](mod@crate::doctor) does over a
    /// sample. Writes nothing; reads everything (a tool for audits and repairs, not for a hot
    /// path).
    ///
    /// [`Check::TreeDrift`]: crate::doctor::Check::TreeDrift
    #[tracing::instrument(
        name = "pattern_runtime::tree.check",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<CheckReport> {
        crate::maintenance::check(&self.db, &Self::targets()).await
    }

    /// Every ancestors list and path that disagrees with the parents, with the value the
    /// parents give (one read of every node and holder).
    async fn stale_copies(&self) -> Result<TreeCheck> {
        let t = M::TREE;
        let docs: Vec<Document> = self
            .raw()
            .find(doc! {})
            .projection(doc! { "_id": 1, t.key(): 1, t.parent(): 1, t.ancestors(): 1 })
            .await?
            .try_collect()
            .await?;
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
            let stored = d.get(t.ancestors()).cloned().unwrap_or(Bson::Null);
            let expected = expected_ancestors(t, d, &nodes);
            if expected.as_ref().map(|e| Bson::Array(e.clone())) != Some(stored.clone()) {
                report.stale.push(Stale {
                    model: t.model(),
                    collection: t.collection(),
                    id: d.get("_id").cloned().unwrap_or(Bson::Null),
                    field: t.ancestors(),
                    stored,
                    expected: expected.clone().map(Bson::Array),
                });
            }
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
            let coll: Collection<Document> = self.db.collection(h.collection());
            let mut cursor = coll
                .find(doc! {})
                .projection(doc! { "_id": 1, h.node(): 1, h.path(): 1 })
                .await?;
            while let Some(d) = cursor.try_next().await? {
                report.holders += 1;
                let stored = d.get(h.path()).cloned().unwrap_or(Bson::Null);
                let expected = match d.get(h.node()) {
                    None | Some(Bson::Null) => Some(Vec::new()),
                    Some(node) => expected_paths
                        .get(&crate::finding::id_key(node))
                        .cloned()
                        .flatten(),
                };
                if expected.as_ref().map(|e| Bson::Array(e.clone())) != Some(stored.clone()) {
                    report.stale.push(Stale {
                        model: h.model(),
                        collection: h.collection(),
                        id: d.get("_id").cloned().unwrap_or(Bson::Null),
                        field: h.path(),
                        stored,
                        expected: expected.map(Bson::Array),
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

    /// Reads every node and holder, then sends one `update` per stale ancestors list or path
    /// whose right value the parents give; then checks again ([`Tree::check`]). What is left
    /// is what the parents cannot say: a node whose parent is missing or whose parents loop,
    /// a holder whose node is missing. Each update's filter carries the stale value, so a copy
    /// changed meanwhile is left as it is. Run it after an [`Error::Incomplete`] or after
    /// changes made outside the toolkit.
    #[tracing::instrument(
        name = "pattern_runtime::tree.repair",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::TREE.collection()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<RepairReport> {
        let report = self.stale_copies().await?;
        let mut repaired = 0;
        for s in &report.stale {
            let Some(expected) = &s.expected else {
                continue;
            };
            let coll: Collection<Document> = self.db.collection(s.collection);
            let op = coll.update_one(
                doc! { "_id": s.id.clone(), s.field: s.stored.clone() },
                doc! { "$set": { s.field: expected.clone() } },
            );
            let mut session = Transaction::session_of(self.tx.as_ref()).await?;
            repaired += in_session!(op, session.as_deref_mut())?.modified_count;
        }
        crate::maintenance::after_repair(&self.db, &Self::targets(), repaired).await
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

fn decode_all<T: DeserializeOwned>(docs: Vec<Document>) -> Result<Vec<T>> {
    docs.into_iter()
        .map(|d| bson::deserialize_from_document(d).map_err(Error::from))
        .collect()
}

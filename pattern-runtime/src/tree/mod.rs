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
//! A holder that shows its node (a product showing its category's name) holds an extended
//! reference to it (`#[extended_ref(propagate)] category: CategoryRef`) and names it with
//! `copy = category`: the tree then keeps the copy pointing at the node the holder is in,
//! through every write of the node field (an insert, [`Holders::place`], a deletion that moves
//! holders up), in the same transaction, and the extended reference keeps its copied fields.
//! Another handle's update of the copy is [`Error::KeptField`]; a copy pointing elsewhere
//! (written around the toolkit) is a [`Tree::check`] and doctor finding, which
//! [`Tree::repair`] points back. A copy of a node not named by `copy` is the holder's own (a
//! node it names for another reason) and is left alone. The field must be a `propagate`
//! extended reference to the tree's node model, or an `Option` of one: a compile error
//! otherwise.
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
//! let tree = Category::collection(&db).tree();
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
//!   its parent (a missing parent is [`Error::NotFound`] of the node). [`Holders::insert`],
//!   [`insert_many`](Holders::insert_many) and [`place`](Holders::place) compute a holder's path
//!   from its node.
//! - [`Tree::move_under`] and [`move_to_root`](Tree::move_to_root) rewrite the moved node, the
//!   ancestors of every node below it (one `updateMany`) and the path of every holder under it
//!   (one `updateMany` per holder model), in one transaction: a failure anywhere leaves
//!   everything as it was. Moving a node under itself or one of its descendants is
//!   [`Error::Cycle`], with nothing written.
//! - [`Tree::rename`] changes a node's key everywhere it is copied (when `key` is not `_id`).
//!   The key, the parent and the ancestors (and a holder's node and path) are the tree's: an
//!   update of them through another handle (the model handle's
//!   [`update`](crate::ModelCollection::update), a versioned update) is
//!   [`Error::KeptField`] naming the tree's operation to use. The driver used directly is not
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
//! or deleted by a cascade), or is taken back and its insert returns [`Error::NotFound`] of the node. That
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
//! [`References::rebuild`](crate::References::rebuild) of the node rewrites it. A computed `by`
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
use crate::literal::literal;
use crate::model::{IntoId, Model};
use crate::schema::{ModelSchema, PatternSpec};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod audit;
mod check;
mod holders;
#[doc(hidden)]
pub mod key_probe;
mod read;
mod spec;
mod write;

use check::stale_under;
pub use holders::Holders;
pub use spec::{
    HolderParts, HolderSpec, InTree, NodeCopy, RenamableTree, TreeNode, TreeParts, TreeSpec,
};
use write::{copies_of, splice};
pub use write::{Deleted, Deletion};

crate::span::model_handle! {
    /// The operations on a tree: from `Category::collection(&db).tree()`. See the [module
    /// documentation](self).
    pub struct Tree<M: TreeNode> => M::TREE.collection();
}

impl<M: Model> crate::ModelCollection<M> {
    /// The tree `M`'s documents form: `move_under`, `rename`, `delete`, `descendants`, `check`,
    /// `repair` (see [`Tree`]). Bound to this handle's transaction when it has one.
    pub fn tree(&self) -> Tree<M>
    where
        M: TreeNode,
    {
        crate::txn::Bound::bound(Tree::new(self.database()), self.transaction())
    }
}

crate::txn::bound!(impl<M: TreeNode> Tree<M>);

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

impl<T> Step<Result<T>> {
    /// What the caller gets: the body's result, or its refusal.
    fn outcome(self) -> Result<T> {
        match self {
            Step::Done(result) => result,
            Step::Refused(e) => Err(e),
        }
    }
}

impl Step<Result<Propagation>> {
    /// The step of a body whose last write is [`write_copies`]: what it wrote, or the error of
    /// a write that stopped part-way.
    fn written(written: std::result::Result<Propagation, Partial>) -> Self {
        Step::Done(written.map_err(Partial::into_error))
    }
}

/// A caller's key of the tree `M`, as stored: serialized from the tree's key type (so a key of
/// another type does not compile) and checked as an id (a `Bson` key type still cannot carry an
/// operator or a regex).
pub(crate) fn key_bson<M: TreeNode>(field: &str, key: impl IntoId<M::Key>) -> Result<Bson> {
    crate::literal::typed_id(field, key.into_id())
}

impl<M: TreeNode> Tree<M> {
    crate::txn::in_transaction! {
        /// The same tree in the caller's transaction `tx`: `insert`, `insert_many`, `move_under`,
        /// `move_to_root`, `rename` and `delete` run in it, with what derives from them, and commit
        /// or abort with it (see [`Transaction`]); so do the holders of
        /// [`holders`](Tree::holders) taken from it. In a caller's transaction the second pass over
        /// holders written meanwhile by others does not run (it needs the change committed):
        /// [`Tree::repair`] fixes a path such a race leaves.
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::TREE.collection())
    }

    fn no_node(&self, value: Bson) -> Error {
        Error::NotFound {
            collection: M::TREE.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Node {
                key: M::TREE.key(),
                value,
            }),
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

    /// The tree's pattern on the node model, and the holders' on each holder model.
    fn targets() -> Vec<crate::maintenance::Target> {
        let t = M::TREE;
        let mut targets = crate::maintenance::targets::<TreeSpec>(M::SCHEMA);
        for h in t.holders() {
            targets.extend(crate::maintenance::targets::<HolderSpec>(h.schema()));
        }
        targets
    }
}

fn decode_all<T: Model>(docs: Vec<Document>) -> Result<Vec<T>> {
    docs.into_iter()
        .map(crate::schema_version::decode::<T>)
        .collect()
}

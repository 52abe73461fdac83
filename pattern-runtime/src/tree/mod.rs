#![doc = include_str!("../../docs/tree.md")]

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
use crate::derived;
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

impl<M: Model> crate::model::ModelCollection<M> {
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
        /// [`holders`](Tree::holders) taken from it. Its reads (`get`, `children`, `descendants`,
        /// `subtree`, `ancestors`, `path`) run in it too, and see its uncommitted writes: a
        /// bound handle reads and writes in its transaction. In a caller's transaction the
        /// second pass over holders written meanwhile by others does not run (it needs the
        /// change committed): [`Tree::repair`] fixes a path such a race leaves.
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
        .map(crate::model::read::decode::<T>)
        .collect()
}

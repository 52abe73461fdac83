//! The [`Model`] trait and the typed collection handle: what every pattern builds on.

use std::fmt;
use std::future::Future;
use std::ops::Deref;

use mongodb::{Collection, Database};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::Result;
use crate::schema::ModelSchema;
use crate::sync::{self, SyncOptions, SyncReport};
use crate::txn::Transaction;

/// A struct stored as documents of one collection, declared with `#[derive(Model)]`.
///
/// The derive writes the implementation: the collection name, the indexes and a
/// [`ModelSchema`] describing every serialized field. Implementing it by hand is possible but
/// gives up the compile-time checks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a model",
    label = "not a `#[derive(Model)]` type",
    note = "derive it: `#[derive(Serialize, Deserialize, Model)]` on `{Self}` (a subset's `full` names the model its items are copied from)"
)]
pub trait Model: Serialize + DeserializeOwned + Send + Sync + Unpin + Sized + 'static {
    /// The model's static description.
    const SCHEMA: &'static ModelSchema;

    /// The typed handle on this model's collection in `db`.
    fn collection(db: &Database) -> ModelCollection<Self> {
        ModelCollection::new(db)
    }

    /// Syncs this model's indexes with [`SyncOptions::default()`]: creates what is missing, reports
    /// the rest, drops nothing. See [`sync_indexes`](crate::sync_indexes).
    fn sync_indexes(db: &Database) -> impl Future<Output = Result<SyncReport>> + Send {
        let db = db.clone();
        async move { sync::sync_schemas(&db, &[Self::SCHEMA], &SyncOptions::default()).await }
    }

    /// Syncs this model's indexes under an explicit policy.
    fn sync_indexes_with(
        db: &Database,
        options: &SyncOptions,
    ) -> impl Future<Output = Result<SyncReport>> + Send {
        let db = db.clone();
        let options = options.clone();
        async move { sync::sync_schemas(&db, &[Self::SCHEMA], &options).await }
    }
}

/// The typed handle on a model's collection: the driver's [`Collection<M>`] (reachable through
/// `Deref`, so every driver method works on it) plus the toolkit's operations for the model.
pub struct ModelCollection<M: Model> {
    db: Database,
    inner: Collection<M>,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
}

impl<M: Model> ModelCollection<M> {
    /// The handle on `M`'s collection in `db`.
    pub fn new(db: &Database) -> Self {
        ModelCollection {
            db: db.clone(),
            inner: db.collection(M::SCHEMA.collection()),
            tx: None,
        }
    }

    /// The same collection in the caller's transaction `tx`: the toolkit's operations on it (a
    /// versioned model's `insert`, `save`, `update`, `delete`, ...) run in it, with what derives
    /// from them, and commit or abort with it (see [`Transaction`]). The driver's own methods
    /// (through `Deref`) take the session themselves: `.session(&mut *tx.session().await)`.
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        ModelCollection {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    /// The caller's transaction this handle is bound to, if any.
    pub(crate) fn transaction(&self) -> Option<&Transaction> {
        self.tx.as_ref()
    }

    /// The driver's typed collection.
    pub fn inner(&self) -> &Collection<M> {
        &self.inner
    }

    /// The database this collection lives in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Syncs `M`'s indexes; see [`Model::sync_indexes`].
    pub async fn sync_indexes(&self) -> Result<SyncReport> {
        sync::sync_schemas(&self.db, &[M::SCHEMA], &SyncOptions::default()).await
    }
}

impl<M: Model> Deref for ModelCollection<M> {
    type Target = Collection<M>;
    fn deref(&self) -> &Collection<M> {
        &self.inner
    }
}

impl<M: Model> Clone for ModelCollection<M> {
    fn clone(&self) -> Self {
        ModelCollection {
            db: self.db.clone(),
            inner: self.inner.clone(),
            tx: self.tx.clone(),
        }
    }
}

impl<M: Model> fmt::Debug for ModelCollection<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelCollection")
            .field("model", &M::SCHEMA.name())
            .field("namespace", &self.inner.namespace())
            .finish()
    }
}

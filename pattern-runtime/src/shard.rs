//! Shard keys: declared next to a model's indexes, checked at compile time, applied by the
//! index sync on a sharded cluster.
//!
//! ```
//! use pattern_runtime::Model;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[shard_key(user_id)]
//! #[index(keys(user_id = 1, email = 1), unique)] // a unique index starts with the shard key
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: bson::oid::ObjectId,
//!     user_id: String,
//!     email: String,
//! }
//!
//! let key = User::SCHEMA.shard_key().unwrap();
//! assert_eq!(key.key_document(), bson::doc! { "userId": 1 });
//! // The shell's `sh.shardCollection("mydb.users", {user_id: 1})`:
//! assert_eq!(
//!     key.shard_collection_command("mydb", "users"),
//!     bson::doc! { "shardCollection": "mydb.users", "key": { "userId": 1 } },
//! );
//! ```
//!
//! # The attribute
//!
//! `#[shard_key(...)]` on the struct (or on an enum model, naming fields every variant has)
//! lists the key's fields in order, each ranged (`= 1`, the default) or `= "hashed"`:
//!
//! | written | shard key |
//! | --- | --- |
//! | `#[shard_key(user_id)]` | `{userId: 1}` |
//! | `#[shard_key(id = "hashed")]` | `{_id: "hashed"}` |
//! | `#[shard_key(region = 1, user_id = 1)]` | `{region: 1, userId: 1}` |
//! | `#[shard_key(created_at, allow_monotonic)]` | `{createdAt: 1}`, ranged on a growing field knowingly |
//!
//! Keys are Rust field names (dotted paths below a field as in `#[index(keys(...))]`), resolved
//! to the names serde writes. Compile errors, each at its token:
//! - a key that is not a field, a descending or other kind (a shard key is ranged or hashed), two
//!   hashed fields, two `#[shard_key]` attributes;
//! - a `unique` index that does not start with the shard key's fields: MongoDB refuses it on a
//!   sharded collection, since each shard could only check its own documents;
//! - a ranged shard key whose first field only grows (an `ObjectId` or a date type, by the
//!   type's name: `ObjectId`, `DateTime`, `SystemTime`, `NaiveDateTime`, `OffsetDateTime`,
//!   `Timestamp`): every insert would go to the last chunk, on one shard. The message gives the
//!   hashed form; `allow_monotonic` keeps it ranged. A type alias or a counter is not recognised.
//!
//! # At start-up
//!
//! The index sync ([`sync`](crate::sync()) and the others) first syncs the
//! indexes, then, for each model with a shard key, asks the server what it is (`hello`, once):
//! - on a sharded cluster (a `mongos`), it reads the collection's entry in `config.collections`:
//!   not sharded, it creates the supporting index when no index starts with the shard key,
//!   sends `enableSharding` and [`shardCollection`](ShardKey::shard_collection_command)
//!   ([`ShardStatus::Sharded`]); sharded on this key, nothing
//!   ([`ShardStatus::InPlace`]); sharded on another key, nothing, reported as
//!   [`ShardStatus::OtherKey`] (resharding is a decision for a person);
//! - on a replica set or a standalone server, nothing: [`ShardStatus::NotApplicable`] says why.
//!
//! Each outcome is a [`ShardReport`] in the [`SyncReport`](crate::sync::SyncReport)'s `shards`.

use std::fmt;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Database;

use crate::error::{server_code, Result};
use crate::finding::number;
use crate::index::{IndexKey, IndexKind, IndexSpec};

/// A model's declared shard key (`#[shard_key(...)]`), as static data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShardKey {
    parts: ShardKeyParts,
}

/// The parts of a [`ShardKey`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShardKeyParts {
    /// The key as an index: the one created to support it when none does.
    pub index: IndexSpec,
    pub allow_monotonic: bool,
}

impl ShardKey {
    #[doc(hidden)]
    pub const fn from_parts(parts: ShardKeyParts) -> Self {
        ShardKey { parts }
    }

    /// The key's fields in order, each [`IndexKind::Ascending`] (ranged) or
    /// [`IndexKind::Hashed`].
    pub fn keys(&self) -> &'static [IndexKey] {
        self.parts.index.keys()
    }

    /// The key document: `{userId: 1}`, `{_id: "hashed"}`.
    pub fn key_document(&self) -> Document {
        self.parts.index.key_document()
    }

    /// Whether one of the fields is hashed.
    pub fn is_hashed(&self) -> bool {
        self.keys().iter().any(|k| k.kind == IndexKind::Hashed)
    }

    /// Whether `allow_monotonic` was given (a ranged key on a growing field, knowingly).
    pub fn allows_monotonic(&self) -> bool {
        self.parts.allow_monotonic
    }

    /// The index created to support the key when no index starts with it: the key's fields,
    /// under mongod's default name (`userId_1`, `_id_hashed`).
    pub fn supporting_index(&'static self) -> &'static IndexSpec {
        &self.parts.index
    }

    /// Whether an index with this key document can support the shard key: it starts with the
    /// key's fields, of the same kinds.
    pub fn is_supported_by(&self, index_keys: &Document) -> bool {
        let mut existing = index_keys.iter();
        self.keys().iter().all(|k| {
            existing
                .next()
                .is_some_and(|(path, value)| path == k.path && same_kind(value, k.kind))
        })
    }

    /// `{shardCollection: "<database>.<collection>", key: {...}}`, MongoDB's documented form,
    /// sent to the `admin` database.
    pub fn shard_collection_command(&self, database: &str, collection: &str) -> Document {
        doc! {
            "shardCollection": format!("{database}.{collection}"),
            "key": self.key_document(),
        }
    }
}

/// `{enableSharding: "<database>"}`, sent to the `admin` database before the first
/// `shardCollection` (required before MongoDB 6.0, accepted after).
pub fn enable_sharding_command(database: &str) -> Document {
    doc! { "enableSharding": database }
}

/// Whether a key document's value is this kind: numbers compare by value (`1`, `1.0`, `1i64`).
fn same_kind(value: &Bson, kind: IndexKind) -> bool {
    match (value, kind) {
        (Bson::String(s), IndexKind::Hashed) => s == "hashed",
        (Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_), IndexKind::Ascending) => {
            number(value) == Some(1.0)
        }
        _ => false,
    }
}

/// Two key documents are the same key: the same paths in order, values equal as numbers or as
/// strings.
fn same_key(a: &Document, b: &Document) -> bool {
    a.len() == b.len()
        && a.iter().zip(b.iter()).all(|((pa, va), (pb, vb))| {
            pa == pb
                && match (number(va), number(vb)) {
                    (Some(x), Some(y)) => (x - y).abs() < f64::EPSILON,
                    _ => va == vb,
                }
        })
}

/// What the sync found, or did, for one model's shard key.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ShardStatus {
    /// Not sharded before: this sync sharded it.
    Sharded {
        /// Whether this sync created the supporting index first (no index started with the
        /// key).
        index_created: bool,
    },
    /// Already sharded on the declared key.
    InPlace,
    /// Sharded on another key; left as it is.
    OtherKey {
        /// The key the cluster has.
        existing: Document,
    },
    /// The server is not a sharded cluster: nothing was sent.
    NotApplicable {
        /// What the server is instead.
        reason: String,
    },
}

/// One model's shard key in a [`SyncReport`](crate::sync::SyncReport).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardReport {
    /// The collection.
    pub collection: String,
    /// The model declaring the key.
    pub model: &'static str,
    /// The declared key document.
    pub key: Document,
    /// What was found or done.
    pub status: ShardStatus,
}

impl fmt::Display for ShardReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match &self.status {
            ShardStatus::Sharded {
                index_created: true,
            } => "sharded now (supporting index created)".to_owned(),
            ShardStatus::Sharded {
                index_created: false,
            } => "sharded now".to_owned(),
            ShardStatus::InPlace => "sharded on this key".to_owned(),
            ShardStatus::OtherKey { existing } => {
                format!("SHARDED ON ANOTHER KEY {existing}, left alone")
            }
            ShardStatus::NotApplicable { reason } => format!("not applied: {reason}"),
        };
        write!(
            f,
            "{}  shard key {}  {}  {status}",
            self.collection, self.key, self.model
        )
    }
}

/// A model that declares a shard key: its name and collection, and the key.
pub(crate) struct Keyed {
    pub model: &'static str,
    pub collection: &'static str,
    pub key: &'static ShardKey,
}

/// Shards the collections of `keyed` (see the module docs); nothing is sent when it is empty.
pub(crate) async fn sync(db: &Database, keyed: Vec<Keyed>) -> Result<Vec<ShardReport>> {
    if keyed.is_empty() {
        return Ok(Vec::new());
    }
    let not_cluster = not_a_cluster(db).await?;
    let mut out = Vec::new();
    for Keyed {
        model,
        collection,
        key,
    } in keyed
    {
        let status = match &not_cluster {
            Some(reason) => {
                tracing::debug!(collection, reason, "shard key not applied");
                ShardStatus::NotApplicable {
                    reason: reason.clone(),
                }
            }
            None => shard_one(db, collection, key).await?,
        };
        out.push(ShardReport {
            collection: collection.to_owned(),
            model,
            key: key.key_document(),
            status,
        });
    }
    Ok(out)
}

/// Why sharding does not apply to the server of `db` (a replica set, a standalone server);
/// `None` on a sharded cluster (a `mongos`). One `hello`.
pub(crate) async fn not_a_cluster(db: &Database) -> Result<Option<String>> {
    let hello = db.run_command(doc! { "hello": 1 }).await?;
    Ok(if hello.get_str("msg").ok() == Some("isdbgrid") {
        None
    } else if let Ok(set) = hello.get_str("setName") {
        Some(format!(
            "the server is a member of replica set `{set}`, not a sharded cluster"
        ))
    } else {
        Some("the server is a standalone server, not a sharded cluster".to_owned())
    })
}

/// On a sharded cluster: the key `collection` is sharded on, if it is.
pub(crate) async fn sharded_on(db: &Database, collection: &str) -> Result<Option<Document>> {
    let ns = format!("{}.{collection}", db.name());
    let entry = db
        .client()
        .database("config")
        .collection::<Document>("collections")
        .find_one(doc! { "_id": &ns, "dropped": { "$ne": true } })
        .await?;
    Ok(entry.map(|e| e.get_document("key").cloned().unwrap_or_default()))
}

/// Whether the cluster's `existing` key is the declared one (numbers by value).
pub(crate) fn is_key(key: &ShardKey, existing: &Document) -> bool {
    same_key(existing, &key.key_document())
}

/// On a sharded cluster: shard `collection` on `key` unless it is sharded already.
async fn shard_one(db: &Database, collection: &str, key: &'static ShardKey) -> Result<ShardStatus> {
    if let Some(existing) = sharded_on(db, collection).await? {
        return Ok(if is_key(key, &existing) {
            ShardStatus::InPlace
        } else {
            tracing::info!(collection, existing = %existing, declared = %key.key_document(),
                "collection sharded on another key: left alone");
            ShardStatus::OtherKey { existing }
        });
    }
    let indexes: Vec<Document> = match db
        .run_cursor_command(doc! { "listIndexes": collection })
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if server_code(&e) == Some(crate::error::NAMESPACE_NOT_FOUND) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let supported = indexes
        .iter()
        .filter_map(|i| i.get_document("key").ok())
        .any(|k| key.is_supported_by(k));
    if !supported {
        db.run_command(doc! {
            "createIndexes": collection,
            "indexes": [key.supporting_index().to_document()],
        })
        .await?;
        tracing::debug!(
            collection,
            index = key.supporting_index().name(),
            "shard key index created"
        );
    }
    let admin = db.client().database("admin");
    match admin.run_command(enable_sharding_command(db.name())).await {
        // Before 6.0, a database enabled already answers `AlreadyInitialized`.
        Err(e) if server_code(&e) != Some(ALREADY_INITIALIZED) => return Err(e.into()),
        _ => {}
    }
    admin
        .run_command(key.shard_collection_command(db.name(), collection))
        .await?;
    tracing::info!(collection, key = %key.key_document(), "collection sharded");
    Ok(ShardStatus::Sharded {
        index_created: !supported,
    })
}

/// `AlreadyInitialized`: `enableSharding` on a database enabled already (before 6.0).
const ALREADY_INITIALIZED: i32 = 23;

#[cfg(test)]
mod tests {
    use super::*;

    static KEYS: [IndexKey; 2] = [
        IndexKey {
            path: "region",
            kind: IndexKind::Ascending,
        },
        IndexKey {
            path: "userId",
            kind: IndexKind::Hashed,
        },
    ];
    static KEY: ShardKey = ShardKey::from_parts(ShardKeyParts {
        index: IndexSpec::plain(&KEYS, "region_1_userId_hashed"),
        allow_monotonic: false,
    });

    #[test]
    fn supporting_indexes() {
        assert!(KEY.is_supported_by(&doc! { "region": 1, "userId": "hashed" }));
        assert!(KEY.is_supported_by(&doc! { "region": 1.0, "userId": "hashed", "x": 1 }));
        assert!(!KEY.is_supported_by(&doc! { "region": 1, "userId": 1 }));
        assert!(!KEY.is_supported_by(&doc! { "region": -1, "userId": "hashed" }));
        assert!(!KEY.is_supported_by(&doc! { "region": 1 }));
        assert!(!KEY.is_supported_by(&doc! { "userId": "hashed", "region": 1 }));
    }

    #[test]
    fn keys_compare_as_numbers() {
        assert!(same_key(
            &doc! { "a": 1, "b": "hashed" },
            &doc! { "a": 1.0, "b": "hashed" }
        ));
        assert!(same_key(&doc! { "a": 1_i64 }, &doc! { "a": 1 }));
        assert!(!same_key(
            &doc! { "a": 1, "b": 1 },
            &doc! { "b": 1, "a": 1 }
        ));
        assert!(!same_key(&doc! { "a": 1 }, &doc! { "a": "hashed" }));
        assert!(!same_key(&doc! { "a": 1 }, &doc! { "a": 1, "b": 1 }));
    }
}

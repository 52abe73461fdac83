//! The map of derived data: for every model, what in other documents derives from which of its
//! fields, and the one place every pattern's writes go through to keep it.
//!
//! A pattern that keeps data derived from another model's fields (an extended reference's
//! copies, a computed count or sum) declares each dependency once, as a [`Dependent`] returned
//! by its spec's `PatternSpec::dependents`. At the first write the map is built from every
//! registered model. From then on, any pattern's operation that changes documents of a model
//! (a tree renaming a node, a holder placed in a node, a computed source updated, copies
//! rewritten) asks the map which dependents read the fields it changes:
//!
//! - none: the write is sent as it always was, with no extra command;
//! - some: the documents it is about to change are read first (their `_id` and the fields the
//!   dependents read), the write is sent, the same documents are read again, and each dependent
//!   gets the documents whose fields changed, in the same session. Inside a transaction (every
//!   multi-document operation runs in one) the derived data commits or aborts with the write.
//!
//! A dependent's own writes go through the map in turn, so a copy of a copy, or a count of
//! documents that hold a copy, follows too; a chain stops where a write changes nothing.
//!
//! [`dependents_of`] lists a model's dependents, for a program or a test that wants to see the map:
//!
//! ```
//! use pattern_runtime::derived::dependents_of;
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[extended_ref(CustomerRef(name))]
//! struct Customer {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//!     city: String,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     customer_id: i64,
//!     #[extended_ref(propagate)]
//!     customer: CustomerRef,
//! }
//!
//! #[derive(Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! struct Account {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     #[computed(count = Order, by = customer_id)]
//!     order_count: i64,
//! }
//!
//! // The orders copy the customer's name: a write of `name` rewrites them, one of `city` does not.
//! let of_customer = dependents_of(Customer::SCHEMA);
//! assert_eq!(of_customer.len(), 1);
//! assert_eq!(of_customer[0].pattern(), "extended_ref");
//! assert_eq!(of_customer[0].reads(), ["name"]);
//!
//! // The accounts count the orders by `customerId`.
//! let of_order = dependents_of(Order::SCHEMA);
//! assert_eq!(of_order[0].pattern(), "computed");
//! assert_eq!(of_order[0].reads(), ["customerId"]);
//! assert!(of_order[0].describe().starts_with("Account.orderCount"));
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::OnceLock;

use bson::{doc, Bson, Document};
use mongodb::options::UpdateModifications;
use mongodb::results::UpdateResult;
use mongodb::{ClientSession, Collection, Database};

use crate::schema::{registered_models, ModelSchema};
pub use crate::schema::{Applying, Change, Changed, Dependent, Held};
use crate::txn::{collect_in, in_session, transact, Transaction};

mod kept;
pub(crate) use kept::*;

type Map = HashMap<usize, Vec<Box<dyn Dependent>>>;

fn key(model: &'static ModelSchema) -> usize {
    std::ptr::from_ref(model) as usize
}

fn map() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| map_of(|spec, model| spec.dependents(model)))
}

/// Every registered model's `listed` dependents, by source model.
fn map_of(
    listed: impl Fn(
        &'static dyn crate::schema::PatternSpec,
        &'static ModelSchema,
    ) -> Vec<Box<dyn Dependent>>,
) -> Map {
    let mut map: Map = HashMap::new();
    for model in registered_models() {
        for spec in model.patterns() {
            for dependent in listed(*spec, model) {
                map.entry(key(dependent.source()))
                    .or_default()
                    .push(dependent);
            }
        }
    }
    map
}

/// The data only a maintainer rebuilds from `model`'s documents ([`PatternSpec::maintained`]),
/// by source model.
fn maintained_map() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| map_of(|spec, model| spec.maintained(model)))
}

/// What a [maintainer](crate::maintainer) rebuilds after a change of `model`'s documents: its
/// dependents ([`dependents_of`]) and the data only a maintainer rebuilds
/// ([`PatternSpec::maintained`](crate::schema::PatternSpec::maintained)).
pub(crate) fn maintained_of(model: &'static ModelSchema) -> Vec<&'static dyn Dependent> {
    let mut all = dependents_of(model);
    if let Some(more) = maintained_map().get(&key(model)) {
        all.extend(more.iter().map(|d| &**d));
    }
    all
}

/// Every dependent of `model`: the data other documents derive from its fields.
pub fn dependents_of(model: &'static ModelSchema) -> Vec<&'static dyn Dependent> {
    map()
        .get(&key(model))
        .map(|deps| deps.iter().map(|d| &**d).collect())
        .unwrap_or_default()
}

/// [`Dependent::held`] of data kept in every document of `collection`, by its `_id`: a delete
/// whose `before` names that `_id` under `by` (a dotted path), for each.
pub(crate) async fn held_in(
    db: &Database,
    collection: &str,
    by: &str,
) -> mongodb::error::Result<Vec<Change>> {
    use futures_util::TryStreamExt as _;
    let holders: Vec<Document> = db
        .collection::<Document>(collection)
        .find(doc! {})
        .projection(doc! { "_id": 1 })
        .await?
        .try_collect()
        .await?;
    Ok(holders
        .into_iter()
        .filter_map(|d| d.get("_id").cloned())
        .map(|id| Change {
            id: Bson::Null,
            before: Some(nested(by, id)),
            after: None,
        })
        .collect())
}

/// [`Dependent::held`] of data kept for documents that are gone, `ids`: a delete of each.
pub(crate) fn deleted(ids: Vec<Bson>) -> Vec<Change> {
    ids.into_iter()
        .map(|id| Change {
            before: Some(doc! { "_id": id.clone() }),
            id,
            after: None,
        })
        .collect()
}

/// `{a: {b: value}}` for the path `a.b`.
fn nested(path: &str, value: Bson) -> Document {
    match path.split_once('.') {
        Some((head, rest)) => doc! { head: nested(rest, value) },
        None => doc! { path: value },
    }
}

/// The top-level fields a change stream's update event says changed: those set, removed or
/// truncated (`items.3.qty` is `items`).
pub(crate) fn event_fields(
    update: &mongodb::change_stream::event::UpdateDescription,
) -> BTreeSet<String> {
    let top = |path: &str| path.split('.').next().unwrap_or(path).to_owned();
    update
        .updated_fields
        .keys()
        .map(|k| top(k))
        .chain(update.removed_fields.iter().map(|k| top(k)))
        .chain(
            update
                .truncated_arrays
                .iter()
                .flatten()
                .map(|t| top(&t.field)),
        )
        .collect()
}

/// The top-level fields an update can change: the keys of an operator update (`$rename`'s
/// targets too), the fields a pipeline's `$set`/`$addFields`/`$unset` stages name. `None` when
/// it cannot tell (a `$project`, `$replaceRoot`, ...): any field then.
pub(crate) fn updated_fields(update: &UpdateModifications) -> Option<Vec<String>> {
    let top = |k: &str| k.split('.').next().unwrap_or(k).to_owned();
    let mut fields = Vec::new();
    match update {
        UpdateModifications::Document(d) => {
            for (op, body) in d {
                let Bson::Document(body) = body else {
                    return None;
                };
                for (k, v) in body {
                    fields.push(top(k));
                    if let (true, Bson::String(to)) = (op == "$rename", v) {
                        fields.push(top(to));
                    }
                }
            }
        }
        UpdateModifications::Pipeline(stages) => {
            for stage in stages {
                for (op, body) in stage {
                    match (op.as_str(), body) {
                        ("$set" | "$addFields", Bson::Document(body)) => {
                            fields.extend(body.keys().map(|k| top(k)));
                        }
                        ("$unset", Bson::String(k)) => fields.push(top(k)),
                        ("$unset", Bson::Array(ks)) => {
                            for k in ks {
                                fields.push(top(k.as_str()?));
                            }
                        }
                        _ => return None,
                    }
                }
            }
        }
        _ => return None,
    }
    Some(fields)
}

/// The dependents of `model` that read one of `fields` (every dependent when `fields` is
/// `None`: the write may change any field), those `skip` accepts left out.
pub(crate) fn reading(
    model: &'static ModelSchema,
    fields: Option<&[&str]>,
    skip: &(dyn Fn(&dyn Dependent) -> bool + Sync),
) -> Vec<&'static dyn Dependent> {
    dependents_of(model)
        .into_iter()
        .filter(|d| !skip(*d))
        .filter(|d| match fields {
            Some(_) if d.deletions_only() => false,
            None => true,
            Some(fields) => d
                .reads()
                .iter()
                .any(|r| fields.iter().any(|f| touches(f, r))),
        })
        .collect()
}

/// Whether a write to `path` (`a`, `a.b`, `a.$[k]`) can change the top-level field `field`.
fn touches(path: &str, field: &str) -> bool {
    path.split('.').next() == Some(field)
}

/// A write about to change documents of a model that has dependents: what they read, as it was.
#[must_use = "call `after` once the write is sent"]
pub(crate) struct Watch {
    model: &'static ModelSchema,
    dependents: Vec<&'static dyn Dependent>,
    projection: Document,
    before: Vec<Document>,
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("model", &self.model.name())
            .field("dependents", &self.dependents.len())
            .field("documents", &self.before.len())
            .finish()
    }
}

/// Before a write of the documents of `model` that `filter` matches, changing `fields` (`None`:
/// any): `None` when no dependent reads them (nothing is sent), otherwise the documents' fields
/// the dependents read, as stored now (one `find`).
pub(crate) async fn watch(
    db: &Database,
    session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    fields: Option<&[&str]>,
    filter: &Document,
) -> mongodb::error::Result<Option<Watch>> {
    watch_except(db, session, model, fields, filter, &|_| false).await
}

/// [`watch`] without the dependents `skip` accepts (those the caller keeps itself).
pub(crate) async fn watch_except(
    db: &Database,
    session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    fields: Option<&[&str]>,
    filter: &Document,
    skip: &(dyn Fn(&dyn Dependent) -> bool + Sync),
) -> mongodb::error::Result<Option<Watch>> {
    let dependents = reading(model, fields, skip);
    if dependents.is_empty() {
        return Ok(None);
    }
    let projection = projection(&dependents);
    let coll: Collection<Document> = db.collection(model.collection());
    let find = coll.find(filter.clone()).projection(projection.clone());
    let before = collect_in!(find, session)?;
    Ok(Some(Watch {
        model,
        dependents,
        projection,
        before,
    }))
}

/// [`watch`] from documents the write itself returned as they were (a `findAndModify` with
/// the document before): no `find` before. `None` when no dependent reads `fields`.
pub(crate) fn watch_read(
    model: &'static ModelSchema,
    fields: Option<&[&str]>,
    before: &[Document],
) -> Option<Watch> {
    let dependents = reading(model, fields, &|_| false);
    if dependents.is_empty() {
        return None;
    }
    let projection = projection(&dependents);
    // As the `find` would have read them: the projected fields only.
    let before = before
        .iter()
        .map(|d| {
            d.iter()
                .filter(|(k, _)| projection.contains_key(k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .collect();
    Some(Watch {
        model,
        dependents,
        projection,
        before,
    })
}

fn projection(dependents: &[&'static dyn Dependent]) -> Document {
    let fields: BTreeSet<&str> = dependents.iter().flat_map(|d| d.reads()).collect();
    let mut p = doc! { "_id": 1 };
    for f in fields {
        p.insert(f, 1);
    }
    p
}

impl Watch {
    /// After the write: reads the same documents again (one `find`) and hands every dependent
    /// the changes of the fields it reads.
    pub(crate) async fn after(
        self,
        db: &Database,
        session: Option<&mut ClientSession>,
    ) -> mongodb::error::Result<()> {
        self.after_from(db, session, None, false).await
    }

    /// [`after`](Self::after) when the write says what the documents are now (a replacement):
    /// nothing is read again.
    pub(crate) async fn after_known(
        self,
        db: &Database,
        session: Option<&mut ClientSession>,
        now: Vec<Document>,
    ) -> mongodb::error::Result<()> {
        self.after_from(db, session, Some(now), false).await
    }

    /// [`after`](Self::after) for a repair's write: each dependent rebuilds from what the
    /// documents hold now ([`Dependent::rebuild`]) instead of moving by the difference, since
    /// the value before may have been written around the toolkit.
    pub(crate) async fn rebuilt(
        self,
        db: &Database,
        session: Option<&mut ClientSession>,
    ) -> mongodb::error::Result<()> {
        self.after_from(db, session, None, true).await
    }

    /// The documents now (`known`, or read again), then each dependent's changes.
    async fn after_from(
        self,
        db: &Database,
        mut session: Option<&mut ClientSession>,
        known: Option<Vec<Document>>,
        rebuild: bool,
    ) -> mongodb::error::Result<()> {
        if self.before.is_empty() {
            return Ok(());
        }
        let after = match known {
            // Projected as the `before` documents are (`watch_read`), so equal ones compare
            // equal.
            Some(docs) => docs
                .into_iter()
                .map(|d| {
                    d.into_iter()
                        .filter(|(k, _)| self.projection.contains_key(k.as_str()))
                        .collect::<Document>()
                })
                .collect(),
            None => {
                let ids: Vec<Bson> = self
                    .before
                    .iter()
                    .filter_map(|d| d.get("_id").cloned())
                    .collect();
                let coll: Collection<Document> = db.collection(self.model.collection());
                let find = coll
                    .find(doc! { "_id": { "$in": ids } })
                    .projection(self.projection.clone());
                collect_in!(find, session.as_deref_mut())?
            }
        };
        let mut now: HashMap<String, Document> = after
            .into_iter()
            .filter_map(|d| Some((crate::finding::id_key(d.get("_id")?), d)))
            .collect();
        let changes: Vec<Change> = self
            .before
            .into_iter()
            .filter_map(|before| {
                let id = before.get("_id")?.clone();
                let after = now.remove(&crate::finding::id_key(&id));
                Some(Change {
                    id,
                    before: Some(before),
                    after,
                })
            })
            .filter(|c| {
                !matches!((&c.before, &c.after), (Some(b), Some(a))
                    if b.len() == a.len()
                        && b.iter().all(|(k, v)| crate::finding::same_value(Some(v), a.get(k))))
            })
            .collect();
        if rebuild {
            dispatch_as(db, session, &self.dependents, &changes, true).await
        } else {
            dispatch(db, session, &self.dependents, &changes).await
        }
    }
}

/// `updateMany(filter, update)` on `model`'s collection (`updateOne` unless `many`), keeping
/// its dependents (a `find` before and after when one reads a field the update changes;
/// nothing more otherwise).
pub(crate) async fn update_many(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    filter: Document,
    update: impl Into<UpdateModifications>,
    array_filters: Vec<Document>,
    many: bool,
) -> mongodb::error::Result<UpdateResult> {
    crate::stored::upgrade::upgrade_matching(db, session.as_deref_mut(), model, &filter).await?;
    let update = update.into();
    let fields = updated_fields(&update);
    let fields: Option<Vec<&str>> = fields
        .as_ref()
        .map(|f| f.iter().map(String::as_str).collect());
    let watch = watch(
        db,
        session.as_deref_mut(),
        model,
        fields.as_deref(),
        &filter,
    )
    .await?;
    let coll: Collection<Document> = db.collection(model.collection());
    let result = if many {
        let mut op = coll.update_many(filter, update);
        if !array_filters.is_empty() {
            op = op.array_filters(array_filters);
        }
        in_session!(op, session.as_deref_mut())?
    } else {
        let mut op = coll.update_one(filter, update);
        if !array_filters.is_empty() {
            op = op.array_filters(array_filters);
        }
        in_session!(op, session.as_deref_mut())?
    };
    if let Some(watch) = watch {
        watch.after(db, session).await?;
    }
    Ok(result)
}

/// One `updateOne` a pattern's handle makes on `model`, changing `fields`: sent alone when the
/// handle is in no transaction and nothing derives from those fields (one round trip, as
/// without the map); otherwise in the caller's transaction `tx` (or one of its own), with a
/// `find` before and after for the dependents, which are brought up to date in it.
pub(crate) async fn update_one(
    db: &Database,
    tx: Option<&Transaction>,
    model: &'static ModelSchema,
    filter: Document,
    update: impl Into<UpdateModifications>,
    fields: &[&str],
) -> crate::error::Result<UpdateResult> {
    crate::stored::upgrade::upgrade_matching_in(db, tx, model, &filter).await?;
    let update = update.into();
    let coll: Collection<Document> = db.collection(model.collection());
    if tx.is_none() && !has_dependents(model, Some(fields)) {
        return Ok(coll.update_one(filter, update).await?);
    }
    transact!(db, tx, |s| async {
        let mut s: Option<&mut ClientSession> = s;
        let watch = watch(db, s.as_deref_mut(), model, Some(fields), &filter).await?;
        let op = coll.update_one(filter.clone(), update.clone());
        let result = in_session!(op, s.as_deref_mut())?;
        if let Some(watch) = watch {
            watch.after(db, s).await?;
        }
        Ok(result)
    })
}

/// An operator update of `model`'s documents matching `filter` (`updateOne` unless `many`), as
/// a handle sends it once its checks have passed: one command when no transaction is bound and
/// nothing derives from the fields it touches (`fields`; `None`: any), otherwise in the
/// caller's transaction `tx` (or one of its own) with the dependents kept. Documents of an
/// older schema version are upgraded first; an `$inc` or `$mul` past the 64-bit range is
/// [`Error::InvalidValue`](crate::error::Error::InvalidValue) naming the field. The handle
/// reports the server's counts as an [`Updated`](crate::model::writes::Updated).
pub(crate) async fn update_kept(
    db: &Database,
    tx: Option<&Transaction>,
    model: &'static ModelSchema,
    filter: Document,
    update: Document,
    fields: Option<&[&str]>,
    many: bool,
) -> crate::error::Result<mongodb::results::UpdateResult> {
    let result = if tx.is_none() && !has_dependents(model, fields) {
        crate::stored::upgrade::upgrade_matching_in(db, None, model, &filter).await?;
        let coll: Collection<Document> = db.collection(model.collection());
        if many {
            coll.update_many(filter.clone(), update.clone()).await
        } else {
            coll.update_one(filter.clone(), update.clone()).await
        }
        .map_err(crate::error::Error::from)
    } else {
        transact!(db, tx, |s| update_many(
            db,
            s,
            model,
            filter.clone(),
            update.clone(),
            Vec::new(),
            many,
        ))
    };
    let result = match result {
        Err(crate::error::Error::Driver { source, .. }) if crate::error::is_overflow(&source) => {
            return Err(own_overflow(db, model, &filter, &update, *source)
                .await
                .into());
        }
        other => other?,
    };
    tracing::debug!(
        matched = result.matched_count,
        modified = result.modified_count,
        "documents updated"
    );
    Ok(result)
}

/// `e` from an operator `update` of `model`'s documents matching `filter`: an `$inc` or `$mul`
/// past the 64-bit range as [`Error::InvalidValue`](crate::error::Error::InvalidValue) naming the
/// field (see [`update_overflow`](crate::error::update_overflow)); any other error as it is.
pub(crate) async fn own_overflow(
    db: &Database,
    model: &'static ModelSchema,
    filter: &Document,
    update: &Document,
    e: mongodb::error::Error,
) -> mongodb::error::Error {
    let coll: Collection<Document> = db.collection(model.collection());
    let what = format!("a `{}` document", model.name());
    crate::error::update_overflow(e, &coll, filter, update, &what).await
}

/// `deleteOne(filter)` (`deleteMany` when `many`) on the collection of `model`, its dependents
/// kept (a `find` first when it has some).
pub(crate) async fn delete(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    filter: Document,
    many: bool,
) -> mongodb::error::Result<u64> {
    let watch = watch(db, session.as_deref_mut(), model, None, &filter).await?;
    let coll: Collection<Document> = db.collection(model.collection());
    let deleted = if many {
        let op = coll.delete_many(filter);
        in_session!(op, session.as_deref_mut())?.deleted_count
    } else {
        let op = coll.delete_one(filter);
        in_session!(op, session.as_deref_mut())?.deleted_count
    };
    if let Some(watch) = watch {
        watch.after(db, session).await?;
    }
    Ok(deleted)
}

/// Whether inserting documents of `model` has dependents to keep (those about deletions left
/// out): the inserts that write without a transaction open one only then.
pub(crate) fn has_insert_dependents(model: &'static ModelSchema) -> bool {
    dependents_of(model).iter().any(|d| !d.deletions_only())
}

/// Whether a write of these fields of `model` (`None`: any) has dependents to keep: the callers
/// that write without a transaction open one only then.
pub(crate) fn has_dependents(model: &'static ModelSchema, fields: Option<&[&str]>) -> bool {
    !reading(model, fields, &|_| false).is_empty()
}

/// After inserting `documents` into `model`'s collection: every dependent gets them as new.
/// Sends nothing when the model has no dependents.
pub(crate) async fn inserted(
    db: &Database,
    session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    documents: &[Document],
) -> mongodb::error::Result<()> {
    appeared_or_gone(db, session, model, documents, true, &|_| false).await
}

/// After inserting (`appeared`) or deleting (not) `documents` of `model` (as they were): every
/// dependent but those `skip` accepts (the ones the writer keeps itself) gets them as new or
/// gone. Sends nothing when the model has no dependents.
pub(crate) async fn appeared_or_gone(
    db: &Database,
    session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    documents: &[Document],
    appeared: bool,
    skip: &(dyn Fn(&dyn Dependent) -> bool + Sync),
) -> mongodb::error::Result<()> {
    let dependents: Vec<&'static dyn Dependent> = dependents_of(model)
        .into_iter()
        .filter(|d| !skip(*d))
        // Inserts reach no dependent that keeps data about deletions only.
        .filter(|d| !appeared || !d.deletions_only())
        .collect();
    if dependents.is_empty() || documents.is_empty() {
        return Ok(());
    }
    let changes: Vec<Change> = documents
        .iter()
        .filter_map(|d| {
            let doc = Some(d.clone());
            Some(Change {
                id: d.get("_id")?.clone(),
                before: if appeared { None } else { doc.clone() },
                after: if appeared { doc } else { None },
            })
        })
        .collect();
    dispatch(db, session, &dependents, &changes).await
}

/// Hands each dependent the changes of the fields it reads.
pub(crate) async fn dispatch(
    db: &Database,
    session: Option<&mut ClientSession>,
    dependents: &[&'static dyn Dependent],
    changes: &[Change],
) -> mongodb::error::Result<()> {
    dispatch_as(db, session, dependents, changes, false).await
}

/// Rebuilds each dependent's data of `changes` from the sources as they are now
/// ([`Dependent::rebuild`]), outside any transaction: the maintainer's step, for changes made
/// around the toolkit (their `before` may be missing or a value the data never saw).
pub(crate) async fn rebuild(
    db: &Database,
    dependents: &[&'static dyn Dependent],
    changes: &[Change],
) -> mongodb::error::Result<()> {
    dispatch_as(db, None, dependents, changes, true).await
}

/// [`rebuild`] in a transaction of its own: the sources and the data derived from them are
/// read from one snapshot, so a toolkit write committed in between (which keeps both in its
/// own transaction) is seen whole or not at all, and the rebuild finds nothing to write; one
/// that conflicts is retried. Without transactions, as [`rebuild`]. The transactions run in
/// `session` (a maintainer's, whose id it records so that a successor can end a transaction
/// it left open).
pub(crate) async fn rebuild_consistent(
    db: &Database,
    session: &mut ClientSession,
    dependents: &[&'static dyn Dependent],
    changes: &[Change],
) -> crate::error::Result<()> {
    transact!(@session session, |s| async {
        dispatch_as(db, s, dependents, changes, true).await
    })
}

/// [`dispatch`], with [`Dependent::rebuild`] instead of `apply` when `rebuild`.
async fn dispatch_as(
    db: &Database,
    mut session: Option<&mut ClientSession>,
    dependents: &[&'static dyn Dependent],
    changes: &[Change],
    rebuild: bool,
) -> mongodb::error::Result<()> {
    for dependent in dependents {
        let reads = dependent.reads();
        let mine: Vec<Change> = changes
            .iter()
            .filter(|c| reads.iter().any(|r| c.changed(r)))
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        tracing::debug!(
            dependent = %dependent.describe(),
            documents = mine.len(),
            in_transaction = session.is_some(),
            "derived data brought up to date"
        );
        // A dependent's refusal (a count's target missing) comes after the write it derives
        // from: a caller's transaction must not keep that write alone.
        let changed = Changed {
            db,
            session: session.as_deref_mut(),
            changes: &mine,
        };
        let write = if rebuild {
            dependent.rebuild(changed)
        } else {
            dependent.apply(changed)
        };
        write.await.map_err(crate::error::after_write)?;
    }
    Ok(())
}

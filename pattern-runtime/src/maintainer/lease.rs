//! The maintainer's document in `pattern_maintainers`: its lease, its resume token, what it
//! applied and the repairs it ran. Every write to it is conditional on holding the lease.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bson::{doc, Bson, DateTime, Document, Timestamp};
use futures_util::TryStreamExt;
use mongodb::change_stream::event::ResumeToken;
use mongodb::options::ReturnDocument;
use mongodb::{Collection, Database};

use super::{Skipped, Stored, MAINTAINERS};
use crate::error::{server_code, Error, Result, DUPLICATE_KEY};

/// How many repairs a maintainer's document keeps.
const REPAIRS_KEPT: i32 = 20;

/// This process's maintainer: its pid, a counter and the time it started, unique enough for
/// replicas of a service on several machines (each has its own start time).
pub(super) fn holder_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        this_process(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// This process, as the holder ids of its maintainers begin: its id and when it first named
/// one (two containers may both run as process 1).
fn this_process() -> &'static str {
    static PROCESS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PROCESS.get_or_init(|| {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{started:x}", std::process::id())
    })
}

/// Whether `holder` is a maintainer of this process.
fn ours(holder: &str) -> bool {
    holder
        .strip_prefix(this_process())
        .is_some_and(|rest| rest.starts_with('-'))
}

fn coll(db: &Database) -> Collection<Document> {
    db.collection(MAINTAINERS)
}

fn until(lease: Duration) -> DateTime {
    DateTime::from_millis(
        DateTime::now()
            .timestamp_millis()
            .saturating_add(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)),
    )
}

/// Where a maintainer's stream goes on from: its stored token, or with none (it never stored
/// one, or a repair just cleared it) the server time it was first started at, or repaired at.
pub(super) struct Resume {
    pub(super) token: Option<ResumeToken>,
    pub(super) from: Option<Timestamp>,
    /// A full repair to run before following: the first start's, or one a crash interrupted.
    pub(super) repairing: Option<String>,
    /// Where that repair was when interrupted, if it had done a page.
    pub(super) repair_at: Option<RepairAt>,
}

/// Where a full repair is: every source collection named before `coll` is done; of `coll`, the
/// documents up to `after` (in `_id` order), and its held data too when `held`.
#[derive(Debug, Clone)]
pub(super) struct RepairAt {
    pub(super) coll: String,
    pub(super) after: Option<Bson>,
    pub(super) held: bool,
}

impl RepairAt {
    fn to_document(&self) -> Document {
        doc! {
            "coll": &self.coll,
            "after": self.after.clone().unwrap_or(Bson::Null),
            "has_after": self.after.is_some(),
            "held": self.held,
        }
    }

    fn from_document(d: &Document) -> Option<RepairAt> {
        Some(RepairAt {
            coll: d.get_str("coll").ok()?.to_owned(),
            after: match d.get_bool("has_after") {
                Ok(true) => d.get("after").cloned(),
                _ => None,
            },
            held: d.get_bool("held").unwrap_or(false),
        })
    }
}

/// Why the first maintainer of a name repairs everything before following the stream.
pub(super) const FIRST_START: &str =
    "first start: what was written before it had no maintainer to follow it";

/// Takes the lease of `name` for `holder` when it is free (no holder, run out, or its own):
/// where to resume when taken, `None` when another holds it. The first maintainer of the name
/// records `started_at` as where a stream with no token starts: a crash before the first
/// token loses nothing.
pub(super) async fn acquire(
    db: &Database,
    name: &str,
    holder: &str,
    lease: Duration,
    started_at: Option<Timestamp>,
    session: &Document,
) -> Result<Option<Resume>> {
    let now = DateTime::now();
    let filter = doc! {
        "_id": name,
        "$or": [
            { "holder": Bson::Null },
            { "holder": holder },
            { "lease_until": { "$lt": now } },
        ],
    };
    let update = doc! {
        "$set": {
            "holder": holder,
            "lease_until": until(lease),
            "taken_at": now,
            "session": session.clone(),
        },
        "$setOnInsert": {
            "applied": 0_i64,
            "repairs": [],
            "from": started_at.map_or(Bson::Null, Bson::Timestamp),
            "repairing": FIRST_START,
        },
    };
    // The document before: what the update leaves as it was (the token, the repair), and the
    // session of the holder before, if another.
    let taken = coll(db)
        .find_one_and_update(filter, update)
        .upsert(true)
        .return_document(ReturnDocument::Before)
        .await;
    let taken = match taken {
        Ok(Some(d)) => d,
        // Inserted: a first start.
        Ok(None) => {
            tracing::info!(name, holder, "pattern_runtime::maintainer.lease taken");
            return Ok(Some(Resume {
                token: None,
                from: started_at,
                repairing: Some(FIRST_START.to_owned()),
                repair_at: None,
            }));
        }
        // Another holds it: the filter missed the document and the upsert met its `_id`.
        Err(e) if server_code(&e) == Some(DUPLICATE_KEY) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let token = match taken.get("token") {
        None | Some(Bson::Null) => None,
        Some(t) => Some(
            bson::deserialize_from_bson::<ResumeToken>(t.clone()).map_err(|e| {
                Error::Malformed {
                    collection: MAINTAINERS.to_owned(),
                    reason: format!("maintainer `{name}`: its stored token does not read: {e}"),
                }
            })?,
        ),
    };
    let from = match taken.get("from") {
        Some(Bson::Timestamp(t)) => Some(*t),
        _ => None,
    };
    let repairing = match taken.get("repairing") {
        Some(Bson::String(reason)) => Some(reason.clone()),
        _ => None,
    };
    let repair_at = taken
        .get_document("repair_at")
        .ok()
        .and_then(RepairAt::from_document);
    // A holder of another process that died: its session may still hold a transaction open.
    // Not one of this process: its session went back to the client's pool when it ended (the
    // driver aborting its transaction), and may be in use by another operation now.
    if let Ok(before) = taken.get_document("session")
        && before != session
        && !before.is_empty()
        && !taken.get_str("holder").is_ok_and(ours)
    {
        end_session(db, name, before).await;
    }
    tracing::info!(name, holder, "pattern_runtime::maintainer.lease taken");
    Ok(Some(Resume {
        token,
        from,
        repairing,
        repair_at,
    }))
}

/// Ends the session of the holder before (`killSessions`): a transaction it left open, dying
/// in the middle of a rebuild, is aborted now rather than at the server's transaction time
/// limit, and no longer holds the documents it wrote. A server that refuses is a `WARN` event:
/// conflicting rebuilds are then retried until that limit.
async fn end_session(db: &Database, name: &str, session: &Document) {
    let killed = db
        .client()
        .database("admin")
        .run_command(doc! { "killSessions": [session.clone()] })
        .await;
    match killed {
        Ok(_) => tracing::info!(
            name,
            "pattern_runtime::maintainer: the previous holder's session ended"
        ),
        Err(e) => {
            tracing::warn!(name, error = %e, "pattern_runtime::maintainer: the previous holder's session could not be ended")
        }
    }
}

/// Stores where the stream is (`token`) and renews the lease, with `applied` more events:
/// `false` when `holder` no longer holds it (another took it over: stop working).
pub(super) async fn checkpoint(
    db: &Database,
    name: &str,
    holder: &str,
    lease: Duration,
    batch: &Batch<'_>,
) -> Result<bool> {
    let mut set = doc! { "lease_until": until(lease), "stored_at": DateTime::now() };
    if let Some(lag) = batch.lag {
        set.insert("lag_ms", i64::try_from(lag.as_millis()).unwrap_or(i64::MAX));
    }
    if batch.applied > 0 {
        set.insert(
            "behind",
            batch.behind.map_or(Bson::Null, |n| {
                Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX))
            }),
        );
    }
    if let Some(token) = batch.token {
        set.insert("token", bson::serialize_to_bson(token)?);
    }
    let result = coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! {
                "$set": set,
                "$inc": { "applied": i64::try_from(batch.applied).unwrap_or(i64::MAX) },
            },
        )
        .await?;
    Ok(result.matched_count == 1)
}

/// What a checkpoint stores: the stream's token after a batch, and what the batch did.
pub(super) struct Batch<'a> {
    pub(super) token: Option<&'a ResumeToken>,
    /// Events applied (0: a renewal of the lease alone).
    pub(super) applied: u64,
    pub(super) lag: Option<Duration>,
    /// Events written after the batch's last, when known.
    pub(super) behind: Option<u64>,
}

/// Forgets the stored token (after a lost history: the fresh stream's goes in at the next
/// checkpoint), records that a stream with no token starts at `from` (the repair's start), and
/// the repair with `reason`, as under way until [`repaired`]: a maintainer taking over from
/// one that died in the middle runs it again.
pub(super) async fn record_repair(
    db: &Database,
    name: &str,
    holder: &str,
    reason: &str,
    from: Option<Timestamp>,
) -> Result<bool> {
    let result = coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! {
                "$set": {
                    "token": Bson::Null,
                    "from": from.map_or(Bson::Null, Bson::Timestamp),
                    "repairing": reason,
                    "repair_at": Bson::Null,
                },
                "$push": { "repairs": {
                    "$each": [{ "at": DateTime::now(), "reason": reason }],
                    "$slice": -REPAIRS_KEPT,
                } },
            },
        )
        .await?;
    Ok(result.matched_count == 1)
}

/// Records the repair under way as done: `false` when `holder` no longer holds the lease.
pub(super) async fn repaired(db: &Database, name: &str, holder: &str) -> Result<bool> {
    let result = coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! { "$set": { "repairing": Bson::Null, "repair_at": Bson::Null } },
        )
        .await?;
    Ok(result.matched_count == 1)
}

/// How many skipped changes a maintainer's document keeps.
const SKIPPED_KEPT: i32 = 20;

/// Records a change whose dependents could not be rebuilt (`error`): kept in the maintainer's
/// document (the last 20), counted in `skipped_total`.
pub(super) async fn skipped(
    db: &Database,
    name: &str,
    holder: &str,
    model: &str,
    collection: &str,
    id: &Bson,
    error: &Error,
) -> Result<()> {
    coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! {
                "$push": { "skipped": {
                    "$each": [{
                        "at": DateTime::now(),
                        "model": model,
                        "collection": collection,
                        "id": id.clone(),
                        "error": error.to_string(),
                    }],
                    "$slice": -SKIPPED_KEPT,
                } },
                "$inc": { "skipped_total": 1_i64 },
            },
        )
        .await?;
    Ok(())
}

/// Stores where the repair under way is and renews the lease: `false` when `holder` no longer
/// holds it.
pub(super) async fn repair_step(
    db: &Database,
    name: &str,
    holder: &str,
    lease: Duration,
    at: &RepairAt,
) -> Result<bool> {
    let result = coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! { "$set": { "lease_until": until(lease), "repair_at": at.to_document() } },
        )
        .await?;
    Ok(result.matched_count == 1)
}

/// Gives the lease up: another maintainer of the name may take it at once.
pub(super) async fn release(db: &Database, name: &str, holder: &str) -> Result<()> {
    coll(db)
        .update_one(
            doc! { "_id": name, "holder": holder },
            doc! { "$set": { "holder": Bson::Null, "lease_until": DateTime::now() } },
        )
        .await?;
    tracing::info!(name, holder, "pattern_runtime::maintainer.lease released");
    Ok(())
}

/// Every maintainer's document of `db`.
pub(super) async fn read_all(db: &Database) -> Result<Vec<Stored>> {
    let docs: Vec<Document> = coll(db)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await?
        .try_collect()
        .await?;
    Ok(docs.iter().map(read_one).collect())
}

fn read_one(d: &Document) -> Stored {
    let repairs = d
        .get_array("repairs")
        .map(|a| {
            a.iter()
                .filter_map(|r| {
                    let r = r.as_document()?;
                    Some((
                        r.get_datetime("at").ok().copied()?,
                        r.get_str("reason").unwrap_or_default().to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Stored {
        name: match d.get("_id") {
            Some(Bson::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        holder: d.get_str("holder").ok().map(str::to_owned),
        lease_until: d.get_datetime("lease_until").ok().copied(),
        has_token: !matches!(d.get("token"), None | Some(Bson::Null)),
        applied: d.get_i64("applied").unwrap_or(0),
        behind: d.get_i64("behind").ok().and_then(|n| u64::try_from(n).ok()),
        lag: d
            .get_i64("lag_ms")
            .ok()
            .and_then(|ms| u64::try_from(ms).ok())
            .map(Duration::from_millis),
        repairs,
        repairing: d.get_str("repairing").ok().map(str::to_owned),
        skipped: d
            .get_array("skipped")
            .map(|a| {
                a.iter()
                    .filter_map(|r| {
                        let r = r.as_document()?;
                        Some(Skipped {
                            at: r.get_datetime("at").ok().copied()?,
                            model: r.get_str("model").unwrap_or_default().to_owned(),
                            collection: r.get_str("collection").unwrap_or_default().to_owned(),
                            id: r.get("id").cloned().unwrap_or(Bson::Null),
                            error: r.get_str("error").unwrap_or_default().to_owned(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
        skipped_total: d.get_i64("skipped_total").unwrap_or(0),
    }
}

//! Derived data kept right whoever writes: one change stream per database, its progress stored.
//!
//! Every copy, count and sum the toolkit keeps (the [map of derived data](crate::derived)) is
//! kept by the toolkit's own writes. A [`Maintainer`] keeps it after everyone else's too: a
//! `raw()` write, another service, a shell fix. It watches the database (one change stream for
//! every source collection of the map, and the nodes and holders of every tree) and, for each
//! change, brings the data that derives from the changed document back in line, rebuilding it
//! from the sources as they are now (the same code a repair runs), so a replayed event changes
//! nothing. What it keeps: extended-reference copies, computed values, subsets and their
//! summaries, a tree's ancestors and its holders' paths and copies (the whole tree is read
//! after a node's parent or a holder's node changed), two-way relations, an outlier's count and
//! flag (after its items changed around the toolkit, in the main document or in an overflow
//! document; a rebuild that meets a toolkit push between its count and its items, which it
//! writes in that order, can set the count one push behind until that push's own event
//! comes, a moment later), and the
//! counter shards and overflow documents of deleted documents; a source still in an older
//! schema version is read as its upgrade.
//!
//! ```no_run
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! use pattern_runtime::maintainer::Maintainer;
//!
//! let running = Maintainer::new(&db).name("orders-service").start().await?;
//! // ... the service runs; at shutdown, finish the current batch and hand the lease on:
//! let report = running.stop().await?;
//! println!("{} events applied", report.applied);
//! # Ok(()) }
//! ```
//!
//! What it promises:
//! - **Durable progress.** After each batch it applies, the stream's resume token is stored in
//!   the collection `pattern_maintainers`, under the maintainer's name; a restart resumes there.
//!   Before its first token, the server time of the first start is stored: a maintainer killed
//!   before its first batch loses nothing either. An event applied twice (a crash between the
//!   batch and the token) is harmless: dependents are rebuilt from the sources.
//! - **The first start rebuilds everything.** What was written before any maintainer of the
//!   name ran had no one to follow it: the first start runs a full repair (below), recorded
//!   with a reason that begins `first start`. Later starts resume at the token.
//! - **Lost history is repaired, never skipped.** When the stored token is older than the
//!   server keeps (`ChangeStreamHistoryLost`), or the stream is invalidated (a source collection
//!   dropped or renamed), it opens a fresh stream, then rebuilds the dependents of every source
//!   document, and the data still kept for sources that are gone (a count of an owner whose
//!   last order was deleted meanwhile, counter shards and overflow documents of deleted
//!   documents), then goes on from the fresh stream: no change is missed. The repair is
//!   recorded in the maintainer's document (`repairs`; `repairing` and where it is while it
//!   runs, a source collection at a time in `_id` order: one interrupted by a crash or a stop
//!   goes on from there with the next holder) and as a `WARN` event, with its progress through
//!   [`Progress`] ([`MaintainerRun::on_progress`]).
//! - **One at a time.** Maintainers of the same name (replicas of one service) share a lease
//!   in that document: one works, the others wait, and one of them takes over within the lease
//!   ([`MaintainerRun::lease`], 30 s by default) after the holder dies. The holder's session
//!   is stored with the lease, and one taking over from another process ends it
//!   (`killSessions`): a transaction the dead one left open is aborted then, instead of
//!   holding its documents until the server's transaction time limit (60 s on MongoDB). (In
//!   one process, a dropped maintainer's transaction is aborted by the driver, and its session
//!   goes back to the client's pool for other operations: it is not ended.)
//! - **Before images.** It turns on `changeStreamPreAndPostImages` for each source collection,
//!   so that an update or delete says what the document held before (a sum moved from one
//!   owner to another recomputes both). A change without its before image (written before the
//!   option was on) is rebuilt from the document as it is now.
//!
//! - **A bad document does not stop it.** A change whose dependents cannot be rebuilt (a sum
//!   of a NaN, a source that does not read as its model, a result the validator refuses) is
//!   skipped and recorded ([`Skipped`], in [`Stored::skipped`] and [`Status::skipped`], an
//!   `ERROR` event); the other changes go on. What derives from it stays as it was, for the
//!   pattern's `check()` to report. An error of the server or the connection ends the
//!   maintainer: [`Status::error`] says it, [`Running::stop`] returns it, and the next start
//!   resumes at the stored token.
//!
//! The toolkit's own writes are seen too: an update of fields no dependent reads is skipped
//! from the event alone; any other is rebuilt, in one transaction per batch so that it reads
//! the toolkit's write whole, finds the data right and writes nothing.
//!
//! # Cost and lag
//!
//! Measured on the embedded server, on 2 cores (the project's maintainer tests print them):
//! - **Lag.** Eight writers inserting around the toolkit at full speed (about 900 writes a
//!   second): a write's dependents were right 0.12 to 0.24 s after it at the median, 0.41 to
//!   0.46 s at the 99th percentile (two runs). The lag the maintainer reports
//!   ([`Status::lag`], the newest applied event's age) was higher, 0.57 to 0.67 s at the median:
//!   a rebuild reads the sources as they are, so it also makes right the writes whose events
//!   come later. [`Status::behind`] says how many events were left after the last batch: 0
//!   when the stream had no more; while it catches up, a count of the server's oplog, one
//!   `aggregate` of `local.oplog.rs` at most every 5 s, in the background (the embedded
//!   server reads its whole oplog for it: under a second for the tests' databases), less
//!   the events applied since; `None` where the server does not let the oplog be read.
//! - **Cost.** With a maintainer following 200 toolkit writes made one after another, it sent
//!   1.06 commands per write: one `getMore` (the stream hands over each event as it comes),
//!   and, per batch, one `$group` and one `$set` per target named, its commit and its token.
//!   None of them is a round trip of the write itself. Idle, it sends about 4 commands a
//!   second.

mod lease;
mod stream;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bson::DateTime;
use mongodb::Database;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::schema::{group_members, registered_models, ModelSchema};

/// The collection holding each maintainer's resume token, lease and repairs.
pub const MAINTAINERS: &str = "pattern_maintainers";

/// The lease a maintainer holds unless told otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A maintainer to start: [`Maintainer::new`], then [`start`](MaintainerRun::start).
#[must_use = "a maintainer does nothing until started"]
#[derive(Clone)]
pub struct MaintainerRun {
    db: Database,
    name: String,
    group: Option<String>,
    models: Option<Vec<&'static ModelSchema>>,
    lease: Duration,
    batch: usize,
    progress: Option<ProgressFn>,
}

/// A full repair's progress callback.
pub(super) type ProgressFn = Arc<Mutex<dyn FnMut(&Progress) + Send>>;

impl fmt::Debug for MaintainerRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaintainerRun")
            .field("database", &self.db.name())
            .field("name", &self.name)
            .field("group", &self.group)
            .field(
                "models",
                &self
                    .models
                    .as_ref()
                    .map(|m| m.iter().map(|m| m.name()).collect::<Vec<_>>()),
            )
            .field("lease", &self.lease)
            .field("batch", &self.batch)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The maintainer of a database's derived data: see the [module docs](self).
pub struct Maintainer;

impl Maintainer {
    /// A maintainer of `db`, named `"default"`, for every registered model's dependents, with
    /// a lease of [`DEFAULT_LEASE`].
    #[allow(clippy::new_ret_no_self)]
    pub fn new(db: &Database) -> MaintainerRun {
        MaintainerRun {
            db: db.clone(),
            name: "default".to_owned(),
            group: None,
            models: None,
            lease: DEFAULT_LEASE,
            batch: 100,
            progress: None,
        }
    }
}

impl MaintainerRun {
    /// The name its progress and lease are stored under: maintainers of one name share one
    /// lease and one token.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Only the dependents of the models of one `#[model(group = "...")]` (as the sources);
    /// the last of `group` and `models` wins.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.group = Some(group.into());
        self.models = None;
        self
    }

    /// Only the dependents of these source models; the last of `group` and `models` wins.
    pub fn models(mut self, models: &[&'static ModelSchema]) -> Self {
        self.models = Some(models.to_vec());
        self.group = None;
        self
    }

    /// How long the lease lasts without a renewal: another maintainer of the same name takes
    /// over within this time after the holder dies. It is renewed after every batch and at
    /// least every third of it while the stream is idle. At least 300 ms (a shorter one is
    /// taken as 300 ms).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// The most events applied (and acknowledged with one token) at a time: 100 by default.
    pub fn batch(mut self, events: usize) -> Self {
        self.batch = events.max(1);
        self
    }

    /// Called after each page of a full repair (the first start's, or one after a lost
    /// history) with where it is: job `"maintainer.repair"`, in source documents, the item
    /// being the source model. The same [`Progress`] every long job reports.
    pub fn on_progress(mut self, progress: impl FnMut(&Progress) + Send + 'static) -> Self {
        self.progress = Some(Arc::new(Mutex::new(progress)));
        self
    }

    /// Starts it in the background (a tokio task): it takes the lease when it is free, opens
    /// the stream where the stored token says, and applies changes until stopped.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`]; the driver's errors preparing the sources (their before
    /// images); [`Error::InvalidValue`] for an empty name, or models no document derives data
    /// from (nothing to follow).
    pub async fn start(self) -> Result<Running> {
        if self.name.is_empty() {
            return Err(Error::InvalidValue {
                field: "name".to_owned(),
                reason: "a maintainer's name is its document's `_id`: it cannot be empty"
                    .to_owned(),
            });
        }
        let models = match (&self.group, &self.models) {
            (Some(group), _) => group_members(group)?,
            (None, Some(models)) => models.clone(),
            (None, None) => registered_models(),
        };
        let sources = stream::Sources::of(&models);
        if sources.len() == 0 {
            return Err(Error::InvalidValue {
                field: "models".to_owned(),
                reason: "no document derives data from these models: a maintainer of them \
                         would have nothing to follow"
                    .to_owned(),
            });
        }
        sources.prepare(&self.db).await?;
        // Where a first stream starts (no token stored yet): every write after `start`
        // returns is seen, whenever the background task opens the stream.
        let started_at = stream::server_time(&self.db).await?;
        tracing::info!(
            name = %self.name,
            database = self.db.name(),
            sources = sources.len(),
            "pattern_runtime::maintainer.start"
        );
        let status = Arc::new(Mutex::new(Status::default()));
        let (stop_tx, stop_rx) = watch::channel(false);
        // The session of every rebuild's transaction, recorded with the lease.
        let session = self.db.client().start_session().await?;
        let worker = stream::Worker {
            session: tokio::sync::Mutex::new(session),
            db: self.db.clone(),
            name: self.name.clone(),
            holder: lease::holder_id(),
            lease: self.lease,
            batch: self.batch,
            sources,
            started_at,
            progress: self.progress,
            status: status.clone(),
            stop: stop_rx,
        };
        let task = tokio::spawn(worker.run());
        Ok(Running {
            name: self.name,
            status,
            stop: stop_tx,
            task: Some(task),
        })
    }
}

/// A started maintainer. [`stop`](Running::stop) ends it gracefully; dropping it ends it at
/// once, as a crash would (the lease then runs out before another takes over).
pub struct Running {
    name: String,
    status: Arc<Mutex<Status>>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<Result<()>>>,
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("name", &self.name)
            .field("status", &self.status())
            .finish()
    }
}

impl Running {
    /// Where it is: whether it holds the lease, what it applied, its lag.
    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Finishes the current batch, stores its token, gives the lease up (another maintainer
    /// of the same name may take it at once) and ends.
    ///
    /// # Errors
    /// The error that ended it before the stop, if one did.
    pub async fn stop(mut self) -> Result<Status> {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            match task.await {
                Ok(result) => result?,
                Err(e) => {
                    return Err(Error::Malformed {
                        collection: MAINTAINERS.to_owned(),
                        reason: format!("the maintainer's task ended abnormally: {e}"),
                    })
                }
            }
        }
        Ok(self.status())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A maintainer's state: [`Running::status`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// Whether it holds the lease (it works) or waits for it.
    pub holding: bool,
    /// Change events applied since it started.
    pub applied: u64,
    /// Batches applied since it started (each acknowledged with one stored token).
    pub batches: u64,
    /// Full repairs it ran to their end (the first start's, after a lost history).
    pub repairs: u64,
    /// How far behind the newest event it applied was when applied: the time from the write
    /// (the server's wall time of the event) to its dependents being rebuilt.
    pub lag: Option<Duration>,
    /// How many events of its sources were left after its last batch: 0 when the stream had
    /// nothing more; while it catches up (its batches come full), the last count of the
    /// server's oplog (taken in the background, at most one every 5 s) less the events applied
    /// since, so events written after that count show at the next. `None` before its first
    /// batch, before the first count comes back, or when the server does not let the oplog be
    /// read (`local.oplog.rs` needs the `clusterMonitor` role or more).
    pub behind: Option<u64>,
    /// When it last stored its token.
    pub stored_at: Option<DateTime>,
    /// Changes whose dependents it could not rebuild, skipped and recorded
    /// ([`Stored::skipped`]) since it started.
    pub skipped: u64,
    /// The error that ended it, if one did (then it works no more: [`Running::stop`] returns
    /// the error).
    pub error: Option<String>,
}

/// A maintainer's stored document, as [`stored`] reads it: where it stopped and what it did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Stored {
    /// Its name.
    pub name: String,
    /// The maintainer holding the lease (a process's id), if any.
    pub holder: Option<String>,
    /// Until when the lease holds without a renewal.
    pub lease_until: Option<DateTime>,
    /// Whether a resume token is stored.
    pub has_token: bool,
    /// Events applied, over every run.
    pub applied: i64,
    /// The lag of its last batch: from the newest event's write to its dependents rebuilt.
    pub lag: Option<Duration>,
    /// The events behind after its last batch ([`Status::behind`]).
    pub behind: Option<u64>,
    /// The full repairs it started, each with when and why (the last 20).
    pub repairs: Vec<(DateTime, String)>,
    /// The full repair under way, or interrupted (the next holder goes on with it), if any.
    pub repairing: Option<String>,
    /// The last 20 changes whose dependents could not be rebuilt, skipped.
    pub skipped: Vec<Skipped>,
    /// How many changes were skipped, over every run.
    pub skipped_total: i64,
}

/// A change whose dependents a maintainer could not rebuild, and skipped: a value the derived
/// data cannot hold (a sum past the 64-bit range, a NaN, a string where a number is summed), a
/// source document that does not read as its model, a validator's refusal of the result. The
/// data that derives from it stays as it was: the pattern's `check()` reports it, its
/// `repair()` mends it once the source is fixed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skipped {
    /// When.
    pub at: DateTime,
    /// The source model.
    pub model: String,
    /// The changed document's collection: the model's, or one of documents its pattern keeps
    /// (an outlier's overflow documents).
    pub collection: String,
    /// The changed document's `_id`.
    pub id: bson::Bson,
    /// Why, as the error said it.
    pub error: String,
}

impl Stored {
    /// Whether a maintainer holds the lease now.
    pub fn running(&self) -> bool {
        self.holder.is_some()
            && self
                .lease_until
                .is_some_and(|until| until > DateTime::now())
    }
}

/// Every maintainer's stored document in `db`, by name: whether one runs, where each stopped.
///
/// # Errors
/// The driver's.
pub async fn stored(db: &Database) -> Result<Vec<Stored>> {
    lease::read_all(db).await
}

//! The maintainer's work: hold the lease, follow the database's change stream, rebuild the
//! dependents of each changed source document, store the token; repair all on lost history.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{doc, DateTime, Document};
use futures_util::TryStreamExt;
use mongodb::change_stream::event::{ChangeStreamEvent, OperationType, ResumeToken};
use mongodb::change_stream::ChangeStream;
use mongodb::options::{FullDocumentBeforeChangeType, FullDocumentType};
use mongodb::{Collection, Database};
use tokio::sync::watch;

use super::{lease, Status};
use crate::error::{server_code, Result};
use crate::progress::Progress;
use crate::schema::{Change, Dependent, ModelSchema};

/// The server's code for a resume token older than the oplog keeps.
const HISTORY_LOST: i32 = 286;
/// The server's code for a change stream that cannot go on (a fatal error of its own).
const STREAM_FATAL: i32 = 280;
/// A stored token the server cannot read: where the stream was is unknown, as after a lost
/// history.
const INVALID_TOKEN: i32 = 40647;
/// A command argument the server cannot parse: on opening at a stored token, the token.
const FAILED_TO_PARSE: i32 = 9;
/// A collection that does not exist (`collMod` of a source not created yet).
const NAMESPACE_NOT_FOUND: i32 = 26;
/// An empty answer to a `getMore` this fast did not wait for events.
const QUICK_EMPTY: Duration = Duration::from_millis(20);
/// The pause after such an answer.
const IDLE_PAUSE: Duration = Duration::from_millis(50);
/// How many source documents a full repair reads and rebuilds at a time.
const REPAIR_BATCH: usize = 500;

/// The source collections the maintainer watches, each with its model and dependents.
#[derive(Debug, Clone, Default)]
pub(super) struct Sources {
    by_collection: HashMap<String, Source>,
}

/// One watched collection.
#[derive(Debug, Clone)]
struct Source {
    /// The model the dependents derive from.
    model: &'static ModelSchema,
    /// Whether the collection holds the model's documents; if not, documents a pattern of the
    /// model keeps (an outlier's overflow documents), read as they are.
    own: bool,
    dependents: Vec<&'static dyn Dependent>,
}

impl Source {
    /// A document of this collection as the dependents read it: a model's in its current shape.
    fn current(&self, d: Document) -> Document {
        if self.own {
            crate::model::read::current_document(self.model, d.clone()).unwrap_or(d)
        } else {
            d
        }
    }
}

impl Sources {
    /// The models among `models` that other documents derive data from.
    pub(super) fn of(models: &[&'static ModelSchema]) -> Self {
        let mut by_collection: HashMap<String, Source> = HashMap::new();
        for model in models {
            let (own, kept): (Vec<_>, Vec<_>) = crate::derived::maintained_of(model)
                .into_iter()
                .partition(|d| d.collection() == model.collection());
            if !own.is_empty() {
                let source = Source {
                    model,
                    own: true,
                    dependents: own,
                };
                by_collection.insert(model.collection().to_owned(), source);
            }
            for dependent in kept {
                by_collection
                    .entry(dependent.collection().to_owned())
                    .or_insert_with(|| Source {
                        model,
                        own: false,
                        dependents: Vec::new(),
                    })
                    .dependents
                    .push(dependent);
            }
        }
        Sources { by_collection }
    }

    pub(super) fn len(&self) -> usize {
        self.by_collection.len()
    }

    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.by_collection.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Turns on each source collection's before images (creating it when missing), so that an
    /// update or delete says what the document held. A server that refuses the option is a
    /// `WARN` event: changes are then rebuilt from the documents as they are.
    pub(super) async fn prepare(&self, db: &Database) -> Result<()> {
        for name in self.names() {
            let images = doc! { "enabled": true };
            let modified = db
                .run_command(
                    doc! { "collMod": name, "changeStreamPreAndPostImages": images.clone() },
                )
                .await;
            let result = match modified {
                Err(e) if server_code(&e) == Some(NAMESPACE_NOT_FOUND) => db
                    .run_command(doc! { "create": name, "changeStreamPreAndPostImages": images })
                    .await
                    .map(drop),
                other => other.map(drop),
            };
            if let Err(e) = result {
                tracing::warn!(
                    collection = name,
                    error = %e,
                    "before images refused: changes are rebuilt from the documents as they are"
                );
            }
        }
        Ok(())
    }
}

/// The least time between two counts of the events behind.
const COUNT_EVERY: Duration = Duration::from_secs(5);

/// The events behind, after each batch: 0 when the stream ran dry; while it catches up (the
/// batches come full), a count of the server's oplog since the last event applied, taken in
/// the background (the embedded server reads its whole oplog for it, MongoDB the entries since),
/// at most one at a time and one per [`COUNT_EVERY`]; between two counts, the last one less
/// the events applied since it was taken.
#[derive(Default)]
struct Behind {
    /// The count under way, with the events applied when it was taken.
    counting: Option<(tokio::task::JoinHandle<Option<u64>>, u64)>,
    started: Option<Instant>,
    /// The last count, with the events applied when it was taken.
    known: Option<(u64, u64)>,
    /// Events applied in this stint.
    applied: u64,
}

impl Behind {
    fn after(
        &mut self,
        worker: &Worker,
        last: Option<&ChangeStreamEvent<Document>>,
        full: bool,
    ) -> Option<u64> {
        let Some(last) = last else {
            return self.estimate();
        };
        if !full {
            self.abort();
            self.known = Some((0, self.applied));
            return Some(0);
        }
        if let Some((task, at)) = &mut self.counting
            && task.is_finished()
        {
            let at = *at;
            let counted = futures_util::FutureExt::now_or_never(task)
                .and_then(Result::ok)
                .flatten();
            self.counting = None;
            self.known = counted.map(|n| (n, at));
        }
        let due = self.started.is_none_or(|t| t.elapsed() >= COUNT_EVERY);
        if self.counting.is_none()
            && due
            && let Some(ts) = last.cluster_time
        {
            let names = worker
                .sources
                .names()
                .into_iter()
                .map(|c| format!("{}.{c}", worker.db.name()))
                .collect();
            let task = tokio::spawn(count_behind(
                worker.db.clone(),
                worker.name.clone(),
                names,
                ts,
            ));
            self.counting = Some((task, self.applied));
            self.started = Some(Instant::now());
        }
        self.estimate()
    }

    /// Events applied in a batch (before [`after`](Self::after) is told of it).
    fn applied(&mut self, events: u64) {
        self.applied += events;
    }

    fn estimate(&self) -> Option<u64> {
        self.known
            .map(|(n, at)| n.saturating_sub(self.applied.saturating_sub(at)))
    }

    fn abort(&mut self) {
        if let Some((task, _)) = self.counting.take() {
            task.abort();
        }
    }
}

impl Drop for Behind {
    fn drop(&mut self) {
        self.abort();
    }
}

/// How many events of the namespaces `names` the server wrote after `at`: a count of its
/// oplog's entries since (an entry of a transaction counts each of its operations on them).
/// `None` when the server does not let the oplog be read.
async fn count_behind(
    db: Database,
    name: String,
    names: Vec<String>,
    at: bson::Timestamp,
) -> Option<u64> {
    let oplog = db
        .client()
        .database("local")
        .collection::<Document>("oplog.rs");
    let counted = oplog
        .aggregate([
            doc! { "$match": {
                "ts": { "$gt": at },
                "$or": [
                    { "ns": { "$in": names.clone() } },
                    { "o.applyOps.ns": { "$in": names.clone() } },
                ],
            } },
            doc! { "$group": { "_id": null, "n": { "$sum": { "$cond": [
                { "$isArray": "$o.applyOps" },
                { "$size": { "$filter": {
                    "input": "$o.applyOps",
                    "cond": { "$in": ["$$this.ns", names] },
                } } },
                1,
            ] } } } },
        ])
        .await;
    let counted: mongodb::error::Result<Vec<Document>> = match counted {
        Ok(cursor) => cursor.try_collect().await,
        Err(e) => Err(e),
    };
    match counted {
        Ok(groups) => Some(
            groups
                .first()
                .and_then(|g| g.get("n"))
                .and_then(crate::finding::number)
                .map_or(0, |n| n as u64),
        ),
        Err(e) => {
            tracing::debug!(name = %name, error = %e, "the oplog could not be read: events behind unknown");
            None
        }
    }
}

/// What ended a stint of following the stream.
enum Outcome {
    /// Asked to stop: the last batch is stored.
    Stopped,
    /// Another maintainer holds the lease now.
    LostLease,
}

/// The background task of one maintainer.
pub(super) struct Worker {
    pub(super) db: Database,
    pub(super) name: String,
    pub(super) holder: String,
    pub(super) lease: Duration,
    pub(super) batch: usize,
    pub(super) sources: Sources,
    /// The server's time when `start` ran: where a stream with no token starts.
    pub(super) started_at: Option<bson::Timestamp>,
    pub(super) progress: Option<super::ProgressFn>,
    pub(super) status: Arc<Mutex<Status>>,
    pub(super) stop: watch::Receiver<bool>,
    /// The session its rebuilds' transactions run in: its id is stored with the lease, and a
    /// maintainer that takes the lease over from a dead one ends that one's session, so that a
    /// transaction the dead one left open does not hold its documents until the server's
    /// transaction time limit (60 s on MongoDB).
    pub(super) session: tokio::sync::Mutex<mongodb::ClientSession>,
}

impl Worker {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    fn status(&self, change: impl FnOnce(&mut Status)) {
        change(&mut self.status.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// How long a `getMore` waits for events: the stream comes back this often when idle, to
    /// see a stop and renew the lease. A server that answers a `getMore` only when this runs
    /// out (the embedded one does) adds up to this much lag; MongoDB answers as events come.
    fn idle_wait(&self) -> Duration {
        (self.lease / 3).min(Duration::from_millis(250))
    }

    pub(super) async fn run(mut self) -> Result<()> {
        let result = self.work().await;
        if self
            .status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .holding
        {
            let released = lease::release(&self.db, &self.name, &self.holder).await;
            self.status(|s| s.holding = false);
            released?;
        }
        if let Err(e) = &result {
            tracing::error!(name = %self.name, error = %e, "pattern_runtime::maintainer ended");
            let said = e.to_string();
            self.status(|s| s.error = Some(said));
        }
        result
    }

    async fn work(&mut self) -> Result<()> {
        loop {
            if self.stopping() {
                return Ok(());
            }
            let session = self.session.lock().await.id().clone();
            let Some(resume) = lease::acquire(
                &self.db,
                &self.name,
                &self.holder,
                self.lease,
                self.started_at,
                &session,
            )
            .await?
            else {
                self.status(|s| s.holding = false);
                // Another holds it: try again within a third of the lease, or stop.
                let _ = tokio::time::timeout(self.lease / 3, self.stop.changed()).await;
                continue;
            };
            self.status(|s| s.holding = true);
            match self.follow(resume).await? {
                Outcome::Stopped => return Ok(()),
                Outcome::LostLease => {
                    tracing::warn!(name = %self.name, "pattern_runtime::maintainer.lease lost");
                    self.status(|s| s.holding = false);
                }
            }
        }
    }

    /// A change stream over the sources, from `token`; with none, from the server time
    /// `from` (the first start's, or the last repair's), or from now.
    async fn open(
        &self,
        token: Option<ResumeToken>,
        from: Option<bson::Timestamp>,
    ) -> mongodb::error::Result<ChangeStream<ChangeStreamEvent<Document>>> {
        let start_at = if token.is_none() { from } else { None };
        let pipeline = [doc! { "$match": { "$or": [
            { "ns.coll": { "$in": self.sources.names() } },
            { "operationType": { "$in": ["invalidate", "dropDatabase"] } },
        ] } }];
        let watch = self
            .db
            .watch()
            .pipeline(pipeline)
            .full_document(FullDocumentType::UpdateLookup)
            .full_document_before_change(FullDocumentBeforeChangeType::WhenAvailable)
            .max_await_time(self.idle_wait())
            .resume_after(token);
        match start_at {
            Some(at) => watch.start_at_operation_time(at).await,
            None => watch.await,
        }
    }

    async fn follow(&mut self, resume: lease::Resume) -> Result<Outcome> {
        let resumed = resume.token.is_some();
        let from = resume.from.or(self.started_at);
        let opened = match resume.repairing {
            // The first start's repair, or one a crash interrupted: run (again) before following.
            Some(reason) => {
                let resume_at = resume.repair_at.map(|at| (at, resume.from));
                self.repair_all(&reason, resume_at).await?
            }
            None => match self.open(resume.token, from).await {
                Ok(stream) => Some(stream),
                Err(e) if history_lost(&e) || (resumed && token_refused(&e)) => {
                    self.repair_all(&format!("{e}"), None).await?
                }
                Err(e) => return Err(e.into()),
            },
        };
        let Some(mut stream) = opened else {
            return Ok(self.ended());
        };
        tracing::debug!(name = %self.name, resumed, "pattern_runtime::maintainer stream opened");
        let mut renewed = Instant::now();
        let mut behind = Behind::default();
        loop {
            let mut events = Vec::new();
            let mut lost: Option<String> = None;
            let polled = Instant::now();
            while events.len() < self.batch {
                match stream.next_if_any().await {
                    Ok(Some(event)) => match &event.operation_type {
                        OperationType::Insert
                        | OperationType::Update
                        | OperationType::Replace
                        | OperationType::Delete => events.push(event),
                        other => {
                            lost = Some(format!("the stream saw {other:?}"));
                            break;
                        }
                    },
                    Ok(None) => break,
                    Err(e) if history_lost(&e) => {
                        lost = Some(format!("{e}"));
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if events.is_empty() && lost.is_none() && polled.elapsed() < QUICK_EMPTY {
                // A server that answers an idle `getMore` at once, without the wait asked for
                // (the second server does): pause rather than poll in a tight loop.
                let _ = tokio::time::timeout(IDLE_PAUSE, self.stop.changed()).await;
            }
            let applied = events.len() as u64;
            let full = events.len() == self.batch;
            let lag = if events.is_empty() {
                None
            } else {
                self.apply(&events).await?
            };
            behind.applied(applied);
            let behind = behind.after(self, events.last(), full);
            if let Some(reason) = lost {
                // What came before the loss is applied; its token is not worth keeping.
                match self.repair_all(&reason, None).await? {
                    Some(fresh) => stream = fresh,
                    None => return Ok(self.ended()),
                }
                continue;
            }
            let stopping = self.stopping();
            if applied > 0 || stopping || renewed.elapsed() >= self.lease / 3 {
                let token = stream.resume_token();
                let batch = lease::Batch {
                    token: token.as_ref(),
                    applied,
                    lag,
                    behind,
                };
                let held =
                    lease::checkpoint(&self.db, &self.name, &self.holder, self.lease, &batch)
                        .await?;
                renewed = Instant::now();
                let now = DateTime::now();
                self.status(|s| {
                    s.stored_at = Some(now);
                    if applied > 0 {
                        s.applied += applied;
                        s.batches += 1;
                        s.behind = behind;
                    }
                });
                if applied > 0 {
                    tracing::info!(
                        name = %self.name,
                        events = applied,
                        lag_ms = lag.map(|l| l.as_millis() as u64),
                        behind,
                        "pattern_runtime::maintainer.batch applied"
                    );
                }
                if !held {
                    return Ok(Outcome::LostLease);
                }
            }
            if stopping {
                return Ok(Outcome::Stopped);
            }
        }
    }

    /// Rebuilds the dependents of each changed document, from the sources as they are now,
    /// source by source in the order the events came.
    async fn apply(&self, events: &[ChangeStreamEvent<Document>]) -> Result<Option<Duration>> {
        let mut newest: Option<DateTime> = None;
        let mut i = 0;
        while i < events.len() {
            let coll = collection_of(&events[i]);
            let mut j = i;
            let mut changes = Vec::new();
            while j < events.len() && collection_of(&events[j]) == coll {
                if !self.reads_touched(&events[j]) {
                    // An update of fields no dependent reads (often the echo of a rebuild's
                    // own write): nothing derives from it.
                } else if let Some(change) = self.change_of(&events[j]) {
                    changes.push(change);
                }
                newest = events[j].wall_time.or(newest);
                j += 1;
            }
            if let Some(source) = coll.and_then(|c| self.sources.by_collection.get(c)) {
                self.rebuild(source, &source.dependents, &changes, true)
                    .await?;
            }
            i = j;
        }
        let lag = newest.map(|at| {
            let lag = DateTime::now().timestamp_millis() - at.timestamp_millis();
            Duration::from_millis(u64::try_from(lag).unwrap_or(0))
        });
        if lag.is_some() {
            self.status(|s| s.lag = lag);
        }
        Ok(lag)
    }

    /// Whether an event may change what a dependent of its source reads: any but an update
    /// of a document in the current shape whose changed fields (top-level names) none of them
    /// reads.
    fn reads_touched(&self, event: &ChangeStreamEvent<Document>) -> bool {
        let (OperationType::Update, Some(d)) = (&event.operation_type, &event.update_description)
        else {
            return true;
        };
        let Some(source) = collection_of(event).and_then(|c| self.sources.by_collection.get(c))
        else {
            return true;
        };
        // A document written in an older shape: the event names the old shape's fields.
        let older = source.own
            && source
                .model
                .spec::<crate::stored::SchemaVersionSpec>()
                .zip(event.full_document.as_ref())
                .is_some_and(|(spec, d)| spec.version_of(d) != Ok(spec.current()));
        if older {
            return true;
        }
        let touched = crate::derived::event_fields(d);
        source
            .dependents
            .iter()
            .any(|dep| dep.reads().iter().any(|r| touched.contains(*r)))
    }

    /// The change of one event, in the model's current shape: `None` when the event names no
    /// document, or is a delete whose before image is gone (then nothing says what derived
    /// from it: a `WARN` event, the pattern's `repair()` mends it).
    fn change_of(&self, event: &ChangeStreamEvent<Document>) -> Option<Change> {
        let source = self.sources.by_collection.get(collection_of(event)?)?;
        let model = source.model;
        let id = event.document_key.as_ref()?.get("_id")?.clone();
        let current = |d: &Option<Document>| d.clone().map(|d| source.current(d));
        let before = current(&event.full_document_before_change);
        let after = match event.operation_type {
            OperationType::Delete => None,
            _ => current(&event.full_document),
        };
        if before.is_none() && after.is_none() {
            tracing::warn!(
                model = model.name(),
                id = %id,
                "a change without the document before or after it: its dependents are not rebuilt"
            );
            return None;
        }
        Some(Change { id, before, after })
    }

    /// Why a repair gave no stream: asked to stop, or the lease was lost.
    fn ended(&self) -> Outcome {
        if self.stopping() {
            Outcome::Stopped
        } else {
            Outcome::LostLease
        }
    }

    /// A full repair (after a lost history, or at the first start): records it as under way,
    /// opens a fresh stream (so that nothing written during the repair is missed), rebuilds the
    /// dependents of every source document, a source collection at a time in `_id` order, then
    /// the data held for its sources that are gone ([`Dependent::held`]), records it done and
    /// returns the fresh stream. Where it is is stored after each page: `resume` (where an
    /// interrupted one was, and the server time it started at) goes on from there, its stream
    /// opened at that time. `None` when the lease was lost meanwhile, or a stop was asked
    /// between two pages: the repair stays recorded as under way, and the next holder goes on
    /// with it.
    async fn repair_all(
        &mut self,
        reason: &str,
        resume: Option<(lease::RepairAt, Option<bson::Timestamp>)>,
    ) -> Result<Option<ChangeStream<ChangeStreamEvent<Document>>>> {
        // A dropped source comes back without its before images.
        self.sources.prepare(&self.db).await?;
        let (from, resume_at) = match resume {
            Some((at, from)) => {
                tracing::warn!(name = %self.name, reason, at = ?at, "pattern_runtime::maintainer.repair resumed");
                (from, Some(at))
            }
            None => {
                tracing::warn!(name = %self.name, reason, "pattern_runtime::maintainer.repair: rebuilding every source");
                let now = server_time(&self.db).await?;
                if !lease::record_repair(&self.db, &self.name, &self.holder, reason, now).await? {
                    return Ok(None);
                }
                (now, None)
            }
        };
        let stream = self.open(None, from).await?;
        let mut done = 0_u64;
        // Every source's documents, as estimated now: `done` may pass it.
        let mut total = Some(0_u64);
        for name in self.sources.names() {
            let count = self
                .db
                .collection::<Document>(name)
                .estimated_document_count()
                .await
                .ok();
            total = total.zip(count).map(|(t, c)| t + c);
        }
        for name in self.sources.names() {
            let source = &self.sources.by_collection[name];
            let mut at = lease::RepairAt {
                coll: name.to_owned(),
                after: None,
                held: false,
            };
            if let Some(was) = &resume_at {
                match name.cmp(was.coll.as_str()) {
                    std::cmp::Ordering::Less => continue,
                    std::cmp::Ordering::Equal => at = was.clone(),
                    std::cmp::Ordering::Greater => {}
                }
            }
            if !at.held {
                let coll: Collection<Document> = self.db.collection(name);
                // After the last `_id` done, in the server's order of every BSON type.
                let filter = match &at.after {
                    Some(after) => {
                        doc! { "$expr": { "$gt": ["$_id", { "$literal": after.clone() }] } }
                    }
                    None => doc! {},
                };
                let mut cursor = coll.find(filter).sort(doc! { "_id": 1 }).await?;
                let mut page = Vec::with_capacity(REPAIR_BATCH);
                loop {
                    let next = cursor.try_next().await?;
                    let end = next.is_none();
                    if let Some(d) = next {
                        let Some(id) = d.get("_id").cloned() else {
                            continue;
                        };
                        let d = source.current(d);
                        page.push(Change {
                            id,
                            before: None,
                            after: Some(d),
                        });
                    }
                    if page.len() == REPAIR_BATCH || (end && !page.is_empty()) {
                        self.rebuild(source, &source.dependents, &page, false)
                            .await?;
                        done += page.len() as u64;
                        at.after = page.last().map(|c| c.id.clone());
                        self.progress(
                            Progress::new("maintainer.repair", "documents", done, total)
                                .item(source.model.name()),
                        );
                        page.clear();
                        if !self.step(&at).await? {
                            return Ok(None);
                        }
                    }
                    if end {
                        break;
                    }
                }
                at.held = true;
            }
            // The data kept for source documents that are gone (deleted while the history
            // was lost): rebuilt as for a delete.
            for dependent in &source.dependents {
                let held = dependent.held(&self.db).await?;
                for page in held.chunks(REPAIR_BATCH) {
                    self.rebuild(source, &[*dependent], page, false).await?;
                    if !self.step(&at).await? {
                        return Ok(None);
                    }
                }
            }
        }
        if !lease::repaired(&self.db, &self.name, &self.holder).await? {
            return Ok(None);
        }
        self.status(|s| s.repairs += 1);
        tracing::warn!(name = %self.name, documents = done, "pattern_runtime::maintainer.repair done");
        Ok(Some(stream))
    }
}

impl Worker {
    /// Rebuilds the dependents of `changes` (in one transaction when `consistent`). When that
    /// fails for a reason of the documents (a value the derived data cannot hold, a source
    /// that does not read, a validator's refusal), each change is rebuilt alone, one dependent
    /// at a time, and what still fails is skipped and recorded ([`lease::skipped`], an `ERROR`
    /// event): one bad document does not stop the others, and a dependent that fails does not
    /// stop the others of the same change (an outlier's count overwritten with a NaN is
    /// rewritten, although a sum of it fails until then). An error of the server or the
    /// connection ends the work (the stream resumes at the last stored token).
    async fn rebuild(
        &self,
        source: &Source,
        dependents: &[&'static dyn Dependent],
        changes: &[Change],
        consistent: bool,
    ) -> Result<()> {
        let collection = dependents.first().map_or("", |d| d.collection());
        let run = |dependents: &[&'static dyn Dependent], changes: &[Change]| {
            let (dependents, changes) = (dependents.to_vec(), changes.to_vec());
            async move {
                let dependents = dependents.as_slice();
                if consistent {
                    let mut session = self.session.lock().await;
                    crate::derived::rebuild_consistent(&self.db, &mut session, dependents, &changes)
                        .await
                } else {
                    crate::derived::rebuild(&self.db, dependents, &changes)
                        .await
                        .map_err(crate::error::Error::from)
                }
            }
        };
        match run(dependents, changes).await {
            Ok(()) => return Ok(()),
            Err(e) if ends_the_work(&e) => return Err(e),
            Err(_) => {}
        }
        for change in changes {
            let mut failed = None;
            for dependent in dependents {
                match run(&[*dependent], std::slice::from_ref(change)).await {
                    Ok(()) => {}
                    Err(e) if ends_the_work(&e) => return Err(e),
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
            match failed {
                None => {}
                Some(e) => {
                    tracing::error!(
                        name = %self.name,
                        model = source.model.name(),
                        collection = collection,
                        id = %change.id,
                        error = %e,
                        "pattern_runtime::maintainer: a change's dependents could not be rebuilt; skipped"
                    );
                    self.status(|s| s.skipped += 1);
                    lease::skipped(
                        &self.db,
                        &self.name,
                        &self.holder,
                        source.model.name(),
                        collection,
                        &change.id,
                        &e,
                    )
                    .await?;
                }
            }
        }
        Ok(())
    }

    /// Reports a full repair's progress: an `INFO` event, and the callback when there is one.
    fn progress(&self, progress: Progress) {
        tracing::info!(
            job = progress.job,
            done = progress.done,
            total = ?progress.total,
            item = progress.item,
            "progress"
        );
        if let Some(callback) = &self.progress {
            (callback.lock().unwrap_or_else(PoisonError::into_inner))(&progress);
        }
    }

    /// After a page of a full repair: stores where it is and renews the lease; `false` when
    /// the lease is lost or a stop was asked (the repair is left under way, to go on from
    /// there).
    async fn step(&self, at: &lease::RepairAt) -> Result<bool> {
        let held = lease::repair_step(&self.db, &self.name, &self.holder, self.lease, at).await?;
        Ok(held && !self.stopping())
    }
}

/// The server's time now (a `ping`'s `operationTime`), where a stream opened later starts so
/// as to miss nothing in between; `None` from a server that does not say.
pub(super) async fn server_time(db: &Database) -> Result<Option<bson::Timestamp>> {
    let pinged = db.run_command(doc! { "ping": 1 }).await?;
    Ok(match pinged.get("operationTime") {
        Some(bson::Bson::Timestamp(t)) => Some(*t),
        _ => None,
    })
}

fn collection_of(event: &ChangeStreamEvent<Document>) -> Option<&str> {
    event.ns.as_ref()?.coll.as_deref()
}

/// Whether the server refused to open a stream at a stored token as one it cannot read: some
/// servers answer `FailedToParse` (the second server does). The stream's pipeline is the
/// toolkit's own, so the token is what failed to parse.
fn token_refused(e: &mongodb::error::Error) -> bool {
    server_code(e) == Some(FAILED_TO_PARSE)
}

/// Whether an error is the server's or the connection's (the work stops, to resume at the
/// stored token) rather than a document's.
fn ends_the_work(e: &crate::error::Error) -> bool {
    let crate::error::Error::Driver { source, .. } = e else {
        return false;
    };
    source.contains_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR)
        || source.contains_label(mongodb::error::RETRYABLE_WRITE_ERROR)
        || source.contains_label(mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT)
        || matches!(
            *source.kind,
            mongodb::error::ErrorKind::Io(_)
                | mongodb::error::ErrorKind::ServerSelection { .. }
                | mongodb::error::ErrorKind::Shutdown
                | mongodb::error::ErrorKind::ConnectionPoolCleared { .. }
                | mongodb::error::ErrorKind::Authentication { .. }
        )
}

fn history_lost(e: &mongodb::error::Error) -> bool {
    matches!(
        server_code(e),
        Some(HISTORY_LOST | STREAM_FATAL | INVALID_TOKEN)
    ) || e.contains_label("NonResumableChangeStreamError")
}

//! Test support for the workspace: one MongoDB server per test process, one database per test.
//!
//! The server is `MONGODB_URI` when that variable is set (a real `mongod` or cluster), else an
//! embedded [`secantus_mdb`] server started on first use, on loopback with a store of its own under
//! `$TMPDIR/pattern-testkit/<pid>-<time>`. Nothing is mocked: every test talks the wire protocol.
//!
//! The server lives in a process-wide static, which Rust never drops, so its store outlives the
//! process (some 130 MB each, mostly WiredTiger's log). Every process that starts a server first
//! removes the stores of processes that are no longer running (on Linux, where `/proc` says so),
//! and `./dev test` does the same when it ends: leftovers never pile up.
//!
//! Each [`TestDb`] is a database of its own, named after the test and unique in the process and
//! across processes, so tests run in parallel. Against `MONGODB_URI` the database is dropped when
//! the `TestDb` is dropped; the embedded server's store goes away with the process.
//!
//! # Fail points are one per server: a test that configures one holds it until it ends
//!
//! [`TestDb::fail_command`] configures the server's `failCommand` fail point. There is ONE such
//! fail point per server, not one per client: configuring it replaces whatever was configured
//! before, whatever `appName` either configuration names. Cargo runs a test binary's tests in
//! parallel threads against the one server of the process, so two tests configuring it at the
//! same time would overwrite each other's failures (a test would then see no failure, or run out
//! of its `times` early).
//!
//! So the first `fail_command` of a [`TestDb`] takes a process-wide lock (an async mutex, usable
//! from every test's own runtime) and the `TestDb` keeps it: fail-point tests run one at a time,
//! other tests still run beside them. A test may call `fail_command` any number of times; each
//! call replaces the previous configuration. When the `TestDb` is dropped, at the end of the test
//! or while a failed test unwinds, the fail point is turned off (`mode: "off"`, sent from a
//! helper thread with a client of its own, since the test's runtime may be shutting down) and
//! only then is the lock released. There is no guard to keep or to forget: the `TestDb` a test
//! needs anyway is the guard. The `appName` scoping stays too, so a configuration never fails
//! another test's commands, only its own.
//!
//! One test should configure fail points through one `TestDb`: a second `TestDb` of the same
//! test would wait for the lock the first one holds, which is reported as a panic (on the test's
//! thread) rather than left to hang. The lock is per process: against a shared `MONGODB_URI`
//! server, run the test binaries one after another (as `cargo test` does), not in parallel
//! processes.
//!
//! # In your own tests
//!
//! ```no_run
//! use pattern_runtime::Model;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! struct Note { #[serde(rename = "_id")] id: u32, body: String }
//!
//! #[tokio::test]
//! async fn notes_round_trip() {
//!     let db = pattern_testkit::test_db("notes_round_trip").await; // a database of its own
//!     pattern_runtime::sync(&db).models(&[Note::SCHEMA]).await.unwrap();
//!     Note::collection(&db).raw().insert_one(Note { id: 1, body: "hi".into() }).await.unwrap();
//!     // What the test's client sent, to count round trips:
//!     let sent = db.take_commands();
//!     assert!(sent.iter().any(|c| c.name == "insert" && c.target == "notes"));
//!     // Make the server fail the next `update` of this test, as a replica set without a
//!     // primary would; held until `db` is dropped.
//!     db.fail_command(&["update"], 1, bson::doc! { "errorCode": 91 }).await;
//! }
//! ```
//!
//! # Every test under its models' validators
//!
//! Unless `PATTERN_TEST_VALIDATORS=off`, each fresh database first gets the server-side
//! validators ([`pattern_runtime::validator`]) of the models declared in the test's module or
//! an enclosing one (found from the test thread's name; the test crate's root included), and
//! of every model declared in another crate (your library's models, used by `tests/shop.rs`),
//! at `strict` and `error` with other fields forbidden, beside each model's companions
//! (revisions, overflow documents, shards, buckets); [`TestDb::validated`] lists them. Every
//! write the patterns make must then pass them. A test that writes what its
//! models do not describe on purpose (a hostile or drifted document, an older shape) opens its
//! database with [`test_db_unvalidated`]. The sync's own commands are not in the command log.
//!
//! This crate is not published: the embedded server is GPL-2.0 and only ever a test dependency.
//! Use it from a checkout of this repository as a path dev-dependency
//! (`pattern-testkit = { path = "../mongo-patterns/pattern-testkit" }`), or depend on
//! [`secantus_mdb`] (test-only) yourself: `secantus_mdb::Server::start()?.uri()`.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;

use bson::{doc, Document};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

/// The server of this process.
#[derive(Debug)]
pub struct TestServer {
    uri: String,
    embedded: Option<secantus_mdb::Server>,
}

impl TestServer {
    /// The connection string.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether this is the embedded server (else `MONGODB_URI`).
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// A one-line description for logs: `embedded secantus-mdb 0.5.3 at ...` or `MONGODB_URI`.
    pub fn describe(&self) -> String {
        match &self.embedded {
            Some(s) => format!(
                "embedded secantus-mdb {} at {}",
                secantus_mdb::VERSION,
                s.address()
            ),
            // The URI may carry credentials: never print it.
            None => "the server at MONGODB_URI".to_owned(),
        }
    }
}

static SERVER: OnceLock<TestServer> = OnceLock::new();

/// The process's server, started on first call.
///
/// # Panics
/// When the embedded server cannot start (it is a test fixture: failing loudly is the point).
pub fn server() -> &'static TestServer {
    SERVER.get_or_init(|| match std::env::var("MONGODB_URI") {
        Ok(uri) if !uri.trim().is_empty() => TestServer {
            uri,
            embedded: None,
        },
        _ => {
            let server = secantus_mdb::Server::builder()
                .storage_path(store_dir())
                // Not the default 256M: under it, one update that writes a 9 MiB value and its
                // index keys (tests/integration/attribute.rs) is rolled back for cache pressure, which the
                // server retries as a write conflict, forever. A cap, not an allocation.
                .cache_size("1G")
                .start()
                .unwrap_or_else(|e| panic!("the embedded secantus-mdb server did not start: {e}"));
            TestServer {
                uri: server.uri(),
                embedded: Some(server),
            }
        }
    })
}

/// A store directory for this process's server, after removing those of ended processes.
fn store_dir() -> std::path::PathBuf {
    let root = std::env::temp_dir().join("pattern-testkit");
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.split('-').next()?.parse::<u32>().ok());
            if pid.is_some_and(|pid| !running(pid)) {
                // Best effort: another process may be removing it too.
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    root.join(format!("{}-{nanos}", std::process::id()))
}

/// Whether process `pid` is running; `true` where that cannot be told (no `/proc`), so a store is
/// never removed from under a live server.
fn running(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// A new client on the process's server. Each async runtime needs its own client: the driver's
/// background tasks live on the runtime that created it.
///
/// # Panics
/// When the URI is invalid.
pub async fn client() -> Client {
    client_named(None, None).await
}

async fn client_named(app_name: Option<String>, log: Option<CommandLog>) -> Client {
    let mut options = ClientOptions::parse(server().uri())
        .await
        .unwrap_or_else(|e| panic!("invalid server URI for {}: {e}", server().describe()));
    options.app_name = app_name;
    // A fail point answering with a state-change error (code 91, ShutdownInProgress) marks the
    // server Unknown, and the driver's next command waits for its monitor to see it again: at
    // the default heartbeat (10 s), a test of a lost commit waited 10 s per injected failure.
    options.heartbeat_freq = Some(std::time::Duration::from_millis(500));
    if let Some(log) = log {
        options.command_event_handler = Some(EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                let target = started
                    .command
                    .get_str(&started.command_name)
                    .unwrap_or_default()
                    .to_owned();
                if log.bodies_wanted.load(Ordering::Relaxed) {
                    lock(&log.bodies).push(without_per_send_fields(started.command));
                }
                lock(&log.commands).push(Command {
                    name: started.command_name,
                    target,
                });
            }
        }));
    }
    Client::with_options(options)
        .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", server().describe()))
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A command a test's client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command name: `find`, `update`, `findAndModify`, `commitTransaction`, ...
    pub name: String,
    /// Its collection (the command's first value, when it is a string), else empty.
    pub target: String,
}

#[derive(Debug, Clone, Default)]
struct CommandLog {
    commands: Arc<Mutex<Vec<Command>>>,
    /// The started commands' bodies, from [`TestDb::record_command_bodies`] on.
    bodies: Arc<Mutex<Vec<Document>>>,
    bodies_wanted: Arc<AtomicBool>,
}

fn lock<T>(log: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The fields of a command body that differ from one send to the next of the same operation:
/// see [`TestDb::take_command_bodies`].
const PER_SEND_FIELDS: [&str; 3] = ["lsid", "$clusterTime", "txnNumber"];

fn without_per_send_fields(mut body: Document) -> Document {
    for field in PER_SEND_FIELDS {
        body.remove(field);
    }
    body
}

/// The server's one `failCommand` fail point: whoever holds this configures it (see the crate
/// docs). A `tokio` mutex, not a `std` one: it is awaited from many tests' runtimes.
static FAIL_POINT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The thread of the test that holds [`FAIL_POINT`], to report a test waiting for itself.
static FAIL_POINT_HOLDER: Mutex<Option<ThreadId>> = Mutex::new(None);

fn fail_point_holder() -> std::sync::MutexGuard<'static, Option<ThreadId>> {
    FAIL_POINT_HOLDER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A database of one test's own. Derefs to [`Database`].
#[derive(Debug)]
pub struct TestDb {
    db: Database,
    client: Client,
    log: CommandLog,
    /// The models whose validators [`test_db`] installed.
    validated: Vec<&'static str>,
    /// Held from the first [`TestDb::fail_command`] until the `TestDb` is dropped (after the fail
    /// point is turned off): fields drop after `Drop::drop` has run.
    fail_point: tokio::sync::OnceCell<tokio::sync::MutexGuard<'static, ()>>,
}

/// A fresh database for the test `name` (any text; it is sanitised into the database name),
/// with the strict validators of the models the test uses: those declared in the running
/// test's module or an enclosing one, and every model of another crate than the test's own
/// ([`TestDb::validated`] lists them). Outside a test function (in a program's `main`, a doc
/// test or an example) there is no test module to go by, and no validator is installed:
/// [`pattern_runtime::sync`](pattern_runtime::sync()) with
/// [`SyncOptions::validators`](pattern_runtime::SyncOptions::validators) installs them there.
///
/// Its client's `appName` is the database name, so [`TestDb::fail_command`] fails this test's
/// commands only, even with other tests running on the same server; and the first
/// `fail_command` makes the `TestDb` hold the process's fail point until it is dropped.
pub async fn test_db(name: &str) -> TestDb {
    let mut db = test_db_unvalidated(name).await;
    if validators_wanted() {
        db.validated = install_validators(&db).await;
        db.take_commands();
    }
    db
}

/// Whether validators are installed: unless `PATTERN_TEST_VALIDATORS=off`; any other value
/// than `off`, `error` or nothing is a panic, so a misspelt mode is not silently off.
fn validators_wanted() -> bool {
    match std::env::var("PATTERN_TEST_VALIDATORS").as_deref() {
        Ok("off") => false,
        Err(_) | Ok("" | "error") => true,
        Ok(other) => panic!("PATTERN_TEST_VALIDATORS={other}: expected `error` or `off`"),
    }
}

/// The validators of the models a test uses, at `strict`/`error`, other fields forbidden: those
/// declared in the running test's module or an enclosing one (the test thread is named
/// `module::path::test_name`), and every model declared in another crate than the test's own
/// (the library under test). Returns the names of the models.
async fn install_validators(db: &TestDb) -> Vec<&'static str> {
    let thread = std::thread::current();
    let Some(test) = thread.name() else {
        return Vec::new();
    };
    // `main` is not a test's thread (a doc test, an example): no validators.
    if test == "main" {
        return Vec::new();
    }
    let test_module = test.rsplit_once("::").map_or("", |(m, _)| m);
    let own_crate = test_crate();
    let report = install(db, |declared| {
        used_by_test(own_crate.as_deref(), test_module, declared)
    })
    .await
    .unwrap_or_else(|e| panic!("cannot install the validators of {test_module}: {e}"));
    let mut names: Vec<&'static str> = Vec::new();
    for status in &report.models {
        if !names.contains(&status.model) {
            names.push(status.model);
        }
    }
    names
}

/// Whether a model declared in `declared` (its `module_path!()`) is one the test in
/// `test_module` (the thread's name without the test's) of the crate `test_crate` uses: one of
/// another crate, or of the test's module or an enclosing one.
fn used_by_test(test_crate: Option<&str>, test_module: &str, declared: &str) -> bool {
    // `module_path!()` starts with the crate's name; the thread's name does not.
    let (krate, declared) = declared.split_once("::").unwrap_or((declared, ""));
    test_crate.is_some_and(|own| own != krate)
        || declared.is_empty()
        || test_module == declared
        || test_module.starts_with(&format!("{declared}::"))
}

/// The crate name of the running test binary (`tests/shop.rs` runs as `shop-<hash>`), `None`
/// when the executable's name does not say.
fn test_crate() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_str()?;
    let (name, hash) = stem.rsplit_once('-')?;
    let hashed = hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    hashed.then(|| name.replace('-', "_"))
}

/// Installs in `db` the validators of every model declared in the module `module` (a
/// `module_path!()`) or one inside it, each with its companions (revisions, overflow documents,
/// shards, buckets), at `strict` and `error` with other fields forbidden: every write to them
/// must then be what the models describe. The tour runs each chapter under them.
pub async fn install_validators_of(
    db: &Database,
    module: &str,
) -> pattern_runtime::Result<pattern_runtime::validator::ValidatorReport> {
    install(db, |declared| {
        declared == module || declared.starts_with(&format!("{module}::"))
    })
    .await
}

async fn install(
    db: &Database,
    declared_in: impl Fn(&str) -> bool,
) -> pattern_runtime::Result<pattern_runtime::validator::ValidatorReport> {
    use pattern_runtime::__private::{inventory, Registration};
    use pattern_runtime::validator::{sync_validators, ValidatorOptions};
    let mut models: Vec<&'static pattern_runtime::ModelSchema> = inventory::iter::<Registration>
        .into_iter()
        .filter(|r| declared_in(r.module))
        .map(|r| r.schema)
        .collect();
    models.sort_by_key(|m| (m.collection(), m.name()));
    let options = ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields();
    sync_validators(db, &models, &options).await
}

/// [`test_db`] without validators, whatever `PATTERN_TEST_VALIDATORS` says: for a test that
/// writes what its models do not describe on purpose (a hostile or drifted document, an older
/// shape), or that installs validators itself.
pub async fn test_db_unvalidated(name: &str) -> TestDb {
    let hint: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let db_name = format!("pt_{hint}_{}_{n}", std::process::id());
    let log = CommandLog::default();
    let client = client_named(Some(db_name.clone()), Some(log.clone())).await;
    let db = client.database(&db_name);
    // A leftover of an earlier run with the same pid must not leak into this test.
    db.drop()
        .await
        .unwrap_or_else(|e| panic!("cannot reset database {db_name}: {e}"));
    TestDb {
        db,
        client,
        log,
        validated: Vec::new(),
        fail_point: tokio::sync::OnceCell::new(),
    }
}

/// Every document of `collection`, as stored, in `_id` order: what a test compares after a write.
///
/// # Panics
/// When the server refuses the read.
pub async fn docs(db: &Database, collection: &str) -> Vec<Document> {
    let mut cursor = db
        .collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap_or_else(|e| panic!("reading {collection}: {e}"));
    let mut out = Vec::new();
    while cursor
        .advance()
        .await
        .unwrap_or_else(|e| panic!("reading {collection}: {e}"))
    {
        out.push(
            cursor
                .deserialize_current()
                .unwrap_or_else(|e| panic!("reading {collection}: {e}")),
        );
    }
    out
}

impl TestDb {
    /// The database.
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The client the database was opened with.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The models whose validators [`test_db`] installed, by name: those declared in the
    /// test's module or an enclosing one, and those of other crates (the library under test).
    /// Empty for [`test_db_unvalidated`] and under `PATTERN_TEST_VALIDATORS=off`.
    pub fn validated(&self) -> &[&'static str] {
        &self.validated
    }

    /// Takes the commands this test's client started since the last call (from the driver's
    /// command monitoring), oldest first: what an operation really sent, to count round trips
    /// or prove that a command was not sent.
    pub fn take_commands(&self) -> Vec<Command> {
        std::mem::take(&mut *lock(&self.log.commands))
    }

    /// Starts keeping the body of every command this test's client starts, for
    /// [`TestDb::take_command_bodies`]. Off until called, so that a test (or a bench) that
    /// never takes them does not hold every document it sent.
    pub fn record_command_bodies(&self) {
        self.log.bodies_wanted.store(true, Ordering::Relaxed);
    }

    /// Takes the bodies of the commands this test's client started since the last call (or
    /// since [`TestDb::record_command_bodies`]), oldest first, as the driver's command
    /// monitoring saw them: what went on the wire, to compare two ways of sending an operation
    /// byte for byte (`Document::to_vec` of each). Independent of [`TestDb::take_commands`], which
    /// still logs every command too.
    ///
    /// Removed from each body, because they differ between two sends of the same operation:
    /// `lsid` (the implicit session, one from the client's pool), `$clusterTime` (the gossiped
    /// cluster time, which moves on with every write) and `txnNumber` (a retryable write's or a
    /// transaction's number in its session). Everything else is kept as sent, `$db` and
    /// `$readPreference` included. Still differing between two sends, and left as they are:
    /// the server's cursor ids in `getMore` and `killCursors` (read a result that fits in the
    /// first batch to compare one `find`), and the `_id` the driver generates for an inserted
    /// document that has none.
    pub fn take_command_bodies(&self) -> Vec<Document> {
        std::mem::take(&mut *lock(&self.log.bodies))
    }

    /// Makes the server fail the next `times` of `commands` sent by this test's client, with the
    /// fields of `failure` (`errorCode`, `errorLabels`, `writeConcernError`, `closeConnection`,
    /// ...), through the `failCommand` fail point. Needs a server with test commands enabled (the
    /// embedded one has them).
    ///
    /// The server has one such fail point: the first call waits until no other test of the
    /// process holds it, then this `TestDb` holds it until it is dropped, when the fail point is
    /// turned off (see the crate docs). Each call replaces the previous configuration, including
    /// failures it had left unused.
    ///
    /// # Panics
    /// When the server refuses the fail point, or when another `TestDb` of the same test already
    /// holds it (that wait would never end).
    pub async fn fail_command(&self, commands: &[&str], times: i32, failure: Document) {
        self.configure_fail_point(commands, doc! { "times": times }, failure)
            .await;
    }

    /// Lets the next `skip` of `commands` sent by this test's client through, then fails every
    /// one after them with the fields of `failure`, until [`TestDb::fail_command_off`] or the
    /// drop: a failure in the middle of an operation (`{skip: N}`, which mongod and the embedded
    /// server read alike). The fail point is held as for [`TestDb::fail_command`].
    ///
    /// # Panics
    /// As [`TestDb::fail_command`].
    pub async fn fail_command_after(&self, commands: &[&str], skip: i32, failure: Document) {
        self.configure_fail_point(commands, doc! { "skip": skip }, failure)
            .await;
    }

    /// Turns this test's `failCommand` fail point off (it stays held until the drop).
    ///
    /// # Panics
    /// When the server refuses it.
    pub async fn fail_command_off(&self) {
        let off = doc! { "configureFailPoint": "failCommand", "mode": "off" };
        self.client
            .database("admin")
            .run_command(off)
            .await
            .unwrap_or_else(|e| panic!("the server refused to turn the fail point off: {e}"));
    }

    async fn configure_fail_point(&self, commands: &[&str], mode: Document, failure: Document) {
        self.fail_point
            .get_or_init(|| async {
                let me = std::thread::current().id();
                assert!(
                    *fail_point_holder() != Some(me),
                    "{}: another TestDb of this test holds the fail point; configure fail points \
                     through one TestDb per test",
                    self.db.name()
                );
                let guard = FAIL_POINT.lock().await;
                *fail_point_holder() = Some(me);
                guard
            })
            .await;
        let mut data = doc! { "failCommands": commands, "appName": self.db.name() };
        data.extend(failure);
        let command = doc! {
            "configureFailPoint": "failCommand",
            "mode": mode,
            "data": data,
        };
        self.client
            .database("admin")
            .run_command(command)
            .await
            .unwrap_or_else(|e| {
                panic!("the server refused configureFailPoint (are test commands enabled?): {e}")
            });
    }
}

impl Deref for TestDb {
    type Target = Database;
    fn deref(&self) -> &Database {
        &self.db
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let fail_point = self.fail_point.initialized();
        let drop_database = !server().is_embedded();
        if !fail_point && !drop_database {
            return; // the embedded server's temporary store is removed with the process
        }
        // Turn our fail point off before the lock is released (when the fields drop, after this),
        // and on a real server drop the database, which it would keep. On a runtime of its own:
        // the test's runtime may be shutting down, and a current-thread one is blocked here.
        let name = self.db.name().to_owned();
        let uri = server().uri().to_owned();
        let cleaner = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let Ok(client) = Client::with_uri_str(&uri).await else {
                    return;
                };
                if fail_point {
                    let off = doc! { "configureFailPoint": "failCommand", "mode": "off" };
                    // Left on, it would still only fail this test's appName, which nothing uses
                    // any more: harmless, so not worth a panic while dropping.
                    if let Err(e) = client.database("admin").run_command(off).await {
                        eprintln!("{name}: could not turn the failCommand fail point off: {e}");
                    }
                }
                if drop_database {
                    let _ = client.database(&name).drop().await;
                }
            });
        });
        let _ = cleaner.join();
        if fail_point {
            *fail_point_holder() = None;
        }
    }
}

/// Asserts, for every model linked into the test binary, that the orders its derive compiled
/// into keyset impls (what a typed `Find::after` accepts) are those its collection's indexes
/// serve at run time (what the run-time check accepts): the same lists, in any order. A
/// pattern that declares an index on its model's collection without listing it to the derive
/// (`Pattern::own_indexes`) makes a page that index serves a compile error; this finds it.
/// A series (`#[derive(Measurement)]`) is left out: its documents are buckets, which no
/// `find` pages through.
pub fn assert_keyset_orders_agree() -> usize {
    let mut checked = 0;
    for model in pattern_runtime::sync::registered_models() {
        if model
            .spec::<pattern_runtime::__private::SeriesSpec>()
            .is_some()
        {
            continue;
        }
        let (mut compiled, mut from_indexes) = pattern_runtime::__private::keyset_orders(model);
        compiled.sort();
        from_indexes.sort();
        assert_eq!(
            compiled,
            from_indexes,
            "model `{}`: the orders compiled (left) and those its indexes serve (right)",
            model.name()
        );
        checked += 1;
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::error::ErrorKind;

    #[test]
    fn a_test_uses_its_own_modules_models_and_every_other_crates() {
        let own = Some("integration");
        // The test's module, an enclosing one, and the crate root.
        assert!(used_by_test(own, "tree::moves", "integration::tree::moves"));
        assert!(used_by_test(own, "tree::moves", "integration::tree"));
        assert!(used_by_test(own, "tree::moves", "integration"));
        // Another module of the same test crate: not this test's.
        assert!(!used_by_test(own, "tree::moves", "integration::subset"));
        assert!(!used_by_test(own, "tree", "integration::tree::moves"));
        // A library's models, wherever they are declared in it.
        assert!(used_by_test(own, "tree::moves", "shop::models"));
        assert!(used_by_test(own, "", "shop"));
        // Without the binary's name, only the module rule.
        assert!(!used_by_test(None, "tree", "shop::models"));
    }

    async fn find_code(db: &TestDb) -> Option<i32> {
        match db.collection::<Document>("c").find_one(doc! {}).await {
            Ok(_) => None,
            Err(e) => match *e.kind {
                ErrorKind::Command(ref c) => Some(c.code),
                _ => panic!("not a command error: {e}"),
            },
        }
    }

    /// Tests on their own runtimes and threads, each failing its own `find` twice, again and
    /// again: without the lock their configurations replace one another and a failure is lost.
    #[test]
    fn fail_points_of_parallel_tests_do_not_overwrite_each_other() {
        let threads: Vec<_> = (0..6)
            .map(|t| {
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    rt.block_on(async {
                        for round in 0..5 {
                            let db = test_db(&format!("fp_parallel_{t}_{round}")).await;
                            db.fail_command(&["find"], 2, doc! { "errorCode": 2 }).await;
                            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                            assert_eq!(find_code(&db).await, Some(2));
                            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                            assert_eq!(find_code(&db).await, Some(2));
                            assert_eq!(find_code(&db).await, None);
                            // Again, replacing the first configuration.
                            db.fail_command(&["find"], 1, doc! { "errorCode": 8 }).await;
                            assert_eq!(find_code(&db).await, Some(8));
                            assert_eq!(find_code(&db).await, None);
                        }
                    });
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    /// Dropping the `TestDb` turns its fail point off, even when failures were left unused.
    #[tokio::test]
    async fn the_fail_point_is_off_once_the_test_db_is_dropped() {
        let db = test_db("fp_off").await;
        let name = db.name().to_owned();
        db.fail_command(&["find"], 1000, doc! { "errorCode": 2 })
            .await;
        assert_eq!(find_code(&db).await, Some(2));
        drop(db);
        // A client with the dropped database's appName: the fail point would match it.
        let client = client_named(Some(name.clone()), None).await;
        client
            .database(&name)
            .collection::<Document>("c")
            .find_one(doc! {})
            .await
            .expect("the fail point is off");
    }

    /// A test whose second `TestDb` waits for the fail point its first holds is told so.
    #[tokio::test]
    #[should_panic(expected = "another TestDb of this test holds the fail point")]
    async fn a_second_test_db_of_the_same_test_is_refused() {
        let first = test_db("fp_first").await;
        first
            .fail_command(&["find"], 1, doc! { "errorCode": 2 })
            .await;
        let second = test_db("fp_second").await;
        second
            .fail_command(&["find"], 1, doc! { "errorCode": 2 })
            .await;
    }
}

//! Test support for the workspace: one MongoDB server per test process, one database per test.
//!
//! The server is `MONGODB_URI` when that variable is set (a real `mongod` or cluster), else an
//! embedded [`secantus_mdb`] server started on first use, on loopback with a temporary store that
//! is removed when the process exits. Nothing is mocked: every test talks the wire protocol.
//!
//! Each [`TestDb`] is a database of its own, named after the test and unique in the process and
//! across processes, so tests run in parallel. Against `MONGODB_URI` the database is dropped when
//! the `TestDb` is dropped; the embedded server's store goes away with the process.
//!
//! This crate is not published: the embedded server is GPL-2.0 and only ever a test dependency.

use std::ops::Deref;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
            let server = secantus_mdb::Server::start()
                .unwrap_or_else(|e| panic!("the embedded secantus-mdb server did not start: {e}"));
            TestServer {
                uri: server.uri(),
                embedded: Some(server),
            }
        }
    })
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
    if let Some(log) = log {
        options.command_event_handler = Some(EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                let target = started
                    .command
                    .get_str(&started.command_name)
                    .unwrap_or_default()
                    .to_owned();
                log.0
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(Command {
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
struct CommandLog(Arc<Mutex<Vec<Command>>>);

/// A database of one test's own. Derefs to [`Database`].
#[derive(Debug)]
pub struct TestDb {
    db: Database,
    client: Client,
    log: CommandLog,
}

/// A fresh database for the test `name` (any text; it is sanitised into the database name).
///
/// Its client's `appName` is the database name, so [`TestDb::fail_command`] fails this test's
/// commands only, even with other tests running on the same server.
pub async fn test_db(name: &str) -> TestDb {
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
    TestDb { db, client, log }
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

    /// Takes the commands this test's client started since the last call (from the driver's
    /// command monitoring), oldest first: what an operation really sent, to count round trips
    /// or prove that a command was not sent.
    pub fn take_commands(&self) -> Vec<Command> {
        std::mem::take(
            &mut *self
                .log
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Makes the server fail the next `times` of `commands` sent by this test's client, with the
    /// fields of `failure` (`errorCode`, `errorLabels`, `writeConcernError`, `closeConnection`,
    /// ...), through the `failCommand` fail point. Needs a server with test commands enabled (the
    /// embedded one has them).
    ///
    /// # Panics
    /// When the server refuses the fail point.
    pub async fn fail_command(&self, commands: &[&str], times: i32, failure: Document) {
        let mut data = doc! { "failCommands": commands, "appName": self.db.name() };
        data.extend(failure);
        let command = doc! {
            "configureFailPoint": "failCommand",
            "mode": { "times": times },
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
        if server().is_embedded() {
            return; // the temporary store is removed with the process
        }
        // A real server keeps what a test leaves: drop the database on a runtime of its own, since
        // the test's runtime may already be shutting down.
        let name = self.db.name().to_owned();
        let uri = server().uri().to_owned();
        let dropper = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(client) = Client::with_uri_str(&uri).await {
                    let _ = client.database(&name).drop().await;
                }
            });
        });
        let _ = dropper.join();
    }
}

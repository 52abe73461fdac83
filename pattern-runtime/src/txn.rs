//! Transactions with retries, and the fallback for deployments without them.
//!
//! [`transact!`] runs a body in a transaction on a fresh session: a `TransientTransactionError`
//! aborts and runs the body again, an `UnknownTransactionCommitResult` retries the commit, both
//! with jittered exponential backoff for at most [`RETRY_FOR`]. A server without transactions
//! (code 20, a standalone `mongod`) runs the body once without a session instead. Any other error
//! aborts the transaction and is returned: nothing it wrote is kept.
//!
//! A macro rather than a function taking an async closure: the body borrows its surroundings, and
//! async closures over borrowed data trip rust-lang/rust#96865 (`Send` not general enough).
//!
//! # Tracing
//!
//! Every retry is an `INFO` event of target `pattern_runtime::txn` (the attempt that failed, the
//! server code and label that caused the retry, the backoff delay); giving up after [`RETRY_FOR`]
//! is a `WARN` event; the fallback without transactions is a `WARN` event the first time in the
//! process and `DEBUG` afterwards; a commit, and an error that ends the transaction, are `DEBUG`
//! events. They are emitted inside the span of the operation that runs the transaction. The
//! macro calls the functions below, so its expansion names no `tracing` path.

use std::time::Duration;

/// How long a transaction is retried before its last error is returned.
pub(crate) const RETRY_FOR: Duration = Duration::from_secs(120);

/// The delay before retry number `attempt` (from 0): 5 ms doubling to 500 ms, with jitter.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let base = 5u64.saturating_mul(1 << attempt.min(7)).min(500);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    Duration::from_millis(base / 2 + nanos % (base / 2 + 1))
}

/// `transact!(db, |session| body)`: `body` is an expression of type
/// `impl Future<Output = mongodb::error::Result<T>>` using `session: Option<&mut ClientSession>`;
/// evaluates to `crate::error::Result<T>`.
macro_rules! transact {
    // In the caller's transaction when the handle is bound to one: the body runs once in its
    // session; committing, aborting and retrying are the caller's.
    ($db:expr, $tx:expr, |$session:ident| $body:expr) => {{
        match $tx {
            ::core::option::Option::Some(tx) if $crate::txn::Transaction::ended(tx).is_some() => {
                ::core::result::Result::Err($crate::error::Error::TransactionEnded {
                    how: $crate::txn::Transaction::ended(tx).unwrap_or("ended"),
                })
            }
            ::core::option::Option::Some(tx) => {
                let mut guard = $crate::txn::Transaction::session(tx).await;
                let result = {
                    let $session: ::core::option::Option<&mut ::mongodb::ClientSession> =
                        ::core::option::Option::Some(&mut *guard);
                    $body.await
                };
                $crate::txn::trace::in_caller_transaction(&result);
                if let ::core::result::Result::Err(e) = &result {
                    $crate::txn::Transaction::failed(tx, &mut guard, e).await;
                }
                result.map_err($crate::error::Error::from)
            }
            ::core::option::Option::None => $crate::txn::transact!($db, |$session| $body),
        }
    }};
    ($db:expr, |$session:ident| $body:expr) => {{
        let mut owned = $db.client().start_session().await?;
        $crate::txn::transact!(@session &mut owned, |$session| $body)
    }};
    // In a session of the caller's (`&mut ClientSession`, no transaction open on it): the
    // transactions run in it, so the caller knows their session (a maintainer records it).
    (@session $owned:expr, |$session:ident| $body:expr) => {{
        use ::mongodb::error::{TRANSIENT_TRANSACTION_ERROR, UNKNOWN_TRANSACTION_COMMIT_RESULT};
        let started = ::std::time::Instant::now();
        // Failed tries so far (body runs and commits alike): the backoff grows with it.
        let mut attempt: u32 = 0;
        let session: &mut ::mongodb::ClientSession = $owned;
        let outcome: $crate::error::Result<_> = 'attempts: loop {
            session.start_transaction().await?;
            let result = {
                let $session = ::core::option::Option::Some(&mut *session);
                $body.await
            };
            let value = match result {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(e) => {
                    let _ = session.abort_transaction().await;
                    if $crate::error::server_code(&e) == Some($crate::error::ILLEGAL_OPERATION) {
                        // No transactions here: run once, in the documented order, unprotected.
                        $crate::txn::trace::without_transactions(&e);
                        let $session: ::core::option::Option<&mut ::mongodb::ClientSession> =
                            ::core::option::Option::None;
                        let result = $body.await;
                        if let ::core::result::Result::Err(e) = &result {
                            $crate::txn::trace::failed_without_transaction(e);
                        }
                        break 'attempts result.map_err($crate::error::Error::from);
                    }
                    if e.contains_label(TRANSIENT_TRANSACTION_ERROR) {
                        if started.elapsed() < $crate::txn::RETRY_FOR {
                            let delay = $crate::txn::backoff(attempt);
                            attempt += 1;
                            $crate::txn::trace::retry_transaction(&e, attempt, delay, false);
                            ::tokio::time::sleep(delay).await;
                            continue 'attempts;
                        }
                        $crate::txn::trace::give_up(
                            &e,
                            attempt + 1,
                            started.elapsed(),
                            TRANSIENT_TRANSACTION_ERROR,
                        );
                    } else {
                        $crate::txn::trace::aborted(&e, attempt + 1);
                    }
                    break 'attempts ::core::result::Result::Err($crate::error::Error::from(e));
                }
            };
            loop {
                match session.commit_transaction().await {
                    ::core::result::Result::Ok(()) => {
                        $crate::txn::trace::committed(attempt + 1, started.elapsed());
                        break 'attempts ::core::result::Result::Ok(value);
                    }
                    ::core::result::Result::Err(e)
                        if e.contains_label(UNKNOWN_TRANSACTION_COMMIT_RESULT)
                            && started.elapsed() < $crate::txn::RETRY_FOR =>
                    {
                        let delay = $crate::txn::backoff(attempt);
                        attempt += 1;
                        $crate::txn::trace::retry_commit(&e, attempt, delay);
                        ::tokio::time::sleep(delay).await;
                    }
                    ::core::result::Result::Err(e)
                        if e.contains_label(TRANSIENT_TRANSACTION_ERROR)
                            && started.elapsed() < $crate::txn::RETRY_FOR =>
                    {
                        let delay = $crate::txn::backoff(attempt);
                        attempt += 1;
                        $crate::txn::trace::retry_transaction(&e, attempt, delay, true);
                        ::tokio::time::sleep(delay).await;
                        continue 'attempts;
                    }
                    ::core::result::Result::Err(e) => {
                        if let ::core::option::Option::Some(label) = [
                            UNKNOWN_TRANSACTION_COMMIT_RESULT,
                            TRANSIENT_TRANSACTION_ERROR,
                        ]
                        .into_iter()
                        .find(|l| e.contains_label(l))
                        {
                            $crate::txn::trace::give_up(&e, attempt + 1, started.elapsed(), label);
                        } else {
                            $crate::txn::trace::aborted(&e, attempt + 1);
                        }
                        break 'attempts ::core::result::Result::Err($crate::error::Error::from(e));
                    }
                }
            }
        };
        outcome
    }};
}

pub(crate) use transact;

/// `in_session!(action, session)`: awaits a driver action in `session: Option<&mut
/// ClientSession>` when there is one, on its own otherwise.
macro_rules! in_session {
    ($action:expr, $session:expr) => {
        match $session {
            ::core::option::Option::Some(s) => $action.session(s).await,
            ::core::option::Option::None => $action.await,
        }
    };
}

pub(crate) use in_session;

/// `collect_in!(action, session)`: runs a `find` or `aggregate` action in `session:
/// Option<&mut ClientSession>` when there is one (the cursor's batches read through it), on its
/// own otherwise, and collects its documents: `mongodb::error::Result<Vec<Document>>`.
macro_rules! collect_in {
    ($action:expr, $session:expr) => {
        async {
            match $session {
                ::core::option::Option::Some(s) => {
                    let mut cursor = $action.session(&mut *s).await?;
                    let mut all = ::std::vec::Vec::new();
                    while let ::core::option::Option::Some(d) =
                        cursor.next(&mut *s).await.transpose()?
                    {
                        all.push(d);
                    }
                    ::mongodb::error::Result::Ok(all)
                }
                ::core::option::Option::None => {
                    ::futures_util::TryStreamExt::try_collect($action.await?).await
                }
            }
        }
        .await
    };
}

pub(crate) use collect_in;

/// A handle's `in_transaction`, with the handle's own doc comment: the same handle, `Clone`d,
/// with its `tx: Option<Transaction>` field set to the caller's transaction.
macro_rules! in_transaction {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        #[must_use]
        pub fn in_transaction(&self, tx: &$crate::txn::Transaction) -> Self {
            let mut bound = self.clone();
            bound.tx = Some(tx.clone());
            bound
        }
    };
}
pub(crate) use in_transaction;

/// A handle the model handle leads to ([`ModelCollection::subset`](crate::model::ModelCollection::subset),
/// [`tree`](crate::model::ModelCollection::tree), ...): bound to the model handle's transaction, if it
/// has one, when the handle takes part in transactions.
#[doc(hidden)]
pub trait Bound: Sized {
    /// The handle in `tx`, or as it is.
    fn bound(self, tx: Option<&Transaction>) -> Self;
}

/// [`Bound`] for handles: by their `in_transaction`, or as they are for a handle that never
/// takes part in a transaction (`as_is`).
macro_rules! bound {
    (impl<$($g:ident $(: $b:path)?),*> $ty:ty) => {
        impl<$($g $(: $b)?),*> $crate::txn::Bound for $ty {
            fn bound(self, tx: Option<&$crate::txn::Transaction>) -> Self {
                match tx {
                    Some(tx) => self.in_transaction(tx),
                    None => self,
                }
            }
        }
    };
    (as_is impl<$($g:ident $(: $b:path)?),*> $ty:ty) => {
        impl<$($g $(: $b)?),*> $crate::txn::Bound for $ty {
            fn bound(self, _tx: Option<&$crate::txn::Transaction>) -> Self {
                self
            }
        }
    };
}
pub(crate) use bound;

/// A transaction of the caller's, in which several operations of several patterns run
/// together: bind a handle to it with its `in_transaction(&tx)`, run the operations, then
/// [`commit`](Transaction::commit) (or [`abort`](Transaction::abort)). Every write of a bound
/// handle runs in it (with what derives from it: copies, counts), and none is visible to others
/// until the commit; an aborted transaction leaves the database as it was. Every read of a
/// bound handle runs in it too, and sees its writes before the commit; a bound handle's `check`
/// and `repair` read every document of the model in it (whole, then audited a page at a time:
/// keep them to small collections). A handle is bound to a transaction of its own client: the database
/// handle it was made from must come from the same `mongodb::Client` as the transaction's
/// (the driver refuses a session of another client, and the transaction then ends).
///
/// Inside a caller's transaction, an operation runs once: a `TransientTransactionError` (a
/// write conflict, a failover) is returned to the caller as [`Error::Driver`](crate::error::Error::Driver)
/// with its label ([`Error::is_transient`](crate::error::Error::is_transient)), and the caller aborts
/// and runs the whole transaction again. Needs a replica set or a sharded cluster.
///
/// Which errors leave it usable:
/// - a refusal the toolkit makes before the operation writes anything ([`AlreadyBooked`], an
///   [`InvalidValue`], [`InvalidKey`] or [`KeptField`] of the caller's input, a [`NotFound`] of a slot, a node
///   or a document found by a read, ...): the transaction goes
///   on, and may still commit the operations that succeeded;
/// - an error from the server ([`DuplicateKey`], [`DocumentTooLarge`] from the server, an
///   `$inc` of the document's own field past the 64-bit range, a write conflict) or the
///   network: MongoDB ends the transaction
///   there, and nothing written in it is kept. [`ended`](Transaction::ended) then says
///   `aborted by the server`;
/// - a refusal made once the operation had written (a count's or sum's target that turns out
///   missing when the count is written, a computed sum that the write would take out of its
///   range, a two-way owner still named by children when it is
///   deleted): the toolkit aborts the transaction, since MongoDB cannot take back part of it,
///   and nothing written in it is kept. [`ended`](Transaction::ended) then says
///   `aborted after a refusal`.
///
/// In the last two cases the operation returns its error, typed; from then on bound handles
/// send nothing and `commit` returns [`Error::TransactionEnded`](crate::error::Error::TransactionEnded),
/// which is not transient (`abort` is `Ok`). Run the whole transaction again only when
/// [`Error::is_transient`](crate::error::Error::is_transient) said so for the operation's error (a
/// write conflict): a duplicate key would fail the same way again.
///
/// Once committed or aborted, a handle still bound to it sends nothing:
/// [`Error::TransactionEnded`](crate::error::Error::TransactionEnded). So does a second `commit` or
/// `abort`. Dropping an open `Transaction` (every handle bound to it dropped too) ends its
/// session, which aborts it.
///
/// [`AlreadyBooked`]: crate::error::Error::AlreadyBooked
/// [`InvalidValue`]: crate::error::Error::InvalidValue
/// [`InvalidKey`]: crate::error::Error::InvalidKey
/// [`KeptField`]: crate::error::Error::KeptField
/// [`NotFound`]: crate::error::Error::NotFound
/// [`DuplicateKey`]: crate::error::Error::DuplicateKey
/// [`DocumentTooLarge`]: crate::error::Error::DocumentTooLarge
///
/// The driver's own operations join it through [`Transaction::session`]:
/// `coll.insert_one(doc).session(&mut *tx.session().await)`.
///
/// ```no_run
/// # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
/// use pattern_runtime::Transaction;
/// let tx = Transaction::start(&db).await?;
/// // ... `handle.in_transaction(&tx).operation(..)` for each operation ...
/// tx.commit().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Transaction {
    session: std::sync::Arc<tokio::sync::Mutex<mongodb::ClientSession>>,
    /// 0 while open, then [`COMMITTED`] or [`ABORTED`].
    ended: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

/// The server's code for an operation naming a transaction it no longer has.
const NO_SUCH_TRANSACTION: i32 = 251;

const COMMITTED: u8 = 1;
const ABORTED: u8 = 2;
/// An operation in it failed at the server (or the network): the server aborted it.
const FAILED: u8 = 3;
/// An operation in it was refused once it had written: the toolkit aborted it.
const REFUSED: u8 = 4;

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").finish_non_exhaustive()
    }
}

impl Transaction {
    /// Starts a session on `db`'s client and a transaction in it.
    pub async fn start(db: &mongodb::Database) -> crate::error::Result<Transaction> {
        let mut session = db.client().start_session().await?;
        session.start_transaction().await?;
        tracing::debug!(target: "pattern_runtime::txn", "caller's transaction started");
        Ok(Transaction {
            session: std::sync::Arc::new(tokio::sync::Mutex::new(session)),
            ended: std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0)),
        })
    }

    /// The session, for the driver's own operations in this transaction
    /// (`.session(&mut *tx.session().await)`). Held until the guard is dropped: the bound
    /// handles wait for it meanwhile.
    pub async fn session(&self) -> tokio::sync::MutexGuard<'_, mongodb::ClientSession> {
        self.session.lock().await
    }

    /// The session of `tx`, held for one operation, or `None` without a transaction: the
    /// `Option<&mut ClientSession>` of a bound handle's reads and writes (`.as_deref_mut()`).
    ///
    /// [`Error::TransactionEnded`](crate::error::Error::TransactionEnded) once `tx` was committed or
    /// aborted: the operation would otherwise run outside any transaction.
    pub(crate) async fn session_of(
        tx: Option<&Transaction>,
    ) -> crate::error::Result<Option<tokio::sync::MutexGuard<'_, mongodb::ClientSession>>> {
        match tx {
            Some(tx) => match tx.ended() {
                Some(how) => Err(crate::error::Error::TransactionEnded { how }),
                None => Ok(Some(tx.session().await)),
            },
            None => Ok(None),
        }
    }

    /// How it ended, once it did: `committed`, `aborted` (by [`abort`](Self::abort)),
    /// `aborted by the server` (an operation in it failed at the server) or `aborted after a
    /// refusal` (an operation in it was refused once it had written); `None` while it is open.
    pub fn ended(&self) -> Option<&'static str> {
        match self.ended.load(std::sync::atomic::Ordering::Acquire) {
            COMMITTED => Some("committed"),
            ABORTED => Some("aborted"),
            FAILED => Some("aborted by the server"),
            REFUSED => Some("aborted after a refusal"),
            _ => None,
        }
    }

    /// After an operation in the transaction returned `error`: an error of the server's or of
    /// the network ended the transaction at the server, and a refusal made once the operation
    /// had written must not leave part of it: either way it is marked ended and aborted. A
    /// refusal made before anything was written leaves it as it was.
    pub(crate) async fn failed(
        &self,
        session: &mut mongodb::ClientSession,
        error: &mongodb::error::Error,
    ) {
        let state = match error.get_custom::<crate::error::Refusal>() {
            Some(r) if r.ends_transaction && crate::error::refused_by_server(r) => FAILED,
            Some(r) if r.ends_transaction => REFUSED,
            Some(_) => return,
            // Another custom error of the toolkit's: made before its operation wrote.
            None if matches!(*error.kind, mongodb::error::ErrorKind::Custom(_)) => return,
            None => FAILED,
        };
        if self
            .ended
            .compare_exchange(
                0,
                state,
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Acquire,
            )
            .is_ok()
        {
            let _ = session.abort_transaction().await;
            tracing::debug!(
                target: "pattern_runtime::txn",
                error = %error,
                how = self.ended().unwrap_or_default(),
                "caller's transaction ended: an operation in it failed"
            );
        }
    }

    /// Commits every write made in the transaction. An `UnknownTransactionCommitResult` may be
    /// retried by calling `commit` again.
    pub async fn commit(&self) -> crate::error::Result<()> {
        if let Some(how) = self.ended() {
            return Err(crate::error::Error::TransactionEnded { how });
        }
        let mut session = self.session.lock().await;
        if let Err(e) = session.commit_transaction().await {
            if crate::error::server_code(&e) == Some(NO_SUCH_TRANSACTION) {
                // Ended at the server (an operation's error, a time limit) by an operation the
                // toolkit did not see fail (the driver's own, through `session()`).
                self.failed(&mut session, &e).await;
                return Err(crate::error::Error::TransactionEnded {
                    how: "aborted by the server",
                });
            }
            return Err(e.into());
        }
        self.ended
            .store(COMMITTED, std::sync::atomic::Ordering::Release);
        tracing::debug!(target: "pattern_runtime::txn", "caller's transaction committed");
        Ok(())
    }

    /// Aborts the transaction: nothing written in it is kept.
    ///
    /// Aborting a transaction an operation's error already ended (`aborted by the server`,
    /// `aborted after a refusal`) is `Ok`.
    pub async fn abort(&self) -> crate::error::Result<()> {
        if matches!(
            self.ended.load(std::sync::atomic::Ordering::Acquire),
            FAILED | REFUSED
        ) {
            return Ok(());
        }
        if let Some(how) = self.ended() {
            return Err(crate::error::Error::TransactionEnded { how });
        }
        // Ended whatever the server answers: the caller gave it up.
        self.ended
            .store(ABORTED, std::sync::atomic::Ordering::Release);
        self.session.lock().await.abort_transaction().await?;
        tracing::debug!(target: "pattern_runtime::txn", "caller's transaction aborted");
        Ok(())
    }
}

/// The events of [`transact!`], one function each: the macro's expansion stays free of `tracing`
/// paths, and every event has the target `pattern_runtime::txn` wherever the macro is used.
/// Field values are computed only when a subscriber enables the event.
pub(crate) mod trace {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use mongodb::error::Error as DriverError;

    use super::RETRY_FOR;
    use crate::error::server_code;

    /// The events' target: the module's, without `::trace`.
    const TARGET: &str = "pattern_runtime::txn";

    /// Whether the fallback without transactions was reported at `WARN` in this process.
    static FALLBACK_REPORTED: AtomicBool = AtomicBool::new(false);

    fn millis(d: Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    /// Try number `attempt` (from 1) failed with a `TransientTransactionError` (in its body, or
    /// at commit): the whole transaction runs again after `delay`.
    pub(crate) fn retry_transaction(e: &DriverError, attempt: u32, delay: Duration, commit: bool) {
        tracing::info!(
            target: TARGET,
            attempt,
            code = server_code(e),
            label = mongodb::error::TRANSIENT_TRANSACTION_ERROR,
            during = if commit { "commit" } else { "body" },
            delay_ms = millis(delay),
            error = %e,
            "transaction failed with a transient error; running it again"
        );
    }

    /// Try number `attempt` (from 1) was a commit whose result is unknown: the commit is sent
    /// again after `delay` (the body is not run again).
    pub(crate) fn retry_commit(e: &DriverError, attempt: u32, delay: Duration) {
        tracing::info!(
            target: TARGET,
            attempt,
            code = server_code(e),
            label = mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT,
            delay_ms = millis(delay),
            error = %e,
            "transaction commit result unknown; committing again"
        );
    }

    /// A retryable error after [`RETRY_FOR`] of retries: it is returned.
    pub(crate) fn give_up(e: &DriverError, attempts: u32, elapsed: Duration, label: &str) {
        tracing::warn!(
            target: TARGET,
            attempts,
            code = server_code(e),
            label,
            elapsed_ms = millis(elapsed),
            retry_for_s = RETRY_FOR.as_secs(),
            error = %e,
            "transaction still failing after retrying for the whole retry period; giving up"
        );
    }

    /// An error that is not retried ended the transaction: nothing it wrote is kept. The error
    /// is returned to the caller, who decides how loud it is.
    pub(crate) fn aborted(e: &DriverError, attempts: u32) {
        tracing::debug!(
            target: TARGET,
            attempts,
            code = server_code(e),
            error = %e,
            "transaction aborted; returning the error"
        );
    }

    /// The transaction committed after `attempts` tries.
    pub(crate) fn in_caller_transaction<T>(result: &Result<T, DriverError>) {
        match result {
            Ok(_) => tracing::debug!("written in the caller's transaction"),
            Err(e) => tracing::debug!(
                code = crate::error::server_code(e),
                error = %e,
                "failed in the caller's transaction: the caller aborts it"
            ),
        }
    }

    pub(crate) fn committed(attempts: u32, elapsed: Duration) {
        tracing::debug!(
            target: TARGET,
            attempts,
            elapsed_ms = millis(elapsed),
            "transaction committed"
        );
    }

    /// The server has no transactions (code 20): `WARN` the first time in the process, `DEBUG`
    /// afterwards.
    pub(crate) fn without_transactions(e: &DriverError) {
        let first = !FALLBACK_REPORTED.load(Ordering::Relaxed)
            && !FALLBACK_REPORTED.swap(true, Ordering::Relaxed);
        if first {
            tracing::warn!(
                target: TARGET,
                code = server_code(e),
                error = %e,
                "the deployment has no transactions (a standalone server): pattern writes run \
                 without one, unprotected, in the order each pattern documents; a failure between \
                 two writes leaves them partly applied (reported once per process, then at debug)"
            );
        } else {
            tracing::debug!(
                target: TARGET,
                code = server_code(e),
                "no transactions: the writes run unprotected, in the documented order"
            );
        }
    }

    /// The writes without a transaction failed: the error is returned.
    pub(crate) fn failed_without_transaction(e: &DriverError) {
        tracing::debug!(
            target: TARGET,
            code = server_code(e),
            error = %e,
            "writes without a transaction failed; returning the error"
        );
    }
}

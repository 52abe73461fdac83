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
/// evaluates to `crate::Result<T>`.
macro_rules! transact {
    ($db:expr, |$session:ident| $body:expr) => {{
        use ::mongodb::error::{TRANSIENT_TRANSACTION_ERROR, UNKNOWN_TRANSACTION_COMMIT_RESULT};
        let started = ::std::time::Instant::now();
        let mut attempt: u32 = 0;
        let mut session = $db.client().start_session().await?;
        let outcome: $crate::error::Result<_> = 'attempts: loop {
            session.start_transaction().await?;
            let result = {
                let $session = ::core::option::Option::Some(&mut session);
                $body.await
            };
            let value = match result {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(e) => {
                    let _ = session.abort_transaction().await;
                    if $crate::error::server_code(&e) == Some($crate::error::ILLEGAL_OPERATION) {
                        // No transactions here: run once, in the documented order, unprotected.
                        let $session: ::core::option::Option<&mut ::mongodb::ClientSession> =
                            ::core::option::Option::None;
                        break 'attempts $body.await.map_err($crate::error::Error::from);
                    }
                    if e.contains_label(TRANSIENT_TRANSACTION_ERROR)
                        && started.elapsed() < $crate::txn::RETRY_FOR
                    {
                        ::tokio::time::sleep($crate::txn::backoff(attempt)).await;
                        attempt += 1;
                        continue 'attempts;
                    }
                    break 'attempts ::core::result::Result::Err($crate::error::Error::from(e));
                }
            };
            loop {
                match session.commit_transaction().await {
                    ::core::result::Result::Ok(()) => {
                        break 'attempts ::core::result::Result::Ok(value)
                    }
                    ::core::result::Result::Err(e)
                        if e.contains_label(UNKNOWN_TRANSACTION_COMMIT_RESULT)
                            && started.elapsed() < $crate::txn::RETRY_FOR =>
                    {
                        ::tokio::time::sleep($crate::txn::backoff(attempt)).await;
                        attempt += 1;
                    }
                    ::core::result::Result::Err(e)
                        if e.contains_label(TRANSIENT_TRANSACTION_ERROR)
                            && started.elapsed() < $crate::txn::RETRY_FOR =>
                    {
                        ::tokio::time::sleep($crate::txn::backoff(attempt)).await;
                        attempt += 1;
                        continue 'attempts;
                    }
                    ::core::result::Result::Err(e) => {
                        break 'attempts ::core::result::Result::Err($crate::error::Error::from(e))
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

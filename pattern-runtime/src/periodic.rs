//! Background runs on an interval: the task behind the computed pattern's refresher
//! ([`ComputedFields::refresh_every`](crate::ComputedFields::refresh_every)) and the
//! preallocation pattern's allocator ([`Slots::allocate_every`](crate::Slots::allocate_every)).
//!
//! # Tracing
//!
//! A failed run is an `ERROR` event of target `pattern_runtime::periodic`, with `operation` (what
//! runs: `computed.recompute_all`), `model` and `run` (its number); a [`Periodic`] dropped with
//! failed runs nobody read is a `WARN` event of the same target.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// An operation run in a Tokio task now and then every interval, each run's outcome kept until
/// read. Stop it with [`stop`](Periodic::stop), which waits for the run under way and returns
/// every outcome not read yet; dropping it stops it too, and a `WARN` event says how many
/// failed runs nobody read.
pub struct Periodic<T> {
    operation: &'static str,
    model: &'static str,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<u64>>,
    reports: mpsc::UnboundedReceiver<Result<T>>,
}

impl<T> fmt::Debug for Periodic<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Periodic")
            .field("operation", &self.operation)
            .field("model", &self.model)
            .field("running", &self.task.is_some())
            .finish()
    }
}

/// What a [`Periodic`] did, from [`Periodic::stop`].
#[derive(Debug)]
pub struct Stopped<T> {
    /// Runs started.
    pub runs: u64,
    /// The outcomes not read by [`Periodic::next`], oldest first: failed runs among them.
    pub unread: Vec<Result<T>>,
}

impl<T> Stopped<T> {
    /// The failed runs among the unread outcomes.
    pub fn errors(&self) -> impl Iterator<Item = &Error> {
        self.unread.iter().filter_map(|r| r.as_ref().err())
    }
}

impl<T: Send + 'static> Periodic<T> {
    /// Runs `run` now, then every `interval` after each run ends, until stopped. `operation`
    /// and `model` name it in events.
    pub(crate) fn start<F, Fut>(
        operation: &'static str,
        model: &'static str,
        interval: Duration,
        mut run: F,
    ) -> Self
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send,
    {
        let (stop, mut stopped) = oneshot::channel::<()>();
        let (report, reports) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut runs = 0u64;
            loop {
                let outcome = run().await;
                runs += 1;
                if let Err(e) = &outcome {
                    tracing::error!(
                        target: "pattern_runtime::periodic",
                        operation,
                        model,
                        run = runs,
                        error = %e,
                        "a background run failed; the next run is in one interval"
                    );
                }
                if report.send(outcome).is_err() {
                    return runs;
                }
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = &mut stopped => return runs,
                }
            }
        });
        Periodic {
            operation,
            model,
            stop: Some(stop),
            task: Some(task),
            reports,
        }
    }
}

impl<T> Periodic<T> {
    /// The next run's outcome (waiting for it); `None` once the task has ended.
    pub async fn next(&mut self) -> Option<Result<T>> {
        self.reports.recv().await
    }

    /// Stops after the run under way, and returns every outcome not read yet.
    pub async fn stop(mut self) -> Stopped<T> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let runs = match self.task.take() {
            Some(task) => task.await.unwrap_or(0),
            None => 0,
        };
        let mut unread = Vec::new();
        while let Ok(r) = self.reports.try_recv() {
            unread.push(r);
        }
        Stopped { runs, unread }
    }
}

impl<T> Drop for Periodic<T> {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let mut failed = 0;
        while let Ok(r) = self.reports.try_recv() {
            failed += usize::from(r.is_err());
        }
        if failed > 0 {
            tracing::warn!(
                target: "pattern_runtime::periodic",
                operation = self.operation,
                model = self.model,
                failed,
                "a background task was dropped with failed runs nobody read: call stop() and read them"
            );
        }
    }
}

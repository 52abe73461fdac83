//! Background runs on an interval, the one background-task type of the toolkit: the task behind
//! the computed pattern's refresher
//! ([`ComputedFields::refresh_every`](crate::computed::ComputedFields::refresh_every)), the
//! preallocation pattern's allocator ([`Slots::allocate_every`](crate::preallocation::Slots::allocate_every))
//! and a batched counter's flusher
//! ([`BatchedCounter::flush_every`](crate::approximation::BatchedCounter::flush_every)).
//!
//! # Tracing
//!
//! A failed run is an `ERROR` event of target `pattern_runtime::periodic`, with `operation` (what
//! runs: `computed.refresh`), `model` and `run` (its number); a [`Periodic`] dropped with
//! failed runs nobody read is a `WARN` event of the same target.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// How many outcomes of its periodic runs a [`Periodic`] keeps unread; later ones are counted in
/// [`Stopped::dropped`] (a failed one is still an `ERROR` event). The last run's is kept too.
const UNREAD_KEPT: usize = 64;

/// An operation run in a Tokio task now and then every interval, each run's outcome kept until
/// read: 64 at most (later ones are only counted), plus a last run's, which is always kept.
/// Stop it with [`stop`](Periodic::stop), which waits for the run under way (and the last run,
/// for a task that has one, as a batched counter's flusher does) and returns every outcome not
/// read yet; dropping it stops it too, and a `WARN` event says how many failed runs nobody read.
pub struct Periodic<T> {
    operation: &'static str,
    model: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<(u64, u64)>>,
    reports: mpsc::Receiver<Result<T>>,
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
    /// The outcomes not read by [`Periodic::next`], oldest first: failed runs among them. For a
    /// task with a last run on stop, its outcome is the last one.
    pub unread: Vec<Result<T>>,
    /// Outcomes not kept because 64 were already waiting to be read (a failed one was still an
    /// `ERROR` event). A last run's outcome is never dropped.
    pub dropped: u64,
}

impl<T> Stopped<T> {
    /// The failed runs among the unread outcomes.
    pub fn errors(&self) -> impl Iterator<Item = &Error> {
        self.unread.iter().filter_map(|r| r.as_ref().err())
    }

    /// The unread outcomes of the runs, or the first failed run's error: at shutdown,
    /// `task.stop().await.into_result()?`.
    pub fn into_result(self) -> Result<Vec<T>> {
        self.unread.into_iter().collect()
    }
}

impl<T: Send + 'static> Periodic<T> {
    /// Runs `run` now, then every `interval` after each run ends, until stopped; with
    /// `last_run`, once more when stopped (or dropped), so that what the runs keep up with
    /// (a batched counter's pending counts) is not left behind. `operation` and `model` name it
    /// in events.
    pub(crate) fn start<F, Fut>(
        operation: &'static str,
        model: impl Into<String>,
        interval: Duration,
        last_run: bool,
        mut run: F,
    ) -> Self
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send,
    {
        let model = model.into();
        let (stop, mut stopped) = oneshot::channel::<()>();
        // One place more than the outcomes kept: the last run's, which is never dropped.
        let (report, reports) = mpsc::channel(UNREAD_KEPT + 1);
        let name = model.clone();
        let task = tokio::spawn(async move {
            let (mut runs, mut dropped) = (0u64, 0u64);
            let mut stopping = false;
            loop {
                let outcome = run().await;
                runs += 1;
                if let Err(e) = &outcome {
                    tracing::error!(
                        target: "pattern_runtime::periodic",
                        operation,
                        model = name.as_str(),
                        run = runs,
                        error = %e,
                        "a background run failed; the next run is in one interval"
                    );
                }
                if !stopping && report.capacity() <= 1 {
                    dropped += 1;
                } else {
                    match report.try_send(outcome) {
                        Ok(()) => {}
                        Err(TrySendError::Full(_)) => dropped += 1,
                        // The handle is gone: its drop asked to stop, seen below.
                        Err(TrySendError::Closed(_)) => {}
                    }
                }
                if stopping {
                    return (runs, dropped);
                }
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = &mut stopped => {
                        if !last_run {
                            return (runs, dropped);
                        }
                        stopping = true;
                    }
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

    /// Stops after the run under way (and the last run, for a task that has one), and returns
    /// every outcome not read yet.
    pub async fn stop(mut self) -> Stopped<T> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let (runs, dropped) = match self.task.take() {
            Some(task) => task.await.unwrap_or((0, 0)),
            None => (0, 0),
        };
        let mut unread = Vec::new();
        while let Ok(r) = self.reports.try_recv() {
            unread.push(r);
        }
        Stopped {
            runs,
            unread,
            dropped,
        }
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
                model = self.model.as_str(),
                failed,
                "a background task was dropped with failed runs nobody read: call stop() and read them"
            );
        }
    }
}

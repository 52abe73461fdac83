//! The one way long jobs report where they are: [`Progress`].

/// Where a long job is: what its progress callback receives after each step.
///
/// Every job that may run long (the [doctor](mod@crate::doctor),
/// [`ModelCollection::converge_with_progress`](crate::model::ModelCollection::converge_with_progress),
/// [`Slots::allocate_with_progress`](crate::preallocation::Slots::allocate_with_progress)) takes a callback
/// that receives a [`Progress`] after each step, the same type for every job, so one adapter
/// (a progress bar, a log line, a metric) serves them all. A step is what the job does at a
/// time: a collection for the doctor, a batch of documents or slots for the others. The job's
/// own result (what it found, what it wrote) is what it returns at the end.
///
/// One adapter for every job, here a log line per step (`examples/doctor` draws an
/// [indicatif](https://docs.rs/indicatif) bar the same way):
///
/// ```
/// use pattern_runtime::{DoctorOptions, Progress};
///
/// fn log(p: &Progress) {
///     match p.fraction() {
///         Some(f) => println!("{}: {} {} ({:.0}%)", p.job, p.done, p.unit, f * 100.0),
///         None => println!("{}: {} {}", p.job, p.done, p.unit),
///     }
/// }
///
/// let options = DoctorOptions::new().on_progress(log);
/// // and, with the same function:
/// // User::collection(&db).converge_with_progress(log).await?;
/// // Room::collection(&db).slots().allocate_with_progress(grid, log).await?;
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// The job, as its tracing span names it: `"doctor"`, `"schema_version.converge"`,
    /// `"preallocation.allocate"`.
    pub job: &'static str,
    /// How many units are done, this step's included.
    pub done: u64,
    /// How many units there are, when the job knows (for a collection's documents, the
    /// estimate its count gave when the job started: `done` may pass it).
    pub total: Option<u64>,
    /// What a unit is, plural: `"collections"`, `"documents"`, `"slots"`.
    pub unit: &'static str,
    /// What the step just done worked on, when it has a name (the doctor: the collection).
    pub item: Option<&'static str>,
}

impl Progress {
    /// A job's progress: `done` of `total` `unit`.
    pub(crate) fn new(
        job: &'static str,
        unit: &'static str,
        done: u64,
        total: Option<u64>,
    ) -> Self {
        Progress {
            job,
            done,
            total,
            unit,
            item: None,
        }
    }

    /// The same, naming the step's item.
    pub(crate) fn item(mut self, item: &'static str) -> Self {
        self.item = Some(item);
        self
    }

    /// `done` as a fraction of `total`, between 0 and 1, when the total is known and not zero.
    pub fn fraction(&self) -> Option<f64> {
        match self.total {
            Some(0) | None => None,
            Some(total) => Some((self.done as f64 / total as f64).min(1.0)),
        }
    }
}

//! What the doctor is told (`DoctorOptions`, the progress it reports) and what it found
//! (`DoctorReport`).

use super::*;

/// The callback, shared by the options' clones (one run calls it at a time).
type ProgressFn = Arc<std::sync::Mutex<dyn FnMut(&Progress) + Send>>;

/// How much the doctor reads. [`DoctorOptions::default()`]: 100 documents per collection, 5 s
/// per command, no progress callback.
#[derive(Clone)]
pub struct DoctorOptions {
    pub(super) sample_size: u32,
    pub(super) max_time: Duration,
    pub(super) unused_after: Duration,
    pub(super) progress: Option<ProgressFn>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            sample_size: 100,
            max_time: Duration::from_secs(5),
            unused_after: Duration::from_secs(24 * 3600),
            progress: None,
        }
    }
}

impl fmt::Debug for DoctorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DoctorOptions")
            .field("sample_size", &self.sample_size)
            .field("max_time", &self.max_time)
            .field("unused_after", &self.unused_after)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl DoctorOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many documents to draw from each collection (`$sample`); at least 1.
    #[must_use]
    pub fn sample_size(mut self, documents: u32) -> Self {
        self.sample_size = documents.max(1);
        self
    }

    /// How long an index's accesses must have been counted (since its `$indexStats`
    /// `accesses.since`: the index's creation or the server's start) before 0 accesses make it
    /// unused; one day by default. An index counted for less is not judged: its collection's
    /// unused-index check is listed in [`DoctorReport::skipped`] with how long it was counted.
    /// `Duration::ZERO` judges every index.
    #[must_use]
    pub fn unused_after(mut self, counted_for: Duration) -> Self {
        self.unused_after = counted_for;
        self
    }

    /// The time limit of each command (`maxTimeMS`).
    #[must_use]
    pub fn max_time(mut self, limit: Duration) -> Self {
        self.max_time = limit;
        self
    }

    /// Called after each collection with the run's [`Progress`] (`item`: the collection), for a
    /// progress bar on long runs.
    #[must_use]
    pub fn on_progress(mut self, progress: impl FnMut(&Progress) + Send + 'static) -> Self {
        self.progress = Some(Arc::new(std::sync::Mutex::new(progress)));
        self
    }
}

/// A check the server could not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The check.
    pub check: Check,
    /// The collection, when the check was skipped for one collection only.
    pub collection: Option<String>,
    /// Why: the server's error, or what the server is.
    pub reason: String,
}

/// What [`doctor`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DoctorReport {
    /// Every problem, collection by collection.
    pub findings: Vec<Finding>,
    /// The checks that could not run.
    pub skipped: Vec<Skipped>,
    /// How many documents were sampled, per collection.
    pub sampled: Vec<(String, usize)>,
    /// The database's [maintainers](crate::maintainer) as they last stored themselves: whether
    /// each runs (holds its lease), its lag, its repairs. Empty when none ever ran.
    pub maintainers: Vec<crate::maintainer::Stored>,
}

impl DoctorReport {
    /// The findings of one check.
    pub fn with_check(&self, check: Check) -> impl Iterator<Item = &Finding> + '_ {
        self.findings.iter().filter(move |f| f.check == check)
    }

    /// No finding: nothing that ran found anything wrong. A skipped check does not count
    /// against it: a check the server cannot run, or the unused-index check while the indexes
    /// have been counted for less than [`DoctorOptions::unused_after`] (always so on a database
    /// just synced). [`ran_everything`](Self::ran_everything) says whether every check ran.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Whether every check ran: none is in [`skipped`](Self::skipped).
    pub fn ran_everything(&self) -> bool {
        self.skipped.is_empty()
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        for s in &self.skipped {
            let on = s
                .collection
                .as_deref()
                .map_or(String::new(), |c| format!(" on {c}"));
            writeln!(f, "[skipped] {}{on}: {}", s.check, s.reason)?;
        }
        for m in &self.maintainers {
            let state = if m.running() {
                "running"
            } else {
                "not running"
            };
            let lag = m
                .lag
                .map_or(String::new(), |lag| format!(", lag {} ms", lag.as_millis()))
                + &m.behind
                    .map_or(String::new(), |n| format!(", {n} events behind"));
            writeln!(
                f,
                "[maintainer] {}: {state}, {} events applied{lag}, {}{}",
                m.name,
                m.applied,
                plural(m.repairs.len(), "full repair"),
                m.repairing
                    .as_ref()
                    .map_or(String::new(), |why| format!(", one under way ({why})"))
            )?;
            if m.skipped_total > 0 {
                writeln!(
                    f,
                    "  {} skipped (their dependents could not be rebuilt); the last: {}",
                    plural(m.skipped_total, "change"),
                    m.skipped.last().map_or(String::new(), |s| format!(
                        "{} `_id` {}: {}",
                        s.model, s.id, s.error
                    ))
                )?;
            }
        }
        let documents: usize = self.sampled.iter().map(|(_, n)| n).sum();
        let findings = plural(self.findings.len(), "finding");
        let skipped = plural(self.skipped.len(), "check");
        let verdict = match (self.findings.len(), self.skipped.len()) {
            (0, 0) => "no findings".to_owned(),
            (0, _) => format!("no findings in the checks that ran; {skipped} skipped (see above)"),
            (_, 0) => findings,
            (_, _) => format!("{findings}; {skipped} skipped (see above)"),
        };
        writeln!(
            f,
            "{verdict} ({}, {} sampled)",
            plural(self.sampled.len(), "collection"),
            plural(documents, "document")
        )
    }
}

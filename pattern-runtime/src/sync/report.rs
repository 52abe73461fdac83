//! What a sync may do (`SyncOptions`) and what it did (`SyncReport`, one `IndexReport` per
//! index).

use super::*;
use crate::validator::{ValidatorOptions, ValidatorReport};

/// What to do with an existing index whose keys or options differ from its declaration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnMismatch {
    /// Leave it and report it as [`IndexStatus::Mismatched`]. The default.
    #[default]
    Report,
    /// Replace it: `collMod` when only `hidden` or `expireAfterSeconds` differ, else drop and
    /// create. Between the drop and the create the collection has no such index; a failed create
    /// after a successful drop is returned as the error.
    Replace,
}

/// What to do with an index on a model's collection that no registered model declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnUnmanaged {
    /// Leave it and report it as [`IndexStatus::Unmanaged`]. The default.
    #[default]
    Keep,
    /// Hide it from the query planner (`collMod ... hidden: true`): it is still maintained, a
    /// unique one still enforced, and unhiding it is instant. It is never dropped.
    Hide,
}

/// The policy of an index sync. [`SyncOptions::default()`] creates missing indexes and changes
/// nothing else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncOptions {
    /// What to do with mismatched indexes.
    pub on_mismatch: OnMismatch,
    /// What to do with unmanaged indexes.
    pub on_unmanaged: OnUnmanaged,
    /// Install the models' server-side validators too, with these options
    /// ([`sync_validators`](crate::validator::sync_validators)); `None` (the default): no.
    pub validators: Option<ValidatorOptions>,
}

impl SyncOptions {
    /// The default policy: create missing indexes, change nothing else.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace mismatched indexes ([`OnMismatch::Replace`]).
    #[must_use]
    pub fn replace_mismatched(mut self) -> Self {
        self.on_mismatch = OnMismatch::Replace;
        self
    }

    /// Hide unmanaged indexes ([`OnUnmanaged::Hide`]).
    #[must_use]
    pub fn hide_unmanaged(mut self) -> Self {
        self.on_unmanaged = OnUnmanaged::Hide;
        self
    }

    /// Install the synced models' validators too, with `options`, before their indexes: the
    /// report's [`validators`](SyncReport::validators) says what was found and done. A
    /// validator is never replaced, tightened or switched to `error` unless `options` asks
    /// ([`ValidatorOptions::replace`]).
    ///
    /// ```no_run
    /// use pattern_runtime::validator::ValidatorOptions;
    /// use pattern_runtime::SyncOptions;
    ///
    /// # async fn start(db: mongodb::Database) -> pattern_runtime::Result<()> {
    /// let options = SyncOptions::new().validators(ValidatorOptions::new());
    /// let report = pattern_runtime::sync(&db).options(&options).await?;
    /// for drift in report.validators.iter().flat_map(|v| v.drifted()) {
    ///     eprintln!("{drift}");
    /// }
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn validators(mut self, options: ValidatorOptions) -> Self {
        self.validators = Some(options);
        self
    }
}

/// What a sync found, or did, for one index.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum IndexStatus {
    /// Declared, and the server has it with the same keys and options.
    InSync,
    /// Declared and missing: created by this sync.
    Created,
    /// Declared, but the server's index differs; left as it is.
    Mismatched {
        /// How it differs (`"name"` first when the declared index exists under another name:
        /// same keys, `unique`, `sparse`, partial filter and collation).
        differences: Vec<Difference>,
    },
    /// Declared and different: replaced under [`OnMismatch::Replace`].
    Replaced {
        /// How it differed.
        differences: Vec<Difference>,
    },
    /// On the collection but declared by no registered model; left as it is.
    Unmanaged {
        /// Whether the index is hidden from the planner.
        hidden: bool,
    },
    /// Unmanaged, and hidden by this sync under [`OnUnmanaged::Hide`] (read back: the server
    /// lists it hidden now).
    HiddenUnmanaged,
    /// Unmanaged: this sync asked the server to hide it under [`OnUnmanaged::Hide`], and the
    /// server acknowledged, but lists it visible still (a server without hidden indexes).
    NotHidden,
}

/// One line of a [`SyncReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct IndexReport {
    /// The collection.
    pub collection: String,
    /// The model that declares the index (`None` for an unmanaged index).
    pub model: Option<&'static str>,
    /// The index name.
    pub name: String,
    /// What was found or done.
    pub status: IndexStatus,
    /// The declaration.
    pub declared: Option<IndexSpec>,
    /// The index as `listIndexes` showed it before this sync changed anything.
    pub existing: Option<Document>,
}

/// What an index sync found and did, index by index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncReport {
    /// One entry per declared index, then one per unmanaged index, collection by collection.
    pub indexes: Vec<IndexReport>,
    /// One entry per model declaring a shard key (see [`shard`](crate::shard)).
    pub shards: Vec<ShardReport>,
    /// The validators, when [`SyncOptions::validators`] asked for them.
    pub validators: Option<ValidatorReport>,
}

impl SyncReport {
    /// Whether every declared index is in sync, every declared shard key in place or not
    /// applicable, every validator asked for as declared (a collection that gets none,
    /// [`NotGenerated`](crate::validator::ValidatorState::NotGenerated), does not count against
    /// it), and nothing was changed.
    pub fn is_in_sync(&self) -> bool {
        use crate::validator::ValidatorState;
        let validators = self.validators.iter().flat_map(|v| &v.models).all(|s| {
            matches!(
                s.state,
                ValidatorState::Unchanged | ValidatorState::NotGenerated { .. }
            )
        });
        validators && self.indexes_and_shards_in_sync()
    }

    fn indexes_and_shards_in_sync(&self) -> bool {
        self.indexes.iter().all(|r| {
            matches!(
                r.status,
                IndexStatus::InSync | IndexStatus::Unmanaged { .. }
            )
        }) && self.shards.iter().all(|s| {
            matches!(
                s.status,
                ShardStatus::InPlace | ShardStatus::NotApplicable { .. }
            )
        })
    }

    /// The entries with the given status kind.
    pub fn with_status<'a>(
        &'a self,
        pred: impl Fn(&IndexStatus) -> bool + 'a,
    ) -> impl Iterator<Item = &'a IndexReport> + 'a {
        self.indexes.iter().filter(move |r| pred(&r.status))
    }

    /// The indexes this sync created.
    pub fn created(&self) -> impl Iterator<Item = &IndexReport> + '_ {
        self.with_status(|s| matches!(s, IndexStatus::Created))
    }

    /// The declared indexes that differ on the server and were left alone.
    pub fn mismatched(&self) -> impl Iterator<Item = &IndexReport> + '_ {
        self.with_status(|s| matches!(s, IndexStatus::Mismatched { .. }))
    }

    /// The indexes no registered model declares.
    pub fn unmanaged(&self) -> impl Iterator<Item = &IndexReport> + '_ {
        self.with_status(|s| {
            matches!(
                s,
                IndexStatus::Unmanaged { .. }
                    | IndexStatus::HiddenUnmanaged
                    | IndexStatus::NotHidden
            )
        })
    }

    /// The entry for an index on a collection.
    pub fn get(&self, collection: &str, name: &str) -> Option<&IndexReport> {
        self.indexes
            .iter()
            .find(|r| r.collection == collection && r.name == name)
    }
}

impl fmt::Display for SyncReport {
    /// One line per index: collection, name, model, status; columns sized to fit; then one
    /// per shard key and one per validator.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = |g: fn(&IndexReport) -> usize| self.indexes.iter().map(g).max().unwrap_or(0);
        let wc = width(|r| r.collection.len());
        let wn = width(|r| r.name.len());
        let wm = width(|r| r.model.map_or(1, str::len));
        for r in &self.indexes {
            let status = match &r.status {
                IndexStatus::InSync => "in sync".to_owned(),
                IndexStatus::Created => "created".to_owned(),
                IndexStatus::Mismatched { differences } => format!(
                    "MISMATCHED, left alone ({})",
                    join(differences.iter().map(ToString::to_string))
                ),
                IndexStatus::Replaced { differences } => format!(
                    "replaced ({})",
                    join(differences.iter().map(|d| d.option.to_owned()))
                ),
                IndexStatus::Unmanaged { hidden: false } => "unmanaged, left alone".to_owned(),
                IndexStatus::Unmanaged { hidden: true } => "unmanaged, hidden".to_owned(),
                IndexStatus::HiddenUnmanaged => "unmanaged, hidden now".to_owned(),
                IndexStatus::NotHidden => {
                    "unmanaged, NOT hidden (the server acknowledged, but lists it visible)"
                        .to_owned()
                }
            };
            writeln!(
                f,
                "{:<wc$}  {:<wn$}  {:<wm$}  {status}",
                r.collection,
                r.name,
                r.model.unwrap_or("-")
            )?;
        }
        for shard in &self.shards {
            writeln!(f, "{shard}")?;
        }
        for validator in self.validators.iter().flat_map(|v| &v.models) {
            writeln!(f, "{validator}")?;
        }
        Ok(())
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join("; ")
}

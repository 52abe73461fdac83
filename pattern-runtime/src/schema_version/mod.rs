#![doc = include_str!("../../docs/schema_version.md")]

use futures_util::future::BoxFuture;

use crate::error::Result;
use crate::finding::{Check, Finding};
use crate::schema::{PatternSpec, Sample};

mod converge;
mod spec;

#[doc(hidden)]
pub use crate::stored::version::{
    read_shape, undeclared, upgrade_step, upgraded, SchemaVersionParts, UpgradeFailure, UpgradeFn,
};
pub use crate::stored::version::{SchemaVersion, SchemaVersionSpec, UpgradeFrom};
pub use converge::{Converged, VersionCounts, CONVERGE_BATCH};
pub use spec::SchemaVersioned;

impl PatternSpec for SchemaVersionSpec {
    /// The version field: every write stores the current version, and only [`converge`](crate::model::ModelCollection::converge) and
    /// the upgrades of the toolkit's own reads and updates change it. A document labelled with
    /// another version than its shape's is unreadable.
    fn kept_fields(
        &'static self,
        _model: &'static crate::schema::ModelSchema,
    ) -> crate::schema::KeptFields {
        vec![(
            self.field(),
            "the schema version names the shape the document is stored in: every write of the \
             model stores the current one, and `converge` rewrites older documents",
        )]
    }

    /// A replacement is the model, at the current version: it may replace an older document.
    fn kept_on_replace(&'static self) -> bool {
        false
    }

    /// The documents per stored version, over the whole collection (one `$group`): a finding
    /// when some are older or of an unknown version.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(async move {
            let counts =
                converge::version_counts(sample.db, sample.model, self, Some(sample.max_time))
                    .await?;
            if counts.older() == 0 && counts.unknown.is_empty() {
                return Ok(Vec::new());
            }
            let mut figure: Vec<String> = counts
                .known
                .iter()
                .map(|(v, n)| {
                    let current = if *v == counts.current {
                        " (current)"
                    } else {
                        ""
                    };
                    format!("{n} at version {v}{current}")
                })
                .collect();
            figure.extend(
                counts
                    .unknown
                    .iter()
                    .map(|(v, n)| format!("{n} at unknown version {v}")),
            );
            let mut fix = Vec::new();
            if counts.older() > 0 {
                fix.push(format!(
                    "`converge()` rewrites the {} older documents at version {}",
                    counts.older(),
                    counts.current
                ));
            }
            if !counts.unknown.is_empty() {
                fix.push(format!(
                    "the {} documents of unknown versions were written by another application \
                     (a newer one?): declare their shapes, or move them away",
                    counts.unknown_total()
                ));
            }
            Ok(vec![sample.finding(
                Check::SchemaVersions,
                self.field(),
                figure.join(", "),
                fix.join("; "),
            )])
        }))
    }
}

//! Schema versioning: `#[schema_version(older(...))]`. Documents of several shapes live side by
//! side in one collection; every read returns the current shape; [`converge`] rewrites the
//! older ones in the background, never with downtime.
//!
//! An application's documents change shape: a `name` becomes `first` and `last`, an amount in
//! cents becomes a decimal. The pattern keeps a version field in each document, reads the
//! older shapes by upgrading them, and lets the stored documents catch up lazily.
//!
//! - **Declaring the versions.** The current struct has a field of type
//!   [`SchemaVersion<N>`](SchemaVersion): `N` is the current version, stored in every write
//!   under the field's serde name. Each older shape is a Rust type (anything `Deserialize`),
//!   listed with its version, ascending and without gaps; each upgrades to the next one (the
//!   last to the model) through `From` or `TryFrom`.
//! - **Reads.** The model's handle ([`get`](crate::ModelCollection::get),
//!   [`find`](crate::ModelCollection::find), [`find_one`](crate::ModelCollection::find_one),
//!   [`find_each`](crate::ModelCollection::find_each)) and the patterns' reads that return the
//!   model (a tree's nodes, a versioned model's revisions, ...) upgrade each older document
//!   in memory. A document of a version the model does not declare (a newer application's) is
//!   [`Error::UnknownSchemaVersion`](crate::Error::UnknownSchemaVersion) naming its `_id` and
//!   version; a document that does not upgrade is [`Error::Upgrade`](crate::Error::Upgrade).
//!   Both affect that document only: [`find_each`](crate::ModelCollection::find_each) returns
//!   the others. The driver's own reads ([`raw`](crate::ModelCollection::raw)) see what is
//!   stored: an older document fails serde there.
//! - **Writes** store the current shape, with the current version: the version field is part
//!   of the struct. An operator update through any of the toolkit's handles (a versioned
//!   model's `update`, the model handle ([`ModelCollection`](crate::ModelCollection)), [`References`](crate::References), a
//!   tree's moves, ...) first rewrites the older documents it matches at the current version
//!   (one `find` more, for a `#[schema_version]` model only), so that it never adds current
//!   fields to an older shape.
//! - **[`converge`]** rewrites every older document at the current version, in resumable
//!   batches, each rewrite conditional on the document as it was read, so that concurrent
//!   writers lose nothing. Each batch reads on from the last `_id` of the one before. On the
//!   embedded server (the `scaling` bench, three runs) it rewrites 3 600 to 5 500 documents/s
//!   at 1 000 older documents, 2 800 to 3 500 at 10 000 and 1 400 to 1 700 at 50 000: the time
//!   per document still grows with the collection, most of it in the first batches.
//! - **Lazily:** a handle from [`writing_back`](crate::ModelCollection::writing_back) rewrites
//!   what its reads upgrade, under the same condition, in one `update` after the read.
//! - **The [doctor](mod@crate::doctor)** counts the documents per stored version, and those of
//!   unknown versions ([`Check::SchemaVersions`]);
//!   [`schema_versions`](crate::ModelCollection::schema_versions) returns the counts.
//!
//! ```
//! use pattern_runtime::schema_version::SchemaVersion;
//! use pattern_runtime::Model;
//! use serde::{Deserialize, Serialize};
//!
//! /// Version 1: one name.
//! #[derive(Deserialize)]
//! struct UserV1 {
//!     #[serde(rename = "_id")]
//!     id: u32,
//!     name: String,
//! }
//!
//! /// Version 2: first and last names.
//! #[derive(Deserialize)]
//! struct UserV2 {
//!     #[serde(rename = "_id")]
//!     id: u32,
//!     first: String,
//!     last: String,
//! }
//!
//! /// Version 3, the current one: an email too.
//! #[derive(Debug, Serialize, Deserialize, Model)]
//! #[model(collection = "users")]
//! #[schema_version(older(UserV1 = 1, UserV2 = 2))]
//! #[serde(rename_all = "camelCase")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: u32,
//!     schema_version: SchemaVersion<3>, // stored as `schemaVersion: 3`
//!     first: String,
//!     last: String,
//!     email: Option<String>,
//! }
//!
//! impl From<UserV1> for UserV2 {
//!     fn from(v1: UserV1) -> Self {
//!         let (first, last) = v1.name.split_once(' ').unwrap_or((&v1.name, ""));
//!         UserV2 { id: v1.id, first: first.into(), last: last.into() }
//!     }
//! }
//!
//! impl From<UserV2> for User {
//!     fn from(v2: UserV2) -> Self {
//!         User { id: v2.id, schema_version: SchemaVersion, first: v2.first, last: v2.last, email: None }
//!     }
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let users = User::collection(&db);
//! // A version 1 document, as an older application wrote it (no version field: version 1).
//! users.database().collection("users").insert_one(bson::doc! { "_id": 1, "name": "Ada Lovelace" }).await?;
//! let ada = users.get(1).await?.unwrap();              // upgraded twice, in memory
//! assert_eq!((ada.first.as_str(), ada.last.as_str()), ("Ada", "Lovelace"));
//! let done = users.converge().await?;                  // rewritten at version 3
//! assert_eq!(done.upgraded, 1);
//! # Ok(()) }
//! ```
//!
//! # The `#[schema_version]` attribute
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `older(UserV1 = 1, UserV2 = 2)` | the older shapes and their versions, ascending, consecutive, ending just below the current one | required |
//! | `missing = 1` | the version of a document without the version field | the first version |
//!
//! The version field is the struct's one field of type `SchemaVersion<N>` (a literal `N`),
//! stored under its serde name, which may be neither `_id` nor another field's. A document
//! whose field is `null` is at the `missing` version, as a `{field: null}` query takes it. An
//! upgrade keeps the document's `_id` (the same by the server's rule: `Int32` 1 read into an
//! `i64` is the same id, and is kept as stored); one that changes it is
//! [`Error::Upgrade`](crate::Error::Upgrade).
//! These are compile errors, each at the offending token: no such field or two of them, a
//! version field stored as `_id` or under another field's name,
//! versions that do not increase or leave a gap, an older version not below the current one,
//! a `missing` version that is not declared, an older shape that does not upgrade to the next
//! (`From`/`TryFrom` missing), and `#[schema_version]` on an enum (a polymorphic model's
//! variants are read by their tag; versions per variant are not supported yet).
//!
//! # With other patterns
//!
//! - A [`#[versioned]`](crate::versioning) model's revisions of older shapes read as the
//!   current type ([`history`](crate::ModelCollection::history),
//!   [`revision`](crate::ModelCollection::revision)). [`converge`] (and a `writing_back`
//!   read) rewrites a versioned document's shape, not its content: it keeps its version and
//!   writes no revision. A `replace` of a copy read before the rewrite (upgraded in memory from
//!   the same content) still goes through at that version, and the revision it archives is
//!   the rewritten document: nothing is lost. An upgrade that computes something new each
//!   time it runs (a timestamp) keeps the saved copy's.
//! - The version field is the pattern's: an update of it through any handle (a versioned
//!   model's `update`, the model handle ([`ModelCollection`](crate::ModelCollection)))
//!   is [`Error::KeptField`](crate::Error::KeptField), nothing written, and the validator
//!   takes only the current version.
//! - Extended-reference copies and subset items are made from the upgraded document, and
//!   `converge` rebuilds what other models keep from each document it rewrites.
//! - The fields other patterns keep in the document (an outlier's items and count, a subset's
//!   array and counters, a counter's snapshot) are written only into current documents: an
//!   outlier or subset push or removal and a counter's `snapshot` upgrade the document first,
//!   like every toolkit update. An upgrade builds the whole current document from the older
//!   shape, so such fields in an older document (written around the toolkit, or by an older
//!   application that had them) survive only if the older shape and its `From` carry them.
//! - Repairs that aggregate the sources on the server (a subset's `rebuild` and `repair`,
//!   [`ComputedFields::rebuild`](crate::ComputedFields::rebuild) and `repair`, and the
//!   recomputations a write triggers) first rewrite the older sources they aggregate at the
//!   current version, as every toolkit update does.
//! - [`References::watch`](crate::References::watch) propagates a change made to a source
//!   still written in an older shape from its upgrade (every copied field, since the event
//!   names the old shape's fields).
//! - **Not yet:** the read-only checks that aggregate on the server (`Subset::check`, the
//!   computed checks, the doctor's drift checks) read stored field names: a summed field renamed
//!   by an upgrade reports drift for older sources until [`converge`] (or a repair) rewrites
//!   them. Likewise any server-side filter on a field renamed between versions (a subset's
//!   parent key, a computed `by`) matches older documents only once they are converged.
//!
//! # Tracing
//!
//! `converge` runs in an `INFO` span `pattern_runtime::schema_version.converge`, with an `INFO`
//! event per batch (upgraded, retried, failed, total) and a `WARN` event per document that does
//! not upgrade; the reads run in `DEBUG` spans (`model.get`, `model.find`, ...). Each upgrade
//! in memory is a `TRACE` event, each unknown version a `DEBUG` one.
//!
//! [`converge`]: crate::ModelCollection::converge

use futures_util::future::BoxFuture;

use crate::error::Result;
use crate::finding::{Check, Finding};
use crate::schema::{PatternSpec, Sample};

mod converge;
mod read;
mod spec;
pub(crate) mod upgrade;

pub use converge::{Converged, VersionCounts, CONVERGE_BATCH};
pub(crate) use read::{collect, current_document, decode, decode_raw};
pub use read::{Find, Projected};
#[doc(hidden)]
pub use spec::{
    read_shape, undeclared, upgrade_step, upgraded, SchemaVersionParts, UpgradeFailure, UpgradeFn,
};
pub use spec::{SchemaVersion, SchemaVersionSpec, SchemaVersioned, UpgradeFrom};

impl PatternSpec for SchemaVersionSpec {
    /// The version field: every write stores the current version, and only [`converge`](crate::ModelCollection::converge) and
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

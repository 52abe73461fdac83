//! What is stored, below the patterns: a document's schema version and the upgrade of an older
//! shape to the current one. Every read of a model's documents (the model handle's and each
//! pattern's) and every update (the map of derived data) goes through here, whether or not
//! the model declares `#[schema_version(..)]`; the pattern's own operations (`converge`, the
//! per-version counts) are in [`schema_version`](crate::schema_version).

pub(crate) mod upgrade;
pub(crate) mod version;

pub(crate) use version::SchemaVersionSpec;

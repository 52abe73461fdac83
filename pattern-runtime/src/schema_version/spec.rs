//! The schema-version pattern's place in the schema: the version field it keeps, its audit,
//! and the bound of its operations. The versions themselves are core data
//! ([`SchemaVersionSpec`](crate::stored::SchemaVersionSpec)), read by every model's reads.

use crate::model::Model;
use crate::stored::SchemaVersionSpec;

/// A model with `#[schema_version(...)]`: its documents may be stored in older shapes. Generated
/// by the derive; the bound of [`converge`](crate::model::ModelCollection::converge) and
/// [`schema_versions`](crate::model::ModelCollection::schema_versions).
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no older schema versions",
    label = "not a `#[schema_version(...)]` model",
    note = "declare the older shapes on `{Self}`: `#[schema_version(older(UserV1 = 1, UserV2 = 2))]` and a field `version: SchemaVersion<3>`"
)]
pub trait SchemaVersioned: Model {
    /// The model's versions.
    const VERSIONS: &'static SchemaVersionSpec;
}

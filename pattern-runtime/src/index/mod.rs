//! Index specifications (`#[index(...)]`) and their sync with the server at start-up.
//!
//! A model declares its indexes with `#[index(...)]`; [`sync_indexes`](crate::sync_indexes) makes
//! the server match the declarations, creating what is missing and, by default, changing nothing
//! else. The specifications are static data ([`IndexSpec`]) readable before any connection exists.

mod compare;
mod spec;
pub(crate) mod sync;

pub use compare::Difference;
#[doc(hidden)]
pub use spec::IndexParts;
pub use spec::{Collation, IndexKey, IndexKind, IndexSpec, Literal, PartialClause, PartialOp};
pub use sync::{
    list_indexes, sync_indexes, sync_indexes_with, IndexReport, IndexStatus, OnMismatch,
    OnUnmanaged, SyncOptions, SyncReport,
};

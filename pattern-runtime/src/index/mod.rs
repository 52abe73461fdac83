//! Index specifications (`#[index(...)]`), as static data, and how two of them compare.
//!
//! A model declares its indexes with `#[index(...)]`; [`sync`](crate::sync()) makes
//! the server match the declarations, creating what is missing and, by default, changing nothing
//! else. The specifications are static data ([`IndexSpec`]) readable before any connection exists.

pub(crate) mod compare;
mod spec;

pub use compare::Difference;
#[doc(hidden)]
pub use spec::IndexParts;
pub use spec::{Collation, IndexKey, IndexKind, IndexSpec, Literal, PartialClause, PartialOp};

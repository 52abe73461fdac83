//! Typed filters, sorts and updates, below the model handle that takes them. Their public face
//! is `pattern_runtime::query` (declared in `lib.rs`, with the model handle's `Find` and
//! `Projected`); its page is `docs/query.md`.

mod filter;
mod kinds;
pub mod order;
mod update;
mod value;

pub use filter::{Filter, IntoFilter, IntoSort, Sort};
pub use kinds::{FieldPath, Items, Number, Optional, Path, When};
pub use update::{IntoUpdate, Update};
pub use value::IntoValue;

pub use crate::schema::kinds::{
    kept, Array, Comparable, Direct, FieldKind, Handled, Settable, Step, Then,
};
pub use crate::schema::Free;

#![doc = include_str!("../../docs/validator.md")]

pub(crate) mod check;
pub(crate) mod shape;
mod spec;
mod sync;

pub use check::{refused_documents, Refused};
pub use shape::{BsonShape, Property, Shape};
pub use spec::{Action, Declared, Installed, Level, ValidatorOptions};
pub use sync::{sync_validators, ValidatorReport, ValidatorState, ValidatorStatus};

#![doc = include_str!("../../docs/validator.md")]

pub(crate) mod check;

mod spec;
mod sync;

pub use crate::schema::shape::{BsonShape, Property, Shape};
pub use check::{refused_documents, Refused};
pub use spec::{Action, Declared, Installed, Level, ValidatorOptions};
pub use sync::{sync_validators, ValidatorReport, ValidatorState, ValidatorStatus};

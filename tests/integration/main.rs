//! The integration tests against the server of each pattern on its own, its hostile inputs, its
//! round trips and the doctor: one test binary (one build and one link for all of them, and
//! their tests run side by side). Tests of patterns combined are the other binary,
//! `combinations/`: two binaries build their front ends on two cores at once. A file is a module
//! named for what it tests. Each test uses its own database, so the files share nothing but the
//! process: the same model name in two files is two models (every spec names its models by
//! their schema, never by name).
//!
//! Five files stay test targets of their own (see `Cargo.toml`): `derive.rs` checks hygiene at a
//! crate root; `tracing.rs` captures spans with a subscriber per test thread, which other tests
//! hitting the same callsites from threads without one would race (tracing caches each
//! callsite's interest for the whole process); `bucket.rs`, `index_sync.rs` and `groups.rs`
//! read the whole registry of models (`sync(&db)`, every group), which here would hold
//! every file's models.

mod approximation;
mod attribute;
mod bucket_rollup;
mod check_repair;
mod computed;
mod doctor;
mod errors;
mod extended_ref;
mod hostile;
mod index_options;
mod maintainer;
mod model_handle;
mod non_finite;
mod not_found_and_progress;
mod outlier;
mod outlier_size;
mod polymorphic;
mod preallocation;
mod query;
mod query_commands;
mod query_values;
mod relation;
mod round_trips;
mod same_names;
mod schema_version;
mod shard;
mod subset;
mod support;
mod tree;
mod validator;
mod versioning;

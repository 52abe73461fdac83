//! The integration tests of patterns combined on one schema against the server: writes that
//! keep every copy and count another pattern derives (`compose`, `compose_tx`), every pair of
//! patterns on shared collections and derived data (`pairs_*`), and programs that combine
//! many patterns, each file named for what it tests (`club_schema`, `concurrent_writers`,
//! `typed_ids`, ...). One test binary, beside
//! `integration/` (the patterns alone): two binaries build their front ends on two cores at
//! once, so the two are kept about the same size. Each test uses its own database; see
//! `integration/main.rs` for what the files may share.

mod club_schema;
mod compose;
mod compose_tx;
mod compose_writes;
mod concurrent_writers;
mod kept_fields_cascades_and_holders;
mod pairs_collections;
mod pairs_derived;
mod pairs_polymorphic;
mod pairs_tree;
mod pairs_versioned;
mod refusals_of_computed_sources;
mod scalars_and_copies;
mod support;
mod typed_ids;

//! The integration tests of patterns combined on one schema against the server: writes that
//! keep every copy and count another pattern derives (`compose`, `compose_tx`), every pair of
//! patterns on shared collections and derived data (`pairs_*`), and the tests newcomers wrote
//! from the docs alone of patterns together (`newcomer_*`). One test binary, beside
//! `integration/` (the patterns alone): two binaries build their front ends on two cores at
//! once, so the two are kept about the same size. Each test uses its own database; see
//! `integration/main.rs` for what the files may share.

mod compose;
mod compose_tx;
mod newcomer_check;
mod newcomer_compose;
mod newcomer_concurrent;
mod newcomer_refusals;
mod newcomer_scalars;
mod newcomer_typed_ids;
mod newcomer_wave3;
mod newcomer_way_in;
mod pairs_collections;
mod pairs_derived;
mod pairs_tree;
mod pairs_versioned;

//! The integration tests of patterns combined on one schema against the server: writes that
//! keep every copy and count another pattern derives (`compose`, `compose_tx`), every pair of
//! patterns on shared collections and derived data (`pairs_*`), and the tests newcomers wrote
//! from the docs alone of patterns together (`newcomer_check`, `newcomer_compose`,
//! `newcomer_wave3`). One test binary, beside `integration/` (the patterns
//! alone): two binaries build their front ends on two cores at once. Each test uses its own
//! database; see `integration/main.rs` for what the files may share.

mod compose;
mod compose_tx;
mod newcomer_check;
mod newcomer_compose;
mod newcomer_wave3;
mod pairs_collections;
mod pairs_derived;
mod pairs_tree;
mod pairs_versioned;

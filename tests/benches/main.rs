//! The benchmarks: each pattern's operations against the same work written by hand with the
//! driver, one criterion group per pattern, in one binary (one build, one link). Run one
//! pattern's with a filter, `cargo bench --ignore-rust-version -p pattern-tests --bench patterns
//! -- subset_push/toolkit`; each module's docs give its filters and what each side sends.

mod approximation;
mod attribute;
mod computed;
mod extended_ref;
mod model;
mod outlier;
mod polymorphic;
mod preallocation;
mod relation;
mod schema_version;
mod subset;
mod tree;
mod versioning;

criterion::criterion_main!(
    approximation::approximation,
    attribute::attribute,
    computed::computed,
    extended_ref::extended_ref,
    model::model,
    outlier::outlier,
    polymorphic::polymorphic,
    preallocation::preallocation,
    relation::relation,
    schema_version::schema_version,
    subset::subset,
    tree::tree,
    versioning::versioning,
);

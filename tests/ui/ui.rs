//! Compile-fail cases: every misuse of the derive is an error at the offending token, with the
//! fix in the message. Cases live in one folder per category; `TRYBUILD=overwrite` regenerates
//! the `.stderr` files, which are reviewed like code. What must compile is in `compiles.rs`: with
//! no pass case here, trybuild only `cargo check`s the cases.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("model/*.rs");
    t.compile_fail("index/*.rs");
    t.compile_fail("serde/*.rs");
    t.compile_fail("subset/*.rs");
    t.compile_fail("versioning/*.rs");
    t.compile_fail("bucket/*.rs");
    t.compile_fail("extended_ref/*.rs");
    t.compile_fail("polymorphic/*.rs");
    t.compile_fail("attribute/*.rs");
    t.compile_fail("relation/*.rs");
    t.compile_fail("computed/*.rs");
    t.compile_fail("approximation/*.rs");
    t.compile_fail("outlier/*.rs");
    t.compile_fail("tree/*.rs");
    t.compile_fail("preallocation/*.rs");
    t.compile_fail("shard/*.rs");
    t.compile_fail("bounded/*.rs");
}

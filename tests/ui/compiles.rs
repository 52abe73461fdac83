//! Models that must compile (and whose checks run): every attribute used as documented. Ordinary
//! modules of an ordinary test target rather than trybuild `pass` cases: with a pass case in the
//! project trybuild builds (codegen and links) every compile-fail case too, where `check` suffices.

#[allow(dead_code)]
#[path = "compiles/minimal.rs"]
mod minimal;

#[allow(dead_code)]
#[path = "compiles/bucket.rs"]
mod bucket;

#[allow(dead_code)]
#[path = "compiles/extended_ref.rs"]
mod extended_ref;

#[allow(dead_code)]
#[path = "compiles/nested_paths.rs"]
mod nested_paths;

#[allow(dead_code)]
#[path = "compiles/polymorphic.rs"]
mod polymorphic;

#[allow(dead_code)]
#[path = "compiles/attribute.rs"]
mod attribute;

#[allow(dead_code)]
#[path = "compiles/ids.rs"]
mod ids;

#[allow(dead_code)]
#[path = "compiles/keyset.rs"]
mod keyset;

#[test]
fn the_models_compile_and_their_checks_hold() {
    ids::main();
    keyset::main();
    nested_paths::main();
    polymorphic::main();
    attribute::main();
    minimal::main();
    bucket::main();
    extended_ref::main();
}

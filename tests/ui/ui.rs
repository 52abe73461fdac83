//! Compile-fail cases: every misuse of the derive is an error at the offending token, with the
//! fix in the message. Cases live in one folder per category; `TRYBUILD=overwrite` regenerates
//! the `.stderr` files, which are reviewed like code. What must compile is in `compiles.rs`: with
//! no pass case here, trybuild only `cargo check`s the cases.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    // Every folder of cases beside this file, so a new pattern's folder is picked up without a
    // line here (`src` is the package's library; `compiles` holds what must compile, run by
    // `compiles.rs`).
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut folders: Vec<String> = std::fs::read_dir(here)
        .expect("the ui tests' folder")
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let cases = entry.file_type().ok()?.is_dir()
                && !matches!(name.as_str(), "src" | "wip" | "compiles");
            cases.then_some(name)
        })
        .collect();
    folders.sort();
    assert!(folders.len() >= 17, "case folders found: {folders:?}");
    for folder in folders {
        t.compile_fail(format!("{folder}/*.rs"));
    }
}

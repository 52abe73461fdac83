//! Compile-fail cases: every misuse of the derive is an error at the offending token, with the
//! fix in the message. Cases live in one folder per category; `TRYBUILD=overwrite` regenerates
//! the `.stderr` files, which are reviewed like code. What must compile is in `compiles.rs`: with
//! no pass case here, trybuild only `cargo check`s the cases.

/// The rustflags trybuild gives its second cargo call (the cases): its own, and
/// `--diagnostic-width=140`, one per line in `rustflags`. Its first call (the dependencies)
/// leaves the width out, so the flags differ and every dependency was checked twice, in the same
/// target dir (with an empty trybuild dir: 173 s, and 102 s with one check).
/// `CARGO_ENCODED_RUSTFLAGS` wins over the `--config` rustflags trybuild passes (RUSTFLAGS, which
/// it removes, would too), so both calls check with these and share one build. `./dev release`
/// checks the runtime in the same target dir with the same flags, so it reuses these checks of
/// every dependency. If trybuild's own flags change, the `.stderr` files show it.
const TRYBUILD_RUSTFLAGS: &str = include_str!("rustflags");

#[test]
fn ui() {
    // The only test of this binary, so no other thread reads the environment meanwhile.
    let mut flags: Vec<&str> = TRYBUILD_RUSTFLAGS
        .lines()
        .filter(|l| !l.is_empty())
        .collect();
    // trybuild keeps coverage instrumentation from RUSTFLAGS (cargo-llvm-cov); so does this.
    if std::env::var("RUSTFLAGS").is_ok_and(|f| f.contains("-C instrument-coverage")) {
        flags.extend(["-C", "instrument-coverage"]);
    }
    std::env::set_var("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"));
    // CI lints inside the test build (clippy-driver as the workspace's compiler, see .ci/run).
    // The cases are compiled by rustc alone: their expected output is rustc's.
    std::env::remove_var("RUSTC_WORKSPACE_WRAPPER");
    std::env::remove_var("CLIPPY_ARGS");
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

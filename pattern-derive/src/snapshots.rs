//! Snapshots of what the derives write, formatted, so a change to generated code is seen in
//! review. The inputs are the tour's chapters (`examples/tour/*.rs`): every type there deriving
//! `Model`, `Measurement`, `Fields` or `AttributeKey` is expanded, and the expansions of one
//! chapter are compared with `pattern-derive/snapshots/<chapter>.snap`.
//!
//! After an intended change: `SNAPSHOTS=overwrite cargo test -p pattern-derive snapshots`, then
//! review the diff like code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The derive `name` applied to `input`, as the compiler would run it.
fn expand(name: &str, input: &syn::DeriveInput) -> Option<TokenStream> {
    match name {
        "Model" => Some(crate::model::derive(input)),
        "Measurement" => Some(crate::bucket::derive(input)),
        "Fields" => Some(crate::model::derive_fields(input)),
        "AttributeKey" => Some(crate::attribute::derive_key(input)),
        _ => None,
    }
}

/// The derives of the toolkit on `attrs` (`#[derive(Serialize, Model)]` gives `["Model"]`).
fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                out.push(last.ident.to_string());
            }
            Ok(())
        });
    }
    out
}

/// Every expansion of the chapter `path`, formatted, with a header line per type.
fn expansions(path: &Path) -> String {
    let source = std::fs::read_to_string(path).expect("a tour chapter");
    let file: syn::File = syn::parse_file(&source).expect("the chapter parses");
    let mut out = String::new();
    let mut items: Vec<&syn::Item> = file.items.iter().collect();
    // Chapters keep their models in a `mod models { .. }` or at the top: both are read.
    let mut i = 0;
    while i < items.len() {
        if let syn::Item::Mod(m) = items[i] {
            if let Some((_, inner)) = &m.content {
                items.extend(inner.iter());
            }
        }
        i += 1;
    }
    for item in items {
        let (attrs, ident) = match item {
            syn::Item::Struct(s) => (&s.attrs, &s.ident),
            syn::Item::Enum(e) => (&e.attrs, &e.ident),
            _ => continue,
        };
        for name in derives(attrs) {
            let input: syn::DeriveInput =
                syn::parse2(item.to_token_stream()).expect("a struct or enum");
            let Some(tokens) = expand(&name, &input) else {
                continue;
            };
            let formatted = match syn::parse2::<syn::File>(tokens.clone()) {
                Ok(file) => prettyplease::unparse(&file),
                Err(_) => tokens.to_string(),
            };
            let _ = writeln!(out, "// ----- #[derive({name})] {ident} -----\n");
            out.push_str(&formatted);
            out.push('\n');
        }
    }
    out
}

fn tour() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tour")
}

#[test]
fn snapshots_of_every_tour_chapter_match() {
    let overwrite = std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(tour())
        .expect("the tour's folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    chapters.sort();
    let mut differ = Vec::new();
    let mut written = 0;
    for chapter in &chapters {
        let expanded = expansions(chapter);
        if expanded.is_empty() {
            continue;
        }
        // `.snap`, not `.rs`: generated code is test data, not source (no tool counts its
        // repetitions as the crate's).
        let stem = chapter.file_stem().expect("a file name").to_string_lossy();
        let snapshot = dir.join(format!("{stem}.snap"));
        let stored = std::fs::read_to_string(&snapshot).unwrap_or_default();
        if stored == expanded {
            continue;
        }
        if overwrite {
            std::fs::create_dir_all(&dir).expect("the snapshots' folder");
            std::fs::write(&snapshot, &expanded).expect("a snapshot written");
            written += 1;
        } else {
            let line = stored
                .lines()
                .zip(expanded.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| stored.lines().count().min(expanded.lines().count()));
            differ.push(format!(
                "{} (first difference at line {})",
                snapshot.display(),
                line + 1
            ));
        }
    }
    if written > 0 {
        eprintln!("{written} snapshots written");
    }
    assert!(
        differ.is_empty(),
        "the derives' output changed; review it and accept with \
         `SNAPSHOTS=overwrite cargo test -p pattern-derive snapshots`:\n{}",
        differ.join("\n")
    );
}

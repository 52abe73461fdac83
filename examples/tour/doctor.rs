//! The last chapter: the doctor's report on the tour's own data.
//!
//! Every chapter left its database as it ended. The doctor audits each against the chapter's
//! models (`pattern_runtime::doctor_group`): arrays nothing bounds, document sizes and nesting
//! in a sample, indexes missing, undeclared, unused or redundant, and each pattern's own
//! invariants. It writes nothing.

use std::time::Instant;

use pattern_runtime::doctor::{doctor_group, Check, DoctorOptions};

/// The chapters' groups, each synced and filled in `tour_<group>`.
const CHAPTERS: &[&str] = &[
    "indexes",
    "subset",
    "versioning",
    "bucket",
    "extended_ref",
    "polymorphic",
    "attribute",
    "relation",
    "approximation",
    "outlier",
    "tree",
    "preallocation",
];

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 13: the doctor's report on the tour's own data");
    println!(
        "\npattern_runtime::doctor_group(&db, group, &DoctorOptions::new()) for each chapter \
         (100 documents sampled per collection, 5 s per command):"
    );
    let started = Instant::now();
    let (mut findings, mut skipped) = (0, 0);
    for group in CHAPTERS {
        let db = client.database(&format!("tour_{group}"));
        let report = doctor_group(&db, group, &DoctorOptions::new()).await?;
        println!("\n-- tour_{group}");
        for line in report.to_string().lines() {
            println!("  {line}");
        }
        findings += report.findings.len();
        skipped += report.skipped.len();
        if report.with_check(Check::UnusedIndex).next().is_some() {
            println!("  (unused: the tour ran its queries on other paths, or not at all)");
        }
    }
    println!(
        "\n{findings} {} and {skipped} skipped {} in {} chapters, in {} ms",
        if findings == 1 { "finding" } else { "findings" },
        if skipped == 1 { "check" } else { "checks" },
        CHAPTERS.len(),
        started.elapsed().as_millis()
    );
    Ok(())
}

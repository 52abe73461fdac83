//! The last chapter: the doctor's report on the tour's own data.
//!
//! Every chapter left its database as it ended. The doctor audits each against the chapter's
//! models (`pattern_runtime::doctor(&db).group(..)`): arrays nothing bounds, document sizes and nesting
//! in a sample, indexes missing, undeclared, unused or redundant, each pattern's own
//! invariants, and the stored documents the models' validators would refuse. It writes
//! nothing. Last, the validators themselves, installed on the subset chapter's data.

use std::time::Instant;

use pattern_runtime::doctor::{doctor, Check, DoctorOptions};
use pattern_runtime::Model;

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
    "schema_version",
    "maintainer",
];

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 15: the doctor's report on the tour's own data");
    println!(
        "\npattern_runtime::doctor(&db).group(group).options(&DoctorOptions::new()) for each chapter \
         (100 documents sampled per collection, 5 s per command):"
    );
    let started = Instant::now();
    let (mut findings, mut skipped) = (0, 0);
    for group in CHAPTERS {
        let db = client.database(&format!("tour_{group}"));
        let report = doctor(&db)
            .group(group)
            .options(&DoctorOptions::new())
            .await?;
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

    // A write around the toolkit: the doctor finds what it left, and the call it names repairs
    // it. Every pattern handle answers the same `check()` and `repair()`.
    let db = client.database("tour_extended_ref");
    let orders = db.collection::<bson::Document>("orders");
    let stale = orders
        .update_one(
            bson::doc! {},
            bson::doc! { "$set": { "customerSnapshot.name": "Someone Else" } },
        )
        .await?;
    println!(
        "\nA script renames the customer inside {} order with the driver, around the toolkit:",
        stale.modified_count
    );
    let report = doctor(&db)
        .group("extended_ref")
        .options(&DoctorOptions::new())
        .await?;
    for finding in &report.findings {
        for line in finding.to_string().lines() {
            println!("  {line}");
        }
    }
    let references = crate::extended_ref::Customer::collection(&db).references();
    let checked = references.check().await?;
    println!(
        "  Customer::collection(&db).references().check(): {}, documents {:?}",
        checked.to_string().lines().next().unwrap_or_default(),
        checked.documents()
    );
    let repaired = references.repair().await?;
    println!("  Customer::collection(&db).references().repair(): {repaired}");
    let again = doctor(&db)
        .group("extended_ref")
        .options(&DoctorOptions::new())
        .await?;
    println!("  the doctor again: {} findings", again.findings.len());
    validators(client).await
}

/// The models' validators on the subset chapter's data: installed without refusing anything,
/// the doctor's count of what they would refuse, then `error` once the data is clean.
async fn validators(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    use crate::subset::{Product, Review};
    use pattern_runtime::validator::{sync_validators, ValidatorOptions};
    use pattern_runtime::Model;

    println!(
        "
Validators from the models (pattern_runtime::validator), on tour_subset:"
    );
    let db = client.database("tour_subset");
    let models = [Product::SCHEMA, Review::SCHEMA];
    let declared = Product::SCHEMA
        .validator(&ValidatorOptions::new())
        .ok_or("Product has a validator")?;
    println!("  Product::SCHEMA.validator(..) = {declared}");
    // The subset chapter ran under its models' validators (strict, error, no other fields):
    // syncing the defaults (moderate, warn) reports the difference and loosens nothing.
    let report = sync_validators(&db, &models, &ValidatorOptions::new()).await?;
    for status in &report.models {
        println!("  sync_validators, moderate and warn: {status}");
    }
    let reviews = db.collection::<bson::Document>("product_reviews");
    let bad = bson::doc! { "_id": "by-script", "productId": "p1", "stars": "five" };
    match reviews
        .insert_one(bad.clone())
        .await
        .map_err(pattern_runtime::Error::from)
    {
        Err(e) => {
            println!("  a script inserts a review with `stars: \"five\"` and no `userId`: {e}")
        }
        Ok(_) => return Err("the validator let a bad review in".into()),
    }
    reviews
        .insert_one(bad)
        .bypass_document_validation(true)
        .await?;
    println!("  an old dump restored with bypassDocumentValidation holds the same review");
    let report = doctor(&db)
        .group("subset")
        .options(&DoctorOptions::new())
        .await?;
    for finding in report.with_check(Check::Validator) {
        for line in finding.to_string().lines() {
            println!("  {line}");
        }
    }
    reviews
        .delete_one(bson::doc! { "_id": "by-script" })
        .await?;
    let report = doctor(&db)
        .group("subset")
        .options(&DoctorOptions::new())
        .await?;
    println!(
        "  once it is removed, documents failing the validator: {}",
        report.with_check(Check::Validator).count()
    );
    Ok(())
}

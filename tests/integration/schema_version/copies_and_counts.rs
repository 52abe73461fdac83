//! Schema versioning with the patterns that copy, embed or count a model's documents: extended
//! references (the check, `resync`, `update`, a maintainer, `writing_back`), subsets (`push`,
//! `rebuild`, `page`, `check`), computed counts and sums (`recompute`, an update of an older
//! source) and an outlier's push: each sees an older document as its upgrade, and `converge`
//! rebuilds what it rewrites.

use super::*;
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::{
    doctor::{doctor, Check, DoctorOptions},
    schema_version::SchemaVersion,
    sync, Fields, Model, SyncOptions,
};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_loans")]
struct Loan {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    patron: PatronRef,
}

async fn loan_copy(db: &mongodb::Database, id: i64) -> String {
    let loan = db
        .collection::<Document>("sv_loans")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap();
    loan.get_document("patron")
        .unwrap()
        .get_str("name")
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn extended_reference_copies_come_from_the_upgraded_source() {
    let t = test_db_unvalidated("sv_extended_ref").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Patron::SCHEMA, Loan::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    let patrons = db.collection::<Document>("sv_patrons");
    let loans = db.collection::<Document>("sv_loans");
    patrons
        .insert_many([
            doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" },
            doc! { "_id": 2_i64, "first": "Alan", "last": "Turing" },
        ])
        .await
        .unwrap();
    loans
        .insert_many([
            doc! { "_id": 10_i64, "patron": { "_id": 1_i64, "name": "stale" } },
            doc! { "_id": 11_i64, "patron": { "_id": 2_i64, "name": "stale too" } },
        ])
        .await
        .unwrap();
    let refs = Patron::collection(db).references();
    // The check compares each copy with the source as its current shape.
    let found = refs.check().await.unwrap();
    assert!(!found.is_clean(), "stale copies are found: {found:?}");
    // `resync` of an older source copies its upgraded value.
    refs.rebuild(1).await.unwrap();
    assert_eq!(loan_copy(db, 10).await, "Ada Lovelace");
    // `converge` rebuilds the copies of each source it rewrites.
    let done = Patron::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 2);
    assert_eq!(loan_copy(db, 11).await, "Alan Turing");
    assert!(refs.check().await.unwrap().is_clean());
}

/// A schema-versioned model as a subset's full items: a rebuild embeds the upgraded items.
#[derive(Deserialize)]
struct ReplyV1 {
    #[serde(rename = "_id")]
    id: i64,
    thread: i64,
    at: i64,
    body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_replies")]
#[schema_version(older(ReplyV1 = 1))]
struct Reply {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    thread: i64,
    at: i64,
    text: String,
    words: u32,
}

impl From<ReplyV1> for Reply {
    fn from(r: ReplyV1) -> Self {
        Reply {
            id: r.id,
            v: SchemaVersion,
            thread: r.thread,
            at: r.at,
            words: r.body.split_whitespace().count() as u32,
            text: r.body,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, pattern_runtime::Fields)]
struct ReplyBrief {
    #[serde(rename = "_id")]
    id: i64,
    at: i64,
    words: u32,
}

impl From<&Reply> for ReplyBrief {
    fn from(r: &Reply) -> Self {
        ReplyBrief {
            id: r.id,
            at: r.at,
            words: r.words,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "sv_threads")]
struct Thread {
    #[serde(rename = "_id")]
    id: i64,
    #[subset(limit = 2, sort(at = -1), full = Reply, parent = thread)]
    latest: Vec<ReplyBrief>,
}

#[tokio::test]
async fn subset_items_are_embedded_from_the_upgraded_full_items() {
    let t = test_db_unvalidated("sv_subset").await;
    let db = t.db();
    pattern_runtime::sync(db)
        .models(&[Thread::SCHEMA, Reply::SCHEMA])
        .options(&Default::default())
        .await
        .unwrap();
    db.collection::<Document>("sv_threads")
        .insert_one(doc! { "_id": 1_i64, "latest": [] })
        .await
        .unwrap();
    db.collection::<Document>("sv_replies")
        .insert_many([
            doc! { "_id": 1_i64, "thread": 1_i64, "at": 1_i64, "body": "one" },
            doc! { "_id": 2_i64, "thread": 1_i64, "at": 2_i64, "body": "two words" },
            doc! { "_id": 3_i64, "thread": 1_i64, "at": 3_i64, "body": "three words here" },
        ])
        .await
        .unwrap();
    Thread::collection(db)
        .subset(Thread::FIELDS.latest)
        .rebuild(1)
        .await
        .unwrap();
    let thread = Thread::collection(db).get(1).await.unwrap().unwrap();
    assert_eq!(
        thread.latest,
        [
            ReplyBrief {
                id: 3,
                at: 3,
                words: 3
            },
            ReplyBrief {
                id: 2,
                at: 2,
                words: 2
            },
        ]
    );
}

/// Version 1 of a writer: a name only. Its shape knows nothing of the patterns' fields.
#[derive(Deserialize)]
struct WriterV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

/// The current writer: an outlier of notes, a subset of letters, both kept by their patterns.
#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "sv_writers")]
#[schema_version(older(WriterV1 = 1))]
#[serde(rename_all = "camelCase")]
struct Writer {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    name: String,
    #[outlier(limit = 3, overflow = "sv_writer_notes", capacity = 10, flag = is_outlier, count = notes_count)]
    notes: Vec<String>,
    is_outlier: bool,
    notes_count: i64,
    #[subset(limit = 2, sort(at = -1), full = Letter, parent = writer)]
    letters: Vec<Letter>,
    #[summary(count = letters)]
    letter_count: i64,
}

impl From<WriterV1> for Writer {
    fn from(w: WriterV1) -> Self {
        Writer {
            id: w.id,
            v: SchemaVersion,
            name: w.name,
            notes: Vec::new(),
            is_outlier: false,
            notes_count: 0,
            letters: Vec::new(),
            letter_count: 0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_letters")]
struct Letter {
    #[serde(rename = "_id")]
    id: i64,
    writer: i64,
    at: i64,
}

impl From<&Letter> for Letter {
    fn from(l: &Letter) -> Self {
        l.clone()
    }
}

/// A push (outlier, subset) to a document still stored in an older version upgrades it first,
/// so that `converge`, whose upgrade cannot know the pushed items, finds nothing to rewrite and
/// loses nothing. Found by a reader of the docs: before, the pushed items went into the older
/// document, and `converge` dropped them.
#[tokio::test]
async fn a_push_to_an_older_document_upgrades_it_first_and_converge_keeps_the_items() {
    let db = test_db_unvalidated("sv_push_older").await;
    pattern_runtime::sync(&db)
        .models(&[Writer::SCHEMA, Letter::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let raw = db.collection::<Document>("sv_writers");
    for id in 1..=3i64 {
        raw.insert_one(doc! { "_id": id, "name": format!("writer {id}") })
            .await
            .unwrap();
    }
    let notes = Writer::collection(&db).outlier(Writer::FIELDS.notes);
    for n in 0..5 {
        // Past the limit of 3: two go to an overflow document.
        notes.push(1, format!("note {n}")).await.unwrap();
    }
    Writer::collection(&db)
        .subset(Writer::FIELDS.letters)
        .push(
            2,
            Letter {
                id: 20,
                writer: 2,
                at: 1,
            },
        )
        .await
        .unwrap();
    let stored = raw.find_one(doc! { "_id": 1 }).await.unwrap().unwrap();
    assert_eq!(stored.get("v"), Some(&Bson::Int32(2)), "{stored}");

    let done = Writer::collection(&db).converge().await.unwrap();
    assert_eq!(done.upgraded, 1, "only writer 3 was still older: {done:?}");
    assert_eq!(
        notes.items(1).await.unwrap(),
        (0..5).map(|n| format!("note {n}")).collect::<Vec<_>>()
    );
    assert!(notes.state(1).await.unwrap().is_consistent());
    let two = Writer::collection(&db).get(2).await.unwrap().unwrap();
    assert_eq!((two.letters.len(), two.letter_count), (1, 1), "{two:?}");
}

// ------------------------------------------------------------------------------------------
// A schema-versioned source of an extended reference.

#[derive(Debug, Deserialize)]
struct NsvAuthorV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_authors")]
#[schema_version(older(NsvAuthorV1 = 1))]
#[extended_ref(NsvAuthorRef(first, last), derive(PartialEq))]
#[serde(rename_all = "camelCase")]
struct NsvAuthor {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    first: String,
    last: String,
}

impl From<NsvAuthorV1> for NsvAuthor {
    fn from(v1: NsvAuthorV1) -> Self {
        let (first, last) = v1.name.split_once(' ').unwrap_or((&v1.name, ""));
        NsvAuthor {
            id: v1.id,
            schema_version: SchemaVersion,
            first: first.into(),
            last: last.into(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_books")]
struct NsvBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    #[extended_ref(propagate)]
    author: NsvAuthorRef,
}

async fn ext_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db_unvalidated(name).await;
    sync(t.db())
        .models(&[NsvAuthor::SCHEMA, NsvBook::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(t.db(), "nsv_authors")
        .insert_one(doc! { "_id": 1_i64, "name": "Ada Lovelace" })
        .await
        .unwrap();
    t
}

async fn book_copy(db: &mongodb::Database, first: &str, last: &str) {
    raw(db, "nsv_books")
        .insert_one(doc! { "_id": 10_i64, "title": "Notes", "author": { "_id": 1_i64, "first": first, "last": last } })
        .await
        .unwrap();
}

async fn copy_of(db: &mongodb::Database) -> Document {
    stored(db, "nsv_books", 10_i64)
        .await
        .unwrap()
        .get_document("author")
        .unwrap()
        .clone()
}

#[tokio::test]
async fn ext_ref_check_and_doctor_see_upgraded_source() {
    let t = ext_setup("nsv_ext_check").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await; // right, from the upgraded source
    let check = NsvAuthor::collection(db)
        .references()
        .check()
        .await
        .unwrap();
    assert!(
        check.findings.is_empty(),
        "no stale copy: the copy matches the upgraded source: {check:?}"
    );
    let report = doctor(db)
        .models(&[NsvAuthor::SCHEMA, NsvBook::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    assert_eq!(report.with_check(Check::StaleCopy).count(), 0, "{report}");
}

#[tokio::test]
async fn ext_ref_resync_from_older_source() {
    let t = ext_setup("nsv_ext_resync").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    NsvAuthor::collection(db)
        .references()
        .rebuild(1)
        .await
        .unwrap();
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
}

#[tokio::test]
async fn ext_ref_converge_rebuilds_copies() {
    let t = ext_setup("nsv_ext_converge").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    let done = NsvAuthor::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 1);
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
    assert!(NsvAuthor::collection(db)
        .references()
        .check()
        .await
        .unwrap()
        .findings
        .is_empty());
}

/// `References::update` of a source still stored in an older shape.
#[tokio::test]
async fn ext_ref_update_of_older_source() {
    let t = ext_setup("nsv_ext_update").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await;
    NsvAuthor::collection(db)
        .update(1, doc! { "$set": { NsvAuthor::FIELDS.first: "Augusta" } })
        .await
        .unwrap();
    let copy = copy_of(db).await;
    let author = NsvAuthor::collection(db).get(1).await.unwrap().unwrap();
    let d = stored(db, "nsv_authors", 1_i64).await.unwrap();
    assert_eq!(copy.get_str("first").unwrap(), "Augusta");
    assert_eq!(
        author.first, "Augusta",
        "FINDING: the source reads back without the update; stored: {d}"
    );
}

// ------------------------------------------------------------------------------------------
// A schema-versioned model as a subset's full items.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvReviewV1 {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    rating: i32,
    text: String,
    created_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_reviews")]
#[schema_version(older(NsvReviewV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvReview {
    #[serde(rename = "_id")]
    id: String,
    schema_version: SchemaVersion<2>,
    product_id: String,
    stars: i32,
    content: String,
    created_at: DateTime,
}

impl From<NsvReviewV1> for NsvReview {
    fn from(v1: NsvReviewV1) -> Self {
        NsvReview {
            id: v1.id,
            schema_version: SchemaVersion,
            product_id: v1.product_id,
            stars: v1.rating,
            content: v1.text,
            created_at: v1.created_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct NsvReviewExcerpt {
    review_id: String,
    stars: i32,
    created_at: DateTime,
}

impl From<&NsvReview> for NsvReviewExcerpt {
    fn from(r: &NsvReview) -> Self {
        NsvReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            created_at: r.created_at,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_products")]
#[serde(rename_all = "camelCase")]
struct NsvProduct {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 2, sort(created_at = -1), full = NsvReview, parent = product_id)]
    recent: Vec<NsvReviewExcerpt>,
    #[summary(count = recent)]
    review_count: i64,
    #[summary(sum = recent.stars)]
    star_sum: i64,
}

async fn subset_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db_unvalidated(name).await;
    let db = t.db();
    sync(db)
        .models(&[NsvProduct::SCHEMA, NsvReview::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_products")
        .insert_one(doc! { "_id": "p", "recent": [], "reviewCount": 0_i64, "starSum": 0_i64 })
        .await
        .unwrap();
    for (id, rating, t) in [("r1", 5, 1000_i64), ("r2", 3, 2000), ("r3", 4, 3000)] {
        raw(db, "nsv_reviews")
            .insert_one(doc! { "_id": id, "productId": "p", "rating": rating, "text": "t", "createdAt": DateTime::from_millis(t) })
            .await
            .unwrap();
    }
    t
}

fn excerpt(id: &str, stars: i32, t: i64) -> NsvReviewExcerpt {
    NsvReviewExcerpt {
        review_id: id.into(),
        stars,
        created_at: DateTime::from_millis(t),
    }
}

async fn product(db: &mongodb::Database) -> NsvProduct {
    NsvProduct::collection(db).get("p").await.unwrap().unwrap()
}

/// The docs: "subset items are made from the upgraded document". `rebuild` makes the
/// embedded items right, but the computed sum reads the stored field (`rating` in version 1):
/// `starSum` is 0 instead of 12.
#[tokio::test]
async fn subset_rebuild_from_older_items() {
    let t = subset_setup("nsv_subset_rebuild").await;
    let db = t.db();
    let reviews = NsvProduct::collection(db).subset(NsvProduct::FIELDS.recent);
    let rebuilt = reviews.rebuild("p").await;
    assert!(
        rebuilt.is_ok(),
        "FINDING: rebuild over older full items: {rebuilt:?}"
    );
    let p = product(db).await;
    assert_eq!(
        p.recent,
        vec![excerpt("r3", 4, 3000), excerpt("r2", 3, 2000)]
    );
    assert_eq!(
        (p.review_count, p.star_sum),
        (3, 12),
        "the sum of `stars` as the model reads the items"
    );
}

/// `page` returns the full items: "the patterns' reads that return the model" upgrade
/// them. It fails with a serde error ("missing field `schemaVersion`"), not even `Error::Upgrade`.
#[tokio::test]
async fn subset_page_of_older_items() {
    let t = subset_setup("nsv_subset_page").await;
    let db = t.db();
    let page = NsvProduct::collection(db)
        .subset(NsvProduct::FIELDS.recent)
        .page("p", 0, 10)
        .await;
    assert!(
        page.is_ok(),
        "FINDING: page over older full items: {page:?}"
    );
    let stars: Vec<i32> = page.unwrap().iter().map(|r| r.stars).collect();
    assert_eq!(stars, [4, 3, 5]);
}

/// A parent whose subset is right (as the upgraded items make it) is reported as
/// drift (`starSum`) by `Subset::check` and the doctor.
#[tokio::test]
#[ignore = "known limitation: a subset's sums are computed by the server from stored field names, so older items count only once converged"]
async fn subset_check_with_older_items() {
    let t = subset_setup("nsv_subset_check").await;
    let db = t.db();
    raw(db, "nsv_products")
        .replace_one(
            doc! { "_id": "p" },
            doc! { "_id": "p", "reviewCount": 3_i64, "starSum": 12_i64, "recent": [
                { "reviewId": "r3", "stars": 4, "createdAt": DateTime::from_millis(3000) },
                { "reviewId": "r2", "stars": 3, "createdAt": DateTime::from_millis(2000) },
            ] },
        )
        .await
        .unwrap();
    let check = NsvProduct::collection(db)
        .subset(NsvProduct::FIELDS.recent)
        .check()
        .await;
    let report = doctor(db)
        .models(&[NsvProduct::SCHEMA, NsvReview::SCHEMA])
        .options(&DoctorOptions::new())
        .await
        .unwrap();
    let doctor_drift = report.with_check(Check::SubsetDrift).count();
    assert!(
        matches!(&check, Ok(c) if c.findings.is_empty()),
        "FINDING: Subset::check over older full items: {check:?}"
    );
    assert_eq!(
        doctor_drift, 0,
        "FINDING: the doctor's subset audit over older full items: {report}"
    );
}

#[tokio::test]
async fn subset_converge_rebuilds_parents() {
    let t = subset_setup("nsv_subset_converge").await;
    let db = t.db();
    let reviews = NsvProduct::collection(db).subset(NsvProduct::FIELDS.recent);
    let done = NsvReview::collection(db).converge().await.unwrap();
    assert_eq!(done.upgraded, 3);
    let p = product(db).await;
    assert_eq!(
        p.recent,
        vec![excerpt("r3", 4, 3000), excerpt("r2", 3, 2000)]
    );
    assert_eq!((p.review_count, p.star_sum), (3, 12));
    let check = reviews.check().await.unwrap();
    assert!(check.findings.is_empty(), "{check:?}");
    // A push after converge.
    let r4 = NsvReview {
        id: "r4".into(),
        schema_version: SchemaVersion,
        product_id: "p".into(),
        stars: 1,
        content: "c".into(),
        created_at: DateTime::from_millis(4000),
    };
    reviews.push("p", r4).await.unwrap();
    let p = product(db).await;
    assert_eq!((p.review_count, p.star_sum), (4, 13));
}

// ------------------------------------------------------------------------------------------
// A computed sum and count over a schema-versioned source.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvOrderV1 {
    #[serde(rename = "_id")]
    id: i64,
    user_id: String,
    cents: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_orders")]
#[schema_version(older(NsvOrderV1 = 1))]
#[serde(rename_all = "camelCase")]
struct NsvOrder {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    user_id: String,
    amount: i64,
}

impl From<NsvOrderV1> for NsvOrder {
    fn from(v1: NsvOrderV1) -> Self {
        NsvOrder {
            id: v1.id,
            schema_version: SchemaVersion,
            user_id: v1.user_id,
            amount: v1.cents,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_buyers")]
#[serde(rename_all = "camelCase")]
struct NsvBuyer {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = NsvOrder.amount, by = user_id)]
    total: i64,
    #[computed(count = NsvOrder, by = user_id)]
    orders: i64,
}

async fn computed_setup(name: &str) -> pattern_testkit::TestDb {
    let t = test_db_unvalidated(name).await;
    let db = t.db();
    sync(db)
        .models(&[NsvBuyer::SCHEMA, NsvOrder::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_buyers")
        .insert_one(doc! { "_id": "u1", "total": 0_i64, "orders": 0_i64 })
        .await
        .unwrap();
    raw(db, "nsv_orders")
        .insert_many([
            doc! { "_id": 1_i64, "userId": "u1", "cents": 100_i64 },
            doc! { "_id": 2_i64, "userId": "u1", "cents": 250_i64 },
        ])
        .await
        .unwrap();
    t
}

async fn buyer(db: &mongodb::Database) -> NsvBuyer {
    NsvBuyer::collection(db).get("u1").await.unwrap().unwrap()
}

/// `recompute_all` (the documented repair) sums the stored `amount`; orders stored in
/// version 1 (`cents`) count 0. (After `converge` the value is right: `computed_converge_keeps_sums`.)
#[tokio::test]
async fn computed_recompute_over_older_sources() {
    let t = computed_setup("nsv_computed_recompute").await;
    let db = t.db();
    NsvBuyer::collection(db).computed().repair().await.unwrap();
    let b = buyer(db).await;
    assert_eq!(b.orders, 2);
    assert_eq!(
        b.total, 350,
        "FINDING: the sum of `amount` as the model reads its orders"
    );
}

#[tokio::test]
async fn computed_converge_keeps_sums() {
    let t = computed_setup("nsv_computed_converge").await;
    let db = t.db();
    let computed = NsvBuyer::collection(db).computed();
    computed.repair().await.unwrap();
    NsvOrder::collection(db).converge().await.unwrap();
    let b = buyer(db).await;
    assert_eq!((b.total, b.orders), (350, 2));
    assert!(computed.check().await.unwrap().is_clean());
    NsvOrder::collection(db)
        .insert(&NsvOrder {
            id: 3,
            schema_version: SchemaVersion,
            user_id: "u1".into(),
            amount: 50,
        })
        .await
        .unwrap();
    let b = buyer(db).await;
    assert_eq!((b.total, b.orders), (400, 3));
}

/// `ModelCollection::update` of an order still stored in an older shape.
#[tokio::test]
async fn computing_update_of_older_source() {
    let t = computed_setup("nsv_computing_update").await;
    let db = t.db();
    NsvBuyer::collection(db).computed().repair().await.unwrap();
    NsvOrder::collection(db)
        .update(1, doc! { "$set": { NsvOrder::FIELDS.amount: 999_i64 } })
        .await
        .unwrap();
    let order = NsvOrder::collection(db).get(1).await.unwrap().unwrap();
    let d = stored(db, "nsv_orders", 1_i64).await.unwrap();
    assert_eq!(
        order.amount, 999,
        "FINDING: the update is accepted, the read loses it; stored: {d}"
    );
}

/// A maintainer follows a change an older application made to a source it still writes in
/// the old shape: the copy is made from the upgraded document (the event names the old
/// shape's field, which no copy reads).
#[tokio::test]
async fn a_maintainer_follows_a_change_to_an_older_source() {
    let t = ext_setup("nsv_ext_watch").await;
    let db = t.db();
    book_copy(db, "Ada", "Lovelace").await;
    let running = pattern_runtime::maintainer::Maintainer::new(db)
        .models(&[NsvAuthor::SCHEMA])
        .start()
        .await
        .unwrap();
    raw(db, "nsv_authors")
        .update_one(
            doc! { "_id": 1_i64 },
            doc! { "$set": { "name": "Augusta King" } },
        )
        .await
        .unwrap();
    let want = doc! { "_id": 1_i64, "first": "Augusta", "last": "King" };
    // The timeout guards against a hang, it asserts no timing.
    let start = std::time::Instant::now();
    while copy_of(db).await != want {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{}",
            copy_of(db).await
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    running.stop().await.unwrap();
}

#[tokio::test]
async fn writing_back_rebuilds_extended_ref_copies() {
    let t = ext_setup("nsv_ext_writeback").await;
    let db = t.db();
    book_copy(db, "?", "?").await;
    let author = NsvAuthor::collection(db)
        .writing_back()
        .get(1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(author.first, "Ada");
    assert_eq!(
        stored(db, "nsv_authors", 1_i64)
            .await
            .unwrap()
            .get("schemaVersion"),
        Some(&Bson::Int32(2))
    );
    assert_eq!(
        copy_of(db).await,
        doc! { "_id": 1_i64, "first": "Ada", "last": "Lovelace" }
    );
}

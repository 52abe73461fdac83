//! The refusals of hostile values written to a model that is a `#[computed]` source *and*
//! reached through another pattern's handle, as the README, the crate docs' "What the toolkit
//! sends" and "Patterns together", `Transaction`, and the `computed` and `subset` module docs
//! describe them:
//!
//! - a subset's full item ([`RefusalBook`], pushed by `Subset::push`, also written by
//!   the model handle), summed and counted per owner;
//! - a tree holder ([`RefusalGadget`], inserted by `Holders::insert`), summed per owner;
//! - a `#[versioned]` model ([`RefusalContract`], `ModelCollection::insert`/`save`/`update`);
//! - a polymorphic variant ([`RefusalPaymentCard`], `VariantCollection::insert`/`update_one`);
//! - an extended-reference source ([`RefusalPart`], `References::update`).
//!
//! Each source's `by` field is a `Bson` (the owner's `_id` is a `Bson`, so any value compiles
//! and is checked when the operation runs). Hostile values: NaN and the infinities in summed
//! fields, operator documents, regexes, JavaScript, arrays and dotted keys as `by` values,
//! `$`-prefixed and dotted keys nested in items and in `$set` values, values just over 16 MiB.
//! For each: the documented error, the command log (nothing sent, or no write sent, as the docs
//! say), the raw collections unchanged; inside the caller's `Transaction` a refusal made before
//! anything is sent leaves it open (`ended() == None`) and the commit keeps the transaction's
//! other writes only; a refusal made after the write (a `$mul` to infinity) ends it and nothing of it
//! is kept. Every test ends with every `check()` (computed fields, subset, tree, references)
//! clean.
//!
//! One FINDING (`full_items_written_through_computing_are_held_to_the_item_rules`, ignored):
//! a subset's full item written through the model handle is not held to the item rules the crate
//! docs hold every full item to.

use pattern_runtime::At;
use std::fmt::Debug;
use std::future::IntoFuture;

use crate::support::{dump, raw_one, refused_value};
use bson::{doc, Bson, Document};
use pattern_runtime::{limits::MAX_VALUE_DEPTH, Error, Fields, Model, SyncOptions, Transaction};
use pattern_testkit::{docs, test_db, TestDb};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/// The target: sums and counts of every source model, per owner. Its `_id` is a `Bson`, so the
/// sources' `by` fields are `Bson` too ("`by` holds the target's `_id` type").
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_owners")]
struct RefusalOwner {
    #[serde(rename = "_id")]
    id: Bson,
    #[computed(sum = RefusalBook.price, by = owner)]
    book_total: f64,
    #[computed(count = RefusalBook, by = owner)]
    book_count: i64,
    #[computed(sum = RefusalGadget.weight, by = owner)]
    gadget_total: f64,
    #[computed(sum = RefusalContract.amount, by = owner)]
    contract_total: f64,
    #[computed(sum = RefusalPayment.amount, by = owner)]
    payment_total: f64,
    #[computed(sum = RefusalPart.weight, by = owner)]
    part_total: f64,
}

/// A subset parent: the three newest books of the shelf, and how many books it has.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_shelves")]
struct RefusalShelf {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 3, sort(at = -1), full = RefusalBook, parent = shelf_id)]
    recent: Vec<RefusalBookExcerpt>,
    #[summary(count = recent)]
    shelved: i64,
    meta: Document,
}

/// The subset's full item, and a computed source (price summed, books counted per owner).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_books")]
struct RefusalBook {
    #[serde(rename = "_id")]
    id: String,
    shelf_id: String,
    owner: Bson,
    price: f64,
    at: i64,
    extra: Document,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct RefusalBookExcerpt {
    book_id: String,
    at: i64,
    extra: Document,
}

impl From<&RefusalBook> for RefusalBookExcerpt {
    fn from(b: &RefusalBook) -> Self {
        RefusalBookExcerpt {
            book_id: b.id.clone(),
            at: b.at,
            extra: b.extra.clone(),
        }
    }
}

/// A tree of aisles, named by `_id`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nrr_aisles")]
#[tree(parent = parent, ancestors = ancestors)]
struct RefusalAisle {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

/// A tree holder, and a computed source (weight summed per owner).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_gadgets")]
#[in_tree(RefusalAisle, node = aisle, path = aisle_path)]
struct RefusalGadget {
    #[serde(rename = "_id")]
    id: String,
    aisle: String,
    aisle_path: Vec<String>,
    owner: Bson,
    weight: f64,
    extra: Document,
}

/// A versioned model, and a computed source (amount summed per owner).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_contracts")]
#[versioned(history = "nrr_contract_revisions")]
struct RefusalContract {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    owner: Bson,
    amount: f64,
    extra: Document,
}

/// A polymorphic model, a computed source by its common fields `owner` and `amount`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "nrr_payments")]
enum RefusalPayment {
    Card {
        #[serde(rename = "_id")]
        id: String,
        owner: Bson,
        amount: f64,
        last4: String,
    },
    Cash {
        #[serde(rename = "_id")]
        id: String,
        owner: Bson,
        amount: f64,
    },
}

/// An extended-reference source (its title copied into bins), and a computed source.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_parts")]
#[extended_ref(RefusalPartRef(title))]
struct RefusalPart {
    #[serde(rename = "_id")]
    id: String,
    title: String,
    owner: Bson,
    weight: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nrr_bins")]
struct RefusalBin {
    #[serde(rename = "_id")]
    id: String,
    #[extended_ref(propagate)]
    part: RefusalPartRef,
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const COLLECTIONS: &[&str] = &[
    "nrr_owners",
    "nrr_shelves",
    "nrr_books",
    "nrr_aisles",
    "nrr_gadgets",
    "nrr_contracts",
    "nrr_contract_revisions",
    "nrr_payments",
    "nrr_parts",
    "nrr_bins",
];

/// The commands that write.
const WRITES: &[&str] = &[
    "insert",
    "update",
    "delete",
    "findAndModify",
    "bulkWrite",
    "commitTransaction",
];

/// What the docs say a refusal sends.
#[derive(Clone, Copy)]
enum Sent {
    /// "before anything is sent", "nothing sent": no command at all.
    Nothing,
    /// "nothing written" / "refused before it is sent" (of the value): no write command.
    NoWrite,
}

fn invalid_value(e: &Error) -> bool {
    matches!(e, Error::InvalidValue { .. })
}

fn invalid_key(e: &Error) -> bool {
    matches!(e, Error::InvalidKey { .. })
}

fn too_large(e: &Error) -> bool {
    e.is_too_large()
}

fn owner_id(name: &str) -> Bson {
    Bson::String(name.into())
}

fn regex(pattern: &str) -> Bson {
    Bson::RegularExpression(bson::Regex {
        pattern: pattern.try_into().unwrap(),
        options: "".try_into().unwrap(),
    })
}

/// `by` values that cannot name one owner: the crate docs' table ("a document with a `$` key at
/// any depth (an operator), a regex or JavaScript code (a pattern), an array, a key with `.`").
fn hostile_by_values() -> Vec<(&'static str, Bson)> {
    vec![
        ("an operator document", Bson::Document(doc! { "$ne": "o1" })),
        (
            "an operator one level down",
            Bson::Document(doc! { "k": { "$gt": "" } }),
        ),
        ("a regex", regex("^o")),
        ("JavaScript code", Bson::JavaScriptCode("true".into())),
        (
            "an array",
            Bson::Array(vec![owner_id("o1"), owner_id("o2")]),
        ),
        ("a dotted key", Bson::Document(doc! { "a.b": "o1" })),
        ("a key with NUL", Bson::Document(doc! { "a\0b": "o1" })),
        ("nesting past MAX_VALUE_DEPTH", Bson::Document(deep())),
    ]
}

/// A document nested a few levels past [`MAX_VALUE_DEPTH`], without any hostile key.
fn deep() -> Document {
    let mut d = doc! { "k": "o1" };
    for _ in 0..MAX_VALUE_DEPTH + 4 {
        d = doc! { "k": d };
    }
    d
}

/// Documents with a `$`-prefixed or a dotted key nested in them.
fn hostile_nested_documents() -> Vec<(&'static str, Document)> {
    vec![
        ("a `$` key", doc! { "$where": "1" }),
        ("a `$` key one level down", doc! { "a": { "$gt": 1 } }),
        ("a dotted key", doc! { "a.b": 1 }),
        ("a dotted key one level down", doc! { "a": { "b.c": 1 } }),
        ("a key with NUL", doc! { "a\0b": 1 }),
        ("nesting past MAX_VALUE_DEPTH", deep()),
    ]
}

/// A string that makes any document holding it larger than 16 MiB.
fn over_16_mib() -> String {
    "x".repeat(16 * 1024 * 1024 + 64)
}

fn owner(id: &str) -> RefusalOwner {
    RefusalOwner {
        id: owner_id(id),
        book_total: 0.0,
        book_count: 0,
        gadget_total: 0.0,
        contract_total: 0.0,
        payment_total: 0.0,
        part_total: 0.0,
    }
}

fn book(id: &str, owner: Bson, price: f64, at: i64, extra: Document) -> RefusalBook {
    RefusalBook {
        id: id.into(),
        shelf_id: "s1".into(),
        owner,
        price,
        at,
        extra,
    }
}

fn gadget(id: &str, owner: Bson, weight: f64) -> RefusalGadget {
    RefusalGadget {
        id: id.into(),
        aisle: "a1".into(),
        aisle_path: vec![],
        owner,
        weight,
        extra: doc! {},
    }
}

fn contract(id: &str, owner: Bson, amount: f64) -> RefusalContract {
    RefusalContract {
        id: id.into(),
        version: 0,
        owner,
        amount,
        extra: doc! {},
    }
}

fn card(id: &str, owner: Bson, amount: f64) -> RefusalPaymentCard {
    RefusalPaymentCard {
        id: id.into(),
        owner,
        amount,
        last4: "4242".into(),
    }
}

fn aisle(id: &str, parent: Option<&str>) -> RefusalAisle {
    RefusalAisle {
        id: id.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

/// A test's database with every model's indexes (and the tree's serializing document), the
/// owners `o1` and `o2`, the shelf `s1` and the aisles `a` > `a1`.
async fn setup(name: &str) -> TestDb {
    let db = test_db(name).await;
    pattern_runtime::sync(&db)
        .models(&[
            RefusalOwner::SCHEMA,
            RefusalShelf::SCHEMA,
            RefusalBook::SCHEMA,
            RefusalAisle::SCHEMA,
            RefusalGadget::SCHEMA,
            RefusalContract::SCHEMA,
            RefusalPayment::SCHEMA,
            RefusalPart::SCHEMA,
            RefusalBin::SCHEMA,
        ])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    RefusalOwner::collection(&db)
        .raw()
        .insert_many([owner("o1"), owner("o2")])
        .await
        .unwrap();
    RefusalShelf::collection(&db)
        .raw()
        .insert_one(RefusalShelf {
            id: "s1".into(),
            recent: vec![],
            shelved: 0,
            meta: doc! {},
        })
        .await
        .unwrap();
    let tree = RefusalAisle::collection(&db).tree();
    tree.insert(&aisle("a", None)).await.unwrap();
    tree.insert(&aisle("a1", Some("a"))).await.unwrap();
    db
}

/// Every collection of the test, as stored.
async fn snapshot(db: &TestDb) -> Vec<(&'static str, Vec<Document>)> {
    let mut all = Vec::new();
    for c in COLLECTIONS {
        all.push((*c, docs(db, c).await));
    }
    all
}

/// The `_id`s stored in `collection`, in `_id` order.
async fn ids(db: &TestDb, collection: &str) -> Vec<Bson> {
    docs(db, collection)
        .await
        .into_iter()
        .map(|d| d.get("_id").cloned().unwrap_or(Bson::Null))
        .collect()
}

fn strs(ids: &[&str]) -> Vec<Bson> {
    ids.iter().map(|s| Bson::String((*s).into())).collect()
}

/// A number field of the owner `id`, as stored.
async fn owner_value(db: &TestDb, id: &str, field: &str) -> f64 {
    let owners = docs(db, "nrr_owners").await;
    let o = owners
        .iter()
        .find(|d| d.get("_id") == Some(&owner_id(id)))
        .unwrap_or_else(|| panic!("no owner {id}"));
    match o.get(field) {
        Some(Bson::Double(v)) => *v,
        Some(Bson::Int32(v)) => f64::from(*v),
        Some(Bson::Int64(v)) => *v as f64,
        other => panic!("owner {id}: {field} is {other:?}"),
    }
}

fn check_sent(db: &TestDb, what: &str, sent: Sent) {
    let commands = db.take_commands();
    match sent {
        Sent::Nothing => {
            let names: Vec<_> = commands
                .iter()
                .map(|c| format!("{} {}", c.name, c.target))
                .collect();
            assert!(
                names.is_empty(),
                "{what}: refused before anything is sent, yet sent {names:?}"
            );
        }
        Sent::NoWrite => {
            let writes: Vec<_> = commands
                .iter()
                .filter(|c| WRITES.contains(&c.name.as_str()))
                .map(|c| format!("{} {}", c.name, c.target))
                .collect();
            assert!(
                writes.is_empty(),
                "{what}: nothing written, yet sent {writes:?}"
            );
        }
    }
}

/// Runs `op` outside any transaction: refused as `expect` says, sending what `sent` allows,
/// every collection as it was.
async fn refused_outside<T: Debug>(
    db: &TestDb,
    what: &str,
    op: impl IntoFuture<Output = pattern_runtime::Result<T>>,
    expect: fn(&Error) -> bool,
    sent: Sent,
) {
    let before = snapshot(db).await;
    db.take_commands();
    let err = op.await.expect_err(what);
    assert!(expect(&err), "{what}: unexpected error {err:?}");
    check_sent(db, what, sent);
    assert!(
        snapshot(db).await == before,
        "{what}: the collections changed"
    );
}

/// Runs `op` in the caller's transaction `tx`: refused before anything is sent, which leaves
/// `tx` open ("a refusal the toolkit makes before the operation writes anything ... the
/// transaction goes on").
async fn refused_inside<T: Debug>(
    db: &TestDb,
    tx: &Transaction,
    what: &str,
    op: impl IntoFuture<Output = pattern_runtime::Result<T>>,
    expect: fn(&Error) -> bool,
    sent: Sent,
) {
    db.take_commands();
    let err = op.await.expect_err(what);
    assert!(expect(&err), "{what}: unexpected error {err:?}");
    check_sent(db, what, sent);
    assert_eq!(
        tx.ended(),
        None,
        "{what}: a refusal before anything is written leaves the transaction open"
    );
}

/// Every `check()` of the patterns involved: computed fields, the subset, the tree (nodes and
/// holders) and the extended-reference copies.
async fn all_checks_clean(db: &TestDb) {
    let reports = [
        (
            "computed",
            RefusalOwner::collection(db)
                .computed()
                .check()
                .await
                .unwrap(),
        ),
        (
            "subset",
            RefusalShelf::collection(db)
                .subset(RefusalShelf::FIELDS.recent)
                .check()
                .await
                .unwrap(),
        ),
        (
            "tree",
            RefusalAisle::collection(db).tree().check().await.unwrap(),
        ),
        (
            "references",
            RefusalPart::collection(db)
                .references()
                .check()
                .await
                .unwrap(),
        ),
    ];
    for (name, report) in reports {
        assert!(report.is_clean(), "{name} check: {report:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

/// computed/mod.rs: "A NaN or infinite value in a field a sum, a min or a max reads is
/// [`Error::InvalidValue`], before anything is sent (...), and so is a `by` value that cannot
/// name one target (an operator document, a regex), whichever handle writes the source: in ...
/// a pushed item". The book's price is summed per owner (not by the subset itself). The crate
/// docs' table adds to the `by` values refused: JavaScript code, an array, a key with `.` or
/// NUL, nesting past [`MAX_VALUE_DEPTH`].
#[tokio::test]
async fn subset_push_refuses_non_finite_sums_and_hostile_by_values() {
    let db = setup("refusals_subset_nan").await;
    let shelf = RefusalShelf::collection(&db).subset(RefusalShelf::FIELDS.recent);
    db.take_commands();
    shelf
        .push("s1", book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();
    // The command log sees a push's writes: "nothing sent" below is not vacuous.
    let sent = db.take_commands();
    assert!(
        sent.iter()
            .any(|c| c.name == "insert" && c.target == "nrr_books"),
        "{sent:?}"
    );

    for (i, bad) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY]
        .into_iter()
        .enumerate()
    {
        let what = format!("push of a book priced {bad}");
        let item = book(&format!("bad{i}"), owner_id("o1"), bad, 10, doc! {});
        refused_outside(
            &db,
            &what,
            shelf.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        // `push_many` with one good and one bad item: the whole push is refused.
        let items = vec![
            book(&format!("good{i}"), owner_id("o1"), 1.0, 11, doc! {}),
            book(&format!("bad{i}"), owner_id("o2"), bad, 12, doc! {}),
        ];
        refused_outside(
            &db,
            &format!("push_many with {bad}"),
            shelf.push_many("s1", items),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    for (what, by) in hostile_by_values() {
        let item = book("bad", by, 1.0, 10, doc! {});
        refused_outside(
            &db,
            &format!("push with {what} as owner"),
            shelf.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    // In the caller's transaction: refused before anything is sent, the transaction goes on.
    let tx = Transaction::start(&db).await.unwrap();
    let bound = shelf.in_transaction(&tx);
    bound
        .push("s1", book("b1", owner_id("o1"), 7.0, 1, doc! {}))
        .await
        .unwrap();
    for (what, by) in hostile_by_values() {
        let item = book("bad", by, 1.0, 10, doc! {});
        refused_inside(
            &db,
            &tx,
            &format!("push with {what} as owner, in a transaction"),
            bound.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let item = book("bad", owner_id("o2"), bad, 20, doc! {});
        refused_inside(
            &db,
            &tx,
            &format!("push of {bad} in a transaction"),
            bound.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    bound
        .push("s1", book("b2", owner_id("o2"), 9.0, 2, doc! {}))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_books").await, strs(&["b0", "b1", "b2"]));
    assert_eq!(owner_value(&db, "o1", "bookTotal").await, 12.0);
    assert_eq!(owner_value(&db, "o2", "bookTotal").await, 9.0);
    assert_eq!(owner_value(&db, "o1", "bookCount").await, 2.0);
    all_checks_clean(&db).await;
}

/// The crate docs: "A subset's full item is an item: it and its embedded form are held to the
/// table above" (keys starting with `$` or holding `.`: [`Error::InvalidValue`], nothing sent);
/// `Push::set` keys are field names ([`Error::InvalidKey`]: "a leading `$`, `.` inside a
/// name"), and `$set` values "are checked like any stored value".
#[tokio::test]
async fn subset_push_refuses_dollar_and_dotted_keys_in_items_and_set() {
    let db = setup("refusals_subset_keys").await;
    let shelf = RefusalShelf::collection(&db).subset(RefusalShelf::FIELDS.recent);
    shelf
        .push("s1", book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();

    for (what, extra) in hostile_nested_documents() {
        let item = book("bad", owner_id("o1"), 1.0, 10, extra.clone());
        refused_outside(
            &db,
            &format!("item with {what}"),
            shelf.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        let item = book("ok", owner_id("o1"), 1.0, 10, doc! {});
        refused_outside(
            &db,
            &format!("push whose set value holds {what}"),
            shelf.push("s1", item).set(doc! { "meta": extra }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for key in ["$meta", "meta.x"] {
        let item = book("ok", owner_id("o1"), 1.0, 10, doc! {});
        refused_outside(
            &db,
            &format!("push with set key {key}"),
            shelf.push("s1", item).set(doc! { key: 1 }),
            invalid_key,
            Sent::Nothing,
        )
        .await;
    }

    let tx = Transaction::start(&db).await.unwrap();
    let bound = shelf.in_transaction(&tx);
    bound
        .push(
            "s1",
            book("b1", owner_id("o1"), 2.0, 1, doc! { "note": "$5" }),
        )
        .await
        .unwrap();
    for (what, extra) in hostile_nested_documents() {
        let item = book("bad", owner_id("o1"), 1.0, 10, extra.clone());
        refused_inside(
            &db,
            &tx,
            &format!("item with {what}, in a transaction"),
            bound.push("s1", item),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        let item = book("ok", owner_id("o1"), 1.0, 10, doc! {});
        refused_inside(
            &db,
            &tx,
            &format!("set value with {what}, in a transaction"),
            bound.push("s1", item).set(doc! { "meta": extra }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_books").await, strs(&["b0", "b1"]));
    // Strings starting with `$` are data, stored as given.
    let books = docs(&db, "nrr_books").await;
    assert_eq!(
        books[1].get_document("extra").unwrap(),
        &doc! { "note": "$5" }
    );
    let shelves = docs(&db, "nrr_shelves").await;
    assert_eq!(shelves[0].get_document("meta").unwrap(), &doc! {});
    all_checks_clean(&db).await;
}

/// The crate docs: "A single value (an item, a document, an update) over 16 MiB is refused
/// before it is sent ([`Error::DocumentTooLarge`])"; `Subset::push`: "when the item, or the
/// parent with it, is over 16 MiB (nothing is written)"; `ModelCollection::insert`:
/// "[`Error::DocumentTooLarge`] over 16 MiB ... nothing is written then".
#[tokio::test]
async fn values_over_16_mib_are_refused_before_they_are_sent() {
    let db = setup("refusals_16mib").await;
    let huge = over_16_mib();
    let shelf = RefusalShelf::collection(&db).subset(RefusalShelf::FIELDS.recent);
    let books = RefusalBook::collection(&db);
    let parts = RefusalPart::collection(&db);
    books
        .insert(&book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();
    RefusalPart::collection(&db)
        .insert(&RefusalPart {
            id: "p1".into(),
            title: "bolt".into(),
            owner: owner_id("o1"),
            weight: 1.5,
        })
        .await
        .unwrap();

    let big_book = || {
        book(
            "big",
            owner_id("o1"),
            1.0,
            10,
            doc! { "blob": huge.clone() },
        )
    };
    refused_outside(
        &db,
        "subset push of an item over 16 MiB",
        shelf.push("s1", big_book()),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_outside(
        &db,
        "ModelCollection::insert of a book over 16 MiB",
        books.insert(&big_book()),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_outside(
        &db,
        "ModelCollection::update whose $set is over 16 MiB",
        books.update("b0", doc! { "$set": { "extra": { "blob": huge.clone() } } }),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_outside(
        &db,
        "References::update whose $set is over 16 MiB",
        parts.update("p1", doc! { "$set": { "title": huge.clone() } }),
        too_large,
        Sent::NoWrite,
    )
    .await;

    let mut big_gadget = gadget("big", owner_id("o1"), 1.0);
    big_gadget.extra = doc! { "blob": huge.clone() };
    refused_outside(
        &db,
        "Holders::insert of a holder over 16 MiB",
        RefusalAisle::collection(&db)
            .tree()
            .holders::<RefusalGadget>()
            .insert(&big_gadget),
        too_large,
        Sent::NoWrite,
    )
    .await;
    let mut big_contract = contract("big", owner_id("o1"), 1.0);
    big_contract.extra = doc! { "blob": huge.clone() };
    refused_outside(
        &db,
        "versioned insert of a document over 16 MiB",
        RefusalContract::collection(&db).insert(&mut big_contract),
        too_large,
        Sent::NoWrite,
    )
    .await;
    let mut big_card = card("big", owner_id("o1"), 1.0);
    big_card.last4 = huge.clone();
    refused_outside(
        &db,
        "variant insert of a document over 16 MiB",
        RefusalPaymentCard::collection(&db).insert(&big_card),
        too_large,
        Sent::NoWrite,
    )
    .await;

    // In the caller's transaction: refused before it is sent (not "from the server"), so the
    // transaction goes on.
    let tx = Transaction::start(&db).await.unwrap();
    shelf
        .in_transaction(&tx)
        .push("s1", book("b1", owner_id("o2"), 4.0, 1, doc! {}))
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "subset push over 16 MiB, in a transaction",
        shelf.in_transaction(&tx).push("s1", big_book()),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "ModelCollection::insert over 16 MiB, in a transaction",
        books.in_transaction(&tx).insert(&big_book()),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "References::update over 16 MiB, in a transaction",
        parts
            .in_transaction(&tx)
            .update("p1", doc! { "$set": { "title": huge.clone() } }),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "Holders::insert over 16 MiB, in a transaction",
        RefusalAisle::collection(&db)
            .tree()
            .in_transaction(&tx)
            .holders::<RefusalGadget>()
            .insert(&big_gadget),
        too_large,
        Sent::NoWrite,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "variant insert over 16 MiB, in a transaction",
        RefusalPaymentCard::collection(&db)
            .in_transaction(&tx)
            .insert(&big_card),
        too_large,
        Sent::NoWrite,
    )
    .await;
    parts
        .in_transaction(&tx)
        .update("p1", doc! { "$set": { "title": "nut" } })
        .await
        .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_books").await, strs(&["b0", "b1"]));
    assert_eq!(owner_value(&db, "o2", "bookTotal").await, 4.0);
    assert_eq!(
        docs(&db, "nrr_parts").await[0].get_str("title").unwrap(),
        "nut"
    );
    all_checks_clean(&db).await;
}

/// A tree holder that is a computed source: `Holders::insert` is one of "whichever handle
/// writes the source" (computed/mod.rs), so NaN/infinite weights and hostile `by` values are
/// [`Error::InvalidValue`] before anything is sent.
///
/// Not asserted: `$` or dotted keys nested in a holder's `Document` field. A holder is a whole
/// document of the model's own type, of which the crate docs only say "Its keys are still
/// checked: one holding NUL cannot be encoded", while the table's first row lists "inserts"
/// among what items go into: it is not clear whether a whole document's nested `$` keys are
/// refused or stored literally.
#[tokio::test]
async fn tree_holder_insert_refuses_hostile_sources() {
    let db = setup("refusals_tree_holder").await;
    let tree = RefusalAisle::collection(&db).tree();
    let holders = tree.holders::<RefusalGadget>();
    holders
        .insert(&gadget("g0", owner_id("o1"), 2.0))
        .await
        .unwrap();

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        refused_outside(
            &db,
            &format!("holder weighing {bad}"),
            holders.insert(&gadget("bad", owner_id("o1"), bad)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("insert_many with a holder weighing {bad}"),
            holders.insert_many(&[
                gadget("ok", owner_id("o1"), 1.0),
                gadget("bad", owner_id("o2"), bad),
            ]),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, by) in hostile_by_values() {
        refused_outside(
            &db,
            &format!("holder with {what} as owner"),
            holders.insert(&gadget("bad", by, 1.0)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    let tx = Transaction::start(&db).await.unwrap();
    let bound = tree.in_transaction(&tx).holders::<RefusalGadget>();
    bound
        .insert(&gadget("g1", owner_id("o2"), 3.0))
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "holder weighing NaN, in a transaction",
        bound.insert(&gadget("bad", owner_id("o1"), f64::NAN)),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    for (what, by) in hostile_by_values() {
        refused_inside(
            &db,
            &tx,
            &format!("holder with {what} as owner, in a transaction"),
            bound.insert(&gadget("bad", by, 1.0)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    bound
        .insert(&gadget("g2", owner_id("o2"), 4.0))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_gadgets").await, strs(&["g0", "g1", "g2"]));
    assert_eq!(owner_value(&db, "o1", "gadgetTotal").await, 2.0);
    assert_eq!(owner_value(&db, "o2", "gadgetTotal").await, 7.0);
    let gadgets = docs(&db, "nrr_gadgets").await;
    for g in &gadgets {
        assert_eq!(
            g.get_array("aislePath").unwrap(),
            &strs(&["a", "a1"]),
            "{g}"
        );
    }
    all_checks_clean(&db).await;
}

/// A `#[versioned]` computed source: "whichever handle writes the source: in an insert, a
/// replace, a save ... or the `$set` of an update" (computed/mod.rs); `$set` values "are checked
/// like any stored value" (crate docs); versioning: "a `save` checks the size before sending".
#[tokio::test]
async fn versioned_writes_refuse_hostile_sources() {
    let db = setup("refusals_versioned").await;
    let contracts = RefusalContract::collection(&db);
    let mut c1 = contract("c1", owner_id("o1"), 10.0);
    contracts.insert(&mut c1).await.unwrap();
    assert_eq!(c1.version, 1);

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut fresh = contract("bad", owner_id("o1"), bad);
        refused_outside(
            &db,
            &format!("versioned insert of {bad}"),
            contracts.insert(&mut fresh),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        let mut changed = c1.clone();
        changed.amount = bad;
        refused_outside(
            &db,
            &format!("versioned save of {bad}"),
            contracts.replace(&mut changed),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("versioned update $set {bad}"),
            contracts.update(At("c1", 1), doc! { "$set": { "amount": bad } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, by) in hostile_by_values() {
        let mut changed = c1.clone();
        changed.owner = by.clone();
        refused_outside(
            &db,
            &format!("versioned save with {what} as owner"),
            contracts.replace(&mut changed),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("versioned update $set owner to {what}"),
            contracts.update(At("c1", 1), doc! { "$set": { "owner": by } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, extra) in hostile_nested_documents() {
        refused_outside(
            &db,
            &format!("versioned update whose $set value holds {what}"),
            contracts.update(At("c1", 1), doc! { "$set": { "extra": extra } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    let mut big = c1.clone();
    big.extra = doc! { "blob": over_16_mib() };
    refused_outside(
        &db,
        "versioned save over 16 MiB",
        contracts.replace(&mut big),
        too_large,
        Sent::NoWrite,
    )
    .await;

    let tx = Transaction::start(&db).await.unwrap();
    let bound = contracts.in_transaction(&tx);
    let mut c2 = contract("c2", owner_id("o2"), 4.0);
    bound.insert(&mut c2).await.unwrap();
    let mut changed = c1.clone();
    changed.amount = f64::NAN;
    refused_inside(
        &db,
        &tx,
        "versioned save of NaN, in a transaction",
        bound.replace(&mut changed),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "versioned update $set owner to a regex, in a transaction",
        bound.update(At("c1", 1), doc! { "$set": { "owner": regex("o") } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "versioned update $set extra with a `$` key, in a transaction",
        bound.update(At("c1", 1), doc! { "$set": { "extra": { "$gt": 1 } } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    let mut c1_again = c1.clone();
    c1_again.amount = 11.0;
    assert_eq!(bound.replace(&mut c1_again).await.unwrap().version, Some(2));
    tx.commit().await.unwrap();

    let stored = docs(&db, "nrr_contracts").await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].get_f64("amount").unwrap(), 11.0);
    assert_eq!(owner_value(&db, "o1", "contractTotal").await, 11.0);
    assert_eq!(owner_value(&db, "o2", "contractTotal").await, 4.0);
    // One revision: version 1 of c1, archived by the one save that went through.
    assert_eq!(docs(&db, "nrr_contract_revisions").await.len(), 1);
    all_checks_clean(&db).await;
}

/// A polymorphic variant as computed source: `VariantCollection::insert` ("a key with `$`,
/// `.` or NUL, or an operator document as the `_id`, is [`Error::InvalidValue`] before anything
/// is sent"), and computed/mod.rs for NaN, infinities and `by` values in inserts and in the
/// `$set` of an update.
#[tokio::test]
async fn variant_writes_refuse_hostile_sources() {
    let db = setup("refusals_variant").await;
    let cards = RefusalPaymentCard::collection(&db);
    cards
        .insert(&card("p1", owner_id("o1"), 3.0))
        .await
        .unwrap();

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        refused_outside(
            &db,
            &format!("variant insert of {bad}"),
            cards.insert(&card("bad", owner_id("o1"), bad)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("variant update_one $set {bad}"),
            cards.update("p1", doc! { "$set": { "amount": bad } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, by) in hostile_by_values() {
        refused_outside(
            &db,
            &format!("variant insert with {what} as owner"),
            cards.insert(&card("bad", by.clone(), 1.0)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("variant update_one $set owner to {what}"),
            cards.update("p1", doc! { "$set": { "owner": by } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, nested) in hostile_nested_documents() {
        refused_outside(
            &db,
            &format!("variant update_one whose $set value holds {what}"),
            cards.update("p1", doc! { "$set": { "last4": nested } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    let tx = Transaction::start(&db).await.unwrap();
    let bound = cards.in_transaction(&tx);
    bound
        .insert(&card("p2", owner_id("o2"), 6.0))
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "variant insert of +inf, in a transaction",
        bound.insert(&card("bad", owner_id("o2"), f64::INFINITY)),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "variant update_one $set owner to an operator, in a transaction",
        bound.update("p1", doc! { "$set": { "owner": { "$exists": true } } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    bound
        .update("p1", doc! { "$set": { "amount": 4.0 } })
        .await
        .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_payments").await, strs(&["p1", "p2"]));
    assert_eq!(owner_value(&db, "o1", "paymentTotal").await, 4.0);
    assert_eq!(owner_value(&db, "o2", "paymentTotal").await, 6.0);
    all_checks_clean(&db).await;
}

/// An extended-reference source that is a computed source: `References::update` is one of
/// "whichever handle writes the source" (computed/mod.rs): `$set` of NaN, of a hostile `by`
/// value, or of a value with `$`/dotted keys is [`Error::InvalidValue`] before anything is sent.
#[tokio::test]
async fn references_update_refuses_hostile_set_values() {
    let db = setup("refusals_references").await;
    let part = RefusalPart {
        id: "p1".into(),
        title: "bolt".into(),
        owner: owner_id("o1"),
        weight: 1.5,
    };
    RefusalPart::collection(&db).insert(&part).await.unwrap();
    RefusalBin::collection(&db)
        .raw()
        .insert_one(RefusalBin {
            id: "bin1".into(),
            part: RefusalPartRef::from(&part),
        })
        .await
        .unwrap();
    let parts = RefusalPart::collection(&db);

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        refused_outside(
            &db,
            &format!("References::update $set weight {bad}"),
            RefusalPart::collection(&db).update("p1", doc! { "$set": { "weight": bad } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, by) in hostile_by_values() {
        refused_outside(
            &db,
            &format!("References::update $set owner to {what}"),
            RefusalPart::collection(&db).update("p1", doc! { "$set": { "owner": by } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, nested) in hostile_nested_documents() {
        refused_outside(
            &db,
            &format!("References::update $set title holding {what}"),
            RefusalPart::collection(&db).update("p1", doc! { "$set": { "title": nested } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    let tx = Transaction::start(&db).await.unwrap();
    let bound = parts.in_transaction(&tx);
    bound
        .update("p1", doc! { "$set": { "title": "nut", "weight": 2.5 } })
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "References::update $set weight -inf, in a transaction",
        bound.update("p1", doc! { "$set": { "weight": f64::NEG_INFINITY } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "References::update $set title with a dotted key, in a transaction",
        bound.update("p1", doc! { "$set": { "title": { "a.b": 1 } } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    tx.commit().await.unwrap();

    let bins = docs(&db, "nrr_bins").await;
    assert_eq!(
        bins[0]
            .get_document("part")
            .unwrap()
            .get_str("title")
            .unwrap(),
        "nut"
    );
    assert_eq!(owner_value(&db, "o1", "partTotal").await, 2.5);
    all_checks_clean(&db).await;
}

/// `Computing` writes of a source that is also a subset's full item: NaN and hostile `by`
/// values in `insert`, `replace` and the `$set` of `update` are [`Error::InvalidValue`] before
/// anything is sent (computed/mod.rs); `update` keys "are checked first ([`Error::InvalidKey`]:
/// ... no `$` or empty segment in a path ...)"; `$set` values "are checked like any stored
/// value" (crate docs).
#[tokio::test]
async fn computing_writes_refuse_hostile_values_before_sending() {
    let db = setup("refusals_computing").await;
    let books = RefusalBook::collection(&db);
    books
        .insert(&book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        refused_outside(
            &db,
            &format!("ModelCollection::insert of {bad}"),
            books.insert(&book("bad", owner_id("o1"), bad, 1, doc! {})),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("ModelCollection::replace with {bad}"),
            books.replace(&book("b0", owner_id("o1"), bad, 0, doc! {})),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("ModelCollection::update $set {bad}"),
            books.update("b0", doc! { "$set": { "price": bad } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, by) in hostile_by_values() {
        refused_outside(
            &db,
            &format!("ModelCollection::insert with {what} as owner"),
            books.insert(&book("bad", by.clone(), 1.0, 1, doc! {})),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("ModelCollection::replace with {what} as owner"),
            books.replace(&book("b0", by.clone(), 5.0, 0, doc! {})),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("ModelCollection::update $set owner to {what}"),
            books.update("b0", doc! { "$set": { "owner": by } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    for (what, nested) in hostile_nested_documents() {
        refused_outside(
            &db,
            &format!("ModelCollection::update whose $set value holds {what}"),
            books.update("b0", doc! { "$set": { "extra": nested } }),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }
    refused_outside(
        &db,
        "ModelCollection::update of a path with a `$` segment",
        books.update("b0", doc! { "$set": { "extra.$bad": 1 } }),
        invalid_key,
        Sent::Nothing,
    )
    .await;

    let tx = Transaction::start(&db).await.unwrap();
    let bound = books.in_transaction(&tx);
    bound
        .insert(&book("b1", owner_id("o2"), 2.0, 1, doc! {}))
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "ModelCollection::update $set NaN, in a transaction",
        bound.update("b0", doc! { "$set": { "price": f64::NAN } }),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    refused_inside(
        &db,
        &tx,
        "ModelCollection::replace with an array as owner, in a transaction",
        bound.replace(&book(
            "b0",
            Bson::Array(vec![owner_id("o1")]),
            5.0,
            0,
            doc! {},
        )),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    bound
        .update("b0", doc! { "$set": { "price": 6.0 } })
        .await
        .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_books").await, strs(&["b0", "b1"]));
    assert_eq!(owner_value(&db, "o1", "bookTotal").await, 6.0);
    assert_eq!(owner_value(&db, "o2", "bookTotal").await, 2.0);
    // The books written through the model handle are the subset's full items: the shelf followed.
    assert_eq!(
        docs(&db, "nrr_shelves").await[0]
            .get_array("recent")
            .unwrap()
            .len(),
        2
    );
    all_checks_clean(&db).await;
}

/// computed/mod.rs: an `$inc` by a NaN or an infinity is refused before anything is sent;
/// "What only the write can tell (an `$inc` that overflows a double) is refused once it is
/// sent: the toolkit's transaction keeps nothing, and a caller's transaction it ran in is ended
/// ([`Transaction::ended`] says `aborted after a refusal`)"; `Transaction`: "from then on bound
/// handles send nothing and `commit` returns [`Error::TransactionEnded`] ... (`abort` is
/// `Ok`)".
///
/// The error's variant is not named for this case; the docs call it a refusal, and the
/// refusals of a caller's values are `InvalidValue`/`InvalidKey` (`Error::is_refused_input`).
#[tokio::test]
async fn a_sum_overflowing_a_double_is_refused_after_the_write_and_ends_the_transaction() {
    let db = setup("refusals_inc_nan").await;
    let books = RefusalBook::collection(&db);
    books
        .insert(&book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();
    let cards = RefusalPaymentCard::collection(&db);
    cards
        .insert(&card("p1", owner_id("o1"), 3.0))
        .await
        .unwrap();
    RefusalAisle::collection(&db)
        .tree()
        .holders::<RefusalGadget>()
        .insert(&gadget("g0", owner_id("o1"), 4.0))
        .await
        .unwrap();

    // Outside a transaction: refused before anything is sent.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let before = snapshot(&db).await;
        let err = books
            .update("b0", doc! { "$inc": { "price": bad } })
            .await
            .unwrap_err();
        assert!(err.is_refused_input(), "$inc by {bad}: {err:?}");
        assert!(
            snapshot(&db).await == before,
            "$inc by {bad} kept something"
        );
    }
    // What the write alone tells: 5 × 1e308 is an infinity. The toolkit's transaction keeps
    // nothing.
    let before = snapshot(&db).await;
    let err = books
        .update("b0", doc! { "$mul": { "price": 1e308 } })
        .await
        .unwrap_err();
    assert!(err.is_refused_input(), "$mul to infinity: {err:?}");
    assert!(
        snapshot(&db).await == before,
        "$mul to infinity kept something"
    );

    // In the caller's transaction: the transaction ends, nothing of it is kept.
    let before = snapshot(&db).await;
    let tx = Transaction::start(&db).await.unwrap();
    let bound = books.in_transaction(&tx);
    bound
        .insert(&book("b1", owner_id("o2"), 2.0, 1, doc! {}))
        .await
        .unwrap();
    let err = bound
        .update("b0", doc! { "$mul": { "price": 1e308 } })
        .await
        .unwrap_err();
    assert!(
        err.is_refused_input(),
        "$mul to infinity in a transaction: {err:?}"
    );
    assert_eq!(tx.ended(), Some("aborted after a refusal"));
    db.take_commands();
    let err = bound
        .insert(&book("b2", owner_id("o2"), 1.0, 2, doc! {}))
        .await
        .unwrap_err();
    assert!(err.is_transaction_ended(), "{err:?}");
    check_sent(
        &db,
        "a bound handle after the transaction ended",
        Sent::Nothing,
    );
    let err = tx.commit().await.unwrap_err();
    assert!(err.is_transaction_ended(), "{err:?}");
    assert!(!err.is_transient(), "{err:?}");
    tx.abort().await.unwrap();
    assert!(
        snapshot(&db).await == before,
        "the ended transaction kept something"
    );

    // The same through another handle that writes the source: a polymorphic variant's update.
    let tx = Transaction::start(&db).await.unwrap();
    let bound = cards.in_transaction(&tx);
    bound
        .insert(&card("p2", owner_id("o2"), 6.0))
        .await
        .unwrap();
    let err = bound
        .update("p1", doc! { "$mul": { "amount": 1e308 } })
        .await
        .unwrap_err();
    assert!(err.is_refused_input(), "variant $mul to infinity: {err:?}");
    assert_eq!(tx.ended(), Some("aborted after a refusal"));
    assert!(tx.commit().await.unwrap_err().is_transaction_ended());
    assert!(
        snapshot(&db).await == before,
        "the ended transaction kept something"
    );

    // And through the model handle of a tree holder, after a holder inserted in the transaction.
    let tx = Transaction::start(&db).await.unwrap();
    RefusalAisle::collection(&db)
        .tree()
        .in_transaction(&tx)
        .holders::<RefusalGadget>()
        .insert(&gadget("g1", owner_id("o2"), 2.0))
        .await
        .unwrap();
    let err = RefusalGadget::collection(&db)
        .in_transaction(&tx)
        .update("g0", doc! { "$mul": { "weight": 1e308 } })
        .await
        .unwrap_err();
    assert!(err.is_refused_input(), "holder $mul to infinity: {err:?}");
    assert_eq!(tx.ended(), Some("aborted after a refusal"));
    assert!(tx.commit().await.unwrap_err().is_transaction_ended());
    assert!(
        snapshot(&db).await == before,
        "the ended transaction kept something"
    );

    assert_eq!(owner_value(&db, "o1", "bookTotal").await, 5.0);
    assert_eq!(owner_value(&db, "o1", "paymentTotal").await, 3.0);
    assert_eq!(owner_value(&db, "o1", "gadgetTotal").await, 4.0);
    all_checks_clean(&db).await;
}

/// The crate docs ("What the toolkit sends"): "A whole document of the model's own type (an
/// insert, a save, a replace) is not held to [`MAX_VALUE_DEPTH`] ... Its keys are still checked:
/// one holding NUL cannot be encoded, and is [`Error::InvalidValue`]. A subset's full item is an
/// item: it and its embedded form are held to the table above (the embedded form goes into
/// `$push`)." The table refuses an item's "keys starting with `$` or holding `.` or NUL, nesting
/// past [`MAX_VALUE_DEPTH`]" ([`Error::InvalidValue`], nothing sent). The subset docs: a full
/// item written through another handle ([`Computing`](pattern_runtime::Computing)) rebuilds its
/// parent's subset, so its embedded form reaches the parent through that handle too.
///
/// (Whole documents that are no subset's items, such as a tree holder or a versioned document,
/// are stored with such keys literally; this test does not assert on them.)
///
/// FINDING (fixed: the subset's entry in the map of derived data now refuses them for every
/// handle): lib.rs ("What the toolkit sends"): "A subset's full item is an item: it and its
/// embedded form are held to the table above (the embedded form goes into `$push`)", the
/// table refusing an item's "keys starting with `$` or holding `.` or NUL, nesting past
/// [`MAX_VALUE_DEPTH`]" with [`Error::InvalidValue`], nothing sent. `Subset::push` refuses
/// them, but `ModelCollection::insert` and `ModelCollection::replace` of the same full item return `Ok`:
/// the book is stored with `{"$where": "1"}`, `{"a.b": 1}` or 52 levels of nesting, and the
/// map of derived data's rebuild writes its embedded form into the shelf's `recent` array
/// (`insert nrr_books`, `update nrr_owners`, `find`/`aggregate nrr_books`, `update
/// nrr_shelves`, `commitTransaction`). Only a key with NUL is refused.
#[tokio::test]
async fn full_items_written_through_computing_are_held_to_the_item_rules() {
    let db = setup("refusals_full_items").await;
    let books = RefusalBook::collection(&db);
    books
        .insert(&book("b0", owner_id("o1"), 5.0, 0, doc! {}))
        .await
        .unwrap();

    for (what, extra) in hostile_nested_documents() {
        refused_outside(
            &db,
            &format!("ModelCollection::insert of a full item with {what}"),
            books.insert(&book("bad", owner_id("o1"), 1.0, 1, extra.clone())),
            invalid_value,
            Sent::Nothing,
        )
        .await;
        refused_outside(
            &db,
            &format!("ModelCollection::replace of a full item with {what}"),
            books.replace(&book("b0", owner_id("o1"), 5.0, 0, extra)),
            invalid_value,
            Sent::Nothing,
        )
        .await;
    }

    let tx = Transaction::start(&db).await.unwrap();
    let bound = books.in_transaction(&tx);
    bound
        .insert(&book("b1", owner_id("o2"), 2.0, 1, doc! {}))
        .await
        .unwrap();
    refused_inside(
        &db,
        &tx,
        "ModelCollection::insert of a full item with a `$` key, in a transaction",
        bound.insert(&book("bad", owner_id("o1"), 1.0, 2, doc! { "$where": "1" })),
        invalid_value,
        Sent::Nothing,
    )
    .await;
    tx.commit().await.unwrap();

    assert_eq!(ids(&db, "nrr_books").await, strs(&["b0", "b1"]));
    all_checks_clean(&db).await;
}

// NaN, the infinities and 64-bit overflow in computed sums, through the model handle.

// ---------------------------------------------------------------------------------------------
// 7: NaN, infinities and overflow in computed sums
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_tallies")]
pub struct Tally {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(sum = Score.points, by = tally_id)]
    pub points: i64,
    #[computed(sum = Score.weight, by = tally_id)]
    pub weight: f64,
    #[computed(max = Score.weight, by = tally_id)]
    pub heaviest: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_scores")]
pub struct Score {
    #[serde(rename = "_id")]
    pub id: i64,
    pub tally_id: String,
    pub points: i64,
    pub weight: f64,
}

#[tokio::test]
async fn computed_sums_refuse_nan_infinity_and_overflow() {
    let db = test_db("nwi_sums_hostile").await;
    pattern_runtime::sync(&db)
        .models(&[Tally::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Score::SCHEMA])
        .await
        .unwrap();
    Tally::collection(&db)
        .insert(&Tally {
            id: "t".into(),
            points: 0,
            weight: 0.0,
            heaviest: None,
        })
        .await
        .unwrap();
    let scores = Score::collection(&db);
    let score = |id, points, weight| Score {
        id,
        tally_id: "t".into(),
        points,
        weight,
    };
    scores.insert(&score(1, i64::MAX - 1, 1.0)).await.unwrap();
    scores.insert(&score(8, 0, 1.0)).await.unwrap();
    let snapshot = (
        dump(&db, "nwi_scores").await,
        dump(&db, "nwi_tallies").await,
    );

    for (s, what) in [
        (score(2, 0, f64::NAN), "NaN"),
        (score(3, 0, f64::INFINITY), "infinity"),
        (score(4, 0, f64::NEG_INFINITY), "-infinity"),
        (score(5, 2, 0.0), "a sum past i64::MAX"),
    ] {
        let e = scores.insert(&s).await.unwrap_err();
        assert!(refused_value(&e), "{what}: {e:?}");
        assert_eq!(
            (
                dump(&db, "nwi_scores").await,
                dump(&db, "nwi_tallies").await
            ),
            snapshot,
            "{what}: nothing written"
        );
    }
    // The same through an update.
    let e = scores
        .update(1, doc! { "$set": { "weight": f64::NAN } })
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    // The sum leaves the 64-bit range while each source stays inside it.
    let e = scores
        .update(8, doc! { "$inc": { "points": 5 } })
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    // A source's own `$inc` past i64::MAX: the server's refusal (no sum involved), typed and
    // naming the field.
    let e = scores
        .update(1, doc! { "$inc": { "points": 5 } })
        .await
        .unwrap_err();
    assert!(!e.is_transaction_ended(), "{e:?}");
    assert!(
        matches!(&e, Error::InvalidValue { field, .. } if field == "points"),
        "{e:?}"
    );
    // The same overflowing sum in a caller's transaction: the same typed error, but the
    // transaction is ended (the source was written before the sum refused it), unlike the
    // refusals made before anything is sent, which leave it open.
    let tx = Transaction::start(&db).await.unwrap();
    let e = scores
        .in_transaction(&tx)
        .update(8, doc! { "$inc": { "points": 5 } })
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    let ended_by_overflow = tx.ended();
    tx.abort().await.unwrap();
    assert_eq!(ended_by_overflow, Some("aborted after a refusal"));
    assert_eq!(
        (
            dump(&db, "nwi_scores").await,
            dump(&db, "nwi_tallies").await
        ),
        snapshot
    );

    // Finite values whose float sum overflows to infinity.
    scores.insert(&score(6, 0, f64::MAX)).await.unwrap();
    let r = scores.insert(&score(7, 0, f64::MAX)).await;
    let weight = |d: Document| d.get_f64("weight").unwrap();
    let after_insert = weight(raw_one(&db, "nwi_tallies", "t").await.unwrap());
    if r.is_ok() {
        scores.delete(7).await.unwrap();
    }
    let after_delete = weight(raw_one(&db, "nwi_tallies", "t").await.unwrap());
    let check = Tally::collection(&db).computed().check().await.unwrap();
    let mut problems = Vec::new();
    if !r.as_ref().is_err_and(refused_value) || !after_insert.is_finite() {
        problems.push(format!(
            "two finite f64::MAX weights: {r:?}, stored sum {after_insert}, \
             {after_delete} after deleting one of them through the model handle"
        ));
    }
    if after_delete.is_infinite() && check.is_clean() {
        problems.push(format!(
            "the stored sum is {after_delete} while its sources sum to about f64::MAX, \
             yet check() is {check:?}"
        ));
    }
    // FOUND (fixed): the docs say summed fields refuse NaN and the infinities ("one would poison
    // the sum for good") and that "a sum that would leave the 64-bit range is
    // `Error::InvalidValue`", yet two finite `f64::MAX` weights are accepted and the stored
    // sum becomes `inf`; once one of them is deleted through the model handle it stays `inf`
    // (inf - MAX = inf), and `ComputedFields::check` reports no drift.
    assert!(problems.is_empty(), "{problems:#?}");
}

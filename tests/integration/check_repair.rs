//! Every pattern handle's `check()` and `repair()` against the server, with the doctor alongside:
//! a small database written through the toolkit is clean to both; one drift written around the
//! toolkit with the raw driver is exactly one finding of the pattern's kind, listing exactly the
//! drifted document (the source for a stale extended-reference copy) and naming the repair
//! call; the repair rewrites it, after which both are clean again and the raw document holds
//! the right value. Last, a drift no repair can mend (a two-way child naming an owner that does
//! not exist) is left in the repair's report.

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::doctor::{Check, Finding};
use pattern_runtime::{
    doctor::{CheckReport, RepairReport},
    sync, DoctorOptions, Fields, Measurement, Model, Ref, SyncOptions,
};
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

// ----- helpers -----

/// A fresh database `check_repair_<pattern>` with the models of `group` synced.
async fn fresh(pattern: &str, group: &str) -> TestDb {
    fresh_in(test_db(&format!("check_repair_{pattern}")).await, group).await
}

/// [`fresh`] in `db`.
async fn fresh_in(db: TestDb, group: &str) -> TestDb {
    sync(&db)
        .group(group)
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// The doctor's findings over the models of `group` (every document sampled), without the
/// unused indexes a fresh database has.
async fn doctor(db: &TestDb, group: &str) -> Vec<Finding> {
    let report = pattern_runtime::doctor(db)
        .group(group)
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    assert!(report.skipped.is_empty(), "{report}");
    report
        .findings
        .into_iter()
        .filter(|f| f.check != Check::UnusedIndex)
        .collect()
}

fn show(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The handle's check and the doctor find nothing.
async fn assert_clean(db: &TestDb, group: &str, checked: &CheckReport) {
    assert!(checked.is_clean(), "{checked}");
    assert!(checked.examined > 0, "{checked}");
    let found = doctor(db, group).await;
    assert!(found.is_empty(), "the doctor found:\n{}", show(&found));
}

/// The handle's check found exactly one finding, of `check`, about exactly `id`; the doctor
/// found the same one kind, about the same document, and its fix names `repair`.
async fn assert_one_drift(
    db: &TestDb,
    group: &str,
    checked: &CheckReport,
    check: Check,
    id: &Bson,
    repair: &str,
) {
    assert_eq!(checked.findings.len(), 1, "{checked}");
    let finding = &checked.findings[0];
    assert_eq!(finding.check, check, "{checked}");
    assert_eq!(finding.documents, std::slice::from_ref(id), "{checked}");
    assert_eq!(checked.documents(), std::slice::from_ref(id), "{checked}");
    assert!(finding.fix.contains(repair), "{checked}");
    // A drift that also breaks the declared shape (a bucket over its cap passes `maxItems`) is
    // a validator finding too, about the same document.
    let (shape, found): (Vec<_>, Vec<_>) = doctor(db, group)
        .await
        .into_iter()
        .partition(|f| f.check == Check::Validator && check != Check::Validator);
    for f in &shape {
        assert_eq!(f.documents, std::slice::from_ref(id), "{}", show(&shape));
    }
    assert_eq!(found.len(), 1, "the doctor found:\n{}", show(&found));
    assert_eq!(found[0].check, check, "{}", show(&found));
    assert_eq!(
        found[0].documents,
        std::slice::from_ref(id),
        "{}",
        show(&found)
    );
    assert!(
        found[0].fix.contains(repair),
        "`{repair}` not in the doctor's fix:\n{}",
        show(&found)
    );
}

/// The repair rewrote something and left nothing.
fn assert_repaired(repaired: &RepairReport) {
    assert!(repaired.repaired >= 1, "{repaired}");
    assert!(repaired.left.is_empty(), "{repaired}");
}

/// The stored document of `collection` whose `_id` is `id`, as BSON.
async fn raw(db: &TestDb, collection: &str, id: impl Into<Bson>) -> Document {
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id.into() })
        .await
        .unwrap()
        .expect("the document exists")
}

fn strings(doc: &Document, field: &str) -> Vec<String> {
    doc.get_array(field)
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_owned())
        .collect()
}

fn int(doc: &Document, field: &str) -> i64 {
    match doc.get(field) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("`{field}` is no integer: {other:?} in {doc}"),
    }
}

/// 2026-01-01T00:00:00Z plus `minutes`.
fn at(minutes: i64) -> DateTime {
    DateTime::from_millis(1_767_225_600_000 + minutes * 60_000)
}

// ----- subset -----

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_subset", collection = "shelves")]
struct Shelf {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 3, sort(added_at = -1), full = ShelfBook, parent = shelf_id)]
    recent: Vec<BookExcerpt>,
    #[summary(count = recent)]
    book_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_subset", collection = "shelf_books")]
struct ShelfBook {
    #[serde(rename = "_id")]
    id: String,
    shelf_id: String,
    title: String,
    added_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct BookExcerpt {
    book_id: String,
    title: String,
    added_at: DateTime,
}

impl From<&ShelfBook> for BookExcerpt {
    fn from(b: &ShelfBook) -> Self {
        BookExcerpt {
            book_id: b.id.clone(),
            title: b.title.clone(),
            added_at: b.added_at,
        }
    }
}

fn excerpt_ids(shelf: &Document) -> Vec<String> {
    shelf
        .get_array("recent")
        .unwrap()
        .iter()
        .map(|e| {
            e.as_document()
                .unwrap()
                .get_str("bookId")
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn subset_drift_is_found_and_rebuilt() {
    let group = "check_repair_subset";
    let db = fresh("subset", group).await;
    for id in ["s1", "s2"] {
        Shelf::collection(&db)
            .raw()
            .insert_one(Shelf {
                id: id.into(),
                recent: Vec::new(),
                book_count: 0,
            })
            .await
            .unwrap();
    }
    let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
    for (n, shelf) in [
        (1, "s1"),
        (2, "s1"),
        (3, "s2"),
        (4, "s1"),
        (5, "s1"),
        (6, "s1"),
    ] {
        subset
            .push(
                shelf,
                ShelfBook {
                    id: format!("b{n}"),
                    shelf_id: shelf.into(),
                    title: format!("book {n}"),
                    added_at: at(n),
                },
            )
            .await
            .unwrap();
    }
    assert_eq!(
        excerpt_ids(&raw(&db, "shelves", "s1").await),
        ["b6", "b5", "b4"]
    );
    assert_clean(&db, group, &subset.check().await.unwrap()).await;

    // Behind the toolkit's back: s1 loses the last of its three excerpts, its count unchanged.
    db.collection::<Document>("shelves")
        .update_one(doc! { "_id": "s1" }, doc! { "$pop": { "recent": 1 } })
        .await
        .unwrap();
    assert_eq!(excerpt_ids(&raw(&db, "shelves", "s1").await), ["b6", "b5"]);
    assert_one_drift(
        &db,
        group,
        &subset.check().await.unwrap(),
        Check::SubsetDrift,
        &Bson::from("s1"),
        ".subset(",
    )
    .await;

    assert_repaired(&subset.repair().await.unwrap());
    assert_clean(&db, group, &subset.check().await.unwrap()).await;
    let s1 = raw(&db, "shelves", "s1").await;
    assert_eq!(excerpt_ids(&s1), ["b6", "b5", "b4"]);
    assert_eq!(int(&s1, "bookCount"), 5);

    // A full item retitled around the toolkit: s1's excerpt of b5 is stale. Only the typed
    // check sees it (it converts with `From`, which the doctor has not): one finding, about s1.
    db.collection::<Document>("shelf_books")
        .update_one(
            doc! { "_id": "b5" },
            doc! { "$set": { "title": "retitled" } },
        )
        .await
        .unwrap();
    let checked = subset.check().await.unwrap();
    assert_eq!(checked.findings.len(), 1, "{checked}");
    assert_eq!(checked.findings[0].check, Check::SubsetDrift, "{checked}");
    assert_eq!(checked.documents(), [Bson::from("s1")], "{checked}");
    assert!(checked.findings[0].fix.contains(".subset("), "{checked}");
    assert_repaired(&subset.repair().await.unwrap());
    assert_clean(&db, group, &subset.check().await.unwrap()).await;
    let titles: Vec<String> = raw(&db, "shelves", "s1")
        .await
        .get_array("recent")
        .unwrap()
        .iter()
        .map(|e| {
            e.as_document()
                .unwrap()
                .get_str("title")
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(titles, ["book 6", "retitled", "book 4"]);

    // Bound to a transaction, the check (both of its parts: the counts and the items as they
    // are now) and the repair read in it: a full item retitled in the transaction is found
    // and refilled there.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("shelf_books")
        .update_one(
            doc! { "_id": "b6" },
            doc! { "$set": { "title": "in the transaction" } },
        )
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Shelf::collection(&db)
        .in_transaction(&tx)
        .subset(Shelf::FIELDS.recent);
    assert_eq!(bound.check().await.unwrap().documents(), [Bson::from("s1")]);
    assert!(subset.check().await.unwrap().is_clean(), "nothing outside");
    let repaired = bound.repair().await.unwrap();
    assert_eq!(
        (repaired.repaired, repaired.left.len()),
        (1, 0),
        "{repaired:?}"
    );
    tx.commit().await.unwrap();
    let first = raw(&db, "shelves", "s1").await.get_array("recent").unwrap()[0].clone();
    assert_eq!(
        first.as_document().unwrap().get_str("title").unwrap(),
        "in the transaction"
    );

    // The orphans part reads in it too: a parent deleted in the transaction (around the
    // toolkit) leaves its full items orphaned there, and only there.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("shelves")
        .delete_one(doc! { "_id": "s2" })
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Shelf::collection(&db)
        .in_transaction(&tx)
        .subset(Shelf::FIELDS.recent);
    let checked = bound.check().await.unwrap();
    assert!(
        checked.findings.iter().any(|f| f.check == Check::Orphans),
        "{checked}"
    );
    assert!(subset.check().await.unwrap().is_clean(), "nothing outside");
    tx.abort().await.unwrap();
}

/// A subset with a sum beside its count: a sum written around the toolkit is drift too.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_subset_sum", collection = "tills")]
struct Till {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 2, sort(at = -1), full = Sale, parent = till_id)]
    latest: Vec<SaleLine>,
    #[summary(count = latest)]
    sales: i64,
    #[summary(sum = latest.amount)]
    takings: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_subset_sum", collection = "till_sales")]
struct Sale {
    #[serde(rename = "_id")]
    id: i64,
    till_id: String,
    amount: i64,
    at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
struct SaleLine {
    amount: i64,
    at: DateTime,
}

impl From<&Sale> for SaleLine {
    fn from(s: &Sale) -> Self {
        SaleLine {
            amount: s.amount,
            at: s.at,
        }
    }
}

#[tokio::test]
async fn subset_sum_drift_is_found_and_rebuilt() {
    let group = "check_repair_subset_sum";
    let db = fresh("subset_sum", group).await;
    Till::collection(&db)
        .raw()
        .insert_one(Till {
            id: "t1".into(),
            latest: Vec::new(),
            sales: 0,
            takings: 0,
        })
        .await
        .unwrap();
    let subset = Till::collection(&db).subset(Till::FIELDS.latest);
    for n in 1..=3 {
        let sale = Sale {
            id: n,
            till_id: "t1".into(),
            amount: 10 * n,
            at: at(n),
        };
        subset.push("t1", sale).await.unwrap();
    }
    assert_eq!(int(&raw(&db, "tills", "t1").await, "takings"), 60);
    assert_clean(&db, group, &subset.check().await.unwrap()).await;
    db.collection::<Document>("tills")
        .update_one(doc! { "_id": "t1" }, doc! { "$set": { "takings": 61 } })
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &subset.check().await.unwrap(),
        Check::SubsetDrift,
        &Bson::from("t1"),
        ".subset(",
    )
    .await;
    assert_repaired(&subset.repair().await.unwrap());
    assert_clean(&db, group, &subset.check().await.unwrap()).await;
    assert_eq!(int(&raw(&db, "tills", "t1").await, "takings"), 60);
}

// ----- computed -----

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_computed", collection = "writers")]
struct Writer {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[computed(count = Essay, by = writer_id)]
    essay_count: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_computed", collection = "essays")]
struct Essay {
    #[serde(rename = "_id")]
    id: i64,
    writer_id: String,
    title: String,
}

#[tokio::test]
async fn computed_drift_is_found_and_recomputed() {
    let group = "check_repair_computed";
    let db = fresh("computed", group).await;
    for id in ["w1", "w2"] {
        Writer::collection(&db)
            .raw()
            .insert_one(Writer {
                id: id.into(),
                name: id.to_uppercase(),
                essay_count: 0,
            })
            .await
            .unwrap();
    }
    let essays = Essay::collection(&db);
    for (id, writer) in [(1, "w1"), (2, "w1"), (3, "w2"), (4, "w1")] {
        essays
            .insert(&Essay {
                id,
                writer_id: writer.into(),
                title: format!("essay {id}"),
            })
            .await
            .unwrap();
    }
    assert_eq!(int(&raw(&db, "writers", "w1").await, "essayCount"), 3);
    let writers = Writer::collection(&db).computed();
    assert_clean(&db, group, &writers.check().await.unwrap()).await;

    db.collection::<Document>("writers")
        .update_one(doc! { "_id": "w1" }, doc! { "$set": { "essayCount": 7 } })
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &writers.check().await.unwrap(),
        Check::ComputedDrift,
        &Bson::from("w1"),
        ".computed().repair()",
    )
    .await;

    assert_repaired(&writers.repair().await.unwrap());
    assert_clean(&db, group, &writers.check().await.unwrap()).await;
    assert_eq!(int(&raw(&db, "writers", "w1").await, "essayCount"), 3);
    assert_eq!(int(&raw(&db, "writers", "w2").await, "essayCount"), 1);

    // Bound to a transaction, the check and the repair read in it: drift written in the
    // transaction is found and mended there, and the repair's closing check finds nothing.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("writers")
        .update_one(doc! { "_id": "w2" }, doc! { "$set": { "essayCount": 9 } })
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Writer::collection(&db).in_transaction(&tx).computed();
    assert_eq!(bound.check().await.unwrap().documents(), [Bson::from("w2")]);
    assert!(writers.check().await.unwrap().is_clean(), "nothing outside");
    let repaired = bound.repair().await.unwrap();
    assert_eq!(
        (repaired.repaired, repaired.left.len()),
        (1, 0),
        "{repaired:?}"
    );
    tx.commit().await.unwrap();
    assert_eq!(int(&raw(&db, "writers", "w2").await, "essayCount"), 1);
}

// ----- extended reference -----

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "check_repair_extref", collection = "suppliers")]
#[extended_ref(SupplierRef(name, city))]
struct Supplier {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    city: String,
    phone: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "check_repair_extref", collection = "purchase_orders")]
struct PurchaseOrder {
    #[serde(rename = "_id")]
    id: String,
    #[extended_ref(propagate)]
    supplier: SupplierRef,
    amount: i64,
}

#[tokio::test]
async fn a_stale_extended_reference_copy_is_found_and_resynced() {
    let group = "check_repair_extref";
    let db = fresh("extref", group).await;
    let suppliers =
        [("s1", "Acme", "Lyon"), ("s2", "Globex", "Turin")].map(|(id, name, city)| Supplier {
            id: id.into(),
            name: name.into(),
            city: city.into(),
            phone: "555".into(),
        });
    Supplier::collection(&db)
        .raw()
        .insert_many(&suppliers)
        .await
        .unwrap();
    for (id, supplier) in [
        ("o1", &suppliers[0]),
        ("o2", &suppliers[0]),
        ("o3", &suppliers[1]),
    ] {
        PurchaseOrder::collection(&db)
            .raw()
            .insert_one(PurchaseOrder {
                id: id.into(),
                supplier: SupplierRef::from(supplier),
                amount: 10,
            })
            .await
            .unwrap();
    }
    let references = Supplier::collection(&db).references();
    // A rename through the toolkit reaches both of s1's orders.
    Supplier::collection(&db)
        .update("s1", doc! { "$set": { "name": "Acme Ltd" } })
        .await
        .unwrap();
    let copy = |order: Document| order.get_document("supplier").unwrap().clone();
    assert_eq!(
        copy(raw(&db, "purchase_orders", "o2").await)
            .get_str("name")
            .ok(),
        Some("Acme Ltd")
    );
    assert_clean(&db, group, &references.check().await.unwrap()).await;

    db.collection::<Document>("purchase_orders")
        .update_one(
            doc! { "_id": "o2" },
            doc! { "$set": { "supplier.name": "Acme" } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &references.check().await.unwrap(),
        Check::StaleCopy,
        &Bson::from("s1"),
        ".references().repair()",
    )
    .await;

    assert_repaired(&references.repair().await.unwrap());
    assert_clean(&db, group, &references.check().await.unwrap()).await;
    let o2 = copy(raw(&db, "purchase_orders", "o2").await);
    assert_eq!(o2, doc! { "_id": "s1", "name": "Acme Ltd", "city": "Lyon" });
}

// ----- tree -----

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "check_repair_tree", collection = "regions")]
#[tree(parent = parent, ancestors = ancestors, key = code)]
struct Region {
    #[serde(rename = "_id")]
    id: ObjectId,
    code: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_tree", collection = "stores")]
#[in_tree(Region, node = region, path = region_path)]
struct Store {
    #[serde(rename = "_id")]
    id: String,
    region: String,
    region_path: Vec<String>,
}

/// world > europe > france, world > asia > japan, and a store in france and one in asia; the
/// `_id`s of the regions by code.
async fn regions_and_stores(db: &TestDb) -> Vec<(&'static str, ObjectId)> {
    let tree = Region::collection(db).tree();
    let mut ids = Vec::new();
    for (code, parent) in [
        ("world", None),
        ("europe", Some("world")),
        ("france", Some("europe")),
        ("asia", Some("world")),
        ("japan", Some("asia")),
    ] {
        let region = Region {
            id: ObjectId::new(),
            code: code.into(),
            parent: parent.map(str::to_owned),
            ancestors: Vec::new(),
        };
        tree.insert(&region).await.unwrap();
        ids.push((code, region.id));
    }
    let stores = tree.holders::<Store>();
    for (id, region) in [("paris", "france"), ("delhi", "asia")] {
        stores
            .insert(&Store {
                id: id.into(),
                region: region.into(),
                region_path: Vec::new(),
            })
            .await
            .unwrap();
    }
    assert_eq!(
        strings(&raw(db, "stores", "paris").await, "regionPath"),
        ["world", "europe", "france"]
    );
    ids
}

#[tokio::test]
async fn a_stale_holder_path_is_found_and_rewritten_from_the_nodes() {
    let group = "check_repair_tree";
    let db = fresh("tree_path", group).await;
    regions_and_stores(&db).await;
    let tree = Region::collection(&db).tree();
    assert_clean(&db, group, &tree.check().await.unwrap()).await;

    db.collection::<Document>("stores")
        .update_one(
            doc! { "_id": "paris" },
            doc! { "$set": { "regionPath": ["world", "france"] } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &tree.check().await.unwrap(),
        Check::TreeDrift,
        &Bson::from("paris"),
        ".tree().repair()",
    )
    .await;

    assert_repaired(&tree.repair().await.unwrap());
    assert_clean(&db, group, &tree.check().await.unwrap()).await;
    assert_eq!(
        strings(&raw(&db, "stores", "paris").await, "regionPath"),
        ["world", "europe", "france"]
    );

    // Bound to a transaction, the tree's check and repair read in it (the holders and the
    // nodes they name): a path made stale in the transaction is found and rewritten there.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("stores")
        .update_one(
            doc! { "_id": "delhi" },
            doc! { "$set": { "regionPath": ["world"] } },
        )
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Region::collection(&db).in_transaction(&tx).tree();
    assert_eq!(
        bound.check().await.unwrap().documents(),
        [Bson::from("delhi")]
    );
    assert!(tree.check().await.unwrap().is_clean(), "nothing outside");
    let repaired = bound.repair().await.unwrap();
    assert_eq!(
        (repaired.repaired, repaired.left.len()),
        (1, 0),
        "{repaired:?}"
    );
    tx.commit().await.unwrap();
    assert_eq!(
        strings(&raw(&db, "stores", "delhi").await, "regionPath"),
        ["world", "asia"]
    );
}

#[tokio::test]
async fn a_stale_ancestors_list_is_found_and_rewritten_from_the_parents() {
    let group = "check_repair_tree";
    let db = fresh("tree_ancestors", group).await;
    let ids = regions_and_stores(&db).await;
    let japan = ids.iter().find(|(code, _)| *code == "japan").unwrap().1;
    let tree = Region::collection(&db).tree();
    assert_clean(&db, group, &tree.check().await.unwrap()).await;

    // A leaf with no store: its ancestors are copied nowhere else.
    db.collection::<Document>("regions")
        .update_one(
            doc! { "_id": japan },
            doc! { "$set": { "ancestors": ["world", "europe"] } },
        )
        .await
        .unwrap();
    // The finding lists the node's `_id` (what `Finding::documents` holds), not its key.
    assert_one_drift(
        &db,
        group,
        &tree.check().await.unwrap(),
        Check::TreeDrift,
        &Bson::ObjectId(japan),
        ".tree().repair()",
    )
    .await;

    assert_repaired(&tree.repair().await.unwrap());
    assert_clean(&db, group, &tree.check().await.unwrap()).await;
    assert_eq!(
        strings(&raw(&db, "regions", japan).await, "ancestors"),
        ["world", "asia"]
    );
}

// ----- two-way relation -----

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "check_repair_two_way", collection = "crews")]
struct Crew {
    #[serde(rename = "_id")]
    id: String,
    #[relation(inverse = crew)]
    #[bounded(50)]
    members: Vec<Ref<Sailor>>,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "check_repair_two_way", collection = "sailors")]
struct Sailor {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[relation(inverse = members)]
    crew: Option<Ref<Crew>>,
}

/// Crews c1 and c2; sailors s1, s2 and s3 assigned to c1, then s3 moved to c2, and s4 in no
/// crew.
async fn crews_and_sailors(db: &TestDb) {
    for id in ["c1", "c2"] {
        Crew::collection(db)
            .raw()
            .insert_one(Crew {
                id: id.into(),
                members: Vec::new(),
            })
            .await
            .unwrap();
    }
    for id in ["s1", "s2", "s3", "s4"] {
        Sailor::collection(db)
            .raw()
            .insert_one(Sailor {
                id: id.into(),
                name: id.to_uppercase(),
                crew: None,
            })
            .await
            .unwrap();
    }
    let relation = Sailor::collection(db).relation(Sailor::FIELDS.crew);
    for (sailor, crew) in [("s1", "c1"), ("s2", "c1"), ("s3", "c1"), ("s3", "c2")] {
        relation
            .assign(&sailor.to_owned(), &crew.to_owned())
            .await
            .unwrap();
    }
    assert_eq!(
        strings(&raw(db, "crews", "c1").await, "members"),
        ["s1", "s2"]
    );
    assert_eq!(strings(&raw(db, "crews", "c2").await, "members"), ["s3"]);
}

#[tokio::test]
async fn a_child_its_owner_no_longer_lists_is_found_and_listed_again() {
    let group = "check_repair_two_way";
    let db = fresh("two_way", group).await;
    crews_and_sailors(&db).await;
    let relation = Sailor::collection(&db).relation(Sailor::FIELDS.crew);
    assert_clean(&db, group, &relation.check().await.unwrap()).await;

    db.collection::<Document>("crews")
        .update_one(doc! { "_id": "c1" }, doc! { "$pull": { "members": "s2" } })
        .await
        .unwrap();
    // The finding is about the child its owner does not list (in the children's collection).
    assert_one_drift(
        &db,
        group,
        &relation.check().await.unwrap(),
        Check::TwoWayDrift,
        &Bson::from("s2"),
        ".relation(",
    )
    .await;

    assert_repaired(&relation.repair().await.unwrap());
    assert_clean(&db, group, &relation.check().await.unwrap()).await;
    let mut members = strings(&raw(&db, "crews", "c1").await, "members");
    members.sort();
    assert_eq!(members, ["s1", "s2"]);
    assert_eq!(strings(&raw(&db, "crews", "c2").await, "members"), ["s3"]);
}

#[tokio::test]
async fn a_child_naming_an_owner_that_does_not_exist_is_left_by_the_repair() {
    let group = "check_repair_two_way";
    let db = fresh("two_way_orphan", group).await;
    crews_and_sailors(&db).await;
    let relation = Sailor::collection(&db).relation(Sailor::FIELDS.crew);
    assert_clean(&db, group, &relation.check().await.unwrap()).await;

    // s4, listed by no crew, names a crew nobody created.
    db.collection::<Document>("sailors")
        .update_one(doc! { "_id": "s4" }, doc! { "$set": { "crew": "ghost" } })
        .await
        .unwrap();
    let checked = relation.check().await.unwrap();
    assert_eq!(checked.findings.len(), 1, "{checked}");
    assert_eq!(checked.findings[0].check, Check::TwoWayDrift, "{checked}");
    assert_eq!(
        checked.findings[0].documents,
        [Bson::from("s4")],
        "{checked}"
    );

    let before: Vec<Document> = ["c1", "c2"]
        .into_iter()
        .map(|c| raw(&db, "crews", c))
        .collect::<futures_util::future::JoinAll<_>>()
        .await;
    let repaired = relation.repair().await.unwrap();
    assert_eq!(repaired.repaired, 0, "{repaired}");
    assert_eq!(repaired.left.len(), 1, "{repaired}");
    assert_eq!(repaired.left[0].check, Check::TwoWayDrift, "{repaired}");
    assert_eq!(repaired.left[0].documents, [Bson::from("s4")], "{repaired}");
    assert!(repaired.left[0].fix.contains("cannot invent"), "{repaired}");
    // Nothing was written, and the check still finds it.
    let after: Vec<Document> = ["c1", "c2"]
        .into_iter()
        .map(|c| raw(&db, "crews", c))
        .collect::<futures_util::future::JoinAll<_>>()
        .await;
    assert_eq!(before, after);
    assert_eq!(
        raw(&db, "sailors", "s4").await.get_str("crew").ok(),
        Some("ghost")
    );
    assert_eq!(relation.check().await.unwrap().findings, checked.findings);
}

// ----- outlier -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Message {
    n: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "check_repair_outlier", collection = "channels")]
struct Channel {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 3, overflow = "channel_messages", capacity = 4, flag = is_outlier, count = message_count)]
    messages: Vec<Message>,
    is_outlier: bool,
    message_count: i64,
}

#[tokio::test]
async fn an_outlier_count_that_disagrees_with_its_items_is_found_and_rebuilt() {
    let group = "check_repair_outlier";
    let db = fresh("outlier", group).await;
    for id in ["busy", "quiet"] {
        Channel::collection(&db)
            .raw()
            .insert_one(Channel {
                id: id.into(),
                messages: Vec::new(),
                is_outlier: false,
                message_count: 0,
            })
            .await
            .unwrap();
    }
    let outlier = Channel::collection(&db).outlier(Channel::FIELDS.messages);
    let message = |n: i64| Message {
        n,
        text: format!("message {n}"),
    };
    for n in 0..10 {
        outlier.push("busy", message(n)).await.unwrap();
    }
    for n in 0..2 {
        outlier.push("quiet", message(n)).await.unwrap();
    }
    let busy = raw(&db, "channels", "busy").await;
    assert_eq!(
        (int(&busy, "messageCount"), busy.get_bool("isOutlier").ok()),
        (10, Some(true))
    );
    assert_clean(&db, group, &outlier.check().await.unwrap()).await;

    db.collection::<Document>("channels")
        .update_one(
            doc! { "_id": "busy" },
            doc! { "$set": { "messageCount": 99 } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &outlier.check().await.unwrap(),
        Check::OutlierDrift,
        &Bson::from("busy"),
        "repair()",
    )
    .await;

    assert_repaired(&outlier.repair().await.unwrap());
    assert_clean(&db, group, &outlier.check().await.unwrap()).await;
    let busy = raw(&db, "channels", "busy").await;
    assert_eq!(
        (int(&busy, "messageCount"), busy.get_bool("isOutlier").ok()),
        (10, Some(true))
    );
    assert_eq!(
        outlier.items("busy").await.unwrap(),
        (0..10).map(message).collect::<Vec<_>>()
    );

    // Bound to a transaction, the check and the repair read in it (the overflow documents
    // too): drift written in the transaction is found and mended there; aborted, the drift
    // and its repair are gone alike.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("channels")
        .update_one(
            doc! { "_id": "quiet" },
            doc! { "$set": { "messageCount": 50 } },
        )
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Channel::collection(&db)
        .in_transaction(&tx)
        .outlier(Channel::FIELDS.messages);
    assert_eq!(
        bound.check().await.unwrap().documents(),
        [Bson::from("quiet")]
    );
    assert!(outlier.check().await.unwrap().is_clean(), "nothing outside");
    let repaired = bound.repair().await.unwrap();
    assert_eq!(
        (repaired.repaired, repaired.left.len()),
        (1, 0),
        "{repaired:?}"
    );
    assert!(bound.check().await.unwrap().is_clean());
    tx.abort().await.unwrap();
    assert_eq!(int(&raw(&db, "channels", "quiet").await, "messageCount"), 2);
}

// ----- bucket -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    group = "check_repair_bucket",
    collection = "meter_buckets",
    key = meter_id,
    time = at,
    max_count = 3,
    span = "1h",
    summary(kwh(sum))
)]
struct MeterReading {
    meter_id: String,
    at: DateTime,
    kwh: i64,
}

/// Every bucket of `meter`, earliest first.
async fn meter_buckets(db: &TestDb, meter: &str) -> Vec<Document> {
    futures_util::TryStreamExt::try_collect(
        db.collection::<Document>("meter_buckets")
            .find(doc! { "meterId": meter })
            .sort(doc! { "first": 1, "_id": 1 })
            .await
            .unwrap(),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_bucket_over_its_cap_is_found_and_split() {
    let group = "check_repair_bucket";
    // It writes an overfull bucket around the toolkit.
    let db = fresh_in(test_db_unvalidated("check_repair_bucket").await, group).await;
    let series = MeterReading::series(&db);
    for (meter, minute) in [
        ("m1", 1),
        ("m1", 2),
        ("m1", 3),
        ("m1", 4),
        ("m2", 5),
        ("m2", 6),
    ] {
        series
            .insert(&MeterReading {
                meter_id: meter.into(),
                at: at(minute),
                kwh: minute,
            })
            .await
            .unwrap();
    }
    let m2 = meter_buckets(&db, "m2").await;
    assert_eq!(m2.len(), 1);
    assert_eq!(int(&m2[0], "count"), 2);
    let bucket = m2[0].get("_id").unwrap().clone();
    assert_clean(&db, group, &series.check().await.unwrap()).await;

    // Two copies of its last measurement pushed by hand: 4 in a bucket of at most 3.
    let last = m2[0].get_array("measurements").unwrap()[1].clone();
    db.collection::<Document>("meter_buckets")
        .update_one(
            doc! { "_id": bucket.clone() },
            doc! { "$push": { "measurements": { "$each": [last.clone(), last] } } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &series.check().await.unwrap(),
        Check::BucketOverCap,
        &bucket,
        "series(&db).repair()",
    )
    .await;

    let repaired = series.repair().await.unwrap();
    assert_eq!(repaired.repaired, 1, "one bucket split: {repaired}");
    assert_repaired(&repaired);
    assert_clean(&db, group, &series.check().await.unwrap()).await;
    let kept = raw(&db, "meter_buckets", bucket.clone()).await;
    assert_eq!(kept.get_array("measurements").unwrap().len(), 3, "{kept}");
    assert_eq!(int(&kept, "count"), 3, "{kept}");
    let m2 = meter_buckets(&db, "m2").await;
    assert_eq!(m2.len(), 2);
    let counts: Vec<i64> = m2.iter().map(|b| int(b, "count")).collect();
    assert_eq!(counts.iter().sum::<i64>(), 4, "{m2:?}");
    for b in &m2 {
        assert_eq!(
            b.get_array("measurements").unwrap().len() as i64,
            int(b, "count"),
            "{b}"
        );
    }
    // The summaries follow the split: 5 + 6 + 6 + 6.
    let sums: i64 = m2
        .iter()
        .map(|b| {
            int(
                b.get_document("summary")
                    .unwrap()
                    .get_document("kwh")
                    .unwrap(),
                "sum",
            )
        })
        .sum();
    assert_eq!(sums, 23, "{m2:?}");
}

// ----- attribute -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct GadgetSpec {
    name: String,
    value: Bson,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(group = "check_repair_attribute", collection = "gadgets")]
struct Gadget {
    #[serde(rename = "_id")]
    id: String,
    #[attribute]
    specs: Vec<GadgetSpec>,
}

fn spec(name: &str, value: impl Into<Bson>) -> GadgetSpec {
    GadgetSpec {
        name: name.into(),
        value: value.into(),
    }
}

#[tokio::test]
async fn an_attribute_key_held_twice_is_found_and_deduplicated() {
    let group = "check_repair_attribute";
    let db = fresh("attribute", group).await;
    for id in ["g1", "g2"] {
        Gadget::collection(&db)
            .raw()
            .insert_one(Gadget {
                id: id.into(),
                specs: Vec::new(),
            })
            .await
            .unwrap();
    }
    let attributes = Gadget::collection(&db).attributes(Gadget::FIELDS.specs);
    for (id, item) in [
        ("g1", spec("weight", 120)),
        ("g1", spec("colour", "red")),
        ("g2", spec("weight", 80)),
        ("g1", spec("weight", 125)),
    ] {
        attributes.set(id, &item).await.unwrap();
    }
    assert_eq!(
        raw(&db, "gadgets", "g1").await.get_array("specs").unwrap(),
        &vec![
            Bson::Document(doc! { "name": "weight", "value": 125 }),
            Bson::Document(doc! { "name": "colour", "value": "red" }),
        ]
    );
    assert_clean(&db, group, &attributes.check().await.unwrap()).await;

    db.collection::<Document>("gadgets")
        .update_one(
            doc! { "_id": "g1" },
            doc! { "$push": { "specs": { "name": "weight", "value": 999 } } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &attributes.check().await.unwrap(),
        Check::AttributeDrift,
        &Bson::from("g1"),
        ".attributes(",
    )
    .await;

    assert_repaired(&attributes.repair().await.unwrap());
    assert_clean(&db, group, &attributes.check().await.unwrap()).await;
    assert_eq!(
        raw(&db, "gadgets", "g1").await.get_array("specs").unwrap(),
        &vec![
            Bson::Document(doc! { "name": "weight", "value": 125 }),
            Bson::Document(doc! { "name": "colour", "value": "red" }),
        ]
    );
    assert_eq!(
        attributes.get("g1", &"weight".to_owned()).await.unwrap(),
        Some(spec("weight", 125))
    );

    // Bound to a transaction, the check and the repair read in it: a key held twice in the
    // transaction is found and deduplicated there.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    db.collection::<Document>("gadgets")
        .update_one(
            doc! { "_id": "g2" },
            doc! { "$push": { "specs": { "name": "weight", "value": 1 } } },
        )
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    let bound = Gadget::collection(&db)
        .in_transaction(&tx)
        .attributes(Gadget::FIELDS.specs);
    assert_eq!(bound.check().await.unwrap().documents(), [Bson::from("g2")]);
    assert!(
        attributes.check().await.unwrap().is_clean(),
        "nothing outside"
    );
    let repaired = bound.repair().await.unwrap();
    assert_eq!(
        (repaired.repaired, repaired.left.len()),
        (1, 0),
        "{repaired:?}"
    );
    tx.commit().await.unwrap();
    assert_eq!(
        raw(&db, "gadgets", "g2").await.get_array("specs").unwrap(),
        &vec![Bson::Document(doc! { "name": "weight", "value": 80 })]
    );
}

// ----- preallocated grid with a bitmap -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "check_repair_grid", collection = "court_days")]
#[preallocated(resource = court, slot = day, bitmap = hours, sub_slots = 24)]
struct CourtDay {
    #[serde(rename = "_id")]
    id: ObjectId,
    court: String,
    day: String,
    hours: i64,
}

#[tokio::test]
async fn a_bitmap_bit_past_the_sub_slots_is_found_and_cleared() {
    let group = "check_repair_grid";
    let db = fresh("grid", group).await;
    let slots = CourtDay::collection(&db).slots();
    let days: Vec<CourtDay> = ["2026-01-01", "2026-01-02"]
        .into_iter()
        .map(|day| CourtDay {
            id: ObjectId::new(),
            court: "c1".into(),
            day: day.into(),
            hours: 0,
        })
        .collect();
    slots.allocate(days.clone()).await.unwrap();
    slots.book_range("c1", "2026-01-01", 9..12).await.unwrap();
    slots.book_range("c1", "2026-01-02", 20..24).await.unwrap();
    let booked: i64 = 0b111 << 9;
    assert_eq!(
        raw(&db, "court_days", days[0].id).await.get("hours"),
        Some(&Bson::Int64(booked))
    );
    assert_clean(&db, group, &slots.check().await.unwrap()).await;

    db.collection::<Document>("court_days")
        .update_one(
            doc! { "_id": days[0].id },
            doc! { "$set": { "hours": booked | (1_i64 << 30) } },
        )
        .await
        .unwrap();
    assert_one_drift(
        &db,
        group,
        &slots.check().await.unwrap(),
        Check::GridDrift,
        &Bson::ObjectId(days[0].id),
        ".slots().repair()",
    )
    .await;

    assert_repaired(&slots.repair().await.unwrap());
    assert_clean(&db, group, &slots.check().await.unwrap()).await;
    assert_eq!(
        raw(&db, "court_days", days[0].id).await.get("hours"),
        Some(&Bson::Int64(booked))
    );
    assert_eq!(
        raw(&db, "court_days", days[1].id).await.get("hours"),
        Some(&Bson::Int64(0b1111 << 20))
    );
}

/// An inner node's ancestors edited by hand: one finding, about that node only. Its children
/// and holders agree with the chain of parents (which is what the repair rebuilds from), so
/// they are not listed.
#[tokio::test]
async fn a_stale_inner_node_is_one_finding_not_its_subtree() {
    let group = "check_repair_tree";
    let db = fresh("tree_inner_node", group).await;
    let ids = regions_and_stores(&db).await;
    let asia = ids.iter().find(|(code, _)| *code == "asia").unwrap().1;
    let tree = Region::collection(&db).tree();
    db.collection::<Document>("regions")
        .update_one(doc! { "_id": asia }, doc! { "$set": { "ancestors": [] } })
        .await
        .unwrap();
    let checked = tree.check().await.unwrap();
    assert_eq!(checked.documents(), [Bson::ObjectId(asia)], "{checked}");
    let repaired = tree.repair().await.unwrap();
    assert_eq!(repaired.repaired, 1, "{repaired}");
    assert!(repaired.is_clean(), "{repaired}");
    assert_eq!(
        strings(&raw(&db, "regions", asia).await, "ancestors"),
        ["world"]
    );
}

/// The same grid with an `i32` bitmap: the repair keeps the stored type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "check_repair_grid32", collection = "desk_days")]
#[preallocated(resource = desk, slot = day, bitmap = hours, sub_slots = 24)]
struct DeskDay {
    #[serde(rename = "_id")]
    id: ObjectId,
    desk: String,
    day: String,
    hours: i32,
}

#[tokio::test]
async fn a_repaired_i32_bitmap_stays_an_i32() {
    let group = "check_repair_grid32";
    let db = fresh("grid32", group).await;
    let slots = DeskDay::collection(&db).slots();
    let day = DeskDay {
        id: ObjectId::new(),
        desk: "d1".into(),
        day: "2026-01-01".into(),
        hours: 0,
    };
    slots.allocate([day.clone()]).await.unwrap();
    slots.book_range("d1", "2026-01-01", 9..12).await.unwrap();
    let booked: i32 = 0b111 << 9;
    db.collection::<Document>("desk_days")
        .update_one(
            doc! { "_id": day.id },
            doc! { "$set": { "hours": booked | (1_i32 << 30) } },
        )
        .await
        .unwrap();
    assert!(!slots.check().await.unwrap().is_clean());
    assert_repaired(&slots.repair().await.unwrap());
    assert_eq!(
        raw(&db, "desk_days", day.id).await.get("hours"),
        Some(&Bson::Int32(booked))
    );
    assert_clean(&db, group, &slots.check().await.unwrap()).await;
}

/// `rebuild(id)` beside `check()` and `repair()`, as a demanding user meets them: a computed
/// value copied by an extended reference (repaired in either order), a subset and an outlier on
/// one model, hostile ids and keys given to every verb that takes one, and page limits at both
/// ends of `u64`.
mod rebuild {
    use bson::{doc, Bson, Document};
    use pattern_runtime::doctor::Check;
    use pattern_runtime::{
        doctor::{CheckReport, RebuildReport},
        Error, Fields, Missing, Model, Ref, SyncOptions,
    };
    use pattern_testkit::{test_db, TestDb};
    use serde::{Deserialize, Serialize};

    // ----- helpers -----

    /// Every document of each collection, as stored, in `_id` order.
    async fn snapshot(db: &TestDb, collections: &[&str]) -> Vec<Vec<Document>> {
        let mut all = Vec::new();
        for c in collections {
            all.push(pattern_testkit::docs(db, c).await);
        }
        all
    }

    /// `doc` with every `Int32` widened to `Int64`: the validator docs let an `i64` field hold
    /// either ("the server's `$inc` and `$sum` keep small integers an int, and both read back
    /// exactly"), so a repair may store a count as an int where the handle had written a long.
    fn widened(value: Bson) -> Bson {
        match value {
            Bson::Int32(n) => Bson::Int64(n.into()),
            Bson::Document(d) => {
                Bson::Document(d.into_iter().map(|(k, v)| (k, widened(v))).collect())
            }
            Bson::Array(a) => Bson::Array(a.into_iter().map(widened).collect()),
            other => other,
        }
    }

    /// [`snapshot`], integers widened ([`widened`]): the values as the models read them.
    async fn values(db: &TestDb, collections: &[&str]) -> Vec<Vec<Bson>> {
        snapshot(db, collections)
            .await
            .into_iter()
            .map(|docs| {
                docs.into_iter()
                    .map(|d| widened(Bson::Document(d)))
                    .collect()
            })
            .collect()
    }

    /// The report a rebuild that rewrote `n` documents returns.
    fn rebuilt(n: u64) -> RebuildReport {
        let mut report = RebuildReport::default();
        report.repaired = n;
        report
    }

    /// The documents a check lists, as strings, sorted.
    fn listed(report: &CheckReport) -> Vec<String> {
        let mut ids: Vec<String> = report
            .documents()
            .into_iter()
            .map(|id| match id {
                Bson::String(s) => s,
                other => other.to_string(),
            })
            .collect();
        ids.sort();
        ids
    }

    /// `err` is the documented `NotFound` of the document `id`.
    fn assert_missing_document(err: &Error, id: impl Into<Bson>) {
        let id = id.into();
        assert!(err.is_not_found(), "expected NotFound of {id}, got {err:?}");
        match err.missing() {
            Some(Missing::Document { id: found }) => assert_eq!(found, &id),
            other => panic!("expected Missing::Document {{ id: {id} }}, got {other:?}"),
        }
    }

    /// A hostile id given where a document must exist: the documented outcomes are a literal
    /// lookup that finds nothing (`NotFound` of exactly that id) or a typed refusal.
    fn assert_absent_or_refused(err: &Error, id: &str) {
        if err.is_refused_input() {
            return;
        }
        assert_missing_document(err, id);
    }

    fn hostile_strings() -> Vec<String> {
        vec![
            "$where".to_owned(),
            "$gt".to_owned(),
            "$$ROOT".to_owned(),
            "a.b".to_owned(),
            String::new(),
            "a\0b".to_owned(),
            "{\"$ne\": null}".to_owned(),
            "x".repeat(8 * 1024),
        ]
    }

    fn short(s: &str) -> String {
        let mut out: String = s.chars().take(20).collect();
        if s.len() > 20 {
            out.push_str(&format!("…({} bytes)", s.len()));
        }
        out
    }

    // ----- models: a computed value copied by an extended reference -----

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_accounts")]
    #[extended_ref(AccountRef(name, total))]
    struct Account {
        #[serde(rename = "_id")]
        id: String,
        name: String,
        #[computed(sum = Charge.amount, by = account_id)]
        total: i64,
        #[computed(count = Charge, by = account_id)]
        charges: i64,
    }

    #[derive(Debug, Clone, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_charges")]
    struct Charge {
        #[serde(rename = "_id")]
        id: i64,
        account_id: String,
        amount: i64,
    }

    #[derive(Debug, Clone, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_statements")]
    struct Statement {
        #[serde(rename = "_id")]
        id: i64,
        #[extended_ref(propagate)]
        account: AccountRef,
    }

    fn account(id: &str, name: &str) -> Account {
        Account {
            id: id.into(),
            name: name.into(),
            total: 0,
            charges: 0,
        }
    }

    const ACCOUNTS: [&str; 3] = ["rvm_accounts", "rvm_charges", "rvm_statements"];

    async fn accounts_db(name: &str) -> TestDb {
        let db = test_db(name).await;
        pattern_runtime::sync(&db)
            .models(&[Account::SCHEMA, Charge::SCHEMA, Statement::SCHEMA])
            .options(&SyncOptions::new())
            .await
            .unwrap();
        db
    }

    async fn raw_account(db: &TestDb, id: &str) -> Document {
        Account::collection(db)
            .raw()
            .clone_with_type::<Document>()
            .find_one(doc! { "_id": id })
            .await
            .unwrap()
            .unwrap()
    }

    async fn raw_copy(db: &TestDb, statement: i64) -> Document {
        Statement::collection(db)
            .raw()
            .clone_with_type::<Document>()
            .find_one(doc! { "_id": statement })
            .await
            .unwrap()
            .unwrap()
            .get_document("account")
            .unwrap()
            .clone()
    }

    /// Accounts a1 (two charges), a2 (one charge, one deleted) and a3 (none); statements 1 and 2
    /// copy a1, 3 copies a2, 4 copies a3; a1 renamed through `References`. All through handles.
    async fn seed_accounts(db: &TestDb) {
        let accounts = Account::collection(db);
        for (id, name) in [("a1", "A1"), ("a2", "A2"), ("a3", "A3")] {
            accounts.insert(&account(id, name)).await.unwrap();
        }
        let statements = Statement::collection(db);
        for (id, of) in [(1, "a1"), (2, "a1"), (3, "a2"), (4, "a3")] {
            let source = Account::collection(db)
                .raw()
                .find_one(doc! { "_id": of })
                .await
                .unwrap()
                .unwrap();
            statements
                .insert(&Statement {
                    id,
                    account: AccountRef::from(&source),
                })
                .await
                .unwrap();
        }
        let charges = Charge::collection(db);
        for (id, of, amount) in [(1, "a1", 10), (2, "a1", 20), (3, "a2", 5), (4, "a2", 7)] {
            charges
                .insert(&Charge {
                    id,
                    account_id: of.into(),
                    amount,
                })
                .await
                .unwrap();
        }
        charges
            .update(2, doc! { "$set": { Charge::FIELDS.amount: 25_i64 } })
            .await
            .unwrap();
        charges.delete(4).await.unwrap();
        Account::collection(db)
            .update("a1", doc! { "$set": { Account::FIELDS.name: "Ada" } })
            .await
            .unwrap();
    }

    /// Computed values copied by an extended reference: written through the handles, damaged with
    /// the raw driver; each check lists exactly the damaged documents, each rebuild reports what
    /// it rewrote (then 0), the repairs leave both checks clean and every collection exactly as
    /// before the damage.
    #[tokio::test]
    async fn computed_values_copied_by_references_are_checked_rebuilt_and_repaired() {
        let db = accounts_db("rebuild_computed_refs").await;
        seed_accounts(&db).await;

        // What the handles kept: sums, counts, and the copies of the name and the total.
        let a1 = raw_account(&db, "a1").await;
        assert_eq!(
            a1,
            doc! { "_id": "a1", "name": "Ada", "total": 35_i64, "charges": 2_i64 }
        );
        let a2 = raw_account(&db, "a2").await;
        assert_eq!(
            a2,
            doc! { "_id": "a2", "name": "A2", "total": 5_i64, "charges": 1_i64 }
        );
        for s in [1, 2] {
            assert_eq!(
                raw_copy(&db, s).await,
                doc! { "_id": "a1", "name": "Ada", "total": 35_i64 }
            );
        }
        assert_eq!(
            raw_copy(&db, 3).await,
            doc! { "_id": "a2", "name": "A2", "total": 5_i64 }
        );
        assert_eq!(
            raw_copy(&db, 4).await,
            doc! { "_id": "a3", "name": "A3", "total": 0_i64 }
        );

        let computed = Account::collection(&db).computed();
        let references = Account::collection(&db).references();
        assert!(computed.check().await.unwrap().is_clean());
        assert!(references.check().await.unwrap().is_clean());
        let healthy_values = values(&db, &ACCOUNTS).await;

        // Damage around the toolkit: a1's total, a3's count, two copies of a1's name and the copy
        // of a3's total.
        let accounts_raw = Account::collection(&db).raw().clone();
        accounts_raw
            .update_one(doc! { "_id": "a1" }, doc! { "$set": { "total": 999_i64 } })
            .await
            .unwrap();
        accounts_raw
            .update_one(doc! { "_id": "a3" }, doc! { "$set": { "charges": 7_i64 } })
            .await
            .unwrap();
        let statements_raw = Statement::collection(&db).raw().clone();
        statements_raw
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "account.name": "X" } })
            .await
            .unwrap();
        statements_raw
            .update_one(doc! { "_id": 2 }, doc! { "$set": { "account.name": "Y" } })
            .await
            .unwrap();
        statements_raw
            .update_one(
                doc! { "_id": 4 },
                doc! { "$set": { "account.total": 12345_i64 } },
            )
            .await
            .unwrap();

        let found = computed.check().await.unwrap();
        assert_eq!(listed(&found), ["a1", "a3"], "{found:?}");
        assert_eq!(found.examined, 3, "{found:?}");
        assert!(
            found
                .findings
                .iter()
                .all(|f| f.check == Check::ComputedDrift),
            "{found:?}"
        );
        // Stale copies list their sources: a1 (names, and a total that now differs from the
        // stored 999) and a3 (its total).
        let stale = references.check().await.unwrap();
        assert_eq!(listed(&stale), ["a1", "a3"], "{stale:?}");
        assert!(
            stale.findings.iter().all(|f| f.check == Check::StaleCopy),
            "{stale:?}"
        );

        // One document's computed values: 1, then 0; a document that agreed: 0.
        assert_eq!(computed.rebuild("a1").await.unwrap(), rebuilt(1));
        assert_eq!(raw_account(&db, "a1").await.get_i64("total").unwrap(), 35);
        assert_eq!(computed.rebuild("a1").await.unwrap(), rebuilt(0));
        assert_eq!(computed.rebuild("a2").await.unwrap(), rebuilt(0));

        // One source's copies: the two statements rewritten, then nothing.
        assert_eq!(references.rebuild("a1").await.unwrap(), rebuilt(2));
        for s in [1, 2] {
            assert_eq!(
                raw_copy(&db, s).await,
                doc! { "_id": "a1", "name": "Ada", "total": 35_i64 }
            );
        }
        assert_eq!(references.rebuild("a1").await.unwrap(), rebuilt(0));
        assert_eq!(references.rebuild("a2").await.unwrap(), rebuilt(0));
        assert_eq!(listed(&references.check().await.unwrap()), ["a3"]);
        assert_eq!(listed(&computed.check().await.unwrap()), ["a3"]);

        // The rest by repair.
        let repaired = computed.repair().await.unwrap();
        assert_eq!(repaired.repaired, 1, "{repaired:?}");
        assert!(repaired.is_clean(), "{repaired:?}");
        let repaired = references.repair().await.unwrap();
        assert_eq!(repaired.repaired, 1, "{repaired:?}");
        assert!(repaired.is_clean(), "{repaired:?}");
        assert!(computed.check().await.unwrap().is_clean());
        assert!(references.check().await.unwrap().is_clean());
        assert_eq!(values(&db, &ACCOUNTS).await, healthy_values);

        // A missing id: NotFound of that document, nothing written.
        let repaired_state = snapshot(&db, &ACCOUNTS).await;
        let err = computed.rebuild("ghost").await.unwrap_err();
        assert_missing_document(&err, "ghost");
        let err = references.rebuild("ghost").await.unwrap_err();
        assert_missing_document(&err, "ghost");
        assert_eq!(snapshot(&db, &ACCOUNTS).await, repaired_state);
    }

    // ----- models: a subset and an outlier on one model -----

    #[derive(Debug, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_shelves")]
    struct Shelf {
        #[serde(rename = "_id")]
        id: String,
        #[subset(limit = 2, sort(seq = -1), full = Book, parent = shelf_id)]
        recent: Vec<BookExcerpt>,
        #[summary(count = recent)]
        book_count: i64,
        #[summary(sum = recent.pages)]
        page_sum: i64,
        #[outlier(limit = 2, overflow = "rvm_shelf_notes", capacity = 2, flag = is_outlier, count = note_count)]
        notes: Vec<Note>,
        is_outlier: bool,
        note_count: i64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_books")]
    struct Book {
        #[serde(rename = "_id")]
        id: String,
        shelf_id: String,
        seq: i64,
        pages: i64,
    }

    #[derive(Debug, Clone, Serialize, Deserialize, Fields)]
    #[serde(rename_all = "camelCase")]
    struct BookExcerpt {
        book_id: String,
        seq: i64,
        pages: i64,
    }

    impl From<&Book> for BookExcerpt {
        fn from(b: &Book) -> Self {
            BookExcerpt {
                book_id: b.id.clone(),
                seq: b.seq,
                pages: b.pages,
            }
        }
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Note {
        n: i64,
        text: String,
    }

    fn note(n: i64) -> Note {
        Note {
            n,
            text: format!("note {n}"),
        }
    }

    fn book(id: &str, shelf: &str, seq: i64) -> Book {
        Book {
            id: id.into(),
            shelf_id: shelf.into(),
            seq,
            pages: 100 + seq,
        }
    }

    const SHELVES: [&str; 3] = ["rvm_shelves", "rvm_books", "rvm_shelf_notes"];

    async fn shelves_db(name: &str) -> TestDb {
        let db = test_db(name).await;
        pattern_runtime::sync(&db)
            .models(&[Shelf::SCHEMA, Book::SCHEMA])
            .options(&SyncOptions::new())
            .await
            .unwrap();
        db
    }

    async fn insert_shelf(db: &TestDb, id: &str) {
        Shelf::collection(db)
            .raw()
            .insert_one(Shelf {
                id: id.into(),
                recent: Vec::new(),
                book_count: 0,
                page_sum: 0,
                notes: Vec::new(),
                is_outlier: false,
                note_count: 0,
            })
            .await
            .unwrap();
    }

    /// s1: books 1..=3 and notes 0..5 (an outlier: 2 embedded, 3 in two overflow documents);
    /// s2: one book and one note.
    async fn seed_shelves(db: &TestDb) {
        insert_shelf(db, "s1").await;
        insert_shelf(db, "s2").await;
        let subset = Shelf::collection(db).subset(Shelf::FIELDS.recent);
        for seq in 1..=3 {
            subset
                .push("s1", book(&format!("b{seq}"), "s1", seq))
                .await
                .unwrap();
        }
        subset.push("s2", book("b9", "s2", 9)).await.unwrap();
        let outlier = Shelf::collection(db).outlier(Shelf::FIELDS.notes);
        for n in 0..5 {
            outlier.push("s1", note(n)).await.unwrap();
        }
        outlier.push("s2", note(100)).await.unwrap();
    }

    /// A subset and an outlier on one model, damaged by hand: each rebuild reports 1 then 0 and
    /// puts the document back exactly as it was; a missing id is `NotFound`, nothing written.
    #[tokio::test]
    async fn subset_and_outlier_rebuild_what_was_damaged_once() {
        let db = shelves_db("rebuild_subset_outlier").await;
        seed_shelves(&db).await;
        let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
        let outlier = Shelf::collection(&db).outlier(Shelf::FIELDS.notes);

        let s1 = pattern_testkit::docs(&db, "rvm_shelves").await[0].clone();
        assert_eq!(s1.get_i64("bookCount").unwrap(), 3);
        assert_eq!(s1.get_i64("pageSum").unwrap(), 101 + 102 + 103);
        let embedded: Vec<&str> = s1
            .get_array("recent")
            .unwrap()
            .iter()
            .map(|e| e.as_document().unwrap().get_str("bookId").unwrap())
            .collect();
        assert_eq!(embedded, ["b3", "b2"]);
        assert_eq!(s1.get_i64("noteCount").unwrap(), 5);
        assert!(s1.get_bool("isOutlier").unwrap());
        let state = outlier.state("s1").await.unwrap();
        assert_eq!(
            (state.embedded, state.overflowed, state.overflow_documents),
            (2, 3, 2),
            "{state:?}"
        );
        assert!(subset.check().await.unwrap().is_clean());
        assert!(outlier.check().await.unwrap().is_clean());
        let healthy = values(&db, &SHELVES).await;

        // Damage: s1's embedded array and count; s1's flag and s2's count.
        let raw = Shelf::collection(&db).raw().clone();
        raw.update_one(
            doc! { "_id": "s1" },
            doc! { "$set": { "recent": [], "bookCount": 99_i64, "isOutlier": false } },
        )
        .await
        .unwrap();
        raw.update_one(
            doc! { "_id": "s2" },
            doc! { "$set": { "noteCount": 5_i64 } },
        )
        .await
        .unwrap();

        assert_eq!(listed(&subset.check().await.unwrap()), ["s1"]);
        let outliers = outlier.check().await.unwrap();
        assert_eq!(listed(&outliers), ["s1", "s2"], "{outliers:?}");
        assert!(outliers
            .findings
            .iter()
            .all(|f| f.check == Check::OutlierDrift));
        let state = outlier.state("s1").await.unwrap();
        assert!(!state.is_consistent());
        assert_eq!((state.stored_count, state.stored_flag), (5, false));

        assert_eq!(subset.rebuild("s1").await.unwrap(), rebuilt(1));
        assert_eq!(subset.rebuild("s1").await.unwrap(), rebuilt(0));
        assert!(subset.check().await.unwrap().is_clean());

        assert_eq!(outlier.rebuild("s1").await.unwrap(), rebuilt(1));
        assert_eq!(outlier.rebuild("s1").await.unwrap(), rebuilt(0));
        assert_eq!(outlier.rebuild("s2").await.unwrap(), rebuilt(1));
        assert_eq!(outlier.rebuild("s2").await.unwrap(), rebuilt(0));
        assert!(outlier.state("s1").await.unwrap().is_consistent());
        assert!(outlier.check().await.unwrap().is_clean());
        assert_eq!(values(&db, &SHELVES).await, healthy);

        // A missing parent: NotFound of that document, nothing written by either.
        let repaired_state = snapshot(&db, &SHELVES).await;
        let err = subset.rebuild("ghost").await.unwrap_err();
        assert_missing_document(&err, "ghost");
        let err = outlier.rebuild("ghost").await.unwrap_err();
        assert_missing_document(&err, "ghost");
        assert_eq!(snapshot(&db, &SHELVES).await, repaired_state);
    }

    /// `Subset::rebuild`: "`repaired` is 1 when the parent changed, 0 when it already agreed".
    /// A parent written only through `push`, which `check()` finds clean, agrees: its rebuild is 0
    /// and writes nothing.
    #[tokio::test]
    async fn subset_rebuild_of_a_parent_that_agrees_reports_0() {
        let db = shelves_db("rebuild_subset_agrees").await;
        seed_shelves(&db).await;
        let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
        assert!(subset.check().await.unwrap().is_clean());
        let before = snapshot(&db, &SHELVES).await;
        assert_eq!(subset.rebuild("s2").await.unwrap(), rebuilt(0));
        assert_eq!(snapshot(&db, &SHELVES).await, before);
        assert_eq!(subset.rebuild("s1").await.unwrap(), rebuilt(0));
        assert_eq!(snapshot(&db, &SHELVES).await, before);
    }

    // ----- models: two-way relation, attributes with an untyped `_id`, an outlier keyed by Bson -----

    #[derive(Debug, Serialize, Deserialize, Model)]
    #[model(collection = "rvm_teams")]
    struct Team {
        #[serde(rename = "_id")]
        id: String,
        #[relation(inverse = team)]
        #[bounded(50)]
        members: Vec<Ref<Player>>,
    }

    #[derive(Debug, Serialize, Deserialize, Model)]
    #[model(collection = "rvm_players")]
    struct Player {
        #[serde(rename = "_id")]
        id: String,
        #[relation(inverse = members)]
        team: Option<Ref<Team>>,
    }

    /// A team with no members, written with the driver.
    async fn insert_team(db: &TestDb, id: &str) {
        let team = Team {
            id: id.into(),
            members: Vec::new(),
        };
        Team::collection(db).raw().insert_one(team).await.unwrap();
    }

    /// A player with no team, written with the driver.
    async fn insert_player(db: &TestDb, id: &str) {
        let player = Player {
            id: id.into(),
            team: None,
        };
        Player::collection(db)
            .raw()
            .insert_one(player)
            .await
            .unwrap();
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
    #[attribute(key = name, value = value)]
    struct Spec {
        name: String,
        value: Bson,
    }

    #[derive(Debug, Serialize, Deserialize, Model)]
    #[model(collection = "rvm_gadgets")]
    struct Gadget {
        #[serde(rename = "_id")]
        id: Bson,
        #[attribute]
        specs: Vec<Spec>,
    }

    #[derive(Debug, Serialize, Deserialize, Model)]
    #[serde(rename_all = "camelCase")]
    #[model(collection = "rvm_logs")]
    struct Log {
        #[serde(rename = "_id")]
        id: Bson,
        #[outlier(limit = 2, overflow = "rvm_log_lines", capacity = 2, flag = is_outlier, count = line_count)]
        lines: Vec<Note>,
        is_outlier: bool,
        line_count: i64,
    }

    const EVERYTHING: [&str; 10] = [
        "rvm_accounts",
        "rvm_charges",
        "rvm_statements",
        "rvm_shelves",
        "rvm_books",
        "rvm_shelf_notes",
        "rvm_teams",
        "rvm_players",
        "rvm_gadgets",
        "rvm_logs",
    ];

    /// Ids that look like operators, paths, empty, NUL, long, given to every `rebuild(id)`, to
    /// `TwoWay::assign` and to `Attributes::get/unset/key`: a literal lookup (`NotFound` of that
    /// very id, or the document stored under it) or a typed refusal, and nothing written when
    /// refused or not found.
    #[tokio::test]
    async fn hostile_ids_and_keys_are_literals_or_typed_refusals() {
        let db = test_db("rebuild_hostile").await;
        pattern_runtime::sync(&db)
            .models(&[
                Account::SCHEMA,
                Charge::SCHEMA,
                Statement::SCHEMA,
                Shelf::SCHEMA,
                Book::SCHEMA,
                Team::SCHEMA,
                Player::SCHEMA,
                Gadget::SCHEMA,
                Log::SCHEMA,
            ])
            .options(&SyncOptions::new())
            .await
            .unwrap();
        seed_accounts(&db).await;
        seed_shelves(&db).await;
        for id in ["t1", "t2"] {
            insert_team(&db, id).await;
        }
        insert_player(&db, "p1").await;
        let two_way = Player::collection(&db).relation(Player::FIELDS.team);
        two_way.assign("p1", "t1").await.unwrap();
        Gadget::collection(&db)
            .raw()
            .insert_one(Gadget {
                id: Bson::String("g1".into()),
                specs: Vec::new(),
            })
            .await
            .unwrap();
        Log::collection(&db)
            .raw()
            .insert_one(Log {
                id: Bson::String("l1".into()),
                lines: Vec::new(),
                is_outlier: false,
                line_count: 0,
            })
            .await
            .unwrap();
        let attributes = Gadget::collection(&db).attributes(Gadget::FIELDS.specs);
        attributes
            .set(
                "g1",
                &Spec {
                    name: "color".into(),
                    value: "red".into(),
                },
            )
            .await
            .unwrap();

        let computed = Account::collection(&db).computed();
        let references = Account::collection(&db).references();
        let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
        let outlier = Shelf::collection(&db).outlier(Shelf::FIELDS.notes);
        let logs = Log::collection(&db).outlier(Log::FIELDS.lines);
        let before = snapshot(&db, &EVERYTHING).await;

        for h in hostile_strings() {
            let what = short(&h);
            let err = computed.rebuild(h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = references.rebuild(h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = subset.rebuild(h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = outlier.rebuild(h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = logs.rebuild(h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            // A child or an owner named by a hostile string does not exist.
            let err = two_way.assign(h.as_str(), "t2").await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = two_way.assign("p1", h.as_str()).await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            // A hostile id of a gadget: no such gadget.
            let err = attributes.get(h.as_str(), "color").await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            let err = attributes.unset(h.as_str(), "color").await.unwrap_err();
            assert_absent_or_refused(&err, &h);
            assert_eq!(
                snapshot(&db, &EVERYTHING).await,
                before,
                "after id {what:?}"
            );
        }

        // Operator-looking documents where the id type (`Bson`) takes a document: refused before
        // anything is sent (crate docs, "What the toolkit sends").
        let operator_ids: Vec<Bson> = vec![
            Bson::Document(doc! { "$ne": null }),
            Bson::Document(doc! { "$where": "true" }),
            Bson::Document(doc! { "nested": { "$gt": "" } }),
            Bson::Document(doc! { "a.b": 1 }),
            Bson::Array(vec![Bson::String("g1".into())]),
            Bson::RegularExpression(bson::Regex {
                pattern: ".*".try_into().unwrap(),
                options: "".try_into().unwrap(),
            }),
            Bson::JavaScriptCode("true".into()),
        ];
        for id in &operator_ids {
            let err = attributes.get(id.clone(), "color").await.unwrap_err();
            assert!(err.is_refused_input(), "get({id}): {err:?}");
            let err = attributes.unset(id.clone(), "color").await.unwrap_err();
            assert!(err.is_refused_input(), "unset({id}): {err:?}");
            let err = attributes
                .set(
                    id.clone(),
                    &Spec {
                        name: "color".into(),
                        value: "blue".into(),
                    },
                )
                .await
                .unwrap_err();
            assert!(err.is_refused_input(), "set({id}): {err:?}");
            let err = logs.rebuild(id.clone()).await.unwrap_err();
            assert!(err.is_refused_input(), "Outlier::rebuild({id}): {err:?}");
            assert_eq!(snapshot(&db, &EVERYTHING).await, before, "after id {id}");
        }
        // A plain document is a literal id: no such gadget, nothing written.
        let err = attributes
            .get(doc! { "plain": 1 }, "color")
            .await
            .unwrap_err();
        assert_missing_document(&err, doc! { "plain": 1 });

        // Hostile attribute keys: `unset` refuses them (`InvalidKey`, attribute module docs); `get`
        // and `key` either refuse them or look them up literally (finding nothing).
        for key in ["$where", "$gt", "a.b", "", "a\0b", ".", "$"] {
            let err = attributes.unset("g1", key).await.unwrap_err();
            match &err {
                Error::InvalidKey { key: refused, .. } => assert_eq!(refused, key),
                other => panic!("unset key {key:?}: expected InvalidKey, got {other:?}"),
            }
            match attributes.get("g1", key).await {
                Ok(found) => assert_eq!(found, None, "get key {key:?}"),
                Err(err) => assert!(err.is_refused_input(), "get key {key:?}: {err:?}"),
            }
            match attributes.key(key).eq("red") {
                Ok(filter) => {
                    assert!(
                        attributes.find(filter).await.unwrap().is_empty(),
                        "key {key:?}"
                    )
                }
                Err(err) => assert!(err.is_refused_input(), "key {key:?}: {err:?}"),
            }
            let err = attributes
                .set(
                    "g1",
                    &Spec {
                        name: key.into(),
                        value: 1.into(),
                    },
                )
                .await
                .unwrap_err();
            assert!(err.is_refused_input(), "set key {key:?}: {err:?}");
            assert_eq!(
                snapshot(&db, &EVERYTHING).await,
                before,
                "after key {key:?}"
            );
        }
        // The key of a real item: `get`, `key` and `unset` all see it.
        let found = attributes.get("g1", "color").await.unwrap();
        assert_eq!(
            found,
            Some(Spec {
                name: "color".into(),
                value: "red".into()
            })
        );
        let matching = attributes
            .find(attributes.key("color").eq("red").unwrap())
            .await
            .unwrap();
        assert_eq!(matching.len(), 1);
        // A value that looks like an operator or a path is a literal (crate docs: "$120").
        let long_key = "k".repeat(8 * 1024);
        for (key, value) in [
            (long_key.as_str(), Bson::String("$where".into())),
            ("price", Bson::String("$$ROOT".into())),
            ("path", Bson::String("$a.b".into())),
        ] {
            let spec = Spec {
                name: key.into(),
                value: value.clone(),
            };
            attributes.set("g1", &spec).await.unwrap();
            assert_eq!(attributes.get("g1", key).await.unwrap(), Some(spec));
            let hits = attributes
                .find(attributes.key(key).eq(value.clone()).unwrap())
                .await
                .unwrap();
            assert_eq!(hits.len(), 1, "{}", short(key));
            attributes.unset("g1", key).await.unwrap();
            assert_eq!(attributes.get("g1", key).await.unwrap(), None);
        }
        assert_eq!(snapshot(&db, &EVERYTHING).await, before);

        // Hostile strings as stored ids are literals: a shelf "$where" and a shelf "a.b" with
        // books, a team "a.b" and a player "$gt", an account "$where" with a charge.
        for id in ["$where", "a.b"] {
            insert_shelf(&db, id).await;
            subset
                .push(id, book(&format!("book of {id}"), id, 1))
                .await
                .unwrap();
            Shelf::collection(&db)
                .raw()
                .update_one(doc! { "_id": id }, doc! { "$set": { "bookCount": 0_i64 } })
                .await
                .unwrap();
            assert_eq!(subset.rebuild(id).await.unwrap(), rebuilt(1), "{id}");
            assert_eq!(subset.rebuild(id).await.unwrap(), rebuilt(0), "{id}");
            assert_eq!(subset.count(id).await.unwrap(), 1, "{id}");
            outlier.push(id, note(1)).await.unwrap();
            assert_eq!(outlier.rebuild(id).await.unwrap(), rebuilt(0), "{id}");
        }
        insert_team(&db, "a.b").await;
        insert_player(&db, "$gt").await;
        two_way.assign("$gt", "a.b").await.unwrap();
        two_way.assign("p1", "a.b").await.unwrap();
        let teams = pattern_testkit::docs(&db, "rvm_teams").await;
        assert_eq!(
            teams,
            [
                doc! { "_id": "a.b", "members": ["$gt", "p1"] },
                doc! { "_id": "t1", "members": [] },
                doc! { "_id": "t2", "members": [] },
            ]
        );
        let players = pattern_testkit::docs(&db, "rvm_players").await;
        assert_eq!(
            players,
            [
                doc! { "_id": "$gt", "team": "a.b" },
                doc! { "_id": "p1", "team": "a.b" },
            ]
        );
        assert!(two_way.check().await.unwrap().is_clean());
        Account::collection(&db)
            .insert(&account("$where", "Dollar"))
            .await
            .unwrap();
        Charge::collection(&db)
            .insert(&Charge {
                id: 50,
                account_id: "$where".into(),
                amount: 3,
            })
            .await
            .unwrap();
        Account::collection(&db)
            .raw()
            .update_one(
                doc! { "_id": "$where" },
                doc! { "$set": { "total": 0_i64 } },
            )
            .await
            .unwrap();
        assert_eq!(computed.rebuild("$where").await.unwrap(), rebuilt(1));
        assert_eq!(
            raw_account(&db, "$where").await.get_i64("total").unwrap(),
            3
        );
        assert_eq!(references.rebuild("$where").await.unwrap(), rebuilt(0));
        // Nothing else moved: a1 and the other accounts as they were.
        assert_eq!(
            raw_account(&db, "a1").await,
            doc! { "_id": "a1", "name": "Ada", "total": 35_i64, "charges": 2_i64 }
        );
        assert!(computed.check().await.unwrap().is_clean());
    }

    /// `page` with a limit of 0 and of `u64::MAX`, on a subset and on an outlier: 0 returns no
    /// item (changelog: "A limit of 0 returns no item"; `Subset::page`: "at most limit (none for
    /// 0)"; `Outlier::page`: "the items skip..skip + limit"); `u64::MAX` returns every item from
    /// `skip`, and a skip past the end returns none.
    #[tokio::test]
    async fn pages_with_limits_at_both_ends() {
        let db = shelves_db("rebuild_pages").await;
        seed_shelves(&db).await;
        let before = snapshot(&db, &SHELVES).await;
        let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
        let outlier = Shelf::collection(&db).outlier(Shelf::FIELDS.notes);
        let ids = |books: Vec<Book>| books.into_iter().map(|b| b.id).collect::<Vec<_>>();
        let ns = |notes: Vec<Note>| notes.into_iter().map(|n| n.n).collect::<Vec<_>>();

        assert_eq!(
            ids(subset.page("s1", 0, 0).await.unwrap()),
            Vec::<String>::new()
        );
        assert_eq!(
            ids(subset.page("s1", 1, 0).await.unwrap()),
            Vec::<String>::new()
        );
        assert_eq!(
            ids(subset.page("s1", 0, u64::MAX).await.unwrap()),
            ["b3", "b2", "b1"]
        );
        assert_eq!(ids(subset.page("s1", 2, u64::MAX).await.unwrap()), ["b1"]);
        assert_eq!(ids(subset.page("s1", 0, 2).await.unwrap()), ["b3", "b2"]);
        assert_eq!(
            ids(subset.page("s1", 3, u64::MAX).await.unwrap()),
            Vec::<String>::new()
        );
        assert_eq!(
            ids(subset.page("s1", 3, 0).await.unwrap()),
            Vec::<String>::new()
        );

        assert_eq!(
            ns(outlier.page("s1", 0, 0).await.unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(
            ns(outlier.page("s1", 3, 0).await.unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(
            ns(outlier.page("s1", 0, u64::MAX).await.unwrap()),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(
            ns(outlier.page("s1", 1, u64::MAX).await.unwrap()),
            [1, 2, 3, 4]
        );
        assert_eq!(ns(outlier.page("s1", 3, u64::MAX).await.unwrap()), [3, 4]);
        assert_eq!(ns(outlier.page("s1", 1, 2).await.unwrap()), [1, 2]);
        assert_eq!(
            ns(outlier.page("s1", 5, u64::MAX).await.unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(
            ns(outlier.page("s1", u64::MAX, 1).await.unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(
            ns(outlier.page("s1", u64::MAX, u64::MAX).await.unwrap()),
            Vec::<i64>::new()
        );
        // A normal (not outlier) document at both ends too.
        assert_eq!(
            ns(outlier.page("s2", 0, 0).await.unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(ns(outlier.page("s2", 0, u64::MAX).await.unwrap()), [100]);
        assert_eq!(
            ns(outlier.page("s2", 1, u64::MAX).await.unwrap()),
            Vec::<i64>::new()
        );

        assert_eq!(snapshot(&db, &SHELVES).await, before);
    }

    /// `Subset::page`: "Items of the full collection in the subset's order, skip then at most
    /// limit": a `skip` past every item, however large (it is a `u64`), is an empty page, as it
    /// is on `Outlier::page`; nothing written.
    #[tokio::test]
    async fn subset_page_with_a_skip_past_i64_is_empty() {
        let db = shelves_db("rebuild_subset_skip").await;
        seed_shelves(&db).await;
        let before = snapshot(&db, &SHELVES).await;
        let subset = Shelf::collection(&db).subset(Shelf::FIELDS.recent);
        let outlier = Shelf::collection(&db).outlier(Shelf::FIELDS.notes);
        assert!(outlier.page("s1", u64::MAX, 1).await.unwrap().is_empty());
        assert!(subset
            .page("s1", i64::MAX as u64, 1)
            .await
            .unwrap()
            .is_empty());
        assert!(subset.page("s1", u64::MAX, 1).await.unwrap().is_empty());
        assert!(subset
            .page("s1", u64::MAX, u64::MAX)
            .await
            .unwrap()
            .is_empty());
        assert!(subset
            .page("s1", i64::MAX as u64 + 1, 0)
            .await
            .unwrap()
            .is_empty());
        assert_eq!(snapshot(&db, &SHELVES).await, before);
    }

    /// Crate docs: "A repair's writes rebuild what derives from them (a sum is recomputed from its
    /// sources, not moved by the difference the repair wrote), so repairs may run in any order."
    /// The copies' repair first spreads a damaged total to the copies; the computed repair after it
    /// brings the total and, through the map of derived data, its copies back.
    #[tokio::test]
    async fn repairs_in_the_wrong_order_still_converge() {
        let db = accounts_db("rebuild_repair_order").await;
        seed_accounts(&db).await;
        let healthy = values(&db, &ACCOUNTS).await;
        Account::collection(&db)
            .raw()
            .update_one(doc! { "_id": "a1" }, doc! { "$set": { "total": 999_i64 } })
            .await
            .unwrap();
        let references = Account::collection(&db).references();
        let computed = Account::collection(&db).computed();

        let copied = references.repair().await.unwrap();
        assert_eq!(copied.repaired, 2, "{copied:?}");
        assert!(copied.is_clean(), "{copied:?}");
        for s in [1, 2] {
            assert_eq!(raw_copy(&db, s).await.get_i64("total").unwrap(), 999);
        }
        let recomputed = computed.repair().await.unwrap();
        assert_eq!(recomputed.repaired, 1, "{recomputed:?}");
        assert!(recomputed.is_clean(), "{recomputed:?}");
        for s in [1, 2] {
            assert_eq!(
                raw_copy(&db, s).await,
                doc! { "_id": "a1", "name": "Ada", "total": 35_i64 }
            );
        }
        assert!(references.check().await.unwrap().is_clean());
        assert!(computed.check().await.unwrap().is_clean());
        assert_eq!(values(&db, &ACCOUNTS).await, healthy);
    }
}

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
    doctor_group, sync_group, CheckReport, DoctorOptions, Fields, Measurement, Model, Ref,
    RepairReport, SyncOptions,
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
    sync_group(&db, group, &SyncOptions::default())
        .await
        .unwrap();
    db
}

/// The doctor's findings over the models of `group` (every document sampled), without the
/// unused indexes a fresh database has.
async fn doctor(db: &TestDb, group: &str) -> Vec<Finding> {
    let report = doctor_group(db, group, &DoctorOptions::new().sample_size(1000))
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
    #[computed(count = recent)]
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
    let subset = Shelf::recent_subset(&db);
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
        "_subset(&db).repair()",
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
    assert!(
        checked.findings[0].fix.contains("_subset(&db).repair()"),
        "{checked}"
    );
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
    #[computed(count = latest)]
    sales: i64,
    #[computed(sum = latest.amount)]
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
    let subset = Till::latest_subset(&db);
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
        "_subset(&db).repair()",
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
    let essays = Essay::computing(&db);
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
    let writers = Writer::computed(&db);
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
        "computed(&db).repair()",
    )
    .await;

    assert_repaired(&writers.repair().await.unwrap());
    assert_clean(&db, group, &writers.check().await.unwrap()).await;
    assert_eq!(int(&raw(&db, "writers", "w1").await, "essayCount"), 3);
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
    let references = Supplier::references(&db);
    // A rename through the toolkit reaches both of s1's orders.
    references
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
        "references(&db).repair()",
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
    let tree = Region::tree(db);
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
    let tree = Region::tree(&db);
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
        "tree(&db).repair()",
    )
    .await;

    assert_repaired(&tree.repair().await.unwrap());
    assert_clean(&db, group, &tree.check().await.unwrap()).await;
    assert_eq!(
        strings(&raw(&db, "stores", "paris").await, "regionPath"),
        ["world", "europe", "france"]
    );
}

#[tokio::test]
async fn a_stale_ancestors_list_is_found_and_rewritten_from_the_parents() {
    let group = "check_repair_tree";
    let db = fresh("tree_ancestors", group).await;
    let ids = regions_and_stores(&db).await;
    let japan = ids.iter().find(|(code, _)| *code == "japan").unwrap().1;
    let tree = Region::tree(&db);
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
        "tree(&db).repair()",
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
    let relation = Sailor::crew_relation(db);
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
    let relation = Sailor::crew_relation(&db);
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
        "_relation(&db).repair()",
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
    let relation = Sailor::crew_relation(&db);
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
    let outlier = Channel::messages_outlier(&db);
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
    let attributes = Gadget::specs_attribute(&db);
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
        "_attribute(&db).repair()",
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
    let slots = CourtDay::slots(&db);
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
        "slots(&db).repair()",
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
    let tree = Region::tree(&db);
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
    let slots = DeskDay::slots(&db);
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

//! The tree pattern combined with each other pattern, the way an application combines them;
//! every expectation is computed here from the raw documents, then every pattern's `check()`
//! and the doctor must find nothing. One group of models per pair:
//!
//! - tree × polymorphic: an enum can be neither a tree nor a holder (refused at compile time).
//!   Listings of several shapes are counted and summed per category by a common field holding
//!   the category's `_id`; each listing's place in the tree is a struct holder of its own.
//! - tree × attribute: products placed in a category tree carry their varying specs as an
//!   attribute array; the categories carry attributes of their own.
//! - tree × outlier: forum boards (nodes) embed their posts and overflow for the busy ones;
//!   members (holders) embed their notes the same way.
//! - tree × computed: aisles count and sum the items placed in them; stores count and sum the
//!   sections of another tree (the nodes as a computed source: a bug, ignored test).
//! - tree × subset: products (holders) keep their newest reviews as a subset with count, sum
//!   and average; categories (nodes) keep their newest notices.
//! - tree × extended reference: genres (nodes, the key among the copied fields) are copied
//!   into the books placed in them and into reading lists; books (holders) are copied with
//!   their node and path into the reading lists.
//! - tree × approximation: topics (nodes) count views (batched), likes (sampled) and hits
//!   (sharded); articles (holders) count their reads (batched, flushed in the background).
//! - tree × preallocation: room nights are slots placed in a hotel's tree, the slot's
//!   resource being the holder's node; meeting-room days are bitmaps in the same tree.
//! - tree × document versioning: a versioned model can be neither a tree nor a holder, nor
//!   hold a `propagate` copy (refused at compile time). Wiki spaces count and sum the
//!   versioned pages filed in them; pages keep a `snapshot` of their space; attachments are
//!   the holders.
//! - tree × two-way relation: departments (nodes) have a head (`Option<Ref<Person>>`, the
//!   single side); persons (holders) list the departments they head (the array side).
//!
//! Tests marked `#[ignore = "bug: .."]` show what misbehaves, each as small as it can be.
//!
//! The table was written with the tests; some bugs it names were fixed since, and their
//! tests run now. `cargo test -p pattern-tests --test <this file> -- --ignored` lists what
//! still fails.

use pattern_runtime::At;
use pattern_testkit::docs as raw;
use std::collections::HashMap;

use crate::support::{count_named, dump, refused_key, sent};
use bson::oid::ObjectId;
use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{
    doctor, sync, tree::Deletion, DoctorOptions, Error, Fields, Model, Ref, SyncOptions,
};
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

// ======================================================================================
// Helpers: every expectation is computed here from the raw documents.
// ======================================================================================

/// A fresh database with the models of `group` synced.
async fn synced(name: &str, group: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group(group)
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// [`synced`] without validators (`PATTERN_TEST_VALIDATORS`): for a test that writes what its
/// models do not describe on purpose (around the toolkit, or hostile).
async fn synced_unvalidated(name: &str, group: &str) -> TestDb {
    let db = test_db_unvalidated(name).await;
    sync(&db)
        .group(group)
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// The document of `collection` whose `field` is `value`.
async fn one(
    db: &mongodb::Database,
    collection: &str,
    field: &str,
    value: impl Into<Bson>,
) -> Document {
    let value = value.into();
    db.collection::<Document>(collection)
        .find_one(doc! { field: value.clone() })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no document of {collection} with {field} = {value}"))
}

async fn count(db: &mongodb::Database, collection: &str, filter: Document) -> u64 {
    db.collection::<Document>(collection)
        .count_documents(filter)
        .await
        .unwrap()
}

/// The doctor finds nothing in the group.
async fn assert_doctor_clean(db: &TestDb, group: &str) {
    let report = doctor(db)
        .group(group)
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let findings: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    assert!(findings.is_empty(), "the doctor found: {findings:#?}");
}

/// The doctor finds nothing in the group but the findings `known` lists (check, subject), each
/// a bug shown by a test of its own.
async fn assert_doctor_clean_but(
    db: &TestDb,
    group: &str,
    known: &[(pattern_runtime::doctor::Check, &str)],
) {
    let report = doctor(db)
        .group(group)
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let findings: Vec<String> = report
        .findings
        .iter()
        .filter(|f| !known.iter().any(|(c, s)| f.check == *c && f.subject == *s))
        .map(ToString::to_string)
        .collect();
    assert!(findings.is_empty(), "the doctor found: {findings:#?}");
}

/// A check report is clean, with what it found otherwise.
macro_rules! assert_clean {
    ($check:expr) => {{
        let report = $check.await.unwrap();
        assert!(
            report.is_clean(),
            "{} is not clean: {:#?}",
            stringify!($check),
            report.findings
        );
    }};
}

/// Where a tree lives: its collection and the BSON names of its key, parent and ancestors.
struct TreeAt {
    collection: &'static str,
    key: &'static str,
    parent: &'static str,
    ancestors: &'static str,
}

/// Where holders live: their collection and the BSON names of their node and path.
struct HoldersAt {
    collection: &'static str,
    node: &'static str,
    path: &'static str,
}

fn text(b: &Bson) -> String {
    format!("{b:?}")
}

fn array(d: &Document, field: &str) -> Vec<Bson> {
    match d.get(field) {
        Some(Bson::Array(a)) => a.clone(),
        None | Some(Bson::Null) => Vec::new(),
        Some(other) => panic!("{field} is no array: {other}"),
    }
}

/// Checks every node's ancestors and every holder's path against the stored parents, computed
/// here (independently of `Tree::check`). Returns the chain of ancestors of every node, by key.
async fn assert_paths(
    db: &TestDb,
    t: &TreeAt,
    holders: &[HoldersAt],
) -> HashMap<String, Vec<Bson>> {
    let nodes = raw(db, t.collection).await;
    let parent: HashMap<String, Bson> = nodes
        .iter()
        .map(|n| {
            let key = n.get(t.key).cloned().unwrap_or(Bson::Null);
            (text(&key), n.get(t.parent).cloned().unwrap_or(Bson::Null))
        })
        .collect();
    let chain = |key: &Bson| -> Vec<Bson> {
        let mut out = Vec::new();
        let mut at = parent
            .get(&text(key))
            .unwrap_or_else(|| panic!("no node {key}"))
            .clone();
        while !matches!(at, Bson::Null) {
            assert!(out.len() <= parent.len(), "the parents loop at {key}");
            out.push(at.clone());
            at = parent
                .get(&text(&at))
                .unwrap_or_else(|| panic!("the parent {at} of a node is missing"))
                .clone();
        }
        out.reverse();
        out
    };
    let mut chains = HashMap::new();
    for n in &nodes {
        let key = n.get(t.key).cloned().unwrap_or(Bson::Null);
        let expected = chain(&key);
        assert_eq!(
            array(n, t.ancestors),
            expected,
            "the ancestors of node {key}"
        );
        chains.insert(text(&key), expected);
    }
    for h in holders {
        for d in raw(db, h.collection).await {
            let node = d.get(h.node).cloned().unwrap_or(Bson::Null);
            let expected = if matches!(node, Bson::Null) {
                Vec::new()
            } else {
                let mut p = chain(&node);
                p.push(node.clone());
                p
            };
            assert_eq!(
                array(&d, h.path),
                expected,
                "the path of {} {}",
                h.collection,
                d.get("_id").unwrap()
            );
        }
    }
    chains
}

fn strings(items: &[&str]) -> Vec<Bson> {
    items
        .iter()
        .map(|s| Bson::String((*s).to_owned()))
        .collect()
}

fn int(d: &Document, field: &str) -> i64 {
    match d.get(field) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Double(n)) => *n as i64,
        other => panic!("{field} is no integer: {other:?}"),
    }
}

// ======================================================================================
// tree × computed: aisles (a tree named by `_id`) count and sum the items placed in them;
// stores count and sum their sections (the nodes of another tree as a computed source).
// ======================================================================================

/// Aisles named by `_id`; each counts the items directly in it and sums their stock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_computed")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors)]
struct Aisle {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[computed(count = Item, by = aisle)]
    item_count: i64,
    #[computed(sum = Item.stock, by = aisle)]
    stock: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_computed")]
#[serde(rename_all = "camelCase")]
#[in_tree(Aisle, node = aisle, path = aisle_path)]
struct Item {
    #[serde(rename = "_id")]
    id: i64,
    aisle: Option<String>,
    aisle_path: Vec<String>,
    stock: i64,
}

const AISLES: TreeAt = TreeAt {
    collection: "aisles",
    key: "_id",
    parent: "parent",
    ancestors: "ancestors",
};
const ITEMS: HoldersAt = HoldersAt {
    collection: "items",
    node: "aisle",
    path: "aislePath",
};

fn aisle(id: &str, parent: Option<&str>) -> Aisle {
    Aisle {
        id: id.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        item_count: 0,
        stock: 0,
    }
}

fn item(id: i64, aisle: Option<&str>, stock: i64) -> Item {
    Item {
        id,
        aisle: aisle.map(str::to_owned),
        aisle_path: vec![],
        stock,
    }
}

/// Each aisle's count and stock against its items, and every path, from the raw documents.
async fn assert_aisles(db: &TestDb) {
    assert_paths(db, &AISLES, &[ITEMS]).await;
    let items = raw(db, "items").await;
    for a in raw(db, "aisles").await {
        let id = a.get("_id").unwrap();
        let mine: Vec<&Document> = items
            .iter()
            .filter(|i| i.get("aisle") == Some(id))
            .collect();
        assert_eq!(
            int(&a, "itemCount"),
            mine.len() as i64,
            "items of aisle {id}"
        );
        assert_eq!(
            int(&a, "stock"),
            mine.iter().map(|i| int(i, "stock")).sum::<i64>(),
            "stock of aisle {id}"
        );
    }
}

#[tokio::test]
async fn tree_x_computed_holders_counted_and_summed_per_node() {
    let db = synced("pt_computed", "pt_computed").await;
    let tree = Aisle::collection(&db).tree();
    let items = tree.holders::<Item>();

    tree.insert(&aisle("food", None)).await.unwrap();
    tree.insert_many(&[
        aisle("dairy", Some("food")),
        aisle("milk", Some("dairy")),
        aisle("cheese", Some("dairy")),
        aisle("bakery", Some("food")),
        aisle("bread", Some("bakery")),
        aisle("frozen", None),
    ])
    .await
    .unwrap();
    assert_aisles(&db).await;

    // Holder inserts and placements count the items for their aisle.
    items.insert(&item(1, Some("milk"), 5)).await.unwrap();
    items
        .insert_many(&[
            item(2, Some("milk"), 7),
            item(3, Some("cheese"), 11),
            item(4, Some("dairy"), 13),
            item(5, Some("bread"), 17),
        ])
        .await
        .unwrap();
    items.place(2, "cheese").await.unwrap();
    assert_aisles(&db).await;
    let cheese = one(&db, "aisles", "_id", "cheese").await;
    assert_eq!((int(&cheese, "itemCount"), int(&cheese, "stock")), (2, 18));

    // Computing's writes of the holders: insert (an item in no aisle yet: its path is empty,
    // then placed), update of the summed field, replace, delete.
    let computing = Item::collection(&db);
    computing.insert(&item(6, None, 19)).await.unwrap();
    items.place(6, "bread").await.unwrap();
    computing
        .update(1, doc! { "$inc": { "stock": 100 } })
        .await
        .unwrap();
    let mut three = Item::collection(&db)
        .raw()
        .find_one(doc! { "_id": 3 })
        .await
        .unwrap()
        .unwrap();
    three.stock = 1;
    computing.replace(&three).await.unwrap();
    computing.delete(4).await.unwrap();
    assert_aisles(&db).await;
    let milk = one(&db, "aisles", "_id", "milk").await;
    assert_eq!((int(&milk, "itemCount"), int(&milk, "stock")), (1, 105));
    // The tree's fields of a holder are the tree's: Computing refuses them, nothing written.
    let before = raw(&db, "items").await;
    let e = computing
        .update(1, doc! { "$set": { "aisle": "bread" } })
        .await
        .unwrap_err();
    assert!(matches!(e, Error::KeptField { .. }), "{e:?}");
    assert_eq!(raw(&db, "items").await, before);

    // Moves rewrite paths, never counts.
    tree.move_under("milk", "bakery").await.unwrap();
    tree.move_to_root("bakery").await.unwrap();
    assert_aisles(&db).await;
    assert_eq!(
        array(&one(&db, "items", "_id", 1).await, "aislePath"),
        strings(&["bakery", "milk"])
    );

    // A tree named by `_id` has no rename: `tree.rename(..)` does not compile
    // (tests/ui/tree/rename_id_keyed.rs).

    // Deletions: a leaf is refused while it holds items, then the three kinds.
    let e = tree.delete("bread", Deletion::LeafOnly).await.unwrap_err();
    assert!(matches!(e, Error::NodeInUse { .. }), "{e:?}");
    tree.insert(&aisle("ice", Some("frozen"))).await.unwrap();
    tree.delete("ice", Deletion::LeafOnly).await.unwrap();
    // cheese's two items (2 and 3) move up to dairy.
    tree.delete("cheese", Deletion::Reparent).await.unwrap();
    let dairy = one(&db, "aisles", "_id", "dairy").await;
    assert_eq!((int(&dairy, "itemCount"), int(&dairy, "stock")), (2, 7 + 1));
    assert_aisles(&db).await;
    // bakery, milk and bread go, with their items (1, 5 and 6).
    let deleted = tree.delete("bakery", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (3, 3));
    assert_eq!(count(&db, "items", doc! {}).await, 2);
    assert_aisles(&db).await;

    assert_clean!(tree.check());
    assert_clean!(Aisle::collection(&db).computed().check());
    assert_doctor_clean(&db, "pt_computed").await;
}

/// A store counts its sections and sums their area: the nodes of a tree as a computed source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_node_counted")]
#[serde(rename_all = "camelCase")]
struct Store {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = Section, by = store)]
    section_count: i64,
    #[computed(sum = Section.area, by = store)]
    floor_area: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_node_counted")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors)]
struct Section {
    #[serde(rename = "_id")]
    id: String,
    store: String,
    area: i64,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn section(id: &str, parent: Option<&str>, area: i64) -> Section {
    Section {
        id: id.into(),
        store: "north".into(),
        area,
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

/// The store's count and area against its sections, from the raw documents.
async fn assert_store(db: &TestDb, when: &str) {
    let sections = raw(db, "sections").await;
    let store = one(db, "stores", "_id", "north").await;
    assert_eq!(
        (int(&store, "sectionCount"), int(&store, "floorArea")),
        (
            sections.len() as i64,
            sections.iter().map(|s| int(s, "area")).sum::<i64>()
        ),
        "the store's count and area {when}"
    );
}

#[tokio::test]
async fn tree_x_computed_nodes_counted_by_another_model() {
    let db = synced("pt_node_counted", "pt_node_counted").await;
    Store::collection(&db)
        .raw()
        .insert_one(Store {
            id: "north".into(),
            section_count: 0,
            floor_area: 0,
        })
        .await
        .unwrap();
    let tree = Section::collection(&db).tree();
    let computing = Section::collection(&db);
    // A node is inserted and deleted through the tree only (it computes the ancestors and
    // keeps the subtree): `Computing` refuses both. Its other writes of a node count.
    let refused = computing
        .insert(&section("spare", None, 1))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, pattern_runtime::Error::Unsupported { .. }),
        "{refused:?}"
    );
    tree.insert(&section("spare", None, 1)).await.unwrap();
    computing
        .update("spare", doc! { "$inc": { "area": 2 } })
        .await
        .unwrap();
    let mut spare = tree.get("spare").await.unwrap().unwrap();
    spare.area = 4;
    computing.replace(&spare).await.unwrap();
    assert_store(&db, "after Tree::insert, Computing's update and replace").await;
    let refused = computing.delete("spare").await.unwrap_err();
    assert!(
        matches!(refused, pattern_runtime::Error::Unsupported { .. }),
        "{refused:?}"
    );
    tree.delete("spare", pattern_runtime::tree::Deletion::LeafOnly)
        .await
        .unwrap();
    assert_store(&db, "after Tree::delete").await;

    // The tree's inserts: 1 section of area 10, then 2 more (5 and 2). The store stays at 0
    // sections and 0 area here: the tree inserts without the map of derived data.
    tree.insert(&section("a", None, 10)).await.unwrap();
    assert_store(&db, "after Tree::insert").await;
    tree.insert_many(&[section("b", Some("a"), 5), section("c", Some("b"), 2)])
        .await
        .unwrap();
    assert_store(&db, "after Tree::insert_many").await;
    tree.move_to_root("b").await.unwrap();
    tree.move_under("b", "a").await.unwrap();
    tree.delete("c", Deletion::LeafOnly).await.unwrap();
    tree.delete("a", Deletion::Reparent).await.unwrap();
    tree.delete("b", Deletion::Cascade).await.unwrap();
    // Here the store holds -3 sections and -17 area.
    assert_store(&db, "after the deletions").await;
    assert_clean!(Store::collection(&db).computed().check());
    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_node_counted").await;
}

#[tokio::test]
async fn tree_x_computed_writes_of_tree_documents_around_the_tree() {
    let db = synced("pt_computed_around", "pt_computed").await;
    let tree = Aisle::collection(&db).tree();
    tree.insert(&aisle("x", None)).await.unwrap();
    tree.insert(&aisle("y", Some("x"))).await.unwrap();
    // Each write below either keeps the tree (a path computed, ancestors computed) or is
    // refused (`KeptField` for the tree's fields, `Unsupported` for a write only the tree's
    // handles make; nothing written).
    let kept_or_refused = |r: pattern_runtime::Result<()>, what: &str| match r {
        Ok(()) | Err(Error::KeptField { .. } | Error::Unsupported { .. }) => {}
        Err(e) => panic!("{what}: {e:?}"),
    };
    // A holder in `y`, inserted through Computing: stored with the path it was given, [].
    let r = Item::collection(&db).insert(&item(1, Some("y"), 3)).await;
    kept_or_refused(r.map(drop), "Computing::<Item>::insert");
    assert_clean!(tree.check());
    // A node under `y`, inserted through Computing: stored with ancestors [].
    let r = Aisle::collection(&db).insert(&aisle("z", Some("y"))).await;
    kept_or_refused(r.map(drop), "Computing::<Aisle>::insert");
    assert_clean!(tree.check());
    // `x` has a child: Tree::delete(LeafOnly) refuses it (NodeInUse); Computing deletes it.
    let r = Aisle::collection(&db).delete("x").await;
    match r {
        Err(Error::NodeInUse { .. } | Error::Unsupported { .. }) => {}
        other => panic!("Computing::<Aisle>::delete of a node with a child: {other:?}"),
    }
    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_computed").await;
}

// ======================================================================================
// tree × extended reference, the holder's copy of its node (`copy = ..`): a rack item shows
// its rack's label through a copy that follows the rack it is placed in.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_nodecopy", collection = "racks")]
#[tree(parent = parent, ancestors = ancestors)]
#[extended_ref(RackRef(label), derive(PartialEq))]
struct Rack {
    #[serde(rename = "_id")]
    id: String,
    label: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_nodecopy", collection = "stocked")]
#[serde(rename_all = "camelCase")]
#[in_tree(Rack, node = rack_id, path = rack_path, copy = rack)]
struct Stocked {
    #[serde(rename = "_id")]
    id: i64,
    rack_id: Option<String>,
    rack_path: Vec<String>,
    /// Follows the rack it is on.
    #[extended_ref(propagate)]
    rack: Option<RackRef>,
    /// The rack it was first stocked on: its own, left alone by the tree.
    #[extended_ref(propagate)]
    first_rack: Option<RackRef>,
}

/// The `_id` of the rack each stocked item's copy names, by item, from the raw documents.
async fn copied_shelves(db: &TestDb) -> Vec<(i64, Bson, Bson)> {
    raw(db, "stocked")
        .await
        .iter()
        .map(|d| {
            let at = |f: &str| {
                d.get_document(f)
                    .ok()
                    .and_then(|c| c.get("_id").cloned())
                    .unwrap_or(Bson::Null)
            };
            (d.get_i64("_id").unwrap(), at("rack"), at("firstRack"))
        })
        .collect()
}

#[tokio::test]
async fn tree_x_extended_ref_a_holders_copy_of_its_node_follows_it() {
    let db = synced("pt_node_copy", "pt_nodecopy").await;
    let tree = Rack::collection(&db).tree();
    let rack = |id: &str, parent: Option<&str>| Rack {
        id: id.into(),
        label: id.to_uppercase(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    };
    for (id, parent) in [
        ("hall", None),
        ("a", Some("hall")),
        ("a1", Some("a")),
        ("b", Some("hall")),
    ] {
        tree.insert(&rack(id, parent)).await.unwrap();
    }
    let r = |id: &str| Some(RackRef::from(&rack(id, None)));
    let items = tree.holders::<Stocked>();
    // Inserted with a copy of another rack than its node: the copy is the node's.
    items
        .insert(&Stocked {
            id: 1,
            rack_id: Some("a1".into()),
            rack_path: vec![],
            rack: r("b"),
            first_rack: r("a1"),
        })
        .await
        .unwrap();
    items
        .insert_many(&[
            Stocked {
                id: 2,
                rack_id: Some("a1".into()),
                rack_path: vec![],
                rack: None,
                first_rack: r("a1"),
            },
            Stocked {
                id: 3,
                rack_id: Some("b".into()),
                rack_path: vec![],
                rack: r("a"),
                first_rack: r("b"),
            },
        ])
        .await
        .unwrap();
    let s = |id: &str| Bson::from(id);
    assert_eq!(
        copied_shelves(&db).await,
        [
            (1, s("a1"), s("a1")),
            (2, s("a1"), s("a1")),
            (3, s("b"), s("b"))
        ]
    );
    let label = |d: &Document| {
        d.get_document("rack")
            .unwrap()
            .get_str("label")
            .unwrap()
            .to_owned()
    };
    assert_eq!(label(&one(&db, "stocked", "_id", 1).await), "A1");

    // Placed elsewhere: the copy follows, its label too; the item's own copy stays.
    items.place(1, "b").await.unwrap();
    assert_eq!(copied_shelves(&db).await[0], (1, s("b"), s("a1")));
    assert_eq!(label(&one(&db, "stocked", "_id", 1).await), "B");
    // The copied field follows the node's own changes, as every propagated copy does.
    Rack::collection(&db)
        .update("b", doc! { "$set": { "label": "Bins" } })
        .await
        .unwrap();
    assert_eq!(label(&one(&db, "stocked", "_id", 1).await), "Bins");

    // A deletion that moves items up: a1's item now copies a, not the deleted a1.
    tree.delete("a1", Deletion::Reparent).await.unwrap();
    assert_eq!(copied_shelves(&db).await[1], (2, s("a"), s("a1")));

    // Another handle may not re-point the copy: refused, nothing written.
    let before = raw(&db, "stocked").await;
    let e = Stocked::collection(&db)
        .update(
            2,
            doc! { "$set": { "rack": { "_id": "b", "label": "Bins" } } },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::KeptField { ref field, .. } if field == "rack"),
        "{e:?}"
    );
    assert_eq!(raw(&db, "stocked").await, before);
    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_nodecopy").await;

    // Re-pointed around the toolkit: the check and the doctor say so, the repair points it back.
    Stocked::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": 3 },
            doc! { "$set": { "rack": { "_id": "hall", "label": "HALL" } } },
        )
        .await
        .unwrap();
    let checked = tree.check().await.unwrap();
    assert_eq!(checked.documents(), [Bson::Int64(3)], "{checked}");
    assert!(
        checked.findings.iter().any(|f| f.subject == "rack"),
        "{checked}"
    );
    let report = doctor(&db)
        .group("pt_nodecopy")
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    assert!(
        report.findings.iter().any(|f| f.subject == "rack"),
        "{report}"
    );
    let repaired = tree.repair().await.unwrap();
    assert!(repaired.is_clean(), "{repaired}");
    assert_eq!(copied_shelves(&db).await[2], (3, s("b"), s("b")));
    assert_eq!(label(&one(&db, "stocked", "_id", 3).await), "Bins");
    assert_clean!(tree.check());
}

// ======================================================================================
// tree × extended reference: genres (a tree named by slug) are copied, slug and title, into
// the books placed in them and into reading lists; books (the holders) are copied in turn,
// with their node and path, into the reading lists.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_extref")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
#[extended_ref(GenreRef(slug, title), derive(PartialEq))]
struct Genre {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    title: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_extref")]
#[serde(rename_all = "camelCase")]
#[in_tree(Genre, node = genre_slug, path = genre_path)]
#[extended_ref(BookRef(title, genre_slug, genre_path), derive(PartialEq))]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    genre_slug: Option<String>,
    genre_path: Vec<String>,
    /// The genre the book was catalogued under.
    #[extended_ref(propagate)]
    genre: Option<GenreRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_extref")]
struct ReadingList {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    #[bounded(10)]
    genres: Vec<GenreRef>,
    #[extended_ref(propagate)]
    #[bounded(10)]
    books: Vec<BookRef>,
}

const GENRES: TreeAt = TreeAt {
    collection: "genres",
    key: "slug",
    parent: "parent",
    ancestors: "ancestors",
};
const BOOKS: HoldersAt = HoldersAt {
    collection: "books",
    node: "genreSlug",
    path: "genrePath",
};

fn genre(slug: &str, parent: Option<&str>) -> Genre {
    Genre {
        id: ObjectId::new(),
        slug: slug.into(),
        title: slug.to_uppercase(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

/// Every copy of `fields` (BSON names) at `path` in `holder_collection` (a document or an
/// array of them) against its source in `source_collection`, from the raw documents. A copy
/// whose source is gone keeps what it had: `gone` lists what each held when its source went.
async fn assert_copies(
    db: &TestDb,
    holder_collection: &str,
    path: &str,
    source_collection: &str,
    fields: &[&str],
    gone: &HashMap<String, Document>,
) -> usize {
    let sources: HashMap<String, Document> = raw(db, source_collection)
        .await
        .into_iter()
        .map(|d| (text(d.get("_id").unwrap()), d))
        .collect();
    let mut checked = 0;
    for holder in raw(db, holder_collection).await {
        let copies: Vec<Document> = match holder.get(path) {
            Some(Bson::Document(d)) => vec![d.clone()],
            Some(Bson::Array(a)) => a.iter().map(|b| b.as_document().unwrap().clone()).collect(),
            _ => vec![],
        };
        for copy in copies {
            let id = text(copy.get("_id").unwrap());
            let expected: Document = match sources.get(&id) {
                Some(source) => fields
                    .iter()
                    .map(|f| (f.to_string(), source.get(*f).cloned().unwrap_or(Bson::Null)))
                    .collect(),
                None => gone
                    .get(&id)
                    .unwrap_or_else(|| panic!("the source {id} of a copy is missing"))
                    .clone(),
            };
            for f in fields {
                assert_eq!(
                    copy.get(*f),
                    expected.get(*f),
                    "{holder_collection} {}: {path}.{f} of {id}",
                    holder.get("_id").unwrap()
                );
            }
            checked += 1;
        }
    }
    checked
}

async fn assert_library(db: &TestDb, gone: &HashMap<String, Document>) {
    assert_paths(db, &GENRES, &[BOOKS]).await;
    assert_copies(db, "books", "genre", "genres", &["slug", "title"], gone).await;
    assert_copies(
        db,
        "reading_lists",
        "genres",
        "genres",
        &["slug", "title"],
        gone,
    )
    .await;
    let books = ["title", "genreSlug", "genrePath"];
    assert_copies(db, "reading_lists", "books", "books", &books, gone).await;
}

/// What a source's copies hold when it is deleted: its copied fields as stored.
async fn remember(
    db: &TestDb,
    gone: &mut HashMap<String, Document>,
    collection: &str,
    filter: Document,
) {
    let docs: Vec<Document> = db
        .collection::<Document>(collection)
        .find(filter)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    for d in docs {
        gone.insert(text(d.get("_id").unwrap()), d);
    }
}

#[tokio::test]
async fn tree_x_extended_ref_copies_of_nodes_and_holders_follow_every_write() {
    let db = synced("pt_extref", "pt_extref").await;
    let mut gone = HashMap::new();
    let tree = Genre::collection(&db).tree();
    let books = tree.holders::<Book>();
    tree.insert(&genre("fiction", None)).await.unwrap();
    tree.insert_many(&[
        genre("scifi", Some("fiction")),
        genre("space", Some("scifi")),
        genre("fantasy", Some("fiction")),
        genre("poetry", None),
        genre("haiku", Some("poetry")),
        genre("empty", None),
    ])
    .await
    .unwrap();
    let g = |slug: &'static str| {
        let tree = tree.clone();
        async move { tree.get(slug).await.unwrap().unwrap() }
    };
    let book = |id: i64, title: &str, genre: &Genre| Book {
        id,
        title: title.into(),
        genre_slug: Some(genre.slug.clone()),
        genre_path: vec![],
        genre: Some(GenreRef::from(genre)),
    };
    books
        .insert(&book(1, "Dune", &g("space").await))
        .await
        .unwrap();
    books
        .insert_many(&[
            book(2, "Solaris", &g("scifi").await),
            book(3, "Earthsea", &g("fantasy").await),
            book(4, "Odes", &g("poetry").await),
            book(5, "Foundation", &g("scifi").await),
            book(6, "Basho", &g("haiku").await),
        ])
        .await
        .unwrap();
    let stored = |id: i64| {
        let db = db.clone();
        async move {
            Book::collection(&db)
                .raw()
                .find_one(doc! { "_id": id })
                .await
                .unwrap()
                .unwrap()
        }
    };
    ReadingList::collection(&db)
        .raw()
        .insert_one(ReadingList {
            id: 1,
            genres: vec![
                GenreRef::from(&g("scifi").await),
                GenreRef::from(&g("haiku").await),
            ],
            books: vec![
                BookRef::from(&stored(1).await),
                BookRef::from(&stored(5).await),
                BookRef::from(&stored(6).await),
            ],
        })
        .await
        .unwrap();
    assert_library(&db, &gone).await;

    // The key is copied: a rename reaches the books' node, path and genre copy, the lists'
    // genre copies and, through the books, the lists' copies of their node and path.
    tree.rename("scifi", "science-fiction").await.unwrap();
    assert_library(&db, &gone).await;
    let list = one(&db, "reading_lists", "_id", 1).await;
    let first = list.get_array("books").unwrap()[0].as_document().unwrap();
    assert_eq!(
        array(first, "genrePath"),
        strings(&["fiction", "science-fiction", "space"])
    );

    // Moves and placements change the books' node and path: their copies follow.
    tree.move_under("space", "fantasy").await.unwrap();
    tree.move_to_root("fantasy").await.unwrap();
    books.place(5, "poetry").await.unwrap();
    assert_library(&db, &gone).await;
    let list = one(&db, "reading_lists", "_id", 1).await;
    let copies = list.get_array("books").unwrap();
    let first = copies[0].as_document().unwrap();
    assert_eq!(array(first, "genrePath"), strings(&["fantasy", "space"]));
    let second = copies[1].as_document().unwrap();
    assert_eq!(second.get_str("genreSlug").unwrap(), "poetry");

    // The extended reference's own writes, of a node and of a holder.
    let genres = Genre::collection(&db).references();
    let science = g("science-fiction").await;
    Genre::collection(&db)
        .update(science.id, doc! { "$set": { "title": "Science Fiction" } })
        .await
        .unwrap();
    let mut haiku = g("haiku").await;
    haiku.title = "Haiku".into();
    Genre::collection(&db).replace(&haiku).await.unwrap();
    let titles = Book::collection(&db).references();
    Book::collection(&db)
        .update(1, doc! { "$set": { "title": "Dune (1965)" } })
        .await
        .unwrap();
    let mut basho = stored(6).await;
    basho.title = "Basho: the complete haiku".into();
    Book::collection(&db).replace(&basho).await.unwrap();
    assert_library(&db, &gone).await;
    // The tree's fields are the tree's: refused through References, nothing written.
    let before = (raw(&db, "genres").await, raw(&db, "books").await);
    let e = Genre::collection(&db)
        .update(science.id, doc! { "$set": { "slug": "sf" } })
        .await
        .unwrap_err();
    assert!(matches!(e, Error::KeptField { .. }), "{e:?}");
    let e = Book::collection(&db)
        .update(1, doc! { "$set": { "genreSlug": "poetry" } })
        .await
        .unwrap_err();
    assert!(matches!(e, Error::KeptField { .. }), "{e:?}");
    assert_eq!((raw(&db, "genres").await, raw(&db, "books").await), before);

    // Changes made with the driver: `rebuild` and a maintainer bring the copies back.
    Genre::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": haiku.id },
            doc! { "$set": { "title": "Haikus" } },
        )
        .await
        .unwrap();
    Book::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": 5 },
            doc! { "$set": { "title": "Foundation!" } },
        )
        .await
        .unwrap();
    assert!(!genres.check().await.unwrap().is_clean());
    genres.rebuild(haiku.id).await.unwrap();
    titles.rebuild(5).await.unwrap();
    assert_library(&db, &gone).await;
    let running = pattern_runtime::maintainer::Maintainer::new(&db)
        .models(&[Genre::SCHEMA])
        .start()
        .await
        .unwrap();
    Genre::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": science.id },
            doc! { "$set": { "title": "SF" } },
        )
        .await
        .unwrap();
    // Books 2 and 5 (placed in poetry since, still catalogued under it) and the list follow;
    // the timeout guards against a hang, it asserts no timing.
    let start = std::time::Instant::now();
    while !genres.check().await.unwrap().is_clean() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "not followed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    // Followed as an event, or rebuilt by the first start's repair if it came first; the data
    // can be right before the repair has ended, so wait for either to be counted.
    let start = std::time::Instant::now();
    while {
        let status = running.status();
        status.applied + status.repairs == 0
    } {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            running.status()
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let status = running.stop().await.unwrap();
    assert!(status.applied + status.repairs >= 1, "{status:?}");
    assert_library(&db, &gone).await;

    // Deletions. A leaf. Then `space` with Dune in it: Dune moves up to fantasy (its copies in
    // the list follow); its genre copy keeps the deleted genre (a copy outlives its source).
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    remember(&db, &mut gone, "genres", doc! { "slug": "space" }).await;
    tree.delete("space", Deletion::Reparent).await.unwrap();
    assert_library(&db, &gone).await;
    let dune = stored(1).await;
    assert_eq!(dune.genre_slug.as_deref(), Some("fantasy"));
    assert_eq!(dune.genre.unwrap().slug, "space");
    // poetry and haiku go, with Odes, Foundation and Basho: the list keeps its copies.
    remember(
        &db,
        &mut gone,
        "genres",
        doc! { "slug": { "$in": ["poetry", "haiku"] } },
    )
    .await;
    remember(
        &db,
        &mut gone,
        "books",
        doc! { "_id": { "$in": [4, 5, 6] } },
    )
    .await;
    let deleted = tree.delete("poetry", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (2, 3));
    assert_library(&db, &gone).await;
    assert_eq!(count(&db, "books", doc! {}).await, 3);

    assert_clean!(tree.check());
    assert_clean!(genres.check());
    assert_clean!(titles.check());
    assert_doctor_clean(&db, "pt_extref").await;
}

#[tokio::test]
async fn tree_x_extended_ref_replace_of_the_trees_fields() {
    let db = synced("pt_extref_replace", "pt_extref").await;
    let tree = Genre::collection(&db).tree();
    tree.insert(&genre("fiction", None)).await.unwrap();
    tree.insert(&genre("scifi", Some("fiction"))).await.unwrap();
    let scifi = tree.get("scifi").await.unwrap().unwrap();
    tree.holders::<Book>()
        .insert(&Book {
            id: 1,
            title: "Dune".into(),
            genre_slug: Some("scifi".into()),
            genre_path: vec![],
            genre: Some(GenreRef::from(&scifi)),
        })
        .await
        .unwrap();
    // Either refused as `References::update` of the same field is (KeptField, nothing
    // written), or kept as `Tree::rename` / `Holders::place` keep it.
    let kept_or_refused = |r: pattern_runtime::Result<pattern_runtime::Written>, what: &str| match r
    {
        Ok(_) | Err(Error::KeptField { .. }) => {}
        Err(e) => panic!("{what}: {e:?}"),
    };
    // The node's key, replaced: stored as given, the book is left in node "scifi", gone.
    let mut renamed = scifi.clone();
    renamed.slug = "sf".into();
    kept_or_refused(
        Genre::collection(&db).replace(&renamed).await,
        "References::<Genre>::replace with a new slug",
    );
    assert_clean!(tree.check());
    // The holder's node, replaced: stored with its old path.
    let mut dune = Book::collection(&db)
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    dune.genre_slug = Some("fiction".into());
    kept_or_refused(
        Book::collection(&db).replace(&dune).await,
        "References::<Book>::replace with a new node",
    );
    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_extref").await;
}

// ======================================================================================
// tree × attribute: products sit in a category tree and carry their varying specs as
// attributes; the categories carry attributes of their own (tax rate, warranty, ...).
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct Spec {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
}

fn spec(name: &str, value: impl Into<Bson>, unit: Option<&str>) -> Spec {
    Spec {
        name: name.into(),
        value: value.into(),
        unit: unit.map(str::to_owned),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_attribute", collection = "shelves")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Shelf {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[attribute]
    facets: Vec<Spec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_attribute")]
#[serde(rename_all = "camelCase")]
#[in_tree(Shelf, node = shelf, path = shelf_path)]
struct Gadget {
    #[serde(rename = "_id")]
    id: i64,
    shelf: String,
    shelf_path: Vec<String>,
    #[attribute]
    specs: Vec<Spec>,
}

const SHELVES: TreeAt = TreeAt {
    collection: "shelves",
    key: "name",
    parent: "parent",
    ancestors: "ancestors",
};
const GADGETS: HoldersAt = HoldersAt {
    collection: "gadgets",
    node: "shelf",
    path: "shelfPath",
};

fn shelf(name: &str, parent: Option<&str>) -> Shelf {
    Shelf {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        facets: vec![spec("taxRate", 0.2, None)],
    }
}

fn gadget(id: i64, shelf: &str, specs: Vec<Spec>) -> Gadget {
    Gadget {
        id,
        shelf: shelf.into(),
        shelf_path: vec![],
        specs,
    }
}

/// The attribute items of a stored document, as (key, value) pairs in order.
fn items(d: &Document, field: &str) -> Vec<(String, Bson)> {
    array(d, field)
        .iter()
        .map(|b| {
            let i = b.as_document().unwrap();
            (
                i.get_str("name").unwrap().to_owned(),
                i.get("value").cloned().unwrap(),
            )
        })
        .collect()
}

fn pairs(items: &[(&str, Bson)]) -> Vec<(String, Bson)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn ids(found: &[Gadget]) -> Vec<i64> {
    let mut ids: Vec<i64> = found.iter().map(|g| g.id).collect();
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn tree_x_attribute_specs_of_holders_and_nodes_survive_every_tree_write() {
    let db = synced("pt_attribute", "pt_attribute").await;
    let tree = Shelf::collection(&db).tree();
    let gadgets = tree.holders::<Gadget>();
    tree.insert(&shelf("electronics", None)).await.unwrap();
    tree.insert_many(&[
        shelf("parts", Some("electronics")),
        shelf("storage", Some("parts")),
        shelf("ssd", Some("storage")),
        shelf("hdd", Some("storage")),
        shelf("phones", Some("electronics")),
        shelf("outlet", None),
    ])
    .await
    .unwrap();
    let tb = |n: i64| spec("capacityGb", n, Some("GB"));
    gadgets
        .insert(&gadget(1, "ssd", vec![tb(1000), spec("nvme", true, None)]))
        .await
        .unwrap();
    gadgets
        .insert_many(&[
            gadget(2, "ssd", vec![tb(500)]),
            gadget(3, "hdd", vec![tb(4000), spec("rpm", 7200, None)]),
            gadget(4, "phones", vec![spec("screen", 6.1, Some("in"))]),
            gadget(5, "storage", vec![]),
        ])
        .await
        .unwrap();
    assert_paths(&db, &SHELVES, &[GADGETS]).await;

    // The attribute's writes, on holders and on nodes.
    let specs = Gadget::collection(&db).attributes(Gadget::FIELDS.specs);
    let facets = Shelf::collection(&db).attributes(Shelf::FIELDS.facets);
    specs.set(2, &tb(2000)).await.unwrap(); // replaced in place
    specs.set(2, &spec("nvme", false, None)).await.unwrap(); // appended
    specs.set(5, &tb(250)).await.unwrap(); // the first item
    specs.unset(1, "nvme".to_owned()).await.unwrap();
    specs.unset(4, "absent".to_owned()).await.unwrap(); // nothing to remove
    let ssd = tree.get("ssd").await.unwrap().unwrap();
    facets
        .set(ssd.id, &spec("taxRate", 0.1, None))
        .await
        .unwrap();
    facets
        .set(ssd.id, &spec("warranty", 24, Some("months")))
        .await
        .unwrap();
    let phones = tree.get("phones").await.unwrap().unwrap();
    facets.unset(phones.id, "taxRate".to_owned()).await.unwrap();
    let e = specs.set(99, &tb(1)).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");

    // A query mixing both patterns: under `storage`, at least 1 TB.
    let big_storage = || {
        pattern_runtime::attribute::and([
            specs.key("capacityGb".to_owned()).gte(1000).unwrap(),
            doc! { "shelfPath": "storage" },
        ])
    };
    assert_eq!(ids(&specs.find(big_storage()).await.unwrap()), [1, 2, 3]);

    // The tree's writes move paths and keys, never the attributes.
    let before_specs: Vec<Vec<(String, Bson)>> = raw(&db, "gadgets")
        .await
        .iter()
        .map(|d| items(d, "specs"))
        .collect();
    tree.rename("storage", "drives").await.unwrap();
    tree.move_under("ssd", "electronics").await.unwrap();
    tree.move_to_root("phones").await.unwrap();
    gadgets.place(5, "hdd").await.unwrap();
    assert_paths(&db, &SHELVES, &[GADGETS]).await;
    let after_specs: Vec<Vec<(String, Bson)>> = raw(&db, "gadgets")
        .await
        .iter()
        .map(|d| items(d, "specs"))
        .collect();
    assert_eq!(after_specs, before_specs);
    assert_eq!(
        after_specs,
        [
            pairs(&[("capacityGb", Bson::Int64(1000))]),
            pairs(&[
                ("capacityGb", Bson::Int64(2000)),
                ("nvme", Bson::Boolean(false))
            ]),
            pairs(&[
                ("capacityGb", Bson::Int64(4000)),
                ("rpm", Bson::Int32(7200))
            ]),
            pairs(&[("screen", Bson::Double(6.1))]),
            pairs(&[("capacityGb", Bson::Int64(250))]),
        ]
    );
    let ssd_doc = one(&db, "shelves", "name", "ssd").await;
    assert_eq!(
        items(&ssd_doc, "facets"),
        pairs(&[
            ("taxRate", Bson::Double(0.1)),
            ("warranty", Bson::Int32(24))
        ])
    );
    assert!(items(&one(&db, "shelves", "name", "phones").await, "facets").is_empty());
    // The same query under the new shape: only the hdd is under `drives` now.
    let under_drives = pattern_runtime::attribute::and([
        specs.key("capacityGb".to_owned()).gte(1000).unwrap(),
        doc! { "shelfPath": "drives" },
    ]);
    assert_eq!(ids(&specs.find(under_drives).await.unwrap()), [3]);

    // Deletions, and attribute writes after them.
    tree.delete("outlet", Deletion::LeafOnly).await.unwrap();
    tree.delete("drives", Deletion::Reparent).await.unwrap(); // hdd moves up to parts
    let deleted = tree.delete("ssd", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 2));
    specs.set(3, &spec("rpm", 5400, None)).await.unwrap();
    let hdd = tree.get("hdd").await.unwrap().unwrap();
    facets
        .set(hdd.id, &spec("taxRate", 0.3, None))
        .await
        .unwrap();
    assert_paths(&db, &SHELVES, &[GADGETS]).await;
    assert_eq!(
        items(&one(&db, "gadgets", "_id", 3).await, "specs"),
        pairs(&[
            ("capacityGb", Bson::Int64(4000)),
            ("rpm", Bson::Int32(5400))
        ])
    );
    assert_eq!(
        array(&one(&db, "gadgets", "_id", 3).await, "shelfPath"),
        strings(&["electronics", "parts", "hdd"])
    );

    assert_clean!(tree.check());
    assert_clean!(specs.check());
    assert_clean!(facets.check());
    assert_doctor_clean(&db, "pt_attribute").await;
}

// ======================================================================================
// tree × outlier: a forum's boards form a tree (named by slug), each embedding its posts,
// which overflow for the few busy boards; members sit in the boards (holders, `_id` = their
// user name) and embed their notes the same way.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Post {
    text: String,
}

fn post(text: &str) -> Post {
    Post { text: text.into() }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_outlier")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
struct Board {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[outlier(limit = 3, overflow = "board_posts", capacity = 2, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_outlier")]
#[serde(rename_all = "camelCase")]
#[in_tree(Board, node = board, path = board_path)]
struct Member {
    #[serde(rename = "_id")]
    id: String,
    board: Option<String>,
    board_path: Vec<String>,
    #[outlier(limit = 2, overflow = "member_notes", capacity = 2, flag = is_outlier, count = notes_count)]
    notes: Vec<Post>,
    is_outlier: bool,
    notes_count: i64,
}

const BOARDS: TreeAt = TreeAt {
    collection: "boards",
    key: "slug",
    parent: "parent",
    ancestors: "ancestors",
};
const MEMBERS: HoldersAt = HoldersAt {
    collection: "members",
    node: "board",
    path: "boardPath",
};

fn board(slug: &str, parent: Option<&str>) -> Board {
    Board {
        id: ObjectId::new(),
        slug: slug.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
    }
}

fn member(id: &str, board: Option<&str>) -> Member {
    Member {
        id: id.into(),
        board: board.map(str::to_owned),
        board_path: vec![],
        notes: vec![],
        is_outlier: false,
        notes_count: 0,
    }
}

/// Every main document of `collection` against its overflow documents in `overflow` (linked
/// by `parent`), from the raw documents: the count is every item, the flag is set exactly when
/// overflow documents exist, no document passes its limit or capacity. Returns the texts of
/// each main document's items, main first, then by `seq`.
async fn assert_outliers(
    db: &TestDb,
    collection: &str,
    overflow: &str,
    parent: &str,
    field: &str,
    count: &str,
    (limit, capacity): (usize, usize),
) -> HashMap<String, Vec<String>> {
    let overflows = db
        .collection::<Document>(overflow)
        .find(doc! {})
        .sort(doc! { "seq": 1 })
        .await
        .unwrap()
        .try_collect::<Vec<Document>>()
        .await
        .unwrap();
    let texts = |d: &Document| -> Vec<String> {
        array(d, field)
            .iter()
            .map(|p| p.as_document().unwrap().get_str("text").unwrap().to_owned())
            .collect()
    };
    let mut all = HashMap::new();
    for main in raw(db, collection).await {
        let id = main.get("_id").unwrap();
        let mut items = texts(&main);
        assert!(items.len() <= limit, "{collection} {id} over its limit");
        let mine: Vec<&Document> = overflows
            .iter()
            .filter(|o| o.get(parent) == Some(id))
            .collect();
        for o in &mine {
            let more = texts(o);
            assert!(
                more.len() <= capacity,
                "an overflow document of {id} over capacity"
            );
            items.extend(more);
        }
        assert_eq!(
            int(&main, count),
            items.len() as i64,
            "the count of {collection} {id}"
        );
        assert_eq!(
            main.get_bool("isOutlier").unwrap(),
            !mine.is_empty(),
            "the flag of {collection} {id}"
        );
        all.insert(text(id), items);
    }
    all
}

async fn assert_forum(db: &TestDb) -> (HashMap<String, Vec<String>>, HashMap<String, Vec<String>>) {
    assert_paths(db, &BOARDS, &[MEMBERS]).await;
    let posts = assert_outliers(
        db,
        "boards",
        "board_posts",
        "boardId",
        "posts",
        "postsCount",
        (3, 2),
    )
    .await;
    let notes = assert_outliers(
        db,
        "members",
        "member_notes",
        "memberId",
        "notes",
        "notesCount",
        (2, 2),
    )
    .await;
    (posts, notes)
}

fn owned(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

#[tokio::test]
async fn tree_x_outlier_overflowing_nodes_and_holders_through_every_tree_write() {
    let db = synced("pt_outlier", "pt_outlier").await;
    let tree = Board::collection(&db).tree();
    let members = tree.holders::<Member>();
    tree.insert(&board("rust", None)).await.unwrap();
    tree.insert_many(&[
        board("async", Some("rust")),
        board("tokio", Some("async")),
        board("help", Some("rust")),
        board("offtopic", None),
        board("empty", None),
    ])
    .await
    .unwrap();
    members.insert(&member("ada", Some("tokio"))).await.unwrap();
    members
        .insert_many(&[
            member("bob", Some("async")),
            member("cy", Some("help")),
            member("dee", None),
        ])
        .await
        .unwrap();
    members.place("dee", "offtopic").await.unwrap();

    // The outlier's writes, on nodes and on holders: past the limit, into overflow documents.
    let posts = Board::collection(&db).outlier(Board::FIELDS.posts);
    let notes = Member::collection(&db).outlier(Member::FIELDS.notes);
    let id_of = |slug: &'static str| {
        let tree = tree.clone();
        async move { tree.get(slug).await.unwrap().unwrap().id }
    };
    let tokio_board = id_of("tokio").await;
    posts.push(tokio_board, post("p1")).await.unwrap();
    posts
        .push_many(
            tokio_board,
            ["p2", "p3", "p4", "p5", "p6"].map(post).to_vec(),
        )
        .await
        .unwrap();
    let help = id_of("help").await;
    posts.push(help, post("h1")).await.unwrap();
    notes.push("ada", post("n1")).await.unwrap();
    notes
        .push_many("ada", ["n2", "n3", "n4"].map(post).to_vec())
        .await
        .unwrap();
    notes.push("cy", post("c1")).await.unwrap();
    assert_eq!(posts.remove(tokio_board, &post("p5")).await.unwrap(), 1);
    assert_eq!(posts.remove(tokio_board, &post("p1")).await.unwrap(), 1);
    assert_eq!(notes.remove("ada", &post("n2")).await.unwrap(), 1);
    let rebuilt = posts.rebuild(tokio_board).await.unwrap();
    assert_eq!(
        rebuilt.repaired, 0,
        "the count and flag were kept: {rebuilt}"
    );
    let (by_board, by_member) = assert_forum(&db).await;
    assert_eq!(
        by_board[&text(&Bson::ObjectId(tokio_board))],
        owned(&["p2", "p3", "p4", "p6"])
    );
    assert_eq!(
        by_member[&text(&Bson::from("ada"))],
        owned(&["n1", "n3", "n4"])
    );
    assert_eq!(
        posts.items(tokio_board).await.unwrap(),
        ["p2", "p3", "p4", "p6"].map(post)
    );

    // The tree's writes: the overflow documents point at the `_id`, which never changes.
    tree.rename("tokio", "tokio-rs").await.unwrap();
    tree.move_under("tokio-rs", "rust").await.unwrap();
    tree.move_to_root("async").await.unwrap();
    members.place("ada", "help").await.unwrap();
    let (by_board, by_member) = assert_forum(&db).await;
    assert_eq!(
        by_board[&text(&Bson::ObjectId(tokio_board))],
        owned(&["p2", "p3", "p4", "p6"])
    );
    assert_eq!(
        by_member[&text(&Bson::from("ada"))],
        owned(&["n1", "n3", "n4"])
    );
    assert_eq!(
        array(&one(&db, "members", "_id", "ada").await, "boardPath"),
        strings(&["rust", "help"])
    );
    posts.push(tokio_board, post("p7")).await.unwrap();
    notes.push("ada", post("n5")).await.unwrap();
    assert_eq!(posts.count(tokio_board).await.unwrap(), 5);
    assert_eq!(notes.count("ada").await.unwrap(), 4);

    // Deletions of nodes and holders that hold no overflow documents.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    // A root with a holder in it cannot be re-parented: its holders would have nowhere to go.
    let e = tree.delete("async", Deletion::Reparent).await.unwrap_err();
    assert!(matches!(e, Error::NodeInUse { .. }), "{e:?}");
    // help (1 post, no overflow) goes; ada (whose notes overflow) and cy move up to rust.
    tree.delete("help", Deletion::Reparent).await.unwrap();
    assert_eq!(
        one(&db, "members", "_id", "ada")
            .await
            .get_str("board")
            .unwrap(),
        "rust"
    );
    let deleted = tree.delete("offtopic", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    assert_forum(&db).await;
    assert_eq!(count(&db, "members", doc! {}).await, 3);

    assert_clean!(tree.check());
    assert_clean!(posts.check());
    assert_clean!(notes.check());
    assert_doctor_clean(&db, "pt_outlier").await;
}

#[tokio::test]
async fn tree_x_outlier_deletions_leave_overflow_documents() {
    let db = synced("pt_outlier_orphans", "pt_outlier").await;
    let tree = Board::collection(&db).tree();
    tree.insert(&board("rust", None)).await.unwrap();
    tree.insert(&board("tokio", Some("rust"))).await.unwrap();
    tree.holders::<Member>()
        .insert(&member("ada", Some("tokio")))
        .await
        .unwrap();
    let tokio_board = tree.get("tokio").await.unwrap().unwrap().id;
    // Both outliers: 2 of the 5 posts and 2 of the 4 notes overflow, one document each.
    Board::collection(&db)
        .outlier(Board::FIELDS.posts)
        .push_many(
            tokio_board,
            ["p1", "p2", "p3", "p4", "p5"].map(post).to_vec(),
        )
        .await
        .unwrap();
    Member::collection(&db)
        .outlier(Member::FIELDS.notes)
        .push_many("ada", ["n1", "n2", "n3", "n4"].map(post).to_vec())
        .await
        .unwrap();
    assert_eq!(count(&db, "board_posts", doc! {}).await, 1);
    assert_eq!(count(&db, "member_notes", doc! {}).await, 1);

    // The board and ada go; their overflow documents stay, and nothing reports them.
    tree.delete("tokio", Deletion::Cascade).await.unwrap();
    assert_clean!(tree.check());
    assert_clean!(Board::collection(&db).outlier(Board::FIELDS.posts).check());
    assert_clean!(Member::collection(&db)
        .outlier(Member::FIELDS.notes)
        .check());
    assert_doctor_clean(&db, "pt_outlier").await;
    assert_eq!(
        count(&db, "board_posts", doc! { "boardId": tokio_board }).await,
        0,
        "the overflow documents of the deleted board"
    );
    assert_eq!(
        count(&db, "member_notes", doc! { "memberId": "ada" }).await,
        0,
        "the overflow documents of the deleted member"
    );
    // A new member with the same user name starts with no notes.
    tree.holders::<Member>()
        .insert(&member("ada", Some("rust")))
        .await
        .unwrap();
    assert!(Member::collection(&db)
        .outlier(Member::FIELDS.notes)
        .items("ada")
        .await
        .unwrap()
        .is_empty());
    assert_clean!(Member::collection(&db)
        .outlier(Member::FIELDS.notes)
        .check());
}

// ======================================================================================
// tree × subset: products sit in a category tree and keep their newest reviews as a subset
// (count, sum and average of every review kept beside it); the categories keep their newest
// notices the same way.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_subset", collection = "categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
#[serde(rename_all = "camelCase")]
struct Category {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[subset(limit = 1, sort(at = -1), full = Notice, parent = category_id)]
    newest_notices: Vec<NoticeExcerpt>,
    #[summary(count = newest_notices)]
    notice_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_subset")]
#[serde(rename_all = "camelCase")]
struct Notice {
    #[serde(rename = "_id")]
    id: i64,
    category_id: i64,
    text: String,
    at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct NoticeExcerpt {
    notice_id: i64,
    at: i64,
}

impl From<&Notice> for NoticeExcerpt {
    fn from(n: &Notice) -> Self {
        NoticeExcerpt {
            notice_id: n.id,
            at: n.at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_subset")]
#[serde(rename_all = "camelCase")]
#[in_tree(Category, node = category, path = category_path)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    category: String,
    category_path: Vec<String>,
    #[subset(limit = 2, sort(at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
    #[summary(sum = recent_reviews.stars)]
    rating_sum: i64,
    #[summary(avg = recent_reviews.stars)]
    rating_avg: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_subset")]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(rename = "_id")]
    id: i64,
    product_id: String,
    stars: i32,
    at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct ReviewExcerpt {
    review_id: i64,
    stars: i32,
    at: i64,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id,
            stars: r.stars,
            at: r.at,
        }
    }
}

const CATEGORIES: TreeAt = TreeAt {
    collection: "categories",
    key: "name",
    parent: "parent",
    ancestors: "ancestors",
};
const PRODUCTS: HoldersAt = HoldersAt {
    collection: "products",
    node: "category",
    path: "categoryPath",
};

fn category(id: i64, name: &str, parent: Option<&str>) -> Category {
    Category {
        id,
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        newest_notices: vec![],
        notice_count: 0,
    }
}

fn product(id: &str, category: &str) -> Product {
    Product {
        id: id.into(),
        category: category.into(),
        category_path: vec![],
        recent_reviews: vec![],
        rating_count: 0,
        rating_sum: 0,
        rating_avg: None,
    }
}

fn review(id: i64, product: &str, stars: i32) -> Review {
    Review {
        id,
        product_id: product.into(),
        stars,
        at: id,
    }
}

/// Every product's subset and summaries, and every category's, against the full collections,
/// from the raw documents; and the paths.
async fn assert_catalogue(db: &TestDb) {
    assert_paths(db, &CATEGORIES, &[PRODUCTS]).await;
    let reviews = raw(db, "reviews").await;
    for p in raw(db, "products").await {
        let id = p.get("_id").unwrap();
        let mut mine: Vec<&Document> = reviews
            .iter()
            .filter(|r| r.get("productId") == Some(id))
            .collect();
        mine.sort_by_key(|r| -int(r, "at"));
        let newest: Vec<i64> = mine.iter().take(2).map(|r| int(r, "_id")).collect();
        let embedded: Vec<i64> = array(&p, "recentReviews")
            .iter()
            .map(|e| int(e.as_document().unwrap(), "reviewId"))
            .collect();
        assert_eq!(embedded, newest, "the newest reviews of {id}");
        let sum: i64 = mine.iter().map(|r| int(r, "stars")).sum();
        assert_eq!(
            int(&p, "ratingCount"),
            mine.len() as i64,
            "the count of {id}"
        );
        assert_eq!(int(&p, "ratingSum"), sum, "the sum of {id}");
        let avg = (!mine.is_empty()).then(|| sum as f64 / mine.len() as f64);
        assert_eq!(p.get_f64("ratingAvg").ok(), avg, "the average of {id}");
    }
    let notices = raw(db, "notices").await;
    for c in raw(db, "categories").await {
        let id = c.get("_id").unwrap();
        let mut mine: Vec<&Document> = notices
            .iter()
            .filter(|n| n.get("categoryId") == Some(id))
            .collect();
        mine.sort_by_key(|n| -int(n, "at"));
        let newest: Vec<i64> = mine.iter().take(1).map(|n| int(n, "_id")).collect();
        let embedded: Vec<i64> = array(&c, "newestNotices")
            .iter()
            .map(|e| int(e.as_document().unwrap(), "noticeId"))
            .collect();
        assert_eq!(embedded, newest, "the newest notice of category {id}");
        assert_eq!(
            int(&c, "noticeCount"),
            mine.len() as i64,
            "the notices of {id}"
        );
    }
}

#[tokio::test]
async fn tree_x_subset_holders_and_nodes_keep_their_subsets_through_every_tree_write() {
    let db = synced_unvalidated("pt_subset", "pt_subset").await;
    let tree = Category::collection(&db).tree();
    let products = tree.holders::<Product>();
    tree.insert(&category(1, "electronics", None))
        .await
        .unwrap();
    tree.insert_many(&[
        category(2, "parts", Some("electronics")),
        category(3, "storage", Some("parts")),
        category(4, "ssd", Some("storage")),
        category(5, "phones", Some("electronics")),
        category(6, "books", None),
        category(7, "empty", None),
    ])
    .await
    .unwrap();
    products.insert(&product("p1", "ssd")).await.unwrap();
    products
        .insert_many(&[
            product("p2", "ssd"),
            product("p3", "phones"),
            product("p4", "books"),
        ])
        .await
        .unwrap();

    // The subset's writes, on holders and on nodes.
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    let notices = Category::collection(&db).subset(Category::FIELDS.newest_notices);
    reviews.push("p1", review(1, "p1", 5)).await.unwrap();
    reviews
        .push_many(
            "p1",
            vec![review(2, "p1", 3), review(3, "p1", 4), review(4, "p1", 1)],
        )
        .await
        .unwrap();
    reviews
        .push("p2", review(5, "p2", 2))
        .set(doc! { "lastReviewed": 5 }) // the caller's own `$set`, in the same update
        .await
        .unwrap();
    reviews.push("p3", review(6, "p3", 4)).await.unwrap();
    reviews.push("p4", review(7, "p4", 3)).await.unwrap();
    reviews.remove("p1", 4).await.unwrap(); // an embedded one: refilled from the full items
    reviews.remove("p1", 1).await.unwrap(); // one that was not embedded
    reviews.rebuild("p2").await.unwrap();
    // Typed ids: `push` stores the parent id as given into the item's `categoryId`.
    notices
        .push(
            4_i64,
            Notice {
                id: 1,
                category_id: 4,
                text: "new NVMe drives".into(),
                at: 1,
            },
        )
        .await
        .unwrap();
    notices
        .push_many(
            3_i64,
            vec![
                Notice {
                    id: 2,
                    category_id: 3,
                    text: "sale".into(),
                    at: 2,
                },
                Notice {
                    id: 3,
                    category_id: 3,
                    text: "restock".into(),
                    at: 3,
                },
            ],
        )
        .await
        .unwrap();
    notices.remove(3_i64, 3_i64).await.unwrap();
    notices.rebuild(4_i64).await.unwrap();
    assert_catalogue(&db).await;
    assert_eq!(
        one(&db, "products", "_id", "p2").await.get("lastReviewed"),
        Some(&Bson::Int32(5))
    );
    let p1: Product = Product::collection(&db)
        .raw()
        .find_one(doc! { "_id": "p1" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p1.rating_count, p1.rating_sum, p1.rating_avg),
        (2, 7, Some(3.5))
    );

    // The tree's writes move keys and paths, never the subsets.
    tree.rename("storage", "drives").await.unwrap();
    tree.move_under("ssd", "electronics").await.unwrap();
    tree.move_to_root("phones").await.unwrap();
    products.place("p4", "ssd").await.unwrap();
    assert_catalogue(&db).await;
    assert_eq!(
        array(&one(&db, "products", "_id", "p4").await, "categoryPath"),
        strings(&["electronics", "ssd"])
    );
    reviews.push("p4", review(8, "p4", 5)).await.unwrap();
    assert_catalogue(&db).await;

    // Deletions.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    tree.delete("parts", Deletion::Reparent).await.unwrap(); // drives moves up
    let deleted = tree.delete("books", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 0));
    let deleted = tree.delete("phones", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    // p3 went with phones; its review stays in the full collection, a parent's to delete, and
    // the check reports it as an orphan until it is.
    assert_eq!(count(&db, "reviews", doc! { "productId": "p3" }).await, 1);
    assert_catalogue(&db).await;
    let checked = reviews.check().await.unwrap();
    let orphans: Vec<_> = checked
        .findings
        .iter()
        .filter(|f| f.check == pattern_runtime::doctor::Check::Orphans)
        .collect();
    assert_eq!(orphans.len(), 1, "{checked}");
    assert_eq!(orphans[0].documents, [Bson::from("p3")], "{checked}");
    Review::collection(&db)
        .raw()
        .delete_many(doc! { "productId": "p3" })
        .await
        .unwrap();

    assert_clean!(tree.check());
    assert_clean!(reviews.check());
    assert_clean!(notices.check());
    assert_doctor_clean(&db, "pt_subset").await;
}

#[tokio::test]
async fn tree_x_subset_push_set_of_the_trees_fields() {
    let db = synced("pt_subset_set", "pt_subset").await;
    let tree = Category::collection(&db).tree();
    tree.insert(&category(1, "a", None)).await.unwrap();
    tree.insert(&category(2, "b", Some("a"))).await.unwrap();
    tree.holders::<Product>()
        .insert(&product("p1", "b"))
        .await
        .unwrap();
    let before = (raw(&db, "products").await, raw(&db, "categories").await);
    // As `ModelCollection::update` or `References::update` of these fields: `KeptField`, nothing
    // written. Both are written here: p1 lands in `a` with the path of `b`, and `b` becomes a
    // root that keeps its ancestors.
    let r = Product::collection(&db)
        .subset(Product::FIELDS.recent_reviews)
        .push("p1", review(1, "p1", 5))
        .set(doc! { "category": "a" })
        .await;
    assert!(matches!(r, Err(Error::KeptField { .. })), "{r:?}");
    let r = Category::collection(&db)
        .subset(Category::FIELDS.newest_notices)
        .push(
            2_i64,
            Notice {
                id: 1,
                category_id: 2,
                text: "moved".into(),
                at: 1,
            },
        )
        .set(doc! { "parent": Bson::Null })
        .await;
    assert!(matches!(r, Err(Error::KeptField { .. })), "{r:?}");
    assert_eq!(
        (raw(&db, "products").await, raw(&db, "categories").await),
        before
    );
    assert_clean!(tree.check());
}

// ======================================================================================
// tree × approximation: topics (a tree named by slug) count their views (batched), likes
// (sampled) and hits (sharded); the articles placed in them count their reads (batched,
// flushed in the background).
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_approx")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
struct Topic {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[approximate(batched, threshold = 3)]
    views: i64,
    #[approximate(sampled, p = 0.5)]
    likes: i64,
    #[approximate(sharded, shards = 4)]
    hits: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_approx")]
#[serde(rename_all = "camelCase")]
#[in_tree(Topic, node = topic, path = topic_path)]
struct Article {
    #[serde(rename = "_id")]
    id: i64,
    topic: String,
    topic_path: Vec<String>,
    #[approximate(batched, threshold = 100)]
    reads: i64,
}

const TOPICS: TreeAt = TreeAt {
    collection: "topics",
    key: "slug",
    parent: "parent",
    ancestors: "ancestors",
};
const ARTICLES: HoldersAt = HoldersAt {
    collection: "articles",
    node: "topic",
    path: "topicPath",
};

fn topic(slug: &str, parent: Option<&str>) -> Topic {
    Topic {
        id: ObjectId::new(),
        slug: slug.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        views: 0,
        likes: 0,
        hits: 0,
    }
}

fn article(id: i64, topic: &str) -> Article {
    Article {
        id,
        topic: topic.into(),
        topic_path: vec![],
        reads: 0,
    }
}

/// The sum of the shard documents of `id`'s hits, read here.
async fn shards_of(db: &TestDb, id: ObjectId) -> i64 {
    let shards: Vec<Document> = db
        .collection::<Document>("topics.hits")
        .find(doc! { "_id.of": id })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    shards.iter().map(|s| int(s, "count")).sum()
}

#[tokio::test]
async fn tree_x_approximation_counters_on_nodes_and_holders_through_every_tree_write() {
    let db = synced("pt_approx", "pt_approx").await;
    let tree = Topic::collection(&db).tree();
    let articles = tree.holders::<Article>();
    tree.insert(&topic("science", None)).await.unwrap();
    tree.insert_many(&[
        topic("physics", Some("science")),
        topic("quantum", Some("physics")),
        topic("biology", Some("science")),
        topic("arts", None),
        topic("empty", None),
    ])
    .await
    .unwrap();
    articles.insert(&article(1, "quantum")).await.unwrap();
    articles
        .insert_many(&[
            article(2, "physics"),
            article(3, "biology"),
            article(4, "arts"),
        ])
        .await
        .unwrap();
    let id = |slug: &'static str| {
        let tree = tree.clone();
        async move { tree.get(slug).await.unwrap().unwrap().id }
    };
    let (physics, quantum, arts) = (id("physics").await, id("quantum").await, id("arts").await);

    // The counters' writes: batched (threshold 3) with a flush, sampled with p = 1/2 (each
    // write adds 2), sharded with a snapshot; the articles' reads flushed in the background.
    let views = Topic::collection(&db).counter(Topic::FIELDS.views);
    for _ in 0..7 {
        views.add(physics, 1).await.unwrap();
    }
    views.add(quantum, 2).await.unwrap();
    assert_eq!((views.writes(), views.pending()), (2, 3)); // physics at 3 and 6
    let likes = Topic::collection(&db)
        .counter(Topic::FIELDS.likes)
        .with_random(pattern_runtime::approximation::Random::seeded(7));
    let mut liked = 0;
    for _ in 0..20 {
        liked += i64::from(likes.add(quantum).await.unwrap());
    }
    assert!(liked > 0 && liked < 20, "{liked} of 20 sampled");
    let hits = Topic::collection(&db).counter(Topic::FIELDS.hits).of(arts);
    for n in 1..=5 {
        hits.add(n).await.unwrap();
    }
    let reads = std::sync::Arc::new(Article::collection(&db).counter(Article::FIELDS.reads));
    let flusher = pattern_runtime::approximation::BatchedCounter::flush_every(
        reads.clone(),
        std::time::Duration::from_millis(20),
    );
    for a in [1, 1, 2, 4] {
        reads.add(a, 1).await.unwrap();
    }

    // The tree's writes meanwhile: the counters name documents by `_id`, which never changes.
    tree.rename("physics", "phys").await.unwrap();
    tree.move_under("quantum", "science").await.unwrap();
    tree.move_to_root("biology").await.unwrap();
    articles.place(2, "quantum").await.unwrap();
    views.add(physics, 1).await.unwrap();

    assert_eq!(views.flush().await.unwrap(), 2); // physics' 2, quantum's 2
    assert_eq!(hits.snapshot().await.unwrap(), 15);
    assert_eq!(hits.read().await.unwrap(), 15);
    flusher.stop().await.into_result().unwrap();
    assert_eq!(reads.pending(), 0);
    assert_paths(&db, &TOPICS, &[ARTICLES]).await;
    let stored = |slug: &'static str| {
        let db = db.clone();
        async move { one(&db, "topics", "slug", slug).await }
    };
    let phys = stored("phys").await;
    assert_eq!(int(&phys, "views"), 8);
    let q = stored("quantum").await;
    assert_eq!((int(&q, "views"), int(&q, "likes")), (2, 2 * liked));
    assert_eq!(int(&stored("arts").await, "hits"), 15);
    assert_eq!(shards_of(&db, arts).await, 15);
    let reads_of: Vec<i64> = raw(&db, "articles")
        .await
        .iter()
        .map(|a| int(a, "reads"))
        .collect();
    assert_eq!(reads_of, [2, 1, 0, 1]);

    // Deletions of nodes with nothing pending.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    tree.delete("phys", Deletion::Reparent).await.unwrap();
    let deleted = tree.delete("biology", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    assert_paths(&db, &TOPICS, &[ARTICLES]).await;
    // Every stored topic still reads as a Topic (a counter never made one of its own).
    let topics: Vec<Topic> = Topic::collection(&db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(topics.len(), 3);
    assert_eq!(
        array(&one(&db, "articles", "_id", 2).await, "topicPath"),
        strings(&["science", "quantum"])
    );

    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_approx").await;
}

#[tokio::test]
async fn tree_x_approximation_a_count_pending_for_a_deleted_node() {
    let db = synced("pt_approx_deleted", "pt_approx").await;
    let tree = Topic::collection(&db).tree();
    tree.insert(&topic("science", None)).await.unwrap();
    tree.insert(&topic("physics", Some("science")))
        .await
        .unwrap();
    tree.insert(&topic("biology", Some("science")))
        .await
        .unwrap();
    let physics = tree.get("physics").await.unwrap().unwrap().id;
    let biology = tree.get("biology").await.unwrap().unwrap().id;
    let views = Topic::collection(&db).counter(Topic::FIELDS.views);
    views.add(physics, 1).await.unwrap();
    views.add(biology, 1).await.unwrap();
    // Deleted while their views wait for the next flush.
    tree.delete("physics", Deletion::LeafOnly).await.unwrap();
    tree.delete("biology", Deletion::LeafOnly).await.unwrap();
    // The flush upserts `{_id: physics, views: 1}` (no slug, parent or ancestors), then fails
    // on `slug_1` for biology (a second null slug), and keeps failing at every flush.
    let flushed = views.flush().await;
    assert!(flushed.is_ok(), "{flushed:?}");
    assert_eq!(
        count(&db, "topics", doc! {}).await,
        1,
        "the counter made topics of its own: {:?}",
        raw(&db, "topics").await
    );
    // Tree::check and the doctor do not see such a document; reading the model does.
    let topics: Result<Vec<Topic>, _> = Topic::collection(&db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await;
    assert!(topics.is_ok(), "{topics:?}");
    assert_clean!(tree.check());
    assert_doctor_clean(&db, "pt_approx").await;
}

// ======================================================================================
// tree × preallocation: a hotel's places form a tree (named by code); each room's nights are
// preallocated slots that sit in the tree (the slot's resource is its node), so "a free night
// anywhere on floor 1" is one query; the meeting rooms' days are bitmaps of half hours, in the
// same tree.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_prealloc")]
#[tree(parent = parent, ancestors = ancestors, key = code)]
struct Place {
    #[serde(rename = "_id")]
    id: ObjectId,
    code: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_prealloc")]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = room, slot = date, holder = booked_by)]
#[in_tree(Place, node = room, path = room_path)]
struct RoomNight {
    #[serde(rename = "_id")]
    id: ObjectId,
    room: String,
    room_path: Vec<String>,
    date: String,
    booked_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_prealloc")]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = room, slot = date, bitmap = half_hours, sub_slots = 48)]
#[in_tree(Place, node = room, path = room_path)]
struct MeetingDay {
    #[serde(rename = "_id")]
    id: ObjectId,
    room: String,
    room_path: Vec<String>,
    date: String,
    half_hours: i64,
}

const PLACES: TreeAt = TreeAt {
    collection: "places",
    key: "code",
    parent: "parent",
    ancestors: "ancestors",
};
const NIGHTS: HoldersAt = HoldersAt {
    collection: "room_nights",
    node: "room",
    path: "roomPath",
};
const MEETING_DAYS: HoldersAt = HoldersAt {
    collection: "meeting_days",
    node: "room",
    path: "roomPath",
};

fn place(code: &str, parent: Option<&str>) -> Place {
    Place {
        id: ObjectId::new(),
        code: code.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

/// A free night of `room`, with the path given (the tree's, read by the caller).
fn night(room: &str, path: &[String], date: &str) -> RoomNight {
    RoomNight {
        id: ObjectId::new(),
        room: room.into(),
        room_path: path.to_vec(),
        date: date.into(),
        booked_by: None,
    }
}

fn meeting_day(room: &str, path: &[String], date: &str) -> MeetingDay {
    MeetingDay {
        id: ObjectId::new(),
        room: room.into(),
        room_path: path.to_vec(),
        date: date.into(),
        half_hours: 0,
    }
}

/// Every night as (room, date) -> holder, from the raw documents; and every (room, date)
/// once only.
async fn bookings(db: &TestDb) -> std::collections::BTreeMap<(String, String), Option<String>> {
    let mut out = std::collections::BTreeMap::new();
    for n in raw(db, "room_nights").await {
        let key = (
            n.get_str("room").unwrap().to_owned(),
            n.get_str("date").unwrap().to_owned(),
        );
        let holder = n.get_str("bookedBy").ok().map(str::to_owned);
        assert!(out.insert(key.clone(), holder).is_none(), "{key:?} twice");
    }
    out
}

fn booking(room: &str, date: &str, holder: Option<&str>) -> ((String, String), Option<String>) {
    ((room.into(), date.into()), holder.map(str::to_owned))
}

#[tokio::test]
async fn tree_x_preallocation_slots_placed_in_the_tree_through_every_write() {
    let db = synced("pt_prealloc", "pt_prealloc").await;
    let tree = Place::collection(&db).tree();
    tree.insert(&place("hotel", None)).await.unwrap();
    tree.insert_many(&[
        place("floor1", Some("hotel")),
        place("r101", Some("floor1")),
        place("r102", Some("floor1")),
        place("floor2", Some("hotel")),
        place("r201", Some("floor2")),
        place("annex", None),
        place("a1", Some("annex")),
        place("boardroom", Some("hotel")),
        place("empty", None),
    ])
    .await
    .unwrap();
    let path = |room: &'static str| {
        let tree = tree.clone();
        async move { tree.path(room).await.unwrap() }
    };
    let (p101, p102, p201, pa1) = (
        path("r101").await,
        path("r102").await,
        path("r201").await,
        path("a1").await,
    );
    assert_eq!(p101, ["hotel", "floor1", "r101"]);

    // The grid, allocated with each slot's path read from the tree.
    let nights = RoomNight::collection(&db).slots();
    let first = nights
        .allocate(vec![
            night("r101", &p101, "d1"),
            night("r101", &p101, "d2"),
            night("r102", &p102, "d1"),
            night("r201", &p201, "d1"),
        ])
        .await
        .unwrap();
    assert_eq!((first.inserted, first.existing), (4, 0));
    let mut batches = 0;
    let again = nights
        .allocate_with_progress(
            vec![night("r101", &p101, "d1"), night("a1", &pa1, "d1")],
            |_| batches += 1,
        )
        .await
        .unwrap();
    assert_eq!((again.inserted, again.existing, batches), (1, 1, 1));
    let mut allocator = {
        let p = p201.clone();
        nights.allocate_every(std::time::Duration::from_millis(20), move || {
            vec![night("r201", &p, "d2")]
        })
    };
    let run = allocator.next().await.unwrap().unwrap();
    assert_eq!((run.inserted, run.existing), (1, 0));
    assert!(allocator.stop().await.unread.iter().all(Result::is_ok));
    // Slots inserted through the tree: their path is computed there.
    let holders = tree.holders::<RoomNight>();
    holders.insert(&night("r102", &[], "d2")).await.unwrap();
    holders
        .insert_many(&[night("a1", &[], "d2"), night("r101", &[], "d3")])
        .await
        .unwrap();
    assert_paths(&db, &PLACES, &[NIGHTS, MEETING_DAYS]).await;

    // Bookings.
    nights.book("r101", "d1", "ann").await.unwrap();
    let e = nights.book("r101", "d1", "bob").await.unwrap_err();
    assert!(matches!(e, Error::AlreadyBooked { .. }), "{e:?}");
    nights
        .book_all(&[("r102", "d1"), ("r102", "d2")], "bob")
        .await
        .unwrap();
    let e = nights
        .book_all(&[("r201", "d1"), ("r201", "d9")], "cy")
        .await
        .unwrap_err();
    assert!(e.is_not_allocated(), "{e:?}");
    nights.book("r201", "d2", "dee").await.unwrap();
    nights.cancel("r201", "d2", "dee").await.unwrap();
    nights.book("a1", "d1", "eve").await.unwrap();
    nights.release("r102", "d2").await.unwrap();

    // A free night anywhere on floor 1: one query on the path and the holder.
    let free_on_floor1: Vec<RoomNight> = RoomNight::collection(&db)
        .raw()
        .find(doc! { "roomPath": "floor1", "bookedBy": Bson::Null })
        .sort(doc! { "room": 1, "date": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let free: Vec<(&str, &str)> = free_on_floor1
        .iter()
        .map(|n| (n.room.as_str(), n.date.as_str()))
        .collect();
    assert_eq!(free, [("r101", "d2"), ("r101", "d3"), ("r102", "d2")]);

    // Bitmaps in the same tree.
    let days = MeetingDay::collection(&db).slots();
    let pboard = path("boardroom").await;
    days.allocate(vec![meeting_day("boardroom", &pboard, "d1")])
        .await
        .unwrap();
    days.book_range("boardroom", "d1", 18..22).await.unwrap();
    days.book_range("boardroom", "d1", 30..32).await.unwrap();
    days.free_range("boardroom", "d1", 20..22).await.unwrap();
    let e = days
        .book_range("boardroom", "d1", 19..21)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::AlreadyBooked { .. }), "{e:?}");

    // The tree's writes: a rename renames the slots' resource (their node), bookings kept.
    tree.rename("r101", "r101a").await.unwrap();
    tree.move_under("r201", "floor1").await.unwrap();
    tree.move_to_root("floor2").await.unwrap();
    holders
        .place(nights.get("r101a", "d3").await.unwrap().unwrap().id, "r201")
        .await
        .unwrap();
    tree.rename("boardroom", "board").await.unwrap();
    assert_paths(&db, &PLACES, &[NIGHTS, MEETING_DAYS]).await;
    assert_eq!(
        nights
            .get("r101a", "d1")
            .await
            .unwrap()
            .unwrap()
            .booked_by
            .as_deref(),
        Some("ann")
    );
    let e = nights.book("r101a", "d1", "bob").await.unwrap_err();
    assert!(matches!(e, Error::AlreadyBooked { .. }), "{e:?}");
    nights.book("r201", "d3", "fay").await.unwrap(); // placed there by the tree
    assert_eq!(
        days.free_ranges("board", "d1").await.unwrap(),
        [0..18, 20..30, 32..48]
    );
    let day = one(&db, "meeting_days", "room", "board").await;
    assert_eq!(int(&day, "halfHours"), (0b11 << 18) | (0b11 << 30));

    // Deletions: a leaf, a floor whose rooms move up to the hotel, the annex with its slots.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    tree.delete("floor1", Deletion::Reparent).await.unwrap();
    let deleted = tree.delete("annex", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (2, 2));
    assert_paths(&db, &PLACES, &[NIGHTS, MEETING_DAYS]).await;
    assert_eq!(
        bookings(&db).await,
        [
            booking("r101a", "d1", Some("ann")),
            booking("r101a", "d2", None),
            booking("r102", "d1", Some("bob")),
            booking("r102", "d2", None),
            booking("r201", "d1", None),
            booking("r201", "d2", None),
            booking("r201", "d3", Some("fay")),
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(
        array(&one(&db, "room_nights", "room", "r201").await, "roomPath"),
        strings(&["hotel", "r201"])
    );

    assert_clean!(tree.check());
    assert_clean!(nights.check());
    assert_clean!(days.check());
    // But the index the sync created for the holders' node: see the test below.
    assert_doctor_clean_but(
        &db,
        "pt_prealloc",
        &[(pattern_runtime::doctor::Check::PrefixIndex, "room_1")],
    )
    .await;
}

#[tokio::test]
async fn tree_x_preallocation_the_doctor_on_freshly_synced_slots_in_a_tree() {
    let db = synced("pt_prealloc_doctor", "pt_prealloc").await;
    let tree = Place::collection(&db).tree();
    tree.insert(&place("hotel", None)).await.unwrap();
    tree.insert(&place("r1", Some("hotel"))).await.unwrap();
    tree.holders::<RoomNight>()
        .insert(&night("r1", &[], "d1"))
        .await
        .unwrap();
    assert_clean!(tree.check());
    assert_clean!(RoomNight::collection(&db).slots().check());
    // The sync created both `room_1` (the holders' node, `#[in_tree]`) and `room_1_date_1`
    // (the grid, `#[preallocated]`); the doctor then reports the first as redundant.
    assert_doctor_clean(&db, "pt_prealloc").await;
}

#[tokio::test]
async fn tree_x_preallocation_allocate_computes_the_path() {
    let db = synced("pt_prealloc_allocate", "pt_prealloc").await;
    let tree = Place::collection(&db).tree();
    tree.insert(&place("hotel", None)).await.unwrap();
    tree.insert(&place("r1", Some("hotel"))).await.unwrap();
    // Given the path [], stored with the node's path, as `Holders::insert` computes it.
    let r = RoomNight::collection(&db)
        .slots()
        .allocate(vec![night("r1", &[], "d1"), night("r1", &[], "d2")])
        .await
        .unwrap();
    assert_eq!(r.inserted, 2);
    assert_clean!(tree.check());
    // A slot in a node that does not exist: `NotFound` of the node, nothing written.
    let before = RoomNight::collection(&db)
        .raw()
        .count_documents(doc! {})
        .await
        .unwrap();
    let r = RoomNight::collection(&db)
        .slots()
        .allocate(vec![night("r9", &[], "d1")])
        .await;
    assert!(r.as_ref().is_err_and(|e| e.is_no_node()), "{r:?}");
    assert_eq!(
        RoomNight::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        before
    );
    assert_paths(&db, &PLACES, &[NIGHTS]).await;
}

// ======================================================================================
// tree × two-way relation: departments form a tree (named by code) and each has a head
// (`head`, the single side); persons sit in the departments (holders) and list the
// departments they head (`heads`, the array side). The node field cannot be the relation's
// reference (`Option<Ref<Dept>>` is refused as a node): see the report.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_relation")]
#[tree(parent = parent, ancestors = ancestors, key = code)]
struct Dept {
    #[serde(rename = "_id")]
    id: ObjectId,
    code: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[relation(inverse = heads)]
    head: Option<Ref<Person>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_relation")]
#[serde(rename_all = "camelCase")]
#[in_tree(Dept, node = dept, path = dept_path)]
struct Person {
    #[serde(rename = "_id")]
    id: String,
    dept: Option<String>,
    dept_path: Vec<String>,
    #[relation(inverse = head)]
    #[bounded(10)]
    heads: Vec<Ref<Dept>>,
}

const DEPTS: TreeAt = TreeAt {
    collection: "depts",
    key: "code",
    parent: "parent",
    ancestors: "ancestors",
};
const PERSONS: HoldersAt = HoldersAt {
    collection: "persons",
    node: "dept",
    path: "deptPath",
};

fn dept(code: &str, parent: Option<&str>) -> Dept {
    Dept {
        id: ObjectId::new(),
        code: code.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        head: None,
    }
}

fn person(id: &str, dept: Option<&str>) -> Person {
    Person {
        id: id.into(),
        dept: dept.map(str::to_owned),
        dept_path: vec![],
        heads: vec![],
    }
}

/// The two sides against each other, from the raw documents: each department's head lists
/// it, each person's listed departments name them as head, no one lists a department twice.
/// Returns each department's head, by code.
async fn assert_heads(db: &TestDb) -> std::collections::BTreeMap<String, Option<String>> {
    assert_paths(db, &DEPTS, &[PERSONS]).await;
    let depts = raw(db, "depts").await;
    let persons = raw(db, "persons").await;
    let mut heads = std::collections::BTreeMap::new();
    for d in &depts {
        let head = d.get_str("head").ok().map(str::to_owned);
        if let Some(h) = &head {
            let p = persons
                .iter()
                .find(|p| p.get_str("_id").unwrap() == h)
                .unwrap_or_else(|| panic!("the head {h} of {d} is missing"));
            let listed = array(p, "heads");
            assert_eq!(
                listed
                    .iter()
                    .filter(|x| *x == d.get("_id").unwrap())
                    .count(),
                1,
                "{h} lists {}",
                d.get_str("code").unwrap()
            );
        }
        heads.insert(d.get_str("code").unwrap().to_owned(), head);
    }
    for p in &persons {
        for listed in array(p, "heads") {
            let d = depts
                .iter()
                .find(|d| d.get("_id") == Some(&listed))
                .unwrap_or_else(|| {
                    panic!("{} lists a missing department", p.get_str("_id").unwrap())
                });
            assert_eq!(
                d.get("head"),
                p.get("_id"),
                "the head of a department {p} lists"
            );
        }
    }
    heads
}

fn headed(pairs: &[(&str, Option<&str>)]) -> std::collections::BTreeMap<String, Option<String>> {
    pairs
        .iter()
        .map(|(d, h)| ((*d).to_owned(), h.map(str::to_owned)))
        .collect()
}

#[tokio::test]
async fn tree_x_relation_heads_of_departments_through_every_tree_write() {
    let db = synced("pt_relation", "pt_relation").await;
    let tree = Dept::collection(&db).tree();
    let persons = tree.holders::<Person>();
    tree.insert(&dept("company", None)).await.unwrap();
    tree.insert_many(&[
        dept("eng", Some("company")),
        dept("backend", Some("eng")),
        dept("frontend", Some("eng")),
        dept("sales", Some("company")),
        dept("ops", None),
        dept("oncall", Some("ops")),
        dept("empty", None),
    ])
    .await
    .unwrap();
    persons
        .insert(&person("ann", Some("backend")))
        .await
        .unwrap();
    persons
        .insert_many(&[
            person("bob", Some("eng")),
            person("cy", Some("frontend")),
            person("dee", Some("sales")),
            person("eve", Some("oncall")),
        ])
        .await
        .unwrap();
    let id = |code: &'static str| {
        let tree = tree.clone();
        async move { tree.get(code).await.unwrap().unwrap().id }
    };
    let (eng, backend, frontend, sales) = (
        id("eng").await,
        id("backend").await,
        id("frontend").await,
        id("sales").await,
    );

    // The relation's write: assign, moving a department from one head's list to another's.
    let head = Dept::collection(&db).relation(Dept::FIELDS.head);
    head.assign(&backend, &"ann".to_owned()).await.unwrap();
    head.assign(&frontend, &"ann".to_owned()).await.unwrap();
    head.assign(&eng, &"bob".to_owned()).await.unwrap();
    head.assign(&sales, &"dee".to_owned()).await.unwrap();
    let moved = head.assign(&frontend, &"cy".to_owned()).await.unwrap();
    assert_eq!(moved.previous, Some(Bson::from("ann")));
    let e = head.assign(&eng, &"nobody".to_owned()).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    let e = head
        .assign(&ObjectId::new(), &"ann".to_owned())
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    let expected = headed(&[
        ("backend", Some("ann")),
        ("company", None),
        ("empty", None),
        ("eng", Some("bob")),
        ("frontend", Some("cy")),
        ("oncall", None),
        ("ops", None),
        ("sales", Some("dee")),
    ]);
    assert_eq!(assert_heads(&db).await, expected);

    // The tree's writes: keys, parents and paths change, the `_id`s the relation holds never.
    tree.rename("backend", "platform").await.unwrap();
    tree.move_under("frontend", "company").await.unwrap();
    tree.move_to_root("eng").await.unwrap();
    persons.place("ann", "frontend").await.unwrap();
    let heads = assert_heads(&db).await;
    assert_eq!(heads["platform"].as_deref(), Some("ann"));
    assert_eq!(heads["frontend"].as_deref(), Some("cy"));
    head.assign(&backend, &"bob".to_owned()).await.unwrap();
    assert_eq!(assert_heads(&db).await["platform"].as_deref(), Some("bob"));
    let bob = [Person::collection(&db)
        .raw()
        .find_one(doc! { "_id": "bob" })
        .await
        .unwrap()
        .unwrap()];
    let loaded = Person::collection(&db)
        .relation(Person::FIELDS.heads)
        .load(&bob)
        .await
        .unwrap();
    let mut codes: Vec<String> = loaded.targets().values().map(|d| d.code.clone()).collect();
    codes.sort();
    assert_eq!(codes, ["eng", "platform"]);

    // Deletions where no head is involved.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    let e = tree.delete("eng", Deletion::LeafOnly).await.unwrap_err(); // platform is in it
    assert!(matches!(e, Error::NodeInUse { .. }), "{e:?}");
    tree.delete("oncall", Deletion::Reparent).await.unwrap(); // eve moves up to ops
    assert_eq!(
        one(&db, "persons", "_id", "eve")
            .await
            .get_str("dept")
            .unwrap(),
        "ops"
    );
    let deleted = tree.delete("ops", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    assert_heads(&db).await;

    assert_clean!(tree.check());
    assert_clean!(head.check());
    assert_doctor_clean(&db, "pt_relation").await;
}

#[tokio::test]
async fn tree_x_relation_deletions_leave_the_other_side() {
    let db = synced("pt_relation_delete", "pt_relation").await;
    let tree = Dept::collection(&db).tree();
    tree.insert(&dept("company", None)).await.unwrap();
    tree.insert(&dept("eng", Some("company"))).await.unwrap();
    tree.insert(&dept("sales", Some("company"))).await.unwrap();
    let persons = tree.holders::<Person>();
    persons
        .insert(&person("ann", Some("company")))
        .await
        .unwrap();
    persons.insert(&person("bob", Some("eng"))).await.unwrap();
    let head = Dept::collection(&db).relation(Dept::FIELDS.head);
    let (eng, sales) = (
        tree.get("eng").await.unwrap().unwrap().id,
        tree.get("sales").await.unwrap().unwrap().id,
    );
    head.assign(&eng, &"ann".to_owned()).await.unwrap();
    head.assign(&sales, &"bob".to_owned()).await.unwrap();
    // eng goes with bob, who heads sales: sales names a deleted head, and ann lists a deleted
    // department.
    tree.delete("eng", Deletion::Cascade).await.unwrap();
    assert_clean!(tree.check());
    assert_clean!(head.check());
    assert_heads(&db).await;
    assert_doctor_clean(&db, "pt_relation").await;
}

// ======================================================================================
// tree × document versioning: a versioned model can be neither a tree nor a holder (refused
// at compile time, see the report), nor hold a `propagate` copy of a node. What remains, and
// is combined here: wiki spaces form a tree (named by slug) and count and sum the versioned
// pages filed in them (`#[computed]` by the space's `_id`, which a rename leaves alone); a
// page keeps a `snapshot` of its space as filed; attachments sit in the spaces (holders).
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_versioned")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
#[extended_ref(SpaceRef(slug, title), snapshot, derive(PartialEq))]
struct Space {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    title: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[computed(count = Page, by = space_id)]
    page_count: i64,
    #[computed(sum = Page.words, by = space_id)]
    words: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_versioned")]
#[serde(rename_all = "camelCase")]
#[versioned(history = "page_revisions")]
struct Page {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    space_id: ObjectId,
    words: i64,
    #[extended_ref(snapshot)]
    filed_under: SpaceRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_versioned")]
#[serde(rename_all = "camelCase")]
#[in_tree(Space, node = space, path = space_path)]
struct Attachment {
    #[serde(rename = "_id")]
    id: i64,
    space: Option<String>,
    space_path: Vec<String>,
}

const SPACES: TreeAt = TreeAt {
    collection: "spaces",
    key: "slug",
    parent: "parent",
    ancestors: "ancestors",
};
const ATTACHMENTS: HoldersAt = HoldersAt {
    collection: "attachments",
    node: "space",
    path: "spacePath",
};

fn space(slug: &str, parent: Option<&str>) -> Space {
    Space {
        id: ObjectId::new(),
        slug: slug.into(),
        title: slug.to_uppercase(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        page_count: 0,
        words: 0,
    }
}

fn attachment(id: i64, space: Option<&str>) -> Attachment {
    Attachment {
        id,
        space: space.map(str::to_owned),
        space_path: vec![],
    }
}

/// Each space's count and words against the pages filed in it, from the raw documents; and
/// the paths.
async fn assert_wiki(db: &TestDb) {
    assert_paths(db, &SPACES, &[ATTACHMENTS]).await;
    let pages = raw(db, "pages").await;
    for sp in raw(db, "spaces").await {
        let id = sp.get("_id").unwrap();
        let mine: Vec<&Document> = pages
            .iter()
            .filter(|p| p.get("spaceId") == Some(id))
            .collect();
        assert_eq!(int(&sp, "pageCount"), mine.len() as i64, "pages of {sp}");
        assert_eq!(
            int(&sp, "words"),
            mine.iter().map(|p| int(p, "words")).sum::<i64>(),
            "words of {sp}"
        );
    }
}

#[tokio::test]
async fn tree_x_versioning_versioned_pages_counted_per_space_through_every_write() {
    let db = synced("pt_versioned", "pt_versioned").await;
    let tree = Space::collection(&db).tree();
    let attachments = tree.holders::<Attachment>();
    tree.insert(&space("eng", None)).await.unwrap();
    tree.insert_many(&[
        space("backend", Some("eng")),
        space("frontend", Some("eng")),
        space("ops", None),
        space("runbooks", Some("ops")),
        space("empty", None),
    ])
    .await
    .unwrap();
    attachments
        .insert(&attachment(1, Some("backend")))
        .await
        .unwrap();
    attachments
        .insert_many(&[attachment(2, Some("runbooks")), attachment(3, None)])
        .await
        .unwrap();
    attachments.place(3, "frontend").await.unwrap();
    let get = |slug: &'static str| {
        let tree = tree.clone();
        async move { tree.get(slug).await.unwrap().unwrap() }
    };
    let (backend, frontend, runbooks) = (
        get("backend").await,
        get("frontend").await,
        get("runbooks").await,
    );

    // The versioned model's writes, each moving the counts in its transaction.
    let pages = Page::collection(&db);
    let page = |id: i64, sp: &Space, words: i64| Page {
        id,
        version: 0,
        space_id: sp.id,
        words,
        filed_under: SpaceRef::from(sp),
    };
    let mut design = page(1, &backend, 100);
    pages.insert(&mut design).await.unwrap();
    let mut oncall = page(2, &runbooks, 40);
    pages.insert(&mut oncall).await.unwrap();
    let mut ui = page(3, &frontend, 10);
    pages.insert(&mut ui).await.unwrap();
    design.words = 120;
    assert_eq!(pages.replace(&mut design).await.unwrap().version, Some(2));
    let stale = {
        let mut s = design.clone();
        s.version = 1;
        s
    };
    let e = pages.replace(&mut stale.clone()).await.unwrap_err();
    assert!(e.is_conflict(), "{e:?}");
    pages.modify(1, 3, |p| p.words += 5).await.unwrap(); // version 3
    let refused: Result<Page, Error> = pages
        .try_modify(2, 3, |_| {
            Err(Error::InvalidValue {
                field: "words".into(),
                reason: "no".into(),
            })
        })
        .await;
    assert!(refused.is_err());
    // Moved to another space by an update: the counts move with it.
    pages
        .update(
            At(3, 1),
            doc! { "$set": { "spaceId": backend.id }, "$inc": { "words": 1 } },
        )
        .await
        .unwrap();
    assert_eq!(pages.revert(1, 2).await.unwrap(), 4); // 120 words again
    assert_wiki(&db).await;
    let b = one(&db, "spaces", "slug", "backend").await;
    assert_eq!((int(&b, "pageCount"), int(&b, "words")), (2, 120 + 11));
    assert_eq!(
        pages
            .history(1)
            .await
            .unwrap()
            .iter()
            .map(|r| r.version)
            .collect::<Vec<_>>(),
        [3, 2, 1]
    );

    // The tree's writes: counts by `_id` never move; the snapshot keeps the space as filed.
    tree.rename("backend", "platform").await.unwrap();
    tree.move_under("runbooks", "eng").await.unwrap();
    tree.move_to_root("frontend").await.unwrap();
    assert_wiki(&db).await;
    let filed: Page = pages
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        filed.filed_under.slug, "backend",
        "a snapshot is never rewritten"
    );
    let mut later = page(4, &get("platform").await, 7);
    pages.insert(&mut later).await.unwrap();
    assert_eq!(later.filed_under.slug, "platform");
    pages.delete(2).await.unwrap();
    assert_wiki(&db).await;

    // Deletions: the pages are not placed in the tree, so a space they are filed in is a leaf
    // to the tree; delete only spaces with no pages.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    tree.delete("eng", Deletion::Reparent).await.unwrap(); // platform and runbooks: roots
    let deleted = tree.delete("runbooks", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    assert_wiki(&db).await;
    assert_eq!(
        array(&one(&db, "attachments", "_id", 1).await, "spacePath"),
        strings(&["platform"])
    );

    assert_clean!(tree.check());
    assert_clean!(Space::collection(&db).computed().check());
    assert_doctor_clean(&db, "pt_versioned").await;
}

// ======================================================================================
// tree × polymorphic: a polymorphic enum can be neither a tree nor a holder (refused at
// compile time, see the report). What remains, and is combined here: listings of several
// shapes (an enum) are counted and summed per category (`#[computed]` by a common field
// holding the category's `_id`), and each listing's place in the tree is kept in a struct
// model of its own (`Placement`, the holder, `_id` = the listing's), as the refusal advises.
// ======================================================================================

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_poly", collection = "shop_categories")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
struct ShopCategory {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[computed(count = Listing, by = category_id)]
    listing_count: i64,
    #[computed(sum = Listing.price, by = category_id)]
    value: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_poly", derive(Clone, PartialEq))]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
enum Listing {
    Book {
        #[serde(rename = "_id")]
        id: i64,
        category_id: ObjectId,
        price: i64,
        isbn: String,
    },
    Film {
        #[serde(rename = "_id")]
        id: i64,
        category_id: ObjectId,
        price: i64,
        minutes: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "pt_poly")]
#[serde(rename_all = "camelCase")]
#[in_tree(ShopCategory, node = category, path = category_path)]
struct Placement {
    #[serde(rename = "_id")]
    id: i64,
    category: String,
    category_path: Vec<String>,
}

const SHOP: TreeAt = TreeAt {
    collection: "shop_categories",
    key: "slug",
    parent: "parent",
    ancestors: "ancestors",
};
const PLACEMENTS: HoldersAt = HoldersAt {
    collection: "placements",
    node: "category",
    path: "categoryPath",
};

fn shop_category(slug: &str, parent: Option<&str>) -> ShopCategory {
    ShopCategory {
        id: ObjectId::new(),
        slug: slug.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        listing_count: 0,
        value: 0,
    }
}

fn placement(id: i64, category: &str) -> Placement {
    Placement {
        id,
        category: category.into(),
        category_path: vec![],
    }
}

/// Each category's count and value against the listings of every shape, from the raw
/// documents; every listing's placement names the category the listing is counted in; the
/// paths.
async fn assert_shop(db: &TestDb) {
    assert_paths(db, &SHOP, &[PLACEMENTS]).await;
    let listings = raw(db, "listings").await;
    let categories = raw(db, "shop_categories").await;
    for c in &categories {
        let id = c.get("_id").unwrap();
        let mine: Vec<&Document> = listings
            .iter()
            .filter(|l| l.get("categoryId") == Some(id))
            .collect();
        assert_eq!(int(c, "listingCount"), mine.len() as i64, "listings of {c}");
        assert_eq!(
            int(c, "value"),
            mine.iter().map(|l| int(l, "price")).sum::<i64>(),
            "value of {c}"
        );
    }
    let placements = raw(db, "placements").await;
    for l in &listings {
        let p = placements
            .iter()
            .find(|p| p.get("_id") == l.get("_id"))
            .unwrap_or_else(|| panic!("{l} has no placement"));
        let c = categories
            .iter()
            .find(|c| c.get("_id") == l.get("categoryId"))
            .unwrap_or_else(|| panic!("{l} is counted in a missing category"));
        assert_eq!(p.get("category"), c.get("slug"), "the placement of {l}");
    }
}

#[tokio::test]
async fn tree_x_polymorphic_listings_of_every_shape_counted_per_category() {
    let db = synced("pt_poly", "pt_poly").await;
    let tree = ShopCategory::collection(&db).tree();
    let placements = tree.holders::<Placement>();
    tree.insert(&shop_category("media", None)).await.unwrap();
    tree.insert_many(&[
        shop_category("books", Some("media")),
        shop_category("scifi", Some("books")),
        shop_category("films", Some("media")),
        shop_category("sale", None),
        shop_category("empty", None),
    ])
    .await
    .unwrap();
    let id = |slug: &'static str| {
        let tree = tree.clone();
        async move { tree.get(slug).await.unwrap().unwrap().id }
    };
    let (books, scifi, films, sale) = (
        id("books").await,
        id("scifi").await,
        id("films").await,
        id("sale").await,
    );

    // The polymorphic writes, per variant, and the placements beside them.
    let listings = Listing::collection(&db);
    let book_handle = listings.variant::<ListingBook>();
    let film_handle = listings.variant::<ListingFilm>();
    let book = |id: i64, category_id: ObjectId, price: i64| ListingBook {
        id,
        category_id,
        price,
        isbn: format!("isbn-{id}"),
    };
    let film = |id: i64, category_id: ObjectId, price: i64| ListingFilm {
        id,
        category_id,
        price,
        minutes: 90 + id,
    };
    book_handle.insert(&book(1, scifi, 10)).await.unwrap();
    book_handle
        .insert_many(&[book(2, scifi, 12), book(3, books, 8)])
        .await
        .unwrap();
    film_handle
        .insert_many(&[film(4, films, 20), film(5, films, 25)])
        .await
        .unwrap();
    placements.insert(&placement(1, "scifi")).await.unwrap();
    placements
        .insert_many(&[
            placement(2, "scifi"),
            placement(3, "books"),
            placement(4, "films"),
            placement(5, "films"),
        ])
        .await
        .unwrap();
    // A price change, and a film moved to the sale (its count moves; its placement too).
    book_handle
        .update(1, doc! { "$inc": { "price": 5 } })
        .await
        .unwrap();
    film_handle
        .update_many(doc! { "_id": 5 }, doc! { "$set": { "categoryId": sale } })
        .await
        .unwrap();
    placements.place(5, "sale").await.unwrap();
    // Everything under `media`: the placements' path, then the listings, of any shape.
    let under: Vec<Bson> = placements
        .under("media")
        .await
        .unwrap()
        .iter()
        .map(|p| Bson::Int64(p.id))
        .collect();
    let found = listings
        .find_common(doc! { "_id": { "$in": under } })
        .await
        .unwrap();
    assert_eq!(found.len(), 4);
    assert_shop(&db).await;
    let s = one(&db, "shop_categories", "slug", "scifi").await;
    assert_eq!((int(&s, "listingCount"), int(&s, "value")), (2, 27));

    // The tree's writes: the counts hold `_id`s, which never change.
    tree.rename("scifi", "science-fiction").await.unwrap();
    tree.move_under("films", "books").await.unwrap();
    tree.move_to_root("books").await.unwrap();
    assert_shop(&db).await;
    assert_eq!(
        array(&one(&db, "placements", "_id", 4).await, "categoryPath"),
        strings(&["books", "films"])
    );

    // Deletions. The listings are re-filed (or deleted) first, their placements then follow
    // the tree's deletion.
    tree.delete("empty", Deletion::LeafOnly).await.unwrap();
    tree.delete("media", Deletion::LeafOnly).await.unwrap(); // emptied by the moves
    film_handle
        .update_many(
            doc! { "categoryId": films },
            doc! { "$set": { "categoryId": books } },
        )
        .await
        .unwrap();
    tree.delete("films", Deletion::Reparent).await.unwrap(); // placement 4 moves up to books
    assert_eq!(
        one(&db, "placements", "_id", 4)
            .await
            .get_str("category")
            .unwrap(),
        "books"
    );
    assert_eq!(
        film_handle
            .delete_many(doc! { "categoryId": sale })
            .await
            .unwrap(),
        1
    );
    let deleted = tree.delete("sale", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 1));
    assert_shop(&db).await;
    assert_eq!(count(&db, "listings", doc! {}).await, 4);

    assert_clean!(tree.check());
    assert_clean!(ShopCategory::collection(&db).computed().check());
    assert_doctor_clean(&db, "pt_poly").await;
}

// tree × holders: keys that read like operators and paths, moved and renamed, stay literal.

// ---------------------------------------------------------------------------------------------
// 9: a tree whose keys read like operators and paths
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_sections")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
pub struct KeySection {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_articles")]
#[in_tree(KeySection, node = section, path = section_path)]
pub struct KeyArticle {
    #[serde(rename = "_id")]
    pub id: i64,
    pub title: String,
    pub section: String,
    pub section_path: Vec<String>,
}

fn key_section(name: &str, parent: Option<&str>) -> KeySection {
    KeySection {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

async fn article_path(db: &TestDb, id: i64) -> Vec<String> {
    KeyArticle::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
        .section_path
}

#[tokio::test]
async fn tree_keys_that_read_like_operators_are_literal() {
    let db = test_db("nwi_tree_dollar_keys").await;
    pattern_runtime::sync(&db)
        .models(&[KeySection::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[KeyArticle::SCHEMA])
        .await
        .unwrap();
    let tree = KeySection::collection(&db).tree();
    sent(&db);

    // A root reads no parent: 3 (the tree's lock document, the insert, the commit).
    tree.insert(&key_section("$root", None)).await.unwrap();
    let cmds = sent(&db);
    assert_eq!(cmds.len(), 3, "Tree::insert of a root: {cmds:?}");
    // The page: `insert` 4 (a node under a parent).
    let child = tree
        .insert(&key_section("$where", Some("$root")))
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(cmds.len(), 4, "Tree::insert: {cmds:?}");
    assert_eq!(count_named(&cmds, "commitTransaction"), 1, "{cmds:?}");
    assert_eq!(child.ancestors, ["$root"]);
    let leaf = tree
        .insert(&key_section("a.b", Some("$where")))
        .await
        .unwrap();
    assert_eq!(leaf.ancestors, ["$root", "$where"]);
    // A parent that does not exist.
    let e = tree
        .insert(&key_section("orphan", Some("$exists")))
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");

    let articles = tree.holders::<KeyArticle>();
    sent(&db);
    // The page: `Holders::insert` 3.
    articles
        .insert(&KeyArticle {
            id: 1,
            title: "$title".into(),
            section: "a.b".into(),
            section_path: vec![],
        })
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(cmds.len(), 3, "Holders::insert: {cmds:?}");
    assert_eq!(article_path(&db, 1).await, ["$root", "$where", "a.b"]);

    // The page: `descendants` 1 and `Holders::under` 1.
    sent(&db);
    let below = tree.descendants("$root").await.unwrap();
    assert_eq!(below.len(), 2);
    let cmds = sent(&db);
    assert_eq!(cmds.len(), 1, "descendants 1: {cmds:?}");
    let under = articles.under("$where").await.unwrap();
    assert_eq!(under.len(), 1);
    let cmds = sent(&db);
    assert_eq!(cmds.len(), 1, "Holders::under 1: {cmds:?}");

    // Moves and renames go through pipeline updates: `$` strings must stay strings.
    tree.move_to_root("$where").await.unwrap();
    assert_eq!(article_path(&db, 1).await, ["$where", "a.b"]);
    tree.rename("$where", "$$ROOT").await.unwrap();
    assert_eq!(article_path(&db, 1).await, ["$$ROOT", "a.b"]);
    let leaf = tree.get("a.b").await.unwrap().unwrap();
    assert_eq!(leaf.ancestors, ["$$ROOT"]);
    assert_eq!(leaf.parent.as_deref(), Some("$$ROOT"));
    tree.move_under("$$ROOT", "$root").await.unwrap();
    assert_eq!(article_path(&db, 1).await, ["$root", "$$ROOT", "a.b"]);

    // A cycle, and another handle writing the tree's fields: refused, nothing written.
    let sections_before = dump(&db, "nwi_sections").await;
    let articles_before = dump(&db, "nwi_articles").await;
    let e = tree.move_under("$root", "a.b").await.unwrap_err();
    assert!(matches!(e, Error::Cycle { .. }), "{e:?}");
    let e = KeyArticle::collection(&db)
        .update(1, doc! { "$set": { "sectionPath": ["$anything"] } })
        .await
        .unwrap_err();
    assert!(refused_key(&e), "{e:?}");
    let e = KeyArticle::collection(&db)
        .update(1, doc! { "$set": { "section": "$root" } })
        .await
        .unwrap_err();
    assert!(refused_key(&e), "{e:?}");
    assert_eq!(dump(&db, "nwi_sections").await, sections_before);
    assert_eq!(dump(&db, "nwi_articles").await, articles_before);

    assert!(tree.check().await.unwrap().is_clean());
}

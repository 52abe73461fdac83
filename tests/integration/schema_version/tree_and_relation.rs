//! Schema versioning with a tree (older nodes and holders read and moved as the current shape) and
//! a relation (targets and children upgraded when read).

use super::*;
use bson::doc;
use pattern_runtime::{schema_version::SchemaVersion, sync, Model, SyncOptions};
use pattern_testkit::test_db_unvalidated;
use serde::{Deserialize, Serialize};

// ------------------------------------------------------------------------------------------
// A schema-versioned tree node.

#[derive(Debug, Deserialize)]
struct NsvCatV1 {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_cats")]
#[schema_version(older(NsvCatV1 = 1))]
#[tree(parent = parent, ancestors = ancestors)]
struct NsvCat {
    #[serde(rename = "_id")]
    id: String,
    sv: SchemaVersion<2>,
    parent: Option<String>,
    ancestors: Vec<String>,
    label: String,
}

impl From<NsvCatV1> for NsvCat {
    fn from(v1: NsvCatV1) -> Self {
        NsvCat {
            id: v1.id,
            sv: SchemaVersion,
            parent: v1.parent,
            ancestors: v1.ancestors,
            label: v1.title,
        }
    }
}

fn cat(id: &str, parent: Option<&str>) -> NsvCat {
    NsvCat {
        id: id.into(),
        sv: SchemaVersion,
        parent: parent.map(Into::into),
        ancestors: vec![],
        label: id.to_uppercase(),
    }
}

#[tokio::test]
async fn tree_of_older_nodes() {
    let t = test_db_unvalidated("nsv_tree").await;
    let db = t.db();
    sync(db)
        .models(&[NsvCat::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let tree = NsvCat::collection(db).tree();
    tree.insert(&cat("root", None)).await.unwrap();
    raw(db, "nsv_cats")
        .insert_one(doc! { "_id": "a", "parent": "root", "ancestors": ["root"], "title": "Old A" })
        .await
        .unwrap();
    assert_eq!(tree.get("a").await.unwrap().unwrap().label, "Old A");
    let b = tree.insert(&cat("b", Some("a"))).await.unwrap();
    assert_eq!(b.ancestors, ["root", "a"]);
    assert_eq!(tree.children("root").await.unwrap()[0].label, "Old A");
    assert_eq!(tree.ancestors("b").await.unwrap().len(), 2);
    tree.move_to_root("a").await.unwrap();
    assert_eq!(tree.get("b").await.unwrap().unwrap().ancestors, ["a"]);
    assert_eq!(tree.get("a").await.unwrap().unwrap().label, "Old A");
    assert!(tree.check().await.unwrap().findings.is_empty());
    // The move's update upgraded `a` first (an update never adds current fields to an older
    // shape): nothing is left to converge.
    assert_eq!(NsvCat::collection(db).converge().await.unwrap().upgraded, 0);
    assert!(tree.check().await.unwrap().findings.is_empty());
    assert_eq!(tree.descendants("a").await.unwrap().len(), 1);
}

// ------------------------------------------------------------------------------------------
// Other patterns' reads that return a schema-versioned model.

#[derive(Debug, Deserialize)]
struct NsvPartV1 {
    #[serde(rename = "_id")]
    id: i64,
    partno: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_parts")]
#[schema_version(older(NsvPartV1 = 1))]
struct NsvPart {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    sku: String,
}

impl From<NsvPartV1> for NsvPart {
    fn from(v1: NsvPartV1) -> Self {
        NsvPart {
            id: v1.id,
            sv: SchemaVersion,
            sku: v1.partno,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_machines")]
struct NsvMachine {
    #[serde(rename = "_id")]
    id: i64,
    #[relation]
    #[bounded(10)]
    parts: Vec<pattern_runtime::Ref<NsvPart>>,
}

#[derive(Debug, Deserialize)]
struct NsvNoteV1 {
    #[serde(rename = "_id")]
    id: i64,
    machine: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nsv_notes")]
#[schema_version(older(NsvNoteV1 = 1))]
struct NsvNote {
    #[serde(rename = "_id")]
    id: i64,
    sv: SchemaVersion<2>,
    #[relation(parent)]
    machine: pattern_runtime::Ref<NsvMachine>,
    body: String,
}

impl From<NsvNoteV1> for NsvNote {
    fn from(v1: NsvNoteV1) -> Self {
        NsvNote {
            id: v1.id,
            sv: SchemaVersion,
            machine: pattern_runtime::Ref::new(v1.machine),
            body: v1.text,
        }
    }
}

#[tokio::test]
async fn relation_reads_upgrade_targets_and_children() {
    let t = test_db_unvalidated("nsv_relation").await;
    let db = t.db();
    sync(db)
        .models(&[NsvMachine::SCHEMA, NsvPart::SCHEMA, NsvNote::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    raw(db, "nsv_parts")
        .insert_one(doc! { "_id": 1_i64, "partno": "P-1" })
        .await
        .unwrap();
    raw(db, "nsv_machines")
        .insert_one(doc! { "_id": 7_i64, "parts": [1_i64] })
        .await
        .unwrap();
    raw(db, "nsv_notes")
        .insert_one(doc! { "_id": 1_i64, "machine": 7_i64, "text": "oiled" })
        .await
        .unwrap();
    let machines = NsvMachine::collection(db).find(doc! {}).await.unwrap();
    let loaded = NsvMachine::collection(db)
        .relation(NsvMachine::FIELDS.parts)
        .load(&machines)
        .await;
    let children = NsvNote::collection(db)
        .relation(NsvNote::FIELDS.machine)
        .children_of(&7)
        .to_vec()
        .await;
    assert!(
        matches!(&loaded, Ok(l) if l.of(&machines[0])[0].map(|p| p.sku.as_str()) == Some("P-1")),
        "FINDING: Relation::load of an older target: {:?}",
        loaded.as_ref().err()
    );
    assert!(
        matches!(&children, Ok(c) if c.len() == 1 && c[0].body == "oiled"),
        "FINDING: children_of older children: {children:?}"
    );
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NsvItemV1 {
    #[serde(rename = "_id")]
    id: i64,
    cat: String,
    cat_path: Vec<String>,
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nsv_items")]
#[schema_version(older(NsvItemV1 = 1))]
#[in_tree(NsvCat, node = cat, path = cat_path)]
#[serde(rename_all = "camelCase")]
struct NsvItem {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<2>,
    cat: String,
    cat_path: Vec<String>,
    name: String,
}

impl From<NsvItemV1> for NsvItem {
    fn from(v1: NsvItemV1) -> Self {
        NsvItem {
            id: v1.id,
            schema_version: SchemaVersion,
            cat: v1.cat,
            cat_path: v1.cat_path,
            name: v1.title,
        }
    }
}

#[tokio::test]
async fn tree_holders_of_older_shape() {
    let t = test_db_unvalidated("nsv_tree_holders").await;
    let db = t.db();
    sync(db)
        .models(&[NsvCat::SCHEMA, NsvItem::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let tree = NsvCat::collection(db).tree();
    tree.insert(&cat("root", None)).await.unwrap();
    tree.insert(&cat("a", Some("root"))).await.unwrap();
    raw(db, "nsv_items")
        .insert_one(
            doc! { "_id": 1_i64, "cat": "a", "catPath": ["root", "a"], "title": "old item" },
        )
        .await
        .unwrap();
    let holders = tree.holders::<NsvItem>();
    let under = holders.under("root").await;
    assert!(
        matches!(&under, Ok(v) if v.len() == 1 && v[0].name == "old item"),
        "{under:?}"
    );
    tree.move_to_root("a").await.unwrap();
    assert_eq!(holders.under("a").await.unwrap()[0].cat_path, ["a"]);
    assert!(tree.check().await.unwrap().findings.is_empty());
    assert_eq!(
        NsvItem::collection(db).converge().await.unwrap().upgraded,
        0,
        "the move's update of the holder's path upgraded it first"
    );
    assert_eq!(holders.directly_in("a").await.unwrap()[0].name, "old item");
}

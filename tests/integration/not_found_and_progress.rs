//! Two shapes every pattern shares, against the server:
//!
//! - `Error::NotFound` with its `Missing` context (`Error::missing`, `is_not_found`, `is_no_node`,
//!   `is_not_allocated`) from a tree, a preallocated grid, a versioned model and computed fields,
//!   with nothing written (the raw collections compared before and after);
//! - `Progress`: one callback for the doctor and `allocate_with_progress`, and computed fields
//!   repaired over several batches.

use crate::support::{everything, synced};
use bson::{doc, Bson};
use pattern_runtime::{
    doctor::{doctor, DoctorOptions},
    Error, Missing, Model, Progress,
};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

// ---------------------------------------------------------------------------------------------
// Models (group "nsh")
// ---------------------------------------------------------------------------------------------

/// A tree named by `name`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "nsh", collection = "nsh_cats")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
pub struct NshCat {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub name: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

/// Products placed in the tree.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nsh", collection = "nsh_products")]
#[in_tree(NshCat, node = direct_cat, path = cat_path)]
pub struct NshProduct {
    #[serde(rename = "_id")]
    pub id: String,
    pub direct_cat: String,
    pub cat_path: Vec<String>,
}

/// A preallocated grid: room x day.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nsh", collection = "nsh_rooms")]
#[preallocated(resource = room_id, slot = date, holder = booked_by)]
pub struct NshRoom {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub room_id: String,
    pub date: String,
    pub booked_by: Option<String>,
}

/// A versioned model.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "nsh", collection = "nsh_docs")]
#[versioned(history = "nsh_doc_revisions", keep = 10)]
pub struct NshDoc {
    #[serde(rename = "_id")]
    pub id: String,
    #[version]
    pub version: i64,
    pub body: String,
}

/// A target of computed fields.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nsh", collection = "nsh_users")]
pub struct NshUser {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = NshOrder, by = user_id)]
    pub order_count: i64,
    #[computed(sum = NshOrder.amount, by = user_id)]
    pub total: i64,
}

/// The source.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nsh", collection = "nsh_orders")]
pub struct NshOrder {
    #[serde(rename = "_id")]
    pub id: i64,
    pub user_id: String,
    pub amount: i64,
}

/// Asserts `e` is NotFound of `collection` with `missing`, and the predicates agree.
fn assert_missing(e: &Error, collection: &str, missing: Missing) {
    assert!(e.is_not_found(), "not NotFound: {e:?}");
    match e {
        Error::NotFound { collection: c, .. } => assert_eq!(c, collection, "{e:?}"),
        other => panic!("{other:?}"),
    }
    let got = e.missing().expect("missing() of a NotFound");
    assert_eq!(got, &missing, "{e:?}");
    assert_eq!(
        e.is_no_node(),
        matches!(missing, Missing::Node { .. }),
        "{e:?}"
    );
    assert_eq!(
        e.is_not_allocated(),
        matches!(missing, Missing::Slot { .. }),
        "{e:?}"
    );
    assert!(!e.is_refused_input() && !e.is_conflict() && !e.is_already_booked());
    // Display names something.
    assert!(!e.to_string().is_empty());
    assert!(!got.to_string().is_empty());
}

fn cat(name: &str, parent: Option<&str>) -> NshCat {
    NshCat {
        id: bson::oid::ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

fn room(r: &str, date: &str) -> NshRoom {
    NshRoom {
        id: bson::oid::ObjectId::new(),
        room_id: r.into(),
        date: date.into(),
        booked_by: None,
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Progress: one callback for three jobs
// ---------------------------------------------------------------------------------------------

static SEEN: Mutex<Vec<Progress>> = Mutex::new(Vec::new());

/// The one callback, of the shape the `Progress` docs show (`fn log(p: &Progress)`).
fn record(p: &Progress) {
    SEEN.lock().unwrap().push(*p);
}

fn take(job: &str) -> Vec<Progress> {
    let mut seen = SEEN.lock().unwrap();
    let (mine, rest): (Vec<_>, Vec<_>) = seen.drain(..).partition(|p| p.job == job);
    *seen = rest;
    mine
}

/// done never decreases; fraction agrees with done/total and stays within [0, 1].
fn coherent(steps: &[Progress], unit: &str) {
    assert!(!steps.is_empty(), "no progress for {unit}");
    let mut last = 0;
    for p in steps {
        assert_eq!(p.unit, unit, "{p:?}");
        assert!(p.done >= last, "done went down: {steps:?}");
        last = p.done;
        match p.total {
            Some(t) if t > 0 => {
                let f = p.fraction().expect("fraction with a known total");
                assert!(
                    (0.0..=1.0).contains(&f),
                    "fraction {f} out of [0, 1]: {p:?}"
                );
                if p.done <= t {
                    assert!((f - p.done as f64 / t as f64).abs() < 1e-9, "{p:?}");
                }
            }
            _ => assert_eq!(p.fraction(), None, "{p:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 1. NotFound + Missing
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn not_found_tree_missing_parent_and_node() {
    let db = synced("nsh_tree_missing").await;
    let tree = NshCat::collection(&db).tree();
    tree.insert_many(&[cat("root", None), cat("$child", Some("root"))])
        .await
        .unwrap();
    let before = everything(&db).await;

    // A missing parent, hostile-looking: a string starting with `$` and a dotted string.
    for ghost in ["$ghost", "a.b", "$where"] {
        let e = tree.insert(&cat("x", Some(ghost))).await.unwrap_err();
        assert_missing(
            &e,
            "nsh_cats",
            Missing::Node {
                key: "name",
                value: Bson::String(ghost.into()),
            },
        );
    }
    // insert_many: the second names a parent that is neither stored nor earlier.
    let e = tree
        .insert_many(&[cat("ok", Some("root")), cat("y", Some("nope"))])
        .await
        .unwrap_err();
    assert_missing(
        &e,
        "nsh_cats",
        Missing::Node {
            key: "name",
            value: Bson::String("nope".into()),
        },
    );
    // A move under a missing parent, and a move of a missing node.
    let e = tree.move_under("$child", "nope").await.unwrap_err();
    assert_missing(
        &e,
        "nsh_cats",
        Missing::Node {
            key: "name",
            value: "nope".into(),
        },
    );
    let e = tree.move_under("nope2", "root").await.unwrap_err();
    assert_missing(
        &e,
        "nsh_cats",
        Missing::Node {
            key: "name",
            value: "nope2".into(),
        },
    );
    // ancestors / path / rename / delete of a missing node.
    let e = tree.ancestors("$nope").await.unwrap_err();
    assert_missing(
        &e,
        "nsh_cats",
        Missing::Node {
            key: "name",
            value: "$nope".into(),
        },
    );
    let e = tree.path("$nope").await.unwrap_err();
    assert!(e.is_no_node(), "{e:?}");
    let e = tree.rename("nope3", "fresh").await.unwrap_err();
    assert_missing(
        &e,
        "nsh_cats",
        Missing::Node {
            key: "name",
            value: "nope3".into(),
        },
    );
    let e = tree
        .delete("nope4", pattern_runtime::tree::Deletion::LeafOnly)
        .await
        .unwrap_err();
    assert!(e.is_no_node(), "{e:?}");
    // A holder placed in a missing node.
    let e = tree
        .holders::<NshProduct>()
        .insert(&NshProduct {
            id: "p1".into(),
            direct_cat: "$ghost".into(),
            cat_path: vec![],
        })
        .await
        .unwrap_err();
    assert!(e.is_no_node(), "{e:?}");

    assert_eq!(before, everything(&db).await, "nothing written");
    // The tree is still readable and intact.
    assert!(tree.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn not_found_slot_never_allocated() {
    let db = synced("nsh_slot_missing").await;
    let slots = NshRoom::collection(&db).slots();
    slots
        .allocate(vec![room("101", "2025-08-20"), room("$101", "2025-08-21")])
        .await
        .unwrap();
    let before = everything(&db).await;

    let slot_missing = |r: &str, s: &str| Missing::Slot {
        resource: r.into(),
        slot: s.into(),
    };
    let e = slots.book("101", "2031-01-01", "bob").await.unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("101", "2031-01-01"));
    // A resource that looks like an operator / path is data.
    let e = slots.book("$gt", "2025-08-20", "bob").await.unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("$gt", "2025-08-20"));
    let e = slots.book("a.b", "$x", "bob").await.unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("a.b", "$x"));
    let e = slots.cancel("101", "1999-01-01", "bob").await.unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("101", "1999-01-01"));
    let e = slots.release("101", "1999-01-02").await.unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("101", "1999-01-02"));
    // All or nothing: the allocated one is not booked either.
    let e = slots
        .book_all(&[("101", "2025-08-20"), ("101", "2025-08-22")], "carol")
        .await
        .unwrap_err();
    assert_missing(&e, "nsh_rooms", slot_missing("101", "2025-08-22"));

    assert_eq!(before, everything(&db).await, "nothing written");
    // The allocated slot with a `$` resource is bookable: the value is data.
    let booked = slots.book("$101", "2025-08-21", "$dave").await.unwrap();
    assert_eq!(booked.booked_by.as_deref(), Some("$dave"));
}

#[tokio::test]
async fn not_found_versioned_revision_and_document() {
    let db = synced("nsh_rev_missing").await;
    let coll = NshDoc::collection(&db);
    let mut d = NshDoc {
        id: "d1".into(),
        version: 0,
        body: "$one".into(),
    };
    coll.insert(&mut d).await.unwrap();
    d.body = "two".into();
    assert_eq!(coll.replace(&mut d).await.unwrap().version, Some(2));
    // Revisions 1 (archived) and 2 (current) exist.
    assert_eq!(coll.revision("d1", 1).await.unwrap().body, "$one");
    assert_eq!(coll.revision("d1", 2).await.unwrap().body, "two");
    let before = everything(&db).await;

    for v in [0, 3, 7, -1, i64::MAX] {
        let e = coll.revision("d1", v).await.unwrap_err();
        assert_missing(
            &e,
            "nsh_doc_revisions",
            Missing::Revision {
                id: "d1".into(),
                version: v,
            },
        );
    }
    // Reverting to a revision that does not exist.
    let e = coll.revert("d1", 9).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert!(
        matches!(e.missing(), Some(Missing::Revision { id, version: 9 }) if id == &Bson::from("d1")),
        "{e:?}"
    );
    // A missing document: modify names it.
    let e = coll
        .modify("$ghost", 3, |d| d.body.push('!'))
        .await
        .unwrap_err();
    assert_missing(
        &e,
        "nsh_docs",
        Missing::Document {
            id: "$ghost".into(),
        },
    );
    // A save of a copy whose document is gone.
    let mut ghost = NshDoc {
        id: "g.h".into(),
        version: 1,
        body: "x".into(),
    };
    let e = coll.replace(&mut ghost).await.unwrap_err();
    assert_missing(&e, "nsh_docs", Missing::Document { id: "g.h".into() });
    assert_eq!(ghost.version, 1, "the copy is left at its version");

    assert_eq!(before, everything(&db).await, "nothing written");
}

#[tokio::test]
async fn not_found_computed_target() {
    let db = synced("nsh_computed_missing").await;
    NshUser::collection(&db)
        .raw()
        .insert_one(NshUser {
            id: "u1".into(),
            order_count: 0,
            total: 0,
        })
        .await
        .unwrap();
    let orders = NshOrder::collection(&db);
    orders
        .insert(&NshOrder {
            id: 1,
            user_id: "u1".into(),
            amount: 5,
        })
        .await
        .unwrap();
    let before = everything(&db).await;

    // An order pointing at a user that does not exist.
    let e = orders
        .insert(&NshOrder {
            id: 2,
            user_id: "$ghost".into(),
            amount: 7,
        })
        .await
        .unwrap_err();
    assert_missing(
        &e,
        "nsh_users",
        Missing::Document {
            id: "$ghost".into(),
        },
    );
    // Moving an existing order to a missing user.
    let e = orders
        .update(1, doc! { "$set": { NshOrder::FIELDS.user_id: "no.body" } })
        .await
        .unwrap_err();
    assert_missing(
        &e,
        "nsh_users",
        Missing::Document {
            id: "no.body".into(),
        },
    );
    // Recomputing a missing target.
    let e = NshUser::collection(&db)
        .computed()
        .rebuild("nobody")
        .await
        .unwrap_err();
    assert_missing(
        &e,
        "nsh_users",
        Missing::Document {
            id: "nobody".into(),
        },
    );
    assert_eq!(before, everything(&db).await, "nothing written");
}

#[tokio::test]
async fn progress_one_callback_three_jobs() {
    let db = synced("nsh_progress").await;

    // Slots: 2 500 slots, 3 batches of 1 000; total unknown (an iterator).
    let slots = NshRoom::collection(&db).slots();
    let grid: Vec<NshRoom> = (0..2500)
        .map(|i| room(&format!("r{}", i / 100), &format!("d{:03}", i % 100)))
        .collect();
    let allocated = slots
        .allocate_with_progress(grid.clone(), record)
        .await
        .unwrap();
    assert_eq!((allocated.inserted, allocated.existing), (2500, 0));
    let steps = take("preallocation.allocate");
    coherent(&steps, "slots");
    assert!(steps.len() >= 3, "one step per batch of 1 000: {steps:?}");
    assert_eq!(steps.last().unwrap().done, 2500);
    assert!(steps.iter().all(|p| p.total.is_none()), "{steps:?}");
    // Again: all existing, still counted as done.
    let again = slots.allocate_with_progress(grid, record).await.unwrap();
    assert_eq!((again.inserted, again.existing), (0, 2500));
    let steps = take("preallocation.allocate");
    coherent(&steps, "slots");
    assert_eq!(steps.last().unwrap().done, again.inserted + again.existing);

    // Computed: 2 100 users (3 batches), some drifted by hand.
    let users: Vec<NshUser> = (0..2100)
        .map(|i| NshUser {
            id: format!("u{i:05}"),
            order_count: 0,
            total: 0,
        })
        .collect();
    NshUser::collection(&db)
        .raw()
        .insert_many(users)
        .await
        .unwrap();
    let orders = NshOrder::collection(&db);
    for i in 0..5 {
        orders
            .insert(&NshOrder {
                id: i,
                user_id: format!("u{:05}", i * 400),
                amount: 10,
            })
            .await
            .unwrap();
    }
    NshUser::collection(&db)
        .raw()
        .update_many(
            doc! { "_id": { "$in": ["u00001", "u01999", "u02099"] } },
            doc! { "$set": { "orderCount": 42 } },
        )
        .await
        .unwrap();
    let repaired = NshUser::collection(&db).computed().repair().await.unwrap();
    assert_eq!(repaired.repaired, 3);
    assert!(repaired.is_clean(), "{repaired}");
    assert!(NshUser::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());

    // Doctor: one step per collection, with its name.
    let options = DoctorOptions::new().on_progress(record);
    let report = doctor(&db).group("nsh").options(&options).await.unwrap();
    let steps = take("doctor");
    coherent(&steps, "collections");
    let last = steps.last().unwrap();
    assert_eq!(
        last.total,
        Some(last.done),
        "the doctor knows its collections: {steps:?}"
    );
    assert_eq!(last.fraction(), Some(1.0));
    let items: Vec<&str> = steps.iter().map(|p| p.item.expect("doctor item")).collect();
    let mut unique = items.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), items.len(), "each collection once: {items:?}");
    assert_eq!(last.done as usize, items.len());
    for (collection, _) in &report.sampled {
        assert!(
            items.contains(&collection.as_str()),
            "{collection} sampled, never reported: {items:?}"
        );
    }
    assert!(
        SEEN.lock().unwrap().is_empty(),
        "only the three jobs' steps"
    );
}

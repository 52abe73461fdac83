//! Patterns together ("Patterns together", "What the toolkit sends", "One check and repair"):
//! whole-document replaces against kept fields, tree cascades through two-way relations, grid slots that are tree holders and subset items, a holder that is an
//! extended-reference copy, repairs after raw writes, a server error inside a caller's
//! transaction, and sums that leave the 64-bit range, each fed hostile values.
//!
//! Tests marked `#[ignore = "finding: .."]` assert what the docs promise and fail today.

use bson::{doc, Bson, Document};
use pattern_runtime::tree::Deletion;
use pattern_runtime::{
    doctor::CheckReport, sync, Error, Fields, Model, Ref, SyncOptions, Transaction,
};
use pattern_testkit::docs;
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

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

/// The raw document `id` of `collection`.
async fn one(db: &TestDb, collection: &str, id: impl Into<Bson>) -> Document {
    let id = id.into();
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id.clone() })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no {id} in {collection}"))
}

/// Every document of the collections, as text (NaN compares equal to itself this way).
async fn snapshot(db: &TestDb, collections: &[&str]) -> String {
    let mut out = String::new();
    for c in collections {
        out.push_str(&format!("{c}: {:?}\n", docs(db, c).await));
    }
    out
}

/// An integer field, whichever width it is stored in.
fn int(d: &Document, key: &str) -> i64 {
    match d.get(key) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("{key} is {other:?} in {d}"),
    }
}

fn clean(what: &str, report: CheckReport) {
    assert!(report.is_clean(), "{what}: {report}");
}

fn op_doc() -> Bson {
    Bson::Document(doc! { "$gt": "" })
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Document>,
}

fn note(text: &str) -> Note {
    Note {
        text: text.into(),
        meta: None,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
pub struct Spec {
    pub name: String,
    pub value: Bson,
}

fn spec(name: &str, value: impl Into<Bson>) -> Spec {
    Spec {
        name: name.into(),
        value: value.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Group nw3_rep: a seller that is a computed target (sum, float sum, count), an extended-reference
// source (its name and computed total copied into listings), an attribute array and an outlier
// array; sales that are its computed sources and holders in a category tree keyed by name.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_rep", collection = "nw3_rep_sellers")]
#[extended_ref(RSellerRef(name, total))]
pub struct RSeller {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    #[computed(sum = RSale.amount, by = seller_id)]
    pub total: i64,
    #[computed(sum = RSale.tip, by = seller_id)]
    pub tips: f64,
    #[computed(count = RSale, by = seller_id)]
    pub sales: i64,
    #[attribute]
    pub specs: Vec<Spec>,
    #[outlier(limit = 2, overflow = "nw3_rep_notes", capacity = 2, flag = is_outlier, count = notes_count)]
    pub notes: Vec<Note>,
    pub is_outlier: bool,
    pub notes_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_rep", collection = "nw3_rep_listings")]
pub struct RListing {
    #[serde(rename = "_id")]
    pub id: i64,
    #[extended_ref(propagate)]
    pub seller: RSellerRef,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_rep", collection = "nw3_rep_cats")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
pub struct RCat {
    #[serde(rename = "_id")]
    pub id: i64,
    pub name: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_rep", collection = "nw3_rep_sales")]
#[in_tree(RCat, node = cat, path = cat_path)]
pub struct RSale {
    #[serde(rename = "_id")]
    pub id: i64,
    pub seller_id: String,
    pub amount: i64,
    pub tip: f64,
    pub label: String,
    pub cat: Option<String>,
    pub cat_path: Vec<String>,
}

const REP: [&str; 6] = [
    "nw3_rep_sellers",
    "nw3_rep_listings",
    "nw3_rep_cats",
    "nw3_rep_sales",
    "nw3_rep_notes",
    "nw3_rep_cats.tree",
];

fn rcat(id: i64, name: &str, parent: Option<&str>) -> RCat {
    RCat {
        id,
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec!["stale".into()],
    }
}

fn rsale(id: i64, seller: &str, amount: i64, cat: Option<&str>) -> RSale {
    RSale {
        id,
        seller_id: seller.into(),
        amount,
        tip: 0.5,
        label: format!("sale {id}"),
        cat: cat.map(str::to_owned),
        cat_path: vec![],
    }
}

/// Seller "s1" (name `$gt`), listing 1 copying it, categories root > `$x` > `a.b`, sales 1
/// (10, in no node) and 2 (20, in `$x`), three notes (an outlier), one spec.
async fn rep_setup(db: &TestDb) -> RSeller {
    let seller = RSeller {
        id: "s1".into(),
        name: "$gt".into(),
        total: 0,
        tips: 0.0,
        sales: 0,
        specs: vec![],
        notes: vec![],
        is_outlier: false,
        notes_count: 0,
    };
    RSeller::collection(db)
        .raw()
        .insert_one(&seller)
        .await
        .unwrap();
    RListing::collection(db)
        .raw()
        .insert_one(RListing {
            id: 1,
            seller: RSellerRef::from(&seller),
        })
        .await
        .unwrap();
    let tree = RCat::collection(db).tree();
    tree.insert(&rcat(1, "root", None)).await.unwrap();
    tree.insert(&rcat(2, "$x", Some("root"))).await.unwrap();
    tree.insert(&rcat(3, "a.b", Some("$x"))).await.unwrap();
    RSale::collection(db)
        .insert(&rsale(1, "s1", 10, None))
        .await
        .unwrap();
    tree.holders::<RSale>()
        .insert(&rsale(2, "s1", 20, Some("$x")))
        .await
        .unwrap();
    let notes = RSeller::collection(db).outlier(RSeller::FIELDS.notes);
    for t in ["$inc", "a.b", ""] {
        notes.push("s1", note(t)).await.unwrap();
    }
    RSeller::collection(db)
        .attributes(RSeller::FIELDS.specs)
        .set("s1", &spec("color", "$red"))
        .await
        .unwrap();
    let stored: RSeller = bson::deserialize_from_document(one(db, "nw3_rep_sellers", "s1").await)
        .expect("seller reads back");
    assert_eq!(stored.total, 30);
    assert_eq!(stored.sales, 2);
    assert_eq!(stored.tips, 1.0);
    assert_eq!(stored.notes_count, 3);
    assert!(stored.is_outlier);
    assert_eq!(
        one(db, "nw3_rep_sales", 2)
            .await
            .get_array("catPath")
            .unwrap(),
        &vec![Bson::from("root"), Bson::from("$x")]
    );
    assert_eq!(
        one(db, "nw3_rep_listings", 1)
            .await
            .get_document("seller")
            .unwrap(),
        &doc! { "_id": "s1", "name": "$gt", "total": 30_i64 }
    );
    stored
}

#[tokio::test]
async fn rep_references_replace_refuses_each_kept_field_with_nothing_written() {
    let db = synced("nw3_rep_refuse", "nw3_rep").await;
    let stored = rep_setup(&db).await;
    let before = snapshot(&db, &REP).await;

    let mut cases: Vec<(&str, RSeller)> = Vec::new();
    let mut s = stored.clone();
    s.total = 31;
    cases.push(("computed sum", s));
    let mut s = stored.clone();
    s.sales = 0;
    cases.push(("computed count", s));
    let mut s = stored.clone();
    s.tips = f64::NAN;
    cases.push(("computed float sum to NaN", s));
    let mut s = stored.clone();
    s.notes_count = 2;
    cases.push(("outlier count", s));
    let mut s = stored.clone();
    s.is_outlier = false;
    cases.push(("outlier flag", s));
    let mut s = stored.clone();
    s.notes = vec![note("forged")];
    cases.push(("outlier items", s));
    let mut s = stored.clone();
    s.specs = vec![spec("k", 1), spec("k", 2)];
    cases.push(("attribute key twice", s));
    let mut s = stored.clone();
    s.specs = vec![spec("$bad", 1)];
    cases.push(("attribute key with $", s));
    let mut s = stored.clone();
    s.specs = vec![spec("a.b", 1)];
    cases.push(("attribute key with .", s));
    let mut s = stored.clone();
    s.specs = vec![spec("", 1)];
    cases.push(("attribute key empty", s));
    // A name change riding along must not be written either.
    for (_, s) in cases.iter_mut() {
        s.name = "changed".into();
    }
    for (what, s) in &cases {
        match RSeller::collection(&db).replace(s).await {
            Err(Error::InvalidValue { .. } | Error::KeptField { .. }) => {}
            other => panic!("{what}: expected InvalidValue or KeptField, got {other:?}"),
        }
        assert_eq!(
            snapshot(&db, &REP).await,
            before,
            "{what}: the database changed"
        );
    }
}

#[tokio::test]
async fn rep_references_replace_accepts_new_attribute_array_and_hostile_strings() {
    let db = synced("nw3_rep_accept", "nw3_rep").await;
    let stored = rep_setup(&db).await;
    let long = format!("{}\0$.", "ž".repeat(100_000));
    // Over 16 MiB: refused before sending, nothing written.
    let mut huge = stored.clone();
    huge.name = "x".repeat(17 * 1024 * 1024);
    let before = snapshot(&db, &REP).await;
    match RSeller::collection(&db).replace(&huge).await {
        Err(Error::DocumentTooLarge { .. }) => {}
        other => panic!("over 16 MiB: {:?}", other.map(|_| ())),
    }
    assert_eq!(snapshot(&db, &REP).await, before);
    let mut s = stored.clone();
    s.name = long.clone();
    s.specs = vec![
        spec("price", "$120"),
        spec("nan", f64::NAN),
        spec("inf", f64::NEG_INFINITY),
        spec("empty", ""),
        spec(
            "nested",
            doc! { "unit": "$/month", "deep": { "x": [1, "a.b"] } },
        ),
        spec("$where-like", "x"),
    ];
    // `$where-like` starts with `$`: refused (an item a query cannot name).
    let before = snapshot(&db, &REP).await;
    assert!(
        matches!(
            RSeller::collection(&db).replace(&s).await,
            Err(Error::InvalidValue { .. })
        ),
        "an attribute key starting with $ must be refused"
    );
    assert_eq!(snapshot(&db, &REP).await, before);

    s.specs.pop();
    RSeller::collection(&db).replace(&s).await.unwrap();
    let back = one(&db, "nw3_rep_sellers", "s1").await;
    assert_eq!(back.get_str("name").unwrap(), long);
    let specs = back.get_array("specs").unwrap();
    assert_eq!(specs.len(), 5);
    assert_eq!(
        specs[0],
        Bson::Document(doc! { "name": "price", "value": "$120" })
    );
    assert!(specs[1]
        .as_document()
        .unwrap()
        .get_f64("value")
        .unwrap()
        .is_nan());
    assert_eq!(
        specs[2].as_document().unwrap().get_f64("value").unwrap(),
        f64::NEG_INFINITY
    );
    assert_eq!(
        specs[3],
        Bson::Document(doc! { "name": "empty", "value": "" })
    );
    assert_eq!(
        specs[4],
        Bson::Document(
            doc! { "name": "nested", "value": { "unit": "$/month", "deep": { "x": [1, "a.b"] } } }
        )
    );
    // Kept fields untouched; the copy follows the name.
    assert_eq!(int(&back, "total"), 30);
    assert_eq!(int(&back, "notesCount"), 3);
    assert_eq!(
        one(&db, "nw3_rep_listings", 1)
            .await
            .get_document("seller")
            .unwrap(),
        &doc! { "_id": "s1", "name": long, "total": 30_i64 }
    );
    // The attribute reads it back: the first item of the key.
    let nested = RSeller::collection(&db)
        .attributes(RSeller::FIELDS.specs)
        .get("s1", &"nested".to_owned())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        nested.value,
        Bson::Document(doc! { "unit": "$/month", "deep": { "x": [1, "a.b"] } })
    );
    clean(
        "references",
        RSeller::collection(&db).references().check().await.unwrap(),
    );
    clean(
        "attributes",
        RSeller::collection(&db)
            .attributes(RSeller::FIELDS.specs)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        RSeller::collection(&db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn rep_computing_replace_refuses_holder_node_and_path_accepts_same_node() {
    let db = synced("nw3_rep_holder", "nw3_rep").await;
    rep_setup(&db).await;
    let sales = RSale::collection(&db);
    let stored: RSale =
        bson::deserialize_from_document(one(&db, "nw3_rep_sales", 2).await).unwrap();
    let before = snapshot(&db, &REP).await;

    // Another node (same amount, same seller): the holder's node is the tree's.
    let mut s = stored.clone();
    s.cat = Some("a.b".into());
    s.cat_path = vec!["root".into(), "$x".into(), "a.b".into()];
    match sales.replace(&s).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("node change: {other:?}"),
    }
    assert_eq!(snapshot(&db, &REP).await, before);
    // Out of the tree altogether.
    let mut s = stored.clone();
    s.cat = None;
    s.cat_path = vec![];
    s.amount = 1;
    match sales.replace(&s).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("node removed: {other:?}"),
    }
    assert_eq!(snapshot(&db, &REP).await, before);
    // The path forged, the node kept.
    let mut s = stored.clone();
    s.cat_path = vec!["$x".into()];
    match sales.replace(&s).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("path forged: {other:?}"),
    }
    assert_eq!(snapshot(&db, &REP).await, before);
    // A target that does not exist.
    let mut s = stored.clone();
    s.seller_id = "$nobody".into();
    match sales.replace(&s).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("missing target: {other:?}"),
    }
    assert_eq!(snapshot(&db, &REP).await, before);

    // Node and path as stored: the replace is the computed source's write and moves the sum.
    let mut s = stored.clone();
    s.amount = 25;
    s.tip = 0.25;
    s.label = "$set".into();
    sales.replace(&s).await.unwrap();
    let sale = one(&db, "nw3_rep_sales", 2).await;
    assert_eq!(int(&sale, "amount"), 25);
    assert_eq!(sale.get_str("label").unwrap(), "$set");
    let seller = one(&db, "nw3_rep_sellers", "s1").await;
    assert_eq!(int(&seller, "total"), 35);
    assert_eq!(seller.get_f64("tips").unwrap(), 0.75);
    assert_eq!(
        one(&db, "nw3_rep_listings", 1)
            .await
            .get_document("seller")
            .unwrap(),
        &doc! { "_id": "s1", "name": "$gt", "total": 35_i64 }
    );
    clean("tree", RCat::collection(&db).tree().check().await.unwrap());
    clean(
        "computed",
        RSeller::collection(&db).computed().check().await.unwrap(),
    );
    clean(
        "references",
        RSeller::collection(&db).references().check().await.unwrap(),
    );
}

#[tokio::test]
async fn rep_sum_leaving_i64_or_not_finite_is_invalid_value_with_nothing_written() {
    let db = synced("nw3_rep_overflow", "nw3_rep").await;
    rep_setup(&db).await;
    let sales = RSale::collection(&db);
    let holders = RCat::collection(&db).tree().holders::<RSale>();
    let before = snapshot(&db, &REP).await;

    let invalid = |what: &str, r: pattern_runtime::Result<()>| match r {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("{what}: expected InvalidValue, got {other:?}"),
    };
    // total is 30: one more i64::MAX passes the range.
    invalid(
        "insert",
        sales
            .insert(&rsale(10, "s1", i64::MAX, None))
            .await
            .map(drop),
    );
    invalid(
        "holder insert",
        holders
            .insert(&rsale(11, "s1", i64::MAX, Some("a.b")))
            .await,
    );
    invalid(
        "update $inc",
        sales
            .update(1, doc! { "$inc": { "amount": i64::MAX - 15 } })
            .await
            .map(drop),
    );
    invalid(
        "update $set",
        sales
            .update(1, doc! { "$set": { "amount": i64::MAX } })
            .await
            .map(drop),
    );
    let mut r = rsale(1, "s1", i64::MAX, None);
    r.tip = 0.5;
    invalid("replace", sales.replace(&r).await.map(drop));
    // A float sum refuses NaN and the infinities.
    let mut r = rsale(13, "s1", 1, None);
    r.tip = f64::NAN;
    invalid("NaN tip", sales.insert(&r).await.map(drop));
    let mut r = rsale(14, "s1", 1, None);
    r.tip = f64::INFINITY;
    invalid("infinite tip", sales.insert(&r).await.map(drop));
    invalid(
        "NaN tip update",
        sales
            .update(1, doc! { "$set": { "tip": f64::NAN } })
            .await
            .map(drop),
    );
    assert_eq!(snapshot(&db, &REP).await, before);

    // Right at the edge is fine: 30 + (i64::MAX - 30).
    sales
        .insert(&rsale(15, "s1", i64::MAX - 30, None))
        .await
        .unwrap();
    assert_eq!(
        int(&one(&db, "nw3_rep_sellers", "s1").await, "total"),
        i64::MAX
    );
    // Below the range: back to 30, then 30 + i64::MIN (in range), then 31 less.
    sales.delete(15).await.unwrap();
    sales
        .insert(&rsale(16, "s1", i64::MIN, None))
        .await
        .unwrap();
    assert_eq!(
        int(&one(&db, "nw3_rep_sellers", "s1").await, "total"),
        i64::MIN + 30
    );
    let before = snapshot(&db, &REP).await;
    invalid(
        "insert below",
        sales.insert(&rsale(17, "s1", -31, None)).await.map(drop),
    );
    invalid(
        "update below",
        sales
            .update(1, doc! { "$set": { "amount": -21_i64 } })
            .await
            .map(drop),
    );
    assert_eq!(snapshot(&db, &REP).await, before);
    clean(
        "computed",
        RSeller::collection(&db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn rep_hostile_keys_and_values_refused_with_nothing_written() {
    let db = synced("nw3_rep_ids", "nw3_rep").await;
    rep_setup(&db).await;
    let before = snapshot(&db, &REP).await;
    let sales = RSale::collection(&db);
    let notes = RSeller::collection(&db).outlier(RSeller::FIELDS.notes);
    let specs = RSeller::collection(&db).attributes(RSeller::FIELDS.specs);

    // An operator document or a regex as an id does not compile: these models' ids are typed
    // (`tests/ui/ids`); a `Bson` id is checked at run time (`tests/integration/hostile/`).
    // `ModelCollection::update` setting the computed `by` to an operator document.
    assert!(
        matches!(
            sales
                .update(1, doc! { "$set": { "sellerId": { "$gt": "" } } })
                .await,
            Err(Error::InvalidValue { .. }) | Err(Error::InvalidKey { .. })
        ),
        "a `by` set to an operator document"
    );
    // Update keys: dotted into a kept field, `$` prefixed, empty.
    for update in [
        doc! { "$set": { "notesCount": 1 } },
        doc! { "$set": { "total": 1 } },
        doc! { "$set": { "specs.0.name": "x" } },
        doc! { "$set": { "$name": "x" } },
        doc! { "$set": { "": "x" } },
        doc! { "$set": { "name..x": "x" } },
        doc! { "name": "no operator" },
    ] {
        assert!(
            matches!(
                RSeller::collection(&db).update("s1", update.clone()).await,
                Err(Error::InvalidKey { .. } | Error::KeptField { .. })
            ),
            "References::update {update}"
        );
    }
    // Outlier items with operator or dotted keys.
    for meta in [
        doc! { "$gt": 1 },
        doc! { "a.b": 1 },
        doc! { "x": { "$ne": 1 } },
    ] {
        let n = Note {
            text: "x".into(),
            meta: Some(meta.clone()),
        };
        assert!(
            matches!(notes.push("s1", n).await, Err(Error::InvalidValue { .. })),
            "outlier item {meta}"
        );
    }
    // Attribute keys.
    for key in ["", "$k", "a.b", "nul\0"] {
        assert!(
            matches!(
                specs.set("s1", &spec(key, 1)).await,
                Err(Error::InvalidKey { .. })
            ),
            "attribute key {key:?}"
        );
    }
    // An attribute value that is an operator document.
    assert!(matches!(
        specs.set("s1", &spec("k", doc! { "$concat": ["a"] })).await,
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(snapshot(&db, &REP).await, before);
}

// ---------------------------------------------------------------------------------------------
// Group nw3_cas: an org tree (keyed by `_id`) whose holders are both sides of two-way relations;
// the owner counts its children.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_cas", collection = "nw3_cas_orgs")]
#[tree(parent = parent, ancestors = ancestors)]
pub struct COrg {
    #[serde(rename = "_id")]
    pub id: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_cas", collection = "nw3_cas_squads")]
#[in_tree(COrg, node = org, path = org_path)]
pub struct CSquad {
    #[serde(rename = "_id")]
    pub id: String,
    pub org: Option<String>,
    pub org_path: Vec<String>,
    #[relation(inverse = squad)]
    pub members: Vec<Ref<CAgent>>,
    #[computed(count = CAgent, by = squad)]
    pub agent_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_cas", collection = "nw3_cas_agents")]
#[in_tree(COrg, node = org, path = org_path)]
pub struct CAgent {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub org: Option<String>,
    pub org_path: Vec<String>,
    #[relation(inverse = members)]
    pub squad: Option<Ref<CSquad>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_cas", collection = "nw3_cas_teams")]
#[in_tree(COrg, node = org, path = org_path)]
pub struct CTeam {
    #[serde(rename = "_id")]
    pub id: String,
    pub org: Option<String>,
    pub org_path: Vec<String>,
    #[relation(inverse = team)]
    pub badges: Vec<Ref<CBadge>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_cas", collection = "nw3_cas_badges")]
pub struct CBadge {
    #[serde(rename = "_id")]
    pub id: String,
    pub label: String,
    #[relation(inverse = badges)]
    pub team: Ref<CTeam>,
}

const CAS: [&str; 6] = [
    "nw3_cas_orgs",
    "nw3_cas_squads",
    "nw3_cas_agents",
    "nw3_cas_teams",
    "nw3_cas_badges",
    "nw3_cas_orgs.tree",
];

fn corg(id: &str, parent: Option<&str>) -> COrg {
    COrg {
        id: id.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

fn csquad(id: &str, org: &str) -> CSquad {
    CSquad {
        id: id.into(),
        org: Some(org.into()),
        org_path: vec![],
        members: vec![],
        agent_count: 0,
    }
}

fn cagent(id: &str, org: Option<&str>, squad: Option<&str>) -> CAgent {
    CAgent {
        id: id.into(),
        name: format!("$name of {id}"),
        org: org.map(str::to_owned),
        org_path: vec![],
        squad: squad.map(|s| Ref::new(s.to_owned())),
    }
}

/// root > `$gt` > `a.b`; root > `x`.
async fn cas_tree(db: &TestDb) {
    let tree = COrg::collection(db).tree();
    tree.insert_many(&[
        corg("root", None),
        corg("$gt", Some("root")),
        corg("a.b", Some("$gt")),
        corg("x", Some("root")),
    ])
    .await
    .unwrap();
}

async fn cas_checks(db: &TestDb) {
    clean("tree", COrg::collection(db).tree().check().await.unwrap());
    clean(
        "two-way agents",
        CAgent::collection(db)
            .relation(CAgent::FIELDS.squad)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "two-way badges",
        CBadge::collection(db)
            .relation(CBadge::FIELDS.team)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        CSquad::collection(db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn cas_cascade_deleting_an_owner_nulls_its_optional_children() {
    let db = synced("nw3_cas_owner", "nw3_cas").await;
    cas_tree(&db).await;
    let tree = COrg::collection(&db).tree();
    tree.holders::<CSquad>()
        .insert(&csquad("sq", "a.b"))
        .await
        .unwrap();
    let agents = tree.holders::<CAgent>();
    // ag1 sits in `x` (outside the cascade), inserted naming the squad; ag2 in no node,
    // assigned afterwards; ag3 under the cascade.
    agents
        .insert(&cagent("ag1", Some("x"), Some("sq")))
        .await
        .unwrap();
    CAgent::collection(&db)
        .insert(&cagent("ag2", None, None))
        .await
        .unwrap();
    CAgent::collection(&db)
        .relation(CAgent::FIELDS.squad)
        .assign(&"ag2".to_owned(), &"sq".to_owned())
        .await
        .unwrap();
    agents
        .insert(&cagent("ag3", Some("a.b"), Some("sq")))
        .await
        .unwrap();
    let sq = one(&db, "nw3_cas_squads", "sq").await;
    assert_eq!(int(&sq, "agentCount"), 3);
    let mut members: Vec<_> = sq
        .get_array("members")
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_owned())
        .collect();
    members.sort();
    assert_eq!(members, ["ag1", "ag2", "ag3"]);
    assert_eq!(
        one(&db, "nw3_cas_squads", "sq")
            .await
            .get_array("orgPath")
            .unwrap(),
        &vec![Bson::from("root"), Bson::from("$gt"), Bson::from("a.b")]
    );
    cas_checks(&db).await;

    tree.delete("$gt", Deletion::Cascade).await.unwrap();
    let orgs: Vec<_> = docs(&db, "nw3_cas_orgs")
        .await
        .iter()
        .map(|d| d.get_str("_id").unwrap().to_owned())
        .collect();
    assert_eq!(orgs, ["root", "x"]);
    assert!(docs(&db, "nw3_cas_squads").await.is_empty());
    let agents_left = docs(&db, "nw3_cas_agents").await;
    assert_eq!(agents_left.len(), 2, "{agents_left:?}");
    for a in &agents_left {
        assert_eq!(a.get("squad"), Some(&Bson::Null), "{a}");
    }
    cas_checks(&db).await;
}

#[tokio::test]
async fn cas_cascade_deleting_a_child_pulls_it_from_its_owner_and_its_count() {
    let db = synced("nw3_cas_child", "nw3_cas").await;
    cas_tree(&db).await;
    let tree = COrg::collection(&db).tree();
    tree.holders::<CSquad>()
        .insert(&csquad("$sq", "x"))
        .await
        .unwrap();
    let agents = tree.holders::<CAgent>();
    agents
        .insert(&cagent("keep", Some("x"), Some("$sq")))
        .await
        .unwrap();
    agents
        .insert(&cagent("gone.1", Some("a.b"), Some("$sq")))
        .await
        .unwrap();
    agents
        .insert(&cagent("gone.2", Some("$gt"), Some("$sq")))
        .await
        .unwrap();
    assert_eq!(
        int(&one(&db, "nw3_cas_squads", "$sq").await, "agentCount"),
        3
    );
    tree.delete("$gt", Deletion::Cascade).await.unwrap();
    let sq = one(&db, "nw3_cas_squads", "$sq").await;
    assert_eq!(sq.get_array("members").unwrap(), &vec![Bson::from("keep")]);
    assert_eq!(int(&sq, "agentCount"), 1);
    let left: Vec<_> = docs(&db, "nw3_cas_agents")
        .await
        .iter()
        .map(|d| d.get_str("_id").unwrap().to_owned())
        .collect();
    assert_eq!(left, ["keep"]);
    cas_checks(&db).await;
}

#[tokio::test]
async fn cas_cascade_refused_while_required_children_name_the_owner() {
    let db = synced("nw3_cas_required", "nw3_cas").await;
    cas_tree(&db).await;
    let tree = COrg::collection(&db).tree();
    tree.holders::<CTeam>()
        .insert(&CTeam {
            id: "t1".into(),
            org: Some("a.b".into()),
            org_path: vec![],
            badges: vec![],
        })
        .await
        .unwrap();
    CBadge::collection(&db)
        .insert(&CBadge {
            id: "b1".into(),
            label: "$label".into(),
            team: Ref::new("t1".to_owned()),
        })
        .await
        .unwrap();
    assert_eq!(
        one(&db, "nw3_cas_teams", "t1")
            .await
            .get_array("badges")
            .unwrap(),
        &vec![Bson::from("b1")]
    );
    // Also a squad and agents in the subtree, so the cascade would have more to do.
    tree.holders::<CSquad>()
        .insert(&csquad("sq", "$gt"))
        .await
        .unwrap();
    tree.holders::<CAgent>()
        .insert(&cagent("ag", Some("a.b"), Some("sq")))
        .await
        .unwrap();
    let before = snapshot(&db, &CAS).await;
    let refused = tree.delete("$gt", Deletion::Cascade).await;
    assert!(refused.is_err(), "deleted: {refused:?}");
    assert_eq!(snapshot(&db, &CAS).await, before);
    // Deleting the badge first lets the cascade through.
    CBadge::collection(&db).delete("b1").await.unwrap();
    assert!(one(&db, "nw3_cas_teams", "t1")
        .await
        .get_array("badges")
        .unwrap()
        .is_empty());
    tree.delete("$gt", Deletion::Cascade).await.unwrap();
    assert!(docs(&db, "nw3_cas_teams").await.is_empty());
    assert!(docs(&db, "nw3_cas_agents").await.is_empty());
    cas_checks(&db).await;
}

#[tokio::test]
async fn cas_duplicate_tree_key_in_a_caller_transaction_ends_it() {
    let db = synced("nw3_cas_tx", "nw3_cas").await;
    cas_tree(&db).await;
    let before = snapshot(&db, &CAS).await;
    let tx = Transaction::start(&db).await.unwrap();
    let tree = COrg::collection(&db).tree().in_transaction(&tx);
    tree.insert(&corg("y", Some("x"))).await.unwrap();
    tree.holders::<CSquad>()
        .insert(&csquad("sq", "y"))
        .await
        .unwrap();
    match tree.insert(&corg("$gt", Some("root"))).await {
        Err(Error::DuplicateKey { .. }) => {}
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(tx.ended(), Some("aborted by the server"));
    match tree.insert(&corg("z", Some("root"))).await {
        Err(Error::TransactionEnded { .. }) => {}
        other => panic!("a bound handle after the end: {other:?}"),
    }
    match tx.commit().await {
        Err(e @ Error::TransactionEnded { .. }) => assert!(!e.is_transient()),
        other => panic!("commit: {other:?}"),
    }
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db, &CAS).await, before);
}

// ---------------------------------------------------------------------------------------------
// Group nw3_slot: desks that are grid slots, holders in a site tree, and the full items of a
// room's subset (the holder embedded), counted.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_slot", collection = "nw3_slot_sites")]
#[tree(parent = parent, ancestors = ancestors)]
pub struct SSite {
    #[serde(rename = "_id")]
    pub id: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_slot", collection = "nw3_slot_desks")]
#[preallocated(resource = room, slot = day, holder = booked_by)]
#[in_tree(SSite, node = site, path = site_path)]
pub struct SDesk {
    #[serde(rename = "_id")]
    pub id: String,
    pub room: String,
    pub day: String,
    pub booked_by: Option<String>,
    pub site: Option<String>,
    pub site_path: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct DeskLine {
    pub desk_id: String,
    pub day: String,
    pub booked_by: Option<String>,
}

impl From<&SDesk> for DeskLine {
    fn from(d: &SDesk) -> Self {
        DeskLine {
            desk_id: d.id.clone(),
            day: d.day.clone(),
            booked_by: d.booked_by.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_slot", collection = "nw3_slot_rooms")]
pub struct SRoom {
    #[serde(rename = "_id")]
    pub id: String,
    #[subset(limit = 2, sort(day = 1), full = SDesk, parent = room)]
    pub desks: Vec<DeskLine>,
    #[summary(count = desks)]
    pub desk_count: i64,
}

const SLOT: [&str; 4] = [
    "nw3_slot_sites",
    "nw3_slot_desks",
    "nw3_slot_rooms",
    "nw3_slot_sites.tree",
];

fn desk(id: &str, room: &str, day: &str, site: Option<&str>) -> SDesk {
    SDesk {
        id: id.into(),
        room: room.into(),
        day: day.into(),
        booked_by: None,
        site: site.map(str::to_owned),
        site_path: vec!["forged".into()],
    }
}

fn line(id: &str, day: &str, by: Option<&str>) -> Bson {
    Bson::Document(match by {
        Some(b) => doc! { "deskId": id, "day": day, "bookedBy": b },
        None => doc! { "deskId": id, "day": day, "bookedBy": Bson::Null },
    })
}

async fn slot_setup(db: &TestDb) {
    SSite::collection(db)
        .tree()
        .insert_many(&[
            SSite {
                id: "$site".into(),
                parent: None,
                ancestors: vec![],
            },
            SSite {
                id: "b.c".into(),
                parent: Some("$site".into()),
                ancestors: vec![],
            },
        ])
        .await
        .unwrap();
    SRoom::collection(db)
        .raw()
        .insert_one(SRoom {
            id: "$room".into(),
            desks: vec![],
            desk_count: 0,
        })
        .await
        .unwrap();
}

async fn slot_checks(db: &TestDb) {
    clean("tree", SSite::collection(db).tree().check().await.unwrap());
    clean(
        "subset",
        SRoom::collection(db)
            .subset(SRoom::FIELDS.desks)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "slots",
        SDesk::collection(db).slots().check().await.unwrap(),
    );
}

#[tokio::test]
async fn slot_allocate_of_tree_holders_computes_their_paths_and_fills_the_subset() {
    let db = synced("nw3_slot_alloc", "nw3_slot").await;
    slot_setup(&db).await;
    let slots = SDesk::collection(&db).slots();
    let allocated = slots
        .allocate(vec![
            desk("d3", "$room", "2025-01-03", Some("b.c")),
            desk("d1", "$room", "2025-01-01", Some("b.c")),
            desk("d2", "$room", "2025-01-02", Some("$site")),
            desk("d0", "$room", "2025-01-04", None),
        ])
        .await
        .unwrap();
    assert_eq!((allocated.inserted, allocated.existing), (4, 0));
    let path = |d: &Document| d.get_array("sitePath").unwrap().clone();
    assert_eq!(
        path(&one(&db, "nw3_slot_desks", "d1").await),
        vec![Bson::from("$site"), Bson::from("b.c")]
    );
    assert_eq!(
        path(&one(&db, "nw3_slot_desks", "d2").await),
        vec![Bson::from("$site")]
    );
    assert_eq!(
        path(&one(&db, "nw3_slot_desks", "d0").await),
        Vec::<Bson>::new()
    );
    let room = one(&db, "nw3_slot_rooms", "$room").await;
    assert_eq!(
        room.get_array("desks").unwrap(),
        &vec![
            line("d1", "2025-01-01", None),
            line("d2", "2025-01-02", None)
        ]
    );
    assert_eq!(int(&room, "deskCount"), 4);
    // Again: nothing new, nothing moved.
    let again = slots
        .allocate(vec![desk("d1", "$room", "2025-01-01", Some("b.c"))])
        .await
        .unwrap();
    assert_eq!((again.inserted, again.existing), (0, 1));
    assert_eq!(
        int(&one(&db, "nw3_slot_rooms", "$room").await, "deskCount"),
        4
    );
    slot_checks(&db).await;

    // A node that does not exist: NotFound of the node, nothing written.
    let before = snapshot(&db, &SLOT).await;
    match slots
        .allocate(vec![desk("d9", "$room", "2025-01-09", Some("nowhere"))])
        .await
    {
        Err(e) if e.is_no_node() => {}
        other => panic!("missing node: {other:?}"),
    }
    assert_eq!(snapshot(&db, &SLOT).await, before);
    // A slot that is not free: InvalidValue, nothing written.
    let mut taken = desk("d8", "$room", "2025-01-08", None);
    taken.booked_by = Some("$someone".into());
    match slots.allocate(vec![taken]).await {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("not free: {other:?}"),
    }
    assert_eq!(snapshot(&db, &SLOT).await, before);
}

#[tokio::test]
async fn slot_book_cancel_release_keep_the_subset_with_hostile_values() {
    let db = synced("nw3_slot_book", "nw3_slot").await;
    slot_setup(&db).await;
    let slots = SDesk::collection(&db).slots();
    slots
        .allocate(vec![
            desk("d1", "$room", "2025-01-01", Some("b.c")),
            desk("d2", "$room", "2025-01-02", None),
            desk("d3", "$room", "2025-01-03", Some("$site")),
        ])
        .await
        .unwrap();
    let long = "$".repeat(50_000);
    let booked = slots.book("$room", "2025-01-01", "$where").await.unwrap();
    assert_eq!(booked.booked_by.as_deref(), Some("$where"));
    slots
        .book("$room", "2025-01-02", long.as_str())
        .await
        .unwrap();
    let room = one(&db, "nw3_slot_rooms", "$room").await;
    assert_eq!(
        room.get_array("desks").unwrap(),
        &vec![
            line("d1", "2025-01-01", Some("$where")),
            line("d2", "2025-01-02", Some(&long))
        ]
    );
    slot_checks(&db).await;

    let before = snapshot(&db, &SLOT).await;
    for (what, r) in [
        (
            "holder operator",
            slots
                .book("$room", "2025-01-03", op_doc())
                .await
                .map(|_| ()),
        ),
        (
            "cancel holder operator",
            slots
                .cancel("$room", "2025-01-01", op_doc())
                .await
                .map(|_| ()),
        ),
        (
            "book_all with an operator holder",
            slots
                .book_all(&[("$room", "2025-01-03")], op_doc())
                .await
                .map(|_| ()),
        ),
    ] {
        match r {
            Err(Error::InvalidValue { .. }) => {}
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(snapshot(&db, &SLOT).await, before, "{what}");
    }
    match slots.cancel("$room", "2025-01-01", "someone else").await {
        Err(Error::NotHolder { holder, .. }) => assert_eq!(*holder, Bson::from("$where")),
        other => panic!("{other:?}"),
    }
    match slots.book("$room", "2025-01-01", "other").await {
        Err(Error::AlreadyBooked { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(&db, &SLOT).await, before);

    slots.cancel("$room", "2025-01-01", "$where").await.unwrap();
    slots.release("$room", "2025-01-02").await.unwrap();
    slots
        .book_all(&[("$room", "2025-01-03"), ("$room", "2025-01-01")], "")
        .await
        .unwrap();
    let room = one(&db, "nw3_slot_rooms", "$room").await;
    assert_eq!(
        room.get_array("desks").unwrap(),
        &vec![
            line("d1", "2025-01-01", Some("")),
            line("d2", "2025-01-02", None)
        ]
    );
    assert_eq!(int(&room, "deskCount"), 3);
    assert_eq!(
        one(&db, "nw3_slot_desks", "d3")
            .await
            .get_str("bookedBy")
            .unwrap(),
        ""
    );
    slot_checks(&db).await;
}

// ---------------------------------------------------------------------------------------------
// Group nw3_can: a guest (extended-reference source whose copied fields include its attribute
// array) holds seats of a grid through the copy; the show counts its seats.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_can", collection = "nw3_can_guests")]
#[extended_ref(GuestRef(name, prefs))]
pub struct NGuest {
    #[serde(rename = "_id")]
    pub id: i64,
    pub name: String,
    #[attribute]
    pub prefs: Vec<Spec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_can", collection = "nw3_can_seats")]
#[preallocated(resource = show, slot = seat, holder = booked_by)]
pub struct NSeat {
    #[serde(rename = "_id")]
    pub id: String,
    pub show: String,
    pub seat: i32,
    #[extended_ref(propagate)]
    pub booked_by: Option<GuestRef>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_can", collection = "nw3_can_shows")]
pub struct NShow {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = NSeat, by = show)]
    pub seats: i64,
}

const CAN: [&str; 3] = ["nw3_can_guests", "nw3_can_seats", "nw3_can_shows"];

#[tokio::test]
async fn can_cancel_finds_the_holder_copy_by_id_after_a_rename_and_an_attribute_set() {
    let db = synced("nw3_can_rename", "nw3_can").await;
    let ada = NGuest {
        id: 1,
        name: "Ada".into(),
        prefs: vec![],
    };
    let bob = NGuest {
        id: 2,
        name: "{\"$gt\": \"\"}".into(),
        prefs: vec![],
    };
    NGuest::collection(&db)
        .raw()
        .insert_many([&ada, &bob])
        .await
        .unwrap();
    NShow::collection(&db)
        .raw()
        .insert_one(NShow {
            id: "$show.x".into(),
            seats: 0,
        })
        .await
        .unwrap();
    let slots = NSeat::collection(&db).slots();
    slots
        .allocate((1..=2).map(|n| NSeat {
            id: format!("seat{n}"),
            show: "$show.x".into(),
            seat: n,
            booked_by: None,
        }))
        .await
        .unwrap();
    assert_eq!(int(&one(&db, "nw3_can_shows", "$show.x").await, "seats"), 2);
    let old_ada = bson::serialize_to_bson(&GuestRef::from(&ada)).unwrap();
    let booked = slots.book("$show.x", 1, old_ada.clone()).await.unwrap();
    assert_eq!(
        booked.booked_by.as_ref().map(|g| g.name.as_str()),
        Some("Ada")
    );

    // Rename, and an attribute set: both copied into the seat.
    NGuest::collection(&db)
        .update(1, doc! { "$set": { "name": "$set" } })
        .await
        .unwrap();
    NGuest::collection(&db)
        .attributes(NGuest::FIELDS.prefs)
        .set(1, &spec("diet", "$veg"))
        .await
        .unwrap();
    assert_eq!(
        one(&db, "nw3_can_seats", "seat1")
            .await
            .get_document("bookedBy")
            .unwrap(),
        &doc! { "_id": 1_i64, "name": "$set", "prefs": [{ "name": "diet", "value": "$veg" }] }
    );
    clean(
        "references",
        NGuest::collection(&db).references().check().await.unwrap(),
    );

    // Someone else's copy, and operator documents, are refused with nothing written.
    let bob_ref = bson::serialize_to_bson(&GuestRef::from(&bob)).unwrap();
    let before = snapshot(&db, &CAN).await;
    match slots.cancel("$show.x", 1, bob_ref.clone()).await {
        Err(Error::NotHolder { holder, .. }) => {
            assert_eq!(holder.as_document().unwrap().get_i64("_id").unwrap(), 1);
        }
        other => panic!("someone else: {other:?}"),
    }
    for hostile in [
        Bson::Document(doc! { "_id": { "$gt": 0 } }),
        Bson::Document(doc! { "$gt": "" }),
        Bson::Document(doc! { "_id": 1_i64, "name": { "$ne": 1 } }),
    ] {
        match slots.cancel("$show.x", 1, hostile.clone()).await {
            Err(Error::InvalidValue { .. }) => {}
            other => panic!("{hostile}: {other:?}"),
        }
    }
    assert_eq!(snapshot(&db, &CAN).await, before);

    // The stale copy (old name, no prefs) still names Ada by `_id`.
    let freed = slots.cancel("$show.x", 1, old_ada).await.unwrap();
    assert!(freed.booked_by.is_none());
    assert_eq!(
        one(&db, "nw3_can_seats", "seat1").await.get("bookedBy"),
        Some(&Bson::Null)
    );
    // Booked again with the fresh copy; cancelled with only the `_id` document.
    let ada_now: NGuest =
        bson::deserialize_from_document(one(&db, "nw3_can_guests", 1).await).unwrap();
    slots
        .book(
            "$show.x",
            2,
            bson::serialize_to_bson(&GuestRef::from(&ada_now)).unwrap(),
        )
        .await
        .unwrap();
    slots
        .cancel("$show.x", 2, doc! { "_id": 1_i64 })
        .await
        .unwrap();
    assert_eq!(
        one(&db, "nw3_can_seats", "seat2").await.get("bookedBy"),
        Some(&Bson::Null)
    );
    clean(
        "references",
        NGuest::collection(&db).references().check().await.unwrap(),
    );
    clean("slots", slots.check().await.unwrap());
    clean(
        "computed",
        NShow::collection(&db).computed().check().await.unwrap(),
    );
}

// ---------------------------------------------------------------------------------------------
// Group nw3_fix: repairs after raw writes. A blogger's outlier count is copied into cards and
// summed per agency; a shop's subset counters are summed per mall.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_bloggers")]
#[extended_ref(BloggerRef(posts_count))]
pub struct FBlogger {
    #[serde(rename = "_id")]
    pub id: String,
    pub agency_id: String,
    #[outlier(limit = 2, overflow = "nw3_fix_posts", capacity = 2, flag = is_outlier, count = posts_count, parent = "bloggerId")]
    pub posts: Vec<Note>,
    pub is_outlier: bool,
    pub posts_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_cards")]
pub struct FCard {
    #[serde(rename = "_id")]
    pub id: i64,
    #[extended_ref(propagate)]
    pub blogger: BloggerRef,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_agencies")]
pub struct FAgency {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(sum = FBlogger.posts_count, by = agency_id)]
    pub total_posts: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_reviews")]
pub struct FReview {
    #[serde(rename = "_id")]
    pub id: i64,
    pub shop_id: String,
    pub stars: i64,
    pub at: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct FReviewLine {
    pub review_id: i64,
    pub stars: i64,
    pub at: i64,
}

impl From<&FReview> for FReviewLine {
    fn from(r: &FReview) -> Self {
        FReviewLine {
            review_id: r.id,
            stars: r.stars,
            at: r.at,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_shops")]
pub struct FShop {
    #[serde(rename = "_id")]
    pub id: String,
    pub mall_id: String,
    #[subset(limit = 2, sort(at = -1), full = FReview, parent = shop_id)]
    pub recent: Vec<FReviewLine>,
    #[summary(count = recent)]
    pub review_count: i64,
    #[summary(sum = recent.stars)]
    pub star_sum: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_fix", collection = "nw3_fix_malls")]
pub struct FMall {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(sum = FShop.star_sum, by = mall_id)]
    pub stars: i64,
    #[computed(sum = FShop.review_count, by = mall_id)]
    pub reviews: i64,
}

async fn fix_bloggers(db: &TestDb) {
    FAgency::collection(db)
        .raw()
        .insert_many(["$ag1", "ag.2"].map(|id| FAgency {
            id: id.into(),
            total_posts: 0,
        }))
        .await
        .unwrap();
    let bloggers = FBlogger::collection(db);
    for (id, agency) in [
        ("b1", "$ag1"),
        ("b2", "$ag1"),
        ("b3", "ag.2"),
        ("b4", "ag.2"),
    ] {
        bloggers
            .insert(&FBlogger {
                id: id.into(),
                agency_id: agency.into(),
                posts: vec![],
                is_outlier: false,
                posts_count: 0,
            })
            .await
            .unwrap();
    }
    let posts = FBlogger::collection(db).outlier(FBlogger::FIELDS.posts);
    // b1: 5 posts (an outlier), b2: 1, b3: 3 (an outlier), b4: 1.
    for (id, n) in [("b1", 5), ("b2", 1), ("b3", 3), ("b4", 1)] {
        for i in 0..n {
            posts.push(id, note(&format!("${id}.{i}"))).await.unwrap();
        }
    }
    let cards = FCard::collection(db);
    for (n, id) in ["b1", "b2", "b3", "b4"].iter().enumerate() {
        let b: FBlogger =
            bson::deserialize_from_document(one(db, "nw3_fix_bloggers", *id).await).unwrap();
        cards
            .raw()
            .insert_one(FCard {
                id: n as i64 + 1,
                blogger: BloggerRef::from(&b),
            })
            .await
            .unwrap();
    }
    assert_eq!(
        int(&one(db, "nw3_fix_agencies", "$ag1").await, "totalPosts"),
        6
    );
    assert_eq!(
        int(&one(db, "nw3_fix_agencies", "ag.2").await, "totalPosts"),
        4
    );
}

async fn fix_blogger_expect(db: &TestDb) {
    for (id, n) in [("b1", 5), ("b2", 1), ("b3", 3), ("b4", 1)] {
        let b = one(db, "nw3_fix_bloggers", id).await;
        assert_eq!(int(&b, "postsCount"), n, "{id}");
        assert_eq!(b.get_bool("isOutlier").unwrap(), n > 2, "{id}");
    }
    assert_eq!(
        int(&one(db, "nw3_fix_agencies", "$ag1").await, "totalPosts"),
        6
    );
    assert_eq!(
        int(&one(db, "nw3_fix_agencies", "ag.2").await, "totalPosts"),
        4
    );
    for (card, n) in [(1, 5), (2, 1), (3, 3), (4, 1)] {
        assert_eq!(
            int(
                one(db, "nw3_fix_cards", card)
                    .await
                    .get_document("blogger")
                    .unwrap(),
                "postsCount"
            ),
            n,
            "card {card}"
        );
    }
    clean(
        "outlier",
        FBlogger::collection(db)
            .outlier(FBlogger::FIELDS.posts)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        FAgency::collection(db).computed().check().await.unwrap(),
    );
    clean(
        "references",
        FBlogger::collection(db).references().check().await.unwrap(),
    );
}

/// Raw writes: b1's count (an outlier) and b4's count and flag forged, and both agencies'
/// sums forged.
async fn fix_blogger_drift(db: &TestDb) {
    let raw = FBlogger::collection(db);
    raw.raw()
        .update_one(
            doc! { "_id": "b1" },
            doc! { "$set": { "postsCount": 99_i64 } },
        )
        .await
        .unwrap();
    raw.raw()
        .update_one(
            doc! { "_id": "b4" },
            doc! { "$set": { "postsCount": -7_i64, "isOutlier": true } },
        )
        .await
        .unwrap();
    FAgency::collection(db)
        .raw()
        .update_many(doc! {}, doc! { "$set": { "totalPosts": 12345_i64 } })
        .await
        .unwrap();
}

#[tokio::test]
async fn fix_outlier_repair_then_computed_repair_leaves_sums_and_copies_right() {
    let db = synced("nw3_fix_outlier_first", "nw3_fix").await;
    fix_bloggers(&db).await;
    fix_blogger_drift(&db).await;
    let r = FBlogger::collection(&db)
        .outlier(FBlogger::FIELDS.posts)
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    let r = FAgency::collection(&db).computed().repair().await.unwrap();
    assert!(r.is_clean(), "{r}");
    let r = FBlogger::collection(&db)
        .references()
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    fix_blogger_expect(&db).await;
}

#[tokio::test]
async fn fix_computed_repair_then_outlier_repair_leaves_sums_and_copies_right() {
    let db = synced("nw3_fix_computed_first", "nw3_fix").await;
    fix_bloggers(&db).await;
    fix_blogger_drift(&db).await;
    let r = FAgency::collection(&db).computed().repair().await.unwrap();
    assert!(r.is_clean(), "{r}");
    // The computed repair summed the forged counts: 99 + 1 and 3 + -7.
    assert_eq!(
        int(&one(&db, "nw3_fix_agencies", "$ag1").await, "totalPosts"),
        100
    );
    let r = FBlogger::collection(&db)
        .outlier(FBlogger::FIELDS.posts)
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    // The outlier repair's writes rebuild the sums from the sources (not by the difference).
    let r = FBlogger::collection(&db)
        .references()
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    fix_blogger_expect(&db).await;
}

#[tokio::test]
async fn fix_outlier_repair_alone_rebuilds_the_sum_it_derives() {
    let db = synced("nw3_fix_outlier_alone", "nw3_fix").await;
    fix_bloggers(&db).await;
    // Only the agency's sum and one count forged: the outlier repair's write of b1's count
    // rebuilds $ag1's sum from its sources.
    FBlogger::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "b1" },
            doc! { "$set": { "postsCount": 2_i64 } },
        )
        .await
        .unwrap();
    FAgency::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "$ag1" },
            doc! { "$set": { "totalPosts": 0_i64 } },
        )
        .await
        .unwrap();
    let r = FBlogger::collection(&db)
        .outlier(FBlogger::FIELDS.posts)
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    assert_eq!(
        int(&one(&db, "nw3_fix_bloggers", "b1").await, "postsCount"),
        5
    );
    assert_eq!(
        int(&one(&db, "nw3_fix_agencies", "$ag1").await, "totalPosts"),
        6,
        "the repair's write rebuilds the sum from b1 (5) and b2 (1)"
    );
    assert_eq!(
        int(
            one(&db, "nw3_fix_cards", 1)
                .await
                .get_document("blogger")
                .unwrap(),
            "postsCount"
        ),
        5
    );
}

async fn fix_shops(db: &TestDb) {
    FMall::collection(db)
        .raw()
        .insert_many(["m.1", "$m2"].map(|id| FMall {
            id: id.into(),
            stars: 0,
            reviews: 0,
        }))
        .await
        .unwrap();
    let shops = FShop::collection(db);
    for (id, mall) in [("$s1", "m.1"), ("s2", "m.1"), ("s3", "$m2")] {
        shops
            .insert(&FShop {
                id: id.into(),
                mall_id: mall.into(),
                recent: vec![],
                review_count: 0,
                star_sum: 0,
            })
            .await
            .unwrap();
    }
    let sub = FShop::collection(db).subset(FShop::FIELDS.recent);
    let mut n = 0;
    for (shop, stars) in [("$s1", [5, 4, 3]), ("s2", [1, 2, 0]), ("s3", [2, 2, 2])] {
        for s in stars {
            n += 1;
            sub.push(
                shop,
                FReview {
                    id: n,
                    shop_id: shop.into(),
                    stars: s,
                    at: n,
                    text: format!("$text {n}"),
                },
            )
            .await
            .unwrap();
        }
    }
    let m1 = one(db, "nw3_fix_malls", "m.1").await;
    assert_eq!(int(&m1, "stars"), 15);
    assert_eq!(int(&m1, "reviews"), 6);
}

/// Raw writes: a review inserted and another deleted around the subset, a shop's counters
/// forged, the malls' sums forged.
async fn fix_shop_drift(db: &TestDb) {
    FReview::collection(db)
        .raw()
        .insert_one(FReview {
            id: 100,
            shop_id: "$s1".into(),
            stars: 10,
            at: 100,
            text: "raw".into(),
        })
        .await
        .unwrap();
    FReview::collection(db)
        .raw()
        .delete_one(doc! { "_id": 9_i64 })
        .await
        .unwrap();
    FShop::collection(db)
        .raw()
        .update_one(
            doc! { "_id": "s2" },
            doc! { "$set": { "starSum": 1000_i64, "reviewCount": 0_i64 } },
        )
        .await
        .unwrap();
    FMall::collection(db)
        .raw()
        .update_many(
            doc! {},
            doc! { "$set": { "stars": -1_i64, "reviews": -1_i64 } },
        )
        .await
        .unwrap();
}

async fn fix_shop_expect(db: &TestDb) {
    let s1 = one(db, "nw3_fix_shops", "$s1").await;
    assert_eq!(int(&s1, "reviewCount"), 4);
    assert_eq!(int(&s1, "starSum"), 22);
    assert_eq!(
        s1.get_array("recent").unwrap(),
        &vec![
            Bson::Document(doc! { "reviewId": 100_i64, "stars": 10_i64, "at": 100_i64 }),
            Bson::Document(doc! { "reviewId": 3_i64, "stars": 3_i64, "at": 3_i64 }),
        ]
    );
    let s2 = one(db, "nw3_fix_shops", "s2").await;
    assert_eq!(int(&s2, "reviewCount"), 3);
    assert_eq!(int(&s2, "starSum"), 3);
    let s3 = one(db, "nw3_fix_shops", "s3").await;
    assert_eq!(int(&s3, "reviewCount"), 2);
    assert_eq!(int(&s3, "starSum"), 4);
    let m1 = one(db, "nw3_fix_malls", "m.1").await;
    assert_eq!(int(&m1, "stars"), 25);
    assert_eq!(int(&m1, "reviews"), 7);
    let m2 = one(db, "nw3_fix_malls", "$m2").await;
    assert_eq!(int(&m2, "stars"), 4);
    assert_eq!(int(&m2, "reviews"), 2);
    clean(
        "subset",
        FShop::collection(db)
            .subset(FShop::FIELDS.recent)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        FMall::collection(db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn fix_subset_repair_then_computed_repair_leaves_sums_right() {
    let db = synced("nw3_fix_subset_first", "nw3_fix").await;
    fix_shops(&db).await;
    fix_shop_drift(&db).await;
    let r = FShop::collection(&db)
        .subset(FShop::FIELDS.recent)
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    let r = FMall::collection(&db).computed().repair().await.unwrap();
    assert!(r.is_clean(), "{r}");
    fix_shop_expect(&db).await;
}

#[tokio::test]
async fn fix_computed_repair_then_subset_repair_leaves_sums_right() {
    let db = synced("nw3_fix_subset_last", "nw3_fix").await;
    fix_shops(&db).await;
    fix_shop_drift(&db).await;
    let r = FMall::collection(&db).computed().repair().await.unwrap();
    assert!(r.is_clean(), "{r}");
    let r = FShop::collection(&db)
        .subset(FShop::FIELDS.recent)
        .repair()
        .await
        .unwrap();
    assert!(r.is_clean(), "{r}");
    // No computed repair after the subset's: its writes rebuilt the malls' sums.
    fix_shop_expect(&db).await;
}

#[tokio::test]
async fn fix_subset_push_past_i64_in_its_own_sum_is_invalid_value() {
    let db = synced("nw3_fix_subset_own_overflow", "nw3_fix").await;
    fix_shops(&db).await;
    let colls = ["nw3_fix_shops", "nw3_fix_reviews", "nw3_fix_malls"];
    let before = snapshot(&db, &colls).await;
    // $s1's starSum is 12: one more i64::MAX leaves the range.
    let r = FShop::collection(&db)
        .subset(FShop::FIELDS.recent)
        .push(
            "$s1",
            FReview {
                id: 500,
                shop_id: "$s1".into(),
                stars: i64::MAX,
                at: 500,
                text: String::new(),
            },
        )
        .await;
    assert_eq!(snapshot(&db, &colls).await, before, "written: {r:?}");
    assert!(matches!(r, Err(Error::InvalidValue { .. })), "{r:?}");
}

#[tokio::test]
async fn fix_subset_push_set_of_id_is_refused_before_sending() {
    let db = synced("nw3_fix_subset_set_id", "nw3_fix").await;
    fix_shops(&db).await;
    let colls = ["nw3_fix_shops", "nw3_fix_reviews", "nw3_fix_malls"];
    let before = snapshot(&db, &colls).await;
    let r = FShop::collection(&db)
        .subset(FShop::FIELDS.recent)
        .push(
            "s3",
            FReview {
                id: 502,
                shop_id: "s3".into(),
                stars: 1,
                at: 502,
                text: String::new(),
            },
        )
        .set(doc! { "_id": "other" })
        .await;
    assert_eq!(snapshot(&db, &colls).await, before, "written: {r:?}");
    assert!(matches!(r, Err(Error::InvalidKey { .. })), "{r:?}");
}

#[tokio::test]
async fn fix_subset_push_past_i64_in_a_derived_sum_and_hostile_set_keys_write_nothing() {
    let db = synced_unvalidated("nw3_fix_subset_overflow", "nw3_fix").await;
    fix_shops(&db).await;
    let colls = ["nw3_fix_shops", "nw3_fix_reviews", "nw3_fix_malls"];
    let before = snapshot(&db, &colls).await;
    let sub = FShop::collection(&db).subset(FShop::FIELDS.recent);
    // Within s2's own sum (3), but m.1's sum (15 over two shops) would leave the range.
    let r = sub
        .push(
            "s2",
            FReview {
                id: 501,
                shop_id: "s2".into(),
                stars: i64::MAX - 10,
                at: 501,
                text: String::new(),
            },
        )
        .await;
    assert_eq!(snapshot(&db, &colls).await, before, "written: {r:?}");
    assert!(matches!(r, Err(Error::InvalidValue { .. })), "{r:?}");
    // A `.set()` of a dotted, `$` or kept key: InvalidKey, nothing written.
    for set in [
        doc! { "a.b": 1 },
        doc! { "$x": 1 },
        doc! { "": 1 },
        doc! { "starSum": 1 },
        doc! { "recent": [] },
    ] {
        let r = sub
            .push(
                "s3",
                FReview {
                    id: 502,
                    shop_id: "s3".into(),
                    stars: 1,
                    at: 502,
                    text: String::new(),
                },
            )
            .set(set.clone())
            .await;
        assert!(
            matches!(r, Err(Error::InvalidKey { .. } | Error::KeptField { .. })),
            "{set}: {r:?}"
        );
        assert_eq!(snapshot(&db, &colls).await, before, "{set}");
    }
    // A `.set()` value with an operator key: stored literally, or refused with nothing written.
    let r = sub
        .push(
            "s3",
            FReview {
                id: 503,
                shop_id: "s3".into(),
                stars: 1,
                at: 503,
                text: String::new(),
            },
        )
        .set(doc! { "note": { "$gt": "" } })
        .await;
    match r {
        Ok(()) => {
            let s3 = one(&db, "nw3_fix_shops", "s3").await;
            assert_eq!(s3.get_document("note").unwrap(), &doc! { "$gt": "" });
            assert_eq!(int(&s3, "starSum"), 7);
            assert_eq!(int(&one(&db, "nw3_fix_malls", "$m2").await, "stars"), 7);
        }
        Err(Error::InvalidValue { .. }) | Err(Error::InvalidKey { .. }) => {
            assert_eq!(snapshot(&db, &colls).await, before)
        }
        Err(e) => panic!("{e:?}"),
    }
    // A `.set()` of a plain field with hostile strings: stored as given.
    sub.push(
        "s3",
        FReview {
            id: 504,
            shop_id: "s3".into(),
            stars: 1,
            at: 504,
            text: "$text".into(),
        },
    )
    .set(doc! { "note": "$where", "empty": "" })
    .await
    .unwrap();
    let s3 = one(&db, "nw3_fix_shops", "s3").await;
    assert_eq!(s3.get_str("note").unwrap(), "$where");
    assert_eq!(s3.get_str("empty").unwrap(), "");
    let stars = int(&s3, "starSum");
    assert!(stars == 7 || stars == 8, "{s3}");
    assert_eq!(int(&one(&db, "nw3_fix_malls", "$m2").await, "stars"), stars);
    clean(
        "subset",
        FShop::collection(&db)
            .subset(FShop::FIELDS.recent)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        FMall::collection(&db).computed().check().await.unwrap(),
    );
}

// ---------------------------------------------------------------------------------------------
// A server error in a caller's transaction, over several patterns.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn tx_duplicate_key_in_a_caller_transaction_ends_it_and_keeps_nothing() {
    let db = synced("nw3_tx_dup", "nw3_rep").await;
    rep_setup(&db).await;
    let before = snapshot(&db, &REP).await;
    let tx = Transaction::start(&db).await.unwrap();
    let sales = RSale::collection(&db).in_transaction(&tx);
    let specs = RSeller::collection(&db)
        .attributes(RSeller::FIELDS.specs)
        .in_transaction(&tx);
    let notes = RSeller::collection(&db)
        .outlier(RSeller::FIELDS.notes)
        .in_transaction(&tx);
    let tree = RCat::collection(&db).tree().in_transaction(&tx);

    sales.insert(&rsale(3, "s1", 5, None)).await.unwrap();
    RSeller::collection(&db)
        .in_transaction(&tx)
        .update("s1", doc! { "$set": { "name": "in tx" } })
        .await
        .unwrap();
    specs.set("s1", &spec("size", "$xl")).await.unwrap();
    notes.push("s1", note("in tx")).await.unwrap();
    tree.insert(&rcat(4, "in-tx", Some("root"))).await.unwrap();
    assert_eq!(tx.ended(), None);
    // Sale 1 exists: the server refuses the insert, and ends the transaction.
    match sales.insert(&rsale(1, "s1", 1, None)).await {
        Err(Error::DuplicateKey { .. }) => {}
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(tx.ended(), Some("aborted by the server"));
    match specs.set("s1", &spec("after", 1)).await {
        Err(Error::TransactionEnded { how }) => assert_eq!(how, "aborted by the server"),
        other => panic!("bound handle after the end: {other:?}"),
    }
    match tx.commit().await {
        Err(e @ Error::TransactionEnded { .. }) => assert!(!e.is_transient(), "{e}"),
        other => panic!("commit: {other:?}"),
    }
    assert_eq!(snapshot(&db, &REP).await, before);
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db, &REP).await, before);
}

// ---------------------------------------------------------------------------------------------
// Group nw3_node: a tree node (keyed by name) that is an extended-reference source and a computed
// target; leaves that are holders in it, copy it and are counted by it.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_node", collection = "nw3_node_nodes")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
#[extended_ref(NNodeRef(name, label))]
pub struct NNode {
    #[serde(rename = "_id")]
    pub id: i64,
    pub name: String,
    pub label: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
    #[computed(count = NLeaf, by = node_id)]
    pub leaves: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nw3_node", collection = "nw3_node_leaves")]
#[in_tree(NNode, node = node, path = path)]
pub struct NLeaf {
    #[serde(rename = "_id")]
    pub id: i64,
    pub node: Option<String>,
    pub path: Vec<String>,
    pub node_id: Option<i64>,
    #[extended_ref(propagate)]
    pub node_ref: Option<NNodeRef>,
    #[serde(default)]
    #[outlier(limit = 1, overflow = "nw3_node_leaf_notes", capacity = 1, flag = busy, count = note_count, parent = "leafId")]
    pub notes: Vec<Note>,
    #[serde(default)]
    pub busy: bool,
    #[serde(default)]
    pub note_count: i64,
}

const NODE: [&str; 4] = [
    "nw3_node_nodes",
    "nw3_node_leaves",
    "nw3_node_nodes.tree",
    "nw3_node_leaf_notes",
];

fn nnode(id: i64, name: &str, parent: Option<&str>) -> NNode {
    NNode {
        id,
        name: name.into(),
        label: format!("${name}"),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        leaves: 0,
    }
}

async fn node_setup(db: &TestDb) -> Vec<NNode> {
    let tree = NNode::collection(db).tree();
    let long = format!("{}.$", "k".repeat(2000));
    let nodes = tree
        .insert_many(&[
            nnode(1, "root", None),
            nnode(2, "$in", Some("root")),
            nnode(3, &long, Some("$in")),
        ])
        .await
        .unwrap();
    let leaves = tree.holders::<NLeaf>();
    for (id, n) in [(1, &nodes[2]), (2, &nodes[1])] {
        leaves
            .insert(&NLeaf {
                id,
                node: Some(n.name.clone()),
                path: vec![],
                node_id: Some(n.id),
                node_ref: Some(NNodeRef::from(n)),
                notes: vec![],
                busy: false,
                note_count: 0,
            })
            .await
            .unwrap();
    }
    assert_eq!(
        one(db, "nw3_node_leaves", 1)
            .await
            .get_array("path")
            .unwrap(),
        &vec![
            Bson::from("root"),
            Bson::from("$in"),
            Bson::from(long.clone())
        ]
    );
    assert_eq!(int(&one(db, "nw3_node_nodes", 3).await, "leaves"), 1);
    nodes
        .into_iter()
        .map(|mut n| {
            n.leaves = 1;
            n
        })
        .filter(|n| n.id != 1)
        .collect()
}

#[tokio::test]
async fn node_references_replace_of_a_tree_node_refuses_its_kept_fields() {
    let db = synced("nw3_node_replace", "nw3_node").await;
    let nodes = node_setup(&db).await;
    let before = snapshot(&db, &NODE).await;
    let stored = nodes[1].clone();
    let mut cases = Vec::new();
    let mut n = stored.clone();
    n.name = "renamed".into();
    cases.push(("key", n));
    let mut n = stored.clone();
    n.parent = Some("root".into());
    n.ancestors = vec!["root".into()];
    cases.push(("parent", n));
    let mut n = stored.clone();
    n.parent = None;
    n.ancestors = vec![];
    cases.push(("to the root", n));
    let mut n = stored.clone();
    n.ancestors = vec!["forged".into()];
    cases.push(("ancestors", n));
    let mut n = stored.clone();
    n.leaves = 5;
    cases.push(("computed count", n));
    for (what, mut n) in cases {
        n.label = "changed".into();
        match NNode::collection(&db).replace(&n).await {
            Err(Error::KeptField { .. }) => {}
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(snapshot(&db, &NODE).await, before, "{what}");
    }
    // Only a field nobody keeps: the docs say both "a tree node replaced through References:
    // refused" and "the kept fields ride in the replace's filter, so a replace that keeps them
    // costs nothing more". Either way: done with the copies, or refused with nothing written.
    let mut n = stored.clone();
    n.label = "$new label".into();
    match NNode::collection(&db).replace(&n).await {
        Ok(_) => {
            assert_eq!(
                one(&db, "nw3_node_leaves", 1)
                    .await
                    .get_document("nodeRef")
                    .unwrap()
                    .get_str("label")
                    .unwrap(),
                "$new label"
            );
            clean("tree", NNode::collection(&db).tree().check().await.unwrap());
        }
        Err(Error::InvalidKey { .. }) => {
            assert_eq!(snapshot(&db, &NODE).await, before);
        }
        Err(e) => panic!("{e:?}"),
    }
}

#[tokio::test]
async fn node_computing_writes_of_holders_refuse_kept_fields_and_rename_follows() {
    let db = synced("nw3_node_computing", "nw3_node").await;
    let nodes = node_setup(&db).await;
    let leaves = NLeaf::collection(&db);
    let before = snapshot(&db, &NODE).await;
    // A holder inserted in a node through Computing: refused (Holders computes the path).
    let leaf = NLeaf {
        id: 3,
        node: Some("$in".into()),
        path: vec!["$in".into()],
        node_id: Some(2),
        node_ref: Some(NNodeRef::from(&nodes[0])),
        notes: vec![],
        busy: false,
        note_count: 0,
    };
    match leaves.insert(&leaf).await {
        Err(Error::Unsupported { .. }) => {}
        other => panic!("holder insert in a node: {other:?}"),
    }
    assert_eq!(snapshot(&db, &NODE).await, before);
    // Its node changed in a replace: refused.
    let stored: NLeaf =
        bson::deserialize_from_document(one(&db, "nw3_node_leaves", 2).await).unwrap();
    let mut moved = stored.clone();
    moved.node = Some("root".into());
    moved.path = vec!["root".into()];
    match leaves.replace(&moved).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("holder node replace: {other:?}"),
    }
    assert_eq!(snapshot(&db, &NODE).await, before);
    // The counted `by` moved to a node `_id` that does not exist: NotFound.
    let mut lost = stored.clone();
    lost.node_id = Some(99);
    match leaves.replace(&lost).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("missing target: {other:?}"),
    }
    assert_eq!(snapshot(&db, &NODE).await, before);
    // A holder in no node through Computing: accepted, counted.
    leaves
        .insert(&NLeaf {
            id: 4,
            node: None,
            path: vec![],
            node_id: Some(3),
            node_ref: Some(NNodeRef::from(&nodes[1])),
            notes: vec![],
            busy: false,
            note_count: 0,
        })
        .await
        .unwrap();
    assert_eq!(int(&one(&db, "nw3_node_nodes", 3).await, "leaves"), 2);
    // A rename rewrites paths, parent keys and copies.
    NNode::collection(&db)
        .tree()
        .rename("$in", "a.b")
        .await
        .unwrap();
    let l1 = one(&db, "nw3_node_leaves", 1).await;
    assert_eq!(
        l1.get_array("path").unwrap()[..2],
        [Bson::from("root"), Bson::from("a.b")]
    );
    let l2 = one(&db, "nw3_node_leaves", 2).await;
    assert_eq!(l2.get_str("node").unwrap(), "a.b");
    assert_eq!(
        l2.get_document("nodeRef").unwrap().get_str("name").unwrap(),
        "a.b"
    );
    clean("tree", NNode::collection(&db).tree().check().await.unwrap());
    clean(
        "references",
        NNode::collection(&db).references().check().await.unwrap(),
    );
    clean(
        "computed",
        NNode::collection(&db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn cas_whole_document_writes_refuse_two_way_sides_and_counts() {
    let db = synced("nw3_cas_replace", "nw3_cas").await;
    cas_tree(&db).await;
    let tree = COrg::collection(&db).tree();
    tree.holders::<CSquad>()
        .insert(&csquad("sq", "x"))
        .await
        .unwrap();
    tree.holders::<CSquad>()
        .insert(&csquad("sq2", "x"))
        .await
        .unwrap();
    let agents = CAgent::collection(&db);
    agents
        .insert(&cagent("ag", None, Some("sq")))
        .await
        .unwrap();
    let before = snapshot(&db, &CAS).await;
    let stored: CAgent =
        bson::deserialize_from_document(one(&db, "nw3_cas_agents", "ag").await).unwrap();
    // The child's side moved by a replace: the relation's own (assign).
    let mut moved = stored.clone();
    moved.squad = Some(Ref::new("sq2".to_owned()));
    match agents.replace(&moved).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("two-way side in a replace: {other:?}"),
    }
    let mut dropped = stored.clone();
    dropped.squad = None;
    match agents.replace(&dropped).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("two-way side emptied in a replace: {other:?}"),
    }
    // The same through an update.
    match agents
        .update("ag", doc! { "$set": { "squad": "sq2" } })
        .await
    {
        Err(Error::KeptField { .. }) => {}
        other => panic!("two-way side in an update: {other:?}"),
    }
    // The owner's array and count in a replace.
    let squads = CSquad::collection(&db);
    let sq: CSquad =
        bson::deserialize_from_document(one(&db, "nw3_cas_squads", "sq").await).unwrap();
    let mut forged = sq.clone();
    forged.members = vec![];
    match squads.replace(&forged).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("owner array in a replace: {other:?}"),
    }
    let mut forged = sq.clone();
    forged.agent_count = 0;
    match squads.replace(&forged).await {
        Err(Error::KeptField { .. }) => {}
        other => panic!("count in a replace: {other:?}"),
    }
    assert_eq!(snapshot(&db, &CAS).await, before);
    // A replace keeping every kept field, with hostile strings elsewhere: written.
    let mut renamed = stored.clone();
    renamed.name = "{\"$gt\": \"\"}.$".into();
    agents.replace(&renamed).await.unwrap();
    assert_eq!(
        one(&db, "nw3_cas_agents", "ag")
            .await
            .get_str("name")
            .unwrap(),
        "{\"$gt\": \"\"}.$"
    );
    // The move through the relation: the arrays and the counts follow.
    CAgent::collection(&db)
        .relation(CAgent::FIELDS.squad)
        .assign(&"ag".to_owned(), &"sq2".to_owned())
        .await
        .unwrap();
    assert_eq!(
        int(&one(&db, "nw3_cas_squads", "sq").await, "agentCount"),
        0
    );
    assert_eq!(
        int(&one(&db, "nw3_cas_squads", "sq2").await, "agentCount"),
        1
    );
    // An operator document as the owner: refused before anything is sent.
    let before = snapshot(&db, &CAS).await;
    match CAgent::collection(&db)
        .relation(CAgent::FIELDS.squad)
        .assign(&"ag".to_owned(), &"{\"$gt\": \"\"}".to_owned())
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("a missing owner named like an operator: {other:?}"),
    }
    assert_eq!(snapshot(&db, &CAS).await, before);
    cas_checks(&db).await;
}

#[tokio::test]
async fn tx_refusals_before_a_write_leave_the_caller_transaction_usable() {
    let db = synced("nw3_tx_refusals", "nw3_rep").await;
    rep_setup(&db).await;
    let tx = Transaction::start(&db).await.unwrap();
    let sales = RSale::collection(&db).in_transaction(&tx);
    let specs = RSeller::collection(&db)
        .attributes(RSeller::FIELDS.specs)
        .in_transaction(&tx);
    sales.insert(&rsale(3, "s1", 5, None)).await.unwrap();
    // Refused before anything is sent: the transaction goes on.
    assert!(matches!(
        sales
            .update(3, doc! { "$set": { "label": { "$gt": "" } } })
            .await,
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(tx.ended(), None, "after the refusal above line {}", line!());
    assert!(matches!(
        specs.set("s1", &spec("$k", 1)).await,
        Err(Error::InvalidKey { .. })
    ));
    assert_eq!(tx.ended(), None, "after the refusal above line {}", line!());
    assert!(matches!(
        RSeller::collection(&db)
            .in_transaction(&tx)
            .update("s1", doc! { "$set": { "total": 1 } })
            .await,
        Err(Error::KeptField { .. })
    ));
    assert_eq!(tx.ended(), None, "after the refusal above line {}", line!());
    let mut nan = rsale(4, "s1", 1, None);
    nan.tip = f64::NAN;
    assert!(matches!(
        sales.insert(&nan).await,
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(tx.ended(), None, "after the refusal above line {}", line!());
    assert_eq!(tx.ended(), None);
    specs.set("s1", &spec("k", "$v")).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(tx.ended(), Some("committed"));
    let seller = one(&db, "nw3_rep_sellers", "s1").await;
    assert_eq!(int(&seller, "total"), 35);
    assert_eq!(int(&seller, "sales"), 3);
    assert_eq!(seller.get_f64("tips").unwrap(), 1.5);
    assert_eq!(
        seller.get_array("specs").unwrap()[1],
        Bson::Document(doc! { "name": "k", "value": "$v" })
    );
    assert!(docs(&db, "nw3_rep_sales").await.len() == 3);
    assert_eq!(
        int(
            one(&db, "nw3_rep_listings", 1)
                .await
                .get_document("seller")
                .unwrap(),
            "total"
        ),
        35
    );
    match sales.insert(&rsale(6, "s1", 1, None)).await {
        Err(Error::TransactionEnded { how }) => assert_eq!(how, "committed"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tx_missing_count_target_in_a_caller_transaction_writes_nothing_of_it() {
    let db = synced("nw3_tx_missing_target", "nw3_rep").await;
    rep_setup(&db).await;
    let before = snapshot(&db, &REP).await;
    let tx = Transaction::start(&db).await.unwrap();
    let sales = RSale::collection(&db).in_transaction(&tx);
    sales.insert(&rsale(3, "s1", 5, None)).await.unwrap();
    match sales.insert(&rsale(4, "$nobody", 5, None)).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    // The count's target turns out missing when the count is written, after sale 4's insert:
    // the transaction is ended (`aborted after a refusal`) and nothing of it is kept.
    assert_eq!(tx.ended(), Some("aborted after a refusal"));
    match tx.commit().await {
        Err(e @ Error::TransactionEnded { .. }) => assert!(!e.is_transient()),
        other => panic!("commit: {other:?}"),
    }
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db, &REP).await, before);
}

#[tokio::test]
async fn slot_refusals_in_a_caller_transaction_keep_it_and_the_subset_commits_with_it() {
    let db = synced("nw3_slot_tx", "nw3_slot").await;
    slot_setup(&db).await;
    SDesk::collection(&db)
        .slots()
        .allocate(vec![
            desk("d1", "$room", "2025-01-01", Some("b.c")),
            desk("d2", "$room", "2025-01-02", None),
        ])
        .await
        .unwrap();
    let before = snapshot(&db, &SLOT).await;
    let tx = Transaction::start(&db).await.unwrap();
    let slots = SDesk::collection(&db).slots().in_transaction(&tx);
    slots.book("$room", "2025-01-01", "$a").await.unwrap();
    assert!(matches!(
        slots.book("$room", "2025-01-01", "$b").await,
        Err(Error::AlreadyBooked { .. })
    ));
    assert!(matches!(
        slots.book("$room", "2031-01-01", "$b").await,
        Err(e) if e.is_not_allocated()
    ));
    assert!(matches!(
        slots.book("$room", "2025-01-01", op_doc()).await,
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(tx.ended(), None);
    // Nothing visible outside before the commit.
    assert_eq!(snapshot(&db, &SLOT).await, before);
    tx.commit().await.unwrap();
    let room = one(&db, "nw3_slot_rooms", "$room").await;
    assert_eq!(
        room.get_array("desks").unwrap(),
        &vec![
            line("d1", "2025-01-01", Some("$a")),
            line("d2", "2025-01-02", None)
        ]
    );
    slot_checks(&db).await;
}

#[tokio::test]
async fn fix_deleting_an_outlier_through_computing_takes_its_overflow_and_its_sum() {
    let db = synced("nw3_fix_delete", "nw3_fix").await;
    fix_bloggers(&db).await;
    assert_eq!(
        db.collection::<Document>("nw3_fix_posts")
            .count_documents(doc! { "bloggerId": "b1" })
            .await
            .unwrap(),
        2,
        "b1's 3 overflowed posts in documents of capacity 2"
    );
    FBlogger::collection(&db).delete("b1").await.unwrap();
    let left: Vec<_> = docs(&db, "nw3_fix_posts")
        .await
        .iter()
        .map(|d| d.get_str("bloggerId").unwrap().to_owned())
        .collect();
    assert_eq!(left, ["b3"]);
    assert_eq!(
        int(&one(&db, "nw3_fix_agencies", "$ag1").await, "totalPosts"),
        1
    );
    // A deleted source leaves its copies as they are.
    assert_eq!(
        int(
            one(&db, "nw3_fix_cards", 1)
                .await
                .get_document("blogger")
                .unwrap(),
            "postsCount"
        ),
        5
    );
    clean(
        "outlier",
        FBlogger::collection(&db)
            .outlier(FBlogger::FIELDS.posts)
            .check()
            .await
            .unwrap(),
    );
    clean(
        "computed",
        FAgency::collection(&db).computed().check().await.unwrap(),
    );
}

#[tokio::test]
async fn tx_sum_overflow_in_a_caller_transaction_is_invalid_value_and_consistent() {
    let db = synced("nw3_tx_overflow", "nw3_rep").await;
    rep_setup(&db).await;
    let before = snapshot(&db, &REP).await;
    let tx = Transaction::start(&db).await.unwrap();
    let sales = RSale::collection(&db).in_transaction(&tx);
    sales.insert(&rsale(3, "s1", 5, None)).await.unwrap();
    match sales.insert(&rsale(5, "s1", i64::MAX, None)).await {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("{other:?}"),
    }
    match tx.ended() {
        None => {
            tx.commit().await.unwrap();
            assert_eq!(int(&one(&db, "nw3_rep_sellers", "s1").await, "total"), 35);
            assert_eq!(docs(&db, "nw3_rep_sales").await.len(), 3);
        }
        Some(_) => {
            match tx.commit().await {
                Err(e @ Error::TransactionEnded { .. }) => assert!(!e.is_transient()),
                other => panic!("commit: {other:?}"),
            }
            assert_eq!(snapshot(&db, &REP).await, before);
        }
    }
}

#[tokio::test]
async fn node_cascade_takes_a_holders_overflow_documents_and_counts_with_it() {
    let db = synced("nw3_node_cascade", "nw3_node").await;
    node_setup(&db).await;
    let notes = NLeaf::collection(&db).outlier(NLeaf::FIELDS.notes);
    for (leaf, n) in [(1, 3), (2, 2)] {
        for i in 0..n {
            notes.push(leaf, note(&format!("$n{i}.x"))).await.unwrap();
        }
    }
    // A leaf outside the cascade, in the root, with overflow documents too.
    let root: NNode = bson::deserialize_from_document(one(&db, "nw3_node_nodes", 1).await).unwrap();
    NNode::collection(&db)
        .tree()
        .holders::<NLeaf>()
        .insert(&NLeaf {
            id: 9,
            node: Some("root".into()),
            path: vec![],
            node_id: Some(1),
            node_ref: Some(NNodeRef::from(&root)),
            notes: vec![],
            busy: false,
            note_count: 0,
        })
        .await
        .unwrap();
    notes.push(9, note("a")).await.unwrap();
    notes.push(9, note("b")).await.unwrap();
    let count =
        |d: &Vec<Document>, leaf: i64| d.iter().filter(|o| int(o, "leafId") == leaf).count();
    let overflow = docs(&db, "nw3_node_leaf_notes").await;
    assert_eq!(
        (
            count(&overflow, 1),
            count(&overflow, 2),
            count(&overflow, 9)
        ),
        (2, 1, 1)
    );
    assert_eq!(notes.items(1).await.unwrap().len(), 3);

    NNode::collection(&db)
        .tree()
        .delete("$in", Deletion::Cascade)
        .await
        .unwrap();
    let overflow = docs(&db, "nw3_node_leaf_notes").await;
    assert_eq!(overflow.len(), 1, "{overflow:?}");
    assert_eq!(count(&overflow, 9), 1);
    let leaves: Vec<_> = docs(&db, "nw3_node_leaves")
        .await
        .iter()
        .map(|d| int(d, "_id"))
        .collect();
    assert_eq!(leaves, [9]);
    assert_eq!(int(&one(&db, "nw3_node_nodes", 1).await, "leaves"), 1);
    assert_eq!(notes.items(9).await.unwrap(), vec![note("a"), note("b")]);
    clean("tree", NNode::collection(&db).tree().check().await.unwrap());
    clean("outlier", notes.check().await.unwrap());
    clean(
        "computed",
        NNode::collection(&db).computed().check().await.unwrap(),
    );
}

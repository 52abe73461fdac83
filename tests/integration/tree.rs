//! The tree pattern against the server (seed 000, 树形模式): categories that know their ancestors,
//! products that copy their category's path, and moves, renames and deletions that keep every
//! copy right.

use std::collections::{BTreeSet, HashMap};

use bson::oid::ObjectId;
use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{tree::Deletion, Error, Missing, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

/// Seed 000's categories, named by their name (the products' paths hold names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Category {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

/// Seed 000's product: `directCategory` and `categoryPath`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[in_tree(Category, node = direct_category, path = category_path)]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    direct_category: String,
    category_path: Vec<String>,
}

/// A tree named by `_id`, whose nodes are also extended-reference sources, and a holder that
/// may sit in no folder at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors)]
#[extended_ref(FolderRef(title), derive(PartialEq))]
struct Folder {
    #[serde(rename = "_id")]
    id: ObjectId,
    title: String,
    parent: Option<ObjectId>,
    ancestors: Vec<ObjectId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[in_tree(Folder, node = folder_id, path = folder_path)]
struct File {
    #[serde(rename = "_id")]
    id: ObjectId,
    folder_id: Option<ObjectId>,
    folder_path: Vec<ObjectId>,
    #[extended_ref(propagate)]
    folder: Option<FolderRef>,
}

fn category(name: &str, parent: Option<&str>) -> Category {
    Category {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

fn product(name: &str, in_category: &str) -> Product {
    Product {
        id: ObjectId::new(),
        name: name.into(),
        direct_category: in_category.into(),
        category_path: vec![],
    }
}

async fn setup(name: &str) -> pattern_testkit::TestDb {
    let db = test_db(name).await;
    pattern_runtime::sync(&db)
        .models(&[
            Category::SCHEMA,
            Product::SCHEMA,
            Folder::SCHEMA,
            File::SCHEMA,
        ])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    db
}

/// Every document of a collection, by `_id`.
async fn snapshot(db: &mongodb::Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// Whether the server answers `filter` on `collection` through indexes only: no collection
/// scan in the winning plan (`explain`).
async fn indexed(db: &mongodb::Database, collection: &str, filter: Document) -> bool {
    let find = doc! { "find": collection, "filter": filter };
    let explain = db
        .run_command(doc! { "explain": find, "verbosity": "queryPlanner" })
        .await
        .unwrap();
    let plan = explain
        .get_document("queryPlanner")
        .unwrap()
        .get_document("winningPlan")
        .unwrap()
        .to_string();
    plan.contains("IXSCAN") && !plan.contains("COLLSCAN")
}

/// Checks every category and product against the parents, independently of `Tree::check`:
/// each category's ancestors are its parent chain, each product's path is its category's
/// ancestors then the category. Returns how many documents were checked.
async fn assert_no_stale_path(db: &mongodb::Database) -> usize {
    let categories = snapshot(db, "categories").await;
    let parent: HashMap<String, Option<String>> = categories
        .iter()
        .map(|c| {
            (
                c.get_str("name").unwrap().to_owned(),
                c.get_str("parent").ok().map(str::to_owned),
            )
        })
        .collect();
    let chain = |name: &str| -> Vec<String> {
        let mut out = vec![];
        let mut at = parent[name].clone();
        while let Some(p) = at {
            assert!(out.len() <= parent.len(), "the parents loop at {name}");
            out.push(p.clone());
            at = parent[&p].clone();
        }
        out.reverse();
        out
    };
    for c in &categories {
        let name = c.get_str("name").unwrap();
        let stored: Vec<String> = c
            .get_array("ancestors")
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(stored, chain(name), "the ancestors of {name}");
    }
    let products = snapshot(db, "products").await;
    for p in &products {
        let node = p.get_str("directCategory").unwrap();
        let mut expected = chain(node);
        expected.push(node.to_owned());
        let stored: Vec<String> = p
            .get_array("categoryPath")
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            stored,
            expected,
            "the path of {}",
            p.get_str("name").unwrap()
        );
    }
    categories.len() + products.len()
}

fn names<T>(items: &[T], name: impl Fn(&T) -> &str) -> BTreeSet<String> {
    items.iter().map(|i| name(i).to_owned()).collect()
}

fn set<const N: usize>(names: [&str; N]) -> BTreeSet<String> {
    names.into_iter().map(str::to_owned).collect()
}

/// The seed's chain (电子 > 计算机部件 > 存储 > 固态硬盘) with a few neighbours, and its products.
async fn seed_catalogue(db: &mongodb::Database) {
    let tree = Category::collection(db).tree();
    for (name, parent) in [
        ("电子", None),
        ("计算机部件", Some("电子")),
        ("手机", Some("电子")),
        ("存储", Some("计算机部件")),
        ("显卡", Some("计算机部件")),
        ("固态硬盘", Some("存储")),
        ("机械硬盘", Some("存储")),
    ] {
        tree.insert(&category(name, parent)).await.unwrap();
    }
    let products = tree.holders::<Product>();
    for (name, in_category) in [
        ("三星 1TB SSD", "固态硬盘"),
        ("西数 4TB HDD", "机械硬盘"),
        ("RTX 4070", "显卡"),
        ("群晖 NAS", "存储"),
        ("小米 14", "手机"),
    ] {
        products.insert(&product(name, in_category)).await.unwrap();
    }
}

#[tokio::test]
async fn the_seed_catalogue_answers_its_two_queries_and_stores_the_seed_shape() {
    let db = setup("tree_seed").await;
    seed_catalogue(&db).await;
    let tree = Category::collection(&db).tree();
    let products = tree.holders::<Product>();

    // db.products.find({ categoryPath: "计算机部件" }) and ({ directCategory: "固态硬盘" })
    let under = products.under("计算机部件").await.unwrap();
    assert_eq!(
        names(&under, |p| &p.name),
        set(["RTX 4070", "群晖 NAS", "三星 1TB SSD", "西数 4TB HDD"])
    );
    let direct = products.directly_in("固态硬盘").await.unwrap();
    assert_eq!(names(&direct, |p| &p.name), set(["三星 1TB SSD"]));
    assert_eq!(products.directly_in("存储").await.unwrap().len(), 1);

    // The stored product is the seed's document.
    let ssd = &direct[0];
    let stored = db
        .collection::<Document>("products")
        .find_one(doc! { "_id": ssd.id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored,
        doc! {
            "_id": ssd.id,
            "name": "三星 1TB SSD",
            "directCategory": "固态硬盘",
            "categoryPath": ["电子", "计算机部件", "存储", "固态硬盘"],
        }
    );

    // The tree's own reads.
    let children = tree.children("计算机部件").await.unwrap();
    assert_eq!(names(&children, |c| &c.name), set(["存储", "显卡"]));
    let descendants = tree.descendants("计算机部件").await.unwrap();
    assert_eq!(
        names(&descendants, |c| &c.name),
        set(["固态硬盘", "存储", "显卡", "机械硬盘"])
    );
    assert!(tree.subtree("无").await.unwrap().is_empty());
    let subtree = tree.subtree("计算机部件").await.unwrap();
    assert_eq!(subtree[0].name, "计算机部件", "the node comes first");
    assert_eq!(
        names(&subtree, |c| &c.name),
        set(["固态硬盘", "存储", "显卡", "机械硬盘", "计算机部件"])
    );
    let ancestors = tree.ancestors("固态硬盘").await.unwrap();
    let ancestors: Vec<&str> = ancestors.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(ancestors, ["电子", "计算机部件", "存储"], "root first");
    assert_eq!(
        tree.path("固态硬盘").await.unwrap(),
        ["电子", "计算机部件", "存储", "固态硬盘"]
    );
    assert!(tree.ancestors("电子").await.unwrap().is_empty());
    assert!(matches!(
        tree.ancestors("无").await,
        Err(e) if e.is_no_node()
    ));

    // Declared and synced: parent, ancestors, the unique key; the holder's node and path.
    let index_names = |coll: &'static str| {
        let db = db.clone();
        async move {
            pattern_runtime::sync::list_indexes(&db, coll)
                .await
                .unwrap()
                .iter()
                .map(|i| i.get_str("name").unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let on_categories = index_names("categories").await;
    for name in ["parent_1", "ancestors_1", "name_1"] {
        assert!(
            on_categories.contains(&name.to_owned()),
            "{name} in {on_categories:?}"
        );
    }
    // Each read is one query through an index.
    for (collection, filter) in [
        ("products", doc! { "categoryPath": "计算机部件" }),
        ("products", doc! { "directCategory": "固态硬盘" }),
        ("categories", doc! { "parent": "计算机部件" }),
        (
            "categories",
            doc! { "$or": [ { "name": "计算机部件" }, { "ancestors": "计算机部件" } ] },
        ),
    ] {
        assert!(
            indexed(&db, collection, filter.clone()).await,
            "{collection} {filter}"
        );
    }
    let on_products = index_names("products").await;
    for name in ["directCategory_1", "categoryPath_1"] {
        assert!(
            on_products.contains(&name.to_owned()),
            "{name} in {on_products:?}"
        );
    }
    let schema = Category::SCHEMA
        .spec::<pattern_runtime::tree::TreeSpec>()
        .unwrap();
    assert_eq!(
        (schema.key(), schema.parent(), schema.ancestors()),
        ("name", "parent", "ancestors")
    );
    assert_eq!(
        Product::SCHEMA
            .specs::<pattern_runtime::tree::HolderSpec>()
            .next()
            .unwrap()
            .path(),
        "categoryPath"
    );
    assert_eq!(assert_no_stale_path(&db).await, 12);
    assert!(tree.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn a_missing_parent_or_a_taken_key_writes_nothing() {
    let db = setup("tree_insert_errors").await;
    seed_catalogue(&db).await;
    let tree = Category::collection(&db).tree();
    let before = snapshot(&db, "categories").await;
    let err = tree
        .insert(&category("内存", Some("不存在")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotFound { missing, .. } if **missing == Missing::Node { key: "name", value: Bson::from("不存在") }),
        "{err}"
    );
    let err = tree
        .insert(&category("存储", Some("电子")))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DuplicateKey { .. }), "{err}");
    // A batch is all or nothing: its second node names a missing parent.
    let err = tree
        .insert_many(&[
            category("内存", Some("计算机部件")),
            category("DDR5", Some("无")),
        ])
        .await
        .unwrap_err();
    assert!(err.is_no_node(), "{err}");
    assert_eq!(snapshot(&db, "categories").await, before);
    // A product in a missing category is refused too.
    let err = tree
        .holders::<Product>()
        .insert(&product("无名", "无"))
        .await
        .unwrap_err();
    assert!(err.is_no_node(), "{err}");
    assert_eq!(snapshot(&db, "products").await.len(), 5);
    // A batch of products with one in a missing category writes none of them.
    let err = tree
        .holders::<Product>()
        .insert_many(&[product("有名", "显卡"), product("无名", "无")])
        .await
        .unwrap_err();
    assert!(err.is_no_node(), "{err}");
    assert_eq!(snapshot(&db, "products").await.len(), 5);
    // A batch may name parents earlier in itself.
    let stored = tree
        .insert_many(&[
            category("内存", Some("计算机部件")),
            category("DDR5", Some("内存")),
        ])
        .await
        .unwrap();
    assert_eq!(stored[1].ancestors, ["电子", "计算机部件", "内存"]);
}

/// 1 000 categories, 10 000 products: `a0`'s subtree holds 100 categories and 1 000 products.
async fn big_tree(db: &mongodb::Database) -> Vec<Category> {
    let mut nodes = vec![category("root", None), category("a0", Some("root"))];
    // a0's subtree: 99 more, each under an earlier one (three children each).
    for i in 1..100 {
        let parent = format!("a{}", (i - 1) / 3);
        nodes.push(category(&format!("a{i}"), Some(&parent)));
    }
    // The rest: b0 and 898 under it, built the same way.
    nodes.push(category("b0", Some("root")));
    for i in 1..899 {
        let parent = format!("b{}", (i - 1) / 3);
        nodes.push(category(&format!("b{i}"), Some(&parent)));
    }
    assert_eq!(nodes.len(), 1000);
    let stored = Category::collection(db)
        .tree()
        .insert_many(&nodes)
        .await
        .unwrap();
    // Products: ten per category, placed in one insert (the paths read in one query).
    let products: Vec<Product> = stored
        .iter()
        .cycle()
        .take(10_000)
        .enumerate()
        .map(|(i, c)| product(&format!("p{i}"), &c.name))
        .collect();
    Category::collection(db)
        .tree()
        .holders::<Product>()
        .insert_many(&products)
        .await
        .unwrap();
    stored
}

#[tokio::test]
async fn moving_a_100_node_subtree_rewrites_exactly_its_copies_or_nothing() {
    let db = setup("tree_move_big").await;
    big_tree(&db).await;
    let tree = Category::collection(&db).tree();
    assert_eq!(assert_no_stale_path(&db).await, 11_000);

    // A failure in the middle: the lock and the categories' update go through, the products'
    // update fails. Everything is as before.
    let categories = snapshot(&db, "categories").await;
    let products = snapshot(&db, "products").await;
    db.fail_command_after(
        &["update"],
        2,
        doc! { "errorCode": 2, "errmsg": "injected" },
    )
    .await;
    let err = tree.move_under("a0", "b500").await.unwrap_err();
    db.fail_command_off().await;
    assert_eq!(err.code(), Some(2), "{err}");
    assert!(
        snapshot(&db, "categories").await == categories,
        "a category changed"
    );
    assert!(
        snapshot(&db, "products").await == products,
        "a product changed"
    );

    // The move: exactly a0's 100 categories and their 1 000 products.
    let moved = tree.move_under("a0", "b500").await.unwrap();
    let counts: Vec<(&str, u64, u64)> = moved
        .copies
        .iter()
        .map(|c| (c.collection, c.matched, c.modified))
        .collect();
    assert_eq!(counts, [("categories", 100, 100), ("products", 1000, 1000)]);
    let a33 = tree.get("a33").await.unwrap().unwrap();
    assert_eq!(
        a33.ancestors,
        ["root", "b0", "b1", "b5", "b18", "b55", "b166", "b500", "a0", "a3", "a10"]
    );
    assert_eq!(assert_no_stale_path(&db).await, 11_000);
    let check = tree.check().await.unwrap();
    assert_eq!(check.examined, 1000 + 10_000);
    assert!(check.is_clean(), "{check}");
    // Under b500 now: its own 10 products and a0's 1 000.
    assert_eq!(
        tree.holders::<Product>().under("b500").await.unwrap().len(),
        1010
    );

    // Under itself or its own descendant: a typed error, nothing written.
    let categories = snapshot(&db, "categories").await;
    for under in ["a0", "a33"] {
        let err = tree.move_under("a0", under).await.unwrap_err();
        assert!(matches!(err, Error::Cycle { .. }), "{err}");
    }
    assert!(matches!(
        tree.move_under("a0", "nowhere").await,
        Err(e) if e.is_no_node()
    ));
    assert!(
        snapshot(&db, "categories").await == categories,
        "a category changed"
    );
}

#[tokio::test]
async fn two_moves_that_would_make_a_cycle_together_cannot_both_succeed() {
    let db = setup("tree_cycle_race").await;
    let tree = Category::collection(&db).tree();
    tree.insert(&category("root", None)).await.unwrap();
    for round in 0..12 {
        let (x, y, z) = (
            format!("x{round}"),
            format!("y{round}"),
            format!("z{round}"),
        );
        tree.insert_many(&[
            category(&x, Some("root")),
            category(&y, Some("root")),
            category(&z, Some("root")),
        ])
        .await
        .unwrap();
        // Two writers: x under y, y under x. Three writers: a ring.
        let outcomes = if round % 2 == 0 {
            let (a, b) = tokio::join!(
                tree.move_under(x.as_str(), y.as_str()),
                tree.move_under(y.as_str(), x.as_str())
            );
            vec![a, b]
        } else {
            let (a, b, c) = tokio::join!(
                tree.move_under(x.as_str(), y.as_str()),
                tree.move_under(y.as_str(), z.as_str()),
                tree.move_under(z.as_str(), x.as_str())
            );
            vec![a, b, c]
        };
        let failed: Vec<&Error> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
        assert_eq!(failed.len(), 1, "round {round}: {outcomes:?}");
        assert!(matches!(failed[0], Error::Cycle { .. }), "{}", failed[0]);
    }
    // Still a tree: every chain ends at the root, every ancestors list is its chain.
    assert_no_stale_path(&db).await;
    assert!(tree.check().await.unwrap().is_clean());
}

/// Which change of the shape runs while holders are placed.
#[derive(Debug, Clone, Copy)]
enum Change {
    Move,
    Rename,
    DeleteReparent,
    DeleteLeafOnly,
}

/// Holders inserted while a change of the shape is between its writes and its commit (held
/// there by a fail point): the change's writes ran before them, so they carry the old path (or
/// node) until the change ends by sending its holder writes again. Inserts into the changed
/// node itself may fail with `NotFound` of the node once it is renamed or deleted; every holder stored ends
/// with the right node and path.
#[tokio::test]
async fn holders_placed_while_the_tree_changes_end_with_the_right_path() {
    let db = setup("tree_place_race").await;
    let tree = Category::collection(&db).tree();
    let products = tree.holders::<Product>();
    let mut stored = 0;
    for (round, change) in [
        Change::Move,
        Change::Rename,
        Change::DeleteReparent,
        Change::DeleteLeafOnly,
    ]
    .into_iter()
    .enumerate()
    {
        let name = |n: &str| format!("{n}{round}");
        let (root, left, right, node, leaf) = (
            name("root"),
            name("left"),
            name("right"),
            name("node"),
            name("leaf"),
        );
        tree.insert_many(&[
            category(&root, None),
            category(&left, Some(&root)),
            category(&right, Some(&root)),
            category(&node, Some(&left)),
            category(&leaf, Some(&node)),
        ])
        .await
        .unwrap();
        if matches!(change, Change::DeleteLeafOnly) {
            // A leaf, with nothing in it yet: the products placed in it arrive while it goes.
            tree.delete(leaf.as_str(), Deletion::LeafOnly)
                .await
                .unwrap();
        }
        db.fail_command(
            &["commitTransaction"],
            1,
            doc! { "blockConnection": true, "blockTimeMS": 300 },
        )
        .await;
        let changing = {
            let (tree, node, right) = (tree.clone(), node.clone(), right.clone());
            tokio::spawn(async move {
                match change {
                    Change::Move => tree
                        .move_under(node.as_str(), right.as_str())
                        .await
                        .map(drop),
                    Change::Rename => tree
                        .rename(node.as_str(), format!("{node}'"))
                        .await
                        .map(drop),
                    Change::DeleteReparent | Change::DeleteLeafOnly => {
                        let how = if matches!(change, Change::DeleteReparent) {
                            Deletion::Reparent
                        } else {
                            Deletion::LeafOnly
                        };
                        tree.delete(node.as_str(), how).await.map(drop)
                    }
                }
            })
        };
        let mut attempts = 0;
        while !changing.is_finished() || attempts == 0 {
            let into = match change {
                Change::DeleteLeafOnly => &node,
                _ if attempts % 2 == 0 => &leaf,
                _ => &node,
            };
            match products
                .insert(&product(&format!("p{round}-{attempts}"), into))
                .await
            {
                Ok(()) => stored += 1,
                Err(e) if e.is_no_node() && into == &node => {}
                Err(e) => panic!("{change:?}: {e}"),
            }
            attempts += 1;
        }
        match (change, changing.await.unwrap()) {
            (_, Ok(())) => {}
            // Products that arrived before the deletion counted them keep the node.
            (Change::DeleteLeafOnly, Err(Error::NodeInUse { .. })) => {}
            (_, Err(e)) => panic!("{change:?}: {e}"),
        }
        assert!(
            attempts > 1,
            "{change:?}: the holders were placed during the change"
        );
        assert_eq!(snapshot(&db, "products").await.len(), stored, "{change:?}");
        assert_no_stale_path(&db).await;
    }
}

#[tokio::test]
async fn deleting_refuses_a_node_in_use_unless_told_to_cascade_or_reparent() {
    let db = setup("tree_delete").await;
    seed_catalogue(&db).await;
    let tree = Category::collection(&db).tree();
    let before = (
        snapshot(&db, "categories").await,
        snapshot(&db, "products").await,
    );
    let err = tree.delete("存储", Deletion::LeafOnly).await.unwrap_err();
    match &err {
        Error::NodeInUse {
            descendants,
            holders,
            ..
        } => assert_eq!((*descendants, *holders), (2, 3)),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("Deletion::Cascade"), "{err}");
    assert_eq!(
        (
            snapshot(&db, "categories").await,
            snapshot(&db, "products").await
        ),
        before
    );

    // A leaf without products goes.
    tree.insert(&category("内存", Some("计算机部件")))
        .await
        .unwrap();
    let deleted = tree.delete("内存", Deletion::LeafOnly).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 0));

    // Re-parent: 存储's children and its NAS move up to 计算机部件.
    let deleted = tree.delete("存储", Deletion::Reparent).await.unwrap();
    assert_eq!(deleted.nodes, 1);
    let ssd = tree.get("固态硬盘").await.unwrap().unwrap();
    assert_eq!(ssd.parent.as_deref(), Some("计算机部件"));
    assert_eq!(ssd.ancestors, ["电子", "计算机部件"]);
    let nas = tree
        .holders::<Product>()
        .directly_in("计算机部件")
        .await
        .unwrap();
    assert_eq!(names(&nas, |p| &p.name), set(["群晖 NAS"]));
    assert_eq!(nas[0].category_path, ["电子", "计算机部件"]);
    assert_no_stale_path(&db).await;

    // Cascade: 计算机部件, everything below it and every product under it.
    let deleted = tree.delete("计算机部件", Deletion::Cascade).await.unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (4, 4));
    let left: Vec<String> = snapshot(&db, "categories")
        .await
        .iter()
        .map(|c| c.get_str("name").unwrap().to_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert_eq!(snapshot(&db, "products").await.len(), 1);
    assert_no_stale_path(&db).await;

    // A root with products directly in it cannot re-parent them.
    tree.holders::<Product>()
        .insert(&product("充电器", "电子"))
        .await
        .unwrap();
    let err = tree.delete("电子", Deletion::Reparent).await.unwrap_err();
    assert!(matches!(err, Error::NodeInUse { .. }), "{err}");
    assert!(matches!(
        tree.delete("无", Deletion::Cascade).await,
        Err(e) if e.is_no_node()
    ));
}

#[tokio::test]
async fn renaming_a_node_rewrites_every_copy_of_its_name() {
    let db = setup("tree_rename").await;
    seed_catalogue(&db).await;
    let tree = Category::collection(&db).tree();
    let renamed = tree.rename("存储", "存储设备").await.unwrap();
    assert_eq!(
        renamed.modified(),
        1 + 2 + 2 + 1 + 3,
        "the node, children, descendants, the NAS, paths: {renamed}"
    );
    assert_eq!(
        tree.get("固态硬盘").await.unwrap().unwrap().ancestors,
        ["电子", "计算机部件", "存储设备"]
    );
    let nas = tree
        .holders::<Product>()
        .directly_in("存储设备")
        .await
        .unwrap();
    assert_eq!(names(&nas, |p| &p.name), set(["群晖 NAS"]));
    assert_eq!(
        tree.holders::<Product>()
            .under("存储设备")
            .await
            .unwrap()
            .len(),
        3
    );
    assert!(tree
        .holders::<Product>()
        .under("存储")
        .await
        .unwrap()
        .is_empty());
    assert_no_stale_path(&db).await;
    // A taken name, a missing node: nothing written.
    let before = (
        snapshot(&db, "categories").await,
        snapshot(&db, "products").await,
        snapshot(&db, "categories.tree").await,
    );
    assert!(matches!(
        tree.rename("显卡", "手机").await,
        Err(Error::DuplicateKey { .. })
    ));
    assert!(matches!(
        tree.rename("无", "有").await,
        Err(e) if e.is_no_node()
    ));
    let after = (
        snapshot(&db, "categories").await,
        snapshot(&db, "products").await,
        snapshot(&db, "categories.tree").await,
    );
    // The taken name's attempt wrote the lock in a transaction that aborted: nothing at all.
    assert_eq!(after, before);
    // An `_id` never changes: `Folder::collection(&db).tree().rename(..)` does not compile
    // (tests/ui/tree/rename_id_keyed.rs).
}

/// A tree named by `_id` whose nodes are extended-reference sources: a rename of the copied
/// title goes through `References`, a move through the tree, and each keeps its own copies.
#[tokio::test]
async fn a_tree_whose_nodes_are_extended_reference_sources() {
    let db = setup("tree_with_refs").await;
    let tree = Folder::collection(&db).tree();
    let folder = |title: &str, parent: Option<ObjectId>| Folder {
        id: ObjectId::new(),
        title: title.into(),
        parent,
        ancestors: vec![],
    };
    let home = tree.insert(&folder("home", None)).await.unwrap();
    let docs = tree.insert(&folder("docs", Some(home.id))).await.unwrap();
    let archive = tree.insert(&folder("archive", None)).await.unwrap();
    let files = tree.holders::<File>();
    let file = File {
        id: ObjectId::new(),
        folder_id: Some(docs.id),
        folder_path: vec![],
        folder: Some(FolderRef::from(&docs)),
    };
    files.insert(&file).await.unwrap();
    let loose = File {
        id: ObjectId::new(),
        folder_id: None,
        folder_path: vec![ObjectId::new()], // replaced: a file in no folder has no path
        folder: None,
    };
    files.insert(&loose).await.unwrap();

    tree.move_under(docs.id, archive.id).await.unwrap();
    // To the root and back: the ancestors of a root are empty.
    tree.move_to_root(docs.id).await.unwrap();
    assert!(tree
        .get(docs.id)
        .await
        .unwrap()
        .unwrap()
        .ancestors
        .is_empty());
    assert_eq!(
        File::collection(&db)
            .raw()
            .find_one(doc! { "_id": file.id })
            .await
            .unwrap()
            .unwrap()
            .folder_path,
        [docs.id]
    );
    tree.move_under(docs.id, archive.id).await.unwrap();
    Folder::collection(&db)
        .update(docs.id, doc! { "$set": { "title": "documents" } })
        .await
        .unwrap();
    let stored = File::collection(&db)
        .raw()
        .find_one(doc! { "_id": file.id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.folder_path, [archive.id, docs.id]);
    assert_eq!(stored.folder.unwrap().title, "documents");
    let stored = File::collection(&db)
        .raw()
        .find_one(doc! { "_id": loose.id })
        .await
        .unwrap()
        .unwrap();
    assert!(stored.folder_path.is_empty());
    assert_eq!(files.under(archive.id).await.unwrap().len(), 1);
    assert!(files.under(home.id).await.unwrap().is_empty());
    let check = tree.check().await.unwrap();
    assert!(check.is_clean(), "{check}");

    // A stale path written behind the toolkit's back is found, and repaired from the parents.
    File::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": file.id },
            doc! { "$set": { "folderPath": [home.id, docs.id] } },
        )
        .await
        .unwrap();
    let check = tree.check().await.unwrap();
    assert_eq!(check.findings.len(), 1, "{check}");
    assert_eq!(check.documents(), [Bson::from(file.id)], "{check}");
    let repaired = tree.repair().await.unwrap();
    assert_eq!(repaired.repaired, 1, "{repaired}");
    assert!(repaired.is_clean(), "{repaired}");
    assert!(tree.check().await.unwrap().is_clean());
    let stored = File::collection(&db)
        .raw()
        .find_one(doc! { "_id": file.id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.folder_path, [archive.id, docs.id]);
}

#[tokio::test]
async fn a_bound_tree_reads_its_transactions_writes() {
    let db = setup("tree_in_transaction").await;
    seed_catalogue(&db).await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = Category::collection(&db).in_transaction(&tx).tree();
    bound
        .insert(&category("NVMe", Some("固态硬盘")))
        .await
        .unwrap();

    // Every read of the bound tree sees the transaction's own insert...
    assert_eq!(bound.get("NVMe").await.unwrap().unwrap().name, "NVMe");
    let children = bound.children("固态硬盘").await.unwrap();
    assert_eq!(names(&children, |c| &c.name), set(["NVMe"]));
    let descendants = bound.descendants("存储").await.unwrap();
    assert_eq!(
        names(&descendants, |c| &c.name),
        set(["NVMe", "固态硬盘", "机械硬盘"])
    );
    let subtree = bound.subtree("NVMe").await.unwrap();
    assert_eq!(names(&subtree, |c| &c.name), set(["NVMe"]));
    let ancestors = bound.ancestors("NVMe").await.unwrap();
    let ancestors: Vec<&str> = ancestors.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(ancestors, ["电子", "计算机部件", "存储", "固态硬盘"]);
    assert_eq!(
        bound.path("NVMe").await.unwrap(),
        ["电子", "计算机部件", "存储", "固态硬盘", "NVMe"]
    );
    // So do its holders' reads: a product placed in the new node, in the transaction.
    let holders = bound.holders::<Product>();
    holders
        .insert(&product("三星 990 Pro", "NVMe"))
        .await
        .unwrap();
    let directly: Vec<String> = holders
        .directly_in("NVMe")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(directly, ["三星 990 Pro"]);
    let under = holders.under("固态硬盘").await.unwrap();
    assert_eq!(
        names(&under, |p| &p.name),
        set(["三星 1TB SSD", "三星 990 Pro"])
    );

    // ... which the tree outside it does not see before the commit.
    let outside = Category::collection(&db).tree();
    assert!(outside
        .holders::<Product>()
        .directly_in("NVMe")
        .await
        .unwrap()
        .is_empty());
    assert!(outside.get("NVMe").await.unwrap().is_none());
    assert!(outside.children("固态硬盘").await.unwrap().is_empty());
    assert!(outside.subtree("NVMe").await.unwrap().is_empty());
    assert!(outside.path("NVMe").await.is_err());
    tx.commit().await.unwrap();
    assert_eq!(
        outside.path("NVMe").await.unwrap(),
        ["电子", "计算机部件", "存储", "固态硬盘", "NVMe"]
    );
    assert_eq!(outside.children("固态硬盘").await.unwrap().len(), 1);
}

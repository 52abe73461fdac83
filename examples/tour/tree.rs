//! Chapter 11: tree.
//!
//! A shop's catalogue: a product carries `directCategory: "固态硬盘"` and `categoryPath:
//! ["电子", "计算机部件", "存储", "固态硬盘"]`, so `{categoryPath: "计算机部件"}` finds every
//! product under 计算机部件 through a multikey index, and `{directCategory: "固态硬盘"}` the
//! ones directly in 固态硬盘. `Category` is declared `#[tree(..)]` (named by `name`),
//! `Product` `#[in_tree(Category, ..)]`: the chapter builds the chain, places products,
//! reads the subtree, moves 存储 with everything under it, renames a category, refuses a cycle
//! and a deletion, and checks that every path still agrees with the parents.

use bson::doc;
use bson::oid::ObjectId;
use pattern_runtime::{tree::Deletion, Model, SyncOptions};
use serde::{Deserialize, Serialize};

/// `categories`: each category knows its parent and its ancestors, root first.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "tree", collection = "categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
pub struct Category {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
}

/// `products`: a product, its category and the category's path.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "tree", collection = "products")]
#[in_tree(Category, node = direct_category, path = category_path)]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub direct_category: String,
    pub category_path: Vec<String>,
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

fn product_names(products: &[Product]) -> String {
    let mut names: Vec<&str> = products.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.join(", ")
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("11. Tree: categories with ancestor paths");
    let db = crate::chapter_db(client, "tree").await?;
    pattern_runtime::sync(&db)
        .group("tree")
        .options(&SyncOptions::new())
        .await?;
    let tree = Category::collection(&db).tree();
    let products = tree.holders::<Product>();

    tree.insert_many(&[
        category("电子", None),
        category("计算机部件", Some("电子")),
        category("手机", Some("电子")),
        category("存储", Some("计算机部件")),
        category("显卡", Some("计算机部件")),
        category("固态硬盘", Some("存储")),
        category("机械硬盘", Some("存储")),
    ])
    .await?;
    for (name, in_category) in [
        ("三星 1TB SSD", "固态硬盘"),
        ("西数 4TB HDD", "机械硬盘"),
        ("RTX 4070", "显卡"),
        ("群晖 NAS", "存储"),
        ("小米 14", "手机"),
    ] {
        products.insert(&product(name, in_category)).await?;
    }
    println!(
        "7 categories in one transaction, 5 products placed; each path comes from its category."
    );
    let ssd = db
        .collection::<bson::Document>("products")
        .find_one(doc! { "name": "三星 1TB SSD" })
        .projection(doc! { "_id": 0 })
        .await?
        .ok_or("the SSD is stored")?;
    println!("  the stored product: {ssd}");
    println!(
        "  {{categoryPath: \"计算机部件\"}}: {}",
        product_names(&products.under("计算机部件").await?)
    );
    println!(
        "  {{directCategory: \"固态硬盘\"}}: {}",
        product_names(&products.directly_in("固态硬盘").await?)
    );
    let subtree: Vec<String> = tree
        .subtree("计算机部件")
        .await?
        .into_iter()
        .map(|c| c.name)
        .collect();
    println!(
        "  the subtree of 计算机部件, shallowest first: {}",
        subtree.join(", ")
    );

    // A move: 存储 and everything under it go directly under 电子, in one transaction.
    let moved = tree.move_under("存储", "电子").await?;
    println!("\n存储 moved under 电子: {moved}");
    let ssd = tree.get("固态硬盘").await?.ok_or("固态硬盘 is stored")?;
    println!("  固态硬盘's ancestors now: {:?}", ssd.ancestors);
    let moved_ssd = &products.directly_in("固态硬盘").await?[0];
    println!(
        "  the SSD's categoryPath now: {:?}",
        moved_ssd.category_path
    );
    println!(
        "  under 计算机部件 now: {}",
        product_names(&products.under("计算机部件").await?)
    );

    // A cycle is refused before anything is written.
    match tree.move_under("电子", "固态硬盘").await {
        Err(e) => println!("\n电子 under 固态硬盘: {e}"),
        Ok(_) => return Err("a cycle was accepted".into()),
    }

    // The paths hold names: a rename rewrites every copy.
    let renamed = tree.rename("存储", "存储设备").await?;
    println!(
        "\n存储 renamed 存储设备: {} documents rewritten",
        renamed.modified()
    );
    println!(
        "  under 存储设备: {}",
        product_names(&products.under("存储设备").await?)
    );

    // Deleting a category that still holds products is refused unless asked to re-parent.
    match tree.delete("存储设备", Deletion::LeafOnly).await {
        Err(e) => println!("\ndelete 存储设备: {e}"),
        Ok(_) => return Err("a category in use was deleted".into()),
    }
    let deleted = tree.delete("存储设备", Deletion::Reparent).await?;
    println!(
        "delete 存储设备, re-parenting what it held: {} deleted; {}",
        deleted.nodes, deleted.rewritten
    );
    let nas = &products.directly_in("电子").await?;
    println!(
        "  directly in 电子 now: {} (path {:?})",
        product_names(nas),
        nas.first().map(|p| &p.category_path)
    );
    let check = tree.check().await?;
    println!("\nevery path checked against the parents: {check}");
    Ok(())
}

//! Tree: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "h_cats")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct HCat {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    name: Bson,
    parent: Option<Bson>,
    ancestors: Vec<Bson>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "h_items")]
#[in_tree(HCat, node = node, path = path)]
struct HItem {
    #[serde(rename = "_id")]
    id: i64,
    node: Option<Bson>,
    path: Vec<Bson>,
}

impl HCat {
    fn with_name(mut self, name: Bson) -> Self {
        self.name = name;
        self
    }
}

fn cat(name: &str, parent: Option<&str>) -> HCat {
    HCat {
        id: bson::oid::ObjectId::new(),
        name: name.into(),
        parent: parent.map(Bson::from),
        ancestors: vec![],
    }
}

/// The nodes' and items' documents without the lock document (`h_cats.tree` counts the changes
/// of the shape: a change that succeeds writes it, one that is refused must not).
fn tree_docs(s: &Snap) -> Snap {
    let mut out = s.clone();
    out.0.remove("h_cats.tree");
    out
}

/// `Tree::{get, children, descendants, subtree, ancestors, path, move_under, move_to_root,
/// rename, delete}` and the holders' `place`, `under`, `directly_in` with hostile keys: refused
/// where no node has the key (`NotFound` of the node, `InvalidValue`), and exact where a node is named by a
/// hostile string.
#[test]
fn tree() {
    big_stack(tree_test);
}

async fn tree_test() {
    let db = test_db("hostile_tree").await;
    pattern_runtime::sync(&db)
        .models(&[HCat::SCHEMA, HItem::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let tree = HCat::collection(&db).tree();
    let items = tree.holders::<HItem>();
    let mut l = Ledger::new("tree", &db);
    const N: &str = "h_cats";
    const I: &str = "h_items";
    // root > a > b; item 1 in b, item 2 in root, item 3 nowhere.
    reset(&db, N, &[]).await;
    reset(&db, I, &[]).await;
    tree.insert_many(&[
        cat("root", None),
        cat("a", Some("root")),
        cat("b", Some("a")),
    ])
    .await
    .unwrap();
    for (id, node) in [(1, Some("b")), (2, Some("root")), (3, None)] {
        items
            .insert(&HItem {
                id,
                node: node.map(Bson::from),
                path: vec![],
            })
            .await
            .unwrap();
    }
    let baseline = both(&db, &[N, I, "h_cats.tree"]).await;
    let untouched = snap(&db).await;
    // Reset by dropping and re-syncing, not by `deleteMany`: the embedded server keeps a unique
    // index entry of a key renamed in a transaction after its document is deleted (a duplicate
    // key on the next insert of the old key; a server bug, not the toolkit's). Most inputs are
    // refused and change nothing: then every document is as it was, byte for byte, and none was
    // deleted, so there is nothing to reset.
    let reset_tree = || async {
        if snap(&db).await == untouched {
            return;
        }
        for c in [N, I, "h_cats.tree"] {
            db.collection::<Document>(c).drop().await.unwrap();
        }
        pattern_runtime::sync(&db)
            .models(&[HCat::SCHEMA, HItem::SCHEMA])
            .options(&pattern_runtime::SyncOptions::new())
            .await
            .unwrap();
        for (c, docs) in &baseline {
            if !docs.is_empty() {
                db.collection::<Document>(c)
                    .insert_many(docs.clone())
                    .await
                    .unwrap();
            }
        }
    };
    let node_of = |s: &Snap, key: &Bson| -> Option<Document> {
        s.docs(N)
            .into_iter()
            .find(|d| d.get("name").is_some_and(|n| same(n, key)))
    };
    let strs = |v: &[&str]| -> Vec<Bson> { v.iter().map(|s| Bson::from(*s)).collect() };

    for v in hostile() {
        let input = format!("key {}", label(&v));
        reset_tree().await;
        // No node has this key: reads find nothing, writes refuse, nothing changes.
        let s = snap(&db).await;
        let s = l
            .read("Tree::get", &input, &s, tree.get(v.clone()), |got| {
                if got.is_none() {
                    Ok(())
                } else {
                    Err(format!("{got:?}"))
                }
            })
            .await;
        // (`null` names no node: the children of no node are the roots, `{parent: null}`.)
        let roots = usize::from(v == Bson::Null);
        let s = l
            .read(
                "Tree::children",
                &input,
                &s,
                tree.children(v.clone()),
                |got| {
                    if got.len() == roots {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::descendants",
                &input,
                &s,
                tree.descendants(v.clone()),
                |got| {
                    if got.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::subtree",
                &input,
                &s,
                tree.subtree(v.clone()),
                |got| {
                    if got.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .refused("Tree::ancestors", &input, &s, tree.ancestors(v.clone()))
            .await;
        let s = l
            .refused("Tree::path", &input, &s, tree.path(v.clone()))
            .await;
        let s = l
            .refused(
                "Tree::move_under(key)",
                &input,
                &s,
                tree.move_under(v.clone(), "root"),
            )
            .await;
        let s = l
            .refused(
                "Tree::move_under(parent)",
                &input,
                &s,
                tree.move_under("b", v.clone()),
            )
            .await;
        let s = l
            .refused(
                "Tree::move_to_root",
                &input,
                &s,
                tree.move_to_root(v.clone()),
            )
            .await;
        let s = l
            .refused("Tree::rename(key)", &input, &s, tree.rename(v.clone(), "z"))
            .await;
        let s = l
            .refused(
                "Tree::delete(leaf only)",
                &input,
                &s,
                tree.delete(v.clone(), pattern_runtime::tree::Deletion::LeafOnly),
            )
            .await;
        let s = l
            .refused(
                "Tree::delete(cascade)",
                &input,
                &s,
                tree.delete(v.clone(), pattern_runtime::tree::Deletion::Cascade),
            )
            .await;
        let s = l
            .refused(
                "Tree::delete(reparent)",
                &input,
                &s,
                tree.delete(v.clone(), pattern_runtime::tree::Deletion::Reparent),
            )
            .await;
        // (Item 3 sits in no node: placing it in `null` changes nothing.)
        let s = if v == Bson::Null {
            let s2 = s.clone();
            l.judge(
                "Holders::place(node)",
                &input,
                &s,
                items.place(3, v.clone()),
                move |_, after| exactly(&s2, after),
            )
            .await
            .1
        } else {
            l.refused(
                "Holders::place(node)",
                &input,
                &s,
                items.place(3, v.clone()),
            )
            .await
        };
        // `Holders::place(id, ..)`: the id is `HItem`'s `i64`, typed.
        let s = l
            .read(
                "Holders::under",
                &input,
                &s,
                items.under(v.clone()),
                |got| {
                    if got.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        l.read(
            "Holders::directly_in",
            &input,
            &s,
            items.directly_in(v.clone()),
            |got| {
                if got.len() == roots {
                    Ok(())
                } else {
                    Err(format!("{got:?}"))
                }
            },
        )
        .await;

        // Renaming b (a leaf) and a (b's parent) to the value: every copy of the old key becomes
        // exactly the value (the node's name, its children's parent, its descendants' ancestors,
        // the items' node and path), or it is refused with nothing written (`InvalidValue`:
        // what cannot be a key). `null` is not a key (`insert` refuses it: a `null` parent
        // means a root, so b would pass for a root while its ancestors say otherwise).
        let s = snap(&db).await;
        let null = v == Bson::Null;
        l.judge(
            "Tree::rename(a, new key)",
            &input,
            &s,
            tree.rename("a", v.clone()),
            |_, after| {
                if null {
                    return Err("a node renamed to null: its children now read as roots".into());
                }
                let expected = s
                    .with(N, |docs| {
                        for d in docs.iter_mut() {
                            match d.get_str("name").ok() {
                                Some("a") => {
                                    d.insert("name", v.clone());
                                }
                                Some("b") => {
                                    d.insert("parent", v.clone());
                                    d.insert("ancestors", vec![Bson::from("root"), v.clone()]);
                                }
                                _ => {}
                            }
                        }
                    })
                    .with(I, |docs| {
                        for d in docs.iter_mut().filter(|d| d.get_i64("_id").ok() == Some(1)) {
                            d.insert("path", vec![Bson::from("root"), v.clone(), Bson::from("b")]);
                        }
                    });
                exactly(&tree_docs(&expected), &tree_docs(after))
            },
        )
        .await;
        reset_tree().await;
        let s = snap(&db).await;
        l.judge(
            "Tree::rename(b, new key)",
            &input,
            &s,
            tree.rename("b", v.clone()),
            |_, after| {
                if null {
                    return Err("a node renamed to null".into());
                }
                let expected = s
                    .with(N, |docs| {
                        for d in docs
                            .iter_mut()
                            .filter(|d| d.get_str("name").ok() == Some("b"))
                        {
                            d.insert("name", v.clone());
                        }
                    })
                    .with(I, |docs| {
                        for d in docs.iter_mut().filter(|d| d.get_i64("_id").ok() == Some(1)) {
                            d.insert("node", v.clone());
                            d.insert("path", vec![Bson::from("root"), Bson::from("a"), v.clone()]);
                        }
                    });
                exactly(&tree_docs(&expected), &tree_docs(after))
            },
        )
        .await;

        // Values that reach the tree inside documents: a node whose parent is the value, an item
        // whose node is the value (no node has it: `NotFound` of the node, or `InvalidValue`; `null` is a root
        // and no node), and a node named by the value (stored exactly, or refused).
        reset_tree().await;
        let s = snap(&db).await;
        let (_, s) = l
            .judge(
                "Tree::insert(parent: value)",
                &input,
                &s,
                tree.insert(&HCat {
                    id: bson::oid::ObjectId::new(),
                    name: "n9".into(),
                    parent: Some(v.clone()),
                    ancestors: vec![],
                }),
                |n, after| {
                    if v != Bson::Null {
                        return Err(format!(
                            "no node has this key, yet it was inserted under it: {n:?}"
                        ));
                    }
                    match node_of(after, &"n9".into()) {
                        Some(d) if d.get_array("ancestors").map(Vec::len).ok() == Some(0) => Ok(()),
                        other => Err(format!("stored {other:?}")),
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Holders::insert(node: value)",
                &input,
                &s,
                items.insert(&HItem {
                    id: 9,
                    node: Some(v.clone()),
                    path: vec![],
                }),
                |_, after| {
                    if v != Bson::Null {
                        return Err("no node has this key, yet the item was inserted in it".into());
                    }
                    match after
                        .docs(I)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(9))
                    {
                        Some(d) if d.get_array("path").map(Vec::len).ok() == Some(0) => Ok(()),
                        other => Err(format!("stored {other:?}")),
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Holders::insert_many(node: value)",
                &input,
                &s,
                items.insert_many(&[HItem {
                    id: 10,
                    node: Some(v.clone()),
                    path: vec![],
                }]),
                |_, after| {
                    if v != Bson::Null {
                        return Err("no node has this key, yet the item was inserted in it".into());
                    }
                    match after
                        .docs(I)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(10))
                    {
                        Some(d) if d.get_array("path").map(Vec::len).ok() == Some(0) => Ok(()),
                        other => Err(format!("stored {other:?}")),
                    }
                },
            )
            .await;
        if !matches!(v, Bson::String(_)) {
            let (inserted, _) = l
                .judge(
                    "Tree::insert(name: value)",
                    &input,
                    &s,
                    tree.insert(&cat("x", Some("a")).with_name(v.clone())),
                    |n, after| match node_of(after, &v) {
                        Some(d)
                            if d.get_array("ancestors").map(Vec::len).ok() == Some(2)
                                && same(&n.name, &v) =>
                        {
                            Ok(())
                        }
                        other => Err(format!("stored {other:?}")),
                    },
                )
                .await;
            // A node the toolkit stored is a node the toolkit can find (the tree's docs: keys
            // are scalars; every other operation refuses what is not).
            if inserted.is_some() {
                l.checks += 1;
                match tree.get(v.clone()).await {
                    Ok(Some(n)) if same(&n.name, &v) => {}
                    Ok(other) => l.fail(
                        "Tree::get (the node just inserted with this name)",
                        &input,
                        format!("read back {other:?}"),
                    ),
                    Err(e) => l.fail(
                        "Tree::get (the node just inserted with this name)",
                        &input,
                        format!(
                            "Tree::insert stored this key, but the tree cannot address it: {}",
                            short(&e)
                        ),
                    ),
                }
            }
        }

        // A node named by a hostile string, under a: inserted, read, moved, renamed and deleted
        // exactly there.
        let Bson::String(name) = &v else { continue };
        reset_tree().await;
        let s = snap(&db).await;
        let (inserted, s) = l
            .judge(
                "Tree::insert",
                &input,
                &s,
                tree.insert(&cat(name, Some("a"))),
                |n, after| {
                    let stored = node_of(after, &v);
                    match stored {
                        Some(d)
                            if d.get_str("parent").ok() == Some("a")
                                && n.ancestors == strs(&["root", "a"])
                                && d.get_array("ancestors").map(|a| a.len()).ok() == Some(2) =>
                        {
                            Ok(())
                        }
                        other => Err(format!("stored {other:?}")),
                    }
                },
            )
            .await;
        if inserted.is_none() {
            continue;
        }
        let (child, s) = l
            .judge(
                "Tree::insert (under it)",
                &input,
                &s,
                tree.insert(&cat("c", Some(name))),
                |n, _| {
                    if n.ancestors == vec![Bson::from("root"), Bson::from("a"), v.clone()] {
                        Ok(())
                    } else {
                        Err(format!("{n:?}"))
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Holders::place",
                &input,
                &s,
                items.place(3, name.as_str()),
                |_, after| {
                    let item = after
                        .docs(I)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(3));
                    let want = vec![Bson::from("root"), Bson::from("a"), v.clone()];
                    match item {
                        Some(d)
                            if d.get("node").is_some_and(|n| same(n, &v))
                                && d.get_array("path").ok() == Some(&want) =>
                        {
                            Ok(())
                        }
                        other => Err(format!("item 3 is {other:?}")),
                    }
                },
            )
            .await;
        // `Tree::repair` with the node's ancestors and the item's path written wrong around the
        // toolkit: it writes back exactly what it had, the hostile key as data.
        {
            let nodes = db.collection::<Document>(N);
            nodes
                .update_one(
                    doc! { "name": { "$eq": v.clone() } },
                    doc! { "$set": { "ancestors": ["bogus"] } },
                )
                .await
                .unwrap();
            db.collection::<Document>(I)
                .update_one(doc! { "_id": 3_i64 }, doc! { "$set": { "path": [] } })
                .await
                .unwrap();
            let drifted = snap(&db).await;
            let want = tree_docs(&s);
            l.judge(
                "Tree::repair",
                &input,
                &drifted,
                tree.repair(),
                |r, after| {
                    if r.is_clean() {
                        exactly(&want, &tree_docs(after))
                    } else {
                        Err(format!("left {r:?}"))
                    }
                },
            )
            .await;
        }
        let s = l
            .read(
                "Tree::get (its node)",
                &input,
                &s,
                tree.get(name.as_str()),
                |got| match got {
                    Some(n) if same(&n.name, &v) => Ok(()),
                    other => Err(format!("{other:?}")),
                },
            )
            .await;
        let children = usize::from(child.is_some());
        let s = l
            .read(
                "Tree::children (its node)",
                &input,
                &s,
                tree.children(name.as_str()),
                |got| {
                    if got.len() == children {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::descendants (its node)",
                &input,
                &s,
                tree.descendants(name.as_str()),
                |got| {
                    if got.len() == children {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::subtree (its node)",
                &input,
                &s,
                tree.subtree(name.as_str()),
                |got| {
                    if got.len() == children + 1 && same(&got[0].name, &v) {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::ancestors (its node)",
                &input,
                &s,
                tree.ancestors(name.as_str()),
                |got| {
                    let names: Vec<&str> =
                        got.iter().map(|n| n.name.as_str().unwrap_or("?")).collect();
                    if names == ["root", "a"] {
                        Ok(())
                    } else {
                        Err(format!("{names:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Tree::path (its node)",
                &input,
                &s,
                tree.path(name.as_str()),
                |got| {
                    if *got == vec![Bson::from("root"), Bson::from("a"), v.clone()] {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Holders::under (its node)",
                &input,
                &s,
                items.under(name.as_str()),
                |got| {
                    if got.len() == 1 && got[0].id == 3 {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Holders::directly_in (its node)",
                &input,
                &s,
                items.directly_in(name.as_str()),
                |got| {
                    if got.len() == 1 && got[0].id == 3 {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Tree::move_to_root (its node)",
                &input,
                &s,
                tree.move_to_root(name.as_str()),
                |_, after| {
                    let item = after
                        .docs(I)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(3));
                    let node = node_of(after, &v);
                    match (node, item) {
                        (Some(n), Some(i))
                            if n.get_array("ancestors").map(Vec::len).ok() == Some(0)
                                && i.get_array("path").ok() == Some(&vec![v.clone()]) =>
                        {
                            Ok(())
                        }
                        other => Err(format!("{other:?}")),
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Tree::move_under (its node, under b)",
                &input,
                &s,
                tree.move_under(name.as_str(), "b"),
                |_, after| {
                    let item = after
                        .docs(I)
                        .into_iter()
                        .find(|d| d.get_i64("_id").ok() == Some(3));
                    let want = vec![
                        Bson::from("root"),
                        Bson::from("a"),
                        Bson::from("b"),
                        v.clone(),
                    ];
                    match item {
                        Some(i) if i.get_array("path").ok() == Some(&want) => Ok(()),
                        other => Err(format!("item 3 is {other:?}")),
                    }
                },
            )
            .await;
        let s = l
            .read("Tree::check", &input, &s, tree.check(), |c| {
                if c.is_clean() {
                    Ok(())
                } else {
                    Err(format!("{c:?}"))
                }
            })
            .await;
        let renamed = format!("{name}~");
        let (_, s) = l
            .judge(
                "Tree::rename (its node)",
                &input,
                &s,
                tree.rename(name.as_str(), renamed.as_str()),
                |_, after| {
                    if node_of(after, &v).is_none()
                        && node_of(after, &renamed.clone().into()).is_some()
                    {
                        Ok(())
                    } else {
                        Err("the node was not renamed".into())
                    }
                },
            )
            .await;
        let expected = tree_docs(&snap(&db).await)
            .with(N, |docs| {
                docs.retain(|d| {
                    d.get_str("name").ok() != Some(renamed.as_str())
                        && d.get_str("name").ok() != Some("c")
                })
            })
            .with(I, |docs| docs.retain(|d| d.get_i64("_id").ok() != Some(3)));
        let (_, s) = l
            .judge(
                "Tree::delete(cascade) (its node)",
                &input,
                &s,
                tree.delete(renamed.as_str(), pattern_runtime::tree::Deletion::Cascade),
                |_, after| exactly(&expected, &tree_docs(after)),
            )
            .await;
        l.read("Tree::check", &input, &s, tree.check(), |c| {
            if c.is_clean() {
                Ok(())
            } else {
                Err(format!("{c:?}"))
            }
        })
        .await;
    }
    l.finish();
}

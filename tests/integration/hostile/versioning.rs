//! Versioning: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "h_articles")]
#[versioned(history = "h_article_revisions")]
struct HArticle {
    #[serde(rename = "_id")]
    id: Bson,
    #[version]
    version: i64,
    title: Bson,
}

/// The revisions of `id` in a snapshot: (version, deleted, snapshot's title).
fn revisions(s: &Snap, id: &Bson) -> Vec<(i64, bool, Option<Bson>)> {
    let mut out: Vec<_> = s
        .docs("h_article_revisions")
        .into_iter()
        .filter(|d| d.get("docId").is_some_and(|i| same(i, id)))
        .map(|d| {
            (
                d.get_i64("version").unwrap_or(-1),
                d.get_bool("deleted").unwrap_or(false),
                d.get_document("snapshot")
                    .ok()
                    .and_then(|s| s.get("title").cloned()),
            )
        })
        .collect();
    out.sort_by_key(|r| r.0);
    out
}

/// `Versioned` operations taking ids (`history`, `revision`, `revert`, `delete`, `update`,
/// `modify`) with hostile ids, missing and stored; `update` and `save` with hostile values.
#[test]
fn versioning() {
    big_stack(versioning_test);
}

async fn versioning_test() {
    let db = test_db("hostile_versioning").await;
    pattern_runtime::sync(&db)
        .models(&[HArticle::SCHEMA])
        .await
        .unwrap();
    let articles = HArticle::collection(&db);
    let mut l = Ledger::new("versioning", &db);
    const A: &str = "h_articles";
    const H: &str = "h_article_revisions";
    reset(&db, A, &[]).await;
    reset(&db, H, &[]).await;
    articles
        .insert(&mut HArticle {
            id: 1.into(),
            version: 0,
            title: "one".into(),
        })
        .await
        .unwrap();
    articles
        .update(At(1, 1), doc! { "$set": { "title": "two" } })
        .await
        .unwrap();
    let baseline = both(&db, &[A, H]).await;

    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let s = l
            .read(
                "ModelCollection::history",
                &input,
                &s,
                articles.history(v.clone()),
                |got| {
                    if got.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("{} revisions", got.len()))
                    }
                },
            )
            .await;
        let s = l
            .refused(
                "ModelCollection::revision",
                &input,
                &s,
                articles.revision(v.clone(), 1),
            )
            .await;
        let s = l
            .refused(
                "ModelCollection::revert",
                &input,
                &s,
                articles.revert(v.clone(), 1),
            )
            .await;
        let s = l
            .refused(
                "ModelCollection::update",
                &input,
                &s,
                articles.update(At(v.clone(), 1), doc! { "$set": { "title": "x" } }),
            )
            .await;
        let s = l
            .refused(
                "ModelCollection::modify",
                &input,
                &s,
                articles.modify(v.clone(), 1, |a| a.title = "x".into()),
            )
            .await;
        l.refused(
            "ModelCollection::delete",
            &input,
            &s,
            articles.delete(v.clone()),
        )
        .await;

        // An article whose `_id` is the value: its revisions carry exactly that `docId`.
        let s = snap(&db).await;
        let mut a = HArticle {
            id: v.clone(),
            version: 0,
            title: "t1".into(),
        };
        let (inserted, s) = l
            .judge(
                "ModelCollection::insert",
                &input,
                &s,
                articles.insert(&mut a),
                |_, after| {
                    let expected = s.with(A, |docs| {
                        docs.push(doc! { "_id": v.clone(), "version": 1_i64, "title": "t1" })
                    });
                    exactly(&expected, after)
                },
            )
            .await;
        if inserted.is_none() {
            continue;
        }
        let (_, s) = l
            .judge(
                "ModelCollection::update (stored id)",
                &input,
                &s,
                articles.update(At(v.clone(), 1), doc! { "$set": { "title": "t2" } }),
                |n, after| match revisions(after, &v).as_slice() {
                    [(1, false, Some(t))] if n.version == Some(2) && *t == Bson::from("t1") => {
                        Ok(())
                    }
                    other => Err(format!("revisions {other:?}")),
                },
            )
            .await;
        let s = l
            .read(
                "ModelCollection::history (stored id)",
                &input,
                &s,
                articles.history(v.clone()),
                |got| {
                    if got.len() == 1 && same(&got[0].snapshot.id, &v) {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "ModelCollection::revision (stored id)",
                &input,
                &s,
                articles.revision(v.clone(), 1),
                |got| {
                    if got.title == Bson::from("t1") && same(&got.id, &v) {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "ModelCollection::revert (stored id)",
                &input,
                &s,
                articles.revert(v.clone(), 1),
                |n, after| {
                    let current = after
                        .docs(A)
                        .into_iter()
                        .find(|d| d.get("_id").is_some_and(|i| same(i, &v)));
                    match current {
                        Some(d)
                            if *n == 3
                                && d.get("title") == Some(&Bson::from("t1"))
                                && revisions(after, &v).len() == 2 =>
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
                "ModelCollection::modify (stored id)",
                &input,
                &s,
                articles.modify(v.clone(), 1, |a| a.title = "t4".into()),
                |a, after| {
                    if a.version == 4 && revisions(after, &v).len() == 3 {
                        Ok(())
                    } else {
                        Err(format!("{a:?}"))
                    }
                },
            )
            .await;
        l.judge(
            "ModelCollection::delete (stored id)",
            &input,
            &s,
            articles.delete(v.clone()),
            |_, after| {
                let gone = after
                    .docs(A)
                    .iter()
                    .all(|d| d.get("_id").is_none_or(|i| !same(i, &v)));
                let last = revisions(after, &v).last().cloned();
                match last {
                    Some((4, true, _)) if gone => Ok(()),
                    other => Err(format!("still there: {}, last revision {other:?}", !gone)),
                }
            },
        )
        .await;
    }

    // `save` of a document whose `_id` is the value, at article 1's version: it saves the
    // document with exactly that `_id` (none: `NotFound`), never article 1; or refuses.
    for v in hostile() {
        let input = format!("_id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let mut a = HArticle {
            id: v.clone(),
            version: 2,
            title: "stolen".into(),
        };
        l.refused(
            "ModelCollection::save(_id: value)",
            &input,
            &s,
            articles.replace(&mut a),
        )
        .await;
    }

    // Values: `update` with `{$set: {title: value}}` and `save` with the title, on article 1
    // (version 2): stored exactly as given, the old title archived; or refused with nothing written.
    for v in hostile() {
        let input = format!("title {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let check = |w: &pattern_runtime::Written, after: &Snap| -> Result<(), String> {
            let n = &w.version.unwrap_or_default();
            let current = after
                .docs(A)
                .into_iter()
                .find(|d| d.get_i32("_id").ok() == Some(1));
            match current {
                Some(d)
                    if *n == 3
                        && d.get("title").is_some_and(|t| same(t, &v))
                        && revisions(after, &1.into()).len() == 2 =>
                {
                    Ok(())
                }
                other => Err(format!("article 1 is {other:?}")),
            }
        };
        l.judge(
            "ModelCollection::update({$set: {title: value}})",
            &input,
            &s,
            articles.update(At(1, 2), doc! { "$set": { "title": v.clone() } }),
            check,
        )
        .await;
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let mut a = articles
            .raw()
            .find_one(doc! { "_id": 1 })
            .await
            .unwrap()
            .unwrap();
        a.title = v.clone();
        l.judge(
            "ModelCollection::save(title: value)",
            &input,
            &s,
            articles.replace(&mut a),
            check,
        )
        .await;
    }
    l.finish();
}

//! Outlier: the hostile inputs through its operations.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct HPost {
    v: Bson,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_users")]
struct HUser {
    #[serde(rename = "_id")]
    id: Bson,
    #[outlier(limit = 2, overflow = "h_user_posts", capacity = 2, flag = is_outlier, count = posts_count, parent = "userId")]
    posts: Vec<HPost>,
    is_outlier: bool,
    posts_count: i64,
}

fn hpost(v: impl Into<Bson>) -> HPost {
    HPost { v: v.into() }
}

fn posts_same(got: &[HPost], want: &[HPost]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| same(&a.v, &b.v))
}

/// `Outlier::{push, push_many, items, page, count, remove, check, rebuild}` with hostile ids
/// (missing, and stored by someone else) and hostile item values, embedded and overflowed.
#[test]
fn outlier() {
    big_stack(outlier_test);
}

async fn outlier_test() {
    let db = test_db("hostile_outlier").await;
    pattern_runtime::sync(&db)
        .models(&[HUser::SCHEMA])
        .await
        .unwrap();
    let posts = HUser::collection(&db).outlier(HUser::FIELDS.posts);
    let mut l = Ledger::new("outlier", &db);
    const U: &str = "h_users";
    const O: &str = "h_user_posts";
    let user = |id: Bson| doc! { "_id": id, "posts": [], "isOutlier": false, "postsCount": 0_i64 };
    // A normal user and an outlier (3 posts: 2 embedded, 1 in an overflow document).
    reset(&db, U, &[user("home".into()), user("star".into())]).await;
    posts.push("home", hpost(1)).await.unwrap();
    posts
        .push_many("star", vec![hpost(1), hpost(2), hpost(3)])
        .await
        .unwrap();
    let baseline = both(&db, &[U, O]).await;
    let three = |v: &Bson| vec![hpost(v.clone()), hpost(v.clone()), hpost(v.clone())];

    // Missing ids: `NotFound` (or `InvalidValue` for operator documents, regexes, arrays, deep
    // nesting), nothing written.
    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let s = l
            .refused("Outlier::push", &input, &s, posts.push(v.clone(), hpost(1)))
            .await;
        let s = l
            .refused(
                "Outlier::push_many",
                &input,
                &s,
                posts.push_many(v.clone(), three(&1.into())),
            )
            .await;
        let s = l
            .refused("Outlier::items", &input, &s, posts.items(v.clone()))
            .await;
        let s = l
            .refused("Outlier::page", &input, &s, posts.page(v.clone(), 0, 10))
            .await;
        let s = l
            .refused("Outlier::count", &input, &s, posts.count(v.clone()))
            .await;
        let s = l
            .refused(
                "Outlier::remove",
                &input,
                &s,
                posts.remove(v.clone(), &hpost(1)),
            )
            .await;
        let s = l
            .refused("Outlier::check", &input, &s, posts.state(v.clone()))
            .await;
        l.refused("Outlier::rebuild", &input, &s, posts.rebuild(v.clone()))
            .await;

        // Stored by someone else: the operations work on that document and its own overflow
        // documents (`userId` exactly `v`), and on no other.
        if !try_insert(&db, U, user(v.clone())).await {
            continue;
        }
        let before = snap(&db).await;
        let pushed = [hpost("a"), hpost("b"), hpost("c")];
        let (done, after) = l
            .judge(
                "Outlier::push_many (stored id)",
                &input,
                &before,
                posts.push_many(v.clone(), pushed.to_vec()),
                |_, after| {
                    for (c, docs) in &before.0 {
                        if c != U && c != O && after.0.get(c) != Some(docs) {
                            return Err(format!("`{c}` changed"));
                        }
                    }
                    let others = |s: &Snap, c: &str| -> Vec<Document> {
                        s.docs(c)
                            .into_iter()
                            .filter(|d| {
                                d.get("_id").is_some_and(|i| !same(i, &v))
                                    && d.get("userId").is_none_or(|p| !same(p, &v))
                            })
                            .collect()
                    };
                    if others(&before, U) != others(after, U)
                        || others(&before, O) != others(after, O)
                    {
                        return Err("another user's documents changed".into());
                    }
                    let mine: Vec<Document> = after
                        .docs(O)
                        .into_iter()
                        .filter(|d| d.get("userId").is_some_and(|p| same(p, &v)))
                        .collect();
                    let main = after
                        .docs(U)
                        .into_iter()
                        .find(|d| d.get("_id").is_some_and(|i| same(i, &v)));
                    match (main, mine.as_slice()) {
                        (Some(m), [o])
                            if m.get("postsCount") == Some(&Bson::Int64(3))
                                && o.get_array("posts").map(Vec::len).ok() == Some(1) =>
                        {
                            Ok(())
                        }
                        (m, o) => Err(format!("the user is {m:?}, its overflow documents {o:?}")),
                    }
                },
            )
            .await;
        if done.is_none() {
            continue;
        }
        let s = l
            .read(
                "Outlier::items (stored id)",
                &input,
                &after,
                posts.items(v.clone()),
                |got| {
                    if posts_same(got, &pushed) {
                        Ok(())
                    } else {
                        Err(format!("read back {got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Outlier::page (stored id)",
                &input,
                &s,
                posts.page(v.clone(), 1, 2),
                |got| {
                    if posts_same(got, &pushed[1..]) {
                        Ok(())
                    } else {
                        Err(format!("read back {got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Outlier::count (stored id)",
                &input,
                &s,
                posts.count(v.clone()),
                |n| {
                    if *n == 3 {
                        Ok(())
                    } else {
                        Err(format!("{n}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Outlier::check (stored id)",
                &input,
                &s,
                posts.state(v.clone()),
                |st| {
                    if st.is_consistent() && st.overflowed == 1 {
                        Ok(())
                    } else {
                        Err(format!("{st:?}"))
                    }
                },
            )
            .await;
        let (_, s) = l
            .judge(
                "Outlier::remove (stored id)",
                &input,
                &s,
                posts.remove(v.clone(), &hpost("c")),
                |n, after| {
                    let gone = after
                        .docs(O)
                        .iter()
                        .all(|d| d.get("userId").is_none_or(|p| !same(p, &v)));
                    if *n == 1 && gone {
                        Ok(())
                    } else {
                        Err(format!("removed {n}; overflow documents left: {}", !gone))
                    }
                },
            )
            .await;
        let s2 = s.clone();
        l.judge(
            "Outlier::rebuild (stored id)",
            &input,
            &s,
            posts.rebuild(v.clone()),
            move |rebuilt, after| {
                if rebuilt.repaired == 0 && s2 == *after {
                    Ok(())
                } else {
                    Err(format!("{rebuilt:?}"))
                }
            },
        )
        .await;
    }

    // Two users whose `_id`s print alike (`7` and `"7"`, `{a: 1}` and `"{ \"a\": 1 }"`): each
    // overflows into documents of its own.
    for (a, b) in [
        (Bson::Int32(7), Bson::String("7".into())),
        (
            Bson::Document(doc! { "a": 1 }),
            Bson::String(Bson::Document(doc! { "a": 1 }).to_string()),
        ),
        (Bson::String("x_1".into()), Bson::String("x".into())),
    ] {
        let input = format!("ids {} and {}", label(&a), label(&b));
        reset_all(&db, &baseline).await;
        for id in [&a, &b] {
            try_insert(&db, U, user(id.clone())).await;
        }
        for id in [&a, &b] {
            let before = snap(&db).await;
            let (done, after) = l
                .judge(
                    "Outlier::push_many",
                    &input,
                    &before,
                    posts.push_many(id.clone(), three(&label(id).into())),
                    |_, _| Ok(()),
                )
                .await;
            if done.is_some() {
                l.read(
                    "Outlier::items",
                    &input,
                    &after,
                    posts.items(id.clone()),
                    |got| {
                        if posts_same(got, &three(&label(id).into())) {
                            Ok(())
                        } else {
                            Err(format!("read back {got:?}"))
                        }
                    },
                )
                .await;
            }
        }
    }

    // Item values: embedded (the first two) and overflowed (the third), each stored as given or
    // refused (`InvalidValue` for keys with `$`, `.` or NUL, nesting past MAX_VALUE_DEPTH).
    for v in hostile() {
        let input = format!("item {{v: {}}}", label(&v));
        reset_all(&db, &baseline).await;
        try_insert(&db, U, user("fresh".into())).await;
        let before = snap(&db).await;
        let items = three(&v);
        let (done, after) = l
            .judge(
                "Outlier::push_many",
                &input,
                &before,
                posts.push_many("fresh", items.clone()),
                |_, after| {
                    let main = after
                        .docs(U)
                        .into_iter()
                        .find(|d| d.get_str("_id").ok() == Some("fresh"));
                    let over: Vec<Document> = after
                        .docs(O)
                        .into_iter()
                        .filter(|d| d.get_str("userId").ok() == Some("fresh"))
                        .collect();
                    let stored: Vec<Bson> = main
                        .iter()
                        .chain(over.iter())
                        .flat_map(|d| d.get_array("posts").cloned().unwrap_or_default())
                        .collect();
                    let want = Bson::Document(doc! { "v": v.clone() });
                    if stored.len() == 3 && stored.iter().all(|s| same(s, &want)) {
                        Ok(())
                    } else {
                        Err(format!("stored {}", label(&Bson::Array(stored))))
                    }
                },
            )
            .await;
        if done.is_none() {
            continue;
        }
        let s = l
            .read(
                "Outlier::items",
                &input,
                &after,
                posts.items("fresh"),
                |got| {
                    if posts_same(got, &items) {
                        Ok(())
                    } else {
                        Err(format!("read back {got:?}"))
                    }
                },
            )
            .await;
        let s = l
            .read(
                "Outlier::page",
                &input,
                &s,
                posts.page("fresh", 2, 5),
                |got| {
                    if posts_same(got, &items[2..]) {
                        Ok(())
                    } else {
                        Err(format!("read back {got:?}"))
                    }
                },
            )
            .await;
        let user_after = s.docs(U);
        l.judge(
            "Outlier::remove",
            &input,
            &s,
            posts.remove("fresh", &hpost(v.clone())),
            |n, after| {
                let main = after
                    .docs(U)
                    .into_iter()
                    .find(|d| d.get_str("_id").ok() == Some("fresh"));
                let left = after
                    .docs(O)
                    .iter()
                    .filter(|d| d.get_str("userId").ok() == Some("fresh"))
                    .count();
                let others_same = after
                    .docs(U)
                    .into_iter()
                    .filter(|d| d.get_str("_id").ok() != Some("fresh"))
                    .collect::<Vec<_>>()
                    == user_after
                        .iter()
                        .filter(|d| d.get_str("_id").ok() != Some("fresh"))
                        .cloned()
                        .collect::<Vec<_>>();
                match main {
                    Some(m)
                        if *n == 3
                            && left == 0
                            && others_same
                            && m.get_array("posts").map(Vec::len).ok() == Some(0) =>
                    {
                        Ok(())
                    }
                    m => Err(format!(
                        "removed {n}, the user is {m:?}, {left} overflow documents left"
                    )),
                }
            },
        )
        .await;
    }
    l.finish();
}

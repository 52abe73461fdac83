//! Typed filters, sorts and updates (`pattern_runtime::query`): each typed form makes exactly the
//! document written by hand, finds and writes the same documents on the server, and keeps a
//! caller's value as data.

use bson::{doc, Bson, DateTime, Document};
use pattern_runtime::query::{Filter, Sort, Update};
use pattern_runtime::{Error, Fields, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Dims {
    weight_grams: u32,
    label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct Review {
    stars: i32,
    #[serde(rename = "by")]
    who: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "query_products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    price: f64,
    stock: i64,
    tags: Vec<String>,
    nickname: Option<String>,
    dims: Dims,
    reviews: Vec<Review>,
    seen_at: Option<DateTime>,
    meta: Document,
}

fn product(id: &str, price: f64, stock: i64, tags: &[&str]) -> Product {
    Product {
        id: id.into(),
        price,
        stock,
        tags: tags.iter().map(|t| t.to_string()).collect(),
        nickname: None,
        dims: Dims {
            weight_grams: 100,
            label: "box".into(),
        },
        reviews: vec![Review {
            stars: 4,
            who: "ann".into(),
        }],
        seen_at: None,
        meta: Document::new(),
    }
}

/// Every typed filter against the document a user writes by hand.
#[test]
fn typed_filters_make_the_documents_written_by_hand() {
    let f = Product::FIELDS;
    let cases: Vec<(Filter<_>, Document)> = vec![
        (Filter::eq(f.id, "a"), doc! { "_id": { "$eq": "a" } }),
        (Filter::eq(f.price, 10.0), doc! { "price": { "$eq": 10.0 } }),
        (Filter::eq(f.price, 10), doc! { "price": { "$eq": 10.0 } }),
        (Filter::ne(f.stock, 3), doc! { "stock": { "$ne": 3_i64 } }),
        (Filter::gt(f.stock, 3), doc! { "stock": { "$gt": 3_i64 } }),
        (Filter::gte(f.price, 1.5), doc! { "price": { "$gte": 1.5 } }),
        (Filter::lt(f.price, 2.5), doc! { "price": { "$lt": 2.5 } }),
        (Filter::lte(f.stock, 0), doc! { "stock": { "$lte": 0_i64 } }),
        (
            Filter::eq(f.nickname, None),
            doc! { "nickname": { "$eq": Bson::Null } },
        ),
        (
            Filter::eq(f.nickname, "x".to_owned()),
            doc! { "nickname": { "$eq": "x" } },
        ),
        (
            Filter::eq(f.tags, vec!["a".to_owned()]),
            doc! { "tags": { "$eq": ["a"] } },
        ),
        (
            Filter::is_in(f.id, ["a", "b"]),
            doc! { "_id": { "$in": ["a", "b"] } },
        ),
        (
            Filter::not_in(f.stock, [1, 2]),
            doc! { "stock": { "$nin": [1_i64, 2_i64] } },
        ),
        (
            Filter::is_in(f.id, Vec::<String>::new()),
            doc! { "_id": { "$in": [] } },
        ),
        (
            Filter::exists(f.nickname, true),
            doc! { "nickname": { "$exists": true } },
        ),
        (
            Filter::exists(f.nickname, false),
            doc! { "nickname": { "$exists": false } },
        ),
        (
            Filter::all(f.tags, ["a", "b"]),
            doc! { "tags": { "$all": ["a", "b"] } },
        ),
        (Filter::size(f.tags, 2), doc! { "tags": { "$size": 2_i64 } }),
        (
            Filter::elem_match(f.reviews, |r| {
                Filter::gte(r.stars, 4).and(Filter::eq(r.who, "ann"))
            }),
            // A conjunction is sent in its implicit form, which every server runs.
            doc! { "reviews": { "$elemMatch": {
                "stars": { "$gte": 4 }, "by": { "$eq": "ann" },
            } } },
        ),
        (
            Filter::elem_match(f.reviews, |r| {
                Filter::gte(r.stars, 2)
                    .and(Filter::lte(r.stars, 4))
                    .and(Filter::eq(r.who, "$ann"))
            }),
            doc! { "reviews": { "$elemMatch": {
                "stars": { "$gte": 2, "$lte": 4 }, "by": { "$eq": "$ann" },
            } } },
        ),
        (
            // A repeated operator, or a disjunction, keeps the explicit form.
            Filter::elem_match(f.reviews, |r| {
                Filter::gte(r.stars, 2).and(Filter::gte(r.stars, 4).or(Filter::eq(r.who, "a")))
            }),
            doc! { "reviews": { "$elemMatch": { "$and": [
                { "stars": { "$gte": 2 } },
                { "$or": [ { "stars": { "$gte": 4 } }, { "by": { "$eq": "a" } } ] },
            ] } } },
        ),
        (
            Filter::eq(f.dims.then(|d| d.weight_grams), 100u32),
            doc! { "dims.weightGrams": { "$eq": 100_i64 } },
        ),
        (
            Filter::eq(f.dims.then(|d| d.label), "box"),
            doc! { "dims.label": { "$eq": "box" } },
        ),
        (
            Filter::gte(f.reviews.then(|r| r.stars), 5),
            doc! { "reviews.stars": { "$gte": 5 } },
        ),
        (
            Filter::lt(f.price, 10.0).and(Filter::gt(f.stock, 0)),
            doc! { "$and": [ { "price": { "$lt": 10.0 } }, { "stock": { "$gt": 0_i64 } } ] },
        ),
        (
            Filter::lt(f.price, 10.0).or(Filter::gt(f.stock, 0)),
            doc! { "$or": [ { "price": { "$lt": 10.0 } }, { "stock": { "$gt": 0_i64 } } ] },
        ),
        (
            Filter::and_all([
                Filter::eq(f.id, "a"),
                Filter::eq(f.stock, 1),
                Filter::eq(f.price, 1.0),
            ]),
            doc! { "$and": [ { "_id": { "$eq": "a" } }, { "stock": { "$eq": 1_i64 } }, { "price": { "$eq": 1.0 } } ] },
        ),
        (
            Filter::or_any([Filter::eq(f.id, "a"), Filter::eq(f.id, "b")]),
            doc! { "$or": [ { "_id": { "$eq": "a" } }, { "_id": { "$eq": "b" } } ] },
        ),
        (
            Filter::none_of([Filter::eq(f.id, "a")]),
            doc! { "$nor": [ { "_id": { "$eq": "a" } } ] },
        ),
        (
            !Filter::gt(f.price, 3.0),
            doc! { "$nor": [ { "price": { "$gt": 3.0 } } ] },
        ),
        (Filter::default(), doc! {}),
        // Values are literals: a string that looks like an operator or a path, a document with
        // operator keys, a regular expression, all compared as values under `$eq`.
        (Filter::eq(f.id, "$gt"), doc! { "_id": { "$eq": "$gt" } }),
        (
            Filter::eq(f.id, "$$ROOT"),
            doc! { "_id": { "$eq": "$$ROOT" } },
        ),
        (
            Filter::eq(f.meta, doc! { "$gt": 1 }),
            doc! { "meta": { "$eq": { "$gt": 1 } } },
        ),
        (Filter::eq(f.id, "a.b"), doc! { "_id": { "$eq": "a.b" } }),
    ];
    let n = cases.len();
    for (typed, by_hand) in cases {
        assert_eq!(typed.into_document().unwrap(), by_hand);
    }
    assert!(n >= 30, "{n} cases");
}

#[test]
fn typed_updates_and_sorts_make_the_documents_written_by_hand() {
    let f = Product::FIELDS;
    let at = DateTime::from_millis(0);
    let cases: Vec<(Update<_>, Document)> = vec![
        (
            Update::new().set(f.price, 2.5),
            doc! { "$set": { "price": 2.5 } },
        ),
        (
            Update::new().set(f.price, 2),
            doc! { "$set": { "price": 2.0 } },
        ),
        (
            Update::new().set(f.nickname, Some("n".to_owned())),
            doc! { "$set": { "nickname": "n" } },
        ),
        (
            Update::new().set(f.nickname, None),
            doc! { "$set": { "nickname": Bson::Null } },
        ),
        (
            Update::new().set(
                f.dims,
                Dims {
                    weight_grams: 5,
                    label: "l".into(),
                },
            ),
            doc! { "$set": { "dims": { "weightGrams": 5_i64, "label": "l" } } },
        ),
        (
            Update::new().set(f.dims.then(|d| d.label), "l"),
            doc! { "$set": { "dims.label": "l" } },
        ),
        (
            Update::new().set(f.seen_at, at),
            doc! { "$set": { "seenAt": at } },
        ),
        (
            Update::new().unset(f.nickname),
            doc! { "$unset": { "nickname": "" } },
        ),
        (
            Update::new().inc(f.stock, 1),
            doc! { "$inc": { "stock": 1_i64 } },
        ),
        (
            Update::new().inc(f.price, 0.5),
            doc! { "$inc": { "price": 0.5 } },
        ),
        (
            Update::new().mul(f.price, 2.0),
            doc! { "$mul": { "price": 2.0 } },
        ),
        (
            Update::new().min(f.stock, 0),
            doc! { "$min": { "stock": 0_i64 } },
        ),
        (
            Update::new().max(f.stock, 9),
            doc! { "$max": { "stock": 9_i64 } },
        ),
        (
            Update::new().push(f.tags, "t"),
            doc! { "$push": { "tags": "t" } },
        ),
        (
            Update::new().push_each(f.tags, ["a", "b"]),
            doc! { "$push": { "tags": { "$each": ["a", "b"] } } },
        ),
        (
            Update::new().add_to_set(f.tags, "t"),
            doc! { "$addToSet": { "tags": "t" } },
        ),
        (
            Update::new().pull(f.tags, "t"),
            doc! { "$pullAll": { "tags": ["t"] } },
        ),
        (
            Update::new().push(
                f.reviews,
                Review {
                    stars: 5,
                    who: "bo".into(),
                },
            ),
            doc! { "$push": { "reviews": { "stars": 5, "by": "bo" } } },
        ),
        (
            Update::new().current_date(f.seen_at),
            doc! { "$currentDate": { "seenAt": true } },
        ),
        (
            Update::new()
                .set(f.price, 1.0)
                .inc(f.stock, 2)
                .set(f.nickname, None)
                .push(f.tags, "x"),
            doc! {
                "$set": { "price": 1.0, "nickname": Bson::Null },
                "$inc": { "stock": 2_i64 },
                "$push": { "tags": "x" },
            },
        ),
        // Values are literals: stored as the strings they are.
        (
            Update::new().set(f.nickname, Some("$gt".to_owned())),
            doc! { "$set": { "nickname": "$gt" } },
        ),
        (
            Update::new().push(f.tags, "$$ROOT"),
            doc! { "$push": { "tags": "$$ROOT" } },
        ),
    ];
    for (typed, by_hand) in cases {
        assert_eq!(typed.into_document().unwrap(), by_hand);
    }
    let sorts: Vec<(Sort<_>, Document)> = vec![
        (Sort::asc(f.price).erase(), doc! { "price": 1 }),
        (
            Sort::desc(f.price).then_asc(f.id).erase(),
            doc! { "price": -1, "_id": 1 },
        ),
        (
            Sort::asc(f.dims.then(|d| d.weight_grams))
                .then_desc(f.stock)
                .erase(),
            doc! { "dims.weightGrams": 1, "stock": -1 },
        ),
    ];
    for (typed, by_hand) in sorts {
        assert_eq!(typed.into_document(), by_hand);
    }
}

/// What the server could not take as a literal is refused before anything is sent, naming the
/// field.
#[test]
fn values_the_server_would_not_take_as_given_are_refused() {
    let f = Product::FIELDS;
    let refused = |r: pattern_runtime::Result<Document>, field: &str| match r {
        Err(Error::InvalidValue { field: got, .. }) => assert_eq!(got, field),
        other => panic!("{field}: {other:?}"),
    };
    refused(
        Update::new()
            .set(f.meta, doc! { "$where": "1" })
            .into_document(),
        "meta",
    );
    refused(
        Update::new().set(f.meta, doc! { "a.b": 1 }).into_document(),
        "meta",
    );
    refused(
        Update::new().set(f.meta, doc! { "a\0": 1 }).into_document(),
        "meta",
    );
    refused(
        Update::new()
            .set(f.price, 1.0)
            .inc(f.price, 1.0)
            .into_document(),
        "price",
    );
    refused(
        Update::new()
            .set(
                f.dims,
                Dims {
                    weight_grams: 1,
                    label: "x".into(),
                },
            )
            .set(f.dims.then(|d| d.label), "y")
            .into_document(),
        "dims.label",
    );
    refused(
        Update::new()
            .set(f.stock, 1)
            .set(f.stock, 2)
            .into_document(),
        "stock",
    );
    let regex = Bson::RegularExpression(bson::Regex {
        pattern: "a".try_into().unwrap(),
        options: "".try_into().unwrap(),
    });
    assert!(Filter::is_in(f.meta, [doc! { "r": regex.clone() }])
        .into_document()
        .is_ok());
    // A regex inside a document is compared as that document; a bare regex value (a `Bson`
    // field) in `$in` would match as a pattern.
    #[derive(Serialize, Deserialize, Model)]
    #[model(collection = "query_loose")]
    struct Loose {
        #[serde(rename = "_id")]
        id: i32,
        any: Bson,
    }
    refused(
        Filter::is_in(Loose::FIELDS.any, [regex.clone()]).into_document(),
        "any",
    );
    refused(
        Filter::not_in(Loose::FIELDS.any, [regex]).into_document(),
        "any",
    );
    // `u64` past `i64::MAX` has no BSON form.
    #[derive(Serialize, Deserialize, Model)]
    #[model(collection = "query_big")]
    struct Big {
        #[serde(rename = "_id")]
        id: i32,
        n: u64,
    }
    refused(Filter::eq(Big::FIELDS.n, u64::MAX).into_document(), "n");
    refused(
        Update::new().inc(Big::FIELDS.n, u64::MAX).into_document(),
        "n",
    );
}

/// On the server: each typed filter finds what its hand-written document finds, and a typed
/// update writes what its hand-written one writes.
#[tokio::test]
async fn typed_forms_find_and_write_what_the_hand_written_ones_do() {
    let db = test_db("query_server").await;
    let products = Product::collection(&db);
    let mut items = vec![
        product("a", 1.0, 0, &["x"]),
        product("b", 5.0, 3, &["x", "y"]),
        product("c", 9.5, 7, &[]),
    ];
    items[1].nickname = Some("$gt".into());
    items[2].reviews.push(Review {
        stars: 1,
        who: "$$ROOT".into(),
    });
    products.raw().insert_many(&items).await.unwrap();
    let f = Product::FIELDS;
    let pairs: Vec<(Filter<_>, Document)> = vec![
        (Filter::gt(f.price, 2.0), doc! { "price": { "$gt": 2.0 } }),
        (
            Filter::eq(f.nickname, Some("$gt".to_owned())),
            doc! { "nickname": "$gt" },
        ),
        (Filter::size(f.tags, 0), doc! { "tags": { "$size": 0 } }),
        (Filter::all(f.tags, ["x"]), doc! { "tags": "x" }),
        (
            Filter::elem_match(f.reviews, |r| Filter::eq(r.who, "$$ROOT")),
            doc! { "reviews.by": { "$eq": "$$ROOT" } },
        ),
        (Filter::eq(f.meta, Document::new()), doc! { "meta": {} }),
        (Filter::eq(f.id, "$gt"), doc! { "_id": { "$eq": "$gt" } }),
        (
            !Filter::lt(f.stock, 5),
            doc! { "stock": { "$not": { "$lt": 5 } } },
        ),
    ];
    for (typed, by_hand) in pairs {
        let shown = format!("{typed:?}");
        let a: Vec<String> = products
            .find(typed)
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        let b: Vec<String> = products
            .find(by_hand)
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(a, b, "{shown}");
    }

    // `count` takes a typed filter too (and a document).
    assert_eq!(products.count(Filter::gt(f.price, 2.0)).await.unwrap(), 2);
    assert_eq!(
        products
            .count(doc! { "price": { "$gt": 2.0 } })
            .await
            .unwrap(),
        2
    );
    assert_eq!(products.count(Filter::default()).await.unwrap(), 3);

    // An update through a handle: the values stored as given, read back exactly.
    let computing = Product::collection(&db);
    computing
        .update(
            "a",
            Update::new()
                .set(f.nickname, Some("$set".to_owned()))
                .push(f.tags, "$$ROOT")
                .inc(f.stock, 2)
                .set(f.meta, doc! { "k": "$v", "n": { "deep": [1, "$x"] } }),
        )
        .await
        .unwrap();
    let a = products
        .find_one(Filter::eq(f.id, "a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.nickname.as_deref(), Some("$set"));
    assert_eq!(a.tags, ["x", "$$ROOT"]);
    assert_eq!(a.stock, 2);
    assert_eq!(a.meta, doc! { "k": "$v", "n": { "deep": [1, "$x"] } });

    // A value the server could not store as given: refused, nothing written.
    let before = pattern_testkit::docs(&db, "query_products").await;
    let err = computing
        .update(
            "a",
            Update::new().set(f.meta, doc! { "$inc": { "stock": 1 } }),
        )
        .await
        .unwrap_err();
    assert!(err.is_refused_input(), "{err:?}");
    assert_eq!(pattern_testkit::docs(&db, "query_products").await, before);

    // `pull` removes equal items only.
    computing
        .update("a", Update::new().pull(f.tags, "$$ROOT"))
        .await
        .unwrap();
    let a = products
        .find_one(Filter::eq(f.id, "a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.tags, ["x"]);
    computing
        .update("a", Update::new().unset(f.nickname).current_date(f.seen_at))
        .await
        .unwrap();
    let a = products
        .find_one(Filter::eq(f.id, "a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.nickname, None);
    assert!(a.seen_at.is_some());
}

/// Every document of `find`, read through its stream.
async fn streamed<M: Model, S>(find: pattern_runtime::query::Find<'_, M, S>) -> Vec<M> {
    use futures_util::TryStreamExt;
    find.stream().await.unwrap().try_collect().await.unwrap()
}

/// `find` sorted and limited, awaited as a `Vec` or streamed from the cursor: the same
/// documents in the same order, one `find` each; a limit of 0 reads none; in a caller's
/// transaction the stream reads in its session.
#[tokio::test]
async fn find_sorts_limits_and_streams() {
    let db = test_db("query_find_stream").await;
    let products = Product::collection(&db);
    let all: Vec<Product> = (1..=7)
        .map(|n| product(&format!("p{n}"), f64::from(n) * 1.5, 10 - i64::from(n), &[]))
        .collect();
    products.insert_many(&all).await.unwrap();
    let f = Product::FIELDS;

    let top = products
        .find(Filter::gt(f.price, 2.0))
        .sort(Sort::desc(f.price))
        .limit(3)
        .await
        .unwrap();
    let ids: Vec<&str> = top.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["p7", "p6", "p5"]);

    db.take_commands();
    let from_cursor = streamed(
        products
            .find(Filter::gt(f.price, 2.0))
            .sort(Sort::desc(f.price))
            .limit(3),
    )
    .await;
    assert_eq!(from_cursor, top);
    let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    assert_eq!(sent, ["find"], "one find, its cursor read to the end");

    // Every document, in batches of the server's size, in `_id` order.
    let every = streamed(products.find(doc! {}).sort(doc! { "_id": 1 })).await;
    assert_eq!(every, all);

    assert!(products.find(doc! {}).limit(0).await.unwrap().is_empty());
    let none = streamed(products.find(doc! {}).limit(0)).await;
    assert!(none.is_empty());

    // In a caller's transaction: read in its session, the transaction still usable.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let bound = products.in_transaction(&tx);
    bound
        .update("p1", Update::new().set(f.price, 100.0))
        .await
        .unwrap();
    let first = streamed(bound.find(doc! {}).sort(Sort::desc(f.price)).limit(1)).await;
    assert_eq!(first[0].id, "p1", "the transaction's own write is seen");
    tx.abort().await.unwrap();
    let p1 = products.get("p1").await.unwrap().unwrap();
    assert_eq!(p1.price, 1.5, "aborted");
}

/// A model whose `score` has an index, with ties: keyset pages walk it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "query_ranked")]
struct Ranked {
    #[serde(rename = "_id")]
    id: i64,
    #[index(-1)]
    score: i64,
    note: String,
}

/// Keyset pages after the last document: every document once, in the sort's order, ties
/// broken by `_id`, across the page boundaries; refused without a sort or on a sort no index
/// serves, nothing sent.
#[tokio::test]
async fn keyset_pages_walk_an_indexed_sort_without_skips_or_repeats() {
    let db = test_db("query_keyset").await;
    pattern_runtime::sync(&db)
        .models(&[Ranked::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let ranked = Ranked::collection(&db);
    // Scores with ties that straddle the page boundaries.
    let docs: Vec<Ranked> = (1..=11)
        .map(|id| Ranked {
            id,
            score: [5, 5, 5, 4, 4, 3, 3, 3, 3, 1, 0][usize::try_from(id - 1).unwrap()],
            note: format!("n{id}"),
        })
        .collect();
    ranked.insert_many(&docs).await.unwrap();
    let f = Ranked::FIELDS;
    for descending in [true, false] {
        // One type for both orders: checked at run time (the pages below are typed).
        let sort = || {
            if descending {
                Sort::desc(f.score).then_desc(f.id).erase()
            } else {
                Sort::asc(f.score).then_asc(f.id).erase()
            }
        };
        let mut seen: Vec<Ranked> = Vec::new();
        let mut page = ranked.find(doc! {}).sort(sort()).limit(3).await.unwrap();
        while !page.is_empty() {
            let last = page.last().unwrap().clone();
            seen.extend(page);
            page = ranked
                .find(doc! {})
                .sort(sort())
                .after(&last)
                .limit(3)
                .await
                .unwrap();
        }
        let mut expected = docs.clone();
        expected.sort_by_key(|d| {
            (
                if descending { -d.score } else { d.score },
                d.id * if descending { -1 } else { 1 },
            )
        });
        let ids = |v: &[Ranked]| v.iter().map(|d| d.id).collect::<Vec<_>>();
        assert_eq!(ids(&seen), ids(&expected), "descending: {descending}");
    }
    // With a filter too: only the matching documents, still in order.
    let by_score = || Sort::desc(f.score).then_desc(f.id);
    let first = ranked
        .find(Filter::gte(f.score, 3))
        .sort(by_score())
        .limit(4)
        .await
        .unwrap();
    let rest = ranked
        .find(Filter::gte(f.score, 3))
        .sort(by_score())
        .after(first.last().unwrap())
        .await
        .unwrap();
    assert_eq!(first.len() + rest.len(), 9);
    assert!(rest.iter().all(|d| d.score >= 3 && !first.contains(d)));

    // A sort given as a document is checked at run time, refused before anything is sent: one
    // not ending with `_id`, one no index serves, and one no index serves once typed sorts
    // are erased. (Typed, without a sort or on these sorts, `after` does not compile: see
    // the compile-fail cases `query/page_*`.)
    db.take_commands();
    let e = ranked
        .find(doc! {})
        .sort(doc! { "score": -1 })
        .after(&docs[0])
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    let e = ranked
        .find(doc! {})
        .sort(Sort::asc(f.note).then_asc(f.id).erase())
        .after(&docs[0])
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { ref operation, .. } if operation == "after, sorted by note"),
        "{e:?}"
    );
    let e = ranked
        .find(doc! {})
        .sort(doc! { "note": 1, "_id": 1 })
        .after(&docs[0])
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { ref operation, .. } if operation == "after, sorted by note"),
        "{e:?}"
    );
    // A sort value other than 1 or -1 (a text score) has no order a page can follow.
    let e = ranked
        .find(doc! {})
        .sort(doc! { "score": { "$meta": "textScore" }, "_id": 1 })
        .after(&docs[0])
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    // A projection without a sort key (here `score`, then `_id`) cannot say where its page
    // ends.
    let last_note = RankedNote {
        id: docs[0].id,
        note: docs[0].note.clone(),
    };
    let e = ranked
        .find(doc! {})
        .sort(by_score())
        .project::<RankedNote>()
        .after(&last_note)
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { ref operation, .. } if operation == "after, sorted by score"),
        "{e:?}"
    );
    let last_score = RankedScore {
        score: docs[0].score,
    };
    let e = ranked
        .find(doc! {})
        .sort(by_score())
        .project::<RankedScore>()
        .after(&last_score)
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { ref operation, .. } if operation == "after, sorted by _id"),
        "{e:?}"
    );
    assert!(db.take_commands().is_empty(), "nothing sent");
    // With every sort key, a projection pages like its model.
    let first = ranked
        .find(doc! {})
        .sort(by_score())
        .project::<RankedBrief>()
        .limit(4)
        .await
        .unwrap();
    let rest = ranked
        .find(doc! {})
        .sort(by_score())
        .project::<RankedBrief>()
        .after(first.last().unwrap())
        .await
        .unwrap();
    let mut ids: Vec<i64> = first.iter().chain(&rest).map(|b| b.id).collect();
    assert_eq!(ids.len(), docs.len(), "each document once");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), docs.len(), "no repeats");
}

/// Projections of `Ranked`: without its sort key, without `_id`, with both.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[projection(of = Ranked)]
struct RankedNote {
    #[serde(rename = "_id")]
    id: i64,
    note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[projection(of = Ranked)]
struct RankedScore {
    score: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[projection(of = Ranked)]
struct RankedBrief {
    #[serde(rename = "_id")]
    id: i64,
    score: i64,
}

/// Every model of this binary compiles into keyset impls the orders its indexes serve at run
/// time, patterns' indexes included (a typed page the run-time check would take compiles).
#[test]
fn keyset_orders_compiled_are_those_the_indexes_serve() {
    let checked = pattern_testkit::assert_keyset_orders_agree();
    assert!(checked > 100, "only {checked} models registered");
}

/// A model whose indexed `grade` is optional: `None` stored as `null` or left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "query_graded")]
struct Graded {
    #[serde(rename = "_id")]
    id: i64,
    #[index(1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grade: Option<i64>,
}

/// Keyset pages over an optional field walk past its `null`s and missing values both ways:
/// `null` sorts before every number, but `$gt: null` matches no number.
#[tokio::test]
async fn keyset_pages_walk_past_nulls_of_an_optional_field() {
    let db = test_db("query_keyset_nulls").await;
    pattern_runtime::sync(&db)
        .models(&[Graded::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let graded = Graded::collection(&db);
    let grades = [
        None,
        Some(2),
        None,
        Some(-1),
        Some(2),
        None,
        Some(7),
        None,
        Some(0),
    ];
    let docs: Vec<Graded> = grades
        .iter()
        .zip(1..)
        .map(|(grade, id)| Graded { id, grade: *grade })
        .collect();
    graded.insert_many(&docs).await.unwrap();
    // Two of the `None`s stored as an explicit `null`, the others left out.
    graded
        .raw()
        .update_many(
            doc! { "_id": { "$in": [1, 6] } },
            doc! { "$set": { "grade": null } },
        )
        .await
        .unwrap();
    let f = Graded::FIELDS;
    for descending in [false, true] {
        for size in [1, 2, 3, 4] {
            let sort = || {
                if descending {
                    Sort::desc(f.grade).then_desc(f.id).erase()
                } else {
                    Sort::asc(f.grade).then_asc(f.id).erase()
                }
            };
            let mut seen: Vec<i64> = Vec::new();
            let mut page = graded.find(doc! {}).sort(sort()).limit(size).await.unwrap();
            while !page.is_empty() {
                let last = page.last().unwrap().clone();
                seen.extend(page.iter().map(|d| d.id));
                page = graded
                    .find(doc! {})
                    .sort(sort())
                    .after(&last)
                    .limit(size)
                    .await
                    .unwrap();
            }
            // `None` first ascending, last descending; ties by `_id`.
            let mut expected = docs.clone();
            expected.sort_by_key(|d| (d.grade, d.id));
            if descending {
                expected.reverse();
            }
            let expected: Vec<i64> = expected.iter().map(|d| d.id).collect();
            assert_eq!(seen, expected, "descending: {descending}, page size {size}");
        }
    }
}

/// What a listing reads of a product: three of its fields, checked against `Product` at compile
/// time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
#[projection(of = Product)]
struct Listing {
    #[serde(rename = "_id")]
    id: String,
    price: f64,
    nickname: Option<String>,
}

/// The price alone, without `_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[projection(of = Product)]
struct PriceOnly {
    price: f64,
}

/// A projected find asks the server for the projection's fields only (`_id` left out unless
/// the projection has it), sorted and limited as any find, awaited or streamed, and paged by
/// keyset after the last projection.
#[tokio::test]
async fn a_projected_find_reads_only_the_projections_fields() {
    let db = test_db("query_projection").await;
    let products = Product::collection(&db);
    let all: Vec<Product> = (1..=5)
        .map(|n| {
            let mut p = product(&format!("p{n}"), f64::from(n), 1, &["$where"]);
            p.nickname = Some(format!("{{$gt: {n}}}"));
            p
        })
        .collect();
    products.insert_many(&all).await.unwrap();
    let f = Product::FIELDS;

    db.record_command_bodies();
    let cheap: Vec<Listing> = products
        .find(Filter::lt(f.price, 4.0))
        .sort(Sort::desc(f.price))
        .limit(2)
        .project::<Listing>()
        .await
        .unwrap();
    let sent = db.take_command_bodies();
    assert_eq!(
        sent[0].get_document("projection").unwrap(),
        &doc! { "_id": 1, "price": 1, "nickname": 1 }
    );
    let expected = |n: i32| Listing {
        id: format!("p{n}"),
        price: f64::from(n),
        nickname: Some(format!("{{$gt: {n}}}")),
    };
    assert_eq!(cheap, [expected(3), expected(2)]);
    // The sort and the limit read the same after `project`.
    let after_project: Vec<Listing> = products
        .find(Filter::lt(f.price, 4.0))
        .project::<Listing>()
        .sort(Sort::desc(f.price))
        .limit(2)
        .await
        .unwrap();
    assert_eq!(db.take_command_bodies(), sent);
    assert_eq!(after_project, cheap);

    let prices: Vec<PriceOnly> = products
        .find(doc! {})
        .sort(Sort::asc(f.price))
        .project::<PriceOnly>()
        .await
        .unwrap();
    assert_eq!(
        db.take_command_bodies()[0]
            .get_document("projection")
            .unwrap(),
        &doc! { "price": 1, "_id": 0 }
    );
    assert_eq!(prices.len(), 5);

    let streamed: Vec<Listing> = futures_util::TryStreamExt::try_collect(
        products
            .find(Filter::lt(f.price, 4.0))
            .sort(Sort::desc(f.price))
            .limit(2)
            .project::<Listing>()
            .stream()
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(streamed, cheap);

    // Keyset pages of projections over the `_id` (always served).
    let by_id = || Sort::asc(f.id);
    let first: Vec<Listing> = products
        .find(doc! {})
        .sort(by_id())
        .limit(3)
        .project::<Listing>()
        .await
        .unwrap();
    let rest: Vec<Listing> = products
        .find(doc! {})
        .sort(by_id())
        .project::<Listing>()
        .after(first.last().unwrap())
        .await
        .unwrap();
    let ids: Vec<&str> = first.iter().chain(&rest).map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["p1", "p2", "p3", "p4", "p5"]);
}

//! Documents the validator refuses: written with the driver or through a toolkit handle (an
//! update, a find-and-modify), each is `Error::ValidationFailed` with `fields` naming the failing
//! paths, odd keys refused when other fields are forbidden, nothing of the write stored.

use super::*;
use bson::{doc, oid::ObjectId, Bson, Document};
use pattern_runtime::{validator::sync_validators, At, Error, Model};
use pattern_testkit::test_db_unvalidated;

#[tokio::test]
async fn bad_documents_are_refused_naming_the_field() {
    let db = test_db_unvalidated("validator_refusals").await;
    sync_validators(&db, &[VProduct::SCHEMA], &strict().forbid_other_fields())
        .await
        .unwrap();
    let raw = db.collection::<Document>("v_products");
    raw.insert_one(raw_product("ok")).await.unwrap();
    let refused = |field: &'static str, doc: Document| {
        let raw = raw.clone();
        async move {
            let e: Error = raw.insert_one(doc).await.map_err(Error::from).unwrap_err();
            let Error::ValidationFailed { fields, .. } = &e else {
                panic!("{field}: {e:?}");
            };
            assert!(fields.iter().any(|f| f == field), "{field}: {fields:?}");
        }
    };
    // A wrong BSON type.
    let mut d = raw_product("type");
    d.insert("priceCents", "19.99");
    refused("priceCents", d).await;
    // A nested struct's wrong type, by its path.
    let mut d = raw_product("nested");
    d.insert(
        "topReviews",
        vec![doc! { "reviewId": 1_i64, "stars": "five" }],
    );
    refused("topReviews.0.stars", d).await;
    // A missing required field.
    let mut d = raw_product("missing");
    d.remove("launched");
    refused("launched", d).await;
    // Too many items: the subset keeps 3.
    let mut d = raw_product("many");
    let four: Vec<Document> = (0..4_i64)
        .map(|i| doc! { "reviewId": i, "stars": 5 })
        .collect();
    d.insert("topReviews", four);
    refused("topReviews", d).await;
    // A field the model does not declare.
    let mut d = raw_product("extra");
    d.insert("surprise", 1);
    refused("surprise", d).await;
    assert_eq!(
        raw.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing else stored"
    );
}

/// A write the validator refuses is `Error::ValidationFailed`, with `fields` naming
/// the failing paths as dotted paths (`address.city`, `tags.3`); nothing is stored.
#[tokio::test]
async fn hostile_documents_are_refused_naming_the_path() {
    let db = test_db_unvalidated("nv_hostile").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    raw.insert_one(raw_kinds(0)).await.unwrap();
    let cases: Vec<(&str, Change)> = vec![
        (
            "count",
            Box::new(|d| {
                d.insert("count", Bson::Null);
            }),
        ),
        (
            "tiny",
            Box::new(|d| {
                d.insert("tiny", 3_i64);
            }),
        ),
        (
            "label",
            Box::new(|d| {
                d.remove("label");
            }),
        ),
        (
            "bigNumber",
            Box::new(|d| {
                d.insert("bigNumber", "42");
            }),
        ),
        (
            "inner.x",
            Box::new(|d| {
                d.insert("inner", doc! { "x": "one" });
            }),
        ),
        (
            "inner.x",
            Box::new(|d| {
                d.insert("inner", doc! { "note": "no x" });
            }),
        ),
        (
            "scores.1",
            Box::new(|d| {
                d.insert("scores", bson::bson!([1, "two", null]));
            }),
        ),
        (
            "aliases.0",
            Box::new(|d| {
                d.insert("aliases", bson::bson!([1]));
            }),
        ),
        (
            "tally",
            Box::new(|d| {
                d.insert("tally", bson::bson!([1, 2]));
            }),
        ),
        (
            "tags",
            Box::new(|d| {
                d.insert("tags", bson::bson!(["a", "b", "c", "d"]));
            }),
        ),
        (
            "thread.replies.0.text",
            Box::new(|d| {
                d.insert(
                    "thread",
                    doc! { "text": "r", "replies": [{ "text": 5, "replies": [] }] },
                );
            }),
        ),
        (
            "maybe",
            Box::new(|d| {
                d.insert("maybe", "not an int");
            }),
        ),
        (
            "surprise",
            Box::new(|d| {
                d.insert("surprise", 1);
            }),
        ),
        (
            "inner.surprise",
            Box::new(|d| {
                d.insert("inner", doc! { "x": 1, "surprise": true });
            }),
        ),
    ];
    for (i, (path, change)) in cases.iter().enumerate() {
        let mut d = raw_kinds(100 + i as i64);
        change(&mut d);
        let fields = refused_fields(&raw, d).await;
        assert!(
            fields.iter().any(|f| f == path),
            "{path}: fields were {fields:?}"
        );
    }
    assert_eq!(
        raw.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing refused was stored"
    );
}

/// `forbid_other_fields` refuses undeclared fields in the model's documents *and the
/// structs in them*, whatever the key looks like (`$`-prefixed, dotted).
#[tokio::test]
async fn odd_keys_in_nested_structs_are_refused_when_other_fields_are_forbidden() {
    let db = test_db_unvalidated("nv_odd_keys").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let raw = db.collection::<Document>("nv_kinds");
    for (i, key) in ["$where", "a.b", "x.y.z", ""].into_iter().enumerate() {
        let mut d = raw_kinds(i as i64);
        let mut inner = doc! { "x": 1 };
        inner.insert(key, 1);
        d.insert("inner", inner);
        let result = raw.insert_one(d).await.map_err(Error::from);
        let e = result.expect_err(&format!("an undeclared key {key:?} was stored"));
        assert!(e.is_validation_failed(), "{key:?}: {e:?}");
        if let Error::ValidationFailed { fields, .. } = &e {
            assert!(
                fields.iter().any(|f| f.starts_with("inner")),
                "{key:?}: {fields:?}"
            );
        }
    }
    assert_eq!(raw.count_documents(doc! {}).await.unwrap(), 0);
}

/// A write the server refuses through a toolkit handle is `Error::ValidationFailed`
/// naming the field, nothing of it stored.
#[tokio::test]
async fn a_toolkit_update_refused_by_the_server_is_validation_failed() {
    let db = test_db_unvalidated("nv_toolkit_refused").await;
    sync_validators(&db, &[NvKinds::SCHEMA], &closed())
        .await
        .unwrap();
    let computing = NvKinds::collection(&db);
    computing.insert(&kinds(1)).await.unwrap();
    let e = computing
        .update(1_i64, doc! { "$set": { "tiny": "x", "label": "changed" } })
        .await
        .unwrap_err();
    let Error::ValidationFailed { fields, .. } = &e else {
        panic!("{e:?}");
    };
    assert!(fields.iter().any(|f| f == "tiny"), "{fields:?}");
    let stored = NvKinds::collection(&db).get(1_i64).await.unwrap().unwrap();
    assert_eq!(stored, kinds(1), "nothing of the refused write is stored");
}

/// `Error::ValidationFailed::fields`: "the fields the server says broke a rule ...
/// empty when the server sent no details". A versioned `update` and a `References::update` are
/// refused through `findAndModify`, whose reply carries `errInfo.details` (naming `title` /
/// `fullName`). The details are read from the command's reply
/// too, not from write errors only.
#[tokio::test]
async fn refusals_through_find_and_modify_name_the_field() {
    let db = test_db_unvalidated("nv_fam_fields").await;
    assert_installed(
        &sync_validators(&db, &[NvArticle::SCHEMA, NvCustomer::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let articles = NvArticle::collection(&db);
    let mut a = NvArticle {
        id: 1,
        version: 0,
        title: "t".into(),
        words: 1,
        tags: None,
    };
    articles.insert(&mut a).await.unwrap();
    let e = articles
        .update(At(1_i64, a.version), doc! { "$set": { "title": 5 } })
        .await
        .unwrap_err();
    let Error::ValidationFailed {
        fields, details, ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert!(details.is_some(), "{e:?}");
    assert_eq!(fields, &["title".to_owned()], "{e:?}");
    let ada = NvCustomer {
        id: ObjectId::new(),
        name: "Ada".into(),
        city: "London".into(),
        loyalty_points: 1,
    };
    NvCustomer::collection(&db).insert(&ada).await.unwrap();
    let e = NvCustomer::collection(&db)
        .update(ada.id, doc! { "$set": { NvCustomer::FIELDS.name: 42 } })
        .await
        .unwrap_err();
    let Error::ValidationFailed { fields, .. } = &e else {
        panic!("{e:?}");
    };
    assert!(fields.iter().any(|f| f == "fullName"), "{e:?}");
}

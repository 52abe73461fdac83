//! The patterns' own writes pass the validators they declare at `strict`/`error` with other
//! fields forbidden: subset, versioning, outlier, tree, extended reference, attribute, and a few
//! patterns on one model (a versioned extended-reference source, an outlier with a sharded
//! counter and a computed count, a struct `_id`).

use super::*;
use bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use pattern_runtime::{
    tree::Deletion,
    validator::{refused_documents, sync_validators, ValidatorOptions, ValidatorState},
    At, Error, Fields, Model, SyncOptions,
};
use pattern_testkit::{test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};

#[tokio::test]
async fn the_subset_writes_pass_a_strict_validator() {
    let db = test_db_unvalidated("validator_subset").await;
    pattern_runtime::sync(&db)
        .models(&[VProduct::SCHEMA, VReview::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    let report = sync_validators(
        &db,
        &[VProduct::SCHEMA, VReview::SCHEMA],
        &strict().forbid_other_fields(),
    )
    .await
    .unwrap();
    assert!(report
        .models
        .iter()
        .all(|m| matches!(m.state, ValidatorState::Created | ValidatorState::Applied)));
    VProduct::collection(&db)
        .raw()
        .insert_one(product("p"))
        .await
        .unwrap();
    let reviews = VProduct::collection(&db).subset(VProduct::FIELDS.top_reviews);
    for i in 0..6_i64 {
        reviews
            .push(
                "p",
                VReview {
                    id: i,
                    product_id: "p".into(),
                    stars: (i % 5) as i32 + 1,
                },
            )
            .await
            .unwrap();
    }
    reviews.remove("p", 4_i64).await.unwrap();
    reviews.rebuild("p").await.unwrap();
    let p = VProduct::collection(&db).get("p").await.unwrap().unwrap();
    assert_eq!(p.top_reviews.len(), 3);
    assert_eq!(p.review_count, 5);
    assert_eq!(
        refused_documents(&db, VProduct::SCHEMA, &ValidatorOptions::new())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvPost {
    n: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "nv_stars")]
#[serde(rename_all = "camelCase")]
struct NvStar {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 5, overflow = "nv_star_posts", capacity = 10, flag = is_outlier, count = posts_count)]
    posts: Vec<NvPost>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct NvCategory {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_shelf_items")]
#[serde(rename_all = "camelCase")]
#[in_tree(NvCategory, node = direct_category, path = category_path)]
struct NvShelfItem {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    direct_category: String,
    category_path: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "nv_orders")]
struct NvOrder {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    #[serde(rename = "customerSnapshot")]
    customer: NvCustomerRef,
    #[extended_ref(propagate)]
    reviewers: Option<Vec<NvCustomerRef>>,
    total: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct NvSpec {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nv_records")]
struct NvRecord {
    #[serde(rename = "_id")]
    id: i32,
    #[attribute]
    attributes: Vec<NvSpec>,
}

// ---------------------------------------------------------------------------------------------
// Patterns under a strict, closed validator
// ---------------------------------------------------------------------------------------------

/// The patterns' own writes pass the validators they declare, the revisions in their
/// own collection included.
#[tokio::test]
async fn versioned_writes_pass_a_strict_closed_validator() {
    let db = test_db_unvalidated("nv_versioned").await;
    pattern_runtime::sync(&db)
        .models(&[NvArticle::SCHEMA])
        .await
        .unwrap();
    assert_installed(
        &sync_validators(&db, &[NvArticle::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let articles = NvArticle::collection(&db);
    let mut a = NvArticle {
        id: 1,
        version: 0,
        title: "first".into(),
        words: 10,
        tags: None,
    };
    articles.insert(&mut a).await.unwrap();
    a.title = "second".into();
    a.tags = Some(vec!["x".into()]);
    articles.replace(&mut a).await.unwrap();
    let v = articles
        .update(
            At(1_i64, a.version),
            doc! { "$inc": { "words": 5 }, "$set": { "title": "third" } },
        )
        .await
        .unwrap()
        .version
        .expect("a versioned update's version");
    let stored = articles.get(1_i64).await.unwrap().unwrap();
    assert_eq!(
        (stored.version, stored.words, stored.title.as_str()),
        (v, 15, "third")
    );
    let revisions = articles.history(1_i64).await.unwrap().len();
    assert!(revisions >= 2, "{revisions}");
    // The revisions have their own validator now, and the revisions written above passed it.
    let options = collection_options(&db, "nv_article_revisions")
        .await
        .expect("the history collection exists");
    assert!(options.contains_key("validator"), "{options}");
    // A refused update: `ValidationFailed` naming the field, and no revision left behind.
    let e = articles
        .update(At(1_i64, v), doc! { "$set": { "title": 5 } })
        .await
        .unwrap_err();
    // (That `fields` names `title` is `refusals_through_find_and_modify_name_the_field`.)
    assert!(e.is_validation_failed(), "{e:?}");
    assert_eq!(articles.history(1_i64).await.unwrap().len(), revisions);
    assert_eq!(articles.get(1_i64).await.unwrap().unwrap(), stored);
    assert_eq!(
        refused_documents(&db, NvArticle::SCHEMA, &closed())
            .await
            .unwrap()
            .unwrap()
            .count,
        0
    );
}

/// An outlier's `limit` is the array's `maxItems`, and pushes past it fill overflow
/// documents: every push passes the strict, closed validator.
#[tokio::test]
async fn outlier_pushes_past_the_limit_pass_a_strict_closed_validator() {
    let db = test_db_unvalidated("nv_outlier").await;
    pattern_runtime::sync(&db)
        .models(&[NvStar::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert_installed(
        &sync_validators(&db, &[NvStar::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let v = NvStar::SCHEMA.validator(&closed()).unwrap();
    let posts = v
        .get_document("$jsonSchema")
        .and_then(|s| s.get_document("properties"))
        .and_then(|p| p.get_document("posts"))
        .unwrap()
        .clone();
    assert_eq!(as_i64(posts.get("maxItems").unwrap()), 5, "{posts}");
    NvStar::collection(&db)
        .raw()
        .insert_one(NvStar {
            id: "s".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    let handle = NvStar::collection(&db).outlier(NvStar::FIELDS.posts);
    for n in 0..23 {
        handle
            .push(
                "s",
                NvPost {
                    n,
                    text: format!("post {n}"),
                },
            )
            .await
            .unwrap();
    }
    let items = handle.items("s").await.unwrap();
    assert_eq!(items.len(), 23);
    let star = NvStar::collection(&db).get("s").await.unwrap().unwrap();
    assert!(star.is_outlier);
    assert_eq!(star.posts_count, 23);
    assert!(star.posts.len() <= 5);
    // Around the toolkit: six embedded posts are refused.
    let raw = db.collection::<Document>("nv_stars");
    let six: Vec<Document> = (0..6_i64).map(|n| doc! { "n": n, "text": "t" }).collect();
    let fields = refused_fields(
        &raw,
        doc! { "_id": "t", "posts": six, "isOutlier": false, "postsCount": 6_i64 },
    )
    .await;
    assert!(fields.iter().any(|f| f == "posts"), "{fields:?}");
}

/// The tree's inserts, moves, renames and deletions pass strict, closed validators on
/// the nodes and the holders.
#[tokio::test]
async fn tree_writes_pass_strict_closed_validators() {
    let db = test_db_unvalidated("nv_tree").await;
    pattern_runtime::sync(&db)
        .models(&[NvCategory::SCHEMA, NvShelfItem::SCHEMA])
        .options(&SyncOptions::new())
        .await
        .unwrap();
    assert_installed(
        &sync_validators(&db, &[NvCategory::SCHEMA, NvShelfItem::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    let tree = NvCategory::collection(&db).tree();
    let node = |name: &str, parent: Option<&str>| NvCategory {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    };
    tree.insert(&node("root", None)).await.unwrap();
    tree.insert(&node("a", Some("root"))).await.unwrap();
    tree.insert(&node("b", Some("root"))).await.unwrap();
    tree.insert(&node("a1", Some("a"))).await.unwrap();
    let holders = tree.holders::<NvShelfItem>();
    holders
        .insert(&NvShelfItem {
            id: ObjectId::new(),
            name: "thing".into(),
            direct_category: "a1".into(),
            category_path: vec![],
        })
        .await
        .unwrap();
    tree.move_under("a", "b").await.unwrap();
    tree.rename("a1", "a-one").await.unwrap();
    tree.delete("a", Deletion::Reparent).await.unwrap();
    let moved = tree.get("a-one").await.unwrap().unwrap();
    assert_eq!(moved.ancestors, ["root", "b"]);
    assert!(tree.check().await.unwrap().is_clean());
    for model in [NvCategory::SCHEMA, NvShelfItem::SCHEMA] {
        assert_eq!(
            refused_documents(&db, model, &closed())
                .await
                .unwrap()
                .unwrap()
                .count,
            0
        );
    }
}

/// A source's change reaches every copy in one transaction, under strict validators;
/// a refused write (by the source's validator, or by a holder's) keeps nothing.
#[tokio::test]
async fn extended_reference_changes_pass_strict_validators_and_refusals_keep_nothing() {
    let db = test_db_unvalidated("nv_extref").await;
    let models = [NvCustomer::SCHEMA, NvOrder::SCHEMA];
    assert_installed(&sync_validators(&db, &models, &closed()).await.unwrap());
    let ada = NvCustomer {
        id: ObjectId::new(),
        name: "Ada".into(),
        city: "London".into(),
        loyalty_points: 1,
    };
    NvCustomer::collection(&db).insert(&ada).await.unwrap();
    let order = NvOrder {
        id: ObjectId::new(),
        customer: NvCustomerRef::from(&ada),
        reviewers: Some(vec![NvCustomerRef::from(&ada)]),
        total: 9.5,
    };
    NvOrder::collection(&db)
        .raw()
        .insert_one(&order)
        .await
        .unwrap();
    NvCustomer::collection(&db)
        .update(
            ada.id,
            doc! { "$set": { NvCustomer::FIELDS.name: "Ada L." } },
        )
        .await
        .unwrap();
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
    assert_eq!(stored.reviewers.as_ref().unwrap()[0].name, "Ada L.");
    // Refused by the source's validator: nothing changes anywhere.
    let e = NvCustomer::collection(&db)
        .update(ada.id, doc! { "$set": { NvCustomer::FIELDS.name: 42 } })
        .await
        .unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
    // Refused by a holder's validator (a rule added by hand): the source is not changed either.
    let copy_key = NvCustomer::FIELDS.name;
    let mut rule = Document::new();
    rule.insert(copy_key, doc! { "maxLength": 8 });
    db.run_command(doc! {
        "collMod": "nv_orders",
        "validator": { "$jsonSchema": { "properties": { "customerSnapshot": { "properties": rule } } } },
        "validationLevel": "strict",
        "validationAction": "error",
    })
    .await
    .unwrap();
    let e = NvCustomer::collection(&db)
        .update(
            ada.id,
            doc! { "$set": { NvCustomer::FIELDS.name: "Ada Lovelace, Countess" } },
        )
        .await
        .unwrap_err();
    assert!(e.is_validation_failed(), "{e:?}");
    let source = NvCustomer::collection(&db)
        .get(ada.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        source.name, "Ada L.",
        "one transaction: the source is unchanged"
    );
    let stored = NvOrder::collection(&db)
        .get(order.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.customer.name, "Ada L.");
}

/// Attribute `set` and `unset` pass a strict, closed validator (items are a
/// `Fields` struct: checked, with their optional qualifier not required).
#[tokio::test]
async fn attribute_set_and_unset_pass_a_strict_closed_validator() {
    let db = test_db_unvalidated("nv_attribute").await;
    pattern_runtime::sync(&db)
        .models(&[NvRecord::SCHEMA])
        .await
        .unwrap();
    assert_installed(
        &sync_validators(&db, &[NvRecord::SCHEMA], &closed())
            .await
            .unwrap(),
    );
    NvRecord::collection(&db)
        .raw()
        .insert_one(NvRecord {
            id: 1,
            attributes: vec![],
        })
        .await
        .unwrap();
    let attrs = NvRecord::collection(&db).attributes(NvRecord::FIELDS.attributes);
    let spec = |name: &str, value: Bson, unit: Option<&str>| NvSpec {
        name: name.into(),
        value,
        unit: unit.map(str::to_owned),
    };
    attrs
        .set(1, &spec("bmi", Bson::Double(22.3), None))
        .await
        .unwrap();
    attrs
        .set(1, &spec("weight", Bson::Int32(70), Some("kg")))
        .await
        .unwrap();
    attrs
        .set(1, &spec("bmi", Bson::String("normal".into()), None))
        .await
        .unwrap();
    attrs.unset(1, "weight".to_owned()).await.unwrap();
    let stored = NvRecord::collection(&db).get(1).await.unwrap().unwrap();
    assert_eq!(
        stored.attributes,
        [spec("bmi", Bson::String("normal".into()), None)]
    );
    // Around the toolkit: an item with an undeclared key, or without its key.
    let raw = db.collection::<Document>("nv_records");
    let fields = refused_fields(
        &raw,
        doc! { "_id": 2, "attributes": [{ "name": "a", "value": 1, "extra": 1 }] },
    )
    .await;
    assert!(
        fields.iter().any(|f| f == "attributes.0.extra"),
        "{fields:?}"
    );
    let fields = refused_fields(&raw, doc! { "_id": 3, "attributes": [{ "value": 1 }] }).await;
    assert!(
        fields.iter().any(|f| f == "attributes.0.name"),
        "{fields:?}"
    );
}

/// Versioned and the source of extended references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_authors")]
#[versioned(history = "nvc_author_revisions")]
#[extended_ref(NvcAuthorRef(name), derive(PartialEq))]
struct NvcAuthor {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    name: String,
    bio: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_books")]
struct NvcBook {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    #[extended_ref(propagate)]
    author: NvcAuthorRef,
}

/// A versioned model whose `_id` is a struct, with an unsigned version and expiring revisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct NvcKey {
    shop: String,
    n: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nvc_keyed")]
#[versioned(history = "nvc_keyed_revisions", expire_after = "30d")]
struct NvcKeyed {
    #[serde(rename = "_id")]
    id: NvcKey,
    #[version]
    version: u32,
    label: String,
}

// ---------------------------------------------------------------------------------------------
// 6. Combinations
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_versioned_extended_reference_source_under_strict_validators() {
    let db = test_db("nvc_versioned_source").await;
    pattern_runtime::sync(&db)
        .models(&[NvcAuthor::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NvcBook::SCHEMA])
        .await
        .unwrap();
    let authors = NvcAuthor::collection(&db);
    let mut au = NvcAuthor {
        id: 1,
        version: 0,
        name: "Ada".into(),
        bio: "b".into(),
    };
    authors.insert(&mut au).await.unwrap();
    let books = NvcBook::collection(&db);
    for id in [1, 2] {
        books
            .insert(&NvcBook {
                id,
                title: format!("book {id}"),
                author: NvcAuthorRef::from(&au),
            })
            .await
            .unwrap();
    }
    let copies = |db: mongodb::Database| async move {
        dump(&db, "nvc_books")
            .await
            .iter()
            .map(|b| {
                b.get_document("author")
                    .unwrap()
                    .get_str("name")
                    .unwrap()
                    .to_owned()
            })
            .collect::<Vec<_>>()
    };
    au.name = "Ada L.".into();
    authors.replace(&mut au).await.unwrap();
    assert_eq!(copies(db.db().clone()).await, ["Ada L.", "Ada L."]);
    authors
        .update(At(1_i64, 2), doc! { "$set": { "name": "Ada Lovelace" } })
        .await
        .unwrap();
    assert_eq!(
        copies(db.db().clone()).await,
        ["Ada Lovelace", "Ada Lovelace"]
    );
    authors.revert(1_i64, 1).await.unwrap();
    assert_eq!(copies(db.db().clone()).await, ["Ada", "Ada"]);
    // Refused by the source's validator: neither the source, its revisions nor the copies move.
    let before = (
        dump(&db, "nvc_authors").await,
        dump(&db, "nvc_author_revisions").await,
        dump(&db, "nvc_books").await,
    );
    refused(
        authors
            .update(At(1_i64, 4), doc! { "$set": { "name": 5 } })
            .await,
        "name",
    );
    assert_eq!(
        (
            dump(&db, "nvc_authors").await,
            dump(&db, "nvc_author_revisions").await,
            dump(&db, "nvc_books").await,
        ),
        before
    );
    assert_eq!(authors.history(1_i64).await.unwrap().len(), 3);
}

#[tokio::test]
async fn outlier_sharded_counter_and_computed_count_on_one_model() {
    let db = test_db("nvc_three_patterns").await;
    pattern_runtime::sync(&db)
        .models(&[NvcStar::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[NvcOrder::SCHEMA])
        .await
        .unwrap();
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("c"))
        .await
        .unwrap();
    let orders = NvcOrder::collection(&db);
    for id in 1..=3 {
        orders
            .insert(&NvcOrder {
                id,
                star_id: "c".into(),
                amount: 10,
            })
            .await
            .unwrap();
    }
    let posts = NvcStar::collection(&db).outlier(NvcStar::FIELDS.posts);
    posts
        .push_many("c", (0..5).map(post).collect())
        .await
        .unwrap();
    let views = NvcStar::collection(&db)
        .counter(NvcStar::FIELDS.views)
        .of("c");
    views.add(4).await.unwrap();
    views.snapshot().await.unwrap();
    let d = one(&db, "nvc_stars", "c").await;
    assert_eq!(num(d.get("orderCount")), Some(3));
    assert_eq!(num(d.get("postCount")), Some(5));
    assert_eq!(num(d.get("views")), Some(4));
    // A move to a star that does not exist: NotFound, nothing written.
    let moved = orders
        .update(2_i64, doc! { "$set": { "starId": "d" } })
        .await;
    assert!(matches!(moved, Err(Error::NotFound { .. })), "{moved:?}");
    NvcStar::collection(&db)
        .raw()
        .insert_one(star("d"))
        .await
        .unwrap();
    orders
        .update(2_i64, doc! { "$set": { "starId": "d" } })
        .await
        .unwrap();
    assert_eq!(
        num(one(&db, "nvc_stars", "c").await.get("orderCount")),
        Some(2)
    );
    assert_eq!(
        num(one(&db, "nvc_stars", "d").await.get("orderCount")),
        Some(1)
    );
    // A replace that changes a kept field is refused.
    let mut stale = star("c");
    stale.post_count = 99;
    let replaced = NvcStar::collection(&db).replace(&stale).await;
    assert!(
        matches!(replaced, Err(Error::KeptField { .. })),
        "{replaced:?}"
    );
    assert!(posts.check().await.unwrap().is_clean());
    assert!(NvcStar::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    // A delete through the model handle takes the overflow documents with it.
    NvcStar::collection(&db).delete("c").await.unwrap();
    assert_eq!(
        count(&db, "nvc_star_posts", doc! { "ownerId": "c" }).await,
        0
    );
    // The orders of a deleted star stay writable.
    orders
        .update(1_i64, doc! { "$set": { "amount": 11_i64 } })
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// More: struct ids, sparse measurements, byte budgets, groups without validators, extremes
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_struct_id_versioned_model_under_strict_validators() {
    let db = test_db("nvc_struct_id").await;
    pattern_runtime::sync(&db)
        .models(&[NvcKeyed::SCHEMA])
        .await
        .unwrap();
    let keyed = NvcKeyed::collection(&db);
    let key = NvcKey {
        shop: "s-1".into(),
        n: -3,
    };
    let mut k = NvcKeyed {
        id: key.clone(),
        version: 0,
        label: "a".into(),
    };
    keyed.insert(&mut k).await.unwrap();
    k.label = "b".into();
    assert_eq!(keyed.replace(&mut k).await.unwrap().version, Some(2));
    assert_eq!(
        keyed
            .update(At(key.clone(), 2), doc! { "$set": { "label": "c" } })
            .await
            .unwrap()
            .version,
        Some(3)
    );
    assert_eq!(keyed.revert(key.clone(), 1).await.unwrap(), 4);
    assert_eq!(keyed.revision(key.clone(), 2).await.unwrap().label, "b");
    keyed.delete(key.clone()).await.unwrap();
    assert_eq!(keyed.history(key.clone()).await.unwrap().len(), 4);
    // The revisions' docId has the struct's shape.
    let h = "nvc_keyed_revisions";
    let now = DateTime::now();
    refused(
        insert_raw(
            &db,
            h,
            doc! { "docId": { "shop": "s-1" }, "version": 9_i64, "snapshot": {}, "archivedAt": now },
        )
        .await,
        "docId.n",
    );
    refused(
        insert_raw(
            &db,
            h,
            doc! { "docId": "s-1", "version": 9_i64, "snapshot": {}, "archivedAt": now },
        )
        .await,
        "docId",
    );
    assert_eq!(count(&db, h, doc! {}).await, 4);
}

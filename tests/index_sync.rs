//! Index sync against a real server: every index kind, idempotence, mismatches under both
//! policies, unmanaged indexes, serde renames in keys, and the typed conflict error.

use bson::{doc, Bson, Document};
use pattern_runtime::{
    sync::list_indexes, sync::IndexStatus, sync::SyncReport, Error, Model, SyncOptions,
};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

/// Every index kind and option the derive supports, on one collection.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "places")]
#[index(keys(city = 1, rating_avg = -1))]
#[index(keys(owner.user_id = 1, city = 1), name = "owner_city")]
struct Place {
    #[serde(rename = "_id")]
    id: u32,
    city: String,
    rating_avg: f64,
    owner: Owner,
    #[index("2dsphere")]
    location: Document,
    #[index(unique, collation(locale = "en", strength = 2))]
    slug: String,
    #[index(sparse)]
    nickname: Option<String>,
    #[index(-1, partial(status = "open", rating_count(gt = 0)), name = "open_rated")]
    rating_count: i64,
    status: String,
    #[index(expire_after = "30d")]
    created_at: bson::DateTime,
    #[index(hidden)]
    legacy_code: String,
}

#[derive(Serialize, Deserialize, pattern_runtime::Fields)]
struct Owner {
    user_id: u32,
}

fn by_name<'a>(indexes: &'a [Document], name: &str) -> &'a Document {
    indexes
        .iter()
        .find(|i| i.get_str("name").ok() == Some(name))
        .unwrap_or_else(|| panic!("no index {name} in {indexes:#?}"))
}

fn num(d: &Document, key: &str) -> f64 {
    match d.get(key) {
        Some(Bson::Int32(i)) => f64::from(*i),
        Some(Bson::Int64(i)) => *i as f64,
        Some(Bson::Double(f)) => *f,
        other => panic!("{key} is not a number in {d}: {other:?}"),
    }
}

#[tokio::test]
async fn every_index_kind_is_created_with_its_keys_and_options() {
    let db = test_db("every_index_kind").await;
    let report = pattern_runtime::sync(&db)
        .models(&[Place::SCHEMA])
        .await
        .unwrap();
    let names: Vec<&str> = report.created().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "city_1_ratingAvg_-1",
            "owner_city",
            "location_2dsphere",
            "slug_1",
            "nickname_1",
            "open_rated",
            "createdAt_1",
            "legacyCode_1",
        ]
    );

    let listed = list_indexes(&db, "places").await.unwrap();
    assert_eq!(listed.len(), 9, "8 declared + _id_: {listed:#?}");

    let compound = by_name(&listed, "city_1_ratingAvg_-1");
    let key = compound.get_document("key").unwrap();
    assert_eq!(key.keys().collect::<Vec<_>>(), ["city", "ratingAvg"]);
    assert_eq!(num(key, "city"), 1.0);
    assert_eq!(num(key, "ratingAvg"), -1.0);

    let nested = by_name(&listed, "owner_city").get_document("key").unwrap();
    assert_eq!(nested.keys().collect::<Vec<_>>(), ["owner.user_id", "city"]);

    let geo = by_name(&listed, "location_2dsphere");
    assert_eq!(
        geo.get_document("key").unwrap().get_str("location").ok(),
        Some("2dsphere")
    );

    let unique = by_name(&listed, "slug_1");
    assert_eq!(unique.get_bool("unique").ok(), Some(true));
    let collation = unique.get_document("collation").unwrap();
    assert_eq!(collation.get_str("locale").ok(), Some("en"));
    assert_eq!(num(collation, "strength"), 2.0);

    assert_eq!(
        by_name(&listed, "nickname_1").get_bool("sparse").ok(),
        Some(true)
    );

    let partial = by_name(&listed, "open_rated");
    assert_eq!(
        num(partial.get_document("key").unwrap(), "ratingCount"),
        -1.0
    );
    let filter = partial.get_document("partialFilterExpression").unwrap();
    assert_eq!(filter.get_str("status").ok(), Some("open"));
    assert_eq!(num(filter.get_document("ratingCount").unwrap(), "$gt"), 0.0);

    let ttl = by_name(&listed, "createdAt_1");
    assert_eq!(num(ttl, "expireAfterSeconds"), 30.0 * 86_400.0);

    assert_eq!(
        by_name(&listed, "legacyCode_1").get_bool("hidden").ok(),
        Some(true)
    );
    // Options not declared are not set.
    assert!(by_name(&listed, "city_1_ratingAvg_-1")
        .get("unique")
        .is_none());
}

#[tokio::test]
async fn a_second_sync_is_a_no_op() {
    let db = test_db("second_sync").await;
    let first = pattern_runtime::sync(&db)
        .models(&[Place::SCHEMA])
        .await
        .unwrap();
    assert_eq!(first.created().count(), 8);
    let before = list_indexes(&db, "places").await.unwrap();

    let second = pattern_runtime::sync(&db)
        .models(&[Place::SCHEMA])
        .await
        .unwrap();
    assert!(second.is_in_sync(), "{second}");
    assert_eq!(second.created().count(), 0);
    assert_eq!(
        second
            .indexes
            .iter()
            .filter(|r| r.status == IndexStatus::InSync)
            .count(),
        8,
        "{second}"
    );
    assert_eq!(list_indexes(&db, "places").await.unwrap(), before);
}

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "accounts")]
struct Account {
    #[serde(rename = "_id")]
    id: u32,
    #[index(unique)]
    email: String,
    #[index(expire_after = 3600)]
    seen_at: bson::DateTime,
}

async fn create_index(db: &mongodb::Database, collection: &str, index: Document) {
    db.run_command(doc! { "createIndexes": collection, "indexes": [index] })
        .await
        .unwrap();
}

/// `Account`'s index names, with other options: not unique, another TTL.
async fn drift_accounts(db: &mongodb::Database) {
    create_index(
        db,
        "accounts",
        doc! { "key": { "email": 1 }, "name": "email_1" },
    )
    .await;
    let ttl = doc! { "key": { "seen_at": 1 }, "name": "seen_at_1", "expireAfterSeconds": 60 };
    create_index(db, "accounts", ttl).await;
}

fn differences(report: &SyncReport, name: &str) -> Vec<&'static str> {
    match &report.get("accounts", name).unwrap().status {
        IndexStatus::Mismatched { differences } | IndexStatus::Replaced { differences } => {
            differences.iter().map(|d| d.option).collect()
        }
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test]
async fn a_changed_option_is_reported_and_left_alone_by_default() {
    let db = test_db("mismatch_default").await;
    drift_accounts(&db).await;

    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .await
        .unwrap();
    assert!(matches!(
        report.get("accounts", "email_1").unwrap().status,
        IndexStatus::Mismatched { .. }
    ));
    assert_eq!(differences(&report, "email_1"), ["unique"]);
    assert_eq!(differences(&report, "seen_at_1"), ["expireAfterSeconds"]);
    assert!(!report.is_in_sync());

    // Left alone.
    let listed = list_indexes(&db, "accounts").await.unwrap();
    assert!(by_name(&listed, "email_1").get("unique").is_none());
    assert_eq!(
        num(by_name(&listed, "seen_at_1"), "expireAfterSeconds"),
        60.0
    );
}

#[tokio::test]
async fn a_changed_option_is_replaced_under_the_replace_policy() {
    let db = test_db("mismatch_replace").await;
    drift_accounts(&db).await;

    let options = SyncOptions::new().replace_mismatched();
    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .options(&options)
        .await
        .unwrap();
    assert!(matches!(
        report.get("accounts", "email_1").unwrap().status,
        IndexStatus::Replaced { .. }
    ));
    assert_eq!(differences(&report, "email_1"), ["unique"]);
    assert_eq!(differences(&report, "seen_at_1"), ["expireAfterSeconds"]);

    let listed = list_indexes(&db, "accounts").await.unwrap();
    assert_eq!(
        by_name(&listed, "email_1").get_bool("unique").ok(),
        Some(true)
    );
    assert_eq!(
        num(by_name(&listed, "seen_at_1"), "expireAfterSeconds"),
        3600.0
    );

    let again = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .await
        .unwrap();
    assert!(again.is_in_sync(), "{again}");
}

#[tokio::test]
async fn an_unmanaged_index_survives_and_can_be_hidden() {
    let db = test_db("unmanaged").await;
    create_index(
        &db,
        "accounts",
        doc! { "key": { "legacy": 1 }, "name": "legacy_1" },
    )
    .await;

    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .await
        .unwrap();
    let legacy = report.get("accounts", "legacy_1").unwrap();
    assert_eq!(legacy.status, IndexStatus::Unmanaged { hidden: false });
    assert_eq!(legacy.model, None);
    assert!(
        report.get("accounts", "_id_").is_none(),
        "_id_ is never reported"
    );
    assert!(
        by_name(&list_indexes(&db, "accounts").await.unwrap(), "legacy_1")
            .get("hidden")
            .is_none()
    );

    // Replacing mismatches never touches unmanaged indexes.
    let replace = SyncOptions::new().replace_mismatched();
    pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .options(&replace)
        .await
        .unwrap();
    assert!(list_indexes(&db, "accounts")
        .await
        .unwrap()
        .iter()
        .any(|i| i.get_str("name").ok() == Some("legacy_1")));

    let hide = SyncOptions::new().hide_unmanaged();
    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .options(&hide)
        .await
        .unwrap();
    assert_eq!(
        report.get("accounts", "legacy_1").unwrap().status,
        IndexStatus::HiddenUnmanaged
    );
    let listed = list_indexes(&db, "accounts").await.unwrap();
    assert_eq!(
        by_name(&listed, "legacy_1").get_bool("hidden").ok(),
        Some(true)
    );
    assert!(by_name(&listed, "_id_").get("hidden").is_none());

    // Hidden already: reported, not changed again.
    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .options(&hide)
        .await
        .unwrap();
    assert_eq!(
        report.get("accounts", "legacy_1").unwrap().status,
        IndexStatus::Unmanaged { hidden: true }
    );
}

/// The seed's product shape, with camelCase keys.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[index(keys(category = 1, updated_at = -1))]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    category: String,
    #[index(-1)]
    rating_count: i64,
    updated_at: bson::DateTime,
}

#[tokio::test]
async fn rename_all_camel_case_shows_in_the_created_keys() {
    let db = test_db("camel_case").await;
    pattern_runtime::sync(&db)
        .models(&[Product::SCHEMA])
        .await
        .unwrap();
    assert_eq!(Product::SCHEMA.collection(), "products");
    let listed = list_indexes(&db, "products").await.unwrap();
    let compound = by_name(&listed, "category_1_updatedAt_-1")
        .get_document("key")
        .unwrap();
    assert_eq!(
        compound.keys().collect::<Vec<_>>(),
        ["category", "updatedAt"]
    );
    let single = by_name(&listed, "ratingCount_-1")
        .get_document("key")
        .unwrap();
    assert_eq!(single.keys().collect::<Vec<_>>(), ["ratingCount"]);
}

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "items")]
struct Item {
    #[serde(rename = "_id")]
    id: u32,
    #[index(unique)]
    sku: String,
}

#[tokio::test]
async fn indexes_differing_in_unique_coexist() {
    // Since MongoDB 5.0 `unique` is part of an index's signature: a non-unique index on the same
    // keys under another name is no conflict, and is reported as unmanaged.
    let db = test_db("coexist").await;
    create_index(
        &db,
        "items",
        doc! { "key": { "sku": 1 }, "name": "legacy_sku" },
    )
    .await;
    let report = pattern_runtime::sync(&db)
        .models(&[Item::SCHEMA])
        .await
        .unwrap();
    assert_eq!(
        report.get("items", "sku_1").unwrap().status,
        IndexStatus::Created
    );
    assert_eq!(
        report.get("items", "legacy_sku").unwrap().status,
        IndexStatus::Unmanaged { hidden: false }
    );
}

#[tokio::test]
async fn a_conflicting_index_yields_the_typed_error() {
    let db = test_db("conflict").await;
    create_index(
        &db,
        "items",
        doc! { "key": { "sku": 1 }, "name": "legacy_sku" },
    )
    .await;
    // MongoDB before 5.0 left `unique` out of the signature and refused this create with code 85
    // ("Index already exists with a different name"); the fail point makes the server answer so.
    db.fail_command(
        &["createIndexes"],
        1,
        doc! { "errorCode": 85, "errmsg": "Index already exists with a different name: legacy_sku" },
    )
    .await;

    let err = pattern_runtime::sync(&db)
        .models(&[Item::SCHEMA])
        .await
        .unwrap_err();
    assert!(
        err.is_index_conflict() && !err.is_duplicate_key(),
        "{err:?}"
    );
    let Error::IndexConflict(conflict) = &err else {
        panic!("expected IndexConflict, got {err:?}");
    };
    assert_eq!(conflict.model, "Item");
    assert_eq!(conflict.collection, "items");
    assert_eq!(conflict.index, "sku_1");
    assert_eq!(conflict.code, 85);
    assert_eq!(conflict.declared.get_bool("unique").ok(), Some(true));
    let existing = conflict
        .existing
        .as_ref()
        .expect("the existing index is named");
    assert_eq!(existing.get_str("name").ok(), Some("legacy_sku"));
    assert_eq!(err.code(), Some(85));
    let message = err.to_string();
    assert!(
        message.contains("sku_1") && message.contains("Item") && message.contains("legacy_sku"),
        "{message}"
    );
    // Nothing was created; the next sync (no fail point) creates it.
    assert_eq!(list_indexes(&db, "items").await.unwrap().len(), 2);
    let report = pattern_runtime::sync(&db)
        .models(&[Item::SCHEMA])
        .await
        .unwrap();
    assert_eq!(
        report.get("items", "sku_1").unwrap().status,
        IndexStatus::Created
    );
}

#[tokio::test]
async fn the_declared_index_under_another_name_with_another_ttl_is_a_mismatch() {
    // Same keys, unique, sparse, partial and collation: the server's signature. TTL is not part
    // of it, so creating `seen_at_1` would be refused (mongod) or duplicate the index: report.
    let db = test_db("renamed_ttl").await;
    create_index(
        &db,
        "accounts",
        doc! { "key": { "seen_at": 1 }, "name": "legacy_seen", "expireAfterSeconds": 60 },
    )
    .await;
    let report = pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .await
        .unwrap();
    let entry = report.get("accounts", "seen_at_1").unwrap();
    let IndexStatus::Mismatched { differences } = &entry.status else {
        panic!("{report}");
    };
    let options: Vec<&str> = differences.iter().map(|d| d.option).collect();
    assert_eq!(options, ["name", "expireAfterSeconds"]);
    assert!(
        report.get("accounts", "legacy_seen").is_none(),
        "claimed, not unmanaged"
    );

    // Replaced: the old name goes, the declared one comes with the declared TTL.
    let replace = SyncOptions::new().replace_mismatched();
    pattern_runtime::sync(&db)
        .models(&[Account::SCHEMA])
        .options(&replace)
        .await
        .unwrap();
    let listed = list_indexes(&db, "accounts").await.unwrap();
    assert!(listed
        .iter()
        .all(|i| i.get_str("name").ok() != Some("legacy_seen")));
    assert_eq!(
        num(by_name(&listed, "seen_at_1"), "expireAfterSeconds"),
        3600.0
    );
}

/// Syncs a model whose only index is of a `kind` the server may not have (neither the embedded
/// server nor secantusdb has hashed or text indexes). Against a server that has it, returns
/// the report; otherwise checks that the refusal is exactly that limitation (code 67) and
/// returns `None`.
async fn sync_where_supported<M: Model>(db: &mongodb::Database, kind: &str) -> Option<SyncReport> {
    match pattern_runtime::sync(db).models(&[M::SCHEMA]).await {
        Ok(report) => Some(report),
        Err(e) => {
            assert_eq!(e.code(), Some(67), "{e}");
            assert!(e.to_string().contains(&format!("{kind} indexes")), "{e}");
            eprintln!("note: this server has no {kind} indexes: {e}");
            None
        }
    }
}

/// A text index for search.
#[derive(Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[index(keys(title = "text", body = "text"), name = "search")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    title: String,
    body: String,
}

#[tokio::test]
async fn a_text_index_is_created_where_the_server_has_them() {
    let db = test_db("text").await;
    let Some(report) = sync_where_supported::<Article>(&db, "text").await else {
        return;
    };
    assert_eq!(report.created().count(), 1);
    let listed = list_indexes(&db, "articles").await.unwrap();
    let text = by_name(&listed, "search");
    let mut fields: Vec<&String> = text.get_document("weights").unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["body", "title"]);
    // Listed as `{_fts, _ftsx}` with the fields in `weights`: still in sync the second time.
    let again = pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    assert!(again.is_in_sync(), "{again}");
}

/// A hashed shard key.
#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "events")]
struct Event {
    #[serde(rename = "_id")]
    id: u32,
    #[index("hashed")]
    device_id: String,
}

#[tokio::test]
async fn a_hashed_index_is_created_where_the_server_has_them() {
    let db = test_db("hashed").await;
    let Some(report) = sync_where_supported::<Event>(&db, "hashed").await else {
        return;
    };
    assert_eq!(report.created().count(), 1);
    let listed = list_indexes(&db, "events").await.unwrap();
    let key = by_name(&listed, "deviceId_hashed")
        .get_document("key")
        .unwrap();
    assert_eq!(key.get_str("deviceId").ok(), Some("hashed"));
    assert!(pattern_runtime::sync(&db)
        .models(&[Event::SCHEMA])
        .await
        .unwrap()
        .is_in_sync());
}

#[tokio::test]
async fn the_same_keys_under_another_name_are_reported_not_duplicated() {
    let db = test_db("renamed").await;
    create_index(
        &db,
        "items",
        doc! { "key": { "sku": 1 }, "name": "sku_unique", "unique": true },
    )
    .await;
    let report = pattern_runtime::sync(&db)
        .models(&[Item::SCHEMA])
        .await
        .unwrap();
    let entry = report.get("items", "sku_1").unwrap();
    let IndexStatus::Mismatched { differences } = &entry.status else {
        panic!("{report}");
    };
    assert_eq!(differences[0].option, "name");
    assert!(
        report.get("items", "sku_unique").is_none(),
        "claimed, not unmanaged"
    );
    assert_eq!(list_indexes(&db, "items").await.unwrap().len(), 2);
}

#[tokio::test]
async fn sync_all_covers_every_registered_model() {
    let db = test_db("sync_all").await;
    // The embedded server and secantusdb have no text or hashed indexes: those two
    // collections fail there, with exactly that limitation (code 67).
    let lacks = match pattern_runtime::sync(&db).await {
        Ok(report) => {
            for schema in pattern_runtime::sync::registered_models() {
                for spec in schema.indexes() {
                    let entry = report.get(schema.collection(), spec.name()).unwrap();
                    assert_eq!(entry.status, IndexStatus::Created, "{report}");
                }
            }
            let again = pattern_runtime::sync(&db).await.unwrap();
            assert!(again.is_in_sync(), "{again}");
            false
        }
        Err(e) => {
            assert_eq!(e.code(), Some(67), "{e}");
            let message = e.to_string();
            assert!(
                message.contains("text indexes") || message.contains("hashed indexes"),
                "{e}"
            );
            eprintln!("note: this server has no text or hashed indexes: {e}");
            true
        }
    };
    let lacks_kind = |collection: &str| lacks && matches!(collection, "articles" | "events");
    // Whatever failed elsewhere, every other collection has every declared index.
    for schema in pattern_runtime::sync::registered_models() {
        if lacks_kind(schema.collection()) {
            continue;
        }
        let listed = list_indexes(&db, schema.collection()).await.unwrap();
        for spec in schema.indexes() {
            by_name(&listed, spec.name());
        }
    }
}

/// A nested struct under `rename_all`: the key path is resolved through its serde names.
#[derive(Serialize, Deserialize, pattern_runtime::Fields)]
#[serde(rename_all = "camelCase")]
struct Dimensions {
    weight_grams: u32,
    height_mm: u32,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "parcels")]
#[index(keys(dimensions.weight_grams = 1))]
struct Parcel {
    #[serde(rename = "_id")]
    id: u32,
    dimensions: Dimensions,
}

#[tokio::test]
async fn a_nested_path_under_rename_all_is_indexed_as_serde_writes_it_and_used() {
    let db = test_db("index_nested_rename").await;
    let report = pattern_runtime::sync(&db)
        .models(&[Parcel::SCHEMA])
        .await
        .unwrap();
    assert_eq!(
        report
            .created()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>(),
        ["dimensions.weightGrams_1"]
    );
    let index = list_indexes(&db, "parcels")
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.get_str("name").ok() == Some("dimensions.weightGrams_1"))
        .unwrap();
    assert_eq!(
        index.get_document("key").unwrap(),
        &doc! { "dimensions.weightGrams": 1 }
    );

    let parcels = Parcel::collection(&db);
    let stored: Vec<Parcel> = (0..50)
        .map(|i| Parcel {
            id: i,
            dimensions: Dimensions {
                weight_grams: i * 100,
                height_mm: 10,
            },
        })
        .collect();
    parcels.raw().insert_many(&stored).await.unwrap();
    // The document as stored has the serialized path the index covers.
    let raw = db
        .collection::<Document>("parcels")
        .find_one(doc! { "_id": 3 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        raw.get_document("dimensions")
            .unwrap()
            .get_i64("weightGrams")
            .or_else(|_| raw
                .get_document("dimensions")
                .unwrap()
                .get_i32("weightGrams")
                .map(i64::from))
            .unwrap(),
        300
    );
    // A query on the serialized path uses the index: the plan scans it, and a hint by its name
    // is accepted (a hint naming a missing index is an error).
    let filter = doc! { "dimensions.weightGrams": { "$gte": 4500 } };
    let explain = db
        .run_command(doc! {
            "explain": { "find": "parcels", "filter": filter.clone() },
            "verbosity": "queryPlanner",
        })
        .await
        .unwrap();
    let plan = explain.to_string();
    assert!(plan.contains("IXSCAN"), "{plan}");
    assert!(plan.contains("dimensions.weightGrams_1"), "{plan}");
    let found = parcels
        .raw()
        .count_documents(filter)
        .hint(mongodb::options::Hint::Name(
            "dimensions.weightGrams_1".into(),
        ))
        .await
        .unwrap();
    assert_eq!(found, 5);
}

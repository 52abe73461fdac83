//! Models of plain scalars beside extended references (`propagate` / `snapshot`) under the test
//! kit's `strict`/`error` validators, hostile keys and ids through their handles (attribute keys,
//! update keys and values, ids of an untyped `_id`), and a caller's transaction across several
//! pattern handles.

use bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{Error, Fields, Model, Transaction};
use pattern_testkit::{docs as all, test_db};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn assert_invalid_value(result: pattern_runtime::Result<impl std::fmt::Debug>, what: &str) {
    match result {
        Err(e @ Error::InvalidValue { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("nothing was written"),
                "not a sentence: {text}"
            );
            assert!(e.is_refused_input());
        }
        other => panic!("expected Error::InvalidValue for {what}, got {other:?}"),
    }
}

async fn raw_get(db: &mongodb::Database, coll: &str, id: impl Into<Bson>) -> Option<Document> {
    db.collection::<Document>(coll)
        .find_one(doc! { "_id": id.into() })
        .await
        .unwrap()
}

fn regex(pattern: &str) -> bson::Regex {
    bson::Regex {
        pattern: pattern.to_owned().try_into().unwrap(),
        options: String::new().try_into().unwrap(),
    }
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ns_customers")]
#[serde(rename_all = "camelCase")]
#[extended_ref(NsCustomerRef(name, tier))]
struct NsCustomer {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    tier: i32,
    loyalty: i64,
    since: DateTime,
    active: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "ns_prices")]
#[extended_ref(NsPriceRef(amount, currency), snapshot)]
struct NsPrice {
    #[serde(rename = "_id")]
    id: i64,
    amount: f64,
    currency: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "ns_orders")]
#[serde(rename_all = "camelCase")]
struct NsOrder {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    customer: NsCustomerRef,
    #[extended_ref(propagate)]
    backup: Option<NsCustomerRef>,
    #[extended_ref(propagate)]
    witnesses: Vec<NsCustomerRef>,
    #[extended_ref(snapshot)]
    price: Option<NsPriceRef>,
    qty: i32,
    total_cents: i64,
    units: u32,
    small: i8,
    port: u16,
    ratio: f64,
    paid: bool,
    placed_at: DateTime,
    batch: ObjectId,
    note: Option<String>,
    tags: Vec<String>,
    scores: Vec<i32>,
    flags: Option<Vec<bool>>,
    meta: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct NsSpec {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "ns_records")]
struct NsRecord {
    #[serde(rename = "_id")]
    id: Bson,
    label: String,
    weight: f64,
    #[attribute]
    specs: Vec<NsSpec>,
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn customer(name: &str, tier: i32) -> NsCustomer {
    NsCustomer {
        id: ObjectId::new(),
        name: name.into(),
        tier,
        loyalty: i64::MAX,
        since: DateTime::from_millis(-62_135_596_800_000), // year 1
        active: true,
    }
}

fn order(c: &NsCustomer, price: &NsPrice) -> NsOrder {
    NsOrder {
        id: ObjectId::new(),
        customer: NsCustomerRef::from(c),
        backup: Some(NsCustomerRef::from(c)),
        witnesses: vec![NsCustomerRef::from(c), NsCustomerRef::from(c)],
        price: Some(NsPriceRef::from(price)),
        qty: i32::MIN,
        total_cents: i64::MIN,
        units: u32::MAX,
        small: i8::MIN,
        port: u16::MAX,
        ratio: -0.0,
        paid: false,
        placed_at: DateTime::MAX,
        batch: ObjectId::new(),
        note: None,
        tags: vec![
            "$where".into(),
            "a.b".into(),
            String::new(),
            "nul\0byte".into(),
        ],
        scores: vec![i32::MAX, 0, -1],
        flags: None,
        meta: BTreeMap::from([("ok".to_owned(), 1)]),
    }
}

/// The fields of a `ValidationFailed`, or a panic naming what came instead.
fn refused_fields(e: &Error) -> Vec<String> {
    match e {
        Error::ValidationFailed { fields, .. } => fields.clone(),
        other => panic!("expected Error::ValidationFailed, got {other:?} ({other})"),
    }
}

/// A raw driver insert the validator must refuse, naming `field`; nothing is stored.
async fn assert_raw_refused(db: &mongodb::Database, coll: &str, document: Document, field: &str) {
    let id = document.get("_id").cloned().unwrap();
    let err = db
        .collection::<Document>(coll)
        .insert_one(document.clone())
        .await
        .expect_err(&format!("the validator accepted {document}"));
    let err = Error::from(err);
    let fields = refused_fields(&err);
    assert!(
        fields.iter().any(|f| f == field),
        "refusal should name `{field}`, named {fields:?}: {err}"
    );
    assert!(
        raw_get(db, coll, id).await.is_none(),
        "a refused document was stored"
    );
}

fn assert_invalid_key(result: pattern_runtime::Result<impl std::fmt::Debug>, key: &str) {
    match result {
        Err(e @ Error::InvalidKey { .. }) => {
            let text = e.to_string();
            assert!(text.contains(key), "message should name `{key:?}`: {text}");
            assert!(
                text.contains("nothing was written"),
                "not a sentence: {text}"
            );
            assert!(e.is_refused_input());
        }
        other => panic!("expected Error::InvalidKey for {key:?}, got {other:?}"),
    }
}

/// In `tx`: an order inserted through the model handle, Ada renamed through `References`, an
/// attribute set; the order and the attribute are returned.
async fn three_writes(
    db: &mongodb::Database,
    tx: &Transaction,
    ada: &NsCustomer,
    price: &NsPrice,
) -> (NsOrder, NsSpec) {
    let o = order(ada, price);
    NsOrder::collection(db)
        .in_transaction(tx)
        .insert(&o)
        .await
        .unwrap();
    NsCustomer::collection(db)
        .in_transaction(tx)
        .update(ada.id, doc! { "$set": { "name": "Ada L." } })
        .await
        .unwrap();
    let spec = NsSpec {
        name: "k".into(),
        value: Bson::Int32(1),
        unit: None,
    };
    NsRecord::collection(db)
        .attributes(NsRecord::FIELDS.specs)
        .in_transaction(tx)
        .set(Bson::Int32(1), &spec)
        .await
        .unwrap();
    (o, spec)
}

async fn tx_fixture(db: &mongodb::Database) -> (NsCustomer, NsPrice) {
    let ada = customer("Ada", 1);
    let price = NsPrice {
        id: 6,
        amount: 2.0,
        currency: "USD".into(),
    };
    NsCustomer::collection(db).insert(&ada).await.unwrap();
    NsRecord::collection(db)
        .raw()
        .insert_one(NsRecord {
            id: Bson::Int32(1),
            label: "r".into(),
            weight: 0.0,
            specs: vec![],
        })
        .await
        .unwrap();
    (ada, price)
}

// ---------------------------------------------------------------------------------------------
// 1. Scalars beside extended references, under the strict validators
// ---------------------------------------------------------------------------------------------

/// Every toolkit write of a model of extreme scalars and references passes the installed
/// validators, reads back exactly, and a rename reaches every `propagate` copy but no snapshot.
#[tokio::test]
async fn toolkit_writes_of_extreme_scalars_pass_the_validators() {
    let db = test_db("ns_toolkit_writes").await;
    let ada = customer("Ada", 3);
    let price = NsPrice {
        id: 1,
        amount: 9.99,
        currency: "EUR".into(),
    };
    NsCustomer::collection(&db).insert(&ada).await.unwrap();
    NsPrice::collection(&db).insert(&price).await.unwrap();
    let mut o = order(&ada, &price);
    NsOrder::collection(&db).insert(&o).await.unwrap();
    // Option fields as `null` and Vec of scalars, too.
    let mut o2 = order(&ada, &price);
    o2.backup = None;
    o2.price = None;
    o2.note = Some(String::new());
    o2.flags = Some(vec![true, false]);
    o2.witnesses.clear();
    NsOrder::collection(&db).insert(&o2).await.unwrap();

    let stored: NsOrder = NsOrder::collection(&db)
        .raw()
        .find_one(doc! { "_id": o.id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.qty, stored.total_cents, stored.units),
        (i32::MIN, i64::MIN, u32::MAX)
    );
    assert_eq!((stored.small, stored.port), (i8::MIN, u16::MAX));
    assert_eq!(stored.placed_at, DateTime::MAX);
    assert_eq!(stored.tags, o.tags, "strings are data, stored as given");

    // A rename of a copied field reaches every propagate copy (single, Option, Vec).
    NsCustomer::collection(&db)
        .update(ada.id, doc! { "$set": { "name": "Ada L.", "tier": 4 } })
        .await
        .unwrap();
    // A field that is not copied, with a scalar update, also passes the validator.
    NsCustomer::collection(&db)
        .update(
            ada.id,
            doc! { "$inc": { "loyalty": -1 }, "$set": { "active": false } },
        )
        .await
        .unwrap();

    let raw = raw_get(&db, "ns_orders", o.id).await.unwrap();
    assert_eq!(
        raw.get_document("customer")
            .unwrap()
            .get_str("name")
            .unwrap(),
        "Ada L."
    );
    assert_eq!(
        raw.get_document("customer")
            .unwrap()
            .get_i32("tier")
            .unwrap(),
        4
    );
    assert_eq!(
        raw.get_document("backup").unwrap().get_str("name").unwrap(),
        "Ada L."
    );
    for w in raw.get_array("witnesses").unwrap() {
        assert_eq!(w.as_document().unwrap().get_str("name").unwrap(), "Ada L.");
    }
    // The snapshot is frozen even when its source changes.
    NsPrice::collection(&db)
        .update(1_i64, doc! { "$set": { "amount": 12.5 } })
        .await
        .unwrap();
    let raw = raw_get(&db, "ns_orders", o.id).await.unwrap();
    assert_eq!(
        raw.get_document("price")
            .unwrap()
            .get_f64("amount")
            .unwrap(),
        9.99
    );

    // Nothing stored fails the installed (strict, closed) validator of either model.
    for schema in [NsOrder::SCHEMA, NsCustomer::SCHEMA, NsPrice::SCHEMA] {
        let options = pattern_runtime::validator::ValidatorOptions::new()
            .strict()
            .error()
            .forbid_other_fields();
        let refused = pattern_runtime::validator::refused_documents(&db, schema, &options)
            .await
            .unwrap();
        assert_eq!(refused.map(|r| r.count), Some(0), "{}", schema.collection());
    }
    // And the whole-document replace of the order passes it too.
    o.qty = 7;
    o.note = Some("replaced".into());
    NsOrder::collection(&db).replace(&o).await.unwrap();
    let raw = raw_get(&db, "ns_orders", o.id).await.unwrap();
    assert_eq!(raw.get_i32("qty").unwrap(), 7);
}

/// A wrong BSON type written with the driver is refused by the validator, and the error
/// (converted to the toolkit's) names the field; nothing is stored.
#[tokio::test]
async fn raw_writes_of_a_wrong_scalar_type_are_refused_naming_the_field() {
    let db = test_db("ns_raw_wrong_type").await;
    let ada = customer("Ada", 1);
    let price = NsPrice {
        id: 2,
        amount: 1.0,
        currency: "USD".into(),
    };
    let good = bson::serialize_to_document(&order(&ada, &price)).unwrap();
    // The serialized good document is accepted as it is.
    db.collection::<Document>("ns_orders")
        .insert_one(good.clone())
        .await
        .unwrap();

    let cases: Vec<(&str, Bson)> = vec![
        ("qty", Bson::String("3".into())),
        ("qty", Bson::Int64(3)), // an i32 field: a long may not fit
        ("totalCents", Bson::Double(1.5)),
        ("ratio", Bson::String("0.5".into())),
        ("paid", Bson::Int32(1)),
        ("placedAt", Bson::String("2024-01-01".into())),
        ("batch", Bson::String(ObjectId::new().to_hex())),
        ("note", Bson::Int32(5)),
    ];
    for (field, value) in cases {
        let mut d = good.clone();
        d.insert("_id", ObjectId::new());
        d.insert(field, value);
        assert_raw_refused(&db, "ns_orders", d, field).await;
    }
    // Through a toolkit write: the caller's update sets a string into an i32 field.
    let id = good.get_object_id("_id").unwrap();
    let err = NsOrder::collection(&db)
        .update(id, doc! { "$set": { "qty": "three" } })
        .await
        .expect_err("the validator accepted qty: \"three\"");
    assert!(refused_fields(&err).iter().any(|f| f == "qty"), "{err}");
    assert!(err.to_string().contains("qty"), "{err}");
    assert_eq!(
        raw_get(&db, "ns_orders", id).await.unwrap(),
        good,
        "nothing written"
    );
    assert_eq!(all(&db, "ns_orders").await.len(), 1);

    // A wrong type inside an extended reference copy names the dotted path.
    let mut d = good.clone();
    d.insert("_id", ObjectId::new());
    d.get_document_mut("customer")
        .unwrap()
        .insert("tier", "gold");
    let options = pattern_runtime::validator::ValidatorOptions::new();
    let v = NsOrder::SCHEMA.validator(&options).unwrap();
    let props = v
        .get_document("$jsonSchema")
        .unwrap()
        .get_document("properties")
        .unwrap();
    let shown = format!(
        "required: {:?}; customer: {:?}; backup: {:?}; witnesses: {:?}; price: {:?}",
        v.get_document("$jsonSchema").unwrap().get("required"),
        props.get("customer"),
        props.get("backup"),
        props.get("witnesses"),
        props.get("price")
    );
    let err = Error::from(
        db.collection::<Document>("ns_orders")
            .insert_one(d)
            .await
            .expect_err(&format!(
                "customer.tier: \"gold\" accepted; the validator says {shown}"
            )),
    );
    let fields = refused_fields(&err);
    assert!(
        fields.iter().any(|f| f.starts_with("customer")),
        "{fields:?}: {err}"
    );
}

/// `i8`, `u16` and `u32` carry their ranges in the validator; `u32` accepts an `int` or a `long`.
#[tokio::test]
async fn small_and_unsigned_integer_ranges_are_enforced() {
    let db = test_db("ns_ranges").await;
    let ada = customer("Ada", 1);
    let price = NsPrice {
        id: 3,
        amount: 1.0,
        currency: "USD".into(),
    };
    let good = bson::serialize_to_document(&order(&ada, &price)).unwrap();

    let refused: Vec<(&str, Bson)> = vec![
        ("small", Bson::Int32(128)),
        ("small", Bson::Int32(-129)),
        ("port", Bson::Int32(65_536)),
        ("port", Bson::Int32(-1)),
        ("units", Bson::Int64(-1)),
        ("units", Bson::Int32(-1)),
        ("units", Bson::Int64(u32::MAX as i64 + 1)),
        ("units", Bson::Double(5.0)),
    ];
    for (field, value) in refused {
        let mut d = good.clone();
        d.insert("_id", ObjectId::new());
        d.insert(field, value);
        assert_raw_refused(&db, "ns_orders", d, field).await;
    }
    let accepted: Vec<(&str, Bson)> = vec![
        ("small", Bson::Int32(127)),
        ("small", Bson::Int32(-128)),
        ("port", Bson::Int32(0)),
        ("port", Bson::Int32(65_535)),
        ("units", Bson::Int32(0)),
        ("units", Bson::Int64(u32::MAX as i64)),
        ("totalCents", Bson::Int32(5)), // i64: an int reads back exactly
        ("ratio", Bson::Int64(2)),      // f64: any number
    ];
    let mut ids = Vec::new();
    for (field, value) in accepted {
        let mut d = good.clone();
        let id = ObjectId::new();
        d.insert("_id", id);
        d.insert(field, value.clone());
        db.collection::<Document>("ns_orders")
            .insert_one(d)
            .await
            .unwrap_or_else(|e| panic!("{field}: {value} refused: {}", Error::from(e)));
        ids.push(id);
    }
    // And they read back as the model.
    let n = NsOrder::collection(&db)
        .raw()
        .find(doc! { "_id": { "$in": ids.clone() } })
        .await
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .len();
    assert_eq!(n, ids.len());
}

/// `Option` is nullable and may be absent; a required scalar may not; a `Vec` of scalars checks
/// its items' type.
#[tokio::test]
async fn options_and_vecs_of_scalars_in_the_validator() {
    let db = test_db("ns_option_vec").await;
    let ada = customer("Ada", 1);
    let price = NsPrice {
        id: 4,
        amount: 1.0,
        currency: "USD".into(),
    };
    let good = bson::serialize_to_document(&order(&ada, &price)).unwrap();
    let coll = db.collection::<Document>("ns_orders");

    // Nullable and not required.
    for field in ["note", "flags", "backup", "price"] {
        let mut null = good.clone();
        null.insert("_id", ObjectId::new());
        null.insert(field, Bson::Null);
        coll.insert_one(null)
            .await
            .unwrap_or_else(|e| panic!("{field}: null: {}", Error::from(e)));
        let mut absent = good.clone();
        absent.insert("_id", ObjectId::new());
        absent.remove(field);
        coll.insert_one(absent)
            .await
            .unwrap_or_else(|e| panic!("{field} absent: {}", Error::from(e)));
    }
    // Required scalars and vecs may be neither null nor absent.
    for field in ["qty", "tags", "placedAt"] {
        let mut null = good.clone();
        null.insert("_id", ObjectId::new());
        null.insert(field, Bson::Null);
        assert_raw_refused(&db, "ns_orders", null, field).await;
    }
    let mut absent = good.clone();
    absent.insert("_id", ObjectId::new());
    absent.remove("qty");
    let err = Error::from(
        coll.insert_one(absent)
            .await
            .expect_err("qty absent accepted"),
    );
    let fields = refused_fields(&err);
    assert!(fields.iter().any(|f| f == "qty"), "{fields:?}: {err}");

    // Items of the wrong type.
    let bad_items: Vec<(&str, Bson)> = vec![
        ("tags", bson::bson!(["a", 1])),
        ("scores", bson::bson!([1, "x"])),
        ("scores", bson::bson!([1, 2_i64])),
        ("flags", bson::bson!([true, "no"])),
        ("tags", Bson::String("not an array".into())),
    ];
    for (field, value) in bad_items {
        let mut d = good.clone();
        let id = ObjectId::new();
        d.insert("_id", id);
        d.insert(field, value.clone());
        let err = Error::from(
            coll.insert_one(d)
                .await
                .expect_err(&format!("{field}: {value}")),
        );
        let fields = refused_fields(&err);
        assert!(
            fields
                .iter()
                .any(|f| f == field || f.starts_with(&format!("{field}."))),
            "{field}: {value}: {fields:?}: {err}"
        );
        assert!(raw_get(&db, "ns_orders", id).await.is_none());
    }
    assert_eq!(all(&db, "ns_orders").await.len(), 8);
}

// ---------------------------------------------------------------------------------------------
// 2. Keys and values are data
// ---------------------------------------------------------------------------------------------

/// Attribute keys with `$`, `.`, NUL or empty are `InvalidKey`; values holding an operator are
/// `InvalidValue`; an operator document as the record's id is `InvalidValue`. Nothing written.
#[tokio::test]
async fn attribute_hostile_keys_values_and_ids_write_nothing() {
    let db = test_db("ns_attribute_hostile").await;
    let recs = NsRecord::collection(&db).raw().clone();
    for id in [1, 2] {
        recs.insert_one(NsRecord {
            id: Bson::Int32(id),
            label: format!("r{id}"),
            weight: 1.5,
            specs: vec![],
        })
        .await
        .unwrap();
    }
    let attrs = NsRecord::collection(&db).attributes(NsRecord::FIELDS.specs);
    let ok = NsSpec {
        name: "price".into(),
        value: Bson::String("$120".into()),
        unit: Some("$/month".into()),
    };
    attrs.set(Bson::Int32(1), &ok).await.unwrap();
    let before = all(&db, "ns_records").await;

    for key in ["$where", "a.b", "nul\0key", ""] {
        let item = NsSpec {
            name: key.into(),
            value: Bson::Int32(1),
            unit: None,
        };
        assert_invalid_key(attrs.set(Bson::Int32(1), &item).await, key);
        assert_invalid_key(attrs.unset(Bson::Int32(1), key.to_owned()).await, key);
    }
    for value in [
        Bson::Document(doc! { "$gt": 1 }),
        Bson::Document(doc! { "x": { "$concat": ["a", "b"] } }),
        Bson::Document(doc! { "a.b": 1 }),
    ] {
        let item = NsSpec {
            name: "w".into(),
            value: value.clone(),
            unit: None,
        };
        assert_invalid_value(attrs.set(Bson::Int32(1), &item).await, &value.to_string());
    }
    // An id that would match every record as a query.
    for id in [
        Bson::Document(doc! { "$gt": 0 }),
        Bson::Document(doc! { "$ne": null }),
        Bson::RegularExpression(regex(".*")),
        Bson::Array(vec![Bson::Int32(1), Bson::Int32(2)]),
        Bson::Document(doc! { "a.b": 1 }),
    ] {
        let item = NsSpec {
            name: "owned".into(),
            value: Bson::Int32(1),
            unit: None,
        };
        assert_invalid_value(attrs.set(id.clone(), &item).await, &id.to_string());
        assert_invalid_value(
            attrs.unset(id.clone(), "price".to_owned()).await,
            &id.to_string(),
        );
    }
    assert_eq!(all(&db, "ns_records").await, before, "nothing written");
    // The literal `$` strings came back as strings.
    let got = attrs.get(Bson::Int32(1), "price".to_owned()).await.unwrap();
    assert_eq!(got, Some(ok));
}

/// Update keys and `$set` values through the handles: a `$` key, a dotted empty segment, `_id`,
/// an operator as a value, a NUL key in a whole document; typed errors, nothing written, and
/// the propagate copies untouched.
#[tokio::test]
async fn hostile_update_keys_and_values_through_handles() {
    let db = test_db("ns_update_hostile").await;
    let ada = customer("Ada", 2);
    let price = NsPrice {
        id: 5,
        amount: 3.0,
        currency: "USD".into(),
    };
    NsCustomer::collection(&db).insert(&ada).await.unwrap();
    let o = order(&ada, &price);
    NsOrder::collection(&db).insert(&o).await.unwrap();
    let before_c = all(&db, "ns_customers").await;
    let before_o = all(&db, "ns_orders").await;

    for (update, key) in [
        (doc! { "$set": { "$where": "x" } }, "$where"),
        (doc! { "$set": { "_id": ObjectId::new() } }, "_id"),
        (doc! { "name": "no operator" }, "name"),
    ] {
        assert_invalid_key(
            NsCustomer::collection(&db)
                .update(ada.id, update.clone())
                .await,
            key,
        );
        assert_invalid_key(NsOrder::collection(&db).update(o.id, update).await, key);
    }
    // An operator as a stored value.
    assert_invalid_value(
        NsCustomer::collection(&db)
            .update(
                ada.id,
                doc! { "$set": { "name": { "$concat": ["a", "b"] } } },
            )
            .await,
        "$concat in name",
    );
    assert_invalid_value(
        NsOrder::collection(&db)
            .update(o.id, doc! { "$set": { "meta": { "$gt": 1 } } })
            .await,
        "$gt in meta",
    );
    // A whole document whose map holds a key with NUL.
    let mut nul = order(&ada, &price);
    nul.meta.insert("bad\0key".into(), 1);
    assert_invalid_value(
        NsOrder::collection(&db).insert(&nul).await,
        "NUL key in meta",
    );
    assert!(raw_get(&db, "ns_orders", nul.id).await.is_none());

    assert_eq!(
        all(&db, "ns_customers").await,
        before_c,
        "nothing written to the source"
    );
    assert_eq!(
        all(&db, "ns_orders").await,
        before_o,
        "nothing written to the copies"
    );

    // An empty segment: refused, and the message should name the caller's key.
    let dotted = doc! { "$set": { "name..x": "x" } };
    assert_invalid_key(
        NsOrder::collection(&db).update(o.id, dotted.clone()).await,
        "name..x",
    );
    assert_invalid_key(
        NsCustomer::collection(&db).update(ada.id, dotted).await,
        "name..x",
    );
    assert_eq!(all(&db, "ns_customers").await, before_c);
}

/// Aborted: neither the order inserted through the model handle, nor the rename through `References`,
/// nor the attribute set is kept.
#[tokio::test]
async fn transaction_across_handles_aborted_keeps_nothing() {
    let db = test_db("ns_tx_abort").await;
    let (ada, price) = tx_fixture(&db).await;
    let before = (all(&db, "ns_customers").await, all(&db, "ns_records").await);

    let tx = Transaction::start(&db).await.unwrap();
    let (o, _) = three_writes(&db, &tx, &ada, &price).await;
    // Not visible outside before the end.
    assert!(raw_get(&db, "ns_orders", o.id).await.is_none());
    tx.abort().await.unwrap();
    assert_eq!(tx.ended(), Some("aborted"));

    assert!(
        raw_get(&db, "ns_orders", o.id).await.is_none(),
        "order kept after abort"
    );
    assert_eq!(
        all(&db, "ns_customers").await,
        before.0,
        "rename kept after abort"
    );
    assert_eq!(
        all(&db, "ns_records").await,
        before.1,
        "attribute kept after abort"
    );
    // A bound handle sends nothing after the end.
    let late = NsOrder::collection(&db)
        .in_transaction(&tx)
        .insert(&order(&ada, &price))
        .await;
    assert!(
        matches!(late, Err(Error::TransactionEnded { .. })),
        "{late:?}"
    );
    assert!(all(&db, "ns_orders").await.is_empty());
}

/// Committed: all three are there, and the rename reached the copy of the order inserted
/// earlier in the same transaction.
#[tokio::test]
async fn transaction_across_handles_committed_keeps_everything() {
    let db = test_db("ns_tx_commit").await;
    let (ada, price) = tx_fixture(&db).await;

    let tx = Transaction::start(&db).await.unwrap();
    let (o, spec) = three_writes(&db, &tx, &ada, &price).await;
    // A refusal before any write leaves the transaction usable.
    let bad = NsSpec {
        name: "$x".into(),
        value: Bson::Int32(1),
        unit: None,
    };
    assert_invalid_key(
        NsRecord::collection(&db)
            .attributes(NsRecord::FIELDS.specs)
            .in_transaction(&tx)
            .set(Bson::Int32(1), &bad)
            .await,
        "$x",
    );
    tx.commit().await.unwrap();
    assert_eq!(tx.ended(), Some("committed"));

    let stored = raw_get(&db, "ns_orders", o.id)
        .await
        .expect("order not committed");
    assert_eq!(
        stored
            .get_document("customer")
            .unwrap()
            .get_str("name")
            .unwrap(),
        "Ada L."
    );
    let c = raw_get(&db, "ns_customers", ada.id).await.unwrap();
    assert_eq!(c.get_str("name").unwrap(), "Ada L.");
    let got = NsRecord::collection(&db)
        .attributes(NsRecord::FIELDS.specs)
        .get(Bson::Int32(1), "k".to_owned())
        .await
        .unwrap();
    assert_eq!(got, Some(spec));
    assert!(NsCustomer::collection(&db)
        .references()
        .check()
        .await
        .unwrap()
        .is_clean());
}

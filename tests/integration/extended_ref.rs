//! Extended references against a real server: the seed's `orders` with a customer's copied
//! `{name, address}` and `items[].product {sku, title}` next to each item's `priceAtOrder`.

use bson::oid::ObjectId;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use pattern_runtime::{extended_ref::Mode, sync::list_indexes, Error, Fields, Model};
use pattern_testkit::{test_db, TestDb};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Address {
    street: String,
    city: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "customers")]
#[extended_ref(CustomerRef(name, address), derive(PartialEq))]
struct Customer {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[serde(rename = "fullName")]
    name: String,
    address: Address,
    email: String,
    loyalty_points: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "products")]
#[extended_ref(ProductRef(sku, title), derive(PartialEq))]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    sku: String,
    title: String,
    price: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct OrderItem {
    product: ProductRef,
    quantity: u32,
    price_at_order: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    #[serde(rename = "customerSnapshot")]
    customer: CustomerRef,
    #[extended_ref(propagate)]
    billing: Option<CustomerRef>,
    #[extended_ref(propagate, path = product)]
    items: Vec<OrderItem>,
    total: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    amount: f64,
}

/// Receipts keep the customer as they were when paid.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "receipts")]
struct Receipt {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(snapshot)]
    customer: CustomerRef,
}

/// Arrays of references, one of them optional.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "teams")]
struct Team {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[extended_ref(propagate)]
    members: Vec<CustomerRef>,
    #[extended_ref(propagate)]
    reviewers: Option<Vec<CustomerRef>>,
}

fn customer(name: &str) -> Customer {
    Customer {
        id: ObjectId::new(),
        name: name.to_owned(),
        address: Address {
            street: format!("{name} street 1"),
            city: "Hangzhou".to_owned(),
        },
        email: format!("{}@example.com", name.to_lowercase()),
        loyalty_points: 0,
    }
}

fn product(sku: &str, title: &str) -> Product {
    Product {
        id: ObjectId::new(),
        sku: sku.to_owned(),
        title: title.to_owned(),
        price: 10.0,
    }
}

fn item(p: &Product, quantity: u32) -> OrderItem {
    OrderItem {
        product: ProductRef::from(p),
        quantity,
        price_at_order: p.price,
    }
}

fn order(c: &Customer, items: Vec<OrderItem>) -> Order {
    Order {
        id: ObjectId::new(),
        customer: CustomerRef::from(c),
        billing: Some(CustomerRef::from(c)),
        items,
        total: 0.0,
    }
}

/// One invoice of `amount` for `c`, holding its reference.
async fn insert_invoice(db: &TestDb, c: &Customer, amount: f64) {
    Invoice::collection(db)
        .raw()
        .insert_one(Invoice {
            id: ObjectId::new(),
            customer: CustomerRef::from(c),
            amount,
        })
        .await
        .unwrap();
}

async fn all<M: Model>(db: &TestDb) -> Vec<M> {
    M::collection(db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// The customer `id` as stored now.
async fn stored_customer(db: &TestDb, id: ObjectId) -> Customer {
    Customer::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
}

/// `n` orders of customer `c`, without items.
async fn insert_orders(db: &TestDb, c: &Customer, n: usize) {
    for _ in 0..n {
        Order::collection(db)
            .raw()
            .insert_one(order(c, vec![]))
            .await
            .unwrap();
    }
}

/// The `update` commands sent since the last call, by collection, sorted.
fn update_targets(db: &TestDb) -> Vec<String> {
    let mut v: Vec<String> = db
        .take_commands()
        .into_iter()
        .filter(|c| c.name == "update")
        .map(|c| c.target)
        .collect();
    v.sort();
    v
}

/// Whether the server runs transactions (a standalone mongod at `MONGODB_URI` does not).
async fn has_transactions(db: &TestDb) -> bool {
    let mut session = db.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let probe = db
        .collection::<Document>("txn_probe")
        .insert_one(doc! {})
        .session(&mut session)
        .await;
    let _ = session.abort_transaction().await;
    probe.is_ok()
}

#[test]
fn the_reference_type_has_the_sources_names_and_values() {
    let c = customer("Ada");
    let r = CustomerRef::from(&c);
    assert_eq!((r.id, &r.name, &r.address), (c.id, &c.name, &c.address));
    let stored = bson::serialize_to_document(&c).unwrap();
    let copied = bson::serialize_to_document(&r).unwrap();
    assert_eq!(
        copied,
        doc! {
            "_id": c.id,
            "fullName": stored.get("fullName").cloned().unwrap(),
            "address": stored.get("address").cloned().unwrap(),
        }
    );
    let back: CustomerRef = bson::deserialize_from_document(copied).unwrap();
    assert_eq!(back, r);

    let spec = <CustomerRef as pattern_runtime::extended_ref::ExtendedRef>::SPEC;
    assert_eq!(spec.fields(), ["fullName", "address"]);
    assert_eq!(
        (spec.name(), spec.source(), spec.source_collection()),
        ("CustomerRef", "Customer", "customers")
    );
    // Every registered embedding, found through the registry.
    let mut found: Vec<(String, &str, Mode)> = spec
        .embeddings()
        .iter()
        .map(|e| (e.path(), e.collection(), e.mode()))
        .collect();
    found.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    assert_eq!(
        found,
        [
            ("customer".to_owned(), "invoices", Mode::Propagate),
            ("billing".to_owned(), "orders", Mode::Propagate),
            ("customerSnapshot".to_owned(), "orders", Mode::Propagate),
            ("customer".to_owned(), "receipts", Mode::Snapshot),
            ("members".to_owned(), "teams", Mode::Propagate),
            ("reviewers".to_owned(), "teams", Mode::Propagate),
        ]
    );
    assert_eq!(
        OrderItem::FIELDS.price_at_order,
        "priceAtOrder",
        "derive(Fields) honours rename_all"
    );
}

#[tokio::test]
async fn renaming_a_customer_updates_every_propagated_copy_and_no_snapshot() {
    let db = test_db("extref_rename").await;
    let ada = customer("Ada");
    let bob = customer("Bob");
    Customer::collection(&db)
        .raw()
        .insert_many([&ada, &bob])
        .await
        .unwrap();
    let orders: Vec<Order> = (0..3).map(|_| order(&ada, vec![])).collect();
    Order::collection(&db)
        .raw()
        .insert_many(&orders)
        .await
        .unwrap();
    Order::collection(&db)
        .raw()
        .insert_one(order(&bob, vec![]))
        .await
        .unwrap();
    for amount in [10.0, 20.0] {
        insert_invoice(&db, &ada, amount).await;
    }
    let receipt = Receipt {
        id: ObjectId::new(),
        customer: CustomerRef::from(&ada),
    };
    Receipt::collection(&db)
        .raw()
        .insert_one(&receipt)
        .await
        .unwrap();
    let teams = [
        Team {
            id: ObjectId::new(),
            members: vec![CustomerRef::from(&bob), CustomerRef::from(&ada)],
            reviewers: Some(vec![CustomerRef::from(&ada)]),
        },
        Team {
            id: ObjectId::new(),
            members: vec![CustomerRef::from(&ada)],
            reviewers: None,
        },
    ];
    Team::collection(&db)
        .raw()
        .insert_many(&teams)
        .await
        .unwrap();
    db.take_commands();

    Customer::collection(&db)
        .update(
            ada.id,
            doc! { "$set": { Customer::FIELDS.name: "Ada Lovelace" } },
        )
        .await
        .unwrap();

    // One updateMany per propagated embedding, nothing for the snapshot.
    assert_eq!(
        update_targets(&db),
        ["invoices", "orders", "orders", "teams", "teams"],
    );

    let stored = stored_customer(&db, ada.id).await;
    assert_eq!(stored.name, "Ada Lovelace");
    let expected = CustomerRef::from(&stored);
    for o in all::<Order>(&db).await {
        let owner = if o.customer.id == ada.id {
            expected.clone()
        } else {
            CustomerRef::from(&bob)
        };
        assert_eq!(o.customer, owner);
        assert_eq!(o.billing.as_ref(), Some(&owner));
    }
    for i in all::<Invoice>(&db).await {
        assert_eq!(i.customer, expected);
    }
    let stored_teams = all::<Team>(&db).await;
    let team = stored_teams.iter().find(|t| t.id == teams[0].id).unwrap();
    assert_eq!(team.members, [CustomerRef::from(&bob), expected.clone()]);
    assert_eq!(team.reviewers.as_deref(), Some(&[expected.clone()][..]));
    let team = stored_teams.iter().find(|t| t.id == teams[1].id).unwrap();
    assert_eq!(team.members, [expected]);
    assert_eq!(team.reviewers, None, "an absent array stays absent");
    // The snapshot keeps the name the receipt was written with.
    assert_eq!(all::<Receipt>(&db).await[0].customer.name, "Ada");
}

#[tokio::test]
async fn a_title_change_reaches_only_the_matching_items() {
    let db = test_db("extref_items").await;
    let ada = customer("Ada");
    let pen = product("P-1", "Pen");
    let ink = product("P-2", "Ink");
    Product::collection(&db)
        .raw()
        .insert_many([&pen, &ink])
        .await
        .unwrap();
    let mut both = order(&ada, vec![item(&pen, 1), item(&ink, 2), item(&pen, 3)]);
    both.items[2].price_at_order = 7.5;
    let ink_only = order(&ada, vec![item(&ink, 1)]);
    Order::collection(&db)
        .raw()
        .insert_many([&both, &ink_only])
        .await
        .unwrap();
    db.take_commands();

    Product::collection(&db)
        .update(
            pen.id,
            doc! { "$set": { "title": "Fountain pen", "price": 12.0 } },
        )
        .await
        .unwrap();
    assert_eq!(update_targets(&db), ["orders"]);

    let stored = Order::collection(&db)
        .raw()
        .find_one(doc! { "_id": both.id })
        .await
        .unwrap()
        .unwrap();
    let titles: Vec<&str> = stored
        .items
        .iter()
        .map(|i| i.product.title.as_str())
        .collect();
    assert_eq!(titles, ["Fountain pen", "Ink", "Fountain pen"]);
    // Everything else in the items stays: the sku, and each item's own price at order.
    let skus: Vec<&str> = stored
        .items
        .iter()
        .map(|i| i.product.sku.as_str())
        .collect();
    assert_eq!(skus, ["P-1", "P-2", "P-1"]);
    let prices: Vec<f64> = stored.items.iter().map(|i| i.price_at_order).collect();
    assert_eq!(prices, [10.0, 10.0, 7.5]);
    let untouched = Order::collection(&db)
        .raw()
        .find_one(doc! { "_id": ink_only.id })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(untouched.items[0].product, ProductRef::from(&ink));
}

#[tokio::test]
async fn a_change_to_fields_nobody_copies_sends_one_update_and_nothing_else() {
    let db = test_db("extref_uncopied").await;
    let ada = customer("Ada");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    Order::collection(&db)
        .raw()
        .insert_one(order(&ada, vec![]))
        .await
        .unwrap();
    db.take_commands();

    Customer::collection(&db)
        .update(
            ada.id,
            doc! {
                "$inc": { Customer::FIELDS.loyalty_points: 5 },
                "$set": { Customer::FIELDS.email: "ada@new.example" },
            },
        )
        .await
        .unwrap();
    let sent: Vec<(String, String)> = db
        .take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect();
    assert_eq!(sent, [("update".to_owned(), "customers".to_owned())]);
    let stored = stored_customer(&db, ada.id).await;
    assert_eq!(
        (stored.loyalty_points, stored.email.as_str()),
        (5, "ada@new.example")
    );

    // A path below a copied field touches it: the whole copied address follows.
    Customer::collection(&db)
        .update(ada.id, doc! { "$set": { "address.city": "Suzhou" } })
        .await
        .unwrap();
    // One updateMany per propagated embedding of the reference, whether or not it holds copies.
    assert_eq!(
        update_targets(&db),
        ["invoices", "orders", "orders", "teams", "teams"]
    );
    let o = &all::<Order>(&db).await[0];
    assert_eq!(o.customer.address.city, "Suzhou");
    assert_eq!(o.customer.address.street, "Ada street 1");
}

#[tokio::test]
async fn replace_propagates_the_copied_fields_that_changed() {
    let db = test_db("extref_replace").await;
    let mut ada = customer("Ada");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    insert_invoice(&db, &ada, 1.0).await;

    db.take_commands();
    ada.loyalty_points = 100;
    Customer::collection(&db).replace(&ada).await.unwrap();
    assert!(update_targets(&db).is_empty(), "no copied field changed");

    ada.address.street = "2 New Road".into();
    ada.email = "other@example.com".into();
    Customer::collection(&db).replace(&ada).await.unwrap();
    // Every embedding copying the address: the invoice holds one, the other collections none.
    assert_eq!(
        update_targets(&db),
        ["invoices", "orders", "orders", "teams", "teams"],
        "the copied address changed"
    );
    assert_eq!(
        all::<Invoice>(&db).await[0].customer,
        CustomerRef::from(&ada)
    );

    // Replacing a customer that is not stored writes nothing.
    let ghost = customer("Ghost");
    let err = Customer::collection(&db).replace(&ghost).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    assert_eq!(
        Customer::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn bad_updates_are_refused_before_anything_is_sent() {
    let db = test_db("extref_refused").await;
    let ada = customer("Ada");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    let customers = Customer::collection(&db).references();
    db.take_commands();
    for bad in [
        doc! { "$set": { "_id": ObjectId::new() } },
        doc! { "$set": { "address.$bad": 1 } },
        doc! { "$set": { "a..b": 1 } },
        doc! { "fullName": "no operator" },
        doc! { "$rename": { "fullName": "_id" } },
    ] {
        let err = Customer::collection(&db)
            .update(ada.id, bad.clone())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{bad}: {err:?}");
    }
    assert_eq!(db.take_commands(), []);

    // A missing source: NotFound, with and without copied fields in the update.
    for update in [
        doc! { "$set": { "fullName": "x" } },
        doc! { "$set": { "email": "x" } },
    ] {
        let err = Customer::collection(&db)
            .update(ObjectId::new(), update)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    }
    let err = customers.rebuild(ObjectId::new()).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

/// The holder's own handle does not write a copied field, wherever it sits: in a single copy,
/// in an array of copies, or in the items of an array, named by position or by an array
/// filter. Each is `KeptField` (`InvalidKey` for the bare `$` segment) before anything is sent
/// (array paths once let it through, forging copies that the source's next change did not
/// mend).
#[tokio::test]
async fn a_copied_field_is_refused_through_every_path_of_the_holder() {
    let db = test_db("extref_holder_paths").await;
    let ada = customer("Ada");
    Customer::collection(&db).insert(&ada).await.unwrap();
    let pen = product("pen", "Pen");
    Product::collection(&db).insert(&pen).await.unwrap();
    let o = order(&ada, vec![item(&pen, 1)]);
    Order::collection(&db).insert(&o).await.unwrap();
    let team = Team {
        id: ObjectId::new(),
        members: vec![CustomerRef::from(&ada)],
        reviewers: Some(vec![CustomerRef::from(&ada)]),
    };
    Team::collection(&db).insert(&team).await.unwrap();
    db.take_commands();
    for path in [
        "customerSnapshot.fullName",
        "items.0.product.title",
        "items.$.product.title",
        "items.$[].product.title",
        "items.$[i].product.title",
    ] {
        let err = Order::collection(&db)
            .update(o.id, doc! { "$set": { path: "forged" } })
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey { .. } | Error::KeptField { .. }),
            "{path}: {err:?}"
        );
    }
    for path in [
        "members.0.fullName",
        "members.$[].fullName",
        "reviewers.1.address",
    ] {
        let err = Team::collection(&db)
            .update(team.id, doc! { "$set": { path: "forged" } })
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidKey { .. } | Error::KeptField { .. }),
            "{path}: {err:?}"
        );
    }
    assert_eq!(db.take_commands(), [], "nothing sent");
    // A field of the items that is no copy is the holder's own.
    Order::collection(&db)
        .update(o.id, doc! { "$set": { "items.0.quantity": 3 } })
        .await
        .unwrap();
}

/// A copy's fields have typed names (the generated `CustomerRef` has `Fields`), so a filter or
/// sort reaches into a copy, in one field, an optional one, an array of copies or an array's
/// items, under the names the source stores; the same command as the hand-written `doc!`.
#[tokio::test]
async fn a_copy_is_filtered_by_its_typed_names() {
    use pattern_runtime::query::{Filter, Sort};
    let db = test_db("extref_typed_filter").await;
    let ada = customer("Ada");
    let bob = customer("Bob");
    let pen = product("pen", "Pen");
    let ink = product("ink", "Ink");
    let orders = Order::collection(&db);
    let mut ada_order = order(&ada, vec![item(&pen, 1)]);
    ada_order.billing = None;
    orders.insert(&ada_order).await.unwrap();
    orders
        .insert(&order(&bob, vec![item(&ink, 2), item(&pen, 1)]))
        .await
        .unwrap();
    Team::collection(&db)
        .insert(&Team {
            id: ObjectId::new(),
            members: vec![CustomerRef::from(&bob)],
            reviewers: None,
        })
        .await
        .unwrap();
    let f = Order::FIELDS;
    type Case = (Box<dyn Fn() -> Filter<Order>>, Document, usize);
    let cases: Vec<Case> = vec![
        (
            Box::new(move || Filter::eq(f.customer.then(|c| c.name), "Ada")),
            doc! { "customerSnapshot.fullName": { "$eq": "Ada" } },
            1,
        ),
        (
            Box::new(move || Filter::eq(f.customer.then(|c| c.id), ada.id)),
            doc! { "customerSnapshot._id": { "$eq": ada.id } },
            1,
        ),
        (
            Box::new(move || Filter::eq(f.billing.then(|c| c.name), "Bob")),
            doc! { "billing.fullName": { "$eq": "Bob" } },
            1,
        ),
        (
            Box::new(move || Filter::eq(f.items.then(|i| i.product).then(|p| p.sku), "pen")),
            doc! { "items.product.sku": { "$eq": "pen" } },
            2,
        ),
    ];
    for (typed, by_hand, n) in cases {
        assert_eq!(typed().into_document().unwrap(), by_hand);
        assert_eq!(orders.count(typed()).await.unwrap(), n as u64, "{by_hand}");
        assert_eq!(orders.count(by_hand.clone()).await.unwrap(), n as u64);
    }
    let sorted = orders
        .find(doc! {})
        .sort(Sort::desc(f.customer.then(|c| c.name)))
        .await
        .unwrap();
    assert_eq!(sorted[0].customer.name, "Bob");
    let t = Team::FIELDS;
    let bobs = Team::collection(&db)
        .count(Filter::eq(t.members.then(|m| m.name), "Bob"))
        .await
        .unwrap();
    assert_eq!(bobs, 1);
}

#[tokio::test]
async fn a_failed_propagation_rolls_back_the_source() {
    let db = test_db("extref_rollback").await;
    if !has_transactions(&db).await {
        eprintln!("skipped: this server runs no transactions");
        return;
    }
    let ada = customer("Ada");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    Order::collection(&db)
        .raw()
        .insert_one(order(&ada, vec![]))
        .await
        .unwrap();
    insert_invoice(&db, &ada, 1.0).await;

    // The second updateMany fails: the first one and the customer's update are undone too.
    db.fail_command(
        &["update"],
        1,
        doc! { "errorCode": 2, "errmsg": "injected" },
    )
    .await;
    let err = Customer::collection(&db)
        .update(ada.id, doc! { "$set": { "fullName": "Never" } })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(2), "{err:?}");
    let stored = stored_customer(&db, ada.id).await;
    assert_eq!(stored.name, "Ada");
    assert_eq!(all::<Order>(&db).await[0].customer.name, "Ada");
    assert_eq!(all::<Invoice>(&db).await[0].customer.name, "Ada");

    // A transient failure is retried as a whole and then goes through.
    db.fail_command(
        &["update"],
        1,
        doc! { "errorCode": 112, "errorLabels": ["TransientTransactionError"] },
    )
    .await;
    Customer::collection(&db)
        .update(ada.id, doc! { "$set": { "fullName": "Ada L." } })
        .await
        .unwrap();
    assert_eq!(all::<Order>(&db).await[0].customer.name, "Ada L.");
    assert_eq!(all::<Invoice>(&db).await[0].customer.name, "Ada L.");
}

#[tokio::test]
async fn without_transactions_a_partial_propagation_is_incomplete_and_resync_repairs_it() {
    let db = test_db("extref_no_txn").await;
    let ada = customer("Ada");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    insert_orders(&db, &ada, 2).await;
    let receipt = Receipt {
        id: ObjectId::new(),
        customer: CustomerRef::from(&ada),
    };
    Receipt::collection(&db)
        .raw()
        .insert_one(&receipt)
        .await
        .unwrap();
    // The first `update` (in the transaction) says there are no transactions; the second (the
    // first copy write, without one) fails after the customer was written.
    let illegal = doc! { "errorCode": 20, "errmsg": "Transaction numbers are only allowed on a replica set member or mongos" };
    db.fail_command(&["update"], 2, illegal).await;
    let err = Customer::collection(&db)
        .update(ada.id, doc! { "$set": { "fullName": "Ada B." } })
        .await
        .unwrap_err();
    let Error::Incomplete {
        written, failed, ..
    } = &err
    else {
        panic!("expected Incomplete, got {err:?}");
    };
    // The first embedding's copy write failed: no copy was written.
    assert_eq!(*written, 0, "{err}");
    assert!(*failed >= 1, "{err}");
    let stored = stored_customer(&db, ada.id).await;
    assert_eq!(stored.name, "Ada B.");
    assert_eq!(all::<Order>(&db).await[0].customer.name, "Ada");

    // Changes made with the driver directly are not propagated either; resync repairs both.
    Customer::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": ada.id },
            doc! { "$set": { "address.city": "Ningbo" } },
        )
        .await
        .unwrap();
    let report = Customer::collection(&db)
        .references()
        .rebuild(ada.id)
        .await
        .unwrap();
    assert_eq!(
        report.repaired, 4,
        "two orders, each with two copies: {report}"
    );
    let stored = stored_customer(&db, ada.id).await;
    for o in all::<Order>(&db).await {
        assert_eq!(o.customer, CustomerRef::from(&stored));
        assert_eq!(o.billing, Some(CustomerRef::from(&stored)));
    }
    assert_eq!(all::<Receipt>(&db).await[0].customer, receipt.customer);
    // A second rebuild finds nothing to change.
    let again = Customer::collection(&db)
        .references()
        .rebuild(ada.id)
        .await
        .unwrap();
    assert_eq!(again.repaired, 0);
}

/// A document holding a copy is stored with the copy it is given, even one built by hand that
/// differs from its source (the docs say so: the toolkit keeps copies in line when the source
/// changes); `check` reports it and `rebuild` of the source rewrites it.
#[tokio::test]
async fn an_insert_stores_a_hand_built_copy_and_check_reports_it() {
    let db = test_db("ext_hand_built_copy").await;
    let ada = customer("Ada");
    Customer::collection(&db).insert(&ada).await.unwrap();
    let mut forged = CustomerRef::from(&ada);
    forged.name = "Mallory".to_owned();
    let invoice = Invoice {
        id: ObjectId::new(),
        customer: forged.clone(),
        amount: 5.0,
    };
    Invoice::collection(&db).insert(&invoice).await.unwrap();
    assert_eq!(all::<Invoice>(&db).await[0].customer, forged);

    let references = Customer::collection(&db).references();
    let report = references.check().await.unwrap();
    assert_eq!(report.findings.len(), 1, "{report}");
    assert_eq!(
        report.documents(),
        [bson::Bson::ObjectId(ada.id)],
        "{report}"
    );

    let rebuilt = references.rebuild(ada.id).await.unwrap();
    assert_eq!(rebuilt.repaired, 1, "{rebuilt}");
    assert_eq!(
        all::<Invoice>(&db).await[0].customer,
        CustomerRef::from(&ada)
    );
    assert!(references.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn every_embedding_gets_an_index_on_the_copied_id() {
    let db = test_db("extref_indexes").await;
    // This file's models (the test binary holds other files' models too).
    let models = [
        Customer::SCHEMA,
        Product::SCHEMA,
        Order::SCHEMA,
        Invoice::SCHEMA,
        Receipt::SCHEMA,
        Team::SCHEMA,
    ];
    pattern_runtime::sync(&db)
        .models(&models)
        .options(&Default::default())
        .await
        .unwrap();
    let names = |coll: &'static str| {
        let db = &db;
        async move {
            let mut v: Vec<String> = list_indexes(db, coll)
                .await
                .unwrap()
                .into_iter()
                .map(|d| d.get_str("name").unwrap().to_owned())
                .collect();
            v.sort();
            v
        }
    };
    assert_eq!(
        names("orders").await,
        [
            "_id_",
            "billing._id_1",
            "customerSnapshot._id_1",
            "items.product._id_1"
        ]
    );
    assert_eq!(names("invoices").await, ["_id_", "customer._id_1"]);
    assert_eq!(names("receipts").await, ["_id_", "customer._id_1"]);
    assert_eq!(
        names("teams").await,
        ["_id_", "members._id_1", "reviewers._id_1"]
    );
    let orders = list_indexes(&db, "orders").await.unwrap();
    let items = orders
        .iter()
        .find(|d| d.get_str("name").ok() == Some("items.product._id_1"))
        .unwrap();
    assert_eq!(
        items.get_document("key").unwrap(),
        &doc! { "items.product._id": 1 }
    );
}

#[tokio::test]
async fn concurrent_renames_leave_every_copy_equal_to_its_source() {
    let db = test_db("extref_concurrent").await;
    let ada = customer("Ada");
    let pen = product("P-1", "Pen");
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    Product::collection(&db)
        .raw()
        .insert_one(&pen)
        .await
        .unwrap();
    for n in 0..20u32 {
        Order::collection(&db)
            .raw()
            .insert_one(order(&ada, vec![item(&pen, n), item(&pen, 1)]))
            .await
            .unwrap();
    }
    let mut tasks = Vec::new();
    for t in 0..6 {
        let db = db.db().clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..5 {
                Customer::collection(&db)
                    .update(
                        ada.id,
                        doc! { "$set": { "fullName": format!("Ada {t}-{round}") } },
                    )
                    .await
                    .unwrap();
                Product::collection(&db)
                    .update(
                        pen.id,
                        doc! { "$set": { "title": format!("Pen {t}-{round}") } },
                    )
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let stored = stored_customer(&db, ada.id).await;
    let stored_pen = Product::collection(&db)
        .raw()
        .find_one(doc! { "_id": pen.id })
        .await
        .unwrap()
        .unwrap();
    assert!(stored.name.starts_with("Ada ") && stored.name != "Ada");
    let orders = all::<Order>(&db).await;
    assert_eq!(orders.len(), 20);
    for o in &orders {
        assert_eq!(o.customer, CustomerRef::from(&stored));
        assert_eq!(o.billing, Some(CustomerRef::from(&stored)));
        for i in &o.items {
            assert_eq!(i.product, ProductRef::from(&stored_pen));
        }
    }
}

#[test]
fn schemas_describe_the_embeddings() {
    let field = Order::SCHEMA.field("customer").unwrap();
    assert_eq!(field.bson_name(), "customerSnapshot");
    assert!(field.annotations().iter().any(|a| matches!(
        a,
        pattern_runtime::Annotation::ExtendedRef {
            mode: Mode::Propagate
        }
    )));
    assert_eq!(
        Customer::SCHEMA
            .specs::<pattern_runtime::extended_ref::RefSpec>()
            .count(),
        1
    );
    assert!(Order::SCHEMA
        .spec::<pattern_runtime::extended_ref::RefSpec>()
        .is_none());
    let paths: Vec<String> = Order::SCHEMA
        .specs::<pattern_runtime::extended_ref::Embedding>()
        .map(|e| e.path())
        .collect();
    assert_eq!(paths, ["customerSnapshot", "billing", "items.product"]);
}

//! Two models of the same name on the same collection, in two modules of one program, are two
//! models: every spec names the models it involves by their schema, never by name, so one
//! module's copies and subsets follow its own writes and never the other's. (Before, a lookup by
//! name and collection picked one of the two, and the other's copies went stale.)

use bson::doc;
use pattern_runtime::derived::dependents_of;
use pattern_runtime::{Fields, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};

/// The models of one module; `shop` and `crm` declare them alike, on the same collections but
/// the orders'.
macro_rules! models {
    ($module:ident, $orders:literal) => {
        mod $module {
            use super::*;

            #[derive(Debug, Clone, Serialize, Deserialize, Model)]
            #[model(collection = "customers")]
            #[extended_ref(CustomerRef(name))]
            pub struct Customer {
                #[serde(rename = "_id")]
                pub id: i64,
                pub name: String,
            }

            #[derive(Debug, Clone, Serialize, Deserialize, Model)]
            #[model(collection = $orders)]
            pub struct Order {
                #[serde(rename = "_id")]
                pub id: i64,
                #[extended_ref(propagate)]
                pub customer: CustomerRef,
            }

            #[derive(Debug, Clone, Serialize, Deserialize, Model)]
            #[model(collection = "reviews")]
            pub struct Review {
                #[serde(rename = "_id")]
                pub id: i64,
                pub product: i64,
                pub stars: i32,
            }

            #[derive(Debug, Clone, Serialize, Deserialize, Fields)]
            pub struct Excerpt {
                pub stars: i32,
            }

            impl From<&Review> for Excerpt {
                fn from(r: &Review) -> Self {
                    Excerpt { stars: r.stars }
                }
            }

            #[derive(Debug, Clone, Serialize, Deserialize, Model)]
            #[model(collection = "products")]
            pub struct Product {
                #[serde(rename = "_id")]
                pub id: i64,
                #[subset(limit = 3, sort(stars = -1), full = Review, parent = product)]
                pub top: Vec<Excerpt>,
            }
        }
    };
}

models!(shop, "shop_orders");
models!(crm, "crm_orders");

#[test]
fn each_model_has_its_own_dependents() {
    let describe =
        |schema| -> Vec<String> { dependents_of(schema).iter().map(|d| d.describe()).collect() };
    // One copy each: the orders of the customer's own module.
    assert_eq!(
        describe(shop::Customer::SCHEMA),
        ["Order.customer (extended reference copies of Customer)"]
    );
    assert_eq!(dependents_of(shop::Customer::SCHEMA).len(), 1);
    assert_eq!(dependents_of(crm::Customer::SCHEMA).len(), 1);
    assert!(!std::ptr::eq(
        dependents_of(shop::Customer::SCHEMA)[0],
        dependents_of(crm::Customer::SCHEMA)[0]
    ));
    // One subset each: the products of the review's own module.
    assert_eq!(dependents_of(shop::Review::SCHEMA).len(), 1);
    assert_eq!(dependents_of(crm::Review::SCHEMA).len(), 1);
}

#[tokio::test]
async fn a_write_keeps_the_copies_of_its_own_module() {
    let db = test_db("same_names").await;
    let customer = |name: &str| shop::Customer {
        id: 1,
        name: name.into(),
    };
    shop::Customer::collection(&db)
        .insert(&customer("Ada"))
        .await
        .unwrap();
    shop::Order::collection(&db)
        .insert(&shop::Order {
            id: 10,
            customer: shop::CustomerRef::from(&customer("Ada")),
        })
        .await
        .unwrap();
    crm::Order::collection(&db)
        .insert(&crm::Order {
            id: 20,
            customer: crm::CustomerRef::from(&crm::Customer {
                id: 1,
                name: "Ada".into(),
            }),
        })
        .await
        .unwrap();

    // Through `shop`'s handle: `shop`'s orders follow; `crm`'s copy is of `crm::Customer`.
    db.take_commands();
    shop::Customer::collection(&db)
        .update(1, doc! { "$set": { "name": "Ada Lovelace" } })
        .await
        .unwrap();
    assert_eq!(copies_written(&db), ["shop_orders"]);
    let shop_order = shop::Order::collection(&db)
        .raw()
        .find_one(doc! { "_id": 10 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(shop_order.customer.name, "Ada Lovelace");

    // `crm`'s handle on the same document: `crm`'s orders follow.
    crm::Customer::collection(&db)
        .update(1, doc! { "$set": { "name": "Countess" } })
        .await
        .unwrap();
    assert_eq!(copies_written(&db), ["crm_orders"]);
    let crm_order = crm::Order::collection(&db)
        .raw()
        .find_one(doc! { "_id": 20 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(crm_order.customer.name, "Countess");
}

/// The collections other than the customers' that `update` commands wrote since the last call.
fn copies_written(db: &pattern_testkit::TestDb) -> Vec<String> {
    db.take_commands()
        .into_iter()
        .filter(|c| c.name == "update" && c.target != "customers")
        .map(|c| c.target)
        .collect()
}

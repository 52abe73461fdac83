//! Chapter 5: the extended reference pattern.
//!
//! A shop's `orders`: each keeps its customer's `_id` and a copy of the fields every order page
//! shows (`customerSnapshot {name, address}`), and each item a copy of its product
//! (`product {sku, title}`) next to the item's own `priceAtOrder`. Renaming a customer or a
//! product carries the change to every copy kept in sync, in one transaction; receipts keep the
//! customer as it was when they were issued.

use bson::doc;
use bson::oid::ObjectId;
use pattern_runtime::query::{Filter, Update};
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

/// `customers`: the full customer. Orders copy its name and address, never the loyalty points
/// (they change on every purchase).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "extended_ref", collection = "customers")]
#[extended_ref(CustomerRef(name, address))]
pub struct Customer {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub address: String,
    pub loyalty_points: i64,
}

/// `products`: orders copy the sku and title; the price is the order's own snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "extended_ref", collection = "products")]
#[extended_ref(ProductRef(sku, title))]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub sku: String,
    pub title: String,
    pub price: f64,
}

/// One line of an order.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct OrderItem {
    pub product: ProductRef,
    pub quantity: u32,
    pub price_at_order: f64,
}

/// `orders`: the customer and the products are kept in sync.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "extended_ref", collection = "orders")]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: u32,
    #[serde(rename = "customerSnapshot")]
    #[extended_ref(propagate)]
    pub customer: CustomerRef,
    /// At most 100 lines per order (the shop's rule).
    #[extended_ref(propagate, path = product)]
    #[bounded(100)]
    pub items: Vec<OrderItem>,
}

/// `receipts`: the customer as it was when the receipt was issued.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "extended_ref", collection = "receipts")]
pub struct Receipt {
    #[serde(rename = "_id")]
    pub id: u32,
    #[extended_ref(snapshot)]
    pub customer: CustomerRef,
    pub amount: f64,
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 5: extended reference, copies kept in sync or kept as snapshots");
    let db = crate::chapter_db(client, "extended_ref").await?;
    for model in [Order::SCHEMA, Receipt::SCHEMA] {
        for e in model.specs::<pattern_runtime::extended_ref::Embedding>() {
            println!(
                "  {}.{}: a {} copy of {} {:?}, index {}",
                e.collection(),
                e.path(),
                match e.mode() {
                    pattern_runtime::extended_ref::Mode::Propagate => "propagated",
                    pattern_runtime::extended_ref::Mode::Snapshot => "snapshot",
                },
                e.reference().source(),
                e.reference().fields(),
                e.index().name(),
            );
        }
    }
    pattern_runtime::sync(&db).models(&[Order::SCHEMA]).await?;
    pattern_runtime::sync(&db)
        .models(&[Receipt::SCHEMA])
        .await?;

    let alice = Customer {
        id: ObjectId::new(),
        name: "张三".into(),
        address: "杭州市西湖区".into(),
        loyalty_points: 0,
    };
    let pen = Product {
        id: ObjectId::new(),
        sku: "PEN-01".into(),
        title: "钢笔".into(),
        price: 25.0,
    };
    let ink = Product {
        id: ObjectId::new(),
        sku: "INK-01".into(),
        title: "墨水".into(),
        price: 8.0,
    };
    Customer::collection(&db).insert(&alice).await?;
    Product::collection(&db).insert_many([&pen, &ink]).await?;
    let line = |p: &Product, quantity| OrderItem {
        product: ProductRef::from(p),
        quantity,
        price_at_order: p.price,
    };
    for (id, items) in [
        (1, vec![line(&pen, 1), line(&ink, 2)]),
        (2, vec![line(&ink, 5)]),
        (3, vec![line(&pen, 2)]),
    ] {
        let order = Order {
            id,
            customer: CustomerRef::from(&alice),
            items,
        };
        Order::collection(&db).insert(&order).await?;
    }
    Receipt::collection(&db)
        .insert(&Receipt {
            id: 1,
            customer: CustomerRef::from(&alice),
            amount: 41.0,
        })
        .await?;
    // As stored, through the driver (`raw()`): the copies are plain fields of the order.
    let first = Order::collection(&db)
        .raw()
        .clone_with_type::<bson::Document>()
        .find_one(doc! { "_id": 1 })
        .await?
        .ok_or("order 1")?;
    println!("\n3 orders and a receipt; order 1 as stored:\n  {first}");

    // The model's own handle writes the customer; the copies of the fields it changes follow.
    let customers = Customer::collection(&db);
    customers
        .update(alice.id, Update::new().set(Customer::FIELDS.name, "张三丰"))
        .await?;
    println!("\nrename the customer: its copies in the orders and the receipt follow");
    customers
        .update(
            alice.id,
            Update::new().inc(Customer::FIELDS.loyalty_points, 41),
        )
        .await?;
    println!("add loyalty points (not copied): one update, no copy touched");

    Product::collection(&db)
        .update(
            pen.id,
            Update::new()
                .set(Product::FIELDS.title, "英雄钢笔")
                .set(Product::FIELDS.price, 30.0),
        )
        .await?;
    println!("retitle and reprice the pen: the order lines that copy it follow");

    let orders: Vec<Order> = Order::collection(&db).find(Filter::default()).await?;
    for o in &orders {
        let items: Vec<String> = o
            .items
            .iter()
            .map(|i| {
                format!(
                    "{} x{} at {}",
                    i.product.title, i.quantity, i.price_at_order
                )
            })
            .collect();
        println!(
            "  order {}: {} | {}",
            o.id,
            o.customer.name,
            items.join(", ")
        );
    }
    let receipt = Receipt::collection(&db).get(1).await?.ok_or("receipt")?;
    println!("  receipt 1 (snapshot): {}", receipt.customer.name);

    // A change made with the driver directly (`raw()` goes around the toolkit) is not
    // propagated; `rebuild` brings the copies back.
    Customer::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": alice.id },
            doc! { "$set": { "address": "杭州市滨江区" } },
        )
        .await?;
    let report = Customer::collection(&db)
        .references()
        .rebuild(alice.id)
        .await?;
    println!("\naddress changed outside the toolkit, then rebuild: {report}");
    Ok(())
}

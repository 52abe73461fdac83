//! Chapter 14: writes made around the toolkit, kept right by a maintainer.
//!
//! Another service (or a shell fix, or a `raw()` write) writes the shop's documents without
//! the toolkit: it renames a customer and adds an order by hand. The copies of the customer in
//! the orders and each customer's order total would stay wrong until someone ran a repair; a
//! maintainer follows the database's change stream and rebuilds them as the writes come, and
//! stores where it is, so a restart loses nothing.

use std::time::{Duration, Instant};

use bson::{doc, Document};
use pattern_runtime::maintainer::{self, Maintainer};
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

/// `customers`: the orders copy the name.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "maintainer", collection = "customers")]
#[extended_ref(ShopperRef(name))]
pub struct Shopper {
    #[serde(rename = "_id")]
    pub id: u32,
    pub name: String,
    /// What the shopper's orders add up to: kept from `orders`.
    #[computed(sum = Purchase.amount, by = shopper_id)]
    pub spent: i64,
}

/// `orders`: the shopper's name copied, kept in sync.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "maintainer", collection = "orders")]
pub struct Purchase {
    #[serde(rename = "_id")]
    pub id: u32,
    pub shopper_id: u32,
    pub amount: i64,
    #[extended_ref(propagate)]
    pub shopper: ShopperRef,
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 14: the maintainer, writes made around the toolkit kept right");
    let db = crate::chapter_db(client, "maintainer").await?;
    pattern_runtime::sync(&db).group("maintainer").await?;
    let shoppers = Shopper::collection(&db);
    let purchases = Purchase::collection(&db);
    shoppers
        .insert(&Shopper {
            id: 1,
            name: "Ada".into(),
            spent: 0,
        })
        .await?;
    purchases
        .insert(&Purchase {
            id: 1,
            shopper_id: 1,
            amount: 30,
            shopper: ShopperRef {
                id: 1,
                name: "Ada".into(),
            },
        })
        .await?;
    println!("through the toolkit: shopper 1 `Ada`, one order of 30 (spent 30)");

    let running = Maintainer::new(&db)
        .name("tour")
        .models(&[Shopper::SCHEMA, Purchase::SCHEMA])
        .start()
        .await?;
    println!("a maintainer named `tour` started: one change stream over `customers` and `orders`");

    // Another service writes with the driver alone.
    let started = Instant::now();
    shoppers
        .raw()
        .clone_with_type::<Document>()
        .update_one(
            doc! { "_id": 1 },
            doc! { "$set": { "name": "Ada Lovelace" } },
        )
        .await?;
    purchases
        .raw()
        .insert_one(Purchase {
            id: 2,
            shopper_id: 1,
            amount: 12,
            shopper: ShopperRef {
                id: 1,
                name: "Ada Lovelace".into(),
            },
        })
        .await?;
    println!("around the toolkit: the shopper renamed `Ada Lovelace`, an order of 12 inserted raw");

    // The maintainer works in the background: wait (at most 10 s) for the data to be right.
    let right = loop {
        let copy = purchases.get(1).await?.map(|p| p.shopper.name);
        let spent = shoppers.get(1).await?.map(|s| s.spent);
        if copy.as_deref() == Some("Ada Lovelace") && spent == Some(42) {
            break true;
        }
        if started.elapsed() > Duration::from_secs(10) {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    if !right {
        return Err("the maintainer did not bring the copies and the total in line".into());
    }
    println!(
        "kept by the maintainer within {} ms: order 1's copy reads `Ada Lovelace`, spent = 42",
        started.elapsed().as_millis()
    );

    let status = running.stop().await?;
    println!(
        "stopped: {} change events applied in {} batches, lag of the last {:?}, {} behind",
        status.applied,
        status.batches,
        status.lag,
        status
            .behind
            .map_or("events unknown".to_owned(), |n| format!("{n} events")),
    );
    for stored in maintainer::stored(&db).await? {
        println!(
            "`pattern_maintainers`: `{}` stored its resume token ({}), {} events in all, {}",
            stored.name,
            if stored.has_token {
                "a restart resumes there"
            } else {
                "none yet"
            },
            stored.applied,
            if stored.running() {
                "running"
            } else {
                "not running (lease given up)"
            }
        );
    }
    let check = Shopper::collection(&db).references().check().await?;
    let total = Shopper::collection(&db).computed().check().await?;
    println!(
        "checks: copies {}, totals {}",
        if check.is_clean() {
            "clean"
        } else {
            "NOT clean"
        },
        if total.is_clean() {
            "clean"
        } else {
            "NOT clean"
        }
    );
    Ok(())
}

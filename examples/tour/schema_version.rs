//! Chapter 13: schema versioning.
//!
//! A shop's `customers` changed shape twice: first one `phone` and one `email` field, then a
//! `contact` sub-document, now a list of `contacts`. Documents of every shape live side by side;
//! each read returns the current one, and `converge` rewrites the older ones in the background
//! while the application keeps writing.

use bson::{doc, Document};
use pattern_runtime::schema_version::SchemaVersion;
use pattern_runtime::{Error, Model, Progress};
use serde::{Deserialize, Serialize};

/// Version 1, written by the first application: no version field.
#[derive(Deserialize)]
pub struct CustomerV1 {
    #[serde(rename = "_id")]
    pub id: u32,
    pub name: String,
    pub phone: Option<String>,
    pub email: Option<String>,
}

/// Version 2: the contact details in one sub-document.
#[derive(Deserialize)]
pub struct CustomerV2 {
    #[serde(rename = "_id")]
    pub id: u32,
    pub name: String,
    pub contact: ContactV2,
}

/// Version 2's sub-document.
#[derive(Deserialize)]
pub struct ContactV2 {
    pub phone: Option<String>,
    pub email: Option<String>,
}

/// Version 3, the current shape: any number of contacts.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "schema_version", collection = "customers")]
#[schema_version(older(CustomerV1 = 1, CustomerV2 = 2))]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    #[serde(rename = "_id")]
    pub id: u32,
    pub schema_version: SchemaVersion<3>,
    pub name: String,
    /// A handful at most: declared for the doctor.
    #[bounded(8)]
    pub contacts: Vec<Contact>,
}

/// One way to reach a customer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contact {
    pub kind: String,
    pub value: String,
}

impl From<CustomerV1> for CustomerV2 {
    fn from(c: CustomerV1) -> Self {
        CustomerV2 {
            id: c.id,
            name: c.name,
            contact: ContactV2 {
                phone: c.phone,
                email: c.email,
            },
        }
    }
}

impl From<CustomerV2> for Customer {
    fn from(c: CustomerV2) -> Self {
        let contacts = [("phone", c.contact.phone), ("email", c.contact.email)]
            .into_iter()
            .filter_map(|(kind, value)| {
                value.map(|value| Contact {
                    kind: kind.to_owned(),
                    value,
                })
            })
            .collect();
        Customer {
            id: c.id,
            schema_version: SchemaVersion,
            name: c.name,
            contacts,
        }
    }
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 13: schema versioning");
    // It stores documents of the older shapes on purpose: no validators here.
    let db = crate::unvalidated_chapter_db(client, "schema_version").await?;
    pattern_runtime::sync(&db)
        .group("schema_version")
        .options(&pattern_runtime::SyncOptions::new())
        .await?;
    let stored = db.collection::<Document>("customers");
    // What three generations of the application left behind.
    let mut docs = Vec::new();
    for i in 1..=1200u32 {
        docs.push(match i % 3 {
            0 => doc! { "_id": i, "name": format!("客户 {i}"), "phone": format!("138{i:08}") },
            1 => doc! {
                "_id": i, "schemaVersion": 2, "name": format!("客户 {i}"),
                "contact": { "email": format!("c{i}@example.cn") },
            },
            _ => doc! {
                "_id": i, "schemaVersion": 3, "name": format!("客户 {i}"),
                "contacts": [{ "kind": "wechat", "value": format!("wx{i}") }],
            },
        });
    }
    stored.insert_many(docs).await?;
    let customers = Customer::collection(&db);
    let counts = customers.schema_versions().await?;
    println!(
        "\nstored: {:?} by version (no field: version 1)",
        counts.known
    );

    for id in [3u32, 4, 5] {
        let c = customers.get(id).await?.ok_or("there")?;
        println!("get({id}) -> {} {:?}", c.name, c.contacts);
    }

    // A newer application already writes version 4: that document is an error of its own.
    stored
        .insert_one(doc! { "_id": 5000, "schemaVersion": 4, "name": "来自未来", "handles": [] })
        .await?;
    let each = customers
        .find_each(doc! { "_id": { "$gte": 1198 } })
        .await?;
    for r in &each {
        match r {
            Ok(c) => println!("find_each: {} ({} contacts)", c.name, c.contacts.len()),
            Err(e @ Error::UnknownSchemaVersion { .. }) => println!("find_each: {e}"),
            Err(e) => return Err(e.to_string().into()),
        }
    }

    // The background job: batches of 500, each rewrite conditional on the document as read.
    let mut batches = 0;
    let done = customers
        .converge_with_progress(|p: &Progress| {
            batches += 1;
            println!(
                "converge: {} of {} {}",
                p.done,
                p.total.unwrap_or(0),
                p.unit
            );
        })
        .await?;
    println!(
        "converge: {} upgraded in {batches} batches, {} retried, {} failed",
        done.upgraded,
        done.retried,
        done.failed.len()
    );
    let counts = customers.schema_versions().await?;
    println!(
        "now: {:?} by version, {} of unknown versions (left alone: the doctor reports them)",
        counts.known,
        counts.unknown_total()
    );
    let raw = stored.find_one(doc! { "_id": 3 }).await?.ok_or("there")?;
    println!("stored _id 3: {raw}");
    Ok(())
}

//! Chapter 7: the attribute pattern.
//!
//! Health records: the measurements differ from patient to patient, so they
//! are not fields of their own but items `{name, value, unit}` of one `attributes` array, with
//! ONE compound multikey index `{attributes.name: 1, attributes.value: 1}` instead of one index
//! per measurement. Then a cinema's film showings, whose ticket prices by sales channel are items
//! `{channel, price}` keyed by an enum, so the set of channels is checked at compile time.

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use pattern_runtime::attribute::Order;
use pattern_runtime::query::Filter;
use pattern_runtime::{AttributeKey, Error, Fields, Model, SyncOptions};
use serde::{Deserialize, Serialize};

/// One measurement of a health record: the key, the value (a number or a text), and a unit when
/// the reading needs one.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
pub struct Vital {
    pub name: String,
    pub value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub unit: Option<String>,
}

/// `records`: whatever was measured, under the one index `#[attribute]` declares.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "attribute", collection = "records")]
pub struct Record {
    #[serde(rename = "_id")]
    pub id: i32,
    #[attribute]
    pub attributes: Vec<Vital>,
}

/// The cinema's sales channels: their serde names are the stored keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, AttributeKey)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Gewala,
    Maoyan,
    Taopiao,
}

/// A showing's ticket price on one channel.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[attribute(key = channel, value = price)]
pub struct Price {
    pub channel: Channel,
    pub price: i32,
}

/// `schedules`: one showing of a film, with its price on each channel that sells it.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "attribute", collection = "schedules")]
pub struct Schedule {
    #[serde(rename = "_id")]
    pub id: i32,
    pub schedule_id: String,
    pub movie: String,
    #[attribute]
    pub provider: Vec<Price>,
}

fn m(name: &str, value: impl Into<Bson>) -> Vital {
    Vital {
        name: name.into(),
        value: value.into(),
        unit: None,
    }
}

fn item(a: &Vital) -> String {
    match &a.unit {
        Some(unit) => format!("{} {} {unit}", a.name, a.value),
        None => format!("{} {}", a.name, a.value),
    }
}

/// One line per record: its id and its measurements.
fn describe(r: &Record) -> String {
    let items: Vec<String> = r.attributes.iter().map(item).collect();
    format!("{}: {}", r.id, items.join(", "))
}

fn print_records(records: &[Record]) {
    if records.is_empty() {
        println!("  (no record)");
    }
    for r in records {
        println!("  {}", describe(r));
    }
}

fn prices(s: &Schedule) -> String {
    let items: Vec<String> = s
        .provider
        .iter()
        .map(|p| format!("{} {}", p.channel.as_key(), p.price))
        .collect();
    format!(
        "showing {} of {}: {}",
        s.schedule_id,
        s.movie,
        items.join(", ")
    )
}

async fn stored(db: &mongodb::Database, collection: &str) -> mongodb::error::Result<Vec<Document>> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await?
        .try_collect()
        .await
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 7: attribute, varying measurements under one index");
    let db = crate::chapter_db(client, "attribute").await?;
    pattern_runtime::sync(&db)
        .group("attribute")
        .options(&SyncOptions::new())
        .await?;

    Record::collection(&db)
        .insert_many(&[
            Record {
                id: 1001,
                attributes: vec![m("bmi", 22.3), m("liver_function", "正常")],
            },
            Record {
                id: 1002,
                attributes: vec![m("blood_sugar", 6.3), m("bmi", 26.1)],
            },
        ])
        .await?;
    println!("Two health records, as stored:");
    for d in stored(&db, "records").await? {
        println!("  {d}");
    }
    // One index for every measurement, present or future: no index per attribute.
    for index in pattern_runtime::sync::list_indexes(&db, "records").await? {
        println!("  records index: {index}");
    }

    let attributes = Record::collection(&db).attributes(Record::FIELDS.attributes);
    let heavy = attributes.key("bmi").gt(25)?;
    println!("\nBMI above 25: find({heavy})");
    print_records(&attributes.find(heavy).await?);

    let abnormal = attributes.key("liver_function").eq("异常")?;
    println!("\nLiver function \"异常\": find({abnormal})");
    print_records(&attributes.find(abnormal).await?);

    // find_sorted matches the documents that have the key (on the index), then sorts by the
    // value of their first item with it; records without it are left out.
    println!(
        "\nRanking by blood sugar, highest first: find_sorted({{}}, \"blood_sugar\", Descending) \
         matches {}",
        attributes.key("blood_sugar").exists()?
    );
    print_records(
        &attributes
            .find_sorted(Filter::default(), "blood_sugar", Order::Descending)
            .await?,
    );
    println!("Ranking by BMI, highest first: both records have one");
    print_records(
        &attributes
            .find_sorted(Filter::default(), "bmi", Order::Descending)
            .await?,
    );

    println!("\nset(1001, bmi 23.5): replaces the bmi item where it is");
    attributes.set(1001, &m("bmi", 23.5)).await?;
    let weight = Vital {
        unit: Some("kg".into()),
        ..m("weight", 75)
    };
    println!("set(1001, weight 75 kg): no weight yet, so it is appended, with its unit");
    attributes.set(1001, &weight).await?;
    let one = doc! { "_id": 1001 };
    let raw = db.collection::<Document>("records");
    if let Some(d) = raw.find_one(one.clone()).await? {
        println!("  stored: {d}");
    }
    match attributes.get(1001, "weight").await? {
        Some(w) => println!("get(1001, \"weight\"): {}", item(&w)),
        None => println!("get(1001, \"weight\"): none"),
    }
    match attributes.get(1001, "height").await? {
        Some(h) => println!("get(1001, \"height\"): {}", item(&h)),
        None => println!("get(1001, \"height\"): none, record 1001 has no height"),
    }
    println!("unset(1001, \"liver_function\"): pulls the item");
    attributes.unset(1001, "liver_function").await?;
    if let Some(d) = raw.find_one(one).await? {
        println!("  stored: {d}");
    }

    // Keys become field values inside `$elemMatch` and pipeline expressions: checked first.
    println!("\nA key that cannot be a field name, \"$where\":");
    match attributes.set(1001, &m("$where", 1)).await {
        Err(e @ Error::InvalidKey { .. }) => println!("  set fails: {e}"),
        Err(e) => return Err(e.into()),
        Ok(()) => println!("  unexpected: set accepted it"),
    }
    match attributes.key("$where").gt(1) {
        Err(e @ Error::InvalidKey { .. }) => println!("  key(..).gt(1) fails: {e}"),
        Err(e) => return Err(e.into()),
        Ok(filter) => println!("  unexpected: key(..).gt(1) built {filter}"),
    }

    // The cinema: the key is an enum, so a misspelt channel does not compile.
    println!("\nA cinema: ticket prices by channel, keyed by `enum Channel`.");
    let price = |channel, price| Price { channel, price };
    Schedule::collection(&db)
        .insert_many(&[
            Schedule {
                id: 1,
                schedule_id: "0001".into(),
                movie: "你的名字".into(),
                provider: vec![
                    price(Channel::Gewala, 30),
                    price(Channel::Maoyan, 50),
                    price(Channel::Taopiao, 20),
                ],
            },
            Schedule {
                id: 2,
                schedule_id: "0002".into(),
                movie: "你的名字".into(),
                provider: vec![price(Channel::Gewala, 45), price(Channel::Maoyan, 25)],
            },
        ])
        .await?;
    for d in stored(&db, "schedules").await? {
        println!("  {d}");
    }
    for index in pattern_runtime::sync::list_indexes(&db, "schedules").await? {
        println!("  schedules index: {index}");
    }
    let channels = Schedule::collection(&db).attributes(Schedule::FIELDS.provider);
    let cheap = channels.key(Channel::Maoyan).lt(40)?;
    println!("\nMaoyan price below 40: find({cheap})");
    for s in channels.find(cheap).await? {
        println!("  {}", prices(&s));
    }
    for id in [1, 2] {
        match channels.get(id, Channel::Taopiao).await? {
            Some(p) => println!("get({id}, Channel::Taopiao): {}", p.price),
            None => println!("get({id}, Channel::Taopiao): none, showing {id} is not on taopiao"),
        }
    }
    Ok(())
}

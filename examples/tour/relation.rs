//! Chapter 8: relationships.
//!
//! One-to-N designs: a person's addresses embedded (one-to-few); a product's
//! `parts: [ObjectId]`, loaded with one `$in` (one-to-many); log messages keeping their host's
//! `_id`, the newest of one host read through the `{host: 1, time: -1}` index
//! (one-to-squillions); a person's `tasks` and each task's `owner` (two-way); and the part names
//! denormalised into the product's array, `parts: [{_id, name}]`, kept in sync.

use bson::oid::ObjectId;
use bson::{doc, DateTime, Document};
use pattern_runtime::query::{Sort, Update};
use pattern_runtime::{Model, Ref, SyncOptions};
use serde::{Deserialize, Serialize};

/// An address, embedded: a person has a few, never needed on their own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub cc: String,
}

/// `person`: the embedded addresses, and the tasks (one side of the two-way relation).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "person")]
pub struct Person {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub ssn: String,
    /// One-to-few: a handful of addresses, embedded.
    #[bounded(10)]
    pub addresses: Vec<Address>,
    /// One-to-many, referenced from both sides; the application keeps a person's open tasks
    /// under 1 000.
    #[relation(inverse = owner)]
    #[bounded(1000)]
    pub tasks: Vec<Ref<Task>>,
}

/// `tasks`: each names its owner, the other side of `person.tasks`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "tasks")]
pub struct Task {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub description: String,
    pub due_date: DateTime,
    #[relation(inverse = tasks)]
    pub owner: Ref<Person>,
}

/// `parts`: products copy the name only; the stock changes too often to be copied.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "parts")]
#[extended_ref(PartName(name))]
pub struct Part {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub partno: String,
    pub name: String,
    pub qty: i32,
    pub cost: f64,
    pub price: f64,
}

/// `products`: an array of references to parts, the bare ids.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "products")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub manufacturer: String,
    pub catalog_number: i32,
    /// One-to-many: up to a few hundred parts per product.
    #[relation]
    #[bounded(1000)]
    pub parts: Vec<Ref<Part>>,
}

/// `named_products`: the same product with the part names denormalised, `parts: [{_id, name}]`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "named_products")]
pub struct NamedProduct {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    pub manufacturer: String,
    pub catalog_number: i32,
    #[extended_ref(propagate)]
    #[relation]
    #[bounded(1000)]
    pub parts: Vec<PartName>,
}

/// `hosts`: looked up by address.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "hosts")]
pub struct Host {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub name: String,
    #[index(unique)]
    pub ipaddr: String,
}

/// `logmsg`: squillions of them, each with its host's `_id`; newest first.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "relation", collection = "logmsg")]
pub struct LogMsg {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub time: DateTime,
    pub message: String,
    #[relation(parent, sort(time = -1))]
    pub host: Ref<Host>,
}

fn part(partno: &str, name: &str, qty: i32, cost: f64, price: f64) -> Part {
    Part {
        id: ObjectId::new(),
        partno: partno.into(),
        name: name.into(),
        qty,
        cost,
        price,
    }
}

fn task(description: &str, due: &str, owner: &Person) -> bson::error::Result<Task> {
    Ok(Task {
        id: ObjectId::new(),
        description: description.into(),
        due_date: DateTime::parse_rfc3339_str(due)?,
        owner: Ref::to(owner),
    })
}

async fn stored(
    db: &mongodb::Database,
    collection: &str,
    filter: Document,
) -> mongodb::error::Result<Option<Document>> {
    db.collection::<Document>(collection).find_one(filter).await
}

/// Each person's tasks, by description (one `$in` for all of them).
async fn print_tasks(db: &mongodb::Database) -> pattern_runtime::Result<()> {
    let people: Vec<Person> = Person::collection(db)
        .find(doc! {})
        .sort(Sort::asc(Person::FIELDS.name))
        .await?;
    let loaded = Person::collection(db)
        .relation(Person::FIELDS.tasks)
        .load(&people)
        .await?;
    for (person, tasks) in loaded.iter() {
        let names: Vec<&str> = tasks
            .iter()
            .map(|t| t.map_or("?", |t| t.description.as_str()))
            .collect();
        println!("  {}.tasks: {:?}", person.name, names);
    }
    Ok(())
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 8: relationships, embedded, referenced, two-way, denormalised");
    let db = crate::chapter_db(client, "relation").await?;
    pattern_runtime::sync(&db)
        .group("relation")
        .options(&SyncOptions::new())
        .await?;

    // One-to-few: the addresses live in the person.
    let kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        ssn: "123-456-7890".into(),
        addresses: vec![
            Address {
                street: "123 Sesame St".into(),
                city: "Anytown".into(),
                cc: "USA".into(),
            },
            Address {
                street: "123 Avenue Q".into(),
                city: "New York".into(),
                cc: "USA".into(),
            },
        ],
        tasks: Vec::new(),
    };
    Person::collection(&db).insert(&kate).await?;
    let person = stored(&db, "person", doc! { "_id": kate.id }).await?;
    println!(
        "One-to-few, the addresses embedded:\n  {}",
        person.ok_or("kate")?
    );

    // One-to-many: the product keeps its parts' ids.
    let grommet = part("123-aff-456", "#4 grommet", 94, 0.94, 3.99);
    let blade = part("123-bfe-789", "fan blade assembly", 12, 7.5, 19.99);
    let switch = part("123-cdd-012", "power switch", 40, 1.2, 4.99);
    Part::collection(&db)
        .insert_many([&grommet, &blade, &switch])
        .await?;
    let shifter = Product {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234,
        parts: vec![Ref::to(&grommet), Ref::to(&blade), Ref::to(&switch)],
    };
    // A second product, one of whose parts was never stored.
    let gone = ObjectId::new();
    let righty = Product {
        id: ObjectId::new(),
        name: "right-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1235,
        parts: vec![Ref::to(&grommet), Ref::new(gone)],
    };
    Product::collection(&db)
        .insert_many([&shifter, &righty])
        .await?;
    let product = stored(&db, "products", doc! { "catalog_number": 1234 }).await?;
    println!(
        "\nOne-to-many, the part ids in the product:\n  {}",
        product.ok_or("product 1234")?
    );
    let products: Vec<Product> = Product::collection(&db)
        .find(doc! {})
        .sort(Sort::asc(Product::FIELDS.catalog_number))
        .await?;
    let loaded = Product::collection(&db)
        .relation(Product::FIELDS.parts)
        .load(&products)
        .await?;
    println!(
        "the parts of {} products, in {} query (find({{_id: {{$in: [..]}}}})):",
        products.len(),
        loaded.queries()
    );
    for (p, parts) in loaded.iter() {
        let names: Vec<&str> = parts
            .iter()
            .map(|part| part.map_or("(missing)", |part| part.name.as_str()))
            .collect();
        println!("  {} {}: {:?}", p.catalog_number, p.name, names);
    }
    for d in loaded.dangling() {
        println!("  dangling: {d}");
    }

    // One-to-squillions: each message keeps its host's id.
    let goofy = Host {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        ipaddr: "127.66.66.66".into(),
    };
    let other = Host {
        id: ObjectId::new(),
        name: "dopey.example.com".into(),
        ipaddr: "127.77.77.77".into(),
    };
    Host::collection(&db).insert_many([&goofy, &other]).await?;
    let fire = DateTime::parse_rfc3339_str("2014-03-28T09:42:41.382Z")?;
    let mut messages = Vec::new();
    for minutes in (0..10).rev() {
        for host in [&goofy, &other] {
            let message = if minutes == 0 && host.id == goofy.id {
                "cpu is on fire!".to_owned()
            } else {
                format!("cpu at {}%", 95 - 5 * minutes)
            };
            messages.push(LogMsg {
                id: ObjectId::new(),
                time: DateTime::from_millis(fire.timestamp_millis() - minutes * 60_000),
                message,
                host: Ref::to(host),
            });
        }
    }
    LogMsg::collection(&db).insert_many(&messages).await?;
    let host = Host::collection(&db)
        .find_one(doc! { "ipaddr": "127.66.66.66" })
        .await?
        .ok_or("host")?;
    let newest = LogMsg::collection(&db)
        .relation(LogMsg::FIELDS.host)
        .children_of(&host.id)
        .limit(3);
    let (filter, sort) = newest.query()?;
    println!(
        "\nOne-to-squillions, {} messages of 2 hosts; the newest 3 of {}:\n  \
         find({filter}).sort({sort}).limit(3)",
        messages.len(),
        host.name
    );
    for m in newest.to_vec().await? {
        println!("  {} {}", m.time.try_to_rfc3339_string()?, m.message);
    }
    for index in pattern_runtime::sync::list_indexes(&db, "logmsg").await? {
        println!("  logmsg index: {}", index.get_document("key")?);
    }

    // Two-way: Kate's tasks, and each task's owner.
    let jane = Person {
        id: ObjectId::new(),
        name: "Jane Wu".into(),
        ssn: "987-654-3210".into(),
        addresses: Vec::new(),
        tasks: Vec::new(),
    };
    let tasks = [
        task("Write lesson plan", "2014-04-01T00:00:00Z", &kate)?,
        task("Grade homework", "2014-04-02T00:00:00Z", &kate)?,
        task("Order chalk", "2014-04-03T00:00:00Z", &kate)?,
    ];
    // The handle's insert keeps the other side: Kate's `tasks` gains each task.
    Task::collection(&db).insert_many(&tasks).await?;
    Person::collection(&db).insert(&jane).await?;
    println!("\nTwo-way: person.tasks and task.owner");
    print_tasks(&db).await?;
    let owner = Task::collection(&db).relation(Task::FIELDS.owner);
    let assigned = owner.assign(&tasks[1].id, &jane.id).await?;
    println!(
        "assign(\"Grade homework\", Jane Wu): pulled from {} array, added: {}",
        assigned.pulled, assigned.added
    );
    print_tasks(&db).await?;

    // The trap of two-way references: an update of one side only, with the driver.
    Task::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": tasks[2].id },
            doc! { "$set": { "owner": jane.id } },
        )
        .await?;
    println!("\"Order chalk\" given to Jane Wu by hand, its owner field only; check():");
    let name = |b: &bson::Bson| {
        let id = b.as_object_id();
        let t = tasks
            .iter()
            .find(|t| Some(t.id) == id)
            .map(|t| &t.description);
        let p = [&kate, &jane]
            .into_iter()
            .find(|p| Some(p.id) == id)
            .map(|p| &p.name);
        t.or(p).map_or_else(|| b.to_string(), |n| format!("{n:?}"))
    };
    // One finding per kind of disagreement, with the documents it is about.
    for finding in owner.check().await?.findings {
        let kind = finding.figure.split(';').next().unwrap_or_default();
        let names: Vec<String> = finding.documents.iter().map(name).collect();
        println!("  {kind}: {}", names.join(", "));
    }
    let repaired = owner.repair().await?;
    println!(
        "repair(): {} owners' arrays rewritten, {} findings left; check() now finds {}",
        repaired.repaired,
        repaired.left.len(),
        owner.check().await?.findings.len()
    );
    print_tasks(&db).await?;

    // Denormalised: the product copies its parts' names, kept in sync.
    let named = NamedProduct {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234,
        parts: vec![
            PartName::from(&grommet),
            PartName::from(&blade),
            PartName::from(&switch),
        ],
    };
    NamedProduct::collection(&db).insert(&named).await?;
    let one = doc! { "_id": named.id };
    let product = stored(&db, "named_products", one.clone()).await?;
    println!(
        "\nDenormalised, the part names in the product:\n  {}",
        product.ok_or("named product")?
    );
    let parts = Part::collection(&db);
    parts
        .update(
            grommet.id,
            Update::new().set(Part::FIELDS.name, "#4 brass grommet"),
        )
        .await?;
    println!("rename the grommet: the products that copy its name follow");
    parts
        .update(grommet.id, Update::new().inc(Part::FIELDS.qty, -4))
        .await?;
    println!("take 4 grommets from stock (not copied): one update");
    let product = stored(&db, "named_products", one).await?;
    println!("  {}", product.ok_or("named product")?);
    // The copies are references too: the whole parts, in one query, when the page needs more.
    let named = [named];
    let loaded = NamedProduct::collection(&db)
        .relation(NamedProduct::FIELDS.parts)
        .load(&named)
        .await?;
    for part in loaded.of(&named[0]).into_iter().flatten() {
        println!("  {} ({}): {} in stock", part.name, part.partno, part.qty);
    }
    Ok(())
}

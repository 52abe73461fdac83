//! Relationships against the server, with the scenarios and document shapes of seed 003
//! (一对多关系建模): products and their parts (child references, loaded with one `$in`), hosts
//! and their log messages (parent references, the newest 5 000 of one host), persons and tasks
//! (two-way references, reassigned in one transaction), and the part names denormalised into the
//! product through an extended reference.

use std::collections::HashMap;

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::relation::RelationKind;
use pattern_runtime::{Error, Model, Ref, Transaction};
use pattern_testkit::{docs as all, test_db};
use serde::{Deserialize, Serialize};

// ----- one-to-many: products and parts -----

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[extended_ref(PartName(name), derive(PartialEq))]
struct Part {
    #[serde(rename = "_id")]
    id: ObjectId,
    partno: String,
    name: String,
    qty: i32,
    cost: f64,
    price: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    manufacturer: String,
    catalog_number: i32,
    #[relation]
    parts: Vec<Ref<Part>>,
}

/// The denormalised product of the seed: `parts: [{_id, name}]`, names kept in sync.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "products_denormalised")]
struct ProductWithNames {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[extended_ref(propagate)]
    #[relation]
    parts: Vec<PartName>,
}

fn part(n: usize) -> Part {
    Part {
        id: ObjectId::new(),
        partno: format!("{n:03}-aff-456"),
        name: format!("part #{n}"),
        qty: 94,
        cost: 0.94,
        price: 3.99,
    }
}

/// Part `n`, named `name` (the seed's part names).
fn named(n: usize, name: &str) -> Part {
    Part {
        name: name.into(),
        ..part(n)
    }
}

/// The stored document of `collection` matching `filter`, as BSON.
async fn stored_doc(db: &mongodb::Database, collection: &str, filter: Document) -> Document {
    db.collection::<Document>(collection)
        .find_one(filter)
        .await
        .unwrap()
        .unwrap()
}

fn find_targets(db: &pattern_testkit::TestDb, command: &str) -> Vec<String> {
    db.take_commands()
        .into_iter()
        .filter(|c| c.name == command)
        .map(|c| c.target)
        .collect()
}

#[tokio::test]
async fn the_seed_product_stores_bare_ids_and_its_parts_load_in_one_query() {
    let db = test_db("rel_parts").await;
    let grommet = Part {
        id: ObjectId::new(),
        partno: "123-aff-456".into(),
        name: "#4 grommet".into(),
        qty: 94,
        cost: 0.94,
        price: 3.99,
    };
    let fan = named(1, "fan blade assembly");
    let switch = named(2, "power switch");
    Part::collection(&db)
        .raw()
        .insert_many([&grommet, &fan, &switch])
        .await
        .unwrap();
    let shifter = Product {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        manufacturer: "Acme Corp".into(),
        catalog_number: 1234,
        parts: vec![Ref::to(&grommet), Ref::to(&fan), Ref::to(&switch)],
    };
    Product::collection(&db)
        .raw()
        .insert_one(&shifter)
        .await
        .unwrap();

    // Stored exactly as the seed's document: the parts are bare ObjectIds.
    let stored = stored_doc(&db, "products", doc! {}).await;
    assert_eq!(
        stored,
        doc! {
            "_id": shifter.id,
            "name": "left-handed smoke shifter",
            "manufacturer": "Acme Corp",
            "catalog_number": 1234,
            "parts": [grommet.id, fan.id, switch.id],
        }
    );
    let stored_part = stored_doc(&db, "parts", doc! { "_id": grommet.id }).await;
    assert_eq!(
        stored_part,
        doc! { "_id": grommet.id, "partno": "123-aff-456", "name": "#4 grommet", "qty": 94, "cost": 0.94, "price": 3.99 }
    );

    // `product_parts = db.parts.find({_id: {$in: product.parts}})`, typed.
    let read = Product::collection(&db)
        .raw()
        .find_one(doc! { "catalog_number": 1234 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, shifter);
    db.take_commands();
    let loaded = Product::collection(&db)
        .relation(Product::FIELDS.parts)
        .load_one(&read)
        .await
        .unwrap();
    // One round trip: every part found, and no empty `getMore` after them.
    let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
    assert_eq!(sent, ["find"]);
    let names: Vec<&str> = loaded
        .of(&read)
        .into_iter()
        .map(|p| p.unwrap().name.as_str())
        .collect();
    assert_eq!(names, ["#4 grommet", "fan blade assembly", "power switch"]);
    assert_eq!(loaded.queries(), 1);
    assert!(loaded.dangling().is_empty());
    let spec = Product::collection(&db)
        .relation(Product::FIELDS.parts)
        .spec();
    assert_eq!(spec.kind(), RelationKind::Reference);
    assert!(spec.is_many());
    assert_eq!(spec.target().name(), "Part");
}

#[tokio::test]
async fn a_thousand_products_load_their_parts_with_one_query_in_order_with_dangling_reported() {
    let db = test_db("rel_batch").await;
    let parts: Vec<Part> = (0..200).map(part).collect();
    Part::collection(&db)
        .raw()
        .insert_many(&parts)
        .await
        .unwrap();
    let missing = ObjectId::new();
    let products: Vec<Product> = (0..1000)
        .map(|i| Product {
            id: ObjectId::new(),
            name: format!("product {i}"),
            manufacturer: "Acme Corp".into(),
            catalog_number: i,
            // 10 references, a duplicate among them, and for every 100th product a dangling one.
            parts: (0..10)
                .map(|k| {
                    if k == 9 && i % 100 == 0 {
                        Ref::new(missing)
                    } else if k == 8 {
                        Ref::to(&parts[(i as usize * 7) % 200])
                    } else {
                        Ref::to(&parts[(i as usize * 7 + k * 13) % 200])
                    }
                })
                .collect(),
        })
        .collect();
    Product::collection(&db)
        .raw()
        .insert_many(&products)
        .await
        .unwrap();
    let products: Vec<Product> = Product::collection(&db)
        .raw()
        .find(doc! {})
        .sort(doc! { "catalog_number": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(products.len(), 1000);
    db.take_commands();

    let loaded = Product::collection(&db)
        .relation(Product::FIELDS.parts)
        .load(&products)
        .await
        .unwrap();

    // Exactly one query for the parts of all 1 000 products, answered in one batch.
    assert_eq!(find_targets(&db, "find"), ["parts"]);
    assert_eq!(find_targets(&db, "getMore"), Vec::<String>::new());
    assert_eq!(loaded.queries(), 1);
    assert_eq!(loaded.targets().len(), 200);
    let by_id: HashMap<ObjectId, &Part> = parts.iter().map(|p| (p.id, p)).collect();
    for (product, resolved) in loaded.iter() {
        // The array's order and its duplicates, `None` where the part does not exist.
        assert_eq!(resolved.len(), 10);
        for (r, got) in product.parts.iter().zip(&resolved) {
            assert_eq!(*got, by_id.get(r.id()).copied(), "{product:?}");
        }
        assert_eq!(resolved[8], resolved[0]);
    }
    // Every dangling reference, as data: which product, which field, where, which id.
    let dangling = loaded.dangling();
    assert_eq!(dangling.len(), 10);
    for (d, i) in dangling.iter().zip((0..1000).step_by(100)) {
        assert_eq!(d.source, products[i].id);
        assert_eq!(d.field, "parts");
        assert_eq!(d.position, Some(9));
        assert_eq!(d.target, missing);
    }
    assert!(dangling[0].to_string().contains("does not exist"));

    // Chunked: the same answer in ceil(200 / 64) queries.
    let chunked = Product::collection(&db)
        .relation(Product::FIELDS.parts)
        .chunk_size(64)
        .load(&products)
        .await
        .unwrap();
    assert_eq!(chunked.queries(), 4);
    assert_eq!(find_targets(&db, "find").len(), 4);
    assert_eq!(chunked.dangling(), loaded.dangling());
    assert_eq!(chunked.of(&products[1]), loaded.of(&products[1]));

    // No references: no query.
    let none: Vec<Product> = Vec::new();
    assert_eq!(
        Product::collection(&db)
            .relation(Product::FIELDS.parts)
            .load(&none)
            .await
            .unwrap()
            .queries(),
        0
    );
}

#[tokio::test]
async fn denormalised_part_names_are_kept_in_sync_and_still_load_the_whole_parts() {
    let db = test_db("rel_denorm").await;
    pattern_runtime::sync(&db)
        .models(&[ProductWithNames::SCHEMA])
        .await
        .unwrap();
    let grommet = named(0, "#4 grommet");
    let fan = named(1, "fan blade assembly");
    Part::collection(&db)
        .raw()
        .insert_many([&grommet, &fan])
        .await
        .unwrap();
    let product = ProductWithNames {
        id: ObjectId::new(),
        name: "left-handed smoke shifter".into(),
        parts: vec![PartName::from(&grommet), PartName::from(&fan)],
    };
    ProductWithNames::collection(&db)
        .raw()
        .insert_one(&product)
        .await
        .unwrap();
    let stored = stored_doc(&db, "products_denormalised", doc! {}).await;
    assert_eq!(
        stored.get_array("parts").unwrap(),
        &vec![
            Bson::Document(doc! { "_id": grommet.id, "name": "#4 grommet" }),
            Bson::Document(doc! { "_id": fan.id, "name": "fan blade assembly" }),
        ]
    );

    // Renaming the part reaches the copy (the extended reference machinery, not a second one).
    Part::collection(&db)
        .update(
            grommet.id,
            doc! { "$set": { "name": "#4 grommet (brass)" } },
        )
        .await
        .unwrap();
    let read = ProductWithNames::collection(&db)
        .raw()
        .find_one(doc! {})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.parts[0].name, "#4 grommet (brass)");
    // And the same field loads the whole parts.
    let loaded = ProductWithNames::collection(&db)
        .relation(ProductWithNames::FIELDS.parts)
        .load_one(&read)
        .await
        .unwrap();
    let qty: Vec<i32> = loaded.of(&read).iter().map(|p| p.unwrap().qty).collect();
    assert_eq!(qty, [94, 94]);
    assert_eq!(loaded.of(&read)[0].unwrap().name, "#4 grommet (brass)");
}

// ----- one-to-squillions: hosts and log messages -----

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
struct Host {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[index(unique)]
    name: String,
    ipaddr: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "logmsg")]
struct LogMessage {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: DateTime,
    message: String,
    #[relation(parent, sort(time = -1))]
    host: Ref<Host>,
}

#[tokio::test]
async fn the_newest_five_thousand_messages_of_one_host_through_the_parent_index() {
    let db = test_db("rel_logs").await;
    pattern_runtime::sync(&db)
        .models(&[LogMessage::SCHEMA])
        .await
        .unwrap();
    let names: Vec<String> = db
        .collection::<Document>("logmsg")
        .list_index_names()
        .await
        .unwrap();
    assert!(names.contains(&"host_1_time_-1".to_owned()), "{names:?}");

    let goofy = Host {
        id: ObjectId::new(),
        name: "goofy.example.com".into(),
        ipaddr: "127.66.66.66".into(),
    };
    let other = Host {
        id: ObjectId::new(),
        name: "other.example.com".into(),
        ipaddr: "127.0.0.2".into(),
    };
    Host::collection(&db)
        .raw()
        .insert_many([&goofy, &other])
        .await
        .unwrap();
    let start = DateTime::parse_rfc3339_str("2014-03-28T09:42:41.382Z")
        .unwrap()
        .timestamp_millis();
    // 6 000 messages of goofy and 1 000 of the other host, interleaved, out of time order.
    let messages: Vec<LogMessage> = (0..7000_i64)
        .map(|i| LogMessage {
            id: ObjectId::new(),
            time: DateTime::from_millis(start + (i * 7919) % 7000 * 1000),
            message: if i == 0 {
                "cpu is on fire!".into()
            } else {
                format!("message {i}")
            },
            host: if i % 7 == 3 {
                Ref::to(&other)
            } else {
                Ref::to(&goofy)
            },
        })
        .collect();
    LogMessage::collection(&db)
        .raw()
        .insert_many(&messages)
        .await
        .unwrap();
    let first = stored_doc(&db, "logmsg", doc! { "message": "cpu is on fire!" }).await;
    assert_eq!(
        first,
        doc! { "_id": messages[0].id, "time": DateTime::from_millis(start), "message": "cpu is on fire!", "host": goofy.id }
    );

    // `host = db.hosts.findOne({ipaddr: ..}); db.logmsg.find({host: host._id}).sort({time: -1}).limit(5000)`
    let host = Host::collection(&db)
        .raw()
        .find_one(doc! { "ipaddr": "127.66.66.66" })
        .await
        .unwrap()
        .unwrap();
    let relation = LogMessage::collection(&db).relation(LogMessage::FIELDS.host);
    let children = relation.children_of(&host.id).limit(5000);
    assert_eq!(
        children.query().unwrap(),
        (doc! { "host": host.id }, doc! { "time": -1 })
    );
    let newest: Vec<LogMessage> = children.to_vec().await.unwrap();
    assert_eq!(newest.len(), 5000);
    assert!(newest.iter().all(|m| m.host.id() == &host.id));
    assert!(newest.windows(2).all(|w| w[0].time >= w[1].time));
    let mut expected: Vec<&LogMessage> = messages
        .iter()
        .filter(|m| m.host.id() == &host.id)
        .collect();
    expected.sort_by_key(|m| std::cmp::Reverse(m.time));
    assert_eq!(newest[0].time, expected[0].time);
    assert_eq!(newest[4999].time, expected[4999].time);

    // The parents of a page of messages, in one query.
    let page = &newest[..50];
    let loaded = relation.load(page).await.unwrap();
    assert_eq!(loaded.queries(), 1);
    assert_eq!(loaded.of(&page[0]), [Some(&host)]);
    assert_eq!(relation.spec().kind(), RelationKind::Parent);
}

// ----- two-way: persons and tasks -----

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "person")]
struct Person {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
struct Task {
    #[serde(rename = "_id")]
    id: ObjectId,
    description: String,
    due_date: DateTime,
    #[relation(inverse = tasks)]
    owner: Ref<Person>,
}

async fn person(db: &mongodb::Database, id: ObjectId) -> Document {
    stored_doc(db, "person", doc! { "_id": id }).await
}

async fn task(db: &mongodb::Database, id: ObjectId) -> Document {
    stored_doc(db, "tasks", doc! { "_id": id }).await
}

/// Kate with three tasks, and Jon with none.
async fn persons_and_tasks(db: &mongodb::Database) -> (Person, Person, Vec<Task>) {
    pattern_runtime::sync(db)
        .models(&[Person::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(db)
        .models(&[Task::SCHEMA])
        .await
        .unwrap();
    let kate = ObjectId::new();
    let due = DateTime::parse_rfc3339_str("2014-04-01T00:00:00Z").unwrap();
    let tasks: Vec<Task> = ["Write lesson plan", "Grade papers", "Order books"]
        .into_iter()
        .map(|d| Task {
            id: ObjectId::new(),
            description: d.into(),
            due_date: due,
            owner: Ref::new(kate),
        })
        .collect();
    let kate = Person {
        id: kate,
        name: "Kate Monster".into(),
        tasks: tasks.iter().map(Ref::to).collect(),
    };
    let jon = Person {
        id: ObjectId::new(),
        name: "Jon Smith".into(),
        tasks: vec![],
    };
    Person::collection(db)
        .raw()
        .insert_many([&kate, &jon])
        .await
        .unwrap();
    Task::collection(db)
        .raw()
        .insert_many(&tasks)
        .await
        .unwrap();
    (kate, jon, tasks)
}

#[tokio::test]
async fn assign_moves_a_task_between_the_arrays_and_sets_its_owner() {
    let db = test_db("rel_assign").await;
    let (kate, jon, tasks) = persons_and_tasks(&db).await;
    let names = |coll: &'static str| {
        let db: mongodb::Database = (*db).clone();
        async move {
            db.collection::<Document>(coll)
                .list_index_names()
                .await
                .unwrap()
        }
    };
    assert!(names("person").await.contains(&"tasks_1".to_owned()));
    assert!(names("tasks").await.contains(&"owner_1".to_owned()));
    assert_eq!(
        person(&db, kate.id).await,
        doc! { "_id": kate.id, "name": "Kate Monster", "tasks": [tasks[0].id, tasks[1].id, tasks[2].id] }
    );
    assert_eq!(
        task(&db, tasks[0].id).await,
        doc! { "_id": tasks[0].id, "description": "Write lesson plan", "due_date": tasks[0].due_date, "owner": kate.id }
    );

    let owner = Task::collection(&db).relation(Task::FIELDS.owner);
    let done = owner.assign(&tasks[0].id, &jon.id).await.unwrap();
    assert_eq!(done.previous, Some(Bson::ObjectId(kate.id)));
    assert_eq!(done.pulled, 1);
    assert!(done.added);
    assert_eq!(
        person(&db, kate.id).await.get_array("tasks").unwrap(),
        &vec![Bson::ObjectId(tasks[1].id), Bson::ObjectId(tasks[2].id)]
    );
    assert_eq!(
        person(&db, jon.id).await.get_array("tasks").unwrap(),
        &vec![Bson::ObjectId(tasks[0].id)]
    );
    assert_eq!(
        task(&db, tasks[0].id).await.get_object_id("owner").unwrap(),
        jon.id
    );
    // Assigning again to the same owner changes nothing.
    let again = owner.assign(&tasks[0].id, &jon.id).await.unwrap();
    assert_eq!((again.pulled, again.added), (0, false));

    // A missing owner or task: NotFound, and nothing written.
    let before = (
        person(&db, kate.id).await,
        person(&db, jon.id).await,
        task(&db, tasks[1].id).await,
    );
    let ghost = ObjectId::new();
    let e = owner.assign(&tasks[1].id, &ghost).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    let e = owner.assign(&ghost, &jon.id).await.unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    let after = (
        person(&db, kate.id).await,
        person(&db, jon.id).await,
        task(&db, tasks[1].id).await,
    );
    assert_eq!(before, after);
    assert!(owner.check().await.unwrap().is_clean());

    // Both sides load: Jon's tasks, and the owners of every task.
    let persons = vec![Person {
        tasks: vec![Ref::new(tasks[0].id)],
        ..jon.clone()
    }];
    let loaded = Person::collection(&db)
        .relation(Person::FIELDS.tasks)
        .load(&persons)
        .await
        .unwrap();
    assert_eq!(
        loaded.of(&persons[0])[0].map(|t| t.description.as_str()),
        Some("Write lesson plan")
    );
    let stored: Vec<Task> = Task::collection(&db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let owners = owner.load(&stored).await.unwrap();
    assert_eq!(owners.queries(), 1);
    assert_eq!(owners.targets().len(), 2);
    assert_eq!(owner.spec().inverse(), Some("tasks"));
    assert_eq!(
        Person::collection(&db)
            .relation(Person::FIELDS.tasks)
            .spec()
            .inverse(),
        Some("owner")
    );
}

/// An owner whose tasks name it in a field that cannot be empty (`owner: Ref<Person>`, no
/// `Option`) is not deleted while any does: `Error::StillNamed`, naming both collections and
/// the field, and nothing is written. An owner no task names is deleted.
#[tokio::test]
async fn an_owner_named_by_a_required_field_is_not_deleted() {
    let db = test_db("rel_owner_delete").await;
    let (kate, jon, tasks) = persons_and_tasks(&db).await;
    let people = Person::collection(&db);
    let err = people.delete(kate.id).await.unwrap_err();
    match &err {
        pattern_runtime::Error::StillNamed {
            collection,
            id,
            named_by,
            field,
            ..
        } => {
            assert_eq!(
                (collection.as_str(), named_by.as_str(), field.as_str()),
                ("person", "tasks", "owner")
            );
            assert_eq!(**id, Bson::ObjectId(kate.id));
        }
        other => panic!("expected StillNamed, got {other:?}"),
    }
    assert!(!err.is_refused_input(), "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    let stored = person(&db, kate.id).await;
    assert_eq!(stored.get_array("tasks").unwrap().len(), tasks.len());
    for t in &tasks {
        assert_eq!(
            task(&db, t.id).await.get_object_id("owner").unwrap(),
            kate.id
        );
    }
    people.delete(jon.id).await.unwrap();
    assert!(people.get(jon.id).await.unwrap().is_none());
}

#[tokio::test]
async fn a_failure_between_the_writes_of_assign_leaves_all_three_documents_as_before() {
    let db = test_db("rel_assign_fail").await;
    let (kate, jon, tasks) = persons_and_tasks(&db).await;
    let before = (
        person(&db, kate.id).await,
        person(&db, jon.id).await,
        task(&db, tasks[0].id).await,
    );
    // The owner's array has gained the task when the task's write fails.
    db.fail_command(
        &["findAndModify"],
        1,
        doc! { "errorCode": 2, "errmsg": "injected" },
    )
    .await;
    let e = Task::collection(&db)
        .relation(Task::FIELDS.owner)
        .assign(&tasks[0].id, &jon.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(2), "{e:?}");
    let after = (
        person(&db, kate.id).await,
        person(&db, jon.id).await,
        task(&db, tasks[0].id).await,
    );
    assert_eq!(before, after);

    // A transient failure reruns the whole transaction, which then goes through.
    db.fail_command(
        &["update"],
        1,
        doc! { "errorCode": 112, "errorLabels": ["TransientTransactionError"] },
    )
    .await;
    Task::collection(&db)
        .relation(Task::FIELDS.owner)
        .assign(&tasks[0].id, &jon.id)
        .await
        .unwrap();
    assert_eq!(
        task(&db, tasks[0].id).await.get_object_id("owner").unwrap(),
        jon.id
    );
    assert!(Task::collection(&db)
        .relation(Task::FIELDS.owner)
        .check()
        .await
        .unwrap()
        .is_clean());
}

/// 8 workers reassign 100 tasks among 5 persons, 8 times each task (800 assignments, the same
/// task often in flight in two workers): every task ends in exactly one array, its owner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_reassignments_keep_every_task_in_exactly_its_owners_array() {
    let db = test_db("rel_concurrent").await;
    pattern_runtime::sync(&db)
        .models(&[Person::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Task::SCHEMA])
        .await
        .unwrap();
    let persons: Vec<ObjectId> = (0..5).map(|_| ObjectId::new()).collect();
    let tasks: Vec<Task> = (0..100)
        .map(|i| Task {
            id: ObjectId::new(),
            description: format!("task {i}"),
            due_date: DateTime::now(),
            owner: Ref::new(persons[i % 5]),
        })
        .collect();
    let people: Vec<Person> = persons
        .iter()
        .enumerate()
        .map(|(p, id)| Person {
            id: *id,
            name: format!("person {p}"),
            tasks: tasks
                .iter()
                .filter(|t| t.owner.id() == id)
                .map(Ref::to)
                .collect(),
        })
        .collect();
    Person::collection(&db)
        .raw()
        .insert_many(&people)
        .await
        .unwrap();
    Task::collection(&db)
        .raw()
        .insert_many(&tasks)
        .await
        .unwrap();

    let ids: Vec<ObjectId> = tasks.iter().map(|t| t.id).collect();
    let workers: Vec<_> = (0..8_usize)
        .map(|w| {
            let db: mongodb::Database = (*db).clone();
            let ids = ids.clone();
            let persons = persons.clone();
            tokio::spawn(async move {
                let owner = Task::collection(&db).relation(Task::FIELDS.owner);
                // Assignment k = round * 100 + task goes to worker k % 8.
                for k in (w..800).step_by(8) {
                    let (round, t) = (k / 100, k % 100);
                    let to = persons[(t + round * 3 + w) % 5];
                    owner.assign(&ids[t], &to).await.unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }

    let stored: Vec<Task> = Task::collection(&db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let people: Vec<Person> = Person::collection(&db)
        .raw()
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(stored.len(), 100);
    for t in &stored {
        let holders: Vec<&Person> = people
            .iter()
            .filter(|p| p.tasks.iter().any(|r| r.id() == &t.id))
            .collect();
        assert_eq!(holders.len(), 1, "{t:?} is in {} arrays", holders.len());
        assert_eq!(&holders[0].id, t.owner.id(), "{t:?}");
        assert_eq!(
            holders[0].tasks.iter().filter(|r| r.id() == &t.id).count(),
            1
        );
    }
    assert_eq!(people.iter().map(|p| p.tasks.len()).sum::<usize>(), 100);
    assert!(Task::collection(&db)
        .relation(Task::FIELDS.owner)
        .check()
        .await
        .unwrap()
        .is_clean());
}

#[tokio::test]
async fn check_reports_hand_edits_and_repair_makes_the_arrays_agree_with_the_owners() {
    let db = test_db("rel_repair").await;
    let (kate, jon, tasks) = persons_and_tasks(&db).await;
    let persons = db.collection::<Document>("person");
    let task_coll = db.collection::<Document>("tasks");
    let ghost_task = ObjectId::new();
    let ghost_person = ObjectId::new();
    // Jon lists a task of Kate's and a task that does not exist; Kate no longer lists task 1;
    // task 2's owner is someone who does not exist (Kate still lists it).
    persons
        .update_one(
            doc! { "_id": jon.id },
            doc! { "$push": { "tasks": { "$each": [tasks[0].id, ghost_task] } } },
        )
        .await
        .unwrap();
    persons
        .update_one(
            doc! { "_id": kate.id },
            doc! { "$pull": { "tasks": tasks[1].id } },
        )
        .await
        .unwrap();
    task_coll
        .update_one(
            doc! { "_id": tasks[2].id },
            doc! { "$set": { "owner": ghost_person } },
        )
        .await
        .unwrap();

    let owner = Task::collection(&db).relation(Task::FIELDS.owner);
    let k = Bson::ObjectId(kate.id);
    let j = Bson::ObjectId(jon.id);
    let t = |i: usize| Bson::ObjectId(tasks[i].id);
    // One finding per kind, each naming the documents it is about: Jon lists t0 (Kate's) and
    // Kate lists t2 (the ghost's); Jon lists a task that does not exist; t1 is not listed by
    // Kate; t2 names an owner that does not exist.
    let checked = owner.check().await.unwrap();
    let sorted = |ids: &[Bson]| {
        let mut ids = ids.to_vec();
        ids.sort_by_key(ToString::to_string);
        ids
    };
    let kinds: Vec<(String, Vec<Bson>)> = checked
        .findings
        .iter()
        .map(|f| {
            let kind = f.figure.split(';').next().unwrap_or_default();
            (kind.to_owned(), sorted(&f.documents))
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "2 documents list a child that names another owner".to_owned(),
                sorted(&[j.clone(), k.clone()])
            ),
            (
                "1 documents list a child that does not exist".to_owned(),
                vec![j.clone()]
            ),
            (
                "1 documents are not listed by their owner".to_owned(),
                vec![t(1)]
            ),
            (
                "1 documents name an owner that does not exist".to_owned(),
                vec![t(2)]
            ),
        ],
        "{checked}"
    );
    assert_eq!(checked.documents().len(), 4, "{checked}");

    let repaired = owner.repair().await.unwrap();
    // One entry added (Kate lists t1 again), three pulled (t0 and the ghost from Jon, t2 from
    // Kate).
    assert_eq!(repaired.repaired, 4, "{repaired}");
    // What is left is the orphan, which no repair can invent an owner for.
    assert_eq!(repaired.left.len(), 1, "{repaired}");
    assert_eq!(repaired.left[0].documents, [t(2)]);
    assert!(repaired.left[0].fix.contains("cannot invent"), "{repaired}");
    let after = owner.check().await.unwrap();
    assert_eq!(after.findings.len(), 1, "{after}");
    assert_eq!(after.documents(), [t(2)], "{after}");
    assert_eq!(
        person(&db, kate.id).await.get_array("tasks").unwrap().len(),
        2
    );
    assert!(person(&db, jon.id)
        .await
        .get_array("tasks")
        .unwrap()
        .is_empty());
}

// ----- a model referring to itself, through an optional parent -----

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Model)]
struct Category {
    #[serde(rename = "_id")]
    id: String,
    #[serde(rename = "label")]
    name: String,
    #[relation(parent, sort(name = 1))]
    #[serde(rename = "parentId")]
    parent: Option<Ref<Category>>,
}

#[tokio::test]
async fn an_optional_parent_of_the_same_model_loads_and_lists_children_under_serde_names() {
    let db = test_db("rel_self").await;
    pattern_runtime::sync(&db)
        .models(&[Category::SCHEMA])
        .await
        .unwrap();
    let names = db
        .collection::<Document>("categories")
        .list_index_names()
        .await
        .unwrap();
    assert!(
        names.contains(&"parentId_1_label_1".to_owned()),
        "{names:?}"
    );
    let cat = |id: &str, name: &str, parent: Option<&str>| Category {
        id: id.into(),
        name: name.into(),
        parent: parent.map(|p| Ref::new(p.to_owned())),
    };
    let all = vec![
        cat("books", "Books", None),
        cat("scifi", "Science fiction", Some("books")),
        cat("poetry", "Poetry", Some("books")),
        cat("lost", "Lost", Some("gone")),
    ];
    Category::collection(&db)
        .raw()
        .insert_many(&all)
        .await
        .unwrap();
    let stored = stored_doc(&db, "categories", doc! { "_id": "scifi" }).await;
    assert_eq!(
        stored,
        doc! { "_id": "scifi", "label": "Science fiction", "parentId": "books" }
    );
    let relation = Category::collection(&db).relation(Category::FIELDS.parent);
    let children: Vec<String> = relation
        .children_of(&"books".to_owned())
        .to_vec()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(children, ["Poetry", "Science fiction"]);
    let loaded = relation.load(&all).await.unwrap();
    assert_eq!(loaded.of(&all[0]), Vec::<Option<&Category>>::new());
    assert_eq!(loaded.of(&all[1]), [Some(&all[0])]);
    assert_eq!(loaded.of(&all[3]), [None]);
    assert_eq!(loaded.dangling().len(), 1);
    assert_eq!(loaded.dangling()[0].source, "lost");
    assert_eq!(loaded.dangling()[0].field, "parentId");
    assert_eq!(loaded.dangling()[0].position, None);
    assert_eq!(loaded.dangling()[0].target, "gone");
}

#[tokio::test]
async fn a_bound_relation_reads_its_transactions_writes() {
    let db = test_db("rel_in_transaction").await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let host = Host {
        id: ObjectId::new(),
        name: "tx.example.com".into(),
        ipaddr: "127.0.0.9".into(),
    };
    let message = LogMessage {
        id: ObjectId::new(),
        time: DateTime::from_millis(1_000),
        message: "in the transaction".into(),
        host: Ref::to(&host),
    };
    Host::collection(&db)
        .in_transaction(&tx)
        .insert(&host)
        .await
        .unwrap();
    let messages = LogMessage::collection(&db).in_transaction(&tx);
    messages.insert(&message).await.unwrap();
    let kate = Person {
        id: ObjectId::new(),
        name: "Kate Monster".into(),
        tasks: vec![],
    };
    let chore = Task {
        id: ObjectId::new(),
        description: "Order books".into(),
        due_date: DateTime::from_millis(0),
        owner: Ref::to(&kate),
    };
    Person::collection(&db)
        .in_transaction(&tx)
        .insert(&kate)
        .await
        .unwrap();
    Task::collection(&db)
        .in_transaction(&tx)
        .insert(&chore)
        .await
        .unwrap();

    // Every read of the bound relations sees the transaction's own inserts: reached from the
    // bound model handle, or bound by the relation's own `in_transaction`...
    let hosts = messages.relation(LogMessage::FIELDS.host);
    let bound_here = LogMessage::collection(&db)
        .relation(LogMessage::FIELDS.host)
        .in_transaction(&tx);
    for relation in [&hosts, &bound_here] {
        let loaded = relation.load(std::slice::from_ref(&message)).await.unwrap();
        assert_eq!(loaded.of(&message), [Some(&host)]);
        assert!(loaded.dangling().is_empty());
        let one = relation.load_one(&message).await.unwrap();
        assert_eq!(one.get(&host.id), Some(&host));
        let children = relation.children_of(&host.id).to_vec().await.unwrap();
        assert_eq!(children, std::slice::from_ref(&message));
        let streamed: Vec<LogMessage> = relation
            .children_of(&host.id)
            .stream()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(streamed, std::slice::from_ref(&message));
    }
    // ... and a two-way relation's load, check and repair.
    let owner = Task::collection(&db)
        .in_transaction(&tx)
        .relation(Task::FIELDS.owner);
    let loaded = owner.load(std::slice::from_ref(&chore)).await.unwrap();
    assert_eq!(loaded.get(&kate.id).map(|p| p.tasks.len()), Some(1));
    let checked = owner.check().await.unwrap();
    assert_eq!(
        (checked.examined, checked.findings.len()),
        (2, 0),
        "{checked}"
    );
    // Kate's array loses the task in the transaction, by hand: the bound repair sees it.
    Person::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": kate.id },
            doc! { "$pull": { "tasks": chore.id } },
        )
        .session(&mut *tx.session().await)
        .await
        .unwrap();
    assert_eq!(owner.check().await.unwrap().findings.len(), 1);
    assert_eq!(owner.repair().await.unwrap().repaired, 1);
    assert!(owner.check().await.unwrap().findings.is_empty());

    // No handle outside the transaction sees any of it before the commit.
    let outside = LogMessage::collection(&db).relation(LogMessage::FIELDS.host);
    let loaded = outside.load(std::slice::from_ref(&message)).await.unwrap();
    assert_eq!(loaded.of(&message), [None]);
    assert!(outside
        .children_of(&host.id)
        .to_vec()
        .await
        .unwrap()
        .is_empty());
    let owner_outside = Task::collection(&db).relation(Task::FIELDS.owner);
    assert_eq!(owner_outside.check().await.unwrap().examined, 0);
    tx.commit().await.unwrap();
    let loaded = outside.load(std::slice::from_ref(&message)).await.unwrap();
    assert_eq!(loaded.of(&message), [Some(&host)]);
    assert_eq!(
        outside.children_of(&host.id).to_vec().await.unwrap().len(),
        1
    );
    let checked = owner_outside.check().await.unwrap();
    assert_eq!(
        (checked.examined, checked.findings.len()),
        (2, 0),
        "{checked}"
    );
}

// A two-way relation fed hostile ids: `assign` refuses them with nothing written; `check` reports
// a stored owner field holding a regex or an operator document and `repair` adds no such child.

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

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "ns_people")]
struct NsPerson {
    #[serde(rename = "_id")]
    id: Bson,
    name: String,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<NsTask>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "ns_tasks")]
struct NsTask {
    #[serde(rename = "_id")]
    id: Bson,
    title: String,
    #[relation(inverse = tasks)]
    owner: Option<Ref<NsPerson>>,
}

// ---------------------------------------------------------------------------------------------
// 5. Two-way relations with hostile ids
// ---------------------------------------------------------------------------------------------

async fn two_way_fixture(db: &mongodb::Database) {
    let people = NsPerson::collection(db).raw().clone();
    let tasks = NsTask::collection(db).raw().clone();
    for (id, name) in [(1, "ann"), (2, "bob")] {
        people
            .insert_one(NsPerson {
                id: Bson::Int32(id),
                name: name.into(),
                tasks: vec![],
            })
            .await
            .unwrap();
    }
    for id in [10, 11] {
        tasks
            .insert_one(NsTask {
                id: Bson::Int32(id),
                title: format!("t{id}"),
                owner: None,
            })
            .await
            .unwrap();
    }
    let rel = NsTask::collection(db).relation(NsTask::FIELDS.owner);
    rel.assign(&Bson::Int32(10), &Bson::Int32(1)).await.unwrap();
}

/// `assign` with an operator document, a regex, an array or a dotted key as either id is
/// `InvalidValue`, and nothing is written.
#[tokio::test]
async fn two_way_assign_refuses_hostile_ids() {
    let db = test_db("ns_two_way_assign").await;
    two_way_fixture(&db).await;
    let before = (all(&db, "ns_people").await, all(&db, "ns_tasks").await);
    let rel = NsTask::collection(&db).relation(NsTask::FIELDS.owner);
    let hostile = [
        Bson::Document(doc! { "$ne": null }),
        Bson::Document(doc! { "$in": [1, 2] }),
        Bson::Document(doc! { "x": { "$gt": 0 } }),
        Bson::RegularExpression(regex("^")),
        Bson::JavaScriptCode("true".into()),
        Bson::Array(vec![Bson::Int32(1), Bson::Int32(2)]),
        Bson::Document(doc! { "a.b": 1 }),
    ];
    for bad in &hostile {
        assert_invalid_value(
            rel.assign(bad, &Bson::Int32(2)).await,
            &format!("child {bad}"),
        );
        assert_invalid_value(
            rel.assign(&Bson::Int32(11), bad).await,
            &format!("owner {bad}"),
        );
    }
    // Also in a caller's transaction: refused before writing, the transaction goes on.
    let tx = Transaction::start(&db).await.unwrap();
    assert_invalid_value(
        rel.in_transaction(&tx)
            .assign(&hostile[0], &Bson::Int32(2))
            .await,
        "child in tx",
    );
    assert_eq!(tx.ended(), None);
    rel.in_transaction(&tx)
        .assign(&Bson::Int32(11), &Bson::Int32(2))
        .await
        .unwrap();
    tx.abort().await.unwrap();

    assert_eq!(
        (all(&db, "ns_people").await, all(&db, "ns_tasks").await),
        before,
        "nothing written"
    );
    assert!(rel.check().await.unwrap().is_clean());
}

/// A child whose stored owner field holds a regex or an operator document (written around the
/// toolkit): `check` reports it and `repair` does not add the child to the owners such a value
/// would match as a query; nothing else is written.
#[tokio::test]
async fn two_way_check_and_repair_with_hostile_stored_ids() {
    let db = test_db("ns_two_way_repair").await;
    two_way_fixture(&db).await;
    let tasks = db.collection::<Document>("ns_tasks");
    tasks
        .insert_one(doc! {
            "_id": 20, "title": "regex owner",
            "owner": Bson::RegularExpression(regex(".*")),
        })
        .await
        .unwrap();
    tasks
        .insert_one(doc! { "_id": 21, "title": "operator owner", "owner": { "$exists": true } })
        .await
        .unwrap();
    // A child `_id` that is an operator document, listed by owner 2 by hand.
    tasks
        .insert_one(doc! { "_id": { "k": { "$ne": 0 } }, "title": "odd id", "owner": 2 })
        .await
        .ok();
    let people_before = all(&db, "ns_people").await;

    let rel = NsTask::collection(&db).relation(NsTask::FIELDS.owner);
    let report = rel.check().await.unwrap();
    assert!(
        !report.is_clean(),
        "the hostile owners are not found: {report:?}"
    );
    let docs = report.documents();
    assert!(
        docs.contains(&Bson::Int32(20)) && docs.contains(&Bson::Int32(21)),
        "{docs:?}"
    );

    let repaired = rel.repair().await;
    let people_after = all(&db, "ns_people").await;
    for p in &people_after {
        let ids = p.get_array("tasks").unwrap();
        assert!(
            !ids.contains(&Bson::Int32(20)) && !ids.contains(&Bson::Int32(21)),
            "repair added a hostile child to {p} ({repaired:?})"
        );
    }
    match repaired {
        Ok(r) => assert!(!r.left.is_empty(), "the orphans are left: {r:?}"),
        Err(e) => assert!(e.is_refused_input(), "untyped error: {e:?}"),
    }
    // Ann (1) still lists task 10; Bob (2) lists what his children name, nothing more.
    let ann = people_after
        .iter()
        .find(|p| p.get_i32("_id").ok() == Some(1))
        .unwrap();
    assert_eq!(ann.get_array("tasks").unwrap(), &vec![Bson::Int32(10)]);
    let bob_before = people_before
        .iter()
        .find(|p| p.get_i32("_id").ok() == Some(2))
        .unwrap();
    let bob_after = people_after
        .iter()
        .find(|p| p.get_i32("_id").ok() == Some(2))
        .unwrap();
    let odd_stored = raw_get(&db, "ns_tasks", doc! { "k": { "$ne": 0 } })
        .await
        .is_some();
    if !odd_stored {
        assert_eq!(bob_before, bob_after);
    }
}

//! Every pattern's writes in the caller's transaction, and through the map of derived data.
//!
//! One club schema combines an outlier (a member's notes, with their count), an attribute
//! array (a member's skills), an extended reference copying both (a badge), a computed sum of
//! the outlier counts (the club's notes), a preallocated grid whose holder is counted (a
//! member's seats), a two-way relation, a polymorphic model counted by another, a bucket
//! series and approximate counters. For each handle:
//! - its writes keep what other patterns derive from the fields they change;
//! - bound to the caller's transaction (`in_transaction(&tx)`), an abort leaves the database
//!   as it was and a commit keeps every write and every dependent;
//! - then the doctor finds nothing;
//! - and every write passes the models' validators, installed `strict`, `error` and closed to
//!   undeclared fields.

use crate::support::{count_named, dump, raw_one, refused_value, sent};
use bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::approximation::{SampledCounter, ShardedCounter};
use pattern_runtime::validator::{sync_validators, ValidatorOptions};
use pattern_runtime::{
    doctor, sync, DoctorOptions, Fields, Measurement, Model, Ref, SyncOptions, Transaction,
};
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

// ----- the club -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = level)]
struct Skill {
    name: String,
    level: Bson,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    text: String,
}

/// A member: notes that overflow past 2 (outlier), skills (attribute), seats counted from the
/// grid; copied into badges (name, note count, skills) and summed by the club.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club")]
#[serde(rename_all = "camelCase")]
#[extended_ref(MemberCard(name, note_count, skills), derive(PartialEq))]
struct Member {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    club: String,
    #[outlier(limit = 2, overflow = "member_notes", capacity = 2, flag = overflowing, count = note_count)]
    notes: Vec<Note>,
    overflowing: bool,
    note_count: i64,
    #[attribute]
    skills: Vec<Skill>,
    #[computed(count = Seat, by = member)]
    seats: i64,
    #[relation(inverse = owner)]
    #[bounded(16)]
    tasks: Vec<Ref<Chore>>,
}

/// A badge holding a copy of its member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club")]
struct Badge {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    member: MemberCard,
}

/// A club summing its members' note counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club")]
#[serde(rename_all = "camelCase")]
struct Club {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Member.note_count, by = club)]
    notes: i64,
    #[computed(count = Visit, by = club)]
    visits: i64,
}

/// A table's hours, each held by a member (counted in `Member.seats`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club")]
#[preallocated(resource = table, slot = hour, holder = member)]
struct Seat {
    #[serde(rename = "_id")]
    id: String,
    table: String,
    hour: i64,
    member: Option<String>,
}

/// A chore owned by a member, listed in the member's `tasks` (two-way).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club")]
struct Chore {
    #[serde(rename = "_id")]
    id: String,
    #[relation(inverse = tasks)]
    owner: Ref<Member>,
}

/// Visits of several shapes, counted by their club through the common field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_club", collection = "visits")]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Visit {
    Walk {
        #[serde(rename = "_id")]
        id: i64,
        club: String,
    },
    Talk {
        #[serde(rename = "_id")]
        id: i64,
        club: String,
        minutes: i64,
    },
}

/// A door sensor's readings, in hourly buckets of at most 10.
#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[bucket(group = "compose_club", collection = "door_readings", key = door, time = at, max_count = 10, span = "1h")]
struct DoorReading {
    door: String,
    at: DateTime,
    open: bool,
}

fn member(id: &str) -> Member {
    Member {
        id: id.into(),
        name: id.to_uppercase(),
        club: "chess".into(),
        notes: vec![],
        overflowing: false,
        note_count: 0,
        skills: vec![],
        seats: 0,
        tasks: vec![],
    }
}

async fn club(name: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group("compose_club")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    // Every write below meets the models' own validators, strict, refusing, and closed to
    // fields the models do not declare: no pattern writes what its types do not describe.
    let validated = [
        Member::SCHEMA,
        Badge::SCHEMA,
        Club::SCHEMA,
        Seat::SCHEMA,
        Chore::SCHEMA,
    ];
    let strict = ValidatorOptions::new()
        .strict()
        .error()
        .forbid_other_fields();
    let report = sync_validators(&db, &validated, &strict).await.unwrap();
    assert_eq!(report.drifted().count(), 0, "{report:?}");
    // Not a vacuous validator: the fields the patterns keep are required and typed.
    let declared = Member::SCHEMA.validator(&strict).unwrap();
    let declared = declared.get_document("$jsonSchema").unwrap();
    let required: Vec<&str> = declared
        .get_array("required")
        .unwrap()
        .iter()
        .filter_map(Bson::as_str)
        .collect();
    for kept in [
        "_id",
        "name",
        "club",
        "notes",
        "overflowing",
        "noteCount",
        "skills",
        "seats",
        "tasks",
    ] {
        assert!(required.contains(&kept), "{kept} in {declared}");
    }
    Club::collection(&db)
        .raw()
        .insert_one(Club {
            id: "chess".into(),
            notes: 0,
            visits: 0,
        })
        .await
        .unwrap();
    for id in ["ada", "bob"] {
        Member::collection(&db).insert(&member(id)).await.unwrap();
    }
    Badge::collection(&db)
        .raw()
        .insert_one(Badge {
            id: 1,
            member: MemberCard::from(&member("ada")),
        })
        .await
        .unwrap();
    Seat::collection(&db)
        .slots()
        .allocate((18..=20).map(|hour| Seat {
            id: format!("t1-{hour}"),
            table: "t1".into(),
            hour,
            member: None,
        }))
        .await
        .unwrap();
    db
}

/// Every document of each collection, in `_id` order.
async fn snapshot(db: &TestDb) -> Vec<(String, Vec<Document>)> {
    let mut names = db.list_collection_names().await.unwrap();
    names.sort();
    let mut all = Vec::new();
    for name in names.into_iter().filter(|n| !n.starts_with("system.")) {
        let docs: Vec<Document> = db
            .collection::<Document>(&name)
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        all.push((name, docs));
    }
    all
}

async fn raw(db: &TestDb, collection: &str, id: impl Into<Bson>) -> Document {
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id.into() })
        .await
        .unwrap()
        .unwrap()
}

/// A stored integer, whichever width the server kept.
fn int(doc: &Document, field: &str) -> i64 {
    match doc.get(field) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("`{field}` is {other:?} in {doc}"),
    }
}

async fn assert_clean(db: &TestDb) {
    let report = doctor(db)
        .group("compose_club")
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let findings: Vec<String> = report
        .findings
        .iter()
        // The sample has no use of the indexes yet.
        .filter(|f| f.check != pattern_runtime::doctor::Check::UnusedIndex)
        .map(ToString::to_string)
        .collect();
    assert!(findings.is_empty(), "the doctor found: {findings:#?}");
}

fn note(n: usize) -> Note {
    Note {
        text: format!("note {n}"),
    }
}

fn skill(name: &str, level: i64) -> Skill {
    Skill {
        name: name.into(),
        level: Bson::Int64(level),
    }
}

#[tokio::test]
async fn outlier_pushes_keep_the_copies_and_the_sums_of_the_count() {
    let db = club("compose_tx_outlier").await;
    let notes = Member::collection(&db).outlier(Member::FIELDS.notes);
    for n in 0..5 {
        notes.push("ada", note(n)).await.unwrap();
    }
    notes
        .push_many("bob", vec![note(0), note(1)])
        .await
        .unwrap();
    let badge = raw(&db, "badges", 1).await;
    assert_eq!(int(badge.get_document("member").unwrap(), "noteCount"), 5);
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "notes"), 7);
    notes.remove("ada", &note(0)).await.unwrap();
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "notes"), 6);
    let badge = raw(&db, "badges", 1).await;
    assert_eq!(int(badge.get_document("member").unwrap(), "noteCount"), 4);
    assert_clean(&db).await;
}

#[tokio::test]
async fn attribute_writes_keep_the_copies_of_the_array() {
    let db = club("compose_tx_attribute").await;
    let skills = Member::collection(&db).attributes(Member::FIELDS.skills);
    skills.set("ada", &skill("go", 3)).await.unwrap();
    skills.set("ada", &skill("$where", 1)).await.unwrap_err();
    skills.set("ada", &skill("rust", 5)).await.unwrap();
    skills.unset("ada", &"go".to_owned()).await.unwrap();
    let badge = raw(&db, "badges", 1).await;
    let copied = badge
        .get_document("member")
        .unwrap()
        .get_array("skills")
        .unwrap();
    assert_eq!(
        copied,
        &vec![Bson::Document(doc! { "name": "rust", "level": 5i64 })]
    );
    assert_clean(&db).await;
}

#[tokio::test]
async fn booking_and_freeing_a_slot_moves_the_count_of_its_holder() {
    let db = club("compose_tx_slots").await;
    let seats = Seat::collection(&db).slots();
    seats.book("t1", 18, "ada").await.unwrap();
    seats.book("t1", 19, "ada").await.unwrap();
    seats.book_all(&[("t1", 20)], "bob").await.unwrap();
    let taken = seats.book("t1", 20, "ada").await.unwrap_err();
    assert!(
        matches!(taken, pattern_runtime::Error::AlreadyBooked { .. }),
        "{taken:?}"
    );
    assert_eq!(int(&raw(&db, "members", "ada").await, "seats"), 2);
    assert_eq!(int(&raw(&db, "members", "bob").await, "seats"), 1);
    seats.cancel("t1", 18, "ada").await.unwrap();
    seats.release("t1", 20).await.unwrap();
    assert_eq!(int(&raw(&db, "members", "ada").await, "seats"), 1);
    assert_eq!(int(&raw(&db, "members", "bob").await, "seats"), 0);
    assert_clean(&db).await;
}

#[tokio::test]
async fn variant_writes_keep_the_counts_of_their_common_fields() {
    let db = club("compose_tx_variants").await;
    let visits = Visit::collection(&db);
    let talks = visits.variant::<VisitTalk>();
    talks
        .insert(&VisitTalk {
            id: 1,
            club: "chess".into(),
            minutes: 30,
        })
        .await
        .unwrap();
    visits
        .variant::<VisitWalk>()
        .insert_many(&[
            VisitWalk {
                id: 2,
                club: "chess".into(),
            },
            VisitWalk {
                id: 3,
                club: "chess".into(),
            },
        ])
        .await
        .unwrap();
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "visits"), 3);
    Club::collection(&db)
        .raw()
        .insert_one(Club {
            id: "go".into(),
            notes: 0,
            visits: 0,
        })
        .await
        .unwrap();
    talks
        .update(1, doc! { "$set": { "club": "go" } })
        .await
        .unwrap();
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "visits"), 2);
    assert_eq!(int(&raw(&db, "clubs", "go").await, "visits"), 1);
    visits
        .variant::<VisitWalk>()
        .delete_many(doc! {})
        .await
        .unwrap();
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "visits"), 0);
    assert_clean(&db).await;
}

/// One write of every handle, in `tx`.
async fn one_of_each(db: &TestDb, tx: &Transaction) -> pattern_runtime::Result<()> {
    Member::collection(db)
        .outlier(Member::FIELDS.notes)
        .in_transaction(tx)
        .push_many("ada", vec![note(0), note(1), note(2)])
        .await?;
    Member::collection(db)
        .attributes(Member::FIELDS.skills)
        .in_transaction(tx)
        .set("ada", &skill("go", 3))
        .await?;
    Seat::collection(db)
        .slots()
        .in_transaction(tx)
        .book("t1", 18, "bob")
        .await?;
    Chore::collection(db)
        .raw()
        .insert_one(Chore {
            id: "dishes".into(),
            owner: Ref::new("ada".into()),
        })
        .session(&mut *tx.session().await)
        .await?;
    Chore::collection(db)
        .relation(Chore::FIELDS.owner)
        .in_transaction(tx)
        .assign(&"dishes".to_owned(), &"bob".to_owned())
        .await?;
    Visit::collection(db)
        .in_transaction(tx)
        .variant::<VisitWalk>()
        .insert(&VisitWalk {
            id: 9,
            club: "chess".into(),
        })
        .await?;
    DoorReading::series(db)
        .in_transaction(tx)
        .insert(&DoorReading {
            door: "front".into(),
            at: DateTime::from_millis(3_600_000),
            open: true,
        })
        .await?;
    SampledCounter::new(db.collection("hits"), "views", 1.0)?
        .in_transaction(tx)
        .add("home")
        .await?;
    ShardedCounter::new(db.collection("shards"), "likes", 4)?
        .in_transaction(tx)
        .add(1)
        .await?;
    Ok(())
}

#[tokio::test]
async fn every_handle_commits_or_aborts_with_the_callers_transaction() {
    let db = club("compose_tx_every_handle").await;
    // The collections exist before the transaction (a transaction cannot create them on every
    // server version).
    for name in ["hits", "shards", "chores", "door_readings", "member_notes"] {
        let _ = db.create_collection(name).await;
    }
    let before = snapshot(&db).await;
    let tx = Transaction::start(&db).await.unwrap();
    one_of_each(&db, &tx).await.unwrap();
    // Inside, not visible outside.
    assert_eq!(snapshot(&db).await, before);
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db).await, before, "an abort keeps nothing");

    let tx = Transaction::start(&db).await.unwrap();
    one_of_each(&db, &tx).await.unwrap();
    tx.commit().await.unwrap();
    let ada = raw(&db, "members", "ada").await;
    assert_eq!(int(&ada, "noteCount"), 3);
    assert_eq!(ada.get_bool("overflowing").ok(), Some(true));
    assert_eq!(ada.get_array("tasks").unwrap().len(), 0);
    let bob = raw(&db, "members", "bob").await;
    assert_eq!(int(&bob, "seats"), 1);
    assert_eq!(
        bob.get_array("tasks").unwrap(),
        &vec![Bson::String("dishes".into())]
    );
    let club_doc = raw(&db, "clubs", "chess").await;
    assert_eq!(int(&club_doc, "notes"), 3);
    assert_eq!(int(&club_doc, "visits"), 1);
    let badge = raw(&db, "badges", 1).await;
    let card = badge.get_document("member").unwrap();
    assert_eq!(int(card, "noteCount"), 3);
    assert_eq!(card.get_array("skills").unwrap().len(), 1);
    assert_eq!(int(&raw(&db, "hits", "home").await, "views"), 1);
    let readings = db
        .collection::<Document>("door_readings")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(readings, 1);
    assert_clean(&db).await;
}

#[tokio::test]
async fn a_refusal_inside_the_callers_transaction_keeps_nothing_of_it() {
    let db = club("compose_tx_refusal").await;
    for name in ["hits", "shards", "chores", "door_readings", "member_notes"] {
        let _ = db.create_collection(name).await;
    }
    Seat::collection(&db)
        .slots()
        .book("t1", 18, "ada")
        .await
        .unwrap();
    let before = snapshot(&db).await;
    let tx = Transaction::start(&db).await.unwrap();
    // The outlier and attribute writes go in, then the seat is taken.
    let err = one_of_each(&db, &tx).await.unwrap_err();
    assert!(
        matches!(err, pattern_runtime::Error::AlreadyBooked { .. }),
        "{err:?}"
    );
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db).await, before);
    assert_clean(&db).await;
}

// ----- no dependents: no extra command -----

/// A model nothing derives from: its outlier, attribute and variant writes, and the grid's
/// bookings, send what they sent before the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_lone")]
#[serde(rename_all = "camelCase")]
struct Loner {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 5, overflow = "loner_notes", capacity = 5, flag = overflowing, count = note_count)]
    notes: Vec<Note>,
    overflowing: bool,
    note_count: i64,
    #[attribute]
    skills: Vec<Skill>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_lone")]
#[preallocated(resource = desk, slot = hour, holder = who)]
struct Desk {
    #[serde(rename = "_id")]
    id: i64,
    desk: i64,
    hour: i64,
    who: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_lone", collection = "shapes")]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    Dot {
        #[serde(rename = "_id")]
        id: i64,
    },
}

#[tokio::test]
async fn writes_nothing_derives_from_send_one_command_as_before() {
    // It sets a field no model declares.
    let db = test_db_unvalidated("compose_tx_no_extra").await;
    sync(&db)
        .group("compose_lone")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    Loner::collection(&db)
        .raw()
        .insert_one(Loner {
            id: 1,
            notes: vec![],
            overflowing: false,
            note_count: 0,
            skills: vec![],
        })
        .await
        .unwrap();
    Desk::collection(&db)
        .slots()
        .allocate([Desk {
            id: 1,
            desk: 1,
            hour: 9,
            who: None,
        }])
        .await
        .unwrap();
    let names =
        |db: &TestDb| -> Vec<String> { db.take_commands().into_iter().map(|c| c.name).collect() };
    names(&db);
    Loner::collection(&db)
        .outlier(Loner::FIELDS.notes)
        .push(1, note(1))
        .await
        .unwrap();
    assert_eq!(names(&db), ["findAndModify"]);
    Loner::collection(&db)
        .attributes(Loner::FIELDS.skills)
        .set(1, &skill("go", 1))
        .await
        .unwrap();
    assert_eq!(names(&db), ["update"]);
    Loner::collection(&db)
        .attributes(Loner::FIELDS.skills)
        .unset(1, "go".to_owned())
        .await
        .unwrap();
    assert_eq!(names(&db), ["update"]);
    Desk::collection(&db)
        .slots()
        .book(1, 9, "ada")
        .await
        .unwrap();
    assert_eq!(names(&db), ["findAndModify"]);
    Desk::collection(&db).slots().release(1, 9).await.unwrap();
    assert_eq!(names(&db), ["findAndModify"]);
    let dots = Shape::collection(&db).variant::<ShapeDot>();
    dots.insert(&ShapeDot { id: 1 }).await.unwrap();
    assert_eq!(names(&db), ["insert"]);
    dots.update(1, doc! { "$set": { "x": 1 } }).await.unwrap();
    assert_eq!(names(&db), ["update"]);
    dots.delete_many(doc! {}).await.unwrap();
    assert_eq!(names(&db), ["delete"]);
}

// ----- many writers -----

#[tokio::test]
async fn eight_writers_mixing_outlier_pushes_and_bookings_keep_every_copy_and_count() {
    let db = club("compose_tx_eight_writers").await;
    Seat::collection(&db)
        .slots()
        .allocate((0..40).map(|hour| Seat {
            id: format!("t2-{hour}"),
            table: "t2".into(),
            hour,
            member: None,
        }))
        .await
        .unwrap();
    let mut writers = Vec::new();
    for w in 0..8usize {
        let db = db.clone();
        writers.push(tokio::spawn(async move {
            let notes = Member::collection(&db).outlier(Member::FIELDS.notes);
            let seats = Seat::collection(&db).slots();
            let who = if w % 2 == 0 { "ada" } else { "bob" };
            for i in 0..10usize {
                notes.push(who, note(w * 100 + i)).await.unwrap();
                // Each writer books its own 5 hours, then frees every other one.
                if i < 5 {
                    seats.book("t2", (w * 5 + i) as i64, who).await.unwrap();
                } else if i % 2 == 0 {
                    seats
                        .cancel("t2", (w * 5 + i - 5) as i64, who)
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    // 80 notes, 40 each; 5 booked and 2 freed per writer: 3 held each, 12 per member.
    let (ada, bob) = (
        raw(&db, "members", "ada").await,
        raw(&db, "members", "bob").await,
    );
    assert_eq!(int(&ada, "noteCount"), 40);
    assert_eq!(int(&bob, "noteCount"), 40);
    assert_eq!(int(&ada, "seats"), 12);
    assert_eq!(int(&bob, "seats"), 12);
    assert_eq!(int(&raw(&db, "clubs", "chess").await, "notes"), 80);
    let badge = raw(&db, "badges", 1).await;
    assert_eq!(int(badge.get_document("member").unwrap(), "noteCount"), 40);
    // Every check of every pattern involved is clean.
    for report in [
        Member::collection(&db)
            .outlier(Member::FIELDS.notes)
            .check()
            .await
            .unwrap(),
        Member::collection(&db).computed().check().await.unwrap(),
        Club::collection(&db).computed().check().await.unwrap(),
        Member::collection(&db).references().check().await.unwrap(),
        Seat::collection(&db).slots().check().await.unwrap(),
    ] {
        assert!(report.is_clean(), "{report}");
    }
    assert_clean(&db).await;
}

// `Payment::collection(&db)` in a caller's transaction (aborted, ended by a refusal, committed)
// keeps the wallets' sums; a preallocated grid whose holder is counted per guest, with hostile
// holders.

// ---------------------------------------------------------------------------------------------
// 4: computed sums written in a caller's transaction
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_wallets")]
pub struct Wallet {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(sum = Payment.amount, by = wallet_id)]
    pub balance: f64,
    #[computed(count = Payment, by = wallet_id)]
    pub payments: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_payments")]
pub struct Payment {
    #[serde(rename = "_id")]
    pub id: i64,
    pub wallet_id: String,
    pub amount: f64,
    pub memo: String,
}

fn payment(id: i64, wallet: &str, amount: f64) -> Payment {
    Payment {
        id,
        wallet_id: wallet.into(),
        amount,
        memo: format!("$memo {id}"),
    }
}

async fn wallets(db: &TestDb) -> Vec<(String, f64, i64)> {
    dump(db, "nwi_wallets")
        .await
        .into_iter()
        .map(|d| {
            (
                d.get_str("_id").unwrap().to_string(),
                d.get_f64("balance").unwrap(),
                d.get("payments").and_then(Bson::as_i64).unwrap(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 8: a preallocated grid whose holder is counted per guest
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_room_days")]
#[preallocated(resource = room_id, slot = date, holder = booked_by)]
pub struct RoomDay {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub room_id: String,
    pub date: String,
    pub booked_by: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_guests")]
pub struct Guest {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = RoomDay, by = booked_by)]
    pub nights: i64,
}

fn free(room: &str, date: &str) -> RoomDay {
    RoomDay {
        id: ObjectId::new(),
        room_id: room.into(),
        date: date.into(),
        booked_by: None,
    }
}

async fn nights(db: &TestDb, guest: &str) -> i64 {
    Guest::collection(db)
        .raw()
        .find_one(doc! { "_id": guest })
        .await
        .unwrap()
        .unwrap()
        .nights
}

#[tokio::test]
async fn computing_in_a_caller_transaction_aborted_ended_and_committed() {
    let db = test_db("nwi_computing_tx").await;
    pattern_runtime::sync(&db)
        .models(&[Wallet::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Payment::SCHEMA])
        .await
        .unwrap();
    for w in ["w1", "w2"] {
        Wallet::collection(&db)
            .insert(&Wallet {
                id: w.into(),
                balance: 0.0,
                payments: 0,
            })
            .await
            .unwrap();
    }
    let empty = wallets(&db).await;
    sent(&db);

    // Aborted: nothing kept. An insert in the caller's transaction sends the page's `insert` 3
    // less the commit, which is the caller's.
    let tx = Transaction::start(&db).await.unwrap();
    let payments = Payment::collection(&db).in_transaction(&tx);
    payments.insert(&payment(1, "w1", 10.5)).await.unwrap();
    let cmds = sent(&db);
    assert_eq!(
        cmds,
        [
            ("insert".into(), "nwi_payments".into()),
            ("update".into(), "nwi_wallets".into()),
        ],
        "ModelCollection::insert in a caller's transaction"
    );
    payments.insert(&payment(2, "w2", 4.0)).await.unwrap();
    tx.abort().await.unwrap();
    assert_eq!(tx.ended(), Some("aborted"));
    assert!(dump(&db, "nwi_payments").await.is_empty());
    assert_eq!(wallets(&db).await, empty);
    sent(&db);
    // A handle bound to an ended transaction sends nothing.
    let e = payments.insert(&payment(3, "w1", 1.0)).await.unwrap_err();
    assert!(e.is_transaction_ended(), "{e:?}");
    assert!(sent(&db).is_empty());

    // A refusal before anything is written leaves the transaction usable; a missing target,
    // found by the count's write, ends it and nothing of it is kept.
    let tx = Transaction::start(&db).await.unwrap();
    let payments = Payment::collection(&db).in_transaction(&tx);
    payments.insert(&payment(1, "w1", 10.5)).await.unwrap();
    let e = payments
        .insert(&payment(2, "w1", f64::NAN))
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    assert_eq!(tx.ended(), None, "a refusal before writing leaves it open");
    let e = payments
        .insert(&payment(3, "$where", 1.0))
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(tx.ended(), Some("aborted after a refusal"));
    let e = tx.commit().await.unwrap_err();
    assert!(e.is_transaction_ended(), "{e:?}");
    assert!(!e.is_transient());
    tx.abort().await.unwrap();
    assert!(dump(&db, "nwi_payments").await.is_empty());
    assert_eq!(wallets(&db).await, empty);

    // Committed: two payments, one moved to the other wallet, one amount changed, with the
    // references' handle of another model joined in the same transaction.
    let tx = Transaction::start(&db).await.unwrap();
    let payments = Payment::collection(&db).in_transaction(&tx);
    payments.insert(&payment(1, "w1", 10.5)).await.unwrap();
    payments.insert(&payment(2, "w1", 4.25)).await.unwrap();
    payments
        .update(2, doc! { "$set": { "walletId": "w2", "amount": 1e15 } })
        .await
        .unwrap();
    payments.insert(&payment(3, "w2", -0.25)).await.unwrap();
    payments.delete(3).await.unwrap();
    // Not visible outside before the commit.
    assert!(dump(&db, "nwi_payments").await.is_empty());
    tx.commit().await.unwrap();
    assert_eq!(tx.ended(), Some("committed"));
    assert_eq!(
        wallets(&db).await,
        [("w1".to_string(), 10.5, 1), ("w2".to_string(), 1e15, 1)]
    );
    let p1 = raw_one(&db, "nwi_payments", 1i64).await.unwrap();
    assert_eq!(p1.get_str("memo").unwrap(), "$memo 1");

    // Outside a transaction, a field nothing computes from: the page's `update` 1.
    sent(&db);
    Payment::collection(&db)
        .update(1, doc! { "$set": { "memo": "$$NOW" } })
        .await
        .unwrap();
    assert_eq!(sent(&db), [("update".into(), "nwi_payments".into())]);
    let p1 = raw_one(&db, "nwi_payments", 1i64).await.unwrap();
    assert_eq!(
        p1.get_str("memo").unwrap(),
        "$$NOW",
        "an operator update's value is literal"
    );

    let report = Wallet::collection(&db).computed().check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
}

#[tokio::test]
async fn grid_bookings_counted_per_guest_with_hostile_holders() {
    let db = test_db_unvalidated("nwi_grid_counted").await;
    pattern_runtime::sync(&db)
        .models(&[RoomDay::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Guest::SCHEMA])
        .await
        .unwrap();
    for g in ["alice", "$where"] {
        Guest::collection(&db)
            .insert(&Guest {
                id: g.into(),
                nights: 0,
            })
            .await
            .unwrap();
    }
    let slots = RoomDay::collection(&db).slots();
    sent(&db);
    let days = ["2025-08-20", "2025-08-21", "2025-08-22"];
    slots
        .allocate(days.iter().map(|d| free("$101", d)))
        .await
        .unwrap();
    let cmds = sent(&db);
    // The page: `allocate` 2 (one listIndexes, one insert per 1 000 slots). Free slots are
    // counted for nobody, so nothing derived should be sent.
    assert_eq!(
        cmds,
        [
            ("listIndexes".into(), "nwi_room_days".into()),
            ("insert".into(), "nwi_room_days".into()),
        ],
        "allocate 2"
    );

    // A booking whose holder is counted: the booking and the count in one transaction.
    let booked = slots.book("$101", "2025-08-20", "alice").await.unwrap();
    assert_eq!(booked.booked_by.as_deref(), Some("alice"));
    let cmds = sent(&db);
    assert_eq!(count_named(&cmds, "commitTransaction"), 1, "{cmds:?}");
    assert!(
        cmds.iter()
            .any(|(n, t)| n == "findAndModify" && t == "nwi_room_days"),
        "{cmds:?}"
    );
    assert_eq!(nights(&db, "alice").await, 1);

    // A holder that reads like an operator is a literal guest id.
    slots.book("$101", "2025-08-21", "$where").await.unwrap();
    assert_eq!(nights(&db, "$where").await, 1);

    let grid_before = dump(&db, "nwi_room_days").await;
    let guests_before = dump(&db, "nwi_guests").await;
    // Hostile holders: an operator document, a value of another type, a guest that does not
    // exist.
    for holder in [
        Bson::Document(doc! { "$ne": null }),
        Bson::Document(doc! { "a.b": "x" }),
        Bson::Int32(5),
        Bson::String("nobody".into()),
    ] {
        let e = slots
            .book("$101", "2025-08-22", holder.clone())
            .await
            .unwrap_err();
        if holder == Bson::String("nobody".into()) {
            assert!(e.is_not_found() && !e.is_not_allocated(), "{holder}: {e:?}");
        } else {
            assert!(refused_value(&e), "{holder}: {e:?}");
        }
    }
    // A taken slot, and a slot never allocated.
    let e = slots
        .book("$101", "2025-08-20", "$where")
        .await
        .unwrap_err();
    assert!(e.is_already_booked(), "{e:?}");
    let e = slots.book("$101", "2031-01-01", "alice").await.unwrap_err();
    assert!(e.is_not_allocated(), "{e:?}");
    // A cancel by someone else.
    let e = slots
        .cancel("$101", "2025-08-20", "$where")
        .await
        .unwrap_err();
    assert!(e.is_not_holder(), "{e:?}");
    assert_eq!(dump(&db, "nwi_room_days").await, grid_before);
    assert_eq!(dump(&db, "nwi_guests").await, guests_before);

    // `book_all` in the caller's transaction with a computed write of another model, aborted.
    let tx = Transaction::start(&db).await.unwrap();
    slots
        .in_transaction(&tx)
        .book_all(&[("$101", "2025-08-22")], "alice")
        .await
        .unwrap();
    Guest::collection(&db)
        .in_transaction(&tx)
        .insert(&Guest {
            id: "carol".into(),
            nights: 0,
        })
        .await
        .unwrap();
    tx.abort().await.unwrap();
    assert_eq!(dump(&db, "nwi_room_days").await, grid_before);
    assert_eq!(dump(&db, "nwi_guests").await, guests_before);

    // Release moves the count back.
    slots.release("$101", "2025-08-21").await.unwrap();
    assert_eq!(nights(&db, "$where").await, 0);
    let free_days = slots
        .available("$101", "2025-08-20", "2025-08-23")
        .await
        .unwrap();
    assert_eq!(free_days.len(), 2);
    assert!(slots.check().await.unwrap().is_clean());
    assert!(Guest::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

//! The polymorphic pattern against the server, on the seed's notification system (多态模式): one
//! `notifications` collection holding email, sms and push notifications told apart by `type`; a
//! variant's insert with hostile keys and values.

use crate::support::{everything, synced};
use bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use pattern_runtime::{sync::IndexStatus, Error, Fields, Model, Polymorphic};
use pattern_testkit::{docs, test_db, test_db_unvalidated};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "notifications", derive(Clone, PartialEq))]
#[index(keys(created_at = -1))]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: ObjectId,
        to: String,
        subject: String,
        body: String,
        created_at: DateTime,
    },
    Sms {
        #[serde(rename = "_id")]
        id: ObjectId,
        phone_number: String,
        message: String,
        created_at: DateTime,
    },
    #[index(keys(device_id = 1))]
    Push {
        #[serde(rename = "_id")]
        id: ObjectId,
        device_id: String,
        title: String,
        content: String,
        created_at: DateTime,
    },
}

/// The seed's third query: push notifications projected to `{content, deviceId}`.
#[derive(Debug, PartialEq, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
#[projection(of = NotificationPush)]
struct PushContent {
    content: String,
    device_id: String,
}

fn at(s: &str) -> DateTime {
    DateTime::parse_rfc3339_str(s).unwrap()
}

/// The seed's three documents, as the enum.
fn seed() -> Vec<Notification> {
    vec![
        Notification::Email {
            id: ObjectId::new(),
            to: "[email protected]".into(),
            subject: "Welcome!".into(),
            body: "Thank you for registering.".into(),
            created_at: at("2025-08-01T12:00:00Z"),
        },
        Notification::Sms {
            id: ObjectId::new(),
            phone_number: "+1234567890".into(),
            message: "Your code is 123456".into(),
            created_at: at("2025-08-01T12:01:00Z"),
        },
        Notification::Push {
            id: ObjectId::new(),
            device_id: "abc123".into(),
            title: "New Message".into(),
            content: "You have a new message in your inbox.".into(),
            created_at: at("2025-08-01T12:02:00Z"),
        },
    ]
}

/// Inserts the seed through the variants' handles; returns the enum values.
async fn insert_seed(db: &mongodb::Database) -> Vec<Notification> {
    let notifications = Notification::collection(db);
    let all = seed();
    for n in &all {
        match n.clone() {
            Notification::Email { .. } => {
                let email = NotificationEmail::try_from(n.clone()).unwrap();
                notifications
                    .variant::<NotificationEmail>()
                    .insert(&email)
                    .await
                    .unwrap();
            }
            Notification::Sms { .. } => {
                let sms = NotificationSms::try_from(n.clone()).unwrap();
                notifications
                    .variant::<NotificationSms>()
                    .insert(&sms)
                    .await
                    .unwrap();
            }
            Notification::Push { .. } => {
                let push = NotificationPush::try_from(n.clone()).unwrap();
                notifications
                    .variant::<NotificationPush>()
                    .insert(&push)
                    .await
                    .unwrap();
            }
        }
    }
    all
}

fn id_of(n: &Notification) -> ObjectId {
    match n {
        Notification::Email { id, .. }
        | Notification::Sms { id, .. }
        | Notification::Push { id, .. } => *id,
    }
}

#[tokio::test]
async fn the_seed_round_trips_key_for_key() {
    let db = test_db("poly_round_trip").await;
    let all = insert_seed(&db).await;
    let raw = db.collection::<Document>("notifications");
    let mut stored: Vec<Document> = Vec::new();
    let mut cursor = raw
        .find(doc! {})
        .sort(doc! { "createdAt": 1 })
        .await
        .unwrap();
    while cursor.advance().await.unwrap() {
        stored.push(cursor.deserialize_current().unwrap());
    }
    let expected = [
        doc! {
            "_id": id_of(&all[0]), "type": "email", "to": "[email protected]",
            "subject": "Welcome!", "body": "Thank you for registering.",
            "createdAt": at("2025-08-01T12:00:00Z"),
        },
        doc! {
            "_id": id_of(&all[1]), "type": "sms", "phoneNumber": "+1234567890",
            "message": "Your code is 123456", "createdAt": at("2025-08-01T12:01:00Z"),
        },
        doc! {
            "_id": id_of(&all[2]), "type": "push", "deviceId": "abc123", "title": "New Message",
            "content": "You have a new message in your inbox.",
            "createdAt": at("2025-08-01T12:02:00Z"),
        },
    ];
    for (got, want) in stored.iter().zip(&expected) {
        // Key for key, in the seed's order.
        let got_keys: Vec<&String> = got.keys().collect();
        let want_keys: Vec<&String> = want.keys().collect();
        assert_eq!(got_keys, want_keys);
        assert_eq!(got, want);
    }
    assert_eq!(stored.len(), 3);

    // Read back as the enum: the same values.
    let notifications = Notification::collection(&db);
    let mut read = notifications.find(doc! {}).await.unwrap();
    read.sort_by_key(|n| match n {
        Notification::Email { created_at, .. }
        | Notification::Sms { created_at, .. }
        | Notification::Push { created_at, .. } => *created_at,
    });
    assert_eq!(read, all);
    assert_eq!(
        read.iter().map(Polymorphic::kind).collect::<Vec<_>>(),
        [
            NotificationKind::Email,
            NotificationKind::Sms,
            NotificationKind::Push
        ]
    );
}

#[tokio::test]
async fn the_seeds_three_queries_through_typed_calls() {
    let db = test_db("poly_queries").await;
    let all = insert_seed(&db).await;
    let notifications = Notification::collection(&db);

    // 1. Everything since a date, projected to {type, createdAt} (and _id).
    let since = at("2025-08-01T00:00:00Z");
    let mut common = notifications
        .find_common(doc! { Notification::FIELDS.created_at: { "$gte": since } })
        .await
        .unwrap();
    common.sort_by_key(|c| c.created_at);
    let got: Vec<(NotificationKind, ObjectId, DateTime)> = common
        .iter()
        .map(|c| (c.kind, c.id, c.created_at))
        .collect();
    assert_eq!(
        got,
        [
            (
                NotificationKind::Email,
                id_of(&all[0]),
                at("2025-08-01T12:00:00Z")
            ),
            (
                NotificationKind::Sms,
                id_of(&all[1]),
                at("2025-08-01T12:01:00Z")
            ),
            (
                NotificationKind::Push,
                id_of(&all[2]),
                at("2025-08-01T12:02:00Z")
            ),
        ]
    );
    assert_eq!(Notification::FIELDS.kind.as_str(), "type");

    // 2. All email notifications, as the email variant's struct.
    let emails = notifications
        .variant::<NotificationEmail>()
        .find(doc! {})
        .await
        .unwrap();
    assert_eq!(
        emails
            .into_iter()
            .map(Notification::from)
            .collect::<Vec<_>>(),
        [all[0].clone()]
    );

    // 3. Push notifications projected to {content, deviceId}.
    let pushes = notifications
        .variant::<NotificationPush>()
        .find_as::<PushContent>(doc! {})
        .await
        .unwrap();
    assert_eq!(
        pushes,
        [PushContent {
            content: "You have a new message in your inbox.".into(),
            device_id: "abc123".into(),
        }]
    );

    // Counts and updates stay within their variant.
    let sms = notifications.variant::<NotificationSms>();
    assert_eq!(sms.count(doc! {}).await.unwrap(), 1);
    let updated = notifications
        .variant::<NotificationPush>()
        .update_many(
            doc! {},
            doc! { "$set": { NotificationPush::FIELDS.title: "Read" } },
        )
        .await
        .unwrap();
    assert_eq!(updated.modified, 1);
    let raw = db.collection::<Document>("notifications");
    assert_eq!(
        raw.count_documents(doc! { "title": "Read" }).await.unwrap(),
        1
    );
}

#[tokio::test]
async fn a_variant_handle_refuses_to_touch_the_tag() {
    let db = test_db("poly_tag_guard").await;
    insert_seed(&db).await;
    let push = Notification::collection(&db).variant::<NotificationPush>();
    let e = push.find(doc! { "type": "sms" }).await.unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { ref key, .. } if key == "type"),
        "{e}"
    );
    let e = push
        .update_many(doc! {}, doc! { "$set": { "type": "sms" } })
        .await
        .unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { .. }),
        "{e}"
    );
    let e = push
        .update_many(doc! {}, doc! { "$rename": { "title": "type" } })
        .await
        .unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { .. }),
        "{e}"
    );
    let e = push
        .update_many(doc! {}, doc! { "title": "replaced" })
        .await
        .unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { .. }),
        "{e}"
    );
    // Nothing was written: still one push, untouched.
    let raw = db.collection::<Document>("notifications");
    assert_eq!(
        raw.count_documents(doc! { "type": "push", "title": "New Message" })
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        raw.count_documents(doc! { "type": "sms" }).await.unwrap(),
        1
    );
}

#[tokio::test]
async fn indexes_type_first_and_per_variant_partial() {
    let db = test_db("poly_indexes").await;
    let report = pattern_runtime::sync(&db)
        .models(&[Notification::SCHEMA])
        .await
        .unwrap();
    let declared: Vec<_> = report
        .indexes
        .iter()
        .filter(|i| !matches!(i.status, IndexStatus::Unmanaged { .. }))
        .collect();
    assert_eq!(declared.len(), 3, "{report:?}");
    assert!(
        declared
            .iter()
            .all(|i| matches!(i.status, IndexStatus::Created)),
        "{report:?}"
    );
    let specs: Vec<Document> = pattern_runtime::sync::list_indexes(&db, "notifications")
        .await
        .unwrap();
    let by_name = |name: &str| {
        specs
            .iter()
            .find(|s| s.get_str("name").ok() == Some(name))
            .cloned()
            .unwrap_or_else(|| panic!("no index {name}: {specs:?}"))
    };
    assert_eq!(
        by_name("type_1").get_document("key").unwrap(),
        &doc! { "type": 1 }
    );
    assert_eq!(
        by_name("createdAt_-1").get_document("key").unwrap(),
        &doc! { "createdAt": -1 }
    );
    let push = by_name("deviceId_1_push");
    assert_eq!(push.get_document("key").unwrap(), &doc! { "deviceId": 1 });
    assert_eq!(
        push.get_document("partialFilterExpression").unwrap(),
        &doc! { "type": "push" }
    );

    // A query of the push variant on deviceId uses the partial index.
    insert_seed(&db).await;
    let push = Notification::collection(&db).variant::<NotificationPush>();
    let filter = push
        .filter(doc! { NotificationPush::FIELDS.device_id: "abc123" })
        .unwrap();
    let explain = db
        .run_command(doc! {
            "explain": { "find": "notifications", "filter": filter },
            "verbosity": "queryPlanner",
        })
        .await
        .unwrap();
    let plan = explain
        .get_document("queryPlanner")
        .and_then(|q| q.get_document("winningPlan"))
        .unwrap()
        .to_string();
    assert!(plan.contains("IXSCAN"), "{plan}");
    assert!(plan.contains("deviceId_1_push"), "{plan}");
}

#[tokio::test]
async fn an_unknown_type_is_a_typed_error_and_the_rest_stays_readable() {
    let db = test_db_unvalidated("poly_unknown").await;
    let all = insert_seed(&db).await;
    let raw = db.collection::<Document>("notifications");
    let fax_id = ObjectId::new();
    raw.insert_one(
        doc! { "_id": fax_id, "type": "fax", "number": "+1", "createdAt": DateTime::now() },
    )
    .await
    .unwrap();
    let notifications = Notification::collection(&db);

    let e = notifications.find(doc! {}).await.unwrap_err();
    assert!(e.is_unknown_variant(), "{e:?}");
    match &e {
        pattern_runtime::Error::UnknownVariant { value, id, .. } => {
            assert_eq!(value.as_deref(), Some("fax"));
            assert_eq!(id.as_deref(), Some(&Bson::ObjectId(fax_id)));
        }
        other => panic!("{other:?}"),
    }
    let message = e.to_string();
    assert!(
        message.contains("`type: fax`") && message.contains(&fax_id.to_hex()),
        "{message}"
    );

    let each = notifications.find_each(doc! {}).await.unwrap();
    assert_eq!(each.len(), 4);
    let mut ok: Vec<ObjectId> = each
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(id_of)
        .collect();
    ok.sort();
    let mut want: Vec<ObjectId> = all.iter().map(id_of).collect();
    want.sort();
    assert_eq!(ok, want);
    assert_eq!(each.iter().filter(|r| r.is_err()).count(), 1);

    // The variants' handles never meet it.
    assert_eq!(
        notifications
            .variant::<NotificationSms>()
            .find(doc! {})
            .await
            .unwrap()
            .len(),
        1
    );
}

/// With a `#[serde(other)]` variant, unknown tags read as it.
#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(tag = "kind")]
#[model(collection = "events")]
enum Event {
    Click {
        #[serde(rename = "_id")]
        id: u32,
        x: i32,
    },
    #[serde(other)]
    Unknown,
}

#[tokio::test]
async fn a_catch_all_reads_unknown_tags() {
    let db = test_db("poly_catch_all").await;
    let raw = db.collection::<Document>("events");
    raw.insert_many([
        doc! { "_id": 1, "kind": "Click", "x": 3 },
        doc! { "_id": 2, "kind": "Scroll", "dy": 10 },
    ])
    .await
    .unwrap();
    let events = Event::collection(&db).find(doc! {}).await.unwrap();
    assert_eq!(events.len(), 2);
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Click { id: 1, x: 3 })));
    assert!(events.iter().any(|e| matches!(e, Event::Unknown)));
    assert_eq!(EventKind::Unknown.tag(), None);
    assert_eq!(EventKind::Click.tag(), Some("Click"));
}

/// Eight writers insert notifications of every variant while others update the pushes: each
/// variant ends with exactly what was inserted into it, and the updates touched pushes only.
#[tokio::test]
async fn concurrent_writers_stay_within_their_variants() {
    let db = test_db("poly_concurrent").await;
    pattern_runtime::sync(&db)
        .models(&[Notification::SCHEMA])
        .await
        .unwrap();
    let notifications = Notification::collection(&db);
    let mut tasks = Vec::new();
    for w in 0..8u32 {
        let n = notifications.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..25u32 {
                let created_at = DateTime::from_millis(i64::from(w * 1000 + i));
                match i % 3 {
                    0 => {
                        n.variant::<NotificationEmail>()
                            .insert(&NotificationEmail {
                                id: ObjectId::new(),
                                to: format!("w{w}@example.com"),
                                subject: "s".into(),
                                body: "b".into(),
                                created_at,
                            })
                            .await
                            .unwrap();
                    }
                    1 => {
                        n.variant::<NotificationSms>()
                            .insert(&NotificationSms {
                                id: ObjectId::new(),
                                phone_number: format!("+{w}"),
                                message: "m".into(),
                                created_at,
                            })
                            .await
                            .unwrap();
                    }
                    _ => {
                        n.variant::<NotificationPush>()
                            .insert(&NotificationPush {
                                id: ObjectId::new(),
                                device_id: format!("d{w}"),
                                title: "t".into(),
                                content: "c".into(),
                                created_at,
                            })
                            .await
                            .unwrap();
                        // Every push so far gets `title: "seen"`; no other variant may.
                        n.variant::<NotificationPush>()
                            .update_many(doc! {}, doc! { "$set": { "title": "seen" } })
                            .await
                            .unwrap();
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // 25 per writer: i % 3 == 0 nine times, == 1 eight times, == 2 eight times.
    assert_eq!(
        notifications
            .variant::<NotificationEmail>()
            .count(doc! {})
            .await
            .unwrap(),
        8 * 9
    );
    assert_eq!(
        notifications
            .variant::<NotificationSms>()
            .count(doc! {})
            .await
            .unwrap(),
        8 * 8
    );
    let pushes = notifications.variant::<NotificationPush>();
    assert_eq!(pushes.count(doc! {}).await.unwrap(), 8 * 8);
    assert_eq!(pushes.count(doc! { "title": "seen" }).await.unwrap(), 8 * 8);
    let raw = db.collection::<Document>("notifications");
    assert_eq!(
        raw.count_documents(doc! { "title": { "$exists": true }, "type": { "$ne": "push" } })
            .await
            .unwrap(),
        0
    );
    assert_eq!(notifications.find(doc! {}).await.unwrap().len(), 8 * 25);
}

/// A variant's handle has the model handle's `get` and `replace`: each finds the variant's own
/// document by `_id`, never another variant's, and `replace` keeps the tag.
#[tokio::test]
async fn a_variant_handle_gets_and_replaces_its_own_documents_only() {
    let db = test_db("poly_get_replace").await;
    let all = insert_seed(&db).await;
    let (email_id, sms_id) = (id_of(&all[0]), id_of(&all[1]));
    let emails = NotificationEmail::collection(&db);
    let got = emails.get(email_id).await.unwrap().unwrap();
    assert_eq!(Notification::from(got.clone()), all[0]);
    // The sms's `_id` through the email handle: no such email.
    assert!(emails.get(sms_id).await.unwrap().is_none());
    assert!(emails.get(ObjectId::new()).await.unwrap().is_none());

    let raw = db.collection::<Document>("notifications");
    let keys = |d: &Document| d.keys().cloned().collect::<Vec<_>>();
    let inserted = raw
        .find_one(doc! { "_id": email_id })
        .await
        .unwrap()
        .unwrap();
    let mut changed = got.clone();
    changed.subject = "Welcome back!".into();
    let written = emails.replace(&changed).await.unwrap();
    assert_eq!(written.id, Bson::ObjectId(email_id));
    let stored = raw
        .find_one(doc! { "_id": email_id })
        .await
        .unwrap()
        .unwrap();
    // Stored as the insert stored it (`_id`, then the tag, then the fields).
    assert_eq!(keys(&stored), keys(&inserted));
    assert_eq!(stored.get_str("type").unwrap(), "email");
    assert_eq!(stored.get_str("subject").unwrap(), "Welcome back!");

    // An email holding the sms's `_id` replaces nothing: NotFound, the sms untouched.
    let before = every_document(&raw).await;
    let mut forged = changed.clone();
    forged.id = sms_id;
    let e = emails.replace(&forged).await.unwrap_err();
    assert!(matches!(e, pattern_runtime::Error::NotFound { .. }), "{e}");
    forged.id = ObjectId::new();
    let e = emails.replace(&forged).await.unwrap_err();
    assert!(matches!(e, pattern_runtime::Error::NotFound { .. }), "{e}");
    let after = every_document(&raw).await;
    assert_eq!(before, after, "nothing written");
}

/// A variant's handle refuses an update of `_id` as the model's handle does (`InvalidKey`,
/// nothing sent); it used to send it and return the server's untyped error (code 66). A
/// `doc!` update's stored values are checked there too.
#[tokio::test]
async fn a_variant_handle_checks_an_update_as_the_model_handle_does() {
    let db = test_db("poly_update_checks").await;
    let all = insert_seed(&db).await;
    let email_id = id_of(&all[0]);
    let emails = NotificationEmail::collection(&db);
    let raw = db.collection::<Document>("notifications");
    let before = every_document(&raw).await;
    let new_id = doc! { "$set": { "_id": ObjectId::new() } };
    let e = emails.update(email_id, new_id.clone()).await.unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { ref key, .. } if key == "_id"),
        "{e:?}"
    );
    let e = emails.update_many(doc! {}, new_id).await.unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidKey { ref key, .. } if key == "_id"),
        "{e:?}"
    );
    let e = emails
        .update(email_id, doc! { "$max": { "subject": { "$x": 1 } } })
        .await
        .unwrap_err();
    assert!(
        matches!(e, pattern_runtime::Error::InvalidValue { .. }),
        "{e:?}"
    );
    assert_eq!(every_document(&raw).await, before, "nothing written");
}

/// Every stored document of `raw`, in the server's order.
async fn every_document(raw: &mongodb::Collection<Document>) -> Vec<Document> {
    use futures_util::TryStreamExt;
    raw.find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_bound_variant_handle_reads_its_transactions_writes() {
    let db = test_db("poly_in_transaction").await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    let every = Notification::collection(&db).in_transaction(&tx);
    let pushes = every.variant::<NotificationPush>();
    let push = NotificationPush {
        id: ObjectId::new(),
        device_id: "d-1".into(),
        title: "hi".into(),
        content: "in the transaction".into(),
        created_at: at("2024-01-01T00:00:00Z"),
    };
    pushes.insert(&push).await.unwrap();

    // Every read of the bound handles sees the transaction's own insert...
    assert_eq!(pushes.find(doc! {}).await.unwrap().len(), 1);
    assert!(pushes.find_one(doc! {}).await.unwrap().is_some());
    assert!(pushes.get(push.id).await.unwrap().is_some());
    assert_eq!(pushes.count(doc! {}).await.unwrap(), 1);
    let projected = pushes.find_as::<PushContent>(doc! {}).await.unwrap();
    assert_eq!(projected[0].content, "in the transaction");
    assert_eq!(every.find_common(doc! {}).await.unwrap().len(), 1);

    // ... which no handle outside it sees before the commit.
    let outside = NotificationPush::collection(&db);
    assert_eq!(outside.count(doc! {}).await.unwrap(), 0);
    assert!(outside.get(push.id).await.unwrap().is_none());
    tx.commit().await.unwrap();
    assert_eq!(outside.count(doc! {}).await.unwrap(), 1);
}

// A variant's insert with hostile keys and values.

/// A polymorphic model.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(group = "nsh", collection = "nsh_events")]
pub enum NshEvent {
    Note {
        #[serde(rename = "_id")]
        id: String,
        text: String,
        attrs: BTreeMap<String, String>,
    },
    Blob {
        #[serde(rename = "_id")]
        id: String,
        meta: Document,
    },
}

// ---------------------------------------------------------------------------------------------
// 4. VariantCollection::insert with hostile values
// ---------------------------------------------------------------------------------------------

fn note(id: &str, text: &str, attrs: &[(&str, &str)]) -> NshEventNote {
    NshEventNote {
        id: id.into(),
        text: text.into(),
        attrs: attrs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

#[tokio::test]
async fn variant_insert_hostile_values() {
    let db = synced("nsh_variant").await;
    let events = NshEvent::collection(&db);
    let notes = events.variant::<NshEventNote>();
    let blobs = events.variant::<NshEventBlob>();

    // Strings starting with `$`, in values and as the id: stored literally.
    let id = notes
        .insert(&note("$id", "$where", &[("plain", "$set"), ("k", "a.b")]))
        .await
        .unwrap();
    assert_eq!(id.id, Bson::String("$id".into()));
    let stored = docs(&db, "nsh_events").await;
    assert_eq!(stored.len(), 1);
    let d = &stored[0];
    // `document`: "the tag first, then the variant's fields".
    let form = notes
        .document(&note("$id", "$where", &[("plain", "$set"), ("k", "a.b")]))
        .unwrap();
    assert_eq!(
        form.keys().next().map(String::as_str),
        Some("type"),
        "{form}"
    );
    assert_eq!(d.get_str("type").unwrap(), "note");
    assert_eq!(d.get_str("text").unwrap(), "$where");
    assert_eq!(
        d.get_document("attrs").unwrap(),
        &doc! { "k": "a.b", "plain": "$set" }
    );
    // Read back through the variant, filter by the `$` string as data.
    let back = notes.find(doc! { "text": "$where" }).await.unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].attrs["plain"], "$set");
    let before = everything(&db).await;

    // Hostile keys: refused (InvalidValue per "What the toolkit sends"), nothing written.
    for key in ["$gt", "$", "a.b", ".", "nul\0key"] {
        let r = notes
            .insert(&note(&format!("k-{key}"), "t", &[(key, "v")]))
            .await;
        match r {
            Err(e) => assert!(
                matches!(e, Error::InvalidValue { .. }),
                "key {key:?}: {e:?}"
            ),
            Ok(id) => panic!("key {key:?} accepted as {id}"),
        }
    }
    // A nested operator document in a Document field.
    for meta in [
        doc! { "$where": "sleep(1000)" },
        doc! { "ok": { "$ne": null } },
        doc! { "a": { "b.c": 1 } },
    ] {
        let r = blobs
            .insert(&NshEventBlob {
                id: format!("b-{meta}"),
                meta: meta.clone(),
            })
            .await;
        match r {
            Err(e) => assert!(matches!(e, Error::InvalidValue { .. }), "{meta}: {e:?}"),
            Ok(id) => panic!("{meta} accepted as {id}"),
        }
    }
    // Nesting past MAX_VALUE_DEPTH.
    let mut deep = doc! { "leaf": 1 };
    for _ in 0..=pattern_runtime::limits::MAX_VALUE_DEPTH {
        deep = doc! { "n": deep };
    }
    let e = blobs
        .insert(&NshEventBlob {
            id: "deep".into(),
            meta: deep,
        })
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidValue { .. }), "{e:?}");
    // insert_many: every value checked before the first is written.
    let e = notes
        .insert_many(&[note("m1", "fine", &[]), note("m2", "bad", &[("$inc", "1")])])
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidValue { .. }), "{e:?}");
    assert_eq!(before, everything(&db).await, "nothing written");

    // A duplicate `$id`: DuplicateKey, not NotFound, nothing written.
    let e = notes.insert(&note("$id", "again", &[])).await.unwrap_err();
    assert!(e.is_duplicate_key(), "{e:?}");
    assert_eq!(e.missing(), None);
    assert_eq!(before, everything(&db).await, "nothing written");
}

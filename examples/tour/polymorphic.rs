//! Chapter 6: the polymorphic pattern.
//!
//! A notification system: one `notifications` collection holding email, sms
//! and push notifications, told apart by `type`; every one has `_id`, `type` and `createdAt`. The
//! enum is the model: each variant has a typed handle that adds `{type: ...}` to what it reads and
//! writes, and a query over every variant reads the common fields.

use bson::{doc, oid::ObjectId, DateTime, Document};
use futures_util::TryStreamExt;
use pattern_runtime::query::Filter;
use pattern_runtime::{Error, Fields, Model, Polymorphic, SyncOptions};
use serde::{Deserialize, Serialize};

/// `notifications`: three shapes in one collection, newest first across all of them; push
/// notifications are also looked up by device.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(group = "polymorphic", collection = "notifications")]
#[index(keys(created_at = -1))]
pub enum Notification {
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
    // Only push notifications have a device: `partialFilterExpression: {type: "push"}`.
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

/// The third query reads push notifications as `{content, deviceId}`.
#[derive(Debug, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
#[projection(of = NotificationPush)]
pub struct PushContent {
    pub content: String,
    pub device_id: String,
}

fn at(s: &str) -> Result<DateTime, bson::error::Error> {
    DateTime::parse_rfc3339_str(s)
}

fn time(t: DateTime) -> String {
    t.try_to_rfc3339_string().unwrap_or_else(|_| t.to_string())
}

/// One line per notification, whatever its variant.
fn describe(n: &Notification) -> String {
    let tag = n.kind().tag().unwrap_or("?");
    match n {
        Notification::Email { to, subject, .. } => format!("{tag:<5} to {to}: {subject:?}"),
        Notification::Sms {
            phone_number,
            message,
            ..
        } => format!("{tag:<5} to {phone_number}: {message:?}"),
        Notification::Push {
            device_id, title, ..
        } => format!("{tag:<5} to device {device_id}: {title:?}"),
    }
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("Chapter 6: polymorphic, one collection of several shapes");
    let db = crate::chapter_db(client, "polymorphic").await?;
    pattern_runtime::sync(&db)
        .group("polymorphic")
        .options(&SyncOptions::new())
        .await?;
    // `type_1` is declared by the derive: no enum index starts with the tag, and every variant's
    // handle filters on it.
    for index in pattern_runtime::sync::list_indexes(&db, "notifications").await? {
        println!("  notifications index: {index}");
    }

    let notifications = Notification::collection(&db);
    let emails = NotificationEmail::collection(&db);
    let sms = NotificationSms::collection(&db);
    let pushes = NotificationPush::collection(&db);
    emails
        .insert(&NotificationEmail {
            id: ObjectId::new(),
            to: "user@example.com".into(),
            subject: "Welcome!".into(),
            body: "Thank you for registering.".into(),
            created_at: at("2025-08-01T12:00:00Z")?,
        })
        .await?;
    sms.insert(&NotificationSms {
        id: ObjectId::new(),
        phone_number: "+1234567890".into(),
        message: "Your code is 123456".into(),
        created_at: at("2025-08-01T12:01:00Z")?,
    })
    .await?;
    pushes
        .insert(&NotificationPush {
            id: ObjectId::new(),
            device_id: "abc123".into(),
            title: "New Message".into(),
            content: "You have a new message in your inbox.".into(),
            created_at: at("2025-08-01T12:02:00Z")?,
        })
        .await?;
    let raw = db.collection::<Document>("notifications");
    let stored: Vec<Document> = raw
        .find(doc! {})
        .sort(doc! { "createdAt": 1 })
        .await?
        .try_collect()
        .await?;
    println!("\nThree notifications, inserted through the variants' handles, as stored:");
    for d in &stored {
        println!("  {d}");
    }
    println!(
        "  per variant (count through each handle): email {}, sms {}, push {}",
        emails.count(Filter::default()).await?,
        sms.count(Filter::default()).await?,
        pushes.count(Filter::default()).await?
    );

    let since = at("2025-08-01T00:00:00Z")?;
    let filter = doc! { Notification::FIELDS.created_at: { "$gte": since } };
    println!(
        "\nfind_common({filter}): every variant, projected to {:?}",
        <NotificationCommon as Fields>::KEYS
    );
    for n in notifications.find_common(filter).await? {
        println!(
            "  {:<5} {} at {}",
            n.kind.tag().unwrap_or("?"),
            n.id,
            time(n.created_at)
        );
    }

    println!(
        "\nNotificationEmail::collection(&db).find({{}}): the handle filters on {}",
        emails.filter(doc! {})?
    );
    for e in emails.find(Filter::default()).await? {
        println!(
            "  to {}: {:?}, {:?}, at {}",
            e.to,
            e.subject,
            e.body,
            time(e.created_at)
        );
    }

    println!("\nNotificationPush::collection(&db).find_as::<PushContent>({{}}):");
    for p in pushes.find_as::<PushContent>(doc! {}).await? {
        println!(
            "  {{content: {:?}, deviceId: {:?}}}",
            p.content, p.device_id
        );
    }

    // A newer version of the application writes a kind this one does not know. This version's
    // validator refuses it; the newer one would install its own (here it bypasses ours).
    let fax = ObjectId::new();
    let fax_doc = doc! {
        "_id": fax,
        "type": "fax",
        "faxNumber": "+1234567899",
        "pages": 2,
        "createdAt": at("2025-08-01T12:03:00Z")?,
    };
    match raw.insert_one(fax_doc.clone()).await.map_err(Error::from) {
        Err(Error::ValidationFailed { fields, .. }) => println!(
            "\nA {{type: \"fax\"}} document, which the enum does not know, is refused by the \
             collection's validator (failing: {})",
            fields.join(", ")
        ),
        other => return Err(format!("expected the validator's refusal, got {other:?}").into()),
    }
    raw.insert_one(fax_doc)
        .bypass_document_validation(true)
        .await?;
    println!("A newer version of the application, with a validator of its own, inserts it anyway.");
    match notifications.find(Filter::default()).await {
        Err(e @ Error::UnknownVariant { .. }) => println!("  find fails: {e}"),
        Err(e) => return Err(e.into()),
        Ok(all) => println!("  unexpected: find read {} notifications", all.len()),
    }
    println!("  find_each reads the others, one result per document:");
    for r in notifications.find_each(doc! {}).await? {
        match r {
            Ok(n) => println!("    ok    {}", describe(&n)),
            Err(e) => println!("    error {e}"),
        }
    }
    println!(
        "  the handles never meet it: email {}, sms {}, push {}",
        emails.count(Filter::default()).await?,
        sms.count(Filter::default()).await?,
        pushes.count(Filter::default()).await?
    );
    Ok(())
}

//! A polymorphic enum combined with other patterns, each handle reached from the model's type
//! ("One way in": `Type::collection(&db)`):
//!
//! - variants counted per member (`#[computed(count = Enum, by = ..)]`) and kept in a subset
//!   whose full items are the enum: every variant write keeps the count and the subset;
//! - round trips of polymorphic operations (counted with `take_commands()`) on an enum nothing
//!   derives from, and on one that is a computed source and a subset's full items.

use crate::support::{count_named, dump, raw_one, refused_key, refused_value, sent};
use bson::{doc, Document};
use pattern_runtime::Model;
use pattern_testkit::{test_db, TestDb};
use serde::{Deserialize, Serialize};

/// [`dump`] as text: NaN compares equal to itself there, as a stored copy of it should.
async fn snap(db: &TestDb, collection: &str) -> String {
    format!("{:?}", dump(db, collection).await)
}

// ---------------------------------------------------------------------------------------------
// 1, 2: a polymorphic activity log, counted per member and kept in a feed's subset
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "nwi_activities", derive(Clone, PartialEq))]
pub enum Activity {
    Comment {
        #[serde(rename = "_id")]
        id: String,
        user_id: String,
        at: i64,
        text: String,
        meta: Option<Document>,
    },
    Like {
        #[serde(rename = "_id")]
        id: String,
        user_id: String,
        at: i64,
        target: String,
        weight: f64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_members")]
pub struct Member {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    #[computed(count = Activity, by = user_id)]
    pub activity_count: i64,
}

/// One activity as a feed embeds it.
#[derive(Debug, Clone, Serialize, Deserialize, pattern_runtime::Fields)]
#[serde(rename_all = "camelCase")]
pub struct ActivityLine {
    pub activity_id: String,
    pub at: i64,
}

impl From<&Activity> for ActivityLine {
    fn from(a: &Activity) -> Self {
        match a {
            Activity::Comment { id, at, .. } | Activity::Like { id, at, .. } => ActivityLine {
                activity_id: id.clone(),
                at: *at,
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_feeds")]
pub struct Feed {
    #[serde(rename = "_id")]
    pub id: String,
    #[subset(limit = 2, sort(at = -1), full = Activity, parent = user_id)]
    pub recent: Vec<ActivityLine>,
    #[summary(count = recent)]
    pub total: i64,
}

/// A polymorphic model nothing derives from, with document-shaped ids.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "nwi_notices")]
pub enum Notice {
    Banner {
        #[serde(rename = "_id")]
        id: Document,
        text: String,
        shown: i64,
    },
    Popup {
        #[serde(rename = "_id")]
        id: Document,
        text: String,
        delay_ms: i64,
    },
}

async fn members_and_feeds(db: &TestDb, ids: &[&str]) {
    pattern_runtime::sync(db)
        .models(&[Member::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(db)
        .models(&[Feed::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(db)
        .models(&[Activity::SCHEMA])
        .await
        .unwrap();
    for id in ids {
        Member::collection(db)
            .insert(&Member {
                id: id.to_string(),
                name: format!("member {id}"),
                activity_count: 0,
            })
            .await
            .unwrap();
        Feed::collection(db)
            .insert(&Feed {
                id: id.to_string(),
                recent: vec![],
                total: 0,
            })
            .await
            .unwrap();
    }
}

async fn activity_count(db: &TestDb, id: &str) -> i64 {
    Member::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
        .activity_count
}

async fn feed(db: &TestDb, id: &str) -> Feed {
    Feed::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
}

fn comment(id: &str, user: &str, at: i64, text: &str, meta: Option<Document>) -> ActivityComment {
    ActivityComment {
        id: id.into(),
        user_id: user.into(),
        at,
        text: text.into(),
        meta,
    }
}

/// Variants written through `ActivityComment::collection(&db)` / `ActivityLike::collection(&db)`
/// keep a count on another model and a subset whose full items are the enum, with hostile
/// strings stored literally and hostile keys refused.
#[tokio::test]
async fn variant_writes_keep_member_count_and_feed_subset() {
    let db = test_db("nwi_variant_count").await;
    members_and_feeds(&db, &["u1", "u2"]).await;

    let comments = ActivityComment::collection(&db);
    let likes = ActivityLike::collection(&db);

    // Strings that look like operators or paths are data.
    comments
        .insert(&comment(
            "a1",
            "u1",
            10,
            "$where: 1",
            Some(doc! { "k": "$gt", "n": "$$ROOT" }),
        ))
        .await
        .unwrap();
    // NaN in a field nothing sums is stored as it is.
    likes
        .insert(&ActivityLike {
            id: "a2".into(),
            user_id: "u1".into(),
            at: 20,
            target: "$a1".into(),
            weight: f64::NAN,
        })
        .await
        .unwrap();
    comments
        .insert(&comment("a3", "u1", 30, "third", None))
        .await
        .unwrap();

    let a1 = raw_one(&db, "nwi_activities", "a1").await.unwrap();
    assert_eq!(a1.get_str("type").unwrap(), "comment");
    assert_eq!(a1.get_str("text").unwrap(), "$where: 1");
    assert_eq!(
        a1.get_document("meta").unwrap(),
        &doc! { "k": "$gt", "n": "$$ROOT" }
    );
    let a2 = raw_one(&db, "nwi_activities", "a2").await.unwrap();
    assert!(a2.get_f64("weight").unwrap().is_nan());
    assert_eq!(a2.get_str("target").unwrap(), "$a1");

    assert_eq!(activity_count(&db, "u1").await, 3);
    let f = feed(&db, "u1").await;
    assert_eq!(f.total, 3);
    let ids: Vec<_> = f.recent.iter().map(|l| l.activity_id.as_str()).collect();
    assert_eq!(ids, ["a3", "a2"], "the two newest, newest first");

    // Hostile input refused before anything is written.
    let before = snap(&db, "nwi_activities").await;
    let members_before = snap(&db, "nwi_members").await;
    let feeds_before = snap(&db, "nwi_feeds").await;
    // A member that does not exist (and whose name reads like an operator).
    let e = comments
        .insert(&comment("a4", "$where", 40, "x", None))
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    // Keys that are operators or paths inside a stored value.
    let e = comments
        .insert(&comment("a5", "u1", 50, "x", Some(doc! { "$gt": "" })))
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    let e = comments
        .insert(&comment("a6", "u1", 60, "x", Some(doc! { "a.b": 1 })))
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    // An update may not touch the tag, nor filter on it, nor store an operator.
    let e = comments
        .update("a1", doc! { "$set": { "type": "like" } })
        .await
        .unwrap_err();
    assert!(refused_key(&e), "{e:?}");
    let e = comments
        .update_many(doc! { "type": "like" }, doc! { "$set": { "text": "y" } })
        .await
        .unwrap_err();
    assert!(refused_key(&e), "{e:?}");
    let e = comments
        .update(
            "a1",
            doc! { "$set": { "meta": { "$where": "sleep(1000)" } } },
        )
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    let e = comments
        .update("a1", doc! { "$set": { "meta": { "x.y": 1 } } })
        .await
        .unwrap_err();
    assert!(refused_value(&e), "{e:?}");
    // Moving an activity to a member that does not exist.
    let e = comments
        .update("a1", doc! { "$set": { "userId": "nobody" } })
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(snap(&db, "nwi_activities").await, before);
    assert_eq!(snap(&db, "nwi_members").await, members_before);
    assert_eq!(snap(&db, "nwi_feeds").await, feeds_before);

    // Moving an activity between members moves the count and both feeds.
    comments
        .update("a3", doc! { "$set": { "userId": "u2" } })
        .await
        .unwrap();
    assert_eq!(activity_count(&db, "u1").await, 2);
    assert_eq!(activity_count(&db, "u2").await, 1);
    let ids: Vec<_> = feed(&db, "u1")
        .await
        .recent
        .iter()
        .map(|l| l.activity_id.clone())
        .collect();
    assert_eq!(ids, ["a2", "a1"]);
    assert_eq!(feed(&db, "u2").await.total, 1);

    // A variant's delete_many takes only its own variant, and the counts follow.
    let gone = likes.delete_many(doc! { "userId": "u1" }).await.unwrap();
    assert_eq!(gone, 1);
    assert_eq!(activity_count(&db, "u1").await, 1);
    assert_eq!(feed(&db, "u1").await.total, 1);
    assert_eq!(comments.count(doc! {}).await.unwrap(), 2);

    // The enum's own handle reads every variant; the checks agree with what was written.
    let all = Activity::collection(&db).find(doc! {}).await.unwrap();
    assert_eq!(all.len(), 2);
    assert!(Member::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    assert!(Feed::collection(&db)
        .subset(Feed::FIELDS.recent)
        .check()
        .await
        .unwrap()
        .is_clean());
}

/// The page's figures for the polymorphic row (`insert` 1, `find` 1, `update_one` 1,
/// `find_common` 1) on an enum nothing derives from, with document ids; and a variant insert
/// when another model counts the enum: the derived writes join one transaction.
#[tokio::test]
async fn variant_round_trips_with_and_without_derived_data() {
    let db = test_db("nwi_variant_round_trips").await;
    pattern_runtime::sync(&db)
        .models(&[Notice::SCHEMA])
        .await
        .unwrap();
    members_and_feeds(&db, &["u1"]).await;
    sent(&db);

    let banners = NoticeBanner::collection(&db);
    let banner_id = doc! { "site": "shop", "slot": "$top" };
    banners
        .insert(&NoticeBanner {
            id: banner_id.clone(),
            text: "$5 off".into(),
            shown: 0,
        })
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(cmds, [("insert".into(), "nwi_notices".into())], "insert 1");

    let found = banners.find(doc! { "_id": &banner_id }).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].text, "$5 off");
    assert_eq!(sent(&db), [("find".into(), "nwi_notices".into())], "find 1");

    banners
        .update(&banner_id, doc! { "$inc": { "shown": 1 } })
        .await
        .unwrap();
    assert_eq!(
        sent(&db),
        [("update".into(), "nwi_notices".into())],
        "update_one 1"
    );

    let common = Notice::collection(&db).find_common(doc! {}).await.unwrap();
    assert_eq!(common.len(), 1);
    assert_eq!(
        sent(&db),
        [("find".into(), "nwi_notices".into())],
        "find_common 1"
    );

    // An operator-shaped document as the `_id`: refused, nothing sent.
    for bad in [
        doc! { "$gt": "" },
        doc! { "site": { "$ne": null } },
        doc! { "a.b": 1 },
    ] {
        let e = banners
            .insert(&NoticeBanner {
                id: bad.clone(),
                text: "x".into(),
                shown: 0,
            })
            .await
            .unwrap_err();
        assert!(refused_value(&e), "{bad}: {e:?}");
    }
    assert!(sent(&db).is_empty(), "a refused insert sends nothing");
    assert_eq!(dump(&db, "nwi_notices").await.len(), 1);
    sent(&db);

    // A variant of an enum that another model counts (and a subset holds): the insert and the
    // derived writes in one transaction, committed once.
    ActivityComment::collection(&db)
        .insert(&comment("a1", "u1", 1, "hi", None))
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(count_named(&cmds, "commitTransaction"), 1, "{cmds:?}");
    assert_eq!(cmds.last().unwrap().0, "commitTransaction", "{cmds:?}");
    assert_eq!(
        cmds.iter()
            .filter(|(n, t)| n == "insert" && t == "nwi_activities")
            .count(),
        1,
        "{cmds:?}"
    );
    assert!(
        cmds.iter()
            .any(|(n, t)| n == "update" && t == "nwi_members"),
        "{cmds:?}"
    );
    assert!(cmds.iter().any(|(_, t)| t == "nwi_feeds"), "{cmds:?}");
    assert_eq!(count_named(&cmds, "abortTransaction"), 0, "{cmds:?}");
    assert_eq!(activity_count(&db, "u1").await, 1);
    sent(&db);

    // A read of the counted enum is still one command.
    let mine = ActivityComment::collection(&db)
        .find(doc! { "userId": "u1" })
        .await
        .unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(sent(&db), [("find".into(), "nwi_activities".into())]);
}

//! Typed ids ("What the toolkit sends", `IntoId`, `Model::Id`,
//! `Preallocated::Resource`/`Slot`): models that combine several patterns, each
//! given integer literals, `&str`s, strings that look like operators or paths, and hostile
//! values (operator documents, regexes, arrays, dotted or NUL keys, deep nesting) as ids,
//! holders and `$set`/`$setOnInsert` values.
//!
//! Every refusal is checked against the raw BSON of every collection of the test's database,
//! before and after: nothing written.
//!
//! A NUL key reaches no driver as a BSON encoding error: it is `InvalidValue` through the
//! versioned update, `References::replace` and `Tree::insert` too (three bugs fixed since).

use pattern_runtime::At;
use pattern_testkit::docs;
use std::marker::PhantomData;

use crate::support::{dump, raw_one, refused_key, refused_value, sent};
use bson::oid::ObjectId;
use bson::{doc, Bson, Document};
use pattern_runtime::approximation::{BatchedCounter, SampledCounter};
use pattern_runtime::{limits::MAX_VALUE_DEPTH, sync, Error, Fields, IntoId, Model, SyncOptions};
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

async fn synced(name: &str) -> TestDb {
    synced_in(test_db(name).await).await
}

/// [`synced`] in `db`.
async fn synced_in(db: TestDb) -> TestDb {
    sync(&db)
        .group("nti")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// The raw document `id` of `collection`.
async fn one(db: &TestDb, collection: &str, id: impl Into<Bson>) -> Document {
    let id = id.into();
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id.clone() })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no {id} in {collection}"))
}

/// Every document of every collection of the database, as raw BSON (compared as text so a
/// difference prints).
async fn everything(db: &TestDb) -> String {
    let mut names = db.list_collection_names().await.unwrap();
    names.sort();
    let mut out = String::new();
    for c in names {
        out.push_str(&format!("{c}: {:?}\n", docs(db, &c).await));
    }
    out
}

fn int(d: &Document, key: &str) -> i64 {
    match d.get(key) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("{key} is {other:?} in {d}"),
    }
}

fn is_invalid_value<T: std::fmt::Debug>(what: &str, r: pattern_runtime::Result<T>) {
    match r {
        Err(Error::InvalidValue { .. }) => {}
        other => panic!("{what}: expected Error::InvalidValue, got {other:?}"),
    }
}

/// A document nested `depth` levels deep: `{d: {d: ... {d: 1}}}`.
fn nested(depth: usize) -> Document {
    let mut d = doc! { "d": 1 };
    for _ in 1..depth {
        d = doc! { "d": d };
    }
    d
}

fn regex(pattern: &str) -> Bson {
    Bson::RegularExpression(bson::Regex {
        pattern: bson::raw::CString::try_from(pattern).unwrap(),
        options: bson::raw::CString::try_from("").unwrap(),
    })
}

/// Ids that must never reach a filter: operators, patterns, arrays, dotted or NUL keys, and
/// nesting past the documented depth.
fn hostile_ids() -> Vec<(&'static str, Bson)> {
    vec![
        ("operator", Bson::Document(doc! { "$gt": "" })),
        (
            "$in operator",
            Bson::Document(doc! { "$in": ["$where", 5] }),
        ),
        ("$where operator", Bson::Document(doc! { "$where": "true" })),
        (
            "nested operator",
            Bson::Document(doc! { "k": { "$ne": 1 } }),
        ),
        (
            "operator in array in document",
            Bson::Document(doc! { "k": [ { "$ne": 1 } ] }),
        ),
        ("regex", regex(".*")),
        ("javascript", Bson::JavaScriptCode("true".into())),
        ("array", Bson::Array(vec![Bson::String("$where".into())])),
        ("empty array", Bson::Array(vec![])),
        ("dotted key", Bson::Document(doc! { "a.b": 1 })),
        (
            "nested dotted key",
            Bson::Document(doc! { "a": { "b.c": 1 } }),
        ),
        ("NUL key", Bson::Document(doc! { "a\0b": 1 })),
        ("too deep", Bson::Document(nested(MAX_VALUE_DEPTH + 2))),
    ]
}

/// Values a `$set` must refuse: `$` keys, dotted keys, at any depth, and nesting past the
/// documented depth.
fn hostile_values() -> Vec<(&'static str, Bson)> {
    vec![
        ("operator", Bson::Document(doc! { "$gt": "" })),
        (
            "expression",
            Bson::Document(doc! { "$concat": ["a", "$name"] }),
        ),
        ("dotted key", Bson::Document(doc! { "a.b": 1 })),
        (
            "nested operator",
            Bson::Document(doc! { "x": { "y": { "$ne": 1 } } }),
        ),
        (
            "operator in array",
            Bson::Document(doc! { "x": [ { "$where": "1" } ] }),
        ),
        (
            "top-level array holding an operator",
            Bson::Array(vec![Bson::Document(doc! { "$gt": 1 })]),
        ),
        (
            "dotted key in array",
            Bson::Array(vec![Bson::Document(doc! { "p.q": 1 })]),
        ),
        ("NUL key", Bson::Document(doc! { "k\0": 1 })),
        ("too deep", Bson::Document(nested(MAX_VALUE_DEPTH + 2))),
    ]
}

fn long_string() -> String {
    "$x.y".repeat(50_000)
}

/// Strings that must be stored as they are.
fn odd_strings() -> Vec<String> {
    vec![
        "$gt".into(),
        "$where".into(),
        "a.b".into(),
        String::new(),
        "nul\0inside".into(),
        "$$ROOT".into(),
        long_string(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Models (group "nti")
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NtiPost {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Document>,
}

fn post(text: &str) -> NtiPost {
    NtiPost {
        text: text.into(),
        meta: None,
    }
}

/// A feed with a `u32` `_id`: an outlier array, a subset of its events with a count, and two
/// approximate counters.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_feeds")]
pub struct NtiFeed {
    #[serde(rename = "_id")]
    pub id: u32,
    #[outlier(limit = 2, overflow = "nti_feed_posts", capacity = 2, flag = is_outlier, count = posts_count)]
    pub posts: Vec<NtiPost>,
    pub is_outlier: bool,
    pub posts_count: i64,
    #[subset(limit = 2, sort(seq = -1), full = NtiEvent, parent = feed_id)]
    pub recent: Vec<NtiEventExcerpt>,
    #[summary(count = recent)]
    pub event_count: i64,
    #[approximate(batched, threshold = 3)]
    pub views: i64,
    #[approximate(sampled, p = 1.0)]
    pub likes: i64,
}

fn feed(id: u32) -> NtiFeed {
    NtiFeed {
        id,
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
        recent: vec![],
        event_count: 0,
        views: 0,
        likes: 0,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_events")]
pub struct NtiEvent {
    #[serde(rename = "_id")]
    pub id: i64,
    pub feed_id: u32,
    pub seq: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct NtiEventExcerpt {
    pub event_id: i64,
    pub seq: i64,
    pub text: String,
}

impl From<&NtiEvent> for NtiEventExcerpt {
    fn from(e: &NtiEvent) -> Self {
        NtiEventExcerpt {
            event_id: e.id,
            seq: e.seq,
            text: e.text.clone(),
        }
    }
}

/// An author with a `String` `_id`: an extended-reference source, and a computed target
/// counting its articles.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_authors")]
#[extended_ref(NtiAuthorRef(name, bio))]
pub struct NtiAuthor {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub bio: Bson,
    #[computed(count = NtiArticle, by = author_id)]
    pub articles: i64,
}

fn author(id: &str) -> NtiAuthor {
    NtiAuthor {
        id: id.into(),
        name: format!("name of {id}"),
        bio: Bson::String("bio".into()),
        articles: 0,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_articles")]
pub struct NtiArticle {
    #[serde(rename = "_id")]
    pub id: i64,
    pub author_id: String,
    pub title: String,
    #[extended_ref(propagate)]
    pub author: NtiAuthorRef,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
pub struct NtiSpec {
    pub name: String,
    pub value: Bson,
}

fn spec(name: &str, value: impl Into<Bson>) -> NtiSpec {
    NtiSpec {
        name: name.into(),
        value: value.into(),
    }
}

/// A bag whose `_id` is any `Bson`: attributes and an outlier array.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_bags")]
pub struct NtiBag {
    #[serde(rename = "_id")]
    pub id: Bson,
    #[attribute]
    pub specs: Vec<NtiSpec>,
    #[outlier(limit = 1, overflow = "nti_bag_items", capacity = 2, flag = is_outlier, count = item_count)]
    pub items: Vec<NtiPost>,
    pub is_outlier: bool,
    pub item_count: i64,
    #[approximate(sharded, shards = 4)]
    pub hits: i64,
}

fn bag(id: impl Into<Bson>) -> NtiBag {
    NtiBag {
        id: id.into(),
        specs: vec![],
        items: vec![],
        is_outlier: false,
        item_count: 0,
        hits: 0,
    }
}

/// A typed id whose serialized form is an operator document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NtiEvilId {
    #[serde(rename = "$where")]
    pub code: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "nti", collection = "nti_odd")]
pub struct NtiOdd {
    #[serde(rename = "_id")]
    pub id: NtiEvilId,
    #[attribute]
    pub specs: Vec<NtiSpec>,
}

/// A model whose `_id` type is `Document`: its ids are typed, yet may carry `$` keys.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "nti", collection = "nti_keyed")]
pub struct NtiKeyed {
    #[serde(rename = "_id")]
    pub id: Document,
    #[attribute]
    pub specs: Vec<NtiSpec>,
}

/// A grid: rooms are `i32`s, days `String`s, the holder a guest's `_id`, counted per guest.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_seats")]
#[preallocated(resource = room, slot = day, holder = guest)]
pub struct NtiSeat {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub room: i32,
    pub day: String,
    pub guest: Option<String>,
}

fn seat(room: i32, day: &str) -> NtiSeat {
    NtiSeat {
        id: ObjectId::new(),
        room,
        day: day.into(),
        guest: None,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_guests")]
pub struct NtiGuest {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = NtiSeat, by = guest)]
    pub seats: i64,
}

/// A versioned page with an `i32` `_id`, an extended-reference source copied into links.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_pages")]
#[versioned(history = "nti_page_revisions")]
#[extended_ref(NtiPageRef(title))]
pub struct NtiPage {
    #[serde(rename = "_id")]
    pub id: i32,
    #[version]
    pub version: i64,
    pub title: String,
    pub body: Bson,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_links")]
pub struct NtiLink {
    #[serde(rename = "_id")]
    pub id: i64,
    #[extended_ref(propagate)]
    pub page: NtiPageRef,
}

// ---------------------------------------------------------------------------------------------
// Compile-time: what converts to an id (`IntoId`), told apart by autoref specialisation.
// ---------------------------------------------------------------------------------------------

struct Probe<V, T>(PhantomData<fn() -> (V, T)>);

impl<V, T> Probe<V, T> {
    fn new() -> Self {
        Probe(PhantomData)
    }
}

trait Converts {
    fn converts(&self) -> bool {
        true
    }
}
impl<V: IntoId<T>, T> Converts for Probe<V, T> {}

trait DoesNotConvert {
    fn converts(&self) -> bool {
        false
    }
}
impl<V, T> DoesNotConvert for &Probe<V, T> {}

macro_rules! converts {
    ($v:ty => $t:ty) => {
        (&Probe::<$v, $t>::new()).converts()
    };
}

#[test]
fn into_id_accepts_what_the_table_lists_and_nothing_lossy() {
    // The table of `IntoId`.
    assert!(converts!(u32 => u32));
    assert!(converts!(&'static u32 => u32));
    assert!(converts!(&'static str => String));
    assert!(converts!(String => String));
    for ok in [
        converts!(i32 => i64),
        converts!(i16 => i64),
        converts!(i8 => i64),
        converts!(u32 => i64),
        converts!(u16 => i64),
        converts!(u8 => i64),
        converts!(i16 => i32),
        converts!(i8 => i32),
        converts!(u16 => i32),
        converts!(u8 => i32),
        converts!(String => Option<String>),
        converts!(&'static str => Bson),
        converts!(String => Bson),
        converts!(i32 => Bson),
        converts!(i64 => Bson),
        converts!(f64 => Bson),
        converts!(bool => Bson),
        converts!(ObjectId => Bson),
        converts!(bson::DateTime => Bson),
        converts!(Document => Bson),
        converts!(bson::Uuid => Bson),
        converts!(bson::Decimal128 => Bson),
        converts!(bson::Binary => Bson),
    ] {
        assert!(ok);
    }
    // "an id of another type does not compile": lossy or foreign conversions are absent.
    for (what, converts) in [
        ("i64 -> i32", converts!(i64 => i32)),
        ("u32 -> i32", converts!(u32 => i32)),
        ("i32 -> u32", converts!(i32 => u32)),
        ("u64 -> i64", converts!(u64 => i64)),
        ("&str -> u32", converts!(&'static str => u32)),
        ("String -> i32", converts!(String => i32)),
        ("Document -> String", converts!(Document => String)),
        ("Bson -> String", converts!(Bson => String)),
        ("Bson -> i32", converts!(Bson => i32)),
        ("f64 -> i64", converts!(f64 => i64)),
        ("ObjectId -> String", converts!(ObjectId => String)),
        ("i32 -> String", converts!(i32 => String)),
    ] {
        assert!(!converts, "{what} should not convert to an id");
    }
}

// ---------------------------------------------------------------------------------------------
// u32 ids: outlier + subset + batched and sampled counters, with integer literals.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn u32_feed_takes_literals_across_outlier_subset_and_counters() {
    let db = synced("nti_u32_feed").await;
    let feeds = NtiFeed::collection(&db);
    feeds.raw().insert_one(feed(7)).await.unwrap();
    feeds.raw().insert_one(feed(8)).await.unwrap();

    // Outlier: a bare literal, a typed value and a reference all name feed 7.
    let posts = NtiFeed::collection(&db).outlier(NtiFeed::FIELDS.posts);
    posts.push(7, post("first")).await.unwrap();
    posts.push(7u32, post("$gt")).await.unwrap();
    let seven = 7u32;
    #[allow(clippy::needless_borrows_for_generic_args)] // `&T` is what is tested
    posts.push(&seven, post("a.b")).await.unwrap();
    posts
        .push_many(7, vec![post(""), post("nul\0inside"), post(&long_string())])
        .await
        .unwrap();
    let items = posts.items(7).await.unwrap();
    let texts: Vec<&str> = items.iter().map(|p| p.text.as_str()).collect();
    let long = long_string();
    assert_eq!(
        texts,
        ["first", "$gt", "a.b", "", "nul\0inside", long.as_str()],
        "items stored literally and in push order"
    );
    assert_eq!(posts.count(7).await.unwrap(), 6);
    let page: Vec<String> = posts
        .page(7, 1, 3)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(page, ["$gt", "a.b", ""]);

    // The stored main document: the u32 `_id` as serde writes it, the limit kept.
    let main = one(&db, "nti_feeds", Bson::Int64(7)).await;
    assert_eq!(main.get_array("posts").unwrap().len(), 2);
    assert!(main.get_bool("isOutlier").unwrap());
    assert_eq!(int(&main, "postsCount"), 6);
    // Overflow documents name the feed by its id, `{_id: "posts_7_<seq>", ntiFeedId: 7, seq}`.
    let overflow = docs(&db, "nti_feed_posts").await;
    assert_eq!(overflow.len(), 2, "{overflow:?}");
    for o in &overflow {
        assert_eq!(int(o, "ntiFeedId"), 7, "{o}");
        let id = o.get_str("_id").unwrap();
        assert!(id.starts_with("posts_7_"), "overflow _id {id}");
    }
    // Feed 8 untouched.
    assert_eq!(posts.count(8).await.unwrap(), 0);
    assert!(posts.items(8).await.unwrap().is_empty());

    // A missing feed: NotFound, nothing written.
    let before = everything(&db).await;
    match posts.push(9, post("x")).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("push to a missing feed: {other:?}"),
    }
    assert_eq!(
        everything(&db).await,
        before,
        "a push to a missing feed wrote"
    );

    // Items whose fields carry `$` or dotted keys: refused, nothing written.
    for (what, meta) in [
        ("$ key", doc! { "$set": { "postsCount": 0 } }),
        ("dotted key", doc! { "a.b": 1 }),
        ("nested $ key", doc! { "x": { "$gt": 1 } }),
    ] {
        let bad = NtiPost {
            text: "bad".into(),
            meta: Some(meta),
        };
        is_invalid_value(
            &format!("push of an item with a {what}"),
            posts.push(7, bad.clone()).await,
        );
        is_invalid_value(
            &format!("push to an empty feed of an item with a {what}"),
            posts.push(8, bad).await,
        );
        assert_eq!(
            everything(&db).await,
            before,
            "a refused item ({what}) wrote"
        );
    }

    // Remove by value, with the literal id: the `$gt` item goes, wherever it lives.
    assert_eq!(posts.remove(7, &post("$gt")).await.unwrap(), 1);
    assert_eq!(posts.count(7).await.unwrap(), 5);
    let state = posts.state(7).await.unwrap();
    assert_eq!(
        posts.rebuild(7).await.unwrap().repaired,
        u64::from(!state.is_consistent())
    );
    let _ = state;
    assert!(posts.check().await.unwrap().is_clean());

    // Subset: the literal 7 names the parent; the full item carries the same `feedId`.
    let events = NtiFeed::collection(&db).subset(NtiFeed::FIELDS.recent);
    for (id, text) in [(1i64, "$where"), (2, "a.b"), (3, "")] {
        events
            .push(
                7,
                NtiEvent {
                    id,
                    feed_id: 7,
                    seq: id,
                    text: text.into(),
                },
            )
            .await
            .unwrap();
    }
    let main = one(&db, "nti_feeds", Bson::Int64(7)).await;
    assert_eq!(int(&main, "eventCount"), 3);
    let recent: Vec<(i64, String)> = main
        .get_array("recent")
        .unwrap()
        .iter()
        .map(|b| {
            let d = b.as_document().unwrap();
            (int(d, "eventId"), d.get_str("text").unwrap().to_owned())
        })
        .collect();
    assert_eq!(recent, [(3, String::new()), (2, "a.b".to_owned())]);
    assert_eq!(events.count(7).await.unwrap(), 3);
    let full = docs(&db, "nti_events").await;
    assert_eq!(full.len(), 3);
    assert_eq!(full[0].get_str("text").unwrap(), "$where");
    assert_eq!(int(&full[0], "feedId"), 7);
    let page = events.page(7, 0, 10).await.unwrap();
    assert_eq!(page.len(), 3);
    assert!(events.check().await.unwrap().is_clean());

    // A push's `set`: bad keys and kept fields are InvalidKey; an operator-shaped value is
    // refused (InvalidValue) or stored literally; nothing else.
    let before = everything(&db).await;
    let ev = |id: i64| NtiEvent {
        id,
        feed_id: 7,
        seq: id,
        text: "x".into(),
    };
    for set in [
        doc! { "$where": 1 },
        doc! { "a..b": 1 },
        doc! { "": 1 },
        doc! { "recent": [] },
        doc! { "eventCount": 0 },
        doc! { "postsCount": 0 },
        doc! { "_id": 8 },
    ] {
        match events.push(7, ev(10)).set(set.clone()).await {
            Err(Error::InvalidKey { .. } | Error::KeptField { .. }) => {}
            other => panic!("push set {set}: {other:?}"),
        }
        assert_eq!(
            everything(&db).await,
            before,
            "a refused push set {set} wrote"
        );
    }
    for (what, value) in hostile_values() {
        match events
            .push(7, ev(11))
            .set(doc! { "note": value.clone() })
            .await
        {
            Err(Error::InvalidValue { .. }) => {
                assert_eq!(
                    everything(&db).await,
                    before,
                    "a refused push set ({what}) wrote"
                )
            }
            Ok(()) => panic!("push set of a hostile value ({what}) accepted"),
            Err(other) => panic!("push set {what}: {other:?}"),
        }
    }

    // Batched counter of the u32 model: a literal id; writes at the threshold.
    let views = NtiFeed::collection(&db).counter(NtiFeed::FIELDS.views);
    views.add(7, 1).await.unwrap();
    views.add(7u32, 1).await.unwrap();
    assert_eq!(views.pending(), 2);
    assert_eq!(
        int(&one(&db, "nti_feeds", Bson::Int64(7)).await, "views"),
        0
    );
    #[allow(clippy::needless_borrows_for_generic_args)] // `&T` is what is tested
    views.add(&seven, 1).await.unwrap();
    assert_eq!(
        int(&one(&db, "nti_feeds", Bson::Int64(7)).await, "views"),
        3
    );
    // A declared counter never creates a document: feed 40 does not exist.
    views.add(40, 5).await.unwrap();
    views.flush().await.unwrap();
    assert_eq!(views.pending(), 0);
    assert!(
        db.collection::<Document>("nti_feeds")
            .find_one(doc! { "_id": 40 })
            .await
            .unwrap()
            .is_none(),
        "a declared batched counter created feed 40"
    );

    // Sampled counter with p = 1: every event writes 1.
    let likes = NtiFeed::collection(&db).counter(NtiFeed::FIELDS.likes);
    assert!(likes.add(7).await.unwrap());
    assert!(likes.add(8u32).await.unwrap());
    assert_eq!(
        int(&one(&db, "nti_feeds", Bson::Int64(7)).await, "likes"),
        1
    );
    assert_eq!(
        int(&one(&db, "nti_feeds", Bson::Int64(8)).await, "likes"),
        1
    );
    assert!(db
        .collection::<Document>("nti_feeds")
        .find_one(doc! { "_id": 41 })
        .await
        .unwrap()
        .is_none());
    let _ = likes.add(41).await; // a declared counter: no document created
    assert!(
        db.collection::<Document>("nti_feeds")
            .find_one(doc! { "_id": 41 })
            .await
            .unwrap()
            .is_none(),
        "a declared sampled counter created feed 41"
    );
}

// ---------------------------------------------------------------------------------------------
// String ids: extended-reference source + computed target; References::update with hostile
// `$set`s; Computing writes with `$`-looking `by` values.
// ---------------------------------------------------------------------------------------------

fn article(id: i64, of: &NtiAuthor, title: &str) -> NtiArticle {
    NtiArticle {
        id,
        author_id: of.id.clone(),
        title: title.into(),
        author: NtiAuthorRef::from(of),
    }
}

#[tokio::test]
async fn string_source_stores_hostile_strings_literally_and_refuses_operator_values() {
    let db = synced("nti_string_source").await;
    let a1 = author("a1");
    let dollar = author("$where");
    let dotted = author("a.b");
    let empty = author("");
    for a in [&a1, &dollar, &dotted, &empty] {
        NtiAuthor::collection(&db)
            .raw()
            .insert_one(a)
            .await
            .unwrap();
    }
    let articles = NtiArticle::collection(&db);
    articles.insert(&article(1, &a1, "t1")).await.unwrap();
    articles.insert(&article(2, &dollar, "t2")).await.unwrap();
    articles.insert(&article(3, &dotted, "t3")).await.unwrap();
    articles.insert(&article(4, &empty, "t4")).await.unwrap();
    for id in ["a1", "$where", "a.b", ""] {
        assert_eq!(
            int(&one(&db, "nti_authors", id).await, "articles"),
            1,
            "count of {id:?}"
        );
    }

    // An article naming an author that does not exist, even one spelled like an operator.
    let before = everything(&db).await;
    let ghost = NtiAuthor {
        id: "$gt".into(),
        ..author("x")
    };
    match articles.insert(&article(5, &ghost, "t5")).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("insert naming a missing author: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);

    // References::update with every odd string, on every odd id: stored as given, source and
    // copy alike.
    let refs = NtiAuthor::collection(&db).references();
    for (id, art) in [("a1", 1i64), ("$where", 2), ("a.b", 3), ("", 4)] {
        for s in odd_strings() {
            let report = NtiAuthor::collection(&db)
                .update(id, doc! { "$set": { "name": s.clone(), "bio": { "text": s.clone(), "k": "$name" } } })
                .await
                .unwrap_or_else(|e| panic!("update of {id:?} with {:?}: {e}", &s[..s.len().min(20)]));
            let _ = report;
            let src = one(&db, "nti_authors", id).await;
            assert_eq!(src.get_str("name").unwrap(), s, "source {id:?}");
            assert_eq!(src.get_document("bio").unwrap().get_str("text").unwrap(), s);
            assert_eq!(
                src.get_document("bio").unwrap().get_str("k").unwrap(),
                "$name"
            );
            let copy = one(&db, "nti_articles", art).await;
            let copied = copy.get_document("author").unwrap();
            assert_eq!(copied.get_str("_id").unwrap(), id);
            assert_eq!(copied.get_str("name").unwrap(), s, "copy of {id:?}");
            assert_eq!(
                copied.get_document("bio").unwrap().get_str("text").unwrap(),
                s
            );
        }
    }
    // An owned String and a &String name the same document.
    let owned = String::from("$where");
    NtiAuthor::collection(&db)
        .update(&owned, doc! { "$set": { "name": "W" } })
        .await
        .unwrap();
    NtiAuthor::collection(&db)
        .update(owned.clone(), doc! { "$set": { "name": "W2" } })
        .await
        .unwrap();
    assert_eq!(
        one(&db, "nti_articles", 2i64)
            .await
            .get_document("author")
            .unwrap()
            .get_str("name")
            .unwrap(),
        "W2"
    );

    // Hostile values inside `$set` / `$setOnInsert`: refused, nothing written anywhere.
    let before = everything(&db).await;
    for (what, value) in hostile_values() {
        for update in [
            doc! { "$set": { "bio": value.clone() } },
            doc! { "$set": { "name": "fine", "bio": value.clone() } },
            doc! { "$setOnInsert": { "bio": value.clone() } },
            doc! { "$set": { "name": "fine" }, "$setOnInsert": { "bio": value.clone() } },
            doc! { "$set": { "bio.deeper": value.clone() } },
        ] {
            let shown = format!(
                "{what}: {}",
                &format!("{update}")[..format!("{update}").len().min(80)]
            );
            is_invalid_value(
                &format!("References::update {shown}"),
                NtiAuthor::collection(&db)
                    .update("a1", update.clone())
                    .await,
            );
            is_invalid_value(
                &format!("References::update of \"$where\" {shown}"),
                NtiAuthor::collection(&db)
                    .update("$where", update.clone())
                    .await,
            );
        }
        // The same through Computing (the article's fields).
        for update in [
            doc! { "$set": { "title": value.clone() } },
            doc! { "$set": { "authorId": "a1", "title": value.clone() } },
            doc! { "$set": { "authorId": value.clone() } },
            doc! { "$setOnInsert": { "title": value.clone() } },
        ] {
            is_invalid_value(
                &format!("ModelCollection::update {what}"),
                articles.update(1, update).await,
            );
        }
        assert_eq!(
            everything(&db).await,
            before,
            "a refused `$set` ({what}) wrote"
        );
    }

    // Update documents whose keys are not operators of named fields, or touch `_id`.
    for update in [
        doc! { "name": "no operator" },
        doc! { "$set": { "$where": 1 } },
        doc! { "$set": { "bio.$x": 1 } },
        doc! { "$set": { "a..b": 1 } },
        doc! { "$set": { "": 1 } },
        doc! { "$set": { "_id": "other" } },
        doc! { "$unset": { "_id": "" } },
    ] {
        match NtiAuthor::collection(&db)
            .update("a1", update.clone())
            .await
        {
            Err(Error::InvalidKey { .. }) => {}
            other => panic!("References::update {update}: {other:?}"),
        }
        match articles.update(1, update.clone()).await {
            Err(Error::InvalidKey { .. }) => {}
            other => panic!("ModelCollection::update {update}: {other:?}"),
        }
    }
    // A `$rename` onto `_id` or a `$` path: refused one way or another, nothing written.
    for update in [
        doc! { "$rename": { "name": "_id" } },
        doc! { "$rename": { "name": "$where" } },
    ] {
        assert!(
            NtiAuthor::collection(&db)
                .update("a1", update.clone())
                .await
                .is_err(),
            "{update} accepted"
        );
    }
    // The kept fields: a computed count, through References.
    match NtiAuthor::collection(&db)
        .update("a1", doc! { "$set": { "articles": 99 } })
        .await
    {
        Err(Error::KeptField { .. }) => {}
        other => panic!("update of the computed count: {other:?}"),
    }
    assert_eq!(
        everything(&db).await,
        before,
        "a refused update document wrote"
    );

    // A `by` value that looks like an operator path is a plain string: article 1 moves from
    // "a1" to "$where"; the count follows.
    articles
        .update(1, doc! { "$set": { "authorId": "$where" } })
        .await
        .unwrap();
    assert_eq!(int(&one(&db, "nti_authors", "a1").await, "articles"), 0);
    assert_eq!(int(&one(&db, "nti_authors", "$where").await, "articles"), 2);
    // Moved to an author that does not exist: NotFound, nothing written.
    let before = everything(&db).await;
    match articles
        .update(1, doc! { "$set": { "authorId": "$ne" } })
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("by moved to a missing author: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);
    // Missing documents.
    match NtiAuthor::collection(&db)
        .update("$exists", doc! { "$set": { "name": "x" } })
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("update of a missing author: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);

    assert!(refs.check().await.unwrap().is_clean());
    assert!(NtiAuthor::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

// ---------------------------------------------------------------------------------------------
// Bson ids: attribute + outlier on a model whose `_id` is any value; typed ids that serialize
// to operator documents.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn bson_ids_accept_plain_values_and_refuse_operators() {
    let db = synced("nti_bson_ids").await;
    let bags = NtiBag::collection(&db);
    let compound = doc! { "k": 1, "n": "x" };
    for id in [
        Bson::String("$where".into()),
        Bson::String("a.b".into()),
        Bson::Int32(5),
        Bson::Document(compound.clone()),
    ] {
        bags.raw().insert_one(bag(id)).await.unwrap();
    }
    let specs = NtiBag::collection(&db).attributes(NtiBag::FIELDS.specs);
    let items = NtiBag::collection(&db).outlier(NtiBag::FIELDS.items);

    // Plain values of every accepted type work as ids; `$` strings are ordinary strings.
    specs.set("$where", &spec("color", "$red")).await.unwrap();
    specs
        .set(String::from("a.b"), &spec("color", "a.b"))
        .await
        .unwrap();
    specs.set(5, &spec("color", 5)).await.unwrap();
    specs
        .set(compound.clone(), &spec("color", "doc"))
        .await
        .unwrap();
    assert_eq!(
        specs.get("$where", &"color".to_owned()).await.unwrap(),
        Some(spec("color", "$red"))
    );
    assert_eq!(
        specs
            .get(compound.clone(), "color".to_owned())
            .await
            .unwrap(),
        Some(spec("color", "doc"))
    );
    let stored = one(&db, "nti_bags", "$where").await;
    assert_eq!(
        stored.get_array("specs").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("value")
            .unwrap(),
        "$red"
    );
    for t in ["one", "$two", "three.3"] {
        items.push("$where", post(t)).await.unwrap();
    }
    let texts: Vec<String> = items
        .items("$where")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(texts, ["one", "$two", "three.3"]);
    assert_eq!(items.count("$where").await.unwrap(), 3);
    let overflow = docs(&db, "nti_bag_items").await;
    assert!(!overflow.is_empty());
    assert!(
        overflow
            .iter()
            .all(|o| o.get_str("ntiBagId").unwrap() == "$where"),
        "{overflow:?}"
    );
    items.push(5, post("five")).await.unwrap();
    assert_eq!(items.count(5).await.unwrap(), 1);
    // A missing plain id: NotFound.
    match items.push("$nothere", post("x")).await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("push to a missing bag: {other:?}"),
    }

    // Every hostile id, through every operation: refused, nothing written.
    let before = everything(&db).await;
    let color = "color".to_owned();
    for (what, id) in hostile_ids() {
        is_invalid_value(
            &format!("set {what}"),
            specs.set(id.clone(), &spec("color", 1)).await,
        );
        is_invalid_value(
            &format!("unset {what}"),
            specs.unset(id.clone(), &color).await,
        );
        is_invalid_value(&format!("get {what}"), specs.get(id.clone(), &color).await);
        is_invalid_value(
            &format!("push {what}"),
            items.push(id.clone(), post("x")).await,
        );
        is_invalid_value(
            &format!("push_many {what}"),
            items
                .push_many(id.clone(), vec![post("x"), post("y")])
                .await,
        );
        is_invalid_value(&format!("items {what}"), items.items(id.clone()).await);
        is_invalid_value(&format!("page {what}"), items.page(id.clone(), 0, 5).await);
        is_invalid_value(&format!("count {what}"), items.count(id.clone()).await);
        is_invalid_value(
            &format!("remove {what}"),
            items.remove(id.clone(), &post("one")).await,
        );
        is_invalid_value(&format!("rebuild {what}"), items.rebuild(id.clone()).await);
        is_invalid_value(&format!("state {what}"), items.state(id.clone()).await);
        match items.stream(id.clone()).await {
            Err(Error::InvalidValue { .. }) => {}
            Err(other) => panic!("stream {what}: {other:?}"),
            Ok(_) => panic!("stream {what}: accepted"),
        }
        assert_eq!(everything(&db).await, before, "a hostile id ({what}) wrote");
    }
    // The `Document` conversion of `IntoId<Bson>` is checked the same way.
    is_invalid_value(
        "set Document operator",
        specs.set(doc! { "$gt": "" }, &spec("color", 1)).await,
    );
    is_invalid_value(
        "push Document operator",
        items.push(doc! { "$ne": null }, post("x")).await,
    );
    assert_eq!(everything(&db).await, before);

    // Attribute values that are operators: refused.
    for (what, value) in hostile_values() {
        is_invalid_value(
            &format!("attribute value {what}"),
            specs.set("$where", &spec("color", value)).await,
        );
    }
    assert_eq!(everything(&db).await, before);

    // The sharded counter of one bag: a `$` string names a bag; an operator names none.
    let hits = NtiBag::collection(&db)
        .counter(NtiBag::FIELDS.hits)
        .of("$where");
    hits.add(2).await.unwrap();
    hits.add(3).await.unwrap();
    assert_eq!(hits.read().await.unwrap(), 5);
    assert_eq!(hits.snapshot().await.unwrap(), 5);
    assert_eq!(int(&one(&db, "nti_bags", "$where").await, "hits"), 5);
    let before = everything(&db).await;
    for (what, id) in hostile_ids() {
        let bad = NtiBag::collection(&db).counter(NtiBag::FIELDS.hits).of(id);
        is_invalid_value(&format!("sharded add {what}"), bad.add(1).await);
        is_invalid_value(&format!("sharded read {what}"), bad.read().await);
        is_invalid_value(&format!("sharded snapshot {what}"), bad.snapshot().await);
        assert_eq!(
            everything(&db).await,
            before,
            "a sharded counter wrote for {what}"
        );
    }

    assert!(specs.check().await.unwrap().is_clean());
    assert!(items.check().await.unwrap().is_clean());
}

#[tokio::test]
async fn typed_document_shaped_ids_are_checked_once_serialized() {
    let db = synced("nti_typed_docs").await;
    // `_id: Document`: a plain compound id works.
    let keyed = NtiKeyed::collection(&db);
    keyed
        .raw()
        .insert_one(NtiKeyed {
            id: doc! { "a": 1, "b": "$x" },
            specs: vec![],
        })
        .await
        .unwrap();
    let keyed_specs = NtiKeyed::collection(&db).attributes(NtiKeyed::FIELDS.specs);
    keyed_specs
        .set(doc! { "a": 1, "b": "$x" }, &spec("w", "$y"))
        .await
        .unwrap();
    assert_eq!(
        keyed_specs
            .get(doc! { "a": 1, "b": "$x" }, "w".to_owned())
            .await
            .unwrap(),
        Some(spec("w", "$y"))
    );
    // ... and one that is an operator, typed as the model's own `Document`, is refused.
    let before = everything(&db).await;
    for (what, id) in [
        ("operator", doc! { "$gt": {} }),
        ("nested operator", doc! { "a": { "$ne": 1 } }),
        ("dotted key", doc! { "a.b": 1 }),
        ("operator in array", doc! { "a": [ { "$gt": 0 } ] }),
        ("too deep", nested(MAX_VALUE_DEPTH + 2)),
    ] {
        is_invalid_value(
            &format!("Document id {what}: set"),
            keyed_specs.set(id.clone(), &spec("w", 1)).await,
        );
        is_invalid_value(
            &format!("Document id {what}: get"),
            keyed_specs.get(id.clone(), "w".to_owned()).await,
        );
        is_invalid_value(
            &format!("Document id {what}: unset"),
            keyed_specs.unset(id, "w".to_owned()).await,
        );
    }
    assert_eq!(everything(&db).await, before);

    // A struct id whose serialized form is `{$where: ..}`.
    let odd = NtiOdd::collection(&db).attributes(NtiOdd::FIELDS.specs);
    let evil = NtiEvilId {
        code: "sleep(1000) || true".into(),
    };
    is_invalid_value(
        "struct id serialized as {$where}: set",
        odd.set(evil.clone(), &spec("w", 1)).await,
    );
    is_invalid_value(
        "struct id serialized as {$where}: set by ref",
        odd.set(&evil, &spec("w", 1)).await,
    );
    is_invalid_value(
        "struct id serialized as {$where}: get",
        odd.get(evil.clone(), "w".to_owned()).await,
    );
    is_invalid_value(
        "struct id serialized as {$where}: unset",
        odd.unset(evil, "w".to_owned()).await,
    );
    assert_eq!(everything(&db).await, before);
}

#[tokio::test]
async fn standalone_counters_with_bson_ids_refuse_operators_and_store_dollar_strings() {
    let db = test_db("nti_standalone_counters").await;
    let coll = db.collection::<Document>("nti_counts");
    let batched = BatchedCounter::new(coll.clone(), "n", 1).unwrap();
    let sampled = SampledCounter::new(coll.clone(), "m", 1.0).unwrap();
    batched.add("$where", 2).await.unwrap();
    batched
        .add(Bson::Document(doc! { "k": "a.b" }), 1)
        .await
        .unwrap();
    assert!(sampled.add("$gt").await.unwrap());
    assert_eq!(int(&one(&db, "nti_counts", "$where").await, "n"), 2);
    assert_eq!(
        int(&one(&db, "nti_counts", doc! { "k": "a.b" }).await, "n"),
        1
    );
    assert_eq!(int(&one(&db, "nti_counts", "$gt").await, "m"), 1);

    let before = everything(&db).await;
    for (what, id) in hostile_ids() {
        is_invalid_value(
            &format!("batched add {what}"),
            batched.add(id.clone(), 1).await,
        );
        is_invalid_value(&format!("sampled add {what}"), sampled.add(id).await);
        assert_eq!(
            everything(&db).await,
            before,
            "a counter wrote for a hostile id ({what})"
        );
    }
    assert_eq!(batched.pending(), 0, "a refused id was counted in memory");
    batched.flush().await.unwrap();
    assert_eq!(everything(&db).await, before);
}

// ---------------------------------------------------------------------------------------------
// A preallocated grid: i32 rooms, String days, holders counted per guest.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn grid_with_i32_rooms_and_string_days_books_literals_and_refuses_hostile_holders() {
    // Its hostile holders are of other types than the model's.
    let db = synced_in(test_db_unvalidated("nti_grid").await).await;
    for g in ["alice", "$guest", "a.b", ""] {
        NtiGuest::collection(&db)
            .raw()
            .insert_one(NtiGuest {
                id: g.into(),
                seats: 0,
            })
            .await
            .unwrap();
    }
    let slots = NtiSeat::collection(&db).slots();
    let days = ["$where", "a.b", "", "2025-01-01", "nul\0day", "$$ROOT"];
    let allocated = slots
        .allocate(
            days.iter()
                .map(|d| seat(101, d))
                .chain([seat(102, "$where")]),
        )
        .await
        .unwrap();
    let _ = allocated;
    // Idempotent: the same grid again inserts nothing.
    let before = everything(&db).await;
    slots
        .allocate(days.iter().map(|d| seat(101, d)))
        .await
        .unwrap();
    assert_eq!(
        everything(&db).await,
        before,
        "a second allocation changed the grid"
    );
    let grid = docs(&db, "nti_seats").await;
    assert_eq!(grid.len(), days.len() + 1);
    for d in days {
        assert!(
            grid.iter()
                .any(|s| s.get_str("day").unwrap() == d && int(s, "room") == 101),
            "day {d:?} not stored literally: {grid:?}"
        );
    }

    // Book with literals: `101` is the room's own i32, `101u8` converts.
    let booked = slots.book(101, "$where", "alice").await.unwrap();
    assert_eq!(booked.guest.as_deref(), Some("alice"));
    assert_eq!(booked.day, "$where");
    slots.book(101u8, "a.b", "$guest").await.unwrap();
    slots.book(101i16, String::from(""), "a.b").await.unwrap();
    let g = |id: &'static str| {
        let db = &db;
        async move { int(&one(db, "nti_guests", id).await, "seats") }
    };
    assert_eq!(g("alice").await, 1);
    assert_eq!(g("$guest").await, 1);
    assert_eq!(g("a.b").await, 1);
    // Room 102's "$where" is another slot: still free.
    assert!(slots
        .get(102, "$where")
        .await
        .unwrap()
        .unwrap()
        .guest
        .is_none());

    // Taken, missing: typed errors, nothing written.
    let before = everything(&db).await;
    match slots.book(101, "$where", "$guest").await {
        Err(Error::AlreadyBooked { .. }) => {}
        other => panic!("second booking: {other:?}"),
    }
    match slots.book(101, "$nope", "alice").await {
        Err(e) if e.is_not_allocated() => {}
        other => panic!("unallocated slot: {other:?}"),
    }
    match slots.book(103, "$where", "alice").await {
        Err(e) if e.is_not_allocated() => {}
        other => panic!("unallocated room: {other:?}"),
    }
    // A holder that is no guest: the count's target is missing.
    match slots.book(101, "2025-01-01", "$bob").await {
        Err(Error::NotFound { .. }) => {}
        other => panic!("booking for a missing guest: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);

    // Hostile holders: refused before anything is sent.
    let holders: Vec<(&str, Bson)> = vec![
        ("operator", Bson::Document(doc! { "$gt": "" })),
        ("$ne null", Bson::Document(doc! { "$ne": Bson::Null })),
        ("$exists", Bson::Document(doc! { "$exists": true })),
        ("regex", regex(".*")),
        ("array", Bson::Array(vec!["alice".into()])),
        ("javascript", Bson::JavaScriptCode("true".into())),
        ("dotted-key document", Bson::Document(doc! { "a.b": 1 })),
    ];
    for (what, h) in &holders {
        is_invalid_value(
            &format!("book holder {what}"),
            slots.book(101, "2025-01-01", h.clone()).await,
        );
        is_invalid_value(
            &format!("book taken slot, holder {what}"),
            slots.book(101, "$where", h.clone()).await,
        );
        is_invalid_value(
            &format!("cancel holder {what}"),
            slots.cancel(101, "$where", h.clone()).await,
        );
        is_invalid_value(
            &format!("book_all holder {what}"),
            slots
                .book_all(&[(101, "2025-01-01"), (101, "$$ROOT")], h.clone())
                .await,
        );
        assert_eq!(
            everything(&db).await,
            before,
            "a hostile holder ({what}) wrote"
        );
    }
    // An integer holder is a plain value of another type: no guest has that `_id`, so the
    // count's target is missing (NotFound), nothing written.
    // (The docs promise NotFound for a holder with no such guest; a holder of another type
    // may also be told apart as InvalidValue. Either way nothing is written.)
    match slots.book(101, "2025-01-01", 5).await {
        Err(Error::NotFound { .. }) | Err(Error::InvalidValue { .. }) => {}
        other => panic!("booking for an integer holder: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);
    // A slot to allocate that is not free: InvalidValue, its batch not sent.
    let taken = NtiSeat {
        guest: Some("alice".into()),
        ..seat(104, "$where")
    };
    is_invalid_value(
        "allocate a booked slot",
        slots.allocate(vec![seat(104, "x"), taken]).await,
    );
    assert_eq!(everything(&db).await, before);
    // book_all over a slot never allocated: NotFound of the slot, nothing kept.
    match slots
        .book_all(&[(101, "2025-01-01"), (101, "$never")], "alice")
        .await
    {
        Err(e) if e.is_not_allocated() => {}
        other => panic!("book_all with a missing slot: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);
    // A null holder would book nothing: refused.
    assert!(slots.book(101, "2025-01-01", Bson::Null).await.is_err());
    assert_eq!(everything(&db).await, before);

    // cancel by someone else: NotHolder; by the holder: freed, count back.
    match slots.cancel(101, "$where", "$guest").await {
        Err(Error::NotHolder { .. }) => {}
        other => panic!("cancel by another guest: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);
    let freed = slots.cancel(101, "$where", "alice").await.unwrap();
    assert!(freed.guest.is_none());
    assert_eq!(g("alice").await, 0);
    // release, whoever holds it.
    slots.release(101, "a.b").await.unwrap();
    assert_eq!(g("$guest").await, 0);

    // book_all with literals and odd slot strings: all or nothing.
    let stay = [(101, "2025-01-01"), (101, "nul\0day"), (101, "$$ROOT")];
    let got = slots.book_all(&stay, "$guest").await.unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(g("$guest").await, 3);
    let before = everything(&db).await;
    // "" is held by "a.b": the whole stay is refused and undone.
    match slots.book_all(&[(101, "$where"), (101, "")], "alice").await {
        Err(Error::AlreadyBooked { .. }) => {}
        other => panic!("book_all over a taken slot: {other:?}"),
    }
    assert_eq!(
        everything(&db).await,
        before,
        "a refused book_all kept a booking"
    );

    // available: strings compared as strings, literal room.
    let free: Vec<String> = slots
        .available(101, "", "~")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.day)
        .collect();
    assert_eq!(free, ["$where", "a.b"], "free days of room 101");
    assert!(slots.check().await.unwrap().is_clean());
    assert!(NtiGuest::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

async fn link_title(db: &TestDb) -> String {
    one(db, "nti_links", 30i64)
        .await
        .get_document("page")
        .unwrap()
        .get_str("title")
        .unwrap()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// Versioned, i32 ids, an extended-reference source: update/revert/history with literals;
// hostile `$set` values refused with nothing written (the page, its revisions, its copies).
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn versioned_page_with_i32_id_checks_set_values() {
    let db = synced("nti_versioned").await;
    let pages = NtiPage::collection(&db);
    let mut page = NtiPage {
        id: 3,
        version: 0,
        title: "v1".into(),
        body: Bson::String("b".into()),
    };
    pages.insert(&mut page).await.unwrap();
    assert_eq!(page.version, 1);
    NtiLink::collection(&db)
        .raw()
        .insert_one(NtiLink {
            id: 30,
            page: NtiPageRef::from(&page),
        })
        .await
        .unwrap();

    // A literal id, `$`-looking strings stored as given and copied.
    let v = pages
        .update(
            At(3, 1),
            doc! { "$set": { "title": "$where", "body": "$$ROOT" } },
        )
        .await
        .unwrap();
    assert_eq!(v.version, Some(2));
    let stored = one(&db, "nti_pages", 3).await;
    assert_eq!(stored.get_str("title").unwrap(), "$where");
    assert_eq!(stored.get_str("body").unwrap(), "$$ROOT");
    assert_eq!(link_title(&db).await, "$where");

    // Hostile values: refused, nothing written (page, history, link).
    let before = everything(&db).await;
    for (what, value) in hostile_values() {
        if what == "NUL key" {
            continue; // see `a_versioned_value_with_a_nul_key_is_invalid_value`
        }
        for update in [
            doc! { "$set": { "body": value.clone() } },
            doc! { "$set": { "title": "changed", "body": value.clone() } },
            doc! { "$setOnInsert": { "body": value.clone() } },
        ] {
            is_invalid_value(
                &format!("versioned update {what}"),
                pages.update(At(3, 2), update).await,
            );
        }
        assert_eq!(
            everything(&db).await,
            before,
            "a refused versioned `$set` ({what}) wrote"
        );
    }
    // The version and `_id` are not the caller's to set.
    for update in [
        doc! { "$set": { "version": 9 } },
        doc! { "$inc": { "version": 1 } },
        doc! { "$set": { "_id": 4 } },
    ] {
        assert!(
            pages.update(At(3, 2), update.clone()).await.is_err(),
            "{update} accepted"
        );
        assert_eq!(everything(&db).await, before, "{update} wrote");
    }
    // Stale version, missing document.
    match pages
        .update(At(3, 1), doc! { "$set": { "title": "x" } })
        .await
    {
        Err(Error::VersionConflict {
            expected: 1,
            found: 2,
            ..
        }) => {}
        other => panic!("stale update: {other:?}"),
    }
    match pages
        .update(At(4, 1), doc! { "$set": { "title": "x" } })
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("update of a missing page: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);

    // history / revision / revert with literals (and a u8 that converts to i32).
    let history = pages.history(3).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(pages.revision(3u8, 1).await.unwrap().title, "v1");
    assert_eq!(pages.revision(3, 2).await.unwrap().title, "$where");
    let v = pages.revert(3, 1).await.unwrap();
    assert_eq!(v, 3);
    assert_eq!(
        one(&db, "nti_pages", 3).await.get_str("title").unwrap(),
        "v1"
    );
    assert_eq!(link_title(&db).await, "v1");
    let saved = pages
        .modify(3, 3, |p| p.title = "a.b\0c".into())
        .await
        .unwrap();
    assert_eq!(saved.version, 4);
    assert_eq!(link_title(&db).await, "a.b\0c");
    #[allow(clippy::needless_borrows_for_generic_args)] // `&T` is what is tested
    let history = pages.history(&3).await.unwrap();
    assert_eq!(history.len(), 3);

    // Delete with a literal: archived, copies left as they are.
    pages.delete(3).await.unwrap();
    assert!(db
        .collection::<Document>("nti_pages")
        .find_one(doc! {})
        .await
        .unwrap()
        .is_none());
    let history = pages.history(3).await.unwrap();
    assert_eq!(history.len(), 4);
    assert!(history[0].deleted);
    assert_eq!(link_title(&db).await, "a.b\0c");
}

// ---------------------------------------------------------------------------------------------
// A tree keyed by `_id: Bson`, its holders with a `u32` `_id`: `$`-strings and integers as keys,
// hostile keys refused everywhere.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_topics")]
#[tree(parent = parent, ancestors = ancestors)]
pub struct NtiTopic {
    #[serde(rename = "_id")]
    pub id: Bson,
    pub parent: Option<Bson>,
    pub ancestors: Vec<Bson>,
}

fn topic(id: impl Into<Bson>, parent: Option<Bson>) -> NtiTopic {
    NtiTopic {
        id: id.into(),
        parent,
        ancestors: vec![],
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nti", collection = "nti_notes")]
#[in_tree(NtiTopic, node = topic, path = topic_path)]
pub struct NtiNote {
    #[serde(rename = "_id")]
    pub id: u32,
    pub topic: Bson,
    pub topic_path: Vec<Bson>,
}

#[tokio::test]
async fn bson_keyed_tree_takes_dollar_strings_and_refuses_operator_keys() {
    let db = synced("nti_tree").await;
    let tree = NtiTopic::collection(&db).tree();
    tree.insert(&topic("$root", None)).await.unwrap();
    tree.insert(&topic("a.b", Some("$root".into())))
        .await
        .unwrap();
    let leaf = tree.insert(&topic(5, Some("a.b".into()))).await.unwrap();
    assert_eq!(leaf.ancestors, [Bson::from("$root"), Bson::from("a.b")]);
    tree.insert(&topic("", None)).await.unwrap();

    let notes = tree.holders::<NtiNote>();
    notes
        .insert(&NtiNote {
            id: 7,
            topic: Bson::Int32(5),
            topic_path: vec![],
        })
        .await
        .unwrap();
    let stored = one(&db, "nti_notes", Bson::Int64(7)).await;
    assert_eq!(
        stored.get_array("topicPath").unwrap(),
        &vec![Bson::from("$root"), Bson::from("a.b"), Bson::Int32(5)]
    );
    assert_eq!(notes.under("$root").await.unwrap().len(), 1);
    assert_eq!(notes.directly_in(5).await.unwrap().len(), 1);
    assert_eq!(tree.children("$root").await.unwrap().len(), 1);
    assert_eq!(tree.descendants("$root").await.unwrap().len(), 2);
    assert_eq!(
        tree.path(5).await.unwrap(),
        [Bson::from("$root"), Bson::from("a.b"), Bson::Int32(5)]
    );
    // Place the u32 holder with a literal into the "" root.
    notes.place(7, "").await.unwrap();
    assert_eq!(
        one(&db, "nti_notes", Bson::Int64(7))
            .await
            .get_array("topicPath")
            .unwrap(),
        &vec![Bson::from("")]
    );
    notes.place(7u32, 5).await.unwrap();
    // Move "a.b" (and 5, and the note) under "": paths rewritten.
    tree.move_under("a.b", "").await.unwrap();
    assert_eq!(
        one(&db, "nti_notes", Bson::Int64(7))
            .await
            .get_array("topicPath")
            .unwrap(),
        &vec![Bson::from(""), Bson::from("a.b"), Bson::Int32(5)]
    );
    assert!(tree.check().await.unwrap().is_clean());

    let before = everything(&db).await;
    for (what, key) in hostile_ids() {
        is_invalid_value(&format!("get {what}"), tree.get(key.clone()).await);
        is_invalid_value(
            &format!("children {what}"),
            tree.children(key.clone()).await,
        );
        is_invalid_value(
            &format!("descendants {what}"),
            tree.descendants(key.clone()).await,
        );
        is_invalid_value(&format!("subtree {what}"), tree.subtree(key.clone()).await);
        is_invalid_value(
            &format!("ancestors {what}"),
            tree.ancestors(key.clone()).await,
        );
        is_invalid_value(&format!("path {what}"), tree.path(key.clone()).await);
        is_invalid_value(
            &format!("move_under node {what}"),
            tree.move_under(key.clone(), "$root").await,
        );
        is_invalid_value(
            &format!("move_under parent {what}"),
            tree.move_under(5, key.clone()).await,
        );
        is_invalid_value(
            &format!("move_to_root {what}"),
            tree.move_to_root(key.clone()).await,
        );
        is_invalid_value(
            &format!("delete {what}"),
            tree.delete(key.clone(), pattern_runtime::tree::Deletion::Cascade)
                .await,
        );
        is_invalid_value(&format!("under {what}"), notes.under(key.clone()).await);
        is_invalid_value(
            &format!("directly_in {what}"),
            notes.directly_in(key.clone()).await,
        );
        is_invalid_value(&format!("place {what}"), notes.place(7, key.clone()).await);
        if what != "NUL key" {
            // (NUL: see `a_tree_parent_with_a_nul_key_is_invalid_value`.)
            is_invalid_value(
                &format!("insert with parent {what}"),
                tree.insert(&topic("fresh", Some(key.clone()))).await,
            );
        }
        is_invalid_value(
            &format!("holder insert with node {what}"),
            notes
                .insert(&NtiNote {
                    id: 8,
                    topic: key.clone(),
                    topic_path: vec![],
                })
                .await,
        );
        assert_eq!(
            everything(&db).await,
            before,
            "a hostile tree key ({what}) wrote"
        );
    }
    // A missing plain key: NotFound of the node, nothing written.
    match tree.move_under(5, "$nowhere").await {
        Err(e) if e.is_no_node() => {}
        other => panic!("move under a missing node: {other:?}"),
    }
    assert_eq!(everything(&db).await, before);
}

// ---------------------------------------------------------------------------------------------
// Findings: NUL keys that reach the driver's serializer instead of the documented check.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_tree_parent_with_a_nul_key_is_invalid_value() {
    let db = synced("nti_finding_tree_nul").await;
    let tree = NtiTopic::collection(&db).tree();
    tree.insert(&topic("$root", None)).await.unwrap();
    let before = everything(&db).await;
    let parent = Bson::Document(doc! { "a\0b": 1 });
    is_invalid_value(
        "insert with a NUL-key parent",
        tree.insert(&topic("fresh", Some(parent.clone()))).await,
    );
    is_invalid_value(
        "insert_many with a NUL-key parent",
        tree.insert_many(&[topic("fresh", Some(parent))]).await,
    );
    assert_eq!(everything(&db).await, before);
}

#[tokio::test]
async fn a_versioned_value_with_a_nul_key_is_invalid_value() {
    let db = synced("nti_finding_versioned_nul").await;
    let pages = NtiPage::collection(&db);
    let mut page = NtiPage {
        id: 9,
        version: 0,
        title: "t".into(),
        body: Bson::Null,
    };
    pages.insert(&mut page).await.unwrap();
    let before = everything(&db).await;
    for update in [
        doc! { "$set": { "body": { "k\0": 1 } } },
        doc! { "$setOnInsert": { "body": { "k\0": 1 } } },
        doc! { "$set": { "body": [ { "x": { "k\0": 1 } } ] } },
    ] {
        is_invalid_value(
            &format!("versioned update {update:?}"),
            pages.update(At(9, 1), update).await,
        );
    }
    assert_eq!(everything(&db).await, before);
    // The same value in whole documents: an insert and a save.
    let mut fresh = NtiPage {
        id: 10,
        version: 0,
        title: "n".into(),
        body: Bson::Document(doc! { "k\0": 1 }),
    };
    is_invalid_value(
        "versioned insert with a NUL key",
        pages.insert(&mut fresh).await,
    );
    page.body = Bson::Document(doc! { "k\0": 1 });
    is_invalid_value(
        "versioned save with a NUL key",
        pages.replace(&mut page).await,
    );
    assert_eq!(everything(&db).await, before);
}

// ---------------------------------------------------------------------------------------------
// Whole documents (versioned insert/save, References::replace) holding operator-shaped values:
// "stored literally, or refused with a typed error before anything is written".
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn whole_document_writes_store_literally_or_refuse_operator_shaped_values() {
    let db = synced("nti_whole_docs").await;
    let pages = NtiPage::collection(&db);
    let mut page = NtiPage {
        id: 1,
        version: 0,
        title: "t".into(),
        body: Bson::Null,
    };
    pages.insert(&mut page).await.unwrap();
    let a1 = author("a1");
    NtiAuthor::collection(&db)
        .raw()
        .insert_one(&a1)
        .await
        .unwrap();
    NtiArticle::collection(&db)
        .insert(&article(1, &a1, "t"))
        .await
        .unwrap();

    let mut next_page = 100;
    for (what, value) in hostile_values() {
        if what == "NUL key" || what == "too deep" {
            continue; // below
        }
        // versioned save
        let before = everything(&db).await;
        let mut changed = NtiPage {
            body: value.clone(),
            ..pages.revision(1, page.version).await.unwrap()
        };
        match pages.replace(&mut changed).await {
            Ok(_) => {
                assert_eq!(
                    one(&db, "nti_pages", 1).await.get("body"),
                    Some(&value),
                    "save {what}"
                );
                page.version = changed.version;
            }
            Err(Error::InvalidValue { .. }) => {
                assert_eq!(everything(&db).await, before, "save {what}")
            }
            Err(other) => panic!("versioned save of {what}: {other:?}"),
        }
        // versioned insert
        let before = everything(&db).await;
        next_page += 1;
        let mut fresh = NtiPage {
            id: next_page,
            version: 0,
            title: "n".into(),
            body: value.clone(),
        };
        match pages.insert(&mut fresh).await {
            Ok(_) => assert_eq!(
                one(&db, "nti_pages", next_page).await.get("body"),
                Some(&value),
                "insert {what}"
            ),
            Err(Error::InvalidValue { .. }) => {
                assert_eq!(everything(&db).await, before, "insert {what}")
            }
            Err(other) => panic!("versioned insert of {what}: {other:?}"),
        }
        // References::replace of the source, whose `bio` is copied into the article
        let before = everything(&db).await;
        let replaced = NtiAuthor {
            bio: value.clone(),
            articles: 1, // as stored: the count is the computed pattern's
            ..author("a1")
        };
        match NtiAuthor::collection(&db).replace(&replaced).await {
            Ok(_) => {
                assert_eq!(
                    one(&db, "nti_authors", "a1").await.get("bio"),
                    Some(&value),
                    "replace {what}"
                );
                assert_eq!(
                    one(&db, "nti_articles", 1i64)
                        .await
                        .get_document("author")
                        .unwrap()
                        .get("bio"),
                    Some(&value),
                    "copy after replace {what}"
                );
            }
            Err(Error::InvalidValue { .. }) => {
                assert_eq!(everything(&db).await, before, "replace {what}")
            }
            Err(other) => panic!("References::replace of {what}: {other:?}"),
        }
    }
    // (NUL keys: see the `*_with_a_nul_key_is_invalid_value` tests.)
}

#[tokio::test]
async fn versioned_insert_past_max_depth_is_refused_or_stays_writable() {
    // The same value in a `$set` is refused (`versioned_page_with_i32_id_checks_set_values`);
    // as an insert it is accepted. Then: "no write leaves a document that can no longer be
    // written": the page must stay updatable, its revisions readable.
    let db = synced("nti_finding_deep_insert").await;
    let pages = NtiPage::collection(&db);
    let before = everything(&db).await;
    let mut deep = NtiPage {
        id: 999,
        version: 0,
        title: "n".into(),
        body: Bson::Document(nested(MAX_VALUE_DEPTH + 2)),
    };
    match pages.insert(&mut deep).await {
        Err(Error::InvalidValue { .. }) => {
            assert_eq!(everything(&db).await, before, "a refused insert wrote");
            return;
        }
        Err(other) => panic!("versioned insert past the depth: {other:?}"),
        Ok(_) => {}
    }
    let v = pages
        .update(At(999, 1), doc! { "$set": { "title": "still writable" } })
        .await
        .expect("a page accepted by insert can no longer be updated");
    assert_eq!(v.version, Some(2));
    let history = pages
        .history(999)
        .await
        .expect("its history can no longer be read");
    assert_eq!(history.len(), 1);
    pages
        .revert(999, 1)
        .await
        .expect("its first version can no longer be restored");
}

#[tokio::test]
async fn a_replaced_source_with_a_nul_key_is_invalid_value() {
    // `References::update` with the same value in `$set` is InvalidValue
    // (`string_source_stores_hostile_strings_literally_and_refuses_operator_values`).
    let db = synced("nti_finding_replace_nul").await;
    let a1 = author("a1");
    NtiAuthor::collection(&db)
        .raw()
        .insert_one(&a1)
        .await
        .unwrap();
    NtiArticle::collection(&db)
        .insert(&article(1, &a1, "t"))
        .await
        .unwrap();
    let before = everything(&db).await;
    let replaced = NtiAuthor {
        bio: Bson::Document(doc! { "k\0": 1 }),
        articles: 1,
        ..author("a1")
    };
    is_invalid_value(
        "References::replace with a NUL key",
        NtiAuthor::collection(&db).replace(&replaced).await,
    );
    assert_eq!(everything(&db).await, before);
}

// Document-shaped ids that look like operators, through the model handle: refused; `$` strings
// stay literal.

// ---------------------------------------------------------------------------------------------
// 6: document-shaped ids that look like operators
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_queues")]
pub struct Queue {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = Ticket, by = queue_id)]
    pub open: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_tickets")]
pub struct Ticket {
    #[serde(rename = "_id")]
    pub id: Document,
    pub queue_id: String,
    pub title: String,
}

/// Each queue's count, as the model reads it (a recompute may store it as another integer
/// type than `$inc` did).
async fn queue_counts(db: &TestDb) -> Vec<(String, i64)> {
    use futures_util::TryStreamExt;
    let queues: Vec<Queue> = Queue::collection(db)
        .raw()
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    queues.into_iter().map(|q| (q.id, q.open)).collect()
}

#[tokio::test]
async fn operator_shaped_ids_are_refused_and_dollar_strings_are_literal() {
    let db = test_db_unvalidated("nwi_hostile_ids").await;
    pattern_runtime::sync(&db)
        .models(&[Queue::SCHEMA])
        .await
        .unwrap();
    pattern_runtime::sync(&db)
        .models(&[Ticket::SCHEMA])
        .await
        .unwrap();
    for q in ["$where", "support"] {
        Queue::collection(&db)
            .insert(&Queue {
                id: q.into(),
                open: 0,
            })
            .await
            .unwrap();
    }
    let tickets = Ticket::collection(&db);
    // Strings beginning with `$` are ids and values like any other.
    for (n, q) in [(1, "$where"), (2, "support"), (3, "support")] {
        tickets
            .insert(&Ticket {
                id: doc! { "n": n, "src": "$mail" },
                queue_id: q.into(),
                title: format!("$title {n}"),
            })
            .await
            .unwrap();
    }
    let queues = dump(&db, "nwi_queues").await;
    assert_eq!(queues[0].get_str("_id").unwrap(), "$where");
    assert_eq!(queues[0].get_i64("open").unwrap(), 1);
    assert_eq!(queues[1].get_i64("open").unwrap(), 2);

    let tickets_before = dump(&db, "nwi_tickets").await;
    let queues_before = queue_counts(&db).await;
    sent(&db);
    // An id that would match every document if it were sent as a filter.
    let hostile_ids = [
        doc! { "$exists": true },
        doc! { "$gt": "" },
        doc! { "n": { "$gte": 0 } },
        doc! { "a.b": 1 },
    ];
    for bad in &hostile_ids {
        let e = tickets.delete(bad.clone()).await.unwrap_err();
        assert!(refused_value(&e), "delete {bad}: {e:?}");
        let e = tickets
            .update(bad.clone(), doc! { "$set": { "queueId": "$where" } })
            .await
            .unwrap_err();
        assert!(refused_value(&e), "update {bad}: {e:?}");
    }
    assert_eq!(sent(&db), [], "a refused id sends nothing");
    assert_eq!(dump(&db, "nwi_tickets").await, tickets_before);

    // The same ids in a whole document inserted through `ModelCollection::insert`: the crate docs
    // promise "refused with a typed error before anything is written" and "a `Document`-shaped
    // id type cannot carry a `$` key either".
    let mut sent_anyway = Vec::new();
    sent(&db);
    for bad in &hostile_ids {
        let r = tickets
            .insert(&Ticket {
                id: bad.clone(),
                queue_id: "support".into(),
                title: "x".into(),
            })
            .await;
        let cmds = sent(&db);
        match r {
            Err(e) if refused_value(&e) && cmds.is_empty() => {}
            other => sent_anyway.push(format!("{bad}: {other:?} after sending {cmds:?}")),
        }
        if raw_one(&db, "nwi_tickets", bad.clone()).await.is_some() {
            // Stored: and no handle of the toolkit can name it again.
            let e = tickets.delete(bad.clone()).await.unwrap_err();
            sent_anyway.push(format!("{bad}: stored, and then `delete` refuses it: {e}"));
            // Take it away explicitly around the toolkit, and repair the count it moved.
            Ticket::collection(&db)
                .raw()
                .delete_one(doc! { "_id": { "$eq": bad.clone() } })
                .await
                .unwrap();
            Queue::collection(&db)
                .computed()
                .rebuild("support")
                .await
                .unwrap();
        }
        sent(&db);
    }
    assert_eq!(dump(&db, "nwi_tickets").await, tickets_before);
    assert_eq!(queue_counts(&db).await, queues_before);

    // A queue id that reads like an operator is a literal id.
    let recomputed = Queue::collection(&db)
        .computed()
        .rebuild("$where")
        .await
        .unwrap();
    assert_eq!(recomputed.repaired, 0);

    // Keys with `.` or `$` inside an update's values, and update paths with `$`.
    let id = doc! { "n": 2, "src": "$mail" };
    for (update, key) in [
        (
            doc! { "$set": { "title": { "$concat": ["a", "b"] } } },
            false,
        ),
        (doc! { "$set": { "title": { "x.y": 1 } } }, false),
        (doc! { "$set": { "ti$tle": "x" } }, false),
        (doc! { "$set": { "$title": "x" } }, true),
        (doc! { "$set": { "open": 5 } }, false),
        (doc! { "$where": "this.n > 0" }, true),
    ] {
        let r = tickets.update(id.clone(), update.clone()).await;
        match r {
            Err(e) if key => assert!(refused_key(&e), "{update}: {e:?}"),
            Err(e) => assert!(e.is_refused_input(), "{update}: {e:?}"),
            // `ti$tle` (a `$` inside a name) and `open` (a field of the queue, not the
            // ticket) are ordinary field names of the ticket.
            Ok(_) => assert!(
                update
                    .get_document("$set")
                    .is_ok_and(|s| s.contains_key("ti$tle") || s.contains_key("open")),
                "{update} accepted"
            ),
        }
    }
    assert_eq!(queue_counts(&db).await, queues_before);
    let t2 = raw_one(&db, "nwi_tickets", id.clone()).await.unwrap();
    assert_eq!(t2.get_str("title").unwrap(), "$title 2");

    // The document id moves the ticket between queues, as a literal equality.
    tickets
        .update(id.clone(), doc! { "$set": { "queueId": "$where" } })
        .await
        .unwrap();
    assert_eq!(
        queue_counts(&db).await,
        [("$where".to_string(), 2), ("support".to_string(), 1)]
    );
    tickets.delete(id).await.unwrap();
    assert_eq!(dump(&db, "nwi_tickets").await.len(), 2);
    assert!(Queue::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());

    // FOUND (fixed): `ModelCollection::insert` of a model whose `_id` is a `Document` sends ids that
    // every other operation refuses (crate docs, "What the toolkit sends": an id with a `$`
    // key or a key with `.` is `Error::InvalidValue`, nothing sent; "a `Document`-shaped id
    // type cannot carry a `$` key either"). `$`-keyed ids reach the server, which refuses them
    // (an untyped `Error::Driver`, code 52); `{"a.b": 1}` is stored, and then `delete` and
    // `update` of that id are refused: a document no handle can name again.
    assert!(sent_anyway.is_empty(), "{sent_anyway:#?}");
}

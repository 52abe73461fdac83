//! A tennis club's schema where most patterns meet.
//!
//! - `Member`: an outlier array of posts (count + flag), an attribute array of preferences, the
//!   array side of a two-way relation to lockers, computed counts of its lockers, court bookings
//!   and reviews, and an extended reference to its club (`ClubRef(name, review_count)`); it is
//!   the source of `MemberRef(name, posts_count, prefs)` copied into the club twice.
//! - `Club`: captain and vice copies of members, computed sums/counts of members and events, a
//!   subset of recent reviews with counters, and a sharded visit counter.
//! - `Review` (the subset's full items), `CourtSlot` (a preallocated grid), `Locker` (the single
//!   side of the two-way relation, and a holder in the `Area` tree, counted per area), `Event` (a
//!   polymorphic enum), `Coach` (versioned, copied into its club, counted per club), `Swing` (a
//!   bucket series).
//!
//! Every test checks the derived data against an independent recomputation from the raw
//! documents (`problems`), and every handle's `check()` (`assert_checks_clean`). Tests marked
//! `#[ignore = "finding: .."]` assert what the docs promise and fail today.

use pattern_runtime::At;
use pattern_testkit::docs;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bson::{doc, Bson, DateTime, Document};
use mongodb::Database;
use pattern_runtime::doctor::Check;
use pattern_runtime::{
    doctor::CheckReport, DoctorOptions, Error, Fields, Measurement, Model, Ref, SyncOptions,
    Transaction,
};
use pattern_testkit::TestDb;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// The schema
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Post {
    pub text: String,
    pub score: f64,
    #[serde(default)]
    pub meta: Document,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
pub struct Pref {
    pub name: String,
    pub value: Bson,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_members")]
#[extended_ref(MemberRef(name, posts_count, prefs))]
pub struct Member {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub club_id: String,
    #[extended_ref(propagate)]
    pub club: ClubRef,
    #[outlier(limit = 3, overflow = "nc_member_posts", capacity = 4, flag = is_outlier, count = posts_count)]
    pub posts: Vec<Post>,
    pub is_outlier: bool,
    pub posts_count: i64,
    #[attribute]
    pub prefs: Vec<Pref>,
    #[relation(inverse = owner)]
    #[bounded(100)]
    pub lockers: Vec<Ref<Locker>>,
    #[computed(count = Locker, by = owner)]
    pub locker_count: i64,
    #[computed(count = CourtSlot, by = booked_by)]
    pub bookings: i64,
    #[computed(count = Review, by = author_id)]
    pub reviews_written: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_clubs")]
#[extended_ref(ClubRef(name, review_count))]
pub struct Club {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    #[extended_ref(propagate)]
    pub captain: MemberRef,
    #[extended_ref(propagate)]
    pub vice: Option<MemberRef>,
    #[computed(sum = Member.posts_count, by = club_id)]
    pub total_posts: i64,
    #[computed(count = Member, by = club_id)]
    pub member_count: i64,
    #[subset(limit = 3, sort(created_at = -1), full = Review, parent = club_id)]
    pub recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    pub review_count: i64,
    #[summary(sum = recent_reviews.stars)]
    pub star_sum: i64,
    #[computed(count = Event, by = club_id)]
    pub event_count: i64,
    #[computed(sum = Event.fee, by = club_id)]
    pub event_fees: i64,
    #[approximate(sharded, shards = 4)]
    pub visits: i64,
    #[extended_ref(propagate)]
    pub coach: Option<CoachRef>,
    #[computed(count = Coach, by = club_id)]
    pub coach_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_coaches")]
#[versioned(history = "nc_coach_revisions")]
#[extended_ref(CoachRef(name))]
pub struct Coach {
    #[serde(rename = "_id")]
    pub id: String,
    #[version]
    pub version: i64,
    pub name: String,
    pub club_id: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_areas")]
#[tree(parent = parent, ancestors = ancestors)]
pub struct Area {
    #[serde(rename = "_id")]
    pub id: String,
    pub parent: Option<String>,
    pub ancestors: Vec<String>,
    #[computed(count = Locker, by = area)]
    pub locker_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_reviews")]
pub struct Review {
    #[serde(rename = "_id")]
    pub id: String,
    pub club_id: String,
    pub author_id: String,
    pub stars: i32,
    pub text: String,
    pub created_at: DateTime,
}

#[derive(Clone, Debug, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct ReviewExcerpt {
    pub review_id: String,
    pub stars: i32,
    pub created_at: DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            created_at: r.created_at,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_court_slots")]
#[preallocated(resource = court, slot = day, holder = booked_by)]
pub struct CourtSlot {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub court: String,
    pub day: String,
    pub booked_by: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "nc", collection = "nc_lockers")]
#[in_tree(Area, node = area, path = area_path)]
pub struct Locker {
    #[serde(rename = "_id")]
    pub id: String,
    pub number: i32,
    #[relation(inverse = lockers)]
    pub owner: Option<Ref<Member>>,
    pub area: Option<String>,
    pub area_path: Vec<String>,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(group = "nc", collection = "nc_events", derive(Clone, PartialEq))]
pub enum Event {
    Match {
        #[serde(rename = "_id")]
        id: String,
        club_id: String,
        fee: i64,
        opponent: String,
    },
    Social {
        #[serde(rename = "_id")]
        id: String,
        club_id: String,
        fee: i64,
        venue: String,
        extra: Document,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(group = "nc", collection = "nc_swings", key = court, time = at, max_count = 5, span = "1h", summary(speed(sum)))]
pub struct Swing {
    pub court: String,
    pub at: DateTime,
    pub speed: f64,
}

// ---------------------------------------------------------------------------------------------
// Seeding and independent verification from raw documents
// ---------------------------------------------------------------------------------------------

const COURTS: [&str; 2] = ["A", "B"];
const DAYS: usize = 40;

fn day(n: usize) -> String {
    format!("2025-09-{:02}", n + 1)
}

fn post(text: &str) -> Post {
    Post {
        text: text.into(),
        score: 1.0,
        meta: Document::new(),
    }
}

fn pref(name: &str, value: impl Into<Bson>) -> Pref {
    Pref {
        name: name.into(),
        value: value.into(),
    }
}

fn new_member(id: &str, name: &str, club: &Club) -> Member {
    Member {
        id: id.into(),
        name: name.into(),
        club_id: club.id.clone(),
        club: ClubRef::from(club),
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
        prefs: vec![],
        lockers: vec![],
        locker_count: 0,
        bookings: 0,
        reviews_written: 0,
    }
}

fn new_club(id: &str, name: &str, captain: &Member, vice: Option<&Member>) -> Club {
    Club {
        id: id.into(),
        name: name.into(),
        captain: MemberRef::from(captain),
        vice: vice.map(MemberRef::from),
        total_posts: 0,
        member_count: 0,
        recent_reviews: vec![],
        review_count: 0,
        star_sum: 0,
        event_count: 0,
        event_fees: 0,
        visits: 0,
        coach: None,
        coach_count: 0,
    }
}

fn review(id: &str, club: &str, author: &str, stars: i32, minute: i64) -> Review {
    Review {
        id: id.into(),
        club_id: club.into(),
        author_id: author.into(),
        stars,
        text: format!("review {id}"),
        created_at: DateTime::from_millis(1_750_000_000_000 + minute * 60_000),
    }
}

fn a_match(id: &str, club: &str, fee: i64) -> EventMatch {
    EventMatch {
        id: id.into(),
        club_id: club.into(),
        fee,
        opponent: "Rivals".into(),
    }
}

/// Syncs the group and seeds: clubs c1 (members m1, m2, m3; captain m1, vice m2) and c2
/// (member m4, captain m4), through `Member::collection` so the clubs' counts follow; four
/// free lockers; a 2 x 40 court grid.
async fn setup(name: &str) -> TestDb {
    setup_in(pattern_testkit::test_db(name).await).await
}

/// [`setup`] in `db`.
async fn setup_in(db: TestDb) -> TestDb {
    pattern_runtime::sync(&db)
        .group("nc")
        .options(&SyncOptions::new())
        .await
        .unwrap();
    // The clubs' ClubRef copies need the clubs; the clubs' MemberRef copies need the members.
    let c1_shell = new_club("c1", "Center Court", &dummy_member(), None);
    let c2_shell = new_club("c2", "Baseline", &dummy_member(), None);
    let m1 = new_member("m1", "Ada", &c1_shell);
    let m2 = new_member("m2", "Bo", &c1_shell);
    let m3 = new_member("m3", "Cy", &c1_shell);
    let m4 = new_member("m4", "Di", &c2_shell);
    let mut coach = Coach {
        id: "k1".into(),
        version: 0,
        name: "Coach Kim".into(),
        club_id: "c1".into(),
    };
    let mut c1 = new_club("c1", "Center Court", &m1, Some(&m2));
    c1.coach = Some(CoachRef::from(&coach));
    let c2 = new_club("c2", "Baseline", &m4, None);
    Club::collection(&db)
        .raw()
        .insert_many([&c1, &c2])
        .await
        .unwrap();
    Coach::collection(&db).insert(&mut coach).await.unwrap();
    let members = Member::collection(&db);
    for m in [&m1, &m2, &m3, &m4] {
        members.insert(m).await.unwrap();
    }
    let tree = Area::collection(&db).tree();
    for (id, parent) in [
        ("club", None),
        ("north", Some("club")),
        ("south", Some("club")),
        ("north-1", Some("north")),
    ] {
        tree.insert(&area(id, parent)).await.unwrap();
    }
    let lockers = tree.holders::<Locker>();
    for (i, (id, at)) in [
        ("L1", "north-1"),
        ("L2", "north-1"),
        ("L3", "south"),
        ("L4", "north"),
    ]
    .iter()
    .enumerate()
    {
        lockers.insert(&locker(id, i as i32 + 1, at)).await.unwrap();
    }
    let grid: Vec<CourtSlot> = COURTS
        .iter()
        .flat_map(|c| {
            (0..DAYS).map(move |d| CourtSlot {
                id: bson::oid::ObjectId::new(),
                court: (*c).into(),
                day: day(d),
                booked_by: None,
            })
        })
        .collect();
    let allocated = CourtSlot::collection(&db)
        .slots()
        .allocate(grid)
        .await
        .unwrap();
    assert_eq!(allocated.inserted, (COURTS.len() * DAYS) as u64);
    db
}

fn area(id: &str, parent: Option<&str>) -> Area {
    Area {
        id: id.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        locker_count: 0,
    }
}

fn locker(id: &str, number: i32, at: &str) -> Locker {
    Locker {
        id: id.into(),
        number,
        owner: None,
        area: Some(at.into()),
        area_path: vec![],
    }
}

fn dummy_member() -> Member {
    Member {
        id: String::new(),
        name: String::new(),
        club_id: String::new(),
        club: ClubRef {
            id: String::new(),
            name: String::new(),
            review_count: 0,
        },
        posts: vec![],
        is_outlier: false,
        posts_count: 0,
        prefs: vec![],
        lockers: vec![],
        locker_count: 0,
        bookings: 0,
        reviews_written: 0,
    }
}

async fn find_doc(db: &Database, coll: &str, id: impl Into<Bson>) -> Document {
    let id = id.into();
    db.collection::<Document>(coll)
        .find_one(doc! { "_id": id.clone() })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{coll} {id} exists"))
}

/// Every document of every collection, by collection name.
async fn snapshot(db: &Database) -> BTreeMap<String, Vec<Document>> {
    let mut names = db.list_collection_names().await.unwrap();
    names.sort();
    let mut all = BTreeMap::new();
    for n in names {
        if n.starts_with("system.") {
            continue;
        }
        all.insert(n.clone(), docs(db, &n).await);
    }
    all
}

fn num(b: Option<&Bson>) -> f64 {
    match b {
        Some(Bson::Int32(i)) => *i as f64,
        Some(Bson::Int64(i)) => *i as f64,
        Some(Bson::Double(d)) => *d,
        other => panic!("not a number: {other:?}"),
    }
}

fn same_bson(a: Option<&Bson>, b: Option<&Bson>) -> bool {
    match (a, b) {
        (Some(Bson::Double(x)), Some(Bson::Double(y))) if x.is_nan() && y.is_nan() => true,
        (Some(Bson::Array(x)), Some(Bson::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_bson(Some(p), Some(q)))
        }
        (Some(Bson::Document(x)), Some(Bson::Document(y))) => {
            x.len() == y.len() && x.iter().all(|(k, v)| same_bson(Some(v), y.get(k)))
        }
        (Some(x), Some(y)) if matches!(x, Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_)) => {
            matches!(y, Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_))
                && num(Some(x)) == num(Some(y))
        }
        _ => a == b,
    }
}

/// A copy must hold exactly `fields` of `source`, equal to it.
fn copy_problems(what: &str, copy: &Document, source: &Document, fields: &[&str]) -> Vec<String> {
    let mut out = vec![];
    let keys: BTreeSet<&str> = copy.keys().map(|k| k.as_str()).collect();
    let want: BTreeSet<&str> = fields.iter().copied().collect();
    if keys != want {
        out.push(format!("{what}: keys {keys:?}, expected {want:?}"));
    }
    for f in fields {
        if !same_bson(copy.get(f), source.get(f)) {
            out.push(format!(
                "{what}.{f}: copy {:?}, source {:?}",
                copy.get(f),
                source.get(f)
            ));
        }
    }
    out
}

/// Everything derived in the schema, recomputed from the raw documents: the list of what
/// disagrees.
async fn problems(db: &Database) -> Vec<String> {
    let members = docs(db, "nc_members").await;
    let clubs = docs(db, "nc_clubs").await;
    let reviews = docs(db, "nc_reviews").await;
    let slots = docs(db, "nc_court_slots").await;
    let lockers = docs(db, "nc_lockers").await;
    let events = docs(db, "nc_events").await;
    let overflow = docs(db, "nc_member_posts").await;
    let areas = docs(db, "nc_areas").await;
    let coaches = docs(db, "nc_coaches").await;
    let mut out = vec![];
    // The tree: each area's ancestors from the parents; each locker's path from its area.
    let parent_of: BTreeMap<String, Option<String>> = areas
        .iter()
        .map(|a| {
            (
                a.get_str("_id").unwrap().to_owned(),
                a.get_str("parent").ok().map(str::to_owned),
            )
        })
        .collect();
    let path_to = |id: &str| -> Vec<Bson> {
        let mut path = vec![Bson::String(id.to_owned())];
        let mut at = parent_of.get(id).cloned().flatten();
        while let Some(p) = at {
            path.insert(0, Bson::String(p.clone()));
            at = parent_of.get(&p).cloned().flatten();
        }
        path
    };
    for a in &areas {
        let id = a.get_str("_id").unwrap();
        let mut want = path_to(id);
        want.pop();
        if a.get_array("ancestors").unwrap() != &want {
            out.push(format!(
                "area {id}: ancestors {:?}, parents say {want:?}",
                a.get("ancestors")
            ));
        }
        let n = lockers
            .iter()
            .filter(|l| l.get_str("area").ok() == Some(id))
            .count();
        if num(a.get("lockerCount")) != n as f64 {
            out.push(format!(
                "area {id}.lockerCount {:?}, expected {n}",
                a.get("lockerCount")
            ));
        }
    }
    for l in &lockers {
        let id = l.get_str("_id").unwrap();
        let want = match l.get_str("area") {
            Ok(area) => path_to(area),
            Err(_) => vec![],
        };
        if l.get_array("areaPath").unwrap() != &want {
            out.push(format!(
                "locker {id}: areaPath {:?}, expected {want:?}",
                l.get("areaPath")
            ));
        }
    }
    for m in &members {
        let id = m.get("_id").unwrap().clone();
        let embedded = m.get_array("posts").unwrap().len();
        let over: Vec<&Document> = overflow
            .iter()
            .filter(|o| o.get("memberId") == Some(&id))
            .collect();
        let overflowed: usize = over
            .iter()
            .map(|o| o.get_array("posts").unwrap().len())
            .sum();
        if embedded > 3 {
            out.push(format!("{id}: {embedded} embedded posts over the limit 3"));
        }
        for o in &over {
            if o.get_array("posts").unwrap().len() > 4 {
                out.push(format!("{id}: overflow {o} over capacity 4"));
            }
        }
        let count = m.get_i64("postsCount").unwrap();
        if count != (embedded + overflowed) as i64 {
            out.push(format!(
                "{id}.postsCount {count}, items {}",
                embedded + overflowed
            ));
        }
        if m.get_bool("isOutlier").unwrap() == over.is_empty() {
            out.push(format!(
                "{id}.isOutlier {:?} with {} overflow documents",
                m.get_bool("isOutlier"),
                over.len()
            ));
        }
        let owned: BTreeSet<String> = lockers
            .iter()
            .filter(|l| l.get("owner") == Some(&id))
            .map(|l| l.get_str("_id").unwrap().to_owned())
            .collect();
        let listed: Vec<String> = m
            .get_array("lockers")
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap().to_owned())
            .collect();
        if listed.iter().cloned().collect::<BTreeSet<_>>() != owned || listed.len() != owned.len() {
            out.push(format!("{id}.lockers {listed:?}, owners say {owned:?}"));
        }
        let expect = [
            ("lockerCount", owned.len()),
            (
                "bookings",
                slots
                    .iter()
                    .filter(|s| s.get("bookedBy") == Some(&id))
                    .count(),
            ),
            (
                "reviewsWritten",
                reviews
                    .iter()
                    .filter(|r| r.get("authorId") == Some(&id))
                    .count(),
            ),
        ];
        for (field, n) in expect {
            if num(m.get(field)) != n as f64 {
                out.push(format!("{id}.{field} {:?}, expected {n}", m.get(field)));
            }
        }
        let club_id = m.get("clubId").unwrap();
        if let Some(club) = clubs.iter().find(|c| c.get("_id") == Some(club_id)) {
            out.extend(copy_problems(
                &format!("{id}.club"),
                m.get_document("club").unwrap(),
                club,
                &["_id", "name", "reviewCount"],
            ));
        }
    }
    for c in &clubs {
        let id = c.get("_id").unwrap().clone();
        for field in ["captain", "vice"] {
            match c.get(field) {
                Some(Bson::Document(copy)) => {
                    let source = members
                        .iter()
                        .find(|m| m.get("_id") == copy.get("_id"))
                        .expect("copied member exists");
                    out.extend(copy_problems(
                        &format!("{id}.{field}"),
                        copy,
                        source,
                        &["_id", "name", "postsCount", "prefs"],
                    ));
                }
                Some(Bson::Null) | None => {}
                other => out.push(format!("{id}.{field} is {other:?}")),
            }
        }
        match c.get("coach") {
            Some(Bson::Document(copy)) => {
                let source = coaches
                    .iter()
                    .find(|k| k.get("_id") == copy.get("_id"))
                    .expect("copied coach exists");
                out.extend(copy_problems(
                    &format!("{id}.coach"),
                    copy,
                    source,
                    &["_id", "name"],
                ));
            }
            Some(Bson::Null) | None => {}
            other => out.push(format!("{id}.coach is {other:?}")),
        }
        let coach_count = coaches
            .iter()
            .filter(|k| k.get("clubId") == Some(&id))
            .count();
        if num(c.get("coachCount")) != coach_count as f64 {
            out.push(format!(
                "{id}.coachCount {:?}, expected {coach_count}",
                c.get("coachCount")
            ));
        }
        let of_club: Vec<&Document> = members
            .iter()
            .filter(|m| m.get("clubId") == Some(&id))
            .collect();
        let mut club_reviews: Vec<&Document> = reviews
            .iter()
            .filter(|r| r.get("clubId") == Some(&id))
            .collect();
        club_reviews.sort_by_key(|r| std::cmp::Reverse(r.get_datetime("createdAt").unwrap()));
        let club_events: Vec<&Document> = events
            .iter()
            .filter(|e| e.get("clubId") == Some(&id))
            .collect();
        let expect = [
            (
                "totalPosts",
                of_club
                    .iter()
                    .map(|m| m.get_i64("postsCount").unwrap() as f64)
                    .sum::<f64>(),
            ),
            ("memberCount", of_club.len() as f64),
            ("reviewCount", club_reviews.len() as f64),
            (
                "starSum",
                club_reviews.iter().map(|r| num(r.get("stars"))).sum(),
            ),
            ("eventCount", club_events.len() as f64),
            (
                "eventFees",
                club_events.iter().map(|e| num(e.get("fee"))).sum(),
            ),
        ];
        for (field, n) in expect {
            if num(c.get(field)) != n {
                out.push(format!("{id}.{field} {:?}, expected {n}", c.get(field)));
            }
        }
        let embedded: Vec<&str> = c
            .get_array("recentReviews")
            .unwrap()
            .iter()
            .map(|r| r.as_document().unwrap().get_str("reviewId").unwrap())
            .collect();
        let newest: Vec<&str> = club_reviews
            .iter()
            .take(3)
            .map(|r| r.get_str("_id").unwrap())
            .collect();
        if embedded != newest {
            out.push(format!(
                "{id}.recentReviews {embedded:?}, newest {newest:?}"
            ));
        }
    }
    out
}

async fn assert_consistent(db: &Database, when: &str) {
    let p = problems(db).await;
    assert!(
        p.is_empty(),
        "{when}: derived data disagrees:\n{}",
        p.join("\n")
    );
}

/// Every pattern handle's `check()`, by name.
async fn all_checks(db: &Database) -> Vec<(&'static str, CheckReport)> {
    vec![
        (
            "outlier",
            Member::collection(db)
                .outlier(Member::FIELDS.posts)
                .check()
                .await
                .unwrap(),
        ),
        (
            "attribute",
            Member::collection(db)
                .attributes(Member::FIELDS.prefs)
                .check()
                .await
                .unwrap(),
        ),
        (
            "two-way",
            Locker::collection(db)
                .relation(Locker::FIELDS.owner)
                .check()
                .await
                .unwrap(),
        ),
        (
            "slots",
            CourtSlot::collection(db).slots().check().await.unwrap(),
        ),
        (
            "subset",
            Club::collection(db)
                .subset(Club::FIELDS.recent_reviews)
                .check()
                .await
                .unwrap(),
        ),
        (
            "member refs",
            Member::collection(db).references().check().await.unwrap(),
        ),
        (
            "club refs",
            Club::collection(db).references().check().await.unwrap(),
        ),
        (
            "member computed",
            Member::collection(db).computed().check().await.unwrap(),
        ),
        (
            "club computed",
            Club::collection(db).computed().check().await.unwrap(),
        ),
        ("series", Swing::series(db).check().await.unwrap()),
        ("tree", Area::collection(db).tree().check().await.unwrap()),
        (
            "area computed",
            Area::collection(db).computed().check().await.unwrap(),
        ),
    ]
}

async fn assert_checks_clean(db: &Database, when: &str) {
    for (name, report) in all_checks(db).await {
        assert!(report.is_clean(), "{when}: {name} check: {report}");
    }
}

const DRIFT: [Check; 9] = [
    Check::SubsetDrift,
    Check::ComputedDrift,
    Check::StaleCopy,
    Check::BucketOverCap,
    Check::TreeDrift,
    Check::OutlierDrift,
    Check::TwoWayDrift,
    Check::AttributeDrift,
    Check::GridDrift,
];

/// The doctor's drift findings over the whole group (a sample larger than every collection).
async fn doctor_drift(db: &Database) -> Vec<pattern_runtime::doctor::Finding> {
    let report = pattern_runtime::doctor(db)
        .group("nc")
        .options(&DoctorOptions::new().sample_size(10_000))
        .await
        .unwrap();
    report
        .findings
        .into_iter()
        .filter(|f| DRIFT.contains(&f.check))
        .collect()
}

fn write_commands(db: &TestDb) -> Vec<String> {
    db.take_commands()
        .into_iter()
        .filter(|c| {
            matches!(
                c.name.as_str(),
                "insert" | "update" | "delete" | "findAndModify" | "bulkWrite"
            )
        })
        .map(|c| format!("{} {}", c.name, c.target))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. The caller's transaction on every handle
// ---------------------------------------------------------------------------------------------

/// One write of every bound handle, in `tx`.
async fn one_of_everything(db: &Database, tx: &Transaction) {
    let posts: Vec<Post> = (0..5).map(|i| post(&format!("tx post {i}"))).collect();
    Member::collection(db)
        .outlier(Member::FIELDS.posts)
        .in_transaction(tx)
        .push_many("m1", posts)
        .await
        .unwrap();
    Member::collection(db)
        .attributes(Member::FIELDS.prefs)
        .in_transaction(tx)
        .set("m1", &pref("hand", "left"))
        .await
        .unwrap();
    let slots = CourtSlot::collection(db).slots().in_transaction(tx);
    slots.book("A", day(0), "m1").await.unwrap();
    slots
        .book_all(&[("B", day(1)), ("B", day(2))], "m2")
        .await
        .unwrap();
    Event::collection(db)
        .in_transaction(tx)
        .variant::<EventMatch>()
        .insert(&a_match("e1", "c1", 30))
        .await
        .unwrap();
    Club::collection(db)
        .subset(Club::FIELDS.recent_reviews)
        .in_transaction(tx)
        .push("c1", review("r1", "c1", "m3", 4, 1))
        .await
        .unwrap();
    Locker::collection(db)
        .relation(Locker::FIELDS.owner)
        .in_transaction(tx)
        .assign(&"L1".to_owned(), &"m1".to_owned())
        .await
        .unwrap();
    Member::collection(db)
        .in_transaction(tx)
        .update("m2", doc! { "$set": { "name": "Bo B." } })
        .await
        .unwrap();
    Club::collection(db)
        .in_transaction(tx)
        .update("c1", doc! { "$set": { "name": "Centre Court" } })
        .await
        .unwrap();
    Locker::collection(db)
        .in_transaction(tx)
        .update("L2", doc! { "$set": { "number": 22 } })
        .await
        .unwrap();
    let tree = Area::collection(db).tree().in_transaction(tx);
    tree.insert(&area("east", Some("club"))).await.unwrap();
    tree.holders::<Locker>()
        .insert(&locker("L9", 9, "east"))
        .await
        .unwrap();
    tree.move_under("north-1", "south").await.unwrap();
    tree.holders::<Locker>().place("L3", "north").await.unwrap();
    Coach::collection(db)
        .in_transaction(tx)
        .update(At("k1", 1), doc! { "$set": { "name": "Coach K." } })
        .await
        .unwrap();
    pattern_runtime::approximation::ShardedCounter::new(db.collection("nc_counters"), "hits", 4)
        .unwrap()
        .in_transaction(tx)
        .add(1)
        .await
        .unwrap();
    pattern_runtime::approximation::SampledCounter::new(db.collection("nc_pages"), "likes", 1.0)
        .unwrap()
        .in_transaction(tx)
        .add("home")
        .await
        .unwrap();
    Member::collection(db)
        .computed()
        .in_transaction(tx)
        .rebuild("m3")
        .await
        .unwrap();
    Swing::series(db)
        .in_transaction(tx)
        .insert_many(&[Swing {
            court: "A".into(),
            at: DateTime::from_millis(1_750_000_000_000),
            speed: 120.0,
        }])
        .await
        .unwrap();
    Club::collection(db)
        .counter(Club::FIELDS.visits)
        .of("c1")
        .in_transaction(tx)
        .add(1)
        .await
        .unwrap();
}

#[tokio::test]
async fn tx_abort_leaves_every_collection_as_it_was() {
    let db = setup("nc_tx_abort").await;
    // Some history first, so the abort has something to leave alone.
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .push_many("m1", vec![post("old 1"), post("old 2")])
        .await
        .unwrap();
    let before = snapshot(&db).await;

    let tx = Transaction::start(&db).await.unwrap();
    one_of_everything(&db, &tx).await;
    // Not visible outside the transaction before the commit.
    assert_eq!(snapshot(&db).await, before, "visible before commit");
    tx.abort().await.unwrap();

    assert_eq!(snapshot(&db).await, before);
    assert_consistent(&db, "after abort").await;
    assert_checks_clean(&db, "after abort").await;
}

#[tokio::test]
async fn tx_commit_keeps_every_write_and_what_derives_from_it() {
    let db = setup("nc_tx_commit").await;
    let tx = Transaction::start(&db).await.unwrap();
    one_of_everything(&db, &tx).await;
    tx.commit().await.unwrap();

    assert_consistent(&db, "after commit").await;
    assert_checks_clean(&db, "after commit").await;
    let m1 = find_doc(&db, "nc_members", "m1").await;
    assert_eq!(m1.get_i64("postsCount").unwrap(), 5);
    assert!(m1.get_bool("isOutlier").unwrap());
    assert_eq!(num(m1.get("bookings")), 1.0);
    assert_eq!(num(m1.get("lockerCount")), 1.0);
    assert_eq!(
        m1.get_document("club").unwrap().get_str("name").unwrap(),
        "Centre Court"
    );
    assert_eq!(
        num(m1.get_document("club").unwrap().get("reviewCount")),
        1.0
    );
    let m2 = find_doc(&db, "nc_members", "m2").await;
    assert_eq!(num(m2.get("bookings")), 2.0);
    let m3 = find_doc(&db, "nc_members", "m3").await;
    assert_eq!(num(m3.get("reviewsWritten")), 1.0);
    let c1 = find_doc(&db, "nc_clubs", "c1").await;
    assert_eq!(num(c1.get("totalPosts")), 5.0);
    assert_eq!(num(c1.get("eventCount")), 1.0);
    assert_eq!(num(c1.get("eventFees")), 30.0);
    assert_eq!(num(c1.get("reviewCount")), 1.0);
    assert_eq!(num(c1.get("starSum")), 4.0);
    let captain = c1.get_document("captain").unwrap();
    assert_eq!(num(captain.get("postsCount")), 5.0);
    assert_eq!(
        captain.get_array("prefs").unwrap(),
        &vec![Bson::Document(doc! { "name": "hand", "value": "left" })]
    );
    assert_eq!(
        c1.get_document("vice").unwrap().get_str("name").unwrap(),
        "Bo B."
    );
    assert_eq!(
        Club::collection(&db)
            .counter(Club::FIELDS.visits)
            .of("c1")
            .read()
            .await
            .unwrap(),
        1,
        "the sharded counter's add committed"
    );
    assert_eq!(docs(&db, "nc_swings").await.len(), 1);
    assert_eq!(docs(&db, "nc_lockers").await.len(), 5);
    // The versioned write: its revision, and the club's copy of the coach.
    assert_eq!(Coach::collection(&db).history("k1").await.unwrap().len(), 1);
    assert_eq!(
        c1.get_document("coach").unwrap().get_str("name").unwrap(),
        "Coach K."
    );
    // The tree: north-1 moved under south with its lockers; L3 placed in north; L9 in east.
    assert_eq!(
        find_doc(&db, "nc_lockers", "L1")
            .await
            .get_array("areaPath")
            .unwrap(),
        &vec![
            Bson::from("club"),
            Bson::from("south"),
            Bson::from("north-1")
        ]
    );
    assert_eq!(
        num(find_doc(&db, "nc_areas", "north").await.get("lockerCount")),
        2.0
    );
    assert_eq!(
        num(find_doc(&db, "nc_areas", "east").await.get("lockerCount")),
        1.0
    );
    // The standalone counters.
    let page = find_doc(&db, "nc_pages", "home").await;
    assert_eq!(num(page.get("likes")), 1.0);
    let hits = pattern_runtime::approximation::ShardedCounter::new(
        db.collection("nc_counters"),
        "hits",
        4,
    )
    .unwrap();
    assert_eq!(hits.read().await.unwrap(), 1);
}

/// A refusal half-way (a taken slot, a hostile value): the refused operation writes nothing;
/// the caller still decides, and a commit keeps exactly the operations that succeeded.
#[tokio::test]
async fn tx_refusal_half_way_then_commit() {
    let db = setup("nc_tx_refusal_commit").await;
    CourtSlot::collection(&db)
        .slots()
        .book("A", day(5), "m4")
        .await
        .unwrap();
    let tx = Transaction::start(&db).await.unwrap();
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .in_transaction(&tx)
        .push("m1", post("before the refusal"))
        .await
        .unwrap();
    let refused = CourtSlot::collection(&db)
        .slots()
        .in_transaction(&tx)
        .book("A", day(5), "m1")
        .await;
    match refused {
        Err(Error::AlreadyBooked { holder, .. }) => {
            assert_eq!(holder.as_deref(), Some(&Bson::String("m4".into())))
        }
        other => panic!("expected AlreadyBooked, got {other:?}"),
    }
    // All or nothing inside the caller's transaction: the first two are free, the third taken.
    let refused = CourtSlot::collection(&db)
        .slots()
        .in_transaction(&tx)
        .book_all(&[("B", day(6)), ("B", day(7)), ("A", day(5))], "m2")
        .await;
    assert!(
        matches!(refused, Err(Error::AlreadyBooked { .. })),
        "{refused:?}"
    );
    let hostile = Member::collection(&db)
        .attributes(Member::FIELDS.prefs)
        .in_transaction(&tx)
        .set("m1", &pref("p", doc! { "$gt": 1 }))
        .await;
    assert!(
        matches!(hostile, Err(Error::InvalidValue { .. })),
        "{hostile:?}"
    );
    Event::collection(&db)
        .in_transaction(&tx)
        .variant::<EventMatch>()
        .insert(&a_match("e-after", "c2", 7))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let m1 = find_doc(&db, "nc_members", "m1").await;
    assert_eq!(m1.get_i64("postsCount").unwrap(), 1);
    assert_eq!(num(m1.get("bookings")), 0.0);
    assert!(m1.get_array("prefs").unwrap().is_empty());
    assert_eq!(
        num(find_doc(&db, "nc_clubs", "c2").await.get("eventFees")),
        7.0
    );
    assert_eq!(
        num(find_doc(&db, "nc_members", "m2").await.get("bookings")),
        0.0
    );
    let free = CourtSlot::collection(&db)
        .slots()
        .available("B", day(6), day(8))
        .await
        .unwrap();
    assert_eq!(free.len(), 2, "book_all undid its first two bookings");
    assert_consistent(&db, "after the commit").await;
    assert_checks_clean(&db, "after the commit").await;
}

/// A refusal the server makes inside the transaction (a duplicate `_id`): whatever the caller
/// then does, the result is all or nothing, never a part of the transaction.
#[tokio::test]
async fn tx_server_refusal_half_way_is_all_or_nothing() {
    let db = setup("nc_tx_server_refusal").await;
    Event::collection(&db)
        .variant::<EventMatch>()
        .insert(&a_match("e1", "c1", 10))
        .await
        .unwrap();
    let before = snapshot(&db).await;
    let tx = Transaction::start(&db).await.unwrap();
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .in_transaction(&tx)
        .push_many("m2", (0..4).map(|i| post(&format!("p{i}"))).collect())
        .await
        .unwrap();
    CourtSlot::collection(&db)
        .slots()
        .in_transaction(&tx)
        .book("B", day(3), "m2")
        .await
        .unwrap();
    let dup = Event::collection(&db)
        .in_transaction(&tx)
        .variant::<EventMatch>()
        .insert(&a_match("e1", "c2", 99))
        .await;
    assert!(
        matches!(&dup, Err(e) if e.is_duplicate_key()),
        "expected DuplicateKey, got {dup:?}"
    );
    let commit = tx.commit().await;
    let after = snapshot(&db).await;
    if commit.is_ok() {
        // Committed: the two writes before the refusal, with what derives from them.
        let m2 = find_doc(&db, "nc_members", "m2").await;
        assert_eq!(m2.get_i64("postsCount").unwrap(), 4);
        assert_eq!(num(m2.get("bookings")), 1.0);
    } else {
        assert_eq!(after, before, "a failed commit keeps nothing");
    }
    assert_consistent(&db, "after the refused transaction").await;
    assert_checks_clean(&db, "after the refused transaction").await;
}

// ---------------------------------------------------------------------------------------------
// 2. The map of derived data, outside any caller's transaction
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn outlier_pushes_reach_the_captain_copy_and_the_club_sum() {
    let db = setup("nc_map_outlier").await;
    let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
    posts
        .push_many("m1", (0..7).map(|i| post(&format!("m1 {i}"))).collect())
        .await
        .unwrap();
    assert_consistent(&db, "7 posts (3 embedded, 4 overflowed)").await;
    for i in 0..3 {
        posts.push("m2", post(&format!("m2 {i}"))).await.unwrap();
    }
    posts.push("m4", post("m4")).await.unwrap();
    assert_consistent(&db, "pushes of captain, vice, other club").await;
    let c1 = find_doc(&db, "nc_clubs", "c1").await;
    assert_eq!(num(c1.get("totalPosts")), 10.0);
    assert_eq!(
        num(c1.get_document("captain").unwrap().get("postsCount")),
        7.0
    );
    assert_eq!(num(c1.get_document("vice").unwrap().get("postsCount")), 3.0);
    assert_eq!(
        num(find_doc(&db, "nc_clubs", "c2").await.get("totalPosts")),
        1.0
    );

    let removed = posts.remove("m1", &post("m1 5")).await.unwrap();
    assert_eq!(removed, 1);
    assert_consistent(&db, "after remove").await;
    assert_eq!(
        num(find_doc(&db, "nc_clubs", "c1").await.get("totalPosts")),
        9.0
    );
    // The counts were kept: nothing to rebuild.
    assert_eq!(posts.rebuild("m1").await.unwrap().repaired, 0);
    assert_eq!(posts.count("m1").await.unwrap(), 6);
    let all: Vec<String> = posts
        .items("m1")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(all, ["m1 0", "m1 1", "m1 2", "m1 3", "m1 4", "m1 6"]);
    assert_consistent(&db, "after rebuild").await;
    assert_checks_clean(&db, "outlier writes").await;
    assert!(doctor_drift(&db).await.is_empty());
}

#[tokio::test]
async fn attribute_sets_reach_both_copies_in_the_club() {
    let db = setup("nc_map_attribute").await;
    // m2 is the vice of c1; make it c2's vice as well, so it is copied into two clubs.
    Club::collection(&db)
        .update("c2", doc! { "$set": { "vice": { "_id": "m2", "name": "Bo", "postsCount": 0_i64, "prefs": [] } } })
        .await
        .unwrap();
    let prefs = Member::collection(&db).attributes(Member::FIELDS.prefs);
    prefs.set("m2", &pref("racket", "Wilson")).await.unwrap();
    prefs.set("m2", &pref("grip", 3)).await.unwrap();
    prefs.set("m2", &pref("racket", "Head")).await.unwrap();
    assert_consistent(&db, "after sets").await;
    let c2 = find_doc(&db, "nc_clubs", "c2").await;
    assert_eq!(
        c2.get_document("vice").unwrap().get_array("prefs").unwrap(),
        &vec![
            Bson::Document(doc! { "name": "racket", "value": "Head" }),
            Bson::Document(doc! { "name": "grip", "value": 3 }),
        ]
    );
    prefs.unset("m2", &"racket".to_owned()).await.unwrap();
    assert_consistent(&db, "after unset").await;
    assert_eq!(
        prefs.get("m2", &"grip".to_owned()).await.unwrap(),
        Some(pref("grip", 3))
    );
    assert_checks_clean(&db, "attribute writes").await;
}

#[tokio::test]
async fn slot_bookings_move_the_holders_count() {
    let db = setup("nc_map_slots").await;
    let slots = CourtSlot::collection(&db).slots();
    slots.book("A", day(0), "m1").await.unwrap();
    slots
        .book_all(&[("A", day(1)), ("A", day(2)), ("B", day(2))], "m3")
        .await
        .unwrap();
    assert_consistent(&db, "after bookings").await;
    // All or nothing: the third is taken, so m2 gets nothing and its count stays 0.
    let refused = slots
        .book_all(&[("B", day(3)), ("B", day(4)), ("A", day(0))], "m2")
        .await;
    assert!(
        matches!(refused, Err(Error::AlreadyBooked { .. })),
        "{refused:?}"
    );
    assert_eq!(
        num(find_doc(&db, "nc_members", "m2").await.get("bookings")),
        0.0
    );
    // Cancel by someone else: refused; by the holder: freed.
    assert!(matches!(
        slots.cancel("A", day(1), "m1").await,
        Err(Error::NotHolder { .. })
    ));
    slots.cancel("A", day(1), "m3").await.unwrap();
    slots.release("A", day(0)).await.unwrap();
    assert_consistent(&db, "after cancel and release").await;
    assert_eq!(
        num(find_doc(&db, "nc_members", "m3").await.get("bookings")),
        2.0
    );
    assert_eq!(
        num(find_doc(&db, "nc_members", "m1").await.get("bookings")),
        0.0
    );
    assert_checks_clean(&db, "slot writes").await;
}

#[tokio::test]
async fn variant_writes_keep_the_club_counts_and_sums() {
    let db = setup("nc_map_variants").await;
    let events = Event::collection(&db);
    let matches = events.variant::<EventMatch>();
    let socials = events.variant::<EventSocial>();
    matches.insert(&a_match("e1", "c1", 10)).await.unwrap();
    matches
        .insert_many(&[a_match("e2", "c1", 20), a_match("e3", "c2", 5)])
        .await
        .unwrap();
    socials
        .insert(&EventSocial {
            id: "s1".into(),
            club_id: "c1".into(),
            fee: 100,
            venue: "Bar".into(),
            extra: doc! { "dress": "casual" },
        })
        .await
        .unwrap();
    assert_consistent(&db, "after inserts").await;
    // Move e2 to c2 (the pointer), raise every c2 match's fee.
    matches
        .update("e2", doc! { "$set": { "clubId": "c2" } })
        .await
        .unwrap();
    matches
        .update_many(doc! { "clubId": "c2" }, doc! { "$inc": { "fee": 1 } })
        .await
        .unwrap();
    assert_consistent(&db, "after updates").await;
    let c2 = find_doc(&db, "nc_clubs", "c2").await;
    assert_eq!(num(c2.get("eventCount")), 2.0);
    assert_eq!(num(c2.get("eventFees")), 27.0);
    assert_eq!(
        matches
            .delete_many(doc! { "fee": { "$gt": 6 } })
            .await
            .unwrap(),
        2
    );
    assert_consistent(&db, "after delete_many").await;
    let c1 = find_doc(&db, "nc_clubs", "c1").await;
    assert_eq!(num(c1.get("eventCount")), 1.0);
    assert_eq!(num(c1.get("eventFees")), 100.0);
    assert_checks_clean(&db, "variant writes").await;
}

#[tokio::test]
async fn subset_pushes_reach_the_members_club_copy_and_the_authors_count() {
    let db = setup("nc_map_subset").await;
    let reviews = Club::collection(&db).subset(Club::FIELDS.recent_reviews);
    for (i, author) in ["m1", "m2", "m1", "m3"].iter().enumerate() {
        reviews
            .push(
                "c1",
                review(&format!("r{i}"), "c1", author, i as i32 + 1, i as i64),
            )
            .await
            .unwrap();
    }
    assert_consistent(&db, "after 4 pushes (limit 3)").await;
    let m2 = find_doc(&db, "nc_members", "m2").await;
    assert_eq!(
        num(m2.get_document("club").unwrap().get("reviewCount")),
        4.0
    );
    assert_eq!(
        num(find_doc(&db, "nc_members", "m1")
            .await
            .get("reviewsWritten")),
        2.0
    );
    reviews.remove("c1", "r3").await.unwrap();
    assert_consistent(&db, "after a removal").await;
    assert_eq!(reviews.count("c1").await.unwrap(), 3);
    reviews.rebuild("c1").await.unwrap();
    assert_consistent(&db, "after rebuild").await;
    assert_checks_clean(&db, "subset writes").await;
}

#[tokio::test]
async fn two_way_assigns_move_the_locker_counts() {
    let db = setup("nc_map_two_way").await;
    let owner = Locker::collection(&db).relation(Locker::FIELDS.owner);
    let assigned = owner
        .assign(&"L1".to_owned(), &"m1".to_owned())
        .await
        .unwrap();
    assert!(assigned.added);
    assert_eq!(assigned.previous, None);
    owner
        .assign(&"L2".to_owned(), &"m1".to_owned())
        .await
        .unwrap();
    let moved = owner
        .assign(&"L1".to_owned(), &"m2".to_owned())
        .await
        .unwrap();
    assert_eq!(moved.previous, Some(Bson::String("m1".into())));
    assert_eq!(moved.pulled, 1);
    assert_consistent(&db, "after assigns").await;
    assert_eq!(
        num(find_doc(&db, "nc_members", "m1").await.get("lockerCount")),
        1.0
    );
    assert_eq!(
        num(find_doc(&db, "nc_members", "m2").await.get("lockerCount")),
        1.0
    );
    assert!(matches!(
        owner.assign(&"L1".to_owned(), &"nobody".to_owned()).await,
        Err(Error::NotFound { .. })
    ));
    assert_consistent(&db, "after a refused assign").await;
    assert_checks_clean(&db, "two-way writes").await;
}

#[tokio::test]
async fn reference_updates_rewrite_copies_both_ways() {
    let db = setup("nc_map_refs").await;
    Club::collection(&db)
        .update("c1", doc! { "$set": { "name": "Centre" } })
        .await
        .unwrap();
    Member::collection(&db)
        .update("m1", doc! { "$set": { "name": "Ada L." } })
        .await
        .unwrap();
    assert_consistent(&db, "after renames").await;
    // Moving a member to another club through Computing moves the counts.
    Member::collection(&db)
        .update("m3", doc! { "$set": { "clubId": "c2" } })
        .await
        .unwrap();
    let c2 = find_doc(&db, "nc_clubs", "c2").await;
    assert_eq!(num(c2.get("memberCount")), 2.0);
    // The member's `club` copy still names c1: the update set only the pointer.
    let m3 = find_doc(&db, "nc_members", "m3").await;
    assert_eq!(
        m3.get_document("club").unwrap().get_str("_id").unwrap(),
        "c1"
    );
    assert_checks_clean(&db, "reference writes").await;
}

// ---------------------------------------------------------------------------------------------
// 3. raw(): drift found by the doctor and the checks, fixed by the repairs
// ---------------------------------------------------------------------------------------------

fn ids_of(findings: &[pattern_runtime::doctor::Finding], check: Check) -> BTreeSet<String> {
    findings
        .iter()
        .filter(|f| f.check == check)
        .flat_map(|f| f.documents.iter().map(|d| d.to_string()))
        .collect()
}

fn report_ids(report: &CheckReport) -> BTreeSet<String> {
    report.documents().iter().map(|d| d.to_string()).collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter()
        .map(|i| Bson::String((*i).into()).to_string())
        .collect()
}

#[tokio::test]
async fn raw_outlier_count_drift_found_and_repaired() {
    let db = setup("nc_raw_outlier").await;
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .push_many("m1", (0..5).map(|i| post(&format!("{i}"))).collect())
        .await
        .unwrap();
    Member::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "m1" },
            doc! { "$set": { "postsCount": 42_i64 } },
        )
        .await
        .unwrap();
    let drift = doctor_drift(&db).await;
    assert_eq!(
        ids_of(&drift, Check::OutlierDrift),
        set(&["m1"]),
        "{drift:#?}"
    );
    let outlier = Member::collection(&db).outlier(Member::FIELDS.posts);
    let check = outlier.check().await.unwrap();
    assert_eq!(report_ids(&check), set(&["m1"]));
    let repaired = outlier.repair().await.unwrap();
    assert!(repaired.is_clean(), "{repaired}");
    assert!(repaired.repaired >= 1);
    assert_eq!(
        find_doc(&db, "nc_members", "m1")
            .await
            .get_i64("postsCount")
            .unwrap(),
        5
    );
    // The raw write also left the club's sum and the captain's copy behind: repair those too.
    Club::collection(&db).computed().repair().await.unwrap();
    Member::collection(&db).references().repair().await.unwrap();
    assert_consistent(&db, "after the repairs").await;
    assert_checks_clean(&db, "after the repairs").await;
    assert!(doctor_drift(&db).await.is_empty());
}

/// The raw write changed the count without its sum; the outlier's repair then writes the count
/// back through the map, which recomputes the club's sum from the members (a repair's writes
/// rebuild what derives from them rather than move it by a difference nobody saw).
#[tokio::test]
async fn raw_outlier_drift_repair_leaves_the_sum_it_derives_right() {
    let db = setup("nc_raw_outlier_sum").await;
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .push_many("m1", (0..5).map(|i| post(&format!("{i}"))).collect())
        .await
        .unwrap();
    Member::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "m1" },
            doc! { "$set": { "postsCount": 42_i64 } },
        )
        .await
        .unwrap();
    Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .repair()
        .await
        .unwrap();
    assert_eq!(
        num(find_doc(&db, "nc_clubs", "c1").await.get("totalPosts")),
        5.0,
        "the club's sum after the outlier's repair"
    );
}

#[tokio::test]
async fn raw_drift_of_every_pattern_found_and_repaired() {
    // It writes drift around the toolkit on purpose.
    let db = setup_in(pattern_testkit::test_db_unvalidated("nc_raw_all").await).await;
    let members = Member::collection(&db);
    // (a) a duplicate attribute key, written around the toolkit, in m3 (no copy of m3).
    members
        .raw()
        .update_one(
            doc! { "_id": "m3" },
            doc! { "$push": { "prefs": { "$each": [ { "name": "k", "value": 1 }, { "name": "k", "value": 2 } ] } } },
        )
        .await
        .unwrap();
    // (b) a locker whose owner field names m3, m3's array not listing it; m3's count behind.
    Locker::collection(&db)
        .raw()
        .update_one(doc! { "_id": "L3" }, doc! { "$set": { "owner": "m3" } })
        .await
        .unwrap();
    // (c) a slot booked around the toolkit: m4's bookings behind.
    CourtSlot::collection(&db)
        .raw()
        .update_one(
            doc! { "court": "B", "day": day(7) },
            doc! { "$set": { "bookedBy": "m4" } },
        )
        .await
        .unwrap();
    // (d) an event inserted raw: c2's counts behind.
    db.collection::<Document>("nc_events")
        .insert_one(doc! { "_id": "raw-e", "type": "match", "clubId": "c2", "fee": 12_i64, "opponent": "X" })
        .await
        .unwrap();
    // (e) a review inserted raw: c1's subset and counters, and m2's count behind.
    Review::collection(&db)
        .raw()
        .insert_one(review("raw-r", "c1", "m2", 5, 10))
        .await
        .unwrap();
    // (f) a club renamed raw: its members' copies stale.
    Club::collection(&db)
        .raw()
        .update_one(
            doc! { "_id": "c2" },
            doc! { "$set": { "name": "Raw Name" } },
        )
        .await
        .unwrap();
    // (g) a member renamed raw: the captain copy stale.
    members
        .raw()
        .update_one(doc! { "_id": "m4" }, doc! { "$set": { "name": "Raw Di" } })
        .await
        .unwrap();
    // (h) a bucket over its cap, written raw.
    db.collection::<Document>("nc_swings")
        .insert_one(doc! {
            "court": "A",
            "start": DateTime::from_millis(1_750_000_000_000 - 1_750_000_000_000 % 3_600_000),
            "count": 6_i64,
            "measurements": (0..6).map(|i| Bson::Document(doc! { "at": DateTime::from_millis(1_750_000_000_000 + i), "speed": 1.0 })).collect::<Vec<_>>(),
        })
        .await
        .unwrap();

    // (i) a versioned source (the coach) renamed raw: the club's copy stale.
    Coach::collection(&db)
        .raw()
        .update_one(doc! { "_id": "k1" }, doc! { "$set": { "name": "Raw Kim" } })
        .await
        .unwrap();
    // (j) a holder moved raw (node only): its path stale, the areas' counts behind.
    Locker::collection(&db)
        .raw()
        .update_one(doc! { "_id": "L4" }, doc! { "$set": { "area": "south" } })
        .await
        .unwrap();

    let drift = doctor_drift(&db).await;
    let shown: Vec<String> = drift.iter().map(|f| f.to_string()).collect();
    let shown = shown.join("\n");
    assert_eq!(
        ids_of(&drift, Check::AttributeDrift),
        set(&["m3"]),
        "{shown}"
    );
    assert!(!ids_of(&drift, Check::TwoWayDrift).is_empty(), "{shown}");
    assert!(
        ids_of(&drift, Check::ComputedDrift).is_superset(&set(&["m2", "m3", "m4", "c2"])),
        "{shown}"
    );
    assert_eq!(ids_of(&drift, Check::SubsetDrift), set(&["c1"]), "{shown}");
    // Stale copies list the *source* documents.
    assert!(
        ids_of(&drift, Check::StaleCopy).is_superset(&set(&["c2", "m4"])),
        "{shown}"
    );
    assert!(!ids_of(&drift, Check::BucketOverCap).is_empty(), "{shown}");
    assert!(
        ids_of(&drift, Check::StaleCopy).contains(&Bson::from("k1").to_string()),
        "{shown}"
    );
    assert!(
        ids_of(&drift, Check::TreeDrift).contains(&Bson::from("L4").to_string()),
        "{shown}"
    );
    assert!(
        ids_of(&drift, Check::ComputedDrift).is_superset(&set(&["north", "south"])),
        "{shown}"
    );

    // Each handle's check finds its part.
    let attrs = Member::collection(&db).attributes(Member::FIELDS.prefs);
    assert_eq!(report_ids(&attrs.check().await.unwrap()), set(&["m3"]));
    let owner = Locker::collection(&db).relation(Locker::FIELDS.owner);
    assert!(!owner.check().await.unwrap().is_clean());
    let subset = Club::collection(&db).subset(Club::FIELDS.recent_reviews);
    assert_eq!(report_ids(&subset.check().await.unwrap()), set(&["c1"]));
    let series = Swing::series(&db);
    assert!(!series.check().await.unwrap().is_clean());
    assert!(!Club::collection(&db)
        .references()
        .check()
        .await
        .unwrap()
        .is_clean());
    assert!(!Member::collection(&db)
        .references()
        .check()
        .await
        .unwrap()
        .is_clean());

    // Each handle's repair fixes it.
    for (name, report) in [
        ("attribute", attrs.repair().await.unwrap()),
        ("two-way", owner.repair().await.unwrap()),
        ("subset", subset.repair().await.unwrap()),
        ("series", series.repair().await.unwrap()),
        (
            "club refs",
            Club::collection(&db).references().repair().await.unwrap(),
        ),
        (
            "member refs",
            Member::collection(&db).references().repair().await.unwrap(),
        ),
        (
            "member computed",
            Member::collection(&db).computed().repair().await.unwrap(),
        ),
        (
            "club computed",
            Club::collection(&db).computed().repair().await.unwrap(),
        ),
        (
            "coach refs",
            Coach::collection(&db).references().repair().await.unwrap(),
        ),
        ("tree", Area::collection(&db).tree().repair().await.unwrap()),
        (
            "area computed",
            Area::collection(&db).computed().repair().await.unwrap(),
        ),
    ] {
        assert!(report.is_clean(), "{name}: {report}");
    }
    let m3 = find_doc(&db, "nc_members", "m3").await;
    assert_eq!(
        m3.get_array("prefs").unwrap(),
        &vec![Bson::Document(doc! { "name": "k", "value": 1 })],
        "the first item of the key is kept"
    );
    assert_consistent(&db, "after every repair").await;
    assert_checks_clean(&db, "after every repair").await;
    let left = doctor_drift(&db).await;
    assert!(left.is_empty(), "{left:#?}");
}

// ---------------------------------------------------------------------------------------------
// 4. Hostile input
// ---------------------------------------------------------------------------------------------

/// The ids of these models are typed (`String`), so an operator document as an id does not
/// compile (`tests/ui/ids`). A holder is still any BSON value: an operator there is refused
/// before anything is sent.
#[tokio::test]
async fn hostile_holder_is_refused_before_anything_is_sent() {
    let db = setup("nc_hostile_ids").await;
    let before = snapshot(&db).await;
    db.take_commands();
    let op = doc! { "$gt": "" };
    let slots = CourtSlot::collection(&db).slots();
    let r = slots.book("A", day(0), op.clone()).await;
    assert!(
        matches!(r, Err(Error::InvalidValue { .. })),
        "book holder: {r:?}"
    );
    let r = slots.book("A", day(0), vec![Bson::from("m1")]).await;
    assert!(
        matches!(r, Err(Error::InvalidValue { .. })),
        "an array holder: {r:?}"
    );
    assert_eq!(write_commands(&db), Vec::<String>::new(), "nothing written");
    assert_eq!(snapshot(&db).await, before, "nothing written");
}

/// `cancel` puts the holder in its filter: an operator there must not free someone's slot.
#[tokio::test]
async fn hostile_holder_in_cancel_frees_nothing() {
    let db = setup("nc_hostile_cancel").await;
    let slots = CourtSlot::collection(&db).slots();
    slots.book("A", day(0), "m1").await.unwrap();
    let r = slots.cancel("A", day(0), doc! { "$ne": "nobody" }).await;
    assert!(matches!(r, Err(Error::InvalidValue { .. })), "{r:?}");
    let slot = slots.get("A", day(0)).await.unwrap().unwrap();
    assert_eq!(slot.booked_by.as_deref(), Some("m1"));
    assert_consistent(&db, "after the hostile cancel").await;
}

#[tokio::test]
async fn hostile_keys_and_values_in_attributes() {
    let db = setup("nc_hostile_attributes").await;
    let prefs = Member::collection(&db).attributes(Member::FIELDS.prefs);
    for key in ["$where", "a.b", "", "nul\0"] {
        let r = prefs.set("m1", &pref(key, 1)).await;
        assert!(
            matches!(r, Err(Error::InvalidKey { .. })),
            "key {key:?}: {r:?}"
        );
    }
    for value in [
        Bson::Document(doc! { "$gt": 1 }),
        Bson::Document(doc! { "$concat": ["a", "b"] }),
        Bson::Document(doc! { "a.b": 1 }),
        Bson::Document(doc! { "deep": { "$inc": 1 } }),
    ] {
        let r = prefs.set("m1", &pref("p", value.clone())).await;
        assert!(
            matches!(r, Err(Error::InvalidValue { .. })),
            "value {value}: {r:?}"
        );
    }
    let m1_before = find_doc(&db, "nc_members", "m1").await;
    assert!(m1_before.get_array("prefs").unwrap().is_empty());
    // Literal: `$`-strings, empty strings, NaN, unicode keys; and the captain copy too.
    let literal = [
        pref("price", "$120"),
        pref("plan", "$/month"),
        pref("field", "$name"),
        pref("empty", ""),
        pref("温度", "°C 🎾"),
        pref("nested", doc! { "x": "$y", "arr": ["$z"] }),
    ];
    for p in &literal {
        prefs.set("m1", p).await.unwrap();
    }
    let m1 = find_doc(&db, "nc_members", "m1").await;
    let stored: Vec<Bson> = literal
        .iter()
        .map(|p| Bson::Document(doc! { "name": p.name.clone(), "value": p.value.clone() }))
        .collect();
    assert!(
        same_bson(m1.get("prefs"), Some(&Bson::Array(stored.clone()))),
        "{m1}"
    );
    let captain = find_doc(&db, "nc_clubs", "c1").await;
    assert!(
        same_bson(
            captain.get_document("captain").unwrap().get("prefs"),
            Some(&Bson::Array(stored))
        ),
        "{captain}"
    );
    assert_eq!(
        prefs.get("m1", &"price".to_owned()).await.unwrap(),
        Some(pref("price", "$120"))
    );
    // A `$`-string condition compares as a value.
    let found = prefs
        .find(prefs.key("field".to_owned()).eq("$name").unwrap())
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    // NaN, on a member nobody copies (a copied NaN: see `nan_in_a_copied_field_is_never_clean`).
    prefs.set("m3", &pref("nan", f64::NAN)).await.unwrap();
    let stored = prefs.get("m3", &"nan".to_owned()).await.unwrap().unwrap();
    assert!(matches!(stored.value, Bson::Double(d) if d.is_nan()));
    let r = prefs.unset("m1", &"$where".to_owned()).await;
    assert!(
        matches!(r, Err(Error::InvalidKey { .. })),
        "unset $key: {r:?}"
    );
    assert_consistent(&db, "after literal values").await;
    assert_checks_clean(&db, "after literal values").await;
}

/// Ids that are strings starting with `$`, holding `.`, empty, unicode: plain data everywhere.
#[tokio::test]
async fn dollar_dot_empty_and_unicode_ids_are_data() {
    let db = setup("nc_hostile_string_ids").await;
    let c1 = Club::collection(&db)
        .raw()
        .find_one(doc! { "_id": "c1" })
        .await
        .unwrap()
        .unwrap();
    let ids = ["$admin", "a.b", "", "é🎾ü", "$$ROOT"];
    let members = Member::collection(&db);
    for id in ids {
        members.insert(&new_member(id, id, &c1)).await.unwrap();
    }
    let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
    let slots = CourtSlot::collection(&db).slots();
    let owner = Locker::collection(&db).relation(Locker::FIELDS.owner);
    for (i, id) in ids.iter().enumerate() {
        posts
            .push_many(*id, (0..5).map(|k| post(&format!("{id} {k}"))).collect())
            .await
            .unwrap();
        Member::collection(&db)
            .attributes(Member::FIELDS.prefs)
            .set(*id, &pref("k", *id))
            .await
            .unwrap();
        slots.book("A", day(10 + i), *id).await.unwrap();
        owner
            .assign(&format!("L{}", i % 4 + 1), &id.to_string())
            .await
            .unwrap();
        Club::collection(&db)
            .subset(Club::FIELDS.recent_reviews)
            .push("c1", review(&format!("{id}-r"), "c1", id, 3, i as i64))
            .await
            .unwrap();
        assert_eq!(posts.items(*id).await.unwrap().len(), 5);
    }
    // Tree keys that are `$`-strings or dotted: nodes, a move, a placement.
    let tree = Area::collection(&db).tree();
    tree.insert(&area("$root", Some("club"))).await.unwrap();
    tree.insert(&area("a.b", Some("$root"))).await.unwrap();
    tree.holders::<Locker>().place("L1", "a.b").await.unwrap();
    tree.move_under("$root", "south").await.unwrap();
    let under: Vec<String> = tree
        .holders::<Locker>()
        .under("$root")
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.id)
        .collect();
    assert_eq!(under, ["L1"]);
    assert_eq!(
        find_doc(&db, "nc_lockers", "L1")
            .await
            .get_array("areaPath")
            .unwrap(),
        &vec![
            Bson::from("club"),
            Bson::from("south"),
            Bson::from("$root"),
            Bson::from("a.b")
        ]
    );
    // Holders of `$`-strings are stored literally.
    let slot = slots.get("A", day(10)).await.unwrap().unwrap();
    assert_eq!(slot.booked_by.as_deref(), Some("$admin"));
    let raw = find_doc(&db, "nc_members", "$admin").await;
    assert_eq!(raw.get_i64("postsCount").unwrap(), 5);
    assert_eq!(num(raw.get("bookings")), 1.0);
    assert_consistent(&db, "after writes with odd ids").await;
    assert_checks_clean(&db, "after writes with odd ids").await;
    for (name, report) in [
        (
            "member computed",
            Member::collection(&db)
                .computed()
                .repair()
                .await
                .map(|_| ()),
        ),
        ("outlier rebuild", posts.rebuild("$$ROOT").await.map(|_| ())),
    ] {
        report.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_consistent(&db, "after the computed repair").await;
    assert!(doctor_drift(&db).await.is_empty());
}

#[tokio::test]
async fn hostile_items_and_values_in_outliers_variants_and_subsets() {
    let db = setup("nc_hostile_items").await;
    let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
    db.take_commands();
    let mut bad = post("bad");
    bad.meta = doc! { "$set": { "postsCount": 0 } };
    let r = posts.push("m1", bad).await;
    assert!(
        matches!(r, Err(Error::InvalidValue { .. })),
        "outlier $-key item: {r:?}"
    );
    let mut dotted = post("dotted");
    dotted.meta = doc! { "a.b": 1 };
    let r = posts.push("m1", dotted).await;
    assert!(
        matches!(r, Err(Error::InvalidValue { .. })),
        "outlier dotted item: {r:?}"
    );
    let r = Club::collection(&db)
        .subset(Club::FIELDS.recent_reviews)
        .push("c1", review("r1", "c1", "m1", 3, 0))
        .set(doc! { "$bad": 1 })
        .await;
    assert!(
        matches!(r, Err(Error::InvalidKey { .. })),
        "subset .set($key): {r:?}"
    );
    let r = Club::collection(&db)
        .subset(Club::FIELDS.recent_reviews)
        .push("c1", review("r1", "c1", "m1", 3, 0))
        .set(doc! { "reviewCount": 100 })
        .await;
    assert!(
        matches!(r, Err(Error::KeptField { .. })),
        "subset .set(its counter): {r:?}"
    );
    let r = Member::collection(&db)
        .update("m1", doc! { "$set": { "lockerCount": 9 } })
        .await;
    assert!(
        matches!(r, Err(Error::KeptField { .. })),
        "references update of a computed field: {r:?}"
    );
    assert_eq!(write_commands(&db), Vec::<String>::new(), "nothing written");
    assert_eq!(docs(&db, "nc_reviews").await.len(), 0);

    // Literal values: NaN, `$`-strings, empty, unicode in an outlier item, as given.
    let mut odd = post("$set");
    odd.score = f64::NAN;
    odd.meta = doc! { "k": "$$ROOT", "e": "", "u": "🎾" };
    posts.push("m1", odd.clone()).await.unwrap();
    let items = posts.items("m1").await.unwrap();
    assert_eq!(items[0].text, "$set");
    assert!(items[0].score.is_nan());
    assert_eq!(items[0].meta, odd.meta);
    let removed = posts.remove("m1", &odd).await.unwrap();
    assert_eq!(removed, 1, "an item holding NaN is removed by value");
    assert_consistent(&db, "after literal items").await;
}

/// A holder that is no member: the computed count has nowhere to go. `Slots::book` documents
/// it: `NotFound` of the counting model, with nothing written.
#[tokio::test]
async fn booking_for_a_holder_that_does_not_exist() {
    let db = setup("nc_hostile_ghost_holder").await;
    let before = snapshot(&db).await;
    let r = CourtSlot::collection(&db)
        .slots()
        .book("A", day(0), "ghost")
        .await;
    assert!(
        matches!(&r, Err(Error::NotFound { collection, .. }) if collection == "nc_members"),
        "{r:?}"
    );
    assert_eq!(snapshot(&db).await, before, "nothing written");
    assert!(Member::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn huge_values_near_16_mib() {
    let db = setup("nc_huge").await;
    let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
    db.take_commands();
    // Over 16 MiB alone: refused before anything is sent.
    let r = posts.push("m3", post(&"x".repeat(17 * MIB))).await;
    assert!(
        matches!(r, Err(Error::DocumentTooLarge { .. })),
        "{:?}",
        r.as_ref().err().map(|e| e.to_string())
    );
    let r = Member::collection(&db)
        .attributes(Member::FIELDS.prefs)
        .set("m3", &pref("big", "y".repeat(17 * MIB)))
        .await;
    assert!(
        matches!(r, Err(Error::DocumentTooLarge { .. })),
        "{:?}",
        r.as_ref().err().map(|e| e.to_string())
    );
    assert_eq!(write_commands(&db), Vec::<String>::new(), "nothing written");
    // Over the 8 MiB budget but within 16 MiB: an overflow document of its own.
    posts.push("m3", post(&"z".repeat(9 * MIB))).await.unwrap();
    posts.push("m3", post("small")).await.unwrap();
    let state = posts.state("m3").await.unwrap();
    assert!(state.is_consistent());
    assert_eq!(state.stored_count, 2);
    assert_consistent(&db, "after a 9 MiB post").await;
}

/// A value the member can hold but two copies of which the club cannot: m4 is captain and
/// vice of c2, and its 9 MiB preference would make c2 18 MiB.
#[tokio::test]
async fn a_copy_that_would_pass_16_mib_refuses_the_whole_write() {
    let db = setup("nc_huge_copy").await;
    Club::collection(&db)
        .update("c2", doc! { "$set": { "vice": { "_id": "m4", "name": "Di", "postsCount": 0_i64, "prefs": [] } } })
        .await
        .unwrap();
    let before = snapshot(&db).await;
    let r = Member::collection(&db)
        .attributes(Member::FIELDS.prefs)
        .set("m4", &pref("bio", "b".repeat(9 * MIB)))
        .await;
    assert!(
        matches!(r, Err(Error::DocumentTooLarge { .. })),
        "{:?}",
        r.as_ref().err().map(|e| e.to_string())
    );
    assert_eq!(snapshot(&db).await, before, "nothing written");
}

// ---------------------------------------------------------------------------------------------
// 5. Concurrency
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_mixing_outlier_pushes_and_slot_bookings() {
    let db = Arc::new(setup("nc_concurrent_outlier_slots").await);
    let mut tasks = vec![];
    for t in 0..8_usize {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
            let slots = CourtSlot::collection(&db).slots();
            let mut booked = 0_i64;
            for i in 0..10_usize {
                let member = ["m1", "m2", "m3", "m4"][(t + i) % 4];
                posts
                    .push(member, post(&format!("t{t} i{i}")))
                    .await
                    .unwrap();
                // Every task races for the same slots: one wins each.
                let court = COURTS[i % 2];
                match slots.book(court, day(i), member).await {
                    Ok(_) => booked += 1,
                    Err(Error::AlreadyBooked { .. }) => {}
                    Err(e) => panic!("book: {e}"),
                }
            }
            booked
        }));
    }
    let mut booked = 0;
    for t in tasks {
        booked += t.await.unwrap();
    }
    assert_eq!(booked, 10, "one winner per slot");
    let total: i64 = docs(&db, "nc_members")
        .await
        .iter()
        .map(|m| m.get_i64("postsCount").unwrap())
        .sum();
    assert_eq!(total, 80);
    let c1 = find_doc(&db, "nc_clubs", "c1").await;
    let c2 = find_doc(&db, "nc_clubs", "c2").await;
    assert_eq!(num(c1.get("totalPosts")) + num(c2.get("totalPosts")), 80.0);
    assert_consistent(&db, "after 8 writers").await;
    assert_checks_clean(&db, "after 8 writers").await;
    assert!(doctor_drift(&db).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_mixing_attribute_sets_and_two_way_assigns() {
    let db = Arc::new(setup("nc_concurrent_attr_two_way").await);
    let mut tasks = vec![];
    for t in 0..8_usize {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let prefs = Member::collection(&db).attributes(Member::FIELDS.prefs);
            let owner = Locker::collection(&db).relation(Locker::FIELDS.owner);
            for i in 0..10_usize {
                let member = ["m1", "m2"][(t + i) % 2];
                prefs
                    .set(member, &pref(&format!("k{}", i % 3), (t * 100 + i) as i64))
                    .await
                    .unwrap();
                let locker = format!("L{}", (t + i) % 4 + 1);
                owner
                    .assign(&locker, &["m1", "m2", "m3"][(t * 7 + i) % 3].to_owned())
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for m in ["m1", "m2"] {
        let keys: Vec<String> = find_doc(&db, "nc_members", m)
            .await
            .get_array("prefs")
            .unwrap()
            .iter()
            .map(|p| p.as_document().unwrap().get_str("name").unwrap().to_owned())
            .collect();
        let unique: BTreeSet<&String> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len(), "{m}: one item per key: {keys:?}");
    }
    let counted: f64 = docs(&db, "nc_members")
        .await
        .iter()
        .map(|m| num(m.get("lockerCount")))
        .sum();
    assert_eq!(counted, 4.0, "every locker owned by exactly one member");
    assert_consistent(&db, "after 8 writers").await;
    assert_checks_clean(&db, "after 8 writers").await;
    assert!(doctor_drift(&db).await.is_empty());
}

/// 8 writers, each running its own caller's transactions (an outlier push and a slot booking
/// together), retried as the `Transaction` docs say: on `is_transient()`, abort and run the
/// whole transaction again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_in_callers_transactions_with_retries() {
    let db = Arc::new(setup("nc_concurrent_tx").await);
    let mut tasks = vec![];
    for t in 0..8_usize {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut booked = 0_i64;
            for i in 0..5_usize {
                let member = ["m1", "m2", "m3", "m4"][(t + i) % 4];
                let mut attempts = 0;
                loop {
                    attempts += 1;
                    assert!(attempts < 200, "task {t} item {i}: no end to retries");
                    let tx = Transaction::start(&db).await.unwrap();
                    let pushed = Member::collection(&db)
                        .outlier(Member::FIELDS.posts)
                        .in_transaction(&tx)
                        .push(member, post(&format!("t{t} i{i}")))
                        .await;
                    if let Err(e) = pushed {
                        assert!(e.is_transient(), "push: {e}");
                        let _ = tx.abort().await;
                        continue;
                    }
                    let won = match CourtSlot::collection(&db)
                        .slots()
                        .in_transaction(&tx)
                        .book(COURTS[t % 2], day(20 + i), member)
                        .await
                    {
                        Ok(_) => true,
                        Err(Error::AlreadyBooked { .. }) => false,
                        Err(e) => {
                            assert!(e.is_transient(), "book: {e}");
                            let _ = tx.abort().await;
                            continue;
                        }
                    };
                    match tx.commit().await {
                        Ok(()) => {
                            booked += i64::from(won);
                            break;
                        }
                        Err(e) => assert!(e.is_transient(), "commit: {e}"),
                    }
                }
            }
            booked
        }));
    }
    let mut booked = 0;
    for t in tasks {
        booked += t.await.unwrap();
    }
    assert_eq!(booked, 10, "one winner per slot (2 courts x 5 days)");
    let total: i64 = docs(&db, "nc_members")
        .await
        .iter()
        .map(|m| m.get_i64("postsCount").unwrap())
        .sum();
    assert_eq!(total, 40, "every committed push exactly once");
    assert_consistent(&db, "after 8 transactional writers").await;
    assert_checks_clean(&db, "after 8 transactional writers").await;
}

// ---------------------------------------------------------------------------------------------
// Findings
// ---------------------------------------------------------------------------------------------

/// The docs: attribute values are stored as given, NaN included; a copied field is checked
/// against its source. A NaN copied by an extended reference is a stale copy for ever: the
/// check compares NaN != NaN, `repair` rewrites nothing and leaves it, the doctor never clears.
#[tokio::test]
async fn nan_in_a_copied_field_is_never_clean() {
    let db = setup("nc_finding_nan_copy").await;
    Member::collection(&db)
        .attributes(Member::FIELDS.prefs)
        .set("m1", &pref("nan", f64::NAN))
        .await
        .unwrap();
    assert_consistent(&db, "the copy holds the NaN").await;
    let refs = Member::collection(&db).references();
    let check = refs.check().await.unwrap();
    let repair = refs.repair().await.unwrap();
    assert!(check.is_clean(), "check: {check}");
    assert!(repair.is_clean(), "repair: {repair}");
    assert!(doctor_drift(&db).await.is_empty());
}

/// A refusal the server makes inside the caller's transaction (a duplicate key; a copy that
/// would pass 16 MiB) ends it there: MongoDB has no savepoints. The operation returns the
/// typed error; from then on the transaction is ended (`aborted by the server`): a bound
/// handle sends nothing, `commit` is `TransactionEnded` (not transient, so a retry loop does
/// not repeat the refused write), `abort` is fine, and nothing written in it is kept.
#[tokio::test]
async fn a_server_refusal_in_the_callers_transaction_ends_it_plainly() {
    let db = setup("nc_finding_tx_server_refusal").await;
    Event::collection(&db)
        .variant::<EventMatch>()
        .insert(&a_match("e1", "c1", 10))
        .await
        .unwrap();
    // m1, c1's captain, made its vice too: a 9 MiB preference would be copied twice into c1.
    Club::collection(&db)
        .update(
            "c1",
            doc! { "$set": { "vice": { "_id": "m1", "name": "Ada", "postsCount": 0_i64, "prefs": [] } } },
        )
        .await
        .unwrap();
    let before = snapshot(&db).await;
    for refusal in ["duplicate key", "document too large"] {
        let tx = Transaction::start(&db).await.unwrap();
        Member::collection(&db)
            .outlier(Member::FIELDS.posts)
            .in_transaction(&tx)
            .push("m3", post(refusal))
            .await
            .unwrap();
        let refused = if refusal == "duplicate key" {
            Event::collection(&db)
                .in_transaction(&tx)
                .variant::<EventMatch>()
                .insert(&a_match("e1", "c2", 99))
                .await
                .map(|_| ())
        } else {
            Member::collection(&db)
                .attributes(Member::FIELDS.prefs)
                .in_transaction(&tx)
                .set("m1", &pref("bio", "b".repeat(9 * MIB)))
                .await
        };
        match (refusal, &refused) {
            ("duplicate key", Err(Error::DuplicateKey { .. }))
            | ("document too large", Err(Error::DocumentTooLarge { .. })) => {}
            _ => panic!("{refusal}: {refused:?}"),
        }
        assert_eq!(tx.ended(), Some("aborted by the server"), "{refusal}");
        let late = Member::collection(&db)
            .outlier(Member::FIELDS.posts)
            .in_transaction(&tx)
            .push("m3", post("after the refusal"))
            .await;
        assert!(
            matches!(late, Err(Error::TransactionEnded { .. })),
            "{refusal}: {late:?}"
        );
        let commit = tx.commit().await;
        match &commit {
            Err(e @ Error::TransactionEnded { .. }) => assert!(!e.is_transient(), "{e}"),
            other => panic!("{refusal}: commit {other:?}"),
        }
        tx.abort().await.unwrap();
        assert_eq!(snapshot(&db).await, before, "{refusal}: nothing kept");
    }
}

/// A handle bound to a transaction that was committed keeps writing: outside any transaction,
/// and its derived writes (the club's sum, the captain's copy) without one either.
#[tokio::test]
async fn a_handle_bound_to_a_committed_transaction_is_refused() {
    let db = setup("nc_finding_tx_after_commit").await;
    let tx = Transaction::start(&db).await.unwrap();
    let posts = Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .in_transaction(&tx);
    posts.push("m1", post("in the transaction")).await.unwrap();
    tx.commit().await.unwrap();
    let late = posts.push("m1", post("after the commit")).await;
    assert_eq!(
        find_doc(&db, "nc_members", "m1")
            .await
            .get_i64("postsCount")
            .unwrap(),
        1,
        "the push after the commit ({late:?}) was written"
    );
    assert!(late.is_err());
}

/// The crate docs: "a tree's or a computed field written through another pattern's update |
/// refused (InvalidKey naming the operation to use)". `reviewCount` is declared
/// `#[summary(count = recent_reviews)]`, yet `References::update` sets it (and pushes into the
/// subset's array), leaving SubsetDrift.
#[tokio::test]
async fn references_update_of_a_subset_counter_is_refused() {
    let db = setup("nc_finding_subset_counter").await;
    let count = Club::collection(&db)
        .update("c2", doc! { "$set": { "reviewCount": 9 } })
        .await;
    let array = Club::collection(&db)
        .update(
            "c2",
            doc! { "$push": { "recentReviews": { "reviewId": "zz", "stars": 1, "createdAt": DateTime::now() } } },
        )
        .await;
    let shown = format!("count: {count:?}; array: {array:?}");
    assert!(
        Club::collection(&db)
            .subset(Club::FIELDS.recent_reviews)
            .check()
            .await
            .unwrap()
            .is_clean(),
        "{shown}"
    );
    assert!(matches!(count, Err(Error::KeptField { .. })), "{shown}");
    assert!(matches!(array, Err(Error::KeptField { .. })), "{shown}");
}

/// Other patterns' updates may write what the outlier, the two-way relation, the attribute
/// array and the extended reference keep: only tree and cross-collection computed fields are
/// refused. Each write below is accepted and leaves drift the doctor then reports.
#[tokio::test]
async fn other_patterns_fields_are_refused_in_updates() {
    let db = setup("nc_finding_kept_fields").await;
    let mut accepted = vec![];
    for u in [
        doc! { "$set": { "postsCount": 7_i64 } },
        doc! { "$push": { "posts": { "text": "sneaky", "score": 1.0, "meta": {} } } },
        doc! { "$set": { "isOutlier": true } },
        doc! { "$push": { "lockers": "L3" } },
        doc! { "$push": { "prefs": { "$each": [ { "name": "x", "value": 1 }, { "name": "x", "value": 2 } ] } } },
    ] {
        if Member::collection(&db)
            .update("m3", u.clone())
            .await
            .is_ok()
        {
            accepted.push(format!("Member::collection().update({u})"));
        }
    }
    if Club::collection(&db)
        .update("c2", doc! { "$set": { "captain.name": "forged" } })
        .await
        .is_ok()
    {
        accepted.push("Club::collection().update($set captain.name)".into());
    }
    if Locker::collection(&db)
        .update("L4", doc! { "$set": { "owner": "m2" } })
        .await
        .is_ok()
    {
        accepted.push("Computing::<Locker>.update($set owner)".into());
    }
    let drift: Vec<String> = doctor_drift(&db)
        .await
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert!(
        accepted.is_empty(),
        "accepted: {accepted:#?}\ndoctor then: {drift:#?}"
    );
}

/// The docs' table "What the toolkit sends": items and inserts refuse keys starting with `$`
/// or holding `.` or NUL (`InvalidValue`). Outlier items and attribute values do; a variant's
/// `insert_one` stores `{extra: {"$where": "1"}}` and `{"a.b": 1}` as given, and a NUL key is
/// `Error::Bson(MalformedBytes)`.
#[tokio::test]
async fn variant_insert_refuses_dollar_dot_and_nul_keys() {
    let db = setup("nc_finding_variant_keys").await;
    let socials = Event::collection(&db).variant::<EventSocial>();
    let mut results = vec![];
    for (id, extra) in [
        ("s1", doc! { "$where": "1" }),
        ("s2", doc! { "a.b": 1 }),
        ("s3", doc! { "n\0ul": 1 }),
    ] {
        let r = socials
            .insert(&EventSocial {
                id: id.into(),
                club_id: "c1".into(),
                fee: 1,
                venue: "v".into(),
                extra: extra.clone(),
            })
            .await;
        results.push(format!("{extra}: {r:?}"));
        assert!(
            matches!(r, Err(Error::InvalidValue { .. })),
            "{}",
            results.join("\n")
        );
    }
}

/// A sum that would overflow: nothing is written, and the error is `InvalidValue` naming the
/// computed field (it was the server's `$inc` failure, `Error::Driver { code: 2 }`).
#[tokio::test]
async fn a_computed_sum_overflow_is_a_typed_error() {
    let db = setup("nc_finding_sum_overflow").await;
    let matches = Event::collection(&db).variant::<EventMatch>();
    matches.insert(&a_match("e1", "c1", 5)).await.unwrap();
    let before = snapshot(&db).await;
    let r = matches.insert(&a_match("e2", "c1", i64::MAX)).await;
    assert_eq!(snapshot(&db).await, before, "nothing written");
    assert!(matches!(r, Err(Error::InvalidValue { .. })), "{r:?}");
}

/// The crate docs ("Patterns together"): a computed field written through another pattern's
/// update is refused with `InvalidKey`. `Subset::push(..).set(..)` writes `eventFees`, a
/// field computed from the events, and the push goes through: the club's sum is then wrong.
#[tokio::test]
async fn subset_push_set_of_a_computed_field_is_refused() {
    let db = setup("nc_finding_subset_set_computed").await;
    let r = Club::collection(&db)
        .subset(Club::FIELDS.recent_reviews)
        .push("c1", review("r1", "c1", "m1", 3, 0))
        .set(doc! { "eventFees": 100 })
        .await;
    let drift: Vec<String> = doctor_drift(&db)
        .await
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert!(
        matches!(r, Err(Error::KeptField { .. })),
        "{r:?}; doctor then: {drift:#?}"
    );
}

/// The rule for a missing target (the `computed` module docs): a write that points a source
/// at it is `NotFound` with nothing written, through any handle; a source that already
/// pointed at it before it was deleted stays writable (its contribution kept nowhere).
#[tokio::test]
async fn a_missing_target_is_treated_alike_by_every_write() {
    let db = setup("nc_finding_missing_target").await;
    Club::collection(&db)
        .raw()
        .delete_one(doc! { "_id": "c2" })
        .await
        .unwrap();
    let before = snapshot(&db).await;
    let event = Event::collection(&db)
        .variant::<EventMatch>()
        .insert(&a_match("e1", "c2", 1))
        .await;
    assert!(matches!(event, Err(Error::NotFound { .. })), "{event:?}");
    assert_eq!(
        snapshot(&db).await,
        before,
        "the event pointing at c2: nothing written"
    );
    // m4 pointed at c2 before it went: m4 can still post.
    let push = Member::collection(&db)
        .outlier(Member::FIELDS.posts)
        .push("m4", post("orphan"))
        .await;
    assert!(push.is_ok(), "{push:?}");
    assert_eq!(
        Member::collection(&db)
            .outlier(Member::FIELDS.posts)
            .state("m4")
            .await
            .unwrap()
            .stored_count,
        1
    );
}

//! The typed forms (`pattern_runtime::query::{Filter, Update, Sort}`) send the very bytes their
//! hand-written `doc!` twins send: each case runs one verb of the model handle twice on the same
//! seeded collection, once typed and once with the `doc!` a user would write for it, and
//! compares the command bodies the client started (`Document::to_vec` of each, without the
//! per-send session fields: see `TestDb::take_command_bodies`) and what the verb returned (the
//! documents found, the count, `Written`, `Updated`, the number deleted, and after a write the
//! stored documents).
//!
//! 196 cases, in six tables (each test asserts the size of its own):
//! - `filters_send_what_their_documents_send`: 95 `find`s: every filter operator on every kind
//!   of field (`i64`, `i32`, `u8`, `u32`, `f64`, `f32`, `Decimal128`, `bool`, `String`,
//!   `DateTime`, `Option`s, `Vec`s, a `Document`, nested structs), nested paths (through a
//!   struct, two structs, an `Option`, the items of a `Vec`), combinations and negations.
//! - `find_one_and_count_send_what_their_documents_send`: 14 (`find_one` 7, `count` 7).
//! - `sorted_and_limited_finds_send_what_their_documents_send`: 10 (`find` with `sort`
//!   and `limit`, or `limit` alone).
//! - `updates_send_what_their_documents_send`: 49 `update`s: each operator on each kind of
//!   field it takes, nested paths.
//! - `combined_updates_send_what_their_documents_send`: 15 `update`s: more of the array
//!   operators, and several operators in one update.
//! - `many_writes_send_what_their_documents_send`: 13 (`update_many` 7, `delete_many` 6).
//!
//! Three `find`s with `$and` (a repeated operator), `$or` or `$nor` inside `$elemMatch` are
//! refused by both test servers, the embedded one and the `secantusdb` one (see
//! `find_embedded_refuses`): they are checked to send the same bytes and to fail, or succeed,
//! the same way.
//!
//! The values include strings that look like operators, paths or expressions (`"$where"`,
//! `"{$gt: 1}"`, `"a.b"`, `"$$ROOT"`): each is also checked to be in the typed command's bytes,
//! as the string it is.
//!
//! The `doc!` twins carry the BSON type each typed value is sent as: the field's own type as
//! serde writes it (a `u32` or an `i64` is an `Int64`, an `i32` or a `u8` an `Int32`, an `f32`
//! a `Double`; an integer given for an `f64` field is a `Double`), and `Filter::size` sends an
//! `Int64`.

use bson::{doc, Bson, DateTime, Decimal128, Document};
use pattern_runtime::query::{Filter, IntoFilter, IntoSort, IntoUpdate, Sort, Update};
use pattern_runtime::{FieldName, Fields, Model, Updated, Written};
use pattern_testkit::{test_db, TestDb};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
struct Geo {
    lat: f64,
    lng: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Shipping {
    city_name: String,
    zip_code: u32,
    floor: Option<i32>,
    geo: Geo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct Line {
    sku_code: String,
    qty: i32,
    unit_price: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "qc_orders")]
struct Order {
    #[serde(rename = "_id")]
    id: i64,
    customer_name: String,
    total_cents: i64,
    item_count: i32,
    weight_kg: f64,
    rating: f32,
    priority: u8,
    points: u32,
    exact: Decimal128,
    #[serde(rename = "flag")]
    is_flagged: bool,
    tags: Vec<String>,
    scores: Vec<i32>,
    nickname: Option<String>,
    discount: Option<f64>,
    ship_to: Shipping,
    billing: Option<Shipping>,
    lines: Vec<Line>,
    placed_at: DateTime,
    shipped_at: Option<DateTime>,
    meta: Document,
}

/// The strings that must reach the server as the strings they are.
const HOSTILE: [&str; 4] = ["$where", "{$gt: 1}", "a.b", "$$ROOT"];

fn day(y: i32, m: u8, d: u8) -> DateTime {
    DateTime::builder().year(y).month(m).day(d).build().unwrap()
}

fn dec(s: &str) -> Decimal128 {
    s.parse().unwrap()
}

fn shipping(city: &str, zip: u32, floor: Option<i32>, lat: f64, lng: f64) -> Shipping {
    Shipping {
        city_name: city.into(),
        zip_code: zip,
        floor,
        geo: Geo { lat, lng },
    }
}

fn line(sku: &str, qty: i32, unit_price: f64) -> Line {
    Line {
        sku_code: sku.into(),
        qty,
        unit_price,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The documents every run starts from, hostile strings among their values.
fn seed() -> Vec<Order> {
    vec![
        Order {
            id: 1,
            customer_name: "ann".into(),
            total_cents: 1500,
            item_count: 2,
            weight_kg: 1.5,
            rating: 4.5,
            priority: 1,
            points: 10,
            exact: dec("1.50"),
            is_flagged: false,
            tags: strings(&["red", "sale"]),
            scores: vec![3, 5],
            nickname: Some("$where".into()),
            discount: Some(0.5),
            ship_to: shipping("Oslo", 150, Some(3), 59.9, 10.75),
            billing: None,
            lines: vec![line("pen", 2, 1.25), line("ink", 1, 4.0)],
            placed_at: day(2020, 1, 1),
            shipped_at: None,
            meta: doc! { "source": "web" },
        },
        Order {
            id: 2,
            customer_name: "bob".into(),
            total_cents: 250,
            item_count: 1,
            weight_kg: 0.25,
            rating: 3.0,
            priority: 2,
            points: 0,
            exact: dec("0.10"),
            is_flagged: true,
            tags: strings(&["a.b"]),
            scores: vec![],
            nickname: None,
            discount: None,
            ship_to: shipping("a.b", 10, None, 0.0, 0.0),
            billing: Some(shipping("Bergen", 5020, Some(1), 60.39, 5.32)),
            lines: vec![line("$$ROOT", 5, 0.5)],
            placed_at: day(2020, 6, 1),
            shipped_at: Some(day(2020, 6, 3)),
            meta: doc! { "note": "$$ROOT" },
        },
        Order {
            id: 3,
            customer_name: "{$gt: 1}".into(),
            total_cents: 99_999,
            item_count: 7,
            weight_kg: 12.0,
            rating: 1.5,
            priority: 9,
            points: 500,
            exact: dec("99999.99"),
            is_flagged: false,
            tags: strings(&["$$ROOT", "red", "sale"]),
            scores: vec![1, 2, 3],
            nickname: Some("a.b".into()),
            discount: Some(0.0),
            ship_to: shipping("Oslo", 150, Some(-1), 59.95, 10.8),
            billing: Some(shipping("{$gt: 1}", 1, None, -33.9, 151.2)),
            lines: vec![line("pen", 10, 1.25)],
            placed_at: day(2021, 1, 1),
            shipped_at: None,
            meta: Document::new(),
        },
        Order {
            id: 4,
            customer_name: "dora".into(),
            total_cents: 0,
            item_count: 0,
            weight_kg: 0.0,
            rating: 5.0,
            priority: 0,
            points: 4_000_000_000,
            exact: dec("0"),
            is_flagged: true,
            tags: vec![],
            scores: vec![5],
            nickname: Some("{$gt: 1}".into()),
            discount: None,
            ship_to: shipping("$where", 99_999, None, 48.85, 2.35),
            billing: None,
            lines: vec![],
            placed_at: day(2019, 12, 31),
            shipped_at: Some(day(2020, 1, 2)),
            meta: doc! { "source": "app", "n": 2 },
        },
        Order {
            id: 5,
            customer_name: "$where".into(),
            total_cents: -40,
            item_count: 3,
            weight_kg: 2.25,
            rating: 0.5,
            priority: 255,
            points: 7,
            exact: dec("-0.40"),
            is_flagged: false,
            tags: strings(&["sale"]),
            scores: vec![4, 4],
            nickname: None,
            discount: Some(1.5),
            ship_to: shipping("Bergen", 5020, Some(0), 60.39, 5.32),
            billing: Some(shipping("Bergen", 5020, Some(0), 60.39, 5.32)),
            lines: vec![line("ink", 3, 4.0), line("pen", 1, 1.5)],
            placed_at: day(2020, 3, 3),
            shipped_at: None,
            meta: doc! { "source": "web" },
        },
    ]
}

/// One verb of the model handle, with its filter, update and sort in one form: typed
/// (`Filter`, `Update`, `Sort`) or by hand (`Document`s).
enum Op<F, U, S> {
    Find(F, Option<S>, Option<u64>),
    FindOne(F),
    Count(F),
    Update(i64, U),
    UpdateMany(F, U),
    DeleteMany(F),
}

type Typed = Op<Filter<Order>, Update<Order>, Sort<Order>>;
type ByHand = Op<Document, Document, Document>;

/// A case: its label (the verb and its two forms, as written), its two forms, and whether the
/// embedded server refuses both (see [`find_embedded_refuses`]).
struct Case {
    label: String,
    typed: Typed,
    by_hand: ByHand,
    embedded_refuses: bool,
}

fn find(typed: Filter<Order>, by_hand: Document) -> (Typed, ByHand) {
    (Op::Find(typed, None, None), Op::Find(by_hand, None, None))
}

/// A `find` that mongod runs and the embedded server (secantus-mdb 0.5.3-beta.196) refuses, for
/// both forms alike: `$and`, `$or` or `$nor` inside `$elemMatch`, which it reads as operators on
/// the array's items ("unknown operator: $and") where mongod reads them as a condition on each
/// item's fields; the second server (`secantusdb`) refuses them too. The typed form sends them
/// for a disjunction, a negation, or a conjunction that repeats an operator. Both forms must
/// fail alike with "unknown operator", or both succeed alike (mongod).
fn find_embedded_refuses(typed: Filter<Order>, by_hand: Document) -> (Typed, ByHand) {
    find(typed, by_hand)
}

fn find_sorted<S>(
    typed: (Filter<Order>, Sort<Order, S>),
    by_hand: (Document, Document),
    limit: Option<u64>,
) -> (Typed, ByHand) {
    (
        Op::Find(typed.0, Some(typed.1.erase()), limit),
        Op::Find(by_hand.0, Some(by_hand.1), limit),
    )
}

fn find_limited(typed: Filter<Order>, by_hand: Document, limit: u64) -> (Typed, ByHand) {
    (
        Op::Find(typed, None, Some(limit)),
        Op::Find(by_hand, None, Some(limit)),
    )
}

fn find_one(typed: Filter<Order>, by_hand: Document) -> (Typed, ByHand) {
    (Op::FindOne(typed), Op::FindOne(by_hand))
}

fn count(typed: Filter<Order>, by_hand: Document) -> (Typed, ByHand) {
    (Op::Count(typed), Op::Count(by_hand))
}

fn update(id: i64, typed: Update<Order>, by_hand: Document) -> (Typed, ByHand) {
    (Op::Update(id, typed), Op::Update(id, by_hand))
}

fn update_many(
    typed: (Filter<Order>, Update<Order>),
    by_hand: (Document, Document),
) -> (Typed, ByHand) {
    (
        Op::UpdateMany(typed.0, typed.1),
        Op::UpdateMany(by_hand.0, by_hand.1),
    )
}

fn delete_many(typed: Filter<Order>, by_hand: Document) -> (Typed, ByHand) {
    (Op::DeleteMany(typed), Op::DeleteMany(by_hand))
}

/// `cases![verb(typed.., by_hand..), ..]`: each a [`Case`] labelled with its source text.
macro_rules! cases {
    ($($verb:ident($($arg:expr),+ $(,)?)),+ $(,)?) => {
        vec![$({
            let (typed, by_hand) = $verb($($arg),+);
            let label = stringify!($verb($($arg),+)).split_whitespace().collect::<Vec<_>>();
            Case {
                label: label.join(" "),
                typed,
                by_hand,
                embedded_refuses: stringify!($verb) == "find_embedded_refuses",
            }
        }),+]
    };
}

/// What a verb returned; after a write, the stored documents too.
#[derive(Debug, PartialEq)]
enum Outcome {
    Found(Vec<Order>),
    FoundOne(Option<Box<Order>>),
    Counted(u64),
    Written(Written, Vec<Document>),
    Updated(Updated, Vec<Document>),
    Deleted(u64, Vec<Document>),
}

/// Puts the seed back: every run starts from the same documents.
async fn reseed(db: &TestDb) {
    let orders = Order::collection(db);
    let raw = orders.raw();
    raw.delete_many(doc! {}).await.unwrap();
    raw.insert_many(seed()).await.unwrap();
    db.take_command_bodies();
}

/// The stored documents, the dates `$currentDate` wrote (after the seed's) masked: two runs
/// write two instants.
async fn stored(db: &TestDb) -> Vec<Document> {
    let latest_seeded = day(2022, 1, 1);
    let mut docs = pattern_testkit::docs(db, "qc_orders").await;
    for d in &mut docs {
        for (_, v) in d.iter_mut() {
            if matches!(v, Bson::DateTime(t) if *t > latest_seeded) {
                *v = Bson::String("<the server's current date>".into());
            }
        }
    }
    docs
}

/// `find`, limited to `limit` documents if given, awaited.
async fn limited<S>(
    find: pattern_runtime::query::Find<'_, Order, S>,
    limit: Option<u64>,
) -> pattern_runtime::Result<Vec<Order>> {
    match limit {
        Some(n) => find.limit(n).await,
        None => find.await,
    }
}

/// Runs `op` on the seeded collection: the command bodies it sent and what it returned.
async fn run<F, U, S>(db: &TestDb, op: Op<F, U, S>) -> (Vec<Document>, Result<Outcome, String>)
where
    F: IntoFilter<Order>,
    U: IntoUpdate<Order>,
    S: IntoSort<Order>,
{
    reseed(db).await;
    let orders = Order::collection(db);
    let result = match op {
        Op::Find(filter, sort, limit) => {
            // A sorted find is of another type than an unsorted one (its keys are in it).
            let find = orders.find(filter);
            match sort {
                Some(sort) => limited(find.sort(sort), limit).await,
                None => limited(find, limit).await,
            }
            .map(Outcome::Found)
        }
        Op::FindOne(filter) => orders
            .find_one(filter)
            .await
            .map(|found| Outcome::FoundOne(found.map(Box::new))),
        Op::Count(filter) => orders.count(filter).await.map(Outcome::Counted),
        Op::Update(id, update) => orders
            .update(id, update)
            .await
            .map(|w| Outcome::Written(w, Vec::new())),
        Op::UpdateMany(filter, update) => orders
            .update_many(filter, update)
            .await
            .map(|u| Outcome::Updated(u, Vec::new())),
        Op::DeleteMany(filter) => orders
            .delete_many(filter)
            .await
            .map(|n| Outcome::Deleted(n, Vec::new())),
    };
    let bodies = db.take_command_bodies();
    let result = match result {
        Ok(Outcome::Written(w, _)) => Ok(Outcome::Written(w, stored(db).await)),
        Ok(Outcome::Updated(u, _)) => Ok(Outcome::Updated(u, stored(db).await)),
        Ok(Outcome::Deleted(n, _)) => Ok(Outcome::Deleted(n, stored(db).await)),
        other => other.map_err(|e| e.to_string()),
    };
    (bodies, result)
}

/// Whether `haystack` (a BSON document) holds the string value `s`, as BSON encodes one: its
/// length with the terminating NUL, its bytes, the NUL.
fn holds_string(haystack: &[u8], s: &str) -> bool {
    let len = i32::try_from(s.len() + 1).unwrap();
    let needle = [&len.to_le_bytes()[..], s.as_bytes(), b"\0"].concat();
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Runs every case in both forms, then fails listing each case whose two forms sent other
/// bytes or returned other results (all of them, not only the first).
async fn check(test: &str, cases: Vec<Case>, expected: usize) {
    assert_eq!(cases.len(), expected, "the count in the module docs");
    let db = test_db(test).await;
    db.record_command_bodies();
    let mut differ = Vec::new();
    let mut hostile_checked = 0;
    for (n, case) in cases.into_iter().enumerate() {
        let (typed_sent, typed_got) = run(&db, case.typed).await;
        let (hand_sent, hand_got) = run(&db, case.by_hand).await;
        let bytes = |sent: &[Document]| -> Vec<Vec<u8>> {
            sent.iter().map(|d| d.to_vec().unwrap()).collect()
        };
        let (typed_bytes, hand_bytes) = (bytes(&typed_sent), bytes(&hand_sent));
        let mut why = Vec::new();
        if typed_bytes.is_empty() {
            why.push("the typed form sent nothing".to_owned());
        }
        if typed_bytes != hand_bytes {
            why.push(format!(
                "other bytes sent:\n      typed:   {typed_sent:?}\n      by hand: {hand_sent:?}"
            ));
        }
        match (&typed_got, &hand_got) {
            (Ok(a), Ok(b)) if a == b => {}
            // Both test servers refuse these (mongod runs them): the two forms fail alike.
            (Err(a), Err(b))
                if a == b && case.embedded_refuses && a.contains("unknown operator") => {}
            (a, b) => why.push(format!(
                "other results than expected:\n      typed:   {a:?}\n      by hand: {b:?}"
            )),
        }
        for hostile in HOSTILE {
            if case.label.contains(&format!("{hostile:?}")) {
                hostile_checked += 1;
                if !typed_bytes.iter().any(|b| holds_string(b, hostile)) {
                    why.push(format!(
                        "{hostile:?} is not a string of the typed command sent"
                    ));
                }
            }
        }
        if !why.is_empty() {
            differ.push(format!("#{n} {}:\n    {}", case.label, why.join("\n    ")));
        }
    }
    assert!(hostile_checked > 0, "no case of {test} has a hostile value");
    assert!(
        differ.is_empty(),
        "{} of {expected} cases differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[tokio::test]
async fn filters_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let jan_2020 = day(2020, 1, 1);
    let jun_2020 = day(2020, 6, 1);
    let cases = cases![
        // Comparisons on each type of field.
        find(Filter::eq(f.id, 3), doc! { "_id": { "$eq": 3_i64 } }),
        find(Filter::ne(f.id, 3), doc! { "_id": { "$ne": 3_i64 } }),
        find(
            Filter::eq(f.customer_name, "ann"),
            doc! { "customerName": { "$eq": "ann" } }
        ),
        find(
            Filter::ne(f.customer_name, "bob"),
            doc! { "customerName": { "$ne": "bob" } }
        ),
        find(
            Filter::gt(f.customer_name, "c"),
            doc! { "customerName": { "$gt": "c" } }
        ),
        find(
            Filter::gt(f.total_cents, 1000),
            doc! { "totalCents": { "$gt": 1000_i64 } }
        ),
        find(
            Filter::gte(f.total_cents, -40),
            doc! { "totalCents": { "$gte": -40_i64 } }
        ),
        find(
            Filter::lt(f.total_cents, 0_i64),
            doc! { "totalCents": { "$lt": 0_i64 } }
        ),
        find(
            Filter::lt(f.item_count, 3),
            doc! { "itemCount": { "$lt": 3 } }
        ),
        find(
            Filter::lte(f.item_count, 0),
            doc! { "itemCount": { "$lte": 0 } }
        ),
        find(
            Filter::gt(f.weight_kg, 1.0),
            doc! { "weightKg": { "$gt": 1.0 } }
        ),
        find(
            Filter::lt(f.weight_kg, 2),
            doc! { "weightKg": { "$lt": 2.0 } }
        ),
        find(
            Filter::gte(f.rating, 3.0_f32),
            doc! { "rating": { "$gte": 3.0 } }
        ),
        find(
            Filter::eq(f.rating, 0.5_f32),
            doc! { "rating": { "$eq": 0.5 } }
        ),
        find(
            Filter::eq(f.priority, 255_u8),
            doc! { "priority": { "$eq": 255 } }
        ),
        find(
            Filter::lte(f.priority, 2_u8),
            doc! { "priority": { "$lte": 2 } }
        ),
        find(
            Filter::gt(f.points, 100_u32),
            doc! { "points": { "$gt": 100_i64 } }
        ),
        find(
            Filter::eq(f.points, 4_000_000_000_u32),
            doc! { "points": { "$eq": 4_000_000_000_i64 } }
        ),
        find(
            Filter::gt(f.exact, dec("1.00")),
            doc! { "exact": { "$gt": dec("1.00") } }
        ),
        find(
            Filter::eq(f.exact, dec("0.10")),
            doc! { "exact": { "$eq": dec("0.10") } }
        ),
        find(
            Filter::eq(f.is_flagged, true),
            doc! { "flag": { "$eq": true } }
        ),
        find(
            Filter::ne(f.is_flagged, true),
            doc! { "flag": { "$ne": true } }
        ),
        find(
            Filter::eq(f.placed_at, jan_2020),
            doc! { "placedAt": { "$eq": jan_2020 } }
        ),
        find(
            Filter::lt(f.placed_at, jun_2020),
            doc! { "placedAt": { "$lt": jun_2020 } }
        ),
        find(
            Filter::gte(f.placed_at, jun_2020),
            doc! { "placedAt": { "$gte": jun_2020 } }
        ),
        // Option fields: a value, or None.
        find(
            Filter::eq(f.nickname, "$where".to_owned()),
            doc! { "nickname": { "$eq": "$where" } }
        ),
        find(
            Filter::eq(f.nickname, None),
            doc! { "nickname": { "$eq": Bson::Null } }
        ),
        find(
            Filter::ne(f.nickname, None),
            doc! { "nickname": { "$ne": Bson::Null } }
        ),
        find(
            Filter::gt(f.discount, 0.25),
            doc! { "discount": { "$gt": 0.25 } }
        ),
        find(
            Filter::lte(f.discount, Some(1.0)),
            doc! { "discount": { "$lte": 1.0 } }
        ),
        find(
            Filter::eq(f.shipped_at, day(2020, 6, 3)),
            doc! { "shippedAt": { "$eq": day(2020, 6, 3) } }
        ),
        find(
            Filter::eq(f.shipped_at, None),
            doc! { "shippedAt": { "$eq": Bson::Null } }
        ),
        find(
            Filter::eq(f.billing, None),
            doc! { "billing": { "$eq": Bson::Null } }
        ),
        // Whole arrays, documents and structs, compared as values.
        find(
            Filter::eq(f.tags, strings(&["a.b"])),
            doc! { "tags": { "$eq": ["a.b"] } }
        ),
        find(
            Filter::eq(f.tags, Vec::<String>::new()),
            doc! { "tags": { "$eq": [] } }
        ),
        find(
            Filter::eq(f.scores, [4, 4]),
            doc! { "scores": { "$eq": [4, 4] } }
        ),
        find(
            Filter::eq(f.meta, doc! { "source": "web" }),
            doc! { "meta": { "$eq": { "source": "web" } } }
        ),
        find(
            Filter::eq(f.meta, doc! { "$gt": 1 }),
            doc! { "meta": { "$eq": { "$gt": 1 } } }
        ),
        find(
            Filter::eq(f.meta, doc! { "note": "$$ROOT" }),
            doc! { "meta": { "$eq": { "note": "$$ROOT" } } }
        ),
        find(
            Filter::eq(f.ship_to, shipping("a.b", 10, None, 0.0, 0.0)),
            doc! { "shipTo": { "$eq": {
                "cityName": "a.b", "zipCode": 10_i64, "floor": Bson::Null,
                "geo": { "lat": 0.0, "lng": 0.0 },
            } } }
        ),
        // $in and $nin.
        find(
            Filter::is_in(f.id, [1, 3, 5]),
            doc! { "_id": { "$in": [1_i64, 3_i64, 5_i64] } }
        ),
        find(
            Filter::is_in(f.customer_name, ["$where", "{$gt: 1}"]),
            doc! { "customerName": { "$in": ["$where", "{$gt: 1}"] } }
        ),
        find(
            Filter::is_in(f.id, Vec::<i64>::new()),
            doc! { "_id": { "$in": [] } }
        ),
        find(
            Filter::not_in(f.item_count, [0, 7]),
            doc! { "itemCount": { "$nin": [0, 7] } }
        ),
        find(
            Filter::is_in(f.nickname, [None, Some("a.b".to_owned())]),
            doc! { "nickname": { "$in": [Bson::Null, "a.b"] } }
        ),
        find(
            Filter::not_in(f.discount, [0.0, 0.5]),
            doc! { "discount": { "$nin": [0.0, 0.5] } }
        ),
        find(
            Filter::is_in(f.weight_kg, [0, 12]),
            doc! { "weightKg": { "$in": [0.0, 12.0] } }
        ),
        find(
            Filter::is_in(f.placed_at, [jan_2020, jun_2020]),
            doc! { "placedAt": { "$in": [jan_2020, jun_2020] } }
        ),
        find(
            Filter::is_in(f.tags, [strings(&["sale"]), strings(&["a.b"])]),
            doc! { "tags": { "$in": [["sale"], ["a.b"]] } }
        ),
        find(
            Filter::is_in(f.lines.then(|l| l.sku_code), ["ink", "$$ROOT"]),
            doc! { "lines.skuCode": { "$in": ["ink", "$$ROOT"] } }
        ),
        // $exists.
        find(
            Filter::exists(f.nickname, true),
            doc! { "nickname": { "$exists": true } }
        ),
        find(
            Filter::exists(f.nickname, false),
            doc! { "nickname": { "$exists": false } }
        ),
        find(
            Filter::exists(f.billing.then(|b| b.floor), true),
            doc! { "billing.floor": { "$exists": true } }
        ),
        // Arrays: $all, $size, $elemMatch.
        find(
            Filter::all(f.tags, ["red", "sale"]),
            doc! { "tags": { "$all": ["red", "sale"] } }
        ),
        find(
            Filter::all(f.tags, ["$$ROOT"]),
            doc! { "tags": { "$all": ["$$ROOT"] } }
        ),
        find(
            Filter::all(f.scores, [4]),
            doc! { "scores": { "$all": [4] } }
        ),
        find(Filter::size(f.tags, 0), doc! { "tags": { "$size": 0_i64 } }),
        find(
            Filter::size(f.scores, 3),
            doc! { "scores": { "$size": 3_i64 } }
        ),
        find(
            Filter::size(f.lines, 2),
            doc! { "lines": { "$size": 2_i64 } }
        ),
        find(
            Filter::elem_match(f.lines, |l| Filter::gt(l.qty, 2)),
            doc! { "lines": { "$elemMatch": { "qty": { "$gt": 2 } } } }
        ),
        // A conjunction inside `$elemMatch` is sent in its implicit form.
        find(
            Filter::elem_match(f.lines, |l| Filter::eq(l.sku_code, "pen")
                .and(Filter::gte(l.unit_price, 1.5))),
            doc! { "lines": { "$elemMatch": {
                "skuCode": { "$eq": "pen" }, "unitPrice": { "$gte": 1.5 },
            } } }
        ),
        find(
            Filter::elem_match(f.lines, |l| Filter::gt(l.qty, 2)
                .and(Filter::lt(l.qty, 9))
                .and(Filter::eq(l.sku_code, "$gt"))),
            doc! { "lines": { "$elemMatch": {
                "qty": { "$gt": 2, "$lt": 9 }, "skuCode": { "$eq": "$gt" },
            } } }
        ),
        // A repeated operator keeps its `$and`.
        find_embedded_refuses(
            Filter::elem_match(f.lines, |l| Filter::gt(l.qty, 2).and(Filter::gt(l.qty, 3))),
            doc! { "lines": { "$elemMatch": { "$and": [
                { "qty": { "$gt": 2 } }, { "qty": { "$gt": 3 } },
            ] } } }
        ),
        find(
            Filter::elem_match(f.lines, |l| Filter::eq(l.sku_code, "$$ROOT")),
            doc! { "lines": { "$elemMatch": { "skuCode": { "$eq": "$$ROOT" } } } }
        ),
        find_embedded_refuses(
            Filter::elem_match(f.lines, |l| Filter::lt(l.qty, 2).or(Filter::gt(l.qty, 9))),
            doc! { "lines": { "$elemMatch": { "$or": [
                { "qty": { "$lt": 2 } }, { "qty": { "$gt": 9 } },
            ] } } }
        ),
        find_embedded_refuses(
            Filter::elem_match(f.lines, |l| !Filter::eq(l.sku_code, "pen")),
            doc! { "lines": { "$elemMatch": { "$nor": [ { "skuCode": { "$eq": "pen" } } ] } } }
        ),
        find(
            Filter::elem_match(f.lines, |_| Filter::gte(FieldName::nested(f.lines).qty, 5)),
            doc! { "lines": { "$elemMatch": { "qty": { "$gte": 5 } } } }
        ),
        // Nested paths: through a struct, two, an Option, the items of a Vec.
        find(
            Filter::eq(f.ship_to.then(|s| s.city_name), "a.b"),
            doc! { "shipTo.cityName": { "$eq": "a.b" } }
        ),
        find(
            Filter::gt(f.ship_to.then(|s| s.zip_code), 1000_u32),
            doc! { "shipTo.zipCode": { "$gt": 1000_i64 } }
        ),
        find(
            Filter::eq(f.ship_to.then(|s| s.floor), None),
            doc! { "shipTo.floor": { "$eq": Bson::Null } }
        ),
        find(
            Filter::lt(f.ship_to.then(|s| s.floor), 1),
            doc! { "shipTo.floor": { "$lt": 1 } }
        ),
        find(
            Filter::gt(f.ship_to.then(|s| s.geo).then(|g| g.lat), 50.0),
            doc! { "shipTo.geo.lat": { "$gt": 50.0 } }
        ),
        find(
            Filter::eq(f.billing.then(|b| b.city_name), "Bergen"),
            doc! { "billing.cityName": { "$eq": "Bergen" } }
        ),
        find(
            Filter::lte(f.billing.then(|b| b.geo).then(|g| g.lng), 5.5),
            doc! { "billing.geo.lng": { "$lte": 5.5 } }
        ),
        find(
            Filter::gte(f.lines.then(|l| l.qty), 5),
            doc! { "lines.qty": { "$gte": 5 } }
        ),
        find(
            Filter::eq(f.lines.then(|l| l.unit_price), 4.0),
            doc! { "lines.unitPrice": { "$eq": 4.0 } }
        ),
        find(
            Filter::eq(f.lines.then(|l| l.sku_code), "$$ROOT"),
            doc! { "lines.skuCode": { "$eq": "$$ROOT" } }
        ),
        // Combinations and negations.
        find(
            Filter::gt(f.total_cents, 0).and(Filter::lt(f.weight_kg, 5.0)),
            doc! { "$and": [ { "totalCents": { "$gt": 0_i64 } }, { "weightKg": { "$lt": 5.0 } } ] }
        ),
        find(
            Filter::eq(f.is_flagged, true).or(Filter::gt(f.item_count, 5)),
            doc! { "$or": [ { "flag": { "$eq": true } }, { "itemCount": { "$gt": 5 } } ] }
        ),
        find(
            Filter::and_all([
                Filter::exists(f.nickname, true),
                Filter::ne(f.nickname, None),
                Filter::gte(f.rating, 1.5_f32),
            ]),
            doc! { "$and": [
                { "nickname": { "$exists": true } },
                { "nickname": { "$ne": Bson::Null } },
                { "rating": { "$gte": 1.5 } },
            ] }
        ),
        find(
            Filter::or_any([
                Filter::eq(f.customer_name, "$where"),
                Filter::eq(f.nickname, "{$gt: 1}".to_owned()),
                Filter::eq(f.ship_to.then(|s| s.city_name), "a.b"),
            ]),
            doc! { "$or": [
                { "customerName": { "$eq": "$where" } },
                { "nickname": { "$eq": "{$gt: 1}" } },
                { "shipTo.cityName": { "$eq": "a.b" } },
            ] }
        ),
        find(
            Filter::none_of([Filter::eq(f.id, 1), Filter::size(f.tags, 0)]),
            doc! { "$nor": [ { "_id": { "$eq": 1_i64 } }, { "tags": { "$size": 0_i64 } } ] }
        ),
        find(
            !Filter::eq(f.customer_name, "$$ROOT"),
            doc! { "$nor": [ { "customerName": { "$eq": "$$ROOT" } } ] }
        ),
        find(
            !(Filter::gt(f.total_cents, 0).and(Filter::exists(f.billing, true))),
            doc! { "$nor": [ { "$and": [
                { "totalCents": { "$gt": 0_i64 } }, { "billing": { "$exists": true } },
            ] } ] }
        ),
        find(
            !!Filter::eq(f.is_flagged, false),
            doc! { "$nor": [ { "$nor": [ { "flag": { "$eq": false } } ] } ] }
        ),
        find(
            Filter::eq(f.id, 1)
                .or(Filter::eq(f.id, 2))
                .and(!Filter::eq(f.nickname, None)),
            doc! { "$and": [
                { "$or": [ { "_id": { "$eq": 1_i64 } }, { "_id": { "$eq": 2_i64 } } ] },
                { "$nor": [ { "nickname": { "$eq": Bson::Null } } ] },
            ] }
        ),
        find(
            Filter::elem_match(f.lines, |l| Filter::gt(l.qty, 4))
                .or(Filter::eq(f.billing.then(|b| b.zip_code), 1_u32)),
            doc! { "$or": [
                { "lines": { "$elemMatch": { "qty": { "$gt": 4 } } } },
                { "billing.zipCode": { "$eq": 1_i64 } },
            ] }
        ),
        find(Filter::default(), doc! {}),
        // Values that look like operators, paths or expressions: data.
        find(
            Filter::eq(f.customer_name, "{$gt: 1}"),
            doc! { "customerName": { "$eq": "{$gt: 1}" } }
        ),
        find(
            Filter::eq(f.customer_name, "$where"),
            doc! { "customerName": { "$eq": "$where" } }
        ),
        find(
            Filter::eq(f.nickname, "a.b".to_owned()),
            doc! { "nickname": { "$eq": "a.b" } }
        ),
        find(
            Filter::eq(f.customer_name, "$$ROOT"),
            doc! { "customerName": { "$eq": "$$ROOT" } }
        ),
        find(
            Filter::eq(f.ship_to.then(|s| s.city_name), "$where"),
            doc! { "shipTo.cityName": { "$eq": "$where" } }
        ),
        find(
            Filter::ne(f.customer_name, "$where"),
            doc! { "customerName": { "$ne": "$where" } }
        ),
        find(
            Filter::all(f.tags, ["a.b", "$where"]),
            doc! { "tags": { "$all": ["a.b", "$where"] } }
        ),
    ];
    check("qc_filters", cases, 95).await;
}

#[tokio::test]
async fn find_one_and_count_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let cases = cases![
        find_one(Filter::eq(f.id, 2), doc! { "_id": { "$eq": 2_i64 } }),
        find_one(
            Filter::eq(f.nickname, "$where".to_owned()),
            doc! { "nickname": { "$eq": "$where" } }
        ),
        find_one(
            Filter::gt(f.total_cents, 1_000_000),
            doc! { "totalCents": { "$gt": 1_000_000_i64 } }
        ),
        find_one(
            Filter::elem_match(f.lines, |l| Filter::eq(l.sku_code, "ink")),
            doc! { "lines": { "$elemMatch": { "skuCode": { "$eq": "ink" } } } }
        ),
        find_one(
            Filter::eq(f.billing.then(|b| b.city_name), "{$gt: 1}"),
            doc! { "billing.cityName": { "$eq": "{$gt: 1}" } }
        ),
        find_one(
            !Filter::is_in(f.id, [1, 2, 3]),
            doc! { "$nor": [ { "_id": { "$in": [1_i64, 2_i64, 3_i64] } } ] }
        ),
        find_one(Filter::default(), doc! {}),
        count(Filter::default(), doc! {}),
        count(
            Filter::gt(f.points, 5_u32),
            doc! { "points": { "$gt": 5_i64 } }
        ),
        count(
            Filter::eq(f.is_flagged, true).or(Filter::eq(f.nickname, None)),
            doc! { "$or": [ { "flag": { "$eq": true } }, { "nickname": { "$eq": Bson::Null } } ] }
        ),
        count(
            Filter::exists(f.billing, true),
            doc! { "billing": { "$exists": true } }
        ),
        count(
            Filter::all(f.tags, ["sale"]),
            doc! { "tags": { "$all": ["sale"] } }
        ),
        count(
            Filter::eq(f.customer_name, "{$gt: 1}"),
            doc! { "customerName": { "$eq": "{$gt: 1}" } }
        ),
        count(
            Filter::lt(f.lines.then(|l| l.unit_price), 1.0),
            doc! { "lines.unitPrice": { "$lt": 1.0 } }
        ),
    ];
    check("qc_find_one_count", cases, 14).await;
}

#[tokio::test]
async fn sorted_and_limited_finds_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let cases = cases![
        find_sorted(
            (Filter::default(), Sort::asc(f.id)),
            (doc! {}, doc! { "_id": 1 }),
            None
        ),
        find_sorted(
            (Filter::gt(f.total_cents, 0), Sort::desc(f.total_cents)),
            (
                doc! { "totalCents": { "$gt": 0_i64 } },
                doc! { "totalCents": -1 }
            ),
            Some(2)
        ),
        find_sorted(
            (
                Filter::default(),
                Sort::asc(f.ship_to.then(|s| s.city_name)).then_desc(f.id)
            ),
            (doc! {}, doc! { "shipTo.cityName": 1, "_id": -1 }),
            None
        ),
        find_sorted(
            (Filter::default(), Sort::desc(f.placed_at)),
            (doc! {}, doc! { "placedAt": -1 }),
            Some(3)
        ),
        find_sorted(
            (
                Filter::ne(f.customer_name, "$where"),
                Sort::asc(f.rating).then_asc(f.priority).then_desc(f.id)
            ),
            (
                doc! { "customerName": { "$ne": "$where" } },
                doc! { "rating": 1, "priority": 1, "_id": -1 }
            ),
            Some(4)
        ),
        find_sorted(
            (
                Filter::exists(f.lines.then(|l| l.qty), true),
                Sort::asc(f.lines.then(|l| l.qty)).then_asc(f.id)
            ),
            (
                doc! { "lines.qty": { "$exists": true } },
                doc! { "lines.qty": 1, "_id": 1 }
            ),
            None
        ),
        find_sorted(
            (Filter::default(), Sort::desc(f.discount).then_asc(f.id)),
            (doc! {}, doc! { "discount": -1, "_id": 1 }),
            Some(5)
        ),
        find_sorted(
            (
                Filter::all(f.tags, ["sale"]),
                Sort::desc(f.ship_to.then(|s| s.geo).then(|g| g.lat))
            ),
            (
                doc! { "tags": { "$all": ["sale"] } },
                doc! { "shipTo.geo.lat": -1 }
            ),
            Some(1)
        ),
        find_limited(Filter::default(), doc! {}, 2),
        find_limited(
            Filter::eq(f.tags, strings(&["$$ROOT", "red", "sale"])),
            doc! { "tags": { "$eq": ["$$ROOT", "red", "sale"] } },
            10
        ),
    ];
    check("qc_sorted", cases, 10).await;
}

#[tokio::test]
async fn updates_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let at = day(2021, 7, 1);
    let cases = cases![
        // $set on each type of field.
        update(
            1,
            Update::new().set(f.customer_name, "$where"),
            doc! { "$set": { "customerName": "$where" } }
        ),
        update(
            1,
            Update::new().set(f.total_cents, 42),
            doc! { "$set": { "totalCents": 42_i64 } }
        ),
        update(
            1,
            Update::new().set(f.item_count, 9),
            doc! { "$set": { "itemCount": 9 } }
        ),
        update(
            1,
            Update::new().set(f.weight_kg, 3),
            doc! { "$set": { "weightKg": 3.0 } }
        ),
        update(
            1,
            Update::new().set(f.rating, 2.5_f32),
            doc! { "$set": { "rating": 2.5 } }
        ),
        update(
            1,
            Update::new().set(f.priority, 7_u8),
            doc! { "$set": { "priority": 7 } }
        ),
        update(
            1,
            Update::new().set(f.points, 7_u32),
            doc! { "$set": { "points": 7_i64 } }
        ),
        update(
            1,
            Update::new().set(f.exact, dec("2.25")),
            doc! { "$set": { "exact": dec("2.25") } }
        ),
        update(
            1,
            Update::new().set(f.is_flagged, true),
            doc! { "$set": { "flag": true } }
        ),
        update(
            1,
            Update::new().set(f.placed_at, at),
            doc! { "$set": { "placedAt": at } }
        ),
        update(
            1,
            Update::new().set(f.nickname, "{$gt: 1}".to_owned()),
            doc! { "$set": { "nickname": "{$gt: 1}" } }
        ),
        update(
            1,
            Update::new().set(f.nickname, None),
            doc! { "$set": { "nickname": Bson::Null } }
        ),
        update(
            2,
            Update::new().set(f.shipped_at, Some(at)),
            doc! { "$set": { "shippedAt": at } }
        ),
        update(
            1,
            Update::new().set(f.tags, strings(&["a.b", "$$ROOT"])),
            doc! { "$set": { "tags": ["a.b", "$$ROOT"] } }
        ),
        update(
            1,
            Update::new().set(f.scores, Vec::<i32>::new()),
            doc! { "$set": { "scores": [] } }
        ),
        update(
            1,
            Update::new().set(f.meta, doc! { "k": "$v", "n": { "deep": [1, "$x"] } }),
            doc! { "$set": { "meta": { "k": "$v", "n": { "deep": [1, "$x"] } } } }
        ),
        update(
            1,
            Update::new().set(f.ship_to, shipping("$$ROOT", 7, Some(2), 1.0, -1.0)),
            doc! { "$set": { "shipTo": {
                "cityName": "$$ROOT", "zipCode": 7_i64, "floor": 2,
                "geo": { "lat": 1.0, "lng": -1.0 },
            } } }
        ),
        update(
            1,
            Update::new().set(f.billing, Some(shipping("a.b", 1, None, 0.5, 0.5))),
            doc! { "$set": { "billing": {
                "cityName": "a.b", "zipCode": 1_i64, "floor": Bson::Null,
                "geo": { "lat": 0.5, "lng": 0.5 },
            } } }
        ),
        update(
            1,
            Update::new().set(f.lines, vec![line("$where", 1, 2.0)]),
            doc! { "$set": { "lines": [ { "skuCode": "$where", "qty": 1, "unitPrice": 2.0 } ] } }
        ),
        // $set on nested paths.
        update(
            1,
            Update::new().set(f.ship_to.then(|s| s.city_name), "a.b"),
            doc! { "$set": { "shipTo.cityName": "a.b" } }
        ),
        update(
            1,
            Update::new().set(f.ship_to.then(|s| s.geo).then(|g| g.lat), 1.5),
            doc! { "$set": { "shipTo.geo.lat": 1.5 } }
        ),
        update(
            2,
            Update::new().set(f.billing.then(|b| b.zip_code), 1_u32),
            doc! { "$set": { "billing.zipCode": 1_i64 } }
        ),
        update(
            1,
            Update::new().set(f.ship_to.then(|s| s.floor), None),
            doc! { "$set": { "shipTo.floor": Bson::Null } }
        ),
        // $unset.
        update(
            1,
            Update::new().unset(f.nickname),
            doc! { "$unset": { "nickname": "" } }
        ),
        update(
            1,
            Update::new().unset(f.discount),
            doc! { "$unset": { "discount": "" } }
        ),
        update(
            2,
            Update::new().unset(f.shipped_at),
            doc! { "$unset": { "shippedAt": "" } }
        ),
        update(
            2,
            Update::new().unset(f.billing),
            doc! { "$unset": { "billing": "" } }
        ),
        update(
            1,
            Update::new().unset(f.ship_to.then(|s| s.floor)),
            doc! { "$unset": { "shipTo.floor": "" } }
        ),
        // $inc, $mul, $min, $max.
        update(
            1,
            Update::new().inc(f.total_cents, 5),
            doc! { "$inc": { "totalCents": 5_i64 } }
        ),
        update(
            1,
            Update::new().inc(f.total_cents, -1500),
            doc! { "$inc": { "totalCents": -1500_i64 } }
        ),
        update(
            1,
            Update::new().inc(f.weight_kg, 0.25),
            doc! { "$inc": { "weightKg": 0.25 } }
        ),
        update(
            1,
            Update::new().inc(f.item_count, 1),
            doc! { "$inc": { "itemCount": 1 } }
        ),
        update(
            1,
            Update::new().inc(f.priority, 1_u8),
            doc! { "$inc": { "priority": 1 } }
        ),
        update(
            1,
            Update::new().inc(f.points, 5_u32),
            doc! { "$inc": { "points": 5_i64 } }
        ),
        update(
            1,
            Update::new().inc(f.discount, 0.5),
            doc! { "$inc": { "discount": 0.5 } }
        ),
        update(
            1,
            Update::new().inc(f.rating, 0.5_f32),
            doc! { "$inc": { "rating": 0.5 } }
        ),
        update(
            1,
            Update::new().inc(f.exact, dec("0.05")),
            doc! { "$inc": { "exact": dec("0.05") } }
        ),
        update(
            1,
            Update::new().inc(f.ship_to.then(|s| s.zip_code), 1_u32),
            doc! { "$inc": { "shipTo.zipCode": 1_i64 } }
        ),
        update(
            1,
            Update::new().mul(f.weight_kg, 2.0),
            doc! { "$mul": { "weightKg": 2.0 } }
        ),
        update(
            1,
            Update::new().mul(f.total_cents, 3),
            doc! { "$mul": { "totalCents": 3_i64 } }
        ),
        update(
            1,
            Update::new().min(f.total_cents, 100),
            doc! { "$min": { "totalCents": 100_i64 } }
        ),
        update(
            1,
            Update::new().max(f.item_count, 10),
            doc! { "$max": { "itemCount": 10 } }
        ),
        update(
            1,
            Update::new().min(f.ship_to.then(|s| s.geo).then(|g| g.lng), -1.0),
            doc! { "$min": { "shipTo.geo.lng": -1.0 } }
        ),
        // Arrays: $push, $push $each, $addToSet, $pullAll.
        update(
            1,
            Update::new().push(f.tags, "$$ROOT"),
            doc! { "$push": { "tags": "$$ROOT" } }
        ),
        update(
            1,
            Update::new().push(f.lines, line("{$gt: 1}", 4, 0.75)),
            doc! { "$push": { "lines": { "skuCode": "{$gt: 1}", "qty": 4, "unitPrice": 0.75 } } }
        ),
        update(
            1,
            Update::new().push_each(f.tags, ["a.b", "$where"]),
            doc! { "$push": { "tags": { "$each": ["a.b", "$where"] } } }
        ),
        update(
            1,
            Update::new().add_to_set(f.scores, 5),
            doc! { "$addToSet": { "scores": 5 } }
        ),
        update(
            3,
            Update::new().pull(f.tags, "$$ROOT"),
            doc! { "$pullAll": { "tags": ["$$ROOT"] } }
        ),
        update(
            2,
            Update::new().current_date(f.shipped_at),
            doc! { "$currentDate": { "shippedAt": true } }
        ),
    ];
    check("qc_updates", cases, 49).await;
}

/// More updates: the rest of the array operators, `$currentDate`, and several operators in one
/// update (operators in the order of their first use, fields in call order).
#[tokio::test]
async fn combined_updates_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let cases = cases![
        update(
            1,
            Update::new().push(f.scores, 9),
            doc! { "$push": { "scores": 9 } }
        ),
        update(
            1,
            Update::new().push_each(f.tags, Vec::<String>::new()),
            doc! { "$push": { "tags": { "$each": [] } } }
        ),
        update(
            1,
            Update::new().push_each(f.lines, [line("a.b", 1, 1.0), line("$$ROOT", 2, 2.0)]),
            doc! { "$push": { "lines": { "$each": [
                { "skuCode": "a.b", "qty": 1, "unitPrice": 1.0 },
                { "skuCode": "$$ROOT", "qty": 2, "unitPrice": 2.0 },
            ] } } }
        ),
        update(
            1,
            Update::new().add_to_set(f.tags, "sale"),
            doc! { "$addToSet": { "tags": "sale" } }
        ),
        update(
            1,
            Update::new().add_to_set(f.tags, "{$gt: 1}"),
            doc! { "$addToSet": { "tags": "{$gt: 1}" } }
        ),
        update(
            1,
            Update::new().pull(f.tags, "sale"),
            doc! { "$pullAll": { "tags": ["sale"] } }
        ),
        update(
            1,
            Update::new().pull(f.lines, line("pen", 2, 1.25)),
            doc! { "$pullAll": { "lines": [ { "skuCode": "pen", "qty": 2, "unitPrice": 1.25 } ] } }
        ),
        update(
            1,
            Update::new().current_date(f.placed_at),
            doc! { "$currentDate": { "placedAt": true } }
        ),
        update(
            1,
            Update::new().max(f.discount, 0.75),
            doc! { "$max": { "discount": 0.75 } }
        ),
        update(
            1,
            Update::new().mul(f.item_count, 3),
            doc! { "$mul": { "itemCount": 3 } }
        ),
        update(
            1,
            Update::new()
                .set(f.customer_name, "a.b")
                .inc(f.total_cents, 1)
                .push(f.tags, "$where")
                .unset(f.nickname),
            doc! {
                "$set": { "customerName": "a.b" },
                "$inc": { "totalCents": 1_i64 },
                "$push": { "tags": "$where" },
                "$unset": { "nickname": "" },
            }
        ),
        update(
            1,
            Update::new()
                .inc(f.total_cents, 1)
                .set(f.customer_name, "$$ROOT")
                .inc(f.item_count, 2)
                .set(f.is_flagged, true),
            doc! {
                "$inc": { "totalCents": 1_i64, "itemCount": 2 },
                "$set": { "customerName": "$$ROOT", "flag": true },
            }
        ),
        update(
            1,
            Update::new()
                .inc(f.weight_kg, 1.0)
                .mul(f.points, 2_u32)
                .min(f.rating, 1.0_f32)
                .max(f.priority, 200_u8),
            doc! {
                "$inc": { "weightKg": 1.0 },
                "$mul": { "points": 2_i64 },
                "$min": { "rating": 1.0 },
                "$max": { "priority": 200 },
            }
        ),
        update(
            2,
            Update::new()
                .set(f.billing.then(|b| b.city_name), "{$gt: 1}")
                .push_each(f.scores, [7, 8])
                .pull(f.tags, "a.b")
                .current_date(f.shipped_at),
            doc! {
                "$set": { "billing.cityName": "{$gt: 1}" },
                "$push": { "scores": { "$each": [7, 8] } },
                "$pullAll": { "tags": ["a.b"] },
                "$currentDate": { "shippedAt": true },
            }
        ),
        update(
            5,
            Update::new()
                .set(f.ship_to.then(|s| s.geo).then(|g| g.lat), 0.0)
                .set(f.ship_to.then(|s| s.city_name), "$where")
                .add_to_set(f.tags, "$$ROOT")
                .unset(f.discount)
                .inc(f.exact, dec("1")),
            doc! {
                "$set": { "shipTo.geo.lat": 0.0, "shipTo.cityName": "$where" },
                "$addToSet": { "tags": "$$ROOT" },
                "$unset": { "discount": "" },
                "$inc": { "exact": dec("1") },
            }
        ),
    ];
    check("qc_combined_updates", cases, 15).await;
}

#[tokio::test]
async fn many_writes_send_what_their_documents_send() {
    let f = Order::FIELDS;
    let cases = cases![
        update_many(
            (Filter::default(), Update::new().inc(f.points, 1_u32)),
            (doc! {}, doc! { "$inc": { "points": 1_i64 } })
        ),
        update_many(
            (
                Filter::eq(f.is_flagged, true),
                Update::new().set(f.nickname, "$where".to_owned())
            ),
            (
                doc! { "flag": { "$eq": true } },
                doc! { "$set": { "nickname": "$where" } }
            )
        ),
        update_many(
            (
                Filter::elem_match(f.lines, |l| Filter::gt(l.qty, 2)),
                Update::new().push(f.tags, "bulk")
            ),
            (
                doc! { "lines": { "$elemMatch": { "qty": { "$gt": 2 } } } },
                doc! { "$push": { "tags": "bulk" } }
            )
        ),
        update_many(
            (
                Filter::is_in(f.id, [1, 2]),
                Update::new().unset(f.discount).current_date(f.shipped_at)
            ),
            (
                doc! { "_id": { "$in": [1_i64, 2_i64] } },
                doc! { "$unset": { "discount": "" }, "$currentDate": { "shippedAt": true } }
            )
        ),
        update_many(
            (
                Filter::gt(f.ship_to.then(|s| s.geo).then(|g| g.lat), 50.0),
                Update::new().mul(f.weight_kg, 2.0).max(f.rating, 4.0_f32)
            ),
            (
                doc! { "shipTo.geo.lat": { "$gt": 50.0 } },
                doc! { "$mul": { "weightKg": 2.0 }, "$max": { "rating": 4.0 } }
            )
        ),
        update_many(
            (
                Filter::eq(f.customer_name, "$$ROOT"),
                Update::new().set(f.customer_name, "matched")
            ),
            (
                doc! { "customerName": { "$eq": "$$ROOT" } },
                doc! { "$set": { "customerName": "matched" } }
            )
        ),
        update_many(
            (
                !Filter::exists(f.billing, true),
                Update::new().add_to_set(f.tags, "a.b")
            ),
            (
                doc! { "$nor": [ { "billing": { "$exists": true } } ] },
                doc! { "$addToSet": { "tags": "a.b" } }
            )
        ),
        delete_many(Filter::default(), doc! {}),
        delete_many(
            Filter::eq(f.customer_name, "{$gt: 1}"),
            doc! { "customerName": { "$eq": "{$gt: 1}" } }
        ),
        delete_many(
            Filter::lt(f.placed_at, day(2020, 3, 1)),
            doc! { "placedAt": { "$lt": day(2020, 3, 1) } }
        ),
        delete_many(
            Filter::size(f.tags, 0).or(Filter::eq(f.nickname, None)),
            doc! { "$or": [
                { "tags": { "$size": 0_i64 } },
                { "nickname": { "$eq": Bson::Null } },
            ] }
        ),
        delete_many(
            Filter::eq(f.lines.then(|l| l.sku_code), "$$ROOT"),
            doc! { "lines.skuCode": { "$eq": "$$ROOT" } }
        ),
        delete_many(
            Filter::not_in(f.ship_to.then(|s| s.city_name), ["Oslo", "$where"]),
            doc! { "shipTo.cityName": { "$nin": ["Oslo", "$where"] } }
        ),
    ];
    check("qc_many_writes", cases, 13).await;
}

//! "Values are data" (`pattern_runtime::query`), through every typed operation: each hostile
//! value is either stored literally (the stored document read back raw and compared with what
//! `bson::serialize_to_bson` writes for it) or matched literally (a filter finds exactly the
//! documents holding that literal, in a collection seeded so that an operator, a path or a
//! pattern reading of it would find others), or refused with `Error::InvalidValue`,
//! `Error::InvalidKey` or `Error::KeptField`, with no write command sent and every stored
//! document unchanged.
//!
//! The values: strings that look like operators, variables, paths or JSON (`"$where"`,
//! `"$$ROOT"`, `"$gt"`, `"a.b"`, `"{\"$gt\": 1}"`), the empty string, NUL, 100 000 characters,
//! unicode; documents and maps with `$`-prefixed, dotted, NUL and empty keys, nested to
//! `MAX_VALUE_DEPTH`, one past it and 150 levels; NaN, the infinities, -0.0; the `i32` and `i64`
//! extremes; regexes, JavaScript code (with a scope holding an operator), `undefined`, `null`,
//! arrays, dates at both ends of their range; `None`.
//!
//! The tables (each test asserts how many rows it ran, and prints them per operator):
//! - `typed_updates_store_each_value_literally_or_refuse_it`: every `Update` operator (`set`,
//!   `unset`, `inc`, `mul`, `min`, `max`, `push`, `push_each`, `add_to_set`, `pull`,
//!   `current_date`), on every kind of field and on paths through a nested struct, each row
//!   run through `update(id, ..)`, every fourth through `update_many(filter, ..)` too; the
//!   document must then still read as the model. An `inc` or `mul` past a range depends on the stored value, so only the
//!   server can refuse it: past the `i64` range as `Error::InvalidValue`, an `i32` widened to an
//!   `Int64` as the model's validator's `Error::ValidationFailed`; nothing written either way.
//! - `typed_filters_match_each_value_literally_or_refuse_it`: every `Filter` operator (`eq`,
//!   `ne`, `gt`, `gte`, `lt`, `lte`, `is_in`, `not_in`, `exists`, `elem_match`, `all`, `size`,
//!   `and`, `and_all`, `or`, `or_any`, `none_of`, `!`), each row run through `find`
//!   and `count`, every eighth row through `find_one` and `find(..).project::<P>()`, and
//!   every other eighth through `update_many` and `delete_many` (each verb sends the filter
//!   document as built, which `query_commands` shows; the rows of the defects below run
//!   through all six).
//! - `inserts_store_each_value_literally_or_refuse_it`: `insert` and `insert_many` of whole
//!   documents holding the values.
//! - `keyset_pages_after_hostile_values_walk_every_document_once`: `find(..).sort(..).after(&last)`
//!   (and its projected form) over sort keys holding the values; a `last` holding a value that
//!   is no literal is refused, nothing sent.
//!
//! The rows where the toolkit once broke the rule are tests of their own, named after the
//! behaviour it keeps (the section `Rows the toolkit once got wrong` at the end). Their filter
//! rows are chosen by what the typed filter would send (`defect_of`), and judged as the table
//! judges them, except that either a refusal before sending or a literal match passes:
//! - `is_in_and_not_in_refuse_an_operator_document_before_sending`
//! - `filter_values_with_a_nul_in_a_key_are_invalid_values`
//! - `ne_and_order_filters_refuse_a_regex_before_sending`
//! - `filter_values_holding_undefined_are_refused_before_sending`
//! - `all_never_reads_an_item_as_an_operator`
//! - `update_many_does_not_report_a_refused_filter_as_an_overflow`
//! - `keyset_pages_walk_past_a_nan_key`
//! - `keyset_pages_over_a_bson_key_walk_every_type`
//!
//! Left out for the embedded server alone (mongod does these): `count` of a filter whose value
//! is a document holding a `$where` key (the embedded server refuses that key anywhere in an
//! aggregation's `$match`); the order operators on documents and JavaScript code, which it
//! does not order.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::future::{Future, IntoFuture};
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use bson::{doc, Bson, DateTime, Document, JavaScriptCodeWithScope, Regex};
use futures_util::{FutureExt, TryStreamExt};
use mongodb::Database;
use pattern_runtime::query::{Filter, Sort, Update};
use pattern_runtime::{limits::MAX_VALUE_DEPTH, Error, Fields, Model};
use pattern_testkit::{test_db, TestDb};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// The models
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
struct Part {
    label: String,
    qty: i32,
    extra: Bson,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "qv_things")]
struct Thing {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
    maybe: Option<String>,
    small: i32,
    big: i64,
    real: f64,
    flag: bool,
    tags: Vec<String>,
    part: Part,
    parts: Vec<Part>,
    doc: Document,
    any: Bson,
    bag: Vec<Bson>,
    map: HashMap<String, String>,
    when: DateTime,
    /// What `update_many` marks in the filter table.
    hits: i32,
}

/// A projection of `Thing`.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[projection(of = Thing)]
struct Brief {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
}

/// A model whose sort keys have indexes, for keyset pages.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "qv_paged")]
struct Paged {
    #[serde(rename = "_id")]
    id: i64,
    #[index(1)]
    text: String,
    #[index(1)]
    real: f64,
    #[index(1)]
    any: Bson,
    #[index(1)]
    when: DateTime,
}

/// A projection of `Paged`, for projected keyset pages.
#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
#[projection(of = Paged)]
struct PagedKeys {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
    real: f64,
    any: Bson,
    when: DateTime,
}

// ---------------------------------------------------------------------------------------------
// The hostile values
// ---------------------------------------------------------------------------------------------

fn regex(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().unwrap(),
        options: options.try_into().unwrap(),
    })
}

/// A document of `levels` levels: `{a: {a: ... {a: 1}}}`.
fn deep(levels: usize) -> Document {
    let mut d = doc! { "a": 1 };
    for _ in 1..levels {
        d = doc! { "a": d };
    }
    d
}

/// `levels` arrays around `1`.
fn deep_arrays(levels: usize) -> Bson {
    let mut v = Bson::Int32(1);
    for _ in 0..levels {
        v = Bson::Array(vec![v]);
    }
    v
}

fn strings() -> Vec<String> {
    vec![
        "$where".into(),
        "$$ROOT".into(),
        "$gt".into(),
        "a.b".into(),
        "{\"$gt\": 1}".into(),
        String::new(),
        "\0 inside".into(),
        "x".repeat(100_000),
        "ünïcødé ✓ 🦀 \u{202e}txet".into(),
        "$".into(),
        "abc".into(),
    ]
}

fn i32s() -> Vec<i32> {
    vec![i32::MIN, i32::MAX, 0, -1]
}

fn i64s() -> Vec<i64> {
    vec![i64::MIN, i64::MAX, 0, -1]
}

fn f64s() -> Vec<f64> {
    vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        f64::MAX,
        f64::MIN_POSITIVE,
    ]
}

fn dates() -> Vec<DateTime> {
    vec![
        DateTime::MIN,
        DateTime::MAX,
        DateTime::from_millis(0),
        DateTime::from_millis(-1),
    ]
}

fn documents() -> Vec<Document> {
    vec![
        doc! { "$gt": 1 },
        doc! { "$where": "1" },
        doc! { "$elemMatch": { "$gt": 1 } },
        doc! { "$each": ["a"] },
        doc! { "$literal": "$x" },
        doc! { "a.b": 1 },
        doc! { "a": { "$gt": 1 } },
        doc! { "a": { "b.c": 1 } },
        doc! { "a\0b": 1 },
        doc! { "": 1 },
        doc! { "a": "$x", "b": "$$ROOT" },
        doc! { "b": "$$ROOT", "a": "$x" },
        doc! { "a": regex("^a", "i") },
        doc! {},
        deep(MAX_VALUE_DEPTH),
        deep(MAX_VALUE_DEPTH + 1),
        deep(150),
    ]
}

fn maps() -> Vec<HashMap<String, String>> {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<HashMap<String, String>>()
    };
    vec![
        map(&[("$gt", "1")]),
        map(&[("$where", "x")]),
        map(&[("a.b", "x")]),
        map(&[("a\0b", "x")]),
        map(&[("", "x")]),
        map(&[("k", "$where"), ("l", "$$ROOT")]),
        map(&[]),
    ]
}

fn bsons() -> Vec<Bson> {
    let mut v: Vec<Bson> = strings().into_iter().map(Bson::String).collect();
    v.push(Bson::String("ABC".into()));
    v.extend(i32s().into_iter().map(Bson::Int32));
    v.extend(i64s().into_iter().map(Bson::Int64));
    v.extend(f64s().into_iter().map(Bson::Double));
    v.extend([Bson::Int32(5), Bson::Int64(5), Bson::Double(5.0)]);
    v.extend(documents().into_iter().map(Bson::Document));
    v.extend([
        regex("^a", "i"),
        regex(".*", ""),
        regex("$where", ""),
        Bson::JavaScriptCode("function() { return true; }".into()),
        Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope {
            code: "x".into(),
            scope: doc! { "x": 1 },
        }),
        Bson::Null,
        Bson::Boolean(true),
        Bson::DateTime(DateTime::MAX),
        Bson::Array(vec!["$x".into(), 1.into()]),
        Bson::Array(vec![Bson::Document(doc! { "$gt": 1 })]),
        Bson::Array(vec![]),
        deep_arrays(MAX_VALUE_DEPTH),
        deep_arrays(MAX_VALUE_DEPTH + 1),
        Bson::Undefined,
    ]);
    v
}

fn parts_of_strings() -> Vec<Part> {
    strings()
        .into_iter()
        .map(|label| Part {
            label,
            qty: 1,
            extra: Bson::Null,
        })
        .collect()
}

fn parts_of_bsons() -> Vec<Part> {
    bsons()
        .into_iter()
        .map(|extra| Part {
            label: "x".into(),
            qty: 2,
            extra,
        })
        .collect()
}

fn ser<T: Serialize>(v: &T) -> Bson {
    bson::serialize_to_bson(v).unwrap()
}

/// A short name for a value in a failure message.
fn label(v: &Bson) -> String {
    let s = match v {
        Bson::String(s) => format!("{s:?}"),
        Bson::Double(d) => format!("{d:?}"),
        other => format!("{other}"),
    };
    if s.chars().count() > 70 {
        let head: String = s.chars().take(40).collect();
        format!("{head}... ({} chars)", s.chars().count())
    } else {
        s
    }
}

fn key_ok(k: &str) -> bool {
    !k.starts_with('$') && !k.contains('.') && !k.contains('\0')
}

/// Whether the toolkit's documented rule stores `v` at `depth` (0 for an update's value, 1 for
/// a field of an inserted document): no key with a leading `$`, a `.` or NUL, no nesting past
/// `MAX_VALUE_DEPTH`, no `undefined`.
fn storable(v: &Bson, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match v {
        Bson::Document(d) => d.iter().all(|(k, v)| key_ok(k) && storable(v, depth + 1)),
        Bson::Array(a) => a.iter().all(|v| storable(v, depth + 1)),
        Bson::Undefined => false,
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing values as stored, and as the server matches them
// ---------------------------------------------------------------------------------------------

/// The same BSON: same types, same keys in the same order, doubles bit for bit (any NaN equal
/// to any NaN).
fn same(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Double(x), Bson::Double(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        (Bson::Document(x), Bson::Document(y)) => same_doc(x, y),
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

fn same_doc(x: &Document, y: &Document) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
}

fn num(b: &Bson) -> Option<f64> {
    match b {
        Bson::Int32(i) => Some(f64::from(*i)),
        #[allow(clippy::cast_precision_loss)]
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// MongoDB's equality: numbers by value across types (NaN equal to NaN, -0 to 0), documents
/// key by key in order, arrays item by item, anything else as the same value.
fn mongo_eq(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Int64(x), Bson::Int64(y)) => x == y,
        (Bson::Int32(x), Bson::Int64(y)) | (Bson::Int64(y), Bson::Int32(x)) => i64::from(*x) == *y,
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            (Some(_), None) | (None, Some(_)) => false,
            (None, None) => match (a, b) {
                (Bson::Document(x), Bson::Document(y)) => {
                    x.len() == y.len()
                        && x.iter()
                            .zip(y)
                            .all(|((ka, va), (kb, vb))| ka == kb && mongo_eq(va, vb))
                }
                (Bson::Array(x), Bson::Array(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| mongo_eq(a, b))
                }
                _ => a == b,
            },
        },
    }
}

/// The values at a dotted `path` of `doc`, through arrays as a query walks them; `None` for
/// a missing one.
fn values_at<'a>(doc: &'a Document, path: &str) -> Vec<Option<&'a Bson>> {
    let mut current: Vec<Option<&'a Bson>> = Vec::new();
    let (first, rest) = match path.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (path, None),
    };
    current.push(doc.get(first));
    let Some(rest) = rest else {
        return current;
    };
    let mut out = Vec::new();
    for c in current {
        match c {
            Some(Bson::Document(d)) => out.extend(values_at(d, rest)),
            Some(Bson::Array(items)) => {
                for item in items {
                    if let Bson::Document(d) = item {
                        out.extend(values_at(d, rest));
                    }
                }
            }
            _ => out.push(None),
        }
    }
    out
}

/// Whether `{path: {$eq: q}}` matches `doc`: the value, or an item of an array value, equals `q`;
/// `null` also matches a missing field.
fn eq_match(doc: &Document, path: &str, q: &Bson) -> bool {
    values_at(doc, path).into_iter().any(|v| match v {
        None => matches!(q, Bson::Null),
        Some(v) => {
            mongo_eq(v, q)
                || matches!(v, Bson::Array(items) if items.iter().any(|i| mongo_eq(i, q)))
        }
    })
}

/// A BSON type's bracket, for the order operators (which compare within one bracket).
fn bracket(b: &Bson) -> u8 {
    match b {
        Bson::Null | Bson::Undefined => 1,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => 2,
        Bson::String(_) | Bson::Symbol(_) => 3,
        Bson::Document(_) => 4,
        Bson::Array(_) => 5,
        Bson::Boolean(_) => 8,
        Bson::DateTime(_) => 9,
        Bson::RegularExpression(_) => 11,
        _ => 20,
    }
}

/// MongoDB's order of two scalars of one bracket (NaN below every number).
fn order(a: &Bson, b: &Bson) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Bson::String(x), Bson::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bson::DateTime(x), Bson::DateTime(y)) => x.cmp(y),
        (Bson::Boolean(x), Bson::Boolean(y)) => x.cmp(y),
        (Bson::Int64(x), Bson::Int64(y)) => x.cmp(y),
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => x.partial_cmp(&y).unwrap(),
            },
            _ => Ordering::Equal,
        },
    }
}

/// Whether `{path: {op: q}}` (`$gt`, `$gte`, `$lt`, `$lte`) matches `doc`, `q` a scalar.
fn order_match(doc: &Document, path: &str, op: &str, q: &Bson) -> bool {
    use std::cmp::Ordering;
    let nan = matches!(q, Bson::Double(d) if d.is_nan());
    let one = |v: &Bson| {
        if bracket(v) != bracket(q) {
            return false;
        }
        let v_nan = matches!(v, Bson::Double(d) if d.is_nan());
        if matches!(q, Bson::Null) || nan || v_nan {
            // `null` and NaN match only themselves, and only inclusively: a NaN on either
            // side of `$lt` or `$gt` compares false (mongod's special case for NaN).
            return matches!(op, "$gte" | "$lte") && mongo_eq(v, q);
        }
        let o = order(v, q);
        match op {
            "$gt" => o == Ordering::Greater,
            "$gte" => o != Ordering::Less,
            "$lt" => o == Ordering::Less,
            "$lte" => o != Ordering::Greater,
            _ => unreachable!(),
        }
    };
    values_at(doc, path).into_iter().any(|v| match v {
        None => one(&Bson::Null),
        Some(Bson::Array(items)) => items.iter().any(one),
        Some(v) => one(v),
    })
}

// ---------------------------------------------------------------------------------------------
// Stored documents, dotted paths, the operators' effects
// ---------------------------------------------------------------------------------------------

/// Every document of `collection`, as stored, in `_id` order.
async fn stored(db: &Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

async fn reset(db: &Database, collection: &str, docs: &[Document]) {
    let c = db.collection::<Document>(collection);
    c.delete_many(doc! {}).await.unwrap();
    if !docs.is_empty() {
        c.insert_many(docs.to_vec()).await.unwrap();
    }
}

/// What differs between two lists of stored documents, or `None`.
fn diff(expected: &[Document], got: &[Document]) -> Option<String> {
    if expected.len() == got.len() && expected.iter().zip(got).all(|(a, b)| same_doc(a, b)) {
        return None;
    }
    let short = |d: &Document| label(&Bson::Document(d.clone()));
    let mut out = Vec::new();
    for d in expected {
        if !got.iter().any(|g| same_doc(d, g)) {
            out.push(format!("expected {}", short(d)));
        }
    }
    for d in got {
        if !expected.iter().any(|e| same_doc(d, e)) {
            out.push(format!("found {}", short(d)));
        }
    }
    if out.is_empty() {
        out.push("the same documents in another order".into());
    }
    Some(out.join("; "))
}

fn get_path<'a>(doc: &'a Document, path: &str) -> Option<&'a Bson> {
    match path.split_once('.') {
        None => doc.get(path),
        Some((first, rest)) => match doc.get(first) {
            Some(Bson::Document(d)) => get_path(d, rest),
            _ => None,
        },
    }
}

fn set_path(doc: &mut Document, path: &str, value: Bson) {
    match path.split_once('.') {
        None => {
            doc.insert(path, value);
        }
        Some((first, rest)) => match doc.get_mut(first) {
            Some(Bson::Document(d)) => set_path(d, rest, value),
            _ => panic!("no document at {first}"),
        },
    }
}

fn array_at(doc: &Document, path: &str) -> Vec<Bson> {
    match get_path(doc, path) {
        Some(Bson::Array(a)) => a.clone(),
        other => panic!("no array at {path}: {other:?}"),
    }
}

/// What `$inc`, `$mul`, `$min` or `$max` of `by` makes of `old`, as the server computes it:
/// `Err` when a 64-bit integer overflows (which the server refuses).
fn number_effect(op: &str, old: &Bson, by: &Bson) -> Result<Bson, ()> {
    use std::cmp::Ordering;
    match op {
        "$min" | "$max" => {
            let o = order(by, old);
            let take = if op == "$min" {
                o == Ordering::Less
            } else {
                o == Ordering::Greater
            };
            Ok(if take { by.clone() } else { old.clone() })
        }
        _ => match (old, by) {
            (Bson::Double(a), Bson::Double(b)) => {
                Ok(Bson::Double(if op == "$inc" { a + b } else { a * b }))
            }
            (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
                let wide = matches!(old, Bson::Int64(_)) || matches!(by, Bson::Int64(_));
                let int = |b: &Bson| match b {
                    Bson::Int32(i) => i64::from(*i),
                    Bson::Int64(i) => *i,
                    _ => unreachable!(),
                };
                let r = if op == "$inc" {
                    int(old).checked_add(int(by))
                } else {
                    int(old).checked_mul(int(by))
                };
                let r = r.ok_or(())?;
                Ok(match i32::try_from(r) {
                    Ok(small) if !wide => Bson::Int32(small),
                    _ => Bson::Int64(r),
                })
            }
            _ => panic!("{op} of {by} on {old}"),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Running an operation and judging it
// ---------------------------------------------------------------------------------------------

enum Outcome<T> {
    Ok(T),
    Err(Error),
    Panicked(String),
    TimedOut,
}

async fn run<T>(f: impl Future<Output = pattern_runtime::Result<T>>) -> Outcome<T> {
    match tokio::time::timeout(Duration::from_secs(60), AssertUnwindSafe(f).catch_unwind()).await {
        Err(_) => Outcome::TimedOut,
        Ok(Err(panic)) => Outcome::Panicked(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default(),
        ),
        Ok(Ok(Ok(v))) => Outcome::Ok(v),
        Ok(Ok(Err(e))) => Outcome::Err(e),
    }
}

/// A refusal of a value, before anything is sent.
fn refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidValue { .. } | Error::InvalidKey { .. } | Error::KeptField { .. }
    )
}

fn short(e: &Error) -> String {
    let s = format!("{e:?}");
    if s.chars().count() > 300 {
        let head: String = s.chars().take(300).collect();
        format!("{head}...")
    } else {
        s
    }
}

/// The name of an error's variant.
fn variant(e: &Error) -> String {
    format!("{e:?}")
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect()
}

const WRITES: [&str; 4] = ["insert", "update", "delete", "findAndModify"];

/// The write commands among `commands`.
fn writes(db: &TestDb) -> Vec<String> {
    db.take_commands()
        .into_iter()
        .filter(|c| WRITES.contains(&c.name.as_str()))
        .map(|c| format!("{} {}", c.name, c.target))
        .collect()
}

/// The rows a test ran, per operator, and the rows that broke the rule.
struct Ledger {
    test: &'static str,
    rows: BTreeMap<String, usize>,
    /// How the rows came out: `stored`, `matched`, `refused`, ...
    outcomes: BTreeMap<String, usize>,
    failures: Vec<String>,
}

impl Ledger {
    fn new(test: &'static str) -> Self {
        Ledger {
            test,
            rows: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            failures: Vec::new(),
        }
    }

    fn row(&mut self, op: &str) {
        *self.rows.entry(op.to_owned()).or_default() += 1;
    }

    fn outcome(&mut self, what: &str) {
        *self.outcomes.entry(what.to_owned()).or_default() += 1;
    }

    fn fail(&mut self, op: &str, input: &str, what: impl Into<String>) {
        let line = format!("{op} {input}: {}", what.into());
        eprintln!("[{}] FAILURE {line}", self.test);
        self.failures.push(line);
    }

    /// Panics with every failure; else checks the number of rows.
    fn finish(self, expected_rows: usize) {
        let total: usize = self.rows.values().sum();
        eprintln!("[{}] {total} rows: {:?}", self.test, self.rows);
        eprintln!("[{}] outcomes: {:?}", self.test, self.outcomes);
        assert!(
            self.failures.is_empty(),
            "{}: {} of {total} rows broke the rule:\n  {}",
            self.test,
            self.failures.len(),
            self.failures.join("\n  ")
        );
        assert_eq!(
            total, expected_rows,
            "{}: rows per operator {:?}",
            self.test, self.rows
        );
    }
}

/// Runs a test body on a thread with a 64 MiB stack (values nested to `MAX_VALUE_DEPTH` are
/// read back through serde) and a runtime of its own; the thread keeps the test's name, which
/// `test_db` reads to install the module's validators.
fn big_stack<F, Fut>(body: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let name = std::thread::current()
        .name()
        .unwrap_or("query_values")
        .to_owned();
    let thread = std::thread::Builder::new()
        .name(name)
        .stack_size(64 << 20)
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(body())
        })
        .unwrap();
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

// ---------------------------------------------------------------------------------------------
// The base documents
// ---------------------------------------------------------------------------------------------

fn base(id: i64) -> Thing {
    Thing {
        id,
        text: "plain".into(),
        maybe: Some("plain".into()),
        small: 1,
        big: 1,
        real: 1.5,
        flag: false,
        tags: vec!["seed".into()],
        part: Part {
            label: "p".into(),
            qty: 1,
            extra: Bson::Null,
        },
        parts: vec![Part {
            label: "q".into(),
            qty: 1,
            extra: Bson::Null,
        }],
        doc: doc! { "k": "v" },
        any: Bson::String("plain".into()),
        bag: vec![Bson::String("seed".into())],
        map: HashMap::from([("k".to_owned(), "v".to_owned())]),
        when: DateTime::from_millis(1_000),
        hits: 0,
    }
}

fn raw(thing: &Thing) -> Document {
    bson::serialize_to_document(thing).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Updates
// ---------------------------------------------------------------------------------------------

type Change = Box<dyn Fn(&mut Document)>;

/// What an update row must come to.
enum UWant {
    /// Stored: the document as `Change` makes it of the one before.
    Stored(Change),
    /// Refused before anything is sent.
    Refused,
    /// Sent and refused by the server with a typed error, nothing written: an overflow, which
    /// depends on the stored value (an `i64` past its range; an `i32` widened to an `Int64`,
    /// which the model's validator refuses).
    ServerRefused,
    /// `$currentDate`: the server's time.
    Now,
}

struct URow {
    op: &'static str,
    input: String,
    /// The stored document 1 before the update, from the base.
    prepare: Change,
    update: Box<dyn Fn() -> Update<Thing>>,
    want: UWant,
}

fn no_prep() -> Change {
    Box::new(|_| {})
}

/// A `$set` row: stored as serde writes it, or refused by the documented rule.
fn set_row(
    input: String,
    path: &'static str,
    value: Bson,
    update: impl Fn() -> Update<Thing> + 'static,
) -> URow {
    let want = if storable(&value, 0) {
        UWant::Stored(Box::new(move |d| set_path(d, path, value.clone())))
    } else {
        UWant::Refused
    };
    URow {
        op: "set",
        input: format!("{path} = {input}"),
        prepare: no_prep(),
        update: Box::new(update),
        want,
    }
}

fn set_rows() -> Vec<URow> {
    let mut rows = Vec::new();
    for s in strings() {
        let v = Bson::String(s.clone());
        let s2 = s.clone();
        rows.push(set_row(label(&v), "text", v.clone(), move || {
            Update::new().set(Thing::FIELDS.text, &s2)
        }));
        let s2 = s.clone();
        rows.push(set_row(label(&v), "maybe", v.clone(), move || {
            Update::new().set(Thing::FIELDS.maybe, s2.clone())
        }));
        let s2 = s.clone();
        rows.push(set_row(label(&v), "part.label", v.clone(), move || {
            Update::new().set(Thing::FIELDS.part.then(|p| p.label), &s2)
        }));
        let s2 = s.clone();
        rows.push(set_row(
            label(&v),
            "tags",
            Bson::Array(vec![v.clone(), v.clone()]),
            move || Update::new().set(Thing::FIELDS.tags, [s2.clone(), s2.clone()]),
        ));
    }
    rows.push(set_row("None".into(), "maybe", Bson::Null, || {
        Update::new().set(Thing::FIELDS.maybe, None)
    }));
    rows.push(set_row("[]".into(), "tags", Bson::Array(vec![]), || {
        Update::new().set(Thing::FIELDS.tags, Vec::<String>::new())
    }));
    for n in i32s() {
        rows.push(set_row(n.to_string(), "small", Bson::Int32(n), move || {
            Update::new().set(Thing::FIELDS.small, n)
        }));
        rows.push(set_row(
            n.to_string(),
            "part.qty",
            Bson::Int32(n),
            move || Update::new().set(Thing::FIELDS.part.then(|p| p.qty), n),
        ));
    }
    for n in i64s() {
        rows.push(set_row(n.to_string(), "big", Bson::Int64(n), move || {
            Update::new().set(Thing::FIELDS.big, n)
        }));
    }
    for x in f64s() {
        rows.push(set_row(
            format!("{x:?}"),
            "real",
            Bson::Double(x),
            move || Update::new().set(Thing::FIELDS.real, x),
        ));
    }
    for b in [true, false] {
        rows.push(set_row(
            b.to_string(),
            "flag",
            Bson::Boolean(b),
            move || Update::new().set(Thing::FIELDS.flag, b),
        ));
    }
    for t in dates() {
        rows.push(set_row(
            t.to_string(),
            "when",
            Bson::DateTime(t),
            move || Update::new().set(Thing::FIELDS.when, t),
        ));
    }
    for d in documents() {
        let v = Bson::Document(d.clone());
        rows.push(set_row(label(&v), "doc", v, move || {
            Update::new().set(Thing::FIELDS.doc, d.clone())
        }));
    }
    for m in maps() {
        let v = ser(&m);
        rows.push(set_row(label(&v), "map", v, move || {
            Update::new().set(Thing::FIELDS.map, m.clone())
        }));
    }
    for b in bsons() {
        let b2 = b.clone();
        rows.push(set_row(label(&b), "any", b.clone(), move || {
            Update::new().set(Thing::FIELDS.any, b2.clone())
        }));
        let b2 = b.clone();
        rows.push(set_row(label(&b), "part.extra", b.clone(), move || {
            Update::new().set(Thing::FIELDS.part.then(|p| p.extra), b2.clone())
        }));
        let b2 = b.clone();
        rows.push(set_row(
            label(&b),
            "bag",
            Bson::Array(vec![b.clone()]),
            move || Update::new().set(Thing::FIELDS.bag, vec![b2.clone()]),
        ));
    }
    for p in parts_of_strings().into_iter().chain(parts_of_bsons()) {
        let v = ser(&p);
        let p2 = p.clone();
        rows.push(set_row(label(&v), "part", v.clone(), move || {
            Update::new().set(Thing::FIELDS.part, p2.clone())
        }));
        rows.push(set_row(
            label(&v),
            "parts",
            Bson::Array(vec![v.clone()]),
            move || Update::new().set(Thing::FIELDS.parts, vec![p.clone()]),
        ));
    }
    rows
}

/// `inc`, `mul`, `min` and `max` of each extreme on each number field (and a path to one),
/// from bases at the extremes too.
fn number_rows(validated: bool) -> Vec<URow> {
    let mut rows = Vec::new();
    let cases: Vec<(&'static str, Vec<Bson>, Vec<Bson>, bool)> = vec![
        (
            "small",
            vec![Bson::Int32(1), Bson::Int32(i32::MAX), Bson::Int32(i32::MIN)],
            i32s().into_iter().map(Bson::Int32).collect(),
            true,
        ),
        (
            "part.qty",
            vec![Bson::Int32(1), Bson::Int32(i32::MAX)],
            i32s().into_iter().map(Bson::Int32).collect(),
            true,
        ),
        (
            "big",
            vec![Bson::Int64(1), Bson::Int64(i64::MAX), Bson::Int64(i64::MIN)],
            i64s().into_iter().map(Bson::Int64).collect(),
            false,
        ),
        (
            "real",
            vec![
                Bson::Double(1.5),
                Bson::Double(f64::NAN),
                Bson::Double(f64::INFINITY),
            ],
            f64s().into_iter().map(Bson::Double).collect(),
            false,
        ),
    ];
    for op in ["$inc", "$mul", "$min", "$max"] {
        for (path, bases, bys, is_i32) in &cases {
            for start in bases {
                for by in bys {
                    let path: &'static str = path;
                    let start2 = start.clone();
                    let prepare: Change = Box::new(move |d| set_path(d, path, start2.clone()));
                    let want = match number_effect(op, start, by) {
                        Err(()) => UWant::ServerRefused,
                        Ok(Bson::Int64(_)) if *is_i32 && validated => UWant::ServerRefused,
                        Ok(v) => UWant::Stored(Box::new(move |d| set_path(d, path, v.clone()))),
                    };
                    let by2 = by.clone();
                    let update: Box<dyn Fn() -> Update<Thing>> =
                        Box::new(move || number_update(op, path, &by2));
                    rows.push(URow {
                        op: &op[1..],
                        input: format!("{path} (stored {}) by {}", label(start), label(by)),
                        prepare,
                        update,
                        want,
                    });
                }
            }
        }
    }
    rows
}

fn number_update(op: &str, path: &str, by: &Bson) -> Update<Thing> {
    let f = Thing::FIELDS;
    let u = Update::new();
    match (path, by) {
        ("small", Bson::Int32(n)) => match op {
            "$inc" => u.inc(f.small, *n),
            "$mul" => u.mul(f.small, *n),
            "$min" => u.min(f.small, *n),
            _ => u.max(f.small, *n),
        },
        ("part.qty", Bson::Int32(n)) => {
            let p = f.part.then(|p| p.qty);
            match op {
                "$inc" => u.inc(p, *n),
                "$mul" => u.mul(p, *n),
                "$min" => u.min(p, *n),
                _ => u.max(p, *n),
            }
        }
        ("big", Bson::Int64(n)) => match op {
            "$inc" => u.inc(f.big, *n),
            "$mul" => u.mul(f.big, *n),
            "$min" => u.min(f.big, *n),
            _ => u.max(f.big, *n),
        },
        ("real", Bson::Double(x)) => match op {
            "$inc" => u.inc(f.real, *x),
            "$mul" => u.mul(f.real, *x),
            "$min" => u.min(f.real, *x),
            _ => u.max(f.real, *x),
        },
        _ => unreachable!(),
    }
}

/// An array operator's item, on one of the three `Vec` fields.
#[derive(Clone)]
enum Item {
    Tag(String),
    Part(Part),
    Bag(Bson),
}

impl Item {
    fn path(&self) -> &'static str {
        match self {
            Item::Tag(_) => "tags",
            Item::Part(_) => "parts",
            Item::Bag(_) => "bag",
        }
    }

    fn bson(&self) -> Bson {
        match self {
            Item::Tag(s) => Bson::String(s.clone()),
            Item::Part(p) => ser(p),
            Item::Bag(b) => b.clone(),
        }
    }

    /// A near miss of the item: what a pattern or an operator reading of it would match, or a
    /// document with the same fields in another order.
    fn decoy(&self) -> Bson {
        let plain = || match self {
            Item::Part(p) => ser(&Part {
                label: format!("{}~", p.label),
                ..p.clone()
            }),
            _ => Bson::String("decoy".into()),
        };
        let decoy = match self.bson() {
            Bson::String(s) => Bson::String(format!("{s}~")),
            Bson::RegularExpression(_) => Bson::String("abc".into()),
            Bson::Document(d) if d.len() >= 2 => {
                let mut r: Vec<(String, Bson)> = d.into_iter().collect();
                r.reverse();
                Bson::Document(r.into_iter().collect())
            }
            Bson::Int32(n) => Bson::Int64(i64::from(n)),
            _ => plain(),
        };
        if storable(&decoy, 1) {
            decoy
        } else {
            match self {
                Item::Part(p) => ser(&Part {
                    extra: Bson::Null,
                    ..p.clone()
                }),
                _ => plain(),
            }
        }
    }

    fn all() -> Vec<Item> {
        strings()
            .into_iter()
            .map(Item::Tag)
            .chain(
                parts_of_strings()
                    .into_iter()
                    .chain(parts_of_bsons())
                    .map(Item::Part),
            )
            .chain(bsons().into_iter().map(Item::Bag))
            .collect()
    }
}

fn item_update(op: &str, item: &Item) -> Update<Thing> {
    let f = Thing::FIELDS;
    let u = Update::new();
    match (op, item.clone()) {
        ("push", Item::Tag(s)) => u.push(f.tags, s),
        ("push", Item::Part(p)) => u.push(f.parts, p),
        ("push", Item::Bag(b)) => u.push(f.bag, b),
        ("add_to_set", Item::Tag(s)) => u.add_to_set(f.tags, s),
        ("add_to_set", Item::Part(p)) => u.add_to_set(f.parts, p),
        ("add_to_set", Item::Bag(b)) => u.add_to_set(f.bag, b),
        ("pull", Item::Tag(s)) => u.pull(f.tags, s),
        ("pull", Item::Part(p)) => u.pull(f.parts, p),
        ("pull", Item::Bag(b)) => u.pull(f.bag, b),
        _ => unreachable!(),
    }
}

fn items_update(items: &[Item]) -> Update<Thing> {
    let f = Thing::FIELDS;
    let u = Update::new();
    match items.first() {
        Some(Item::Tag(_)) => u.push_each(
            f.tags,
            items.iter().map(|i| match i {
                Item::Tag(s) => s.clone(),
                _ => unreachable!(),
            }),
        ),
        Some(Item::Part(_)) => u.push_each(
            f.parts,
            items.iter().map(|i| match i {
                Item::Part(p) => p.clone(),
                _ => unreachable!(),
            }),
        ),
        _ => u.push_each(
            f.bag,
            items.iter().map(|i| match i {
                Item::Bag(b) => b.clone(),
                _ => unreachable!(),
            }),
        ),
    }
}

/// `push`, `add_to_set` (the item absent, then present) and `pull` (the item there twice,
/// beside a near miss) of every item; `push_each` of each item after a plain one, and of every
/// item a field takes at once.
fn array_rows() -> Vec<URow> {
    let mut rows = Vec::new();
    let arr = |path: &'static str, items: Vec<Bson>| -> Change {
        Box::new(move |d| set_path(d, path, Bson::Array(items.clone())))
    };
    for item in Item::all() {
        let v = item.bson();
        let path = item.path();
        let ok = storable(&v, 0);
        let decoy = item.decoy();
        let input = format!("{path} {}", label(&v));
        // push
        {
            let (v2, it) = (v.clone(), item.clone());
            rows.push(URow {
                op: "push",
                input: input.clone(),
                prepare: arr(path, vec![decoy.clone()]),
                update: Box::new(move || item_update("push", &it)),
                want: if ok {
                    UWant::Stored(Box::new(move |d| {
                        let mut a = array_at(d, path);
                        a.push(v2.clone());
                        set_path(d, path, Bson::Array(a));
                    }))
                } else {
                    UWant::Refused
                },
            });
        }
        // add_to_set, absent: appended unless the near miss equals it (a number).
        {
            let (v2, it) = (v.clone(), item.clone());
            rows.push(URow {
                op: "add_to_set",
                input: format!("{input} (absent)"),
                prepare: arr(path, vec![decoy.clone()]),
                update: Box::new(move || item_update("add_to_set", &it)),
                want: if ok {
                    UWant::Stored(Box::new(move |d| {
                        let mut a = array_at(d, path);
                        if !a.iter().any(|x| mongo_eq(x, &v2)) {
                            a.push(v2.clone());
                        }
                        set_path(d, path, Bson::Array(a));
                    }))
                } else {
                    UWant::Refused
                },
            });
        }
        if ok {
            let it = item.clone();
            rows.push(URow {
                op: "add_to_set",
                input: format!("{input} (present)"),
                prepare: arr(path, vec![decoy.clone(), v.clone()]),
                update: Box::new(move || item_update("add_to_set", &it)),
                want: UWant::Stored(Box::new(|_| {})),
            });
        }
        // pull: every item equal to it goes, the near miss stays (unless it is equal).
        {
            let (v2, it) = (v.clone(), item.clone());
            let prepare = if ok {
                arr(path, vec![v.clone(), decoy.clone(), v.clone()])
            } else {
                arr(path, vec![decoy.clone()])
            };
            rows.push(URow {
                op: "pull",
                input: input.clone(),
                prepare,
                update: Box::new(move || item_update("pull", &it)),
                want: if ok {
                    UWant::Stored(Box::new(move |d| {
                        let mut a = array_at(d, path);
                        a.retain(|x| !mongo_eq(x, &v2));
                        set_path(d, path, Bson::Array(a));
                    }))
                } else {
                    UWant::Refused
                },
            });
        }
        // push_each of a plain item and this one: all or nothing.
        {
            let plain = match &item {
                Item::Tag(_) => Item::Tag("plain".into()),
                Item::Part(_) => Item::Part(parts_of_strings()[0].clone()),
                Item::Bag(_) => Item::Bag(Bson::String("plain".into())),
            };
            let (pv, v2) = (plain.bson(), v.clone());
            let items = vec![plain, item.clone()];
            rows.push(URow {
                op: "push_each",
                input: format!("{path} [plain, {}]", label(&v)),
                prepare: arr(path, vec![]),
                update: Box::new(move || items_update(&items)),
                want: if ok {
                    UWant::Stored(Box::new(move |d| {
                        set_path(d, path, Bson::Array(vec![pv.clone(), v2.clone()]));
                    }))
                } else {
                    UWant::Refused
                },
            });
        }
    }
    // push_each of every storable item a field takes, at once.
    for path in ["tags", "parts", "bag"] {
        let items: Vec<Item> = Item::all()
            .into_iter()
            .filter(|i| i.path() == path && storable(&i.bson(), 0))
            .collect();
        let values: Vec<Bson> = items.iter().map(Item::bson).collect();
        rows.push(URow {
            op: "push_each",
            input: format!("{path} [every storable item: {}]", values.len()),
            prepare: no_prep(),
            update: Box::new(move || items_update(&items)),
            want: UWant::Stored(Box::new(move |d| {
                let mut a = array_at(d, path);
                a.extend(values.iter().cloned());
                set_path(d, path, Bson::Array(a));
            })),
        });
    }
    rows.push(URow {
        op: "push_each",
        input: "tags []".into(),
        prepare: no_prep(),
        update: Box::new(|| Update::new().push_each(Thing::FIELDS.tags, Vec::<String>::new())),
        want: UWant::Stored(Box::new(|_| {})),
    });
    rows
}

async fn judge_update(db: &TestDb, ledger: &mut Ledger, row: &URow, many: bool, validated: bool) {
    let op = format!("{}{}", row.op, if many { " (update_many)" } else { "" });
    ledger.row(&op);
    let things = Thing::collection(db);
    let mut one = raw(&base(1));
    (row.prepare)(&mut one);
    let before = vec![one, raw(&base(2))];
    reset(db, "qv_things", &before).await;
    db.take_commands();
    let t0 = DateTime::now();
    let update = (row.update)();
    let outcome = if many {
        match run(things.update_many(Filter::eq(Thing::FIELDS.id, 1), update)).await {
            Outcome::Ok(u) if u.matched != 1 => {
                ledger.fail(&op, &row.input, format!("matched {} documents", u.matched));
                Outcome::Ok(())
            }
            Outcome::Ok(_) => Outcome::Ok(()),
            Outcome::Err(e) => Outcome::Err(e),
            Outcome::Panicked(p) => Outcome::Panicked(p),
            Outcome::TimedOut => Outcome::TimedOut,
        }
    } else {
        match run(things.update(1, update)).await {
            Outcome::Ok(_) => Outcome::Ok(()),
            Outcome::Err(e) => Outcome::Err(e),
            Outcome::Panicked(p) => Outcome::Panicked(p),
            Outcome::TimedOut => Outcome::TimedOut,
        }
    };
    let t1 = DateTime::now();
    let sent = writes(db);
    let mut after = stored(db, "qv_things").await;
    match (&row.want, outcome) {
        (UWant::Stored(change), Outcome::Ok(())) => {
            let mut expected = before.clone();
            change(&mut expected[0]);
            if let Some(d) = diff(&expected, &after) {
                ledger.fail(&op, &row.input, format!("not stored as given: {d}"));
            }
            if let Err(e) = things.get(1).await {
                ledger.fail(&op, &row.input, format!("stored, then unreadable: {e}"));
            }
            ledger.outcome("stored");
        }
        (UWant::Now, Outcome::Ok(())) => {
            let when = after[0].get("when").cloned();
            match when {
                Some(Bson::DateTime(t))
                    if t.timestamp_millis() >= t0.timestamp_millis() - 1_000
                        && t.timestamp_millis() <= t1.timestamp_millis() + 1_000 =>
                {
                    after[0].insert("when", before[0].get("when").unwrap().clone());
                    if let Some(d) = diff(&before, &after) {
                        ledger.fail(&op, &row.input, format!("more than `when` changed: {d}"));
                    }
                    ledger.outcome("stored");
                }
                other => ledger.fail(&op, &row.input, format!("`when` is {other:?}")),
            }
        }
        (UWant::Refused, Outcome::Err(e)) if refusal(&e) => {
            if !sent.is_empty() {
                ledger.fail(
                    &op,
                    &row.input,
                    format!("refused ({}) after sending {sent:?}", short(&e)),
                );
            }
            if let Some(d) = diff(&before, &after) {
                ledger.fail(&op, &row.input, format!("refused, yet written: {d}"));
            }
            ledger.outcome("refused before sending");
        }
        (UWant::ServerRefused, Outcome::Err(e))
            if refusal(&e) || (validated && matches!(e, Error::ValidationFailed { .. })) =>
        {
            if let Some(d) = diff(&before, &after) {
                ledger.fail(&op, &row.input, format!("refused, yet written: {d}"));
            }
            ledger.outcome(&format!("overflow refused by the server ({})", variant(&e)));
        }
        (_, Outcome::Ok(())) => {
            let d = diff(&before, &after).unwrap_or_else(|| "nothing changed".into());
            ledger.fail(
                &op,
                &row.input,
                format!("should have been refused, but Ok: {d}"),
            );
        }
        (_, Outcome::Err(e)) => {
            let d = diff(&before, &after).unwrap_or_else(|| "nothing written".into());
            ledger.fail(
                &op,
                &row.input,
                format!("{} (sent {sent:?}; {d})", short(&e)),
            );
        }
        (_, Outcome::Panicked(p)) => ledger.fail(&op, &row.input, format!("panicked: {p}")),
        (_, Outcome::TimedOut) => ledger.fail(&op, &row.input, "timed out"),
    }
}

#[test]
fn typed_updates_store_each_value_literally_or_refuse_it() {
    big_stack(|| async {
        let db = test_db("query_values_updates").await;
        let validated = !db.validated().is_empty();
        let mut rows = set_rows();
        rows.push(URow {
            op: "unset",
            input: "maybe".into(),
            prepare: no_prep(),
            update: Box::new(|| Update::new().unset(Thing::FIELDS.maybe)),
            want: UWant::Stored(Box::new(|d| {
                d.remove("maybe");
            })),
        });
        rows.push(URow {
            op: "current_date",
            input: "when".into(),
            prepare: no_prep(),
            update: Box::new(|| Update::new().current_date(Thing::FIELDS.when)),
            want: UWant::Now,
        });
        rows.extend(number_rows(validated));
        rows.extend(array_rows());
        let mut ledger = Ledger::new("updates");
        let mut verbs = 0;
        // `update_many` sends the update document `update` sends (`query_commands`): it runs on
        // every fourth row.
        for (i, row) in rows.iter().enumerate() {
            for many in [false, true] {
                if !many || i % 4 == 0 {
                    judge_update(&db, &mut ledger, row, many, validated).await;
                    verbs += 1;
                }
            }
        }
        assert_eq!(rows.len(), 1330, "update rows");
        ledger.finish(verbs);
    });
}

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

type Pred = Box<dyn Fn(&Document) -> bool>;

/// What a filter row must come to.
enum FWant {
    /// Matches exactly the stored documents the predicate holds for.
    Match(Pred),
    /// Refused before anything is sent.
    Refused,
    /// Either: what a row of a defect must come to once fixed, however it is fixed.
    Either(Pred),
}

struct FRow {
    op: &'static str,
    input: String,
    filter: Box<dyn Fn() -> Filter<Thing>>,
    want: FWant,
}

fn eq_p(path: &'static str, q: Bson) -> Pred {
    Box::new(move |d| eq_match(d, path, &q))
}

fn ne_p(path: &'static str, q: Bson) -> Pred {
    Box::new(move |d| !eq_match(d, path, &q))
}

fn frow(
    op: &'static str,
    input: String,
    filter: impl Fn() -> Filter<Thing> + 'static,
    want: Pred,
) -> FRow {
    FRow {
        op,
        input,
        filter: Box::new(filter),
        want: FWant::Match(want),
    }
}

/// The storable values of each kind, for the seeded documents.
fn storable_bsons() -> Vec<Bson> {
    bsons().into_iter().filter(|b| storable(b, 1)).collect()
}

/// The collection the filters run on: every storable value in every field, so that each
/// literal is held by some documents and not by others (near misses beside it: `"abc"` for a
/// regex, numbers above 1 for `{$gt: 1}`, documents with the same fields in another order).
fn seed_things() -> Vec<Document> {
    let s = strings();
    let sb = storable_bsons();
    let docs: Vec<Document> = documents()
        .into_iter()
        .filter(|d| storable(&Bson::Document(d.clone()), 1))
        .collect();
    let maps: Vec<HashMap<String, String>> = maps()
        .into_iter()
        .filter(|m| storable(&ser(m), 1))
        .collect();
    let (i32s, i64s, f64s, dates) = (i32s(), i64s(), f64s(), dates());
    let n = sb.len();
    let mut out = Vec::new();
    for i in 0..n {
        // The 100 000-character string once, in `text`, a short near miss elsewhere: every
        // command of the table reads the whole collection, so each copy costs every row.
        let at = |k: usize| {
            let v = s[(i + k) % s.len()].clone();
            if v.len() > 1000 && (i >= s.len() || k > 0) {
                "x~".to_owned()
            } else {
                v
            }
        };
        let near = |k: usize| {
            let v = at(k);
            if v.len() > 1000 {
                "x~".to_owned()
            } else {
                v
            }
        };
        // A `Bson` value as `sb` has it, except the long string (kept in `any` only).
        let sbn = |j: usize| match &sb[j % n] {
            Bson::String(v) if v.len() > 1000 => Bson::String("x~".to_owned()),
            other => other.clone(),
        };
        let thing = Thing {
            id: i64::try_from(i).unwrap() + 1,
            text: at(0),
            maybe: match i % (s.len() + 1) {
                0 => None,
                k if s[k - 1].len() > 1000 => Some("x~".to_owned()),
                k => Some(s[k - 1].clone()),
            },
            small: i32s[i % i32s.len()],
            big: i64s[i % i64s.len()],
            real: f64s[i % f64s.len()],
            flag: i % 2 == 0,
            tags: if i % 9 == 4 {
                Vec::new()
            } else {
                vec![near(0), at(3)]
            },
            part: Part {
                label: near(0),
                qty: i32s[i % i32s.len()],
                extra: sbn(i),
            },
            parts: vec![
                Part {
                    label: at(1),
                    qty: i32::try_from(i).unwrap(),
                    extra: sbn(i + 7),
                },
                Part {
                    label: "q".into(),
                    qty: -1,
                    extra: sbn(i + 3),
                },
            ],
            doc: docs[i % docs.len()].clone(),
            any: sb[i].clone(),
            bag: vec![sbn(i), sbn(i + 5)],
            map: maps[i % maps.len()].clone(),
            when: dates[i % dates.len()],
            hits: 0,
        };
        out.push(raw(&thing));
    }
    // A document whose optional field is missing rather than `null`.
    let mut missing = raw(&base(i64::try_from(n).unwrap() + 1));
    missing.remove("maybe");
    out.push(missing);
    out
}

fn in_want(values: &[Bson], pred: Pred) -> FWant {
    if values
        .iter()
        .any(|v| matches!(v, Bson::RegularExpression(_)))
    {
        FWant::Refused
    } else {
        FWant::Match(pred)
    }
}

/// `eq`, `ne`, `is_in` and `not_in` of `q` on `path`.
fn equality_rows(
    rows: &mut Vec<FRow>,
    path: &'static str,
    q: &Bson,
    make: impl Fn(&'static str) -> Filter<Thing> + Clone + 'static,
) {
    let input = format!("{path} {}", label(q));
    for op in ["eq", "ne", "is_in", "not_in"] {
        let m = make.clone();
        let want = match op {
            "eq" => FWant::Match(eq_p(path, q.clone())),
            "ne" => FWant::Match(ne_p(path, q.clone())),
            "is_in" => in_want(std::slice::from_ref(q), eq_p(path, q.clone())),
            _ => in_want(std::slice::from_ref(q), ne_p(path, q.clone())),
        };
        rows.push(FRow {
            op,
            input: input.clone(),
            filter: Box::new(move || m(op)),
            want,
        });
    }
}

/// `gt`, `gte`, `lt` and `lte` of the scalar `q` on `path`.
fn order_rows(
    rows: &mut Vec<FRow>,
    path: &'static str,
    q: &Bson,
    make: impl Fn(&'static str) -> Filter<Thing> + Clone + 'static,
) {
    for op in ["gt", "gte", "lt", "lte"] {
        let m = make.clone();
        let q2 = q.clone();
        let dollar: &'static str = match op {
            "gt" => "$gt",
            "gte" => "$gte",
            "lt" => "$lt",
            _ => "$lte",
        };
        rows.push(frow(
            op,
            format!("{path} {}", label(q)),
            move || m(op),
            Box::new(move |d| order_match(d, path, dollar, &q2)),
        ));
    }
}

/// A typed filter of operator `op` (`eq`, `ne`, `is_in`, `not_in`, `gt`, ...) of `v`.
macro_rules! typed {
    ($field:expr, $v:expr) => {{
        let v = $v;
        move |op: &'static str| {
            let field = $field;
            match op {
                "eq" => Filter::eq(field, v.clone()),
                "ne" => Filter::ne(field, v.clone()),
                "is_in" => Filter::is_in(field, [v.clone()]),
                "not_in" => Filter::not_in(field, [v.clone()]),
                "gt" => Filter::gt(field, v.clone()),
                "gte" => Filter::gte(field, v.clone()),
                "lt" => Filter::lt(field, v.clone()),
                _ => Filter::lte(field, v.clone()),
            }
        }
    }};
}

/// Whether `v` is a scalar the order operators compare (`$gt`, ...).
fn ordered(v: &Bson) -> bool {
    matches!(
        v,
        Bson::String(_)
            | Bson::Int32(_)
            | Bson::Int64(_)
            | Bson::Double(_)
            | Bson::Boolean(_)
            | Bson::DateTime(_)
            | Bson::Null
            | Bson::RegularExpression(_)
    )
}

fn filter_rows() -> Vec<FRow> {
    let f = Thing::FIELDS;
    let mut rows = Vec::new();
    for s in strings() {
        let q = Bson::String(s.clone());
        for (path, make) in [
            (
                "text",
                Box::new(typed!(Thing::FIELDS.text, s.clone()))
                    as Box<dyn Fn(&'static str) -> Filter<Thing>>,
            ),
            (
                "part.label",
                Box::new(typed!(Thing::FIELDS.part.then(|p| p.label), s.clone())),
            ),
            (
                "parts.label",
                Box::new(typed!(Thing::FIELDS.parts.then(|p| p.label), s.clone())),
            ),
        ] {
            let make = std::rc::Rc::new(make);
            let m = make.clone();
            equality_rows(&mut rows, path, &q, move |op| m(op));
            let m = make.clone();
            order_rows(&mut rows, path, &q, move |op| m(op));
        }
        equality_rows(
            &mut rows,
            "maybe",
            &q,
            typed!(Thing::FIELDS.maybe, Some(s.clone())),
        );
        let tags = Bson::Array(vec![q.clone()]);
        equality_rows(
            &mut rows,
            "tags",
            &tags,
            typed!(Thing::FIELDS.tags, vec![s.clone()]),
        );
    }
    equality_rows(
        &mut rows,
        "maybe",
        &Bson::Null,
        typed!(Thing::FIELDS.maybe, None::<String>),
    );
    for n in i32s() {
        let q = Bson::Int32(n);
        equality_rows(&mut rows, "small", &q, typed!(Thing::FIELDS.small, n));
        order_rows(&mut rows, "small", &q, typed!(Thing::FIELDS.small, n));
        order_rows(
            &mut rows,
            "parts.qty",
            &q,
            typed!(Thing::FIELDS.parts.then(|p| p.qty), n),
        );
    }
    for n in i64s() {
        let q = Bson::Int64(n);
        equality_rows(&mut rows, "big", &q, typed!(Thing::FIELDS.big, n));
        order_rows(&mut rows, "big", &q, typed!(Thing::FIELDS.big, n));
    }
    for x in f64s() {
        let q = Bson::Double(x);
        equality_rows(&mut rows, "real", &q, typed!(Thing::FIELDS.real, x));
        order_rows(&mut rows, "real", &q, typed!(Thing::FIELDS.real, x));
    }
    for b in [true, false] {
        equality_rows(
            &mut rows,
            "flag",
            &Bson::Boolean(b),
            typed!(Thing::FIELDS.flag, b),
        );
    }
    for t in dates() {
        let q = Bson::DateTime(t);
        equality_rows(&mut rows, "when", &q, typed!(Thing::FIELDS.when, t));
        order_rows(&mut rows, "when", &q, typed!(Thing::FIELDS.when, t));
    }
    for d in documents() {
        let q = Bson::Document(d.clone());
        equality_rows(&mut rows, "doc", &q, typed!(Thing::FIELDS.doc, d.clone()));
    }
    for m in maps() {
        let q = ser(&m);
        equality_rows(&mut rows, "map", &q, typed!(Thing::FIELDS.map, m.clone()));
    }
    for b in bsons() {
        equality_rows(&mut rows, "any", &b, typed!(Thing::FIELDS.any, b.clone()));
        equality_rows(
            &mut rows,
            "parts.extra",
            &b,
            typed!(Thing::FIELDS.parts.then(|p| p.extra), b.clone()),
        );
        let bag = Bson::Array(vec![b.clone()]);
        equality_rows(
            &mut rows,
            "bag",
            &bag,
            typed!(Thing::FIELDS.bag, vec![b.clone()]),
        );
        if ordered(&b) {
            order_rows(&mut rows, "any", &b, typed!(Thing::FIELDS.any, b.clone()));
        }
    }
    for p in parts_of_strings().into_iter().chain(parts_of_bsons()) {
        let q = ser(&p);
        equality_rows(&mut rows, "part", &q, typed!(Thing::FIELDS.part, p.clone()));
    }
    // Several values in one list.
    let all_strings = strings();
    let qs: Vec<Bson> = all_strings.iter().cloned().map(Bson::String).collect();
    let (q2, s2) = (qs.clone(), all_strings.clone());
    rows.push(frow(
        "is_in",
        "text [every string]".into(),
        move || Filter::is_in(Thing::FIELDS.text, s2.clone()),
        Box::new(move |d| q2.iter().any(|q| eq_match(d, "text", q))),
    ));
    let (q2, s2) = (qs.clone(), all_strings.clone());
    rows.push(frow(
        "not_in",
        "text [every string]".into(),
        move || Filter::not_in(Thing::FIELDS.text, s2.clone()),
        Box::new(move |d| !q2.iter().any(|q| eq_match(d, "text", q))),
    ));
    let sb = storable_bsons();
    for op in ["is_in", "not_in"] {
        let sb2 = sb.clone();
        rows.push(FRow {
            op,
            input: "any [every storable value]".into(),
            filter: Box::new(move || {
                if op == "is_in" {
                    Filter::is_in(Thing::FIELDS.any, sb2.clone())
                } else {
                    Filter::not_in(Thing::FIELDS.any, sb2.clone())
                }
            }),
            // Regexes among them: refused.
            want: FWant::Refused,
        });
    }

    // exists
    for (path, present) in [
        ("maybe", true),
        ("maybe", false),
        ("any", true),
        ("any", false),
        ("part.label", true),
        ("doc", true),
    ] {
        let filter: Box<dyn Fn() -> Filter<Thing>> = match path {
            "maybe" => Box::new(move || Filter::exists(Thing::FIELDS.maybe, present)),
            "any" => Box::new(move || Filter::exists(Thing::FIELDS.any, present)),
            "part.label" => {
                Box::new(move || Filter::exists(Thing::FIELDS.part.then(|p| p.label), present))
            }
            _ => Box::new(move || Filter::exists(Thing::FIELDS.doc, present)),
        };
        rows.push(FRow {
            op: "exists",
            input: format!("{path} {present}"),
            filter,
            want: FWant::Match(Box::new(move |d| get_path(d, path).is_some() == present)),
        });
    }

    // elem_match over the items' own fields.
    let item_match = |inner: Pred| -> Pred {
        Box::new(move |d| match d.get("parts") {
            Some(Bson::Array(items)) => items
                .iter()
                .any(|i| matches!(i, Bson::Document(x) if inner(x))),
            _ => false,
        })
    };
    for s in strings() {
        let q = Bson::String(s.clone());
        let s2 = s.clone();
        rows.push(frow(
            "elem_match",
            format!("label = {}", label(&q)),
            move || Filter::elem_match(Thing::FIELDS.parts, |p| Filter::eq(p.label, &s2)),
            item_match(eq_p("label", q.clone())),
        ));
        let s2 = s.clone();
        let q2 = q.clone();
        rows.push(frow(
            "elem_match",
            format!("label = {} and qty >= 0", label(&q)),
            move || {
                Filter::elem_match(Thing::FIELDS.parts, |p| {
                    Filter::eq(p.label, &s2).and(Filter::gte(p.qty, 0))
                })
            },
            item_match(Box::new(move |x| {
                eq_match(x, "label", &q2) && order_match(x, "qty", "$gte", &Bson::Int32(0))
            })),
        ));
        let s2 = s.clone();
        rows.push(frow(
            "elem_match",
            format!("label != {}", label(&q)),
            move || Filter::elem_match(Thing::FIELDS.parts, |p| Filter::ne(p.label, &s2)),
            item_match(ne_p("label", q.clone())),
        ));
    }
    for b in bsons() {
        let b2 = b.clone();
        rows.push(frow(
            "elem_match",
            format!("extra = {}", label(&b)),
            move || Filter::elem_match(Thing::FIELDS.parts, |p| Filter::eq(p.extra, b2.clone())),
            item_match(eq_p("extra", b.clone())),
        ));
        let b2 = b.clone();
        rows.push(FRow {
            op: "elem_match",
            input: format!("extra in [{}]", label(&b)),
            filter: Box::new(move || {
                Filter::elem_match(Thing::FIELDS.parts, |p| {
                    Filter::is_in(p.extra, [b2.clone()])
                })
            }),
            want: in_want(
                std::slice::from_ref(&b),
                item_match(eq_p("extra", b.clone())),
            ),
        });
    }

    // all
    let all_p = |path: &'static str, qs: Vec<Bson>| -> FWant {
        let q2 = qs.clone();
        in_want(
            &qs,
            Box::new(move |d| q2.iter().all(|q| eq_match(d, path, q))),
        )
    };
    for (i, s) in strings().iter().enumerate() {
        let next = strings()[(i + 3) % strings().len()].clone();
        let q = Bson::String(s.clone());
        let s2 = s.clone();
        rows.push(FRow {
            op: "all",
            input: format!("tags [{}]", label(&q)),
            filter: Box::new(move || Filter::all(Thing::FIELDS.tags, [s2.clone()])),
            want: all_p("tags", vec![q.clone()]),
        });
        let (s2, n2) = (s.clone(), next.clone());
        rows.push(FRow {
            op: "all",
            input: format!(
                "tags [{}, {}]",
                label(&q),
                label(&Bson::String(next.clone()))
            ),
            filter: Box::new(move || Filter::all(Thing::FIELDS.tags, [s2.clone(), n2.clone()])),
            want: all_p("tags", vec![q.clone(), Bson::String(next)]),
        });
    }
    for b in bsons() {
        let b2 = b.clone();
        rows.push(FRow {
            op: "all",
            input: format!("bag [{}]", label(&b)),
            filter: Box::new(move || Filter::all(Thing::FIELDS.bag, [b2.clone()])),
            want: all_p("bag", vec![b.clone()]),
        });
    }
    for p in parts_of_strings().into_iter().chain(parts_of_bsons()) {
        let q = ser(&p);
        rows.push(FRow {
            op: "all",
            input: format!("parts [{}]", label(&q)),
            filter: Box::new(move || Filter::all(Thing::FIELDS.parts, [p.clone()])),
            want: all_p("parts", vec![q.clone()]),
        });
    }

    // size
    for n in [0_u32, 1, 2, 3, u32::MAX] {
        for path in ["tags", "bag", "parts"] {
            let filter: Box<dyn Fn() -> Filter<Thing>> = match path {
                "tags" => Box::new(move || Filter::size(Thing::FIELDS.tags, n)),
                "bag" => Box::new(move || Filter::size(Thing::FIELDS.bag, n)),
                _ => Box::new(move || Filter::size(Thing::FIELDS.parts, n)),
            };
            rows.push(FRow {
                op: "size",
                input: format!("{path} {n}"),
                filter,
                want: FWant::Match(Box::new(move |d| {
                    matches!(d.get(path), Some(Bson::Array(a)) if a.len() as u64 == u64::from(n))
                })),
            });
        }
    }

    // and / or / not, of literal conditions.
    for s in strings() {
        let q = Bson::String(s.clone());
        let l = label(&q);
        let (s2, a, b) = (
            s.clone(),
            eq_p("text", q.clone()),
            eq_p("part.label", q.clone()),
        );
        rows.push(frow(
            "and",
            format!("text = {l} and part.label = {l}"),
            move || Filter::eq(f.text, &s2).and(Filter::eq(f.part.then(|p| p.label), &s2)),
            Box::new(move |d| a(d) && b(d)),
        ));
        let (s2, a, b) = (s.clone(), eq_p("text", q.clone()), eq_p("maybe", q.clone()));
        rows.push(frow(
            "or",
            format!("text = {l} or maybe = {l}"),
            move || Filter::eq(f.text, &s2).or(Filter::eq(f.maybe, s2.clone())),
            Box::new(move |d| a(d) || b(d)),
        ));
        let (s2, a) = (s.clone(), eq_p("text", q.clone()));
        rows.push(frow(
            "not",
            format!("!(text = {l})"),
            move || !Filter::eq(f.text, &s2),
            Box::new(move |d| !a(d)),
        ));
        let (s2, a, b) = (s.clone(), eq_p("text", q.clone()), eq_p("any", q.clone()));
        rows.push(frow(
            "none_of",
            format!("none of text = {l}, any = {l}"),
            move || {
                Filter::none_of([
                    Filter::eq(f.text, &s2),
                    Filter::eq(f.any, Bson::String(s2.clone())),
                ])
            },
            Box::new(move |d| !a(d) && !b(d)),
        ));
        let (s2, b) = (s.clone(), eq_p("parts.label", q.clone()));
        rows.push(frow(
            "and_all",
            format!("text exists, parts.label = {l}, tags size >= 0"),
            move || {
                Filter::and_all([
                    Filter::exists(f.text, true),
                    Filter::eq(f.parts.then(|p| p.label), &s2),
                    Filter::default(),
                ])
            },
            Box::new(move |d| b(d)),
        ));
        let (s2, a, b) = (s.clone(), eq_p("tags", q.clone()), eq_p("map.k", q.clone()));
        rows.push(frow(
            "or_any",
            format!("tags has {l}, or parts.label = {l}"),
            move || {
                Filter::or_any([
                    Filter::all(f.tags, [s2.clone()]),
                    Filter::eq(f.parts.then(|p| p.label), &s2),
                ])
            },
            {
                let c = eq_p("parts.label", q.clone());
                let _ = b;
                Box::new(move |d| a(d) || c(d))
            },
        ));
    }
    for b in bsons() {
        let (b2, a) = (b.clone(), eq_p("any", b.clone()));
        rows.push(frow(
            "not",
            format!("!(any = {})", label(&b)),
            move || !Filter::eq(f.any, b2.clone()),
            Box::new(move |d| !a(d)),
        ));
        let (b2, a, c) = (b.clone(), eq_p("any", b.clone()), eq_p("bag", b.clone()));
        rows.push(frow(
            "or",
            format!("any = {0} or bag has {0}", label(&b)),
            move || Filter::eq(f.any, b2.clone()).or(Filter::all(f.bag, [b2.clone()])),
            Box::new(move |d| a(d) || c(d)),
        ));
        if let FWant::Match(_) = rows.last().map(|r| &r.want).unwrap() {
            if matches!(b, Bson::RegularExpression(_)) {
                rows.last_mut().unwrap().want = FWant::Refused;
            }
        }
    }
    // A refused condition anywhere refuses the whole filter.
    rows.push(FRow {
        op: "and",
        input: "text = \"abc\" and any in [/^a/i]".into(),
        filter: Box::new(move || {
            Filter::eq(f.text, "abc").and(Filter::is_in(f.any, [regex("^a", "i")]))
        }),
        want: FWant::Refused,
    });
    rows.push(FRow {
        op: "not",
        input: "!(bag has /^a/i)".into(),
        filter: Box::new(move || !Filter::all(f.bag, [regex("^a", "i")])),
        want: FWant::Refused,
    });
    rows
}

fn ids_of(docs: &[Document]) -> Vec<i64> {
    docs.iter().map(|d| d.get_i64("_id").unwrap()).collect()
}

/// Judges one filter row through the six verbs; returns how many verbs ran.
async fn judge_filter(
    db: &TestDb,
    ledger: &mut Ledger,
    row: &FRow,
    seeded: &[Document],
    sampled: bool,
    writes: bool,
) -> usize {
    let things = Thing::collection(db);
    let input = row.input.as_str();
    let matching = |p: &Pred| {
        Some(ids_of(
            &seeded.iter().filter(|d| p(d)).cloned().collect::<Vec<_>>(),
        ))
    };
    let (expected, may_refuse): (Option<Vec<i64>>, bool) = match &row.want {
        FWant::Match(p) => (matching(p), false),
        FWant::Either(p) => (matching(p), true),
        FWant::Refused => (None, true),
    };
    macro_rules! verb {
        // `$check` says what is wrong with a result, given the ids the filter must match.
        ($name:expr, $fut:expr, |$v:ident, $want:ident| $check:expr) => {{
            let op = format!("{} ({})", row.op, $name);
            ledger.row(&op);
            db.take_commands();
            let outcome = run($fut).await;
            let sent: Vec<String> = db
                .take_commands()
                .into_iter()
                .filter(|c| c.target == "qv_things")
                .map(|c| c.name)
                .collect();
            match (&expected, outcome) {
                (Some($want), Outcome::Ok($v)) => {
                    let wrong: Option<String> = $check;
                    if let Some(wrong) = wrong {
                        ledger.fail(&op, input, wrong);
                    }
                    ledger.outcome("matched literally");
                    true
                }
                (_, Outcome::Err(e)) if may_refuse && refusal(&e) => {
                    if sent.is_empty() {
                        ledger.outcome("refused before sending");
                    } else {
                        ledger.fail(
                            &op,
                            input,
                            format!("refused after sending {sent:?}: {}", short(&e)),
                        );
                    }
                    false
                }
                (None, Outcome::Ok(_)) => {
                    ledger.fail(&op, input, "should have been refused, but Ok");
                    true
                }
                (_, Outcome::Err(e)) => {
                    ledger.fail(&op, input, format!("{} (sent {sent:?})", short(&e)));
                    false
                }
                (_, Outcome::Panicked(p)) => {
                    ledger.fail(&op, input, format!("panicked: {p}"));
                    false
                }
                (_, Outcome::TimedOut) => {
                    ledger.fail(&op, input, "timed out");
                    false
                }
            }
        }};
    }
    let ids = |mut got: Vec<i64>, want: &Vec<i64>| {
        got.sort_unstable();
        (&got != want).then(|| format!("matched {got:?}, not {want:?}"))
    };
    let number = |what: &str, got: u64, want: &Vec<i64>| {
        (got != want.len() as u64).then(|| format!("{what} {got}, not {} ({want:?})", want.len()))
    };
    verb!(
        "find",
        things.find((row.filter)()).into_future(),
        |v, want| ids(v.iter().map(|t| t.id).collect(), want)
    );
    // The embedded server refuses any `$where` key in an aggregation's `$match`, a literal's
    // included (mongod parses the filter and only refuses the operator): `count` (an
    // `aggregate`) of a document value holding that key is left out there.
    let server_quirk = pattern_testkit::server().is_embedded()
        && (row.filter)()
            .into_document()
            .is_ok_and(|d| holds_key(&Bson::Document(d), "$where"));
    if !server_quirk {
        verb!("count", things.count((row.filter)()), |v, want| number(
            "counted", v, want
        ));
    }
    // `find_one` and `project` send the filter `find` sends (`query_commands` shows that each
    // verb's command holds the filter document as built): they run on every eighth row of the
    // table.
    if sampled {
        verb!(
            "find_one",
            things.find_one((row.filter)()),
            |v, want| match v {
                Some(t) if want.contains(&t.id) => None,
                None if want.is_empty() => None,
                other => Some(format!(
                    "found {:?}, not one of {want:?}",
                    other.map(|t| t.id)
                )),
            }
        );
        verb!(
            "project",
            things.find((row.filter)()).project::<Brief>().into_future(),
            |v, want| ids(v.iter().map(|b| b.id).collect(), want)
        );
    }
    // The writes take the same filter document (and their rows' restores cost most of the
    // table's time): they run on every eighth row, the rows `find_one` and `project` skip.
    if writes {
        // update_many: exactly the matching documents marked, nothing else changed.
        let updated = verb!(
            "update_many",
            things.update_many((row.filter)(), Update::new().inc(Thing::FIELDS.hits, 1)),
            |v, want| number("matched", v.matched, want)
        );
        // What the writes left, read as (`_id`, `hits`) only: the documents are large.
        let marks = || async {
            let docs: Vec<Document> = db
                .collection::<Document>("qv_things")
                .find(doc! {})
                .projection(doc! { "_id": 1, "hits": 1 })
                .sort(doc! { "_id": 1 })
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            docs.iter()
                .map(|d| (d.get_i64("_id").unwrap(), d.get_i32("hits").unwrap()))
                .collect::<Vec<(i64, i32)>>()
        };
        let all_ids = ids_of(seeded);
        let marked = |ids: &[i64]| -> Vec<(i64, i32)> {
            all_ids
                .iter()
                .map(|id| (*id, i32::from(ids.contains(id))))
                .collect()
        };
        let after = marks().await;
        let want_after = match (&expected, updated) {
            (Some(w), true) => marked(w),
            _ => marked(&[]),
        };
        if after != want_after {
            ledger.fail(
                &format!("{} (update_many)", row.op),
                input,
                format!("marked {after:?}, not {want_after:?}"),
            );
        }
        if updated {
            db.collection::<Document>("qv_things")
                .update_many(
                    doc! { "hits": { "$ne": 0 } },
                    doc! { "$set": { "hits": 0 } },
                )
                .await
                .unwrap();
        }
        // delete_many: exactly the matching documents gone.
        let deleted = verb!(
            "delete_many",
            things.delete_many((row.filter)()),
            |v, want| { number("deleted", v, want) }
        );
        let left: Vec<i64> = marks().await.into_iter().map(|(id, _)| id).collect();
        let want_left: Vec<i64> = match (&expected, deleted) {
            (Some(w), true) => all_ids
                .iter()
                .copied()
                .filter(|id| !w.contains(id))
                .collect(),
            _ => all_ids.clone(),
        };
        if left != want_left {
            ledger.fail(
                &format!("{} (delete_many)", row.op),
                input,
                format!("left {left:?}, not {want_left:?}"),
            );
        }
        if left.len() != seeded.len() {
            let gone: Vec<Document> = seeded
                .iter()
                .filter(|d| !left.contains(&d.get_i64("_id").unwrap()))
                .cloned()
                .collect();
            db.collection::<Document>("qv_things")
                .insert_many(gone)
                .await
                .unwrap();
        }
    }
    2 - usize::from(server_quirk) + if sampled { 2 } else { 0 } + if writes { 2 } else { 0 }
}

/// Whether `key` is a key anywhere in `v`.
fn holds_key(v: &Bson, key: &str) -> bool {
    match v {
        Bson::Document(d) => d.iter().any(|(k, v)| k == key || holds_key(v, key)),
        Bson::Array(a) => a.iter().any(|v| holds_key(v, key)),
        _ => false,
    }
}

/// The defects of the typed filters: each is a test of its own (at the end of this file),
/// running the rows of the filter table that meet it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Defect {
    /// A key with NUL in a value: the driver's BSON error, not `InvalidValue`.
    NulKey,
    /// `undefined` in a value: the server's error.
    Undefined,
    /// A document with a `$` key as an item of `$all`: read as an operator.
    AllOperatorDocument,
    /// A document with a `$` key in `$in` / `$nin`: the server's error.
    InOperatorDocument,
    /// A regex under `$ne`, `$gt`, `$gte`, `$lt`, `$lte`: the server's error.
    RegexComparison,
}

/// The defect a filter document meets, if any: what the server refuses, reads as other than a
/// literal, or the driver cannot encode, though the typed filter was built.
fn defect_of(filter: &Document) -> Option<Defect> {
    fn walk(v: &Bson, found: &mut Vec<Defect>) {
        match v {
            Bson::Document(d) => {
                for (k, v) in d {
                    let dollar_doc = |v: &Bson| matches!(v, Bson::Document(d) if d.keys().any(|k| k.starts_with('$')));
                    match (k.as_str(), v) {
                        ("$all", Bson::Array(items)) if items.iter().any(dollar_doc) => {
                            found.push(Defect::AllOperatorDocument);
                        }
                        ("$in" | "$nin", Bson::Array(items)) if items.iter().any(dollar_doc) => {
                            found.push(Defect::InOperatorDocument);
                        }
                        ("$ne" | "$gt" | "$gte" | "$lt" | "$lte", Bson::RegularExpression(_)) => {
                            found.push(Defect::RegexComparison);
                        }
                        // `undefined` as the operand, or an item of it (inside a document it
                        // is compared as a value).
                        (op, v)
                            if op.starts_with('$')
                                && (matches!(v, Bson::Undefined)
                                    || matches!(v, Bson::Array(a) if a.iter().any(|i| {
                                        matches!(i, Bson::Undefined)
                                            || matches!(i, Bson::Array(a) if a.contains(&Bson::Undefined))
                                    }))) =>
                        {
                            found.push(Defect::Undefined);
                        }
                        _ => {}
                    }
                    walk(v, found);
                }
            }
            Bson::Array(a) => a.iter().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    if bson::RawDocumentBuf::try_from(filter).is_err() {
        return Some(Defect::NulKey);
    }
    let mut found = Vec::new();
    walk(&Bson::Document(filter.clone()), &mut found);
    [
        Defect::Undefined,
        Defect::AllOperatorDocument,
        Defect::InOperatorDocument,
        Defect::RegexComparison,
    ]
    .into_iter()
    .find(|d| found.contains(d))
}

/// The defect a typed filter's refusal before sending keeps it from (`None` for the refusals
/// the table itself expects, a regex among `$in`'s items).
fn refused_for(e: &Error) -> Option<Defect> {
    let Error::InvalidValue { reason, .. } = e else {
        return None;
    };
    [
        ("holds NUL", Defect::NulKey),
        ("`undefined`", Defect::Undefined),
        (
            "a document with a `$` key in `$all`",
            Defect::AllOperatorDocument,
        ),
        (
            "a document with a `$` key in `$in`",
            Defect::InOperatorDocument,
        ),
        (
            "a document with a `$` key in `$nin`",
            Defect::InOperatorDocument,
        ),
        (
            "the server compares a regex for equality only",
            Defect::RegexComparison,
        ),
    ]
    .into_iter()
    .find(|(text, _)| reason.contains(text))
    .map(|(_, defect)| defect)
}

/// Runs the rows of the filter table that meet `defect` (none: the rows that meet no defect),
/// and checks their number.
fn filter_table(name: &'static str, defect: Option<Defect>, expected_rows: usize) {
    assert!(expected_rows > 0);
    big_stack(move || async move {
        let db = test_db(name).await;
        reset(&db, "qv_things", &seed_things()).await;
        // As stored: what the predicates are computed on.
        let seeded = stored(&db, "qv_things").await;
        let mut ledger = Ledger::new(name);
        let (mut rows, mut verbs) = (0, 0);
        for mut row in filter_rows() {
            let met = match (row.filter)().into_document() {
                Ok(d) => defect_of(&d),
                Err(e) => refused_for(&e),
            };
            if met != defect {
                continue;
            }
            rows += 1;
            if defect.is_some() {
                // Fixed, a row is refused before anything is sent, or matches literally.
                row.want = match row.want {
                    FWant::Match(p) | FWant::Either(p) => FWant::Either(p),
                    FWant::Refused => FWant::Refused,
                };
            }
            // The defects' rows are few: each runs through every verb.
            let all = defect.is_some();
            verbs += judge_filter(
                &db,
                &mut ledger,
                &row,
                &seeded,
                all || rows % 8 == 1,
                all || rows % 8 == 5,
            )
            .await;
        }
        if let Some(d) = diff(&seeded, &stored(&db, "qv_things").await) {
            ledger.fail("every row", "", format!("the documents changed: {d}"));
        }
        eprintln!("[{name}] {rows} filter rows");
        assert_eq!(rows, expected_rows, "{name}: filter rows");
        ledger.finish(verbs);
    });
}

#[test]
fn typed_filters_match_each_value_literally_or_refuse_it() {
    filter_table("filters", None, 2198);
}

// ---------------------------------------------------------------------------------------------
// Inserts
// ---------------------------------------------------------------------------------------------

/// Every `Thing` holding one hostile value in one field (the others as the base has them).
fn hostile_things() -> Vec<(String, Thing)> {
    let mut out = Vec::new();
    let mut add = |what: String, change: &dyn Fn(&mut Thing)| {
        let mut t = base(2);
        change(&mut t);
        out.push((what, t));
    };
    for s in strings() {
        let l = label(&Bson::String(s.clone()));
        add(format!("text {l}"), &|t| t.text = s.clone());
        add(format!("maybe {l}"), &|t| t.maybe = Some(s.clone()));
        add(format!("tags [{l}]"), &|t| {
            t.tags = vec![s.clone(), s.clone()]
        });
        add(format!("part.label {l}"), &|t| t.part.label = s.clone());
        add(format!("map {{k: {l}}}"), &|t| {
            t.map = HashMap::from([("k".to_owned(), s.clone())]);
        });
    }
    add("maybe None".into(), &|t| t.maybe = None);
    add("tags []".into(), &|t| t.tags = Vec::new());
    for n in i32s() {
        add(format!("small {n}"), &|t| t.small = n);
        add(format!("part.qty {n}"), &|t| t.part.qty = n);
    }
    for n in i64s() {
        add(format!("big {n}"), &|t| t.big = n);
    }
    for n in [i64::MIN, i64::MAX, 0] {
        add(format!("_id {n}"), &|t| t.id = n);
    }
    for x in f64s() {
        add(format!("real {x:?}"), &|t| t.real = x);
    }
    for d in dates() {
        add(format!("when {d}"), &|t| t.when = d);
    }
    for d in documents() {
        let l = label(&Bson::Document(d.clone()));
        add(format!("doc {l}"), &|t| t.doc = d.clone());
    }
    for m in maps() {
        add(format!("map {}", label(&ser(&m))), &|t| t.map = m.clone());
    }
    for b in bsons() {
        let l = label(&b);
        add(format!("any {l}"), &|t| t.any = b.clone());
        add(format!("part.extra {l}"), &|t| t.part.extra = b.clone());
        add(format!("bag [{l}]"), &|t| t.bag = vec![b.clone()]);
        add(format!("parts [extra {l}]"), &|t| {
            t.parts = vec![Part {
                label: "x".into(),
                qty: 1,
                extra: b.clone(),
            }];
        });
    }
    out
}

/// `doc` with its `map` field's keys in order: a `HashMap` read back serializes in an order of
/// its own.
fn map_sorted(mut doc: Document) -> Document {
    if let Some(Bson::Document(m)) = doc.get("map") {
        let mut pairs: Vec<(String, Bson)> = m.clone().into_iter().collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        doc.insert("map", Bson::Document(pairs.into_iter().collect()));
    }
    doc
}

#[test]
fn inserts_store_each_value_literally_or_refuse_it() {
    big_stack(|| async {
        let db = test_db("query_values_inserts").await;
        let things = Thing::collection(&db);
        let mut ledger = Ledger::new("inserts");
        let before = vec![raw(&base(1))];
        for (what, thing) in hostile_things() {
            let new = raw(&thing);
            let ok = storable(&Bson::Document(new.clone()), 0);
            let mut other = base(3);
            other.text = "the other document".into();
            for many in [false, true] {
                let op = if many { "insert_many" } else { "insert" };
                ledger.row(op);
                reset(&db, "qv_things", &before).await;
                db.take_commands();
                let outcome = if many {
                    match run(things.insert_many([&other, &thing])).await {
                        Outcome::Ok(w) if w.len() == 2 => Outcome::Ok(()),
                        Outcome::Ok(w) => Outcome::Panicked(format!("wrote {w:?}")),
                        Outcome::Err(e) => Outcome::Err(e),
                        Outcome::Panicked(p) => Outcome::Panicked(p),
                        Outcome::TimedOut => Outcome::TimedOut,
                    }
                } else {
                    match run(things.insert(&thing)).await {
                        Outcome::Ok(_) => Outcome::Ok(()),
                        Outcome::Err(e) => Outcome::Err(e),
                        Outcome::Panicked(p) => Outcome::Panicked(p),
                        Outcome::TimedOut => Outcome::TimedOut,
                    }
                };
                let sent = writes(&db);
                let after = stored(&db, "qv_things").await;
                match outcome {
                    Outcome::Ok(()) if ok => {
                        let mut expected = before.clone();
                        if many {
                            expected.push(raw(&other));
                        }
                        expected.push(new.clone());
                        expected.sort_by_key(|d| d.get_i64("_id").unwrap());
                        if let Some(d) = diff(&expected, &after) {
                            ledger.fail(op, &what, format!("not stored as given: {d}"));
                        }
                        match things.get(thing.id).await {
                            Ok(Some(read)) => {
                                if !same_doc(&map_sorted(raw(&read)), &map_sorted(new.clone())) {
                                    ledger.fail(op, &what, "read back as another value");
                                }
                            }
                            other => ledger.fail(op, &what, format!("read back: {other:?}")),
                        }
                        ledger.outcome("stored");
                    }
                    Outcome::Err(e) if !ok && refusal(&e) => {
                        if !sent.is_empty() {
                            ledger.fail(op, &what, format!("refused after sending {sent:?}"));
                        }
                        if let Some(d) = diff(&before, &after) {
                            ledger.fail(op, &what, format!("refused, yet written: {d}"));
                        }
                        ledger.outcome("refused before sending");
                    }
                    Outcome::Ok(()) => {
                        ledger.fail(op, &what, "should have been refused, but stored");
                    }
                    Outcome::Err(e) => ledger.fail(op, &what, short(&e)),
                    Outcome::Panicked(p) => ledger.fail(op, &what, format!("panicked: {p}")),
                    Outcome::TimedOut => ledger.fail(op, &what, "timed out"),
                }
            }
        }
        ledger.finish(702);
    });
}

// ---------------------------------------------------------------------------------------------
// Keyset pages
// ---------------------------------------------------------------------------------------------

fn paged(id: i64) -> Paged {
    Paged {
        id,
        text: "t".into(),
        real: 0.0,
        any: Bson::Null,
        when: DateTime::from_millis(0),
    }
}

/// A sort key of `Paged` and the values it holds in a walk.
#[derive(Clone)]
enum Key {
    Text(Vec<String>),
    Real(Vec<f64>),
    When(Vec<DateTime>),
    Any(Vec<Bson>),
}

impl Key {
    fn name(&self) -> &'static str {
        match self {
            Key::Text(_) => "text",
            Key::Real(_) => "real",
            Key::When(_) => "when",
            Key::Any(_) => "any",
        }
    }

    /// The documents: each value twice (ties broken by `_id`), in a scrambled order of `_id`s.
    fn docs(&self) -> Vec<Paged> {
        let n = match self {
            Key::Text(v) => v.len(),
            Key::Real(v) => v.len(),
            Key::When(v) => v.len(),
            Key::Any(v) => v.len(),
        };
        // Ids in a shuffled order: a step prime to `2n + 1` visits each id once.
        let m = 2 * n + 1;
        let gcd = |mut a: usize, mut b: usize| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let step = (7..).find(|s| gcd(*s, m) == 1).unwrap();
        (0..2 * n)
            .map(|i| {
                let id = i64::try_from((i * step) % m).unwrap() + 1;
                let mut p = paged(id);
                let k = i % n;
                match self {
                    Key::Text(v) => p.text = v[k].clone(),
                    Key::Real(v) => p.real = v[k],
                    Key::When(v) => p.when = v[k],
                    Key::Any(v) => p.any = v[k].clone(),
                }
                p
            })
            .collect()
    }

    fn sort(&self, descending: bool) -> Sort<Paged> {
        let f = Paged::FIELDS;
        let s = match (self, descending) {
            (Key::Text(_), false) => Sort::asc(f.text).erase(),
            (Key::Text(_), true) => Sort::desc(f.text).erase(),
            (Key::Real(_), false) => Sort::asc(f.real).erase(),
            (Key::Real(_), true) => Sort::desc(f.real).erase(),
            (Key::When(_), false) => Sort::asc(f.when).erase(),
            (Key::When(_), true) => Sort::desc(f.when).erase(),
            (Key::Any(_), false) => Sort::asc(f.any).erase(),
            (Key::Any(_), true) => Sort::desc(f.any).erase(),
        };
        if descending {
            s.then_desc(f.id).erase()
        } else {
            s.then_asc(f.id).erase()
        }
    }
}

/// Walks `key`'s documents by keyset pages of every size, both ways, as models and as
/// projections: each must be the server's own order of the whole sort, every document once.
/// Returns how many walks ran.
async fn walk(db: &TestDb, ledger: &mut Ledger, what: &str, key: &Key) -> usize {
    let coll = Paged::collection(db);
    let docs = key.docs();
    reset(
        db,
        "qv_paged",
        &docs
            .iter()
            .map(|d| bson::serialize_to_document(d).unwrap())
            .collect::<Vec<_>>(),
    )
    .await;
    let mut walks = 0;
    for descending in [false, true] {
        let dir = if descending { "desc" } else { "asc" };
        let whole: Vec<i64> = match coll.find(doc! {}).sort(key.sort(descending)).await {
            Ok(all) => all.iter().map(|p| p.id).collect(),
            Err(e) => {
                ledger.fail(
                    "after",
                    what,
                    format!("the whole sort failed: {}", short(&e)),
                );
                continue;
            }
        };
        for size in [1_u64, 2, 3] {
            for projected in [false, true] {
                walks += 1;
                let op = if projected {
                    "after (project)"
                } else {
                    "after"
                };
                ledger.row(op);
                let input = format!("{what} {} {dir}, pages of {size}", key.name());
                let mut seen: Vec<i64> = Vec::new();
                let mut last: Option<(Paged, PagedKeys)> = None;
                let mut failed = None;
                let mut refused = false;
                for _ in 0..=docs.len() {
                    let page: pattern_runtime::Result<Vec<(i64, Paged, PagedKeys)>> = if projected {
                        let mut find = coll
                            .find(doc! {})
                            .sort(key.sort(descending))
                            .limit(size)
                            .project::<PagedKeys>();
                        if let Some((_, l)) = &last {
                            find = find.after(l);
                        }
                        find.await.map(|v| {
                            v.into_iter()
                                .map(|k| {
                                    let p = Paged {
                                        id: k.id,
                                        text: k.text.clone(),
                                        real: k.real,
                                        any: k.any.clone(),
                                        when: k.when,
                                    };
                                    (k.id, p, k)
                                })
                                .collect()
                        })
                    } else {
                        let mut find = coll.find(doc! {}).sort(key.sort(descending)).limit(size);
                        if let Some((l, _)) = &last {
                            find = find.after(l);
                        }
                        find.await.map(|v| {
                            v.into_iter()
                                .map(|p| {
                                    let k = PagedKeys {
                                        id: p.id,
                                        text: p.text.clone(),
                                        real: p.real,
                                        any: p.any.clone(),
                                        when: p.when,
                                    };
                                    (p.id, p, k)
                                })
                                .collect()
                        })
                    };
                    match page {
                        Ok(page) if page.is_empty() => break,
                        Ok(page) => {
                            seen.extend(page.iter().map(|(id, _, _)| *id));
                            let (_, p, k) = page.into_iter().last().unwrap();
                            last = Some((p, k));
                        }
                        // No page comes after a key the server has no order for: refused
                        // before sending, the walk so far in order.
                        Err(Error::InvalidValue { field, .. })
                            if field == "any"
                                && last.as_ref().is_some_and(|(p, _)| {
                                    matches!(
                                        p.any,
                                        Bson::RegularExpression(_)
                                            | Bson::JavaScriptCode(_)
                                            | Bson::JavaScriptCodeWithScope(_)
                                    )
                                }) =>
                        {
                            refused = true;
                            break;
                        }
                        Err(e) => {
                            failed = Some(short(&e));
                            break;
                        }
                    }
                }
                match failed {
                    Some(e) => ledger.fail(op, &input, format!("after {seen:?}: {e}")),
                    None if refused && whole.starts_with(&seen) => ledger.outcome("refused"),
                    None if seen != whole => {
                        ledger.fail(op, &input, format!("walked {seen:?}, not {whole:?}"));
                    }
                    None => ledger.outcome("walked"),
                }
            }
        }
    }
    walks
}

/// The values a sort key walks past in the table: each bracket of BSON types on its own (a
/// keyset condition compares within one), NaN left out.
fn walked_keys() -> Vec<(String, Key)> {
    let no_nan: Vec<f64> = f64s().into_iter().filter(|x| !x.is_nan()).collect();
    vec![
        ("strings".into(), Key::Text(strings())),
        ("numbers".into(), Key::Real(no_nan.clone())),
        ("dates".into(), Key::When(dates())),
        (
            "strings".into(),
            Key::Any(strings().into_iter().map(Bson::String).collect()),
        ),
        (
            "numbers".into(),
            Key::Any(
                i32s()
                    .into_iter()
                    .map(Bson::Int32)
                    .chain(i64s().into_iter().map(Bson::Int64))
                    .chain(no_nan.into_iter().map(Bson::Double))
                    .collect(),
            ),
        ),
        (
            "dates".into(),
            Key::Any(dates().into_iter().map(Bson::DateTime).collect()),
        ),
        (
            "booleans".into(),
            Key::Any(vec![Bson::Boolean(true), Bson::Boolean(false)]),
        ),
    ]
}

#[test]
fn keyset_pages_after_hostile_values_walk_every_document_once() {
    big_stack(|| async {
        let db = test_db("query_values_keyset").await;
        let coll = Paged::collection(&db);
        let mut ledger = Ledger::new("keyset");
        let mut walks = 0;
        for (what, key) in walked_keys() {
            walks += walk(&db, &mut ledger, &what, &key).await;
        }
        // A `last` holding a value that cannot be a literal (an operator document, a dotted or
        // NUL key, nesting past the limit, `undefined`): refused, nothing sent.
        reset(
            &db,
            "qv_paged",
            &[bson::serialize_to_document(&paged(1)).unwrap()],
        )
        .await;
        for b in bsons().into_iter().filter(|b| !storable(b, 0)) {
            for projected in [false, true] {
                let op = if projected {
                    "after (project)"
                } else {
                    "after"
                };
                ledger.row(op);
                let mut last = paged(2);
                last.any = b.clone();
                let sort = Sort::asc(Paged::FIELDS.any).then_asc(Paged::FIELDS.id);
                db.take_commands();
                let outcome = if projected {
                    let keys = PagedKeys {
                        id: 2,
                        text: last.text.clone(),
                        real: last.real,
                        any: last.any.clone(),
                        when: last.when,
                    };
                    run(coll
                        .find(doc! {})
                        .sort(sort)
                        .project::<PagedKeys>()
                        .after(&keys)
                        .into_future())
                    .await
                    .map_ok()
                } else {
                    run(coll.find(doc! {}).sort(sort).after(&last).into_future())
                        .await
                        .map_ok()
                };
                let sent: Vec<String> = db.take_commands().into_iter().map(|c| c.name).collect();
                let input = format!("last.any = {}", label(&b));
                match outcome {
                    Outcome::Err(e) if refusal(&e) && sent.is_empty() => {
                        ledger.outcome("refused before sending");
                    }
                    Outcome::Err(e) if refusal(&e) => {
                        ledger.fail(op, &input, format!("refused after sending {sent:?}"));
                    }
                    Outcome::Err(e) => ledger.fail(op, &input, short(&e)),
                    Outcome::Ok(()) => ledger.fail(op, &input, "should have been refused"),
                    Outcome::Panicked(p) => ledger.fail(op, &input, format!("panicked: {p}")),
                    Outcome::TimedOut => ledger.fail(op, &input, "timed out"),
                }
            }
        }
        eprintln!("[keyset] {walks} walks");
        assert_eq!(walks, 84, "walks");
        ledger.finish(112);
    });
}

impl<T> Outcome<T> {
    fn map_ok(self) -> Outcome<()> {
        match self {
            Outcome::Ok(_) => Outcome::Ok(()),
            Outcome::Err(e) => Outcome::Err(e),
            Outcome::Panicked(p) => Outcome::Panicked(p),
            Outcome::TimedOut => Outcome::TimedOut,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rows the toolkit once got wrong: each test failed before the toolkit kept the rule for them
// ---------------------------------------------------------------------------------------------

/// `Filter::is_in` / `not_in` (also inside `elem_match`) of a document with a `$`-prefixed key
/// (a `Document`, a `HashMap`, a `Bson` value): sent as `{f: {$in: [{$gt: 1}]}}`, which the
/// server refuses ("cannot nest $ under $in", code 2), so the caller gets `Error::Driver`.
/// Expected: `Error::InvalidValue` before anything is sent (or a literal match).
#[test]
fn is_in_and_not_in_refuse_an_operator_document_before_sending() {
    filter_table(
        "defect_in_operator_doc",
        Some(Defect::InOperatorDocument),
        39,
    );
}

/// `Filter::eq` / `ne` / `is_in` / `not_in` / `all` / `elem_match` (and `!`, `or` over them)
/// of a value with NUL in a key (`doc! {"a\0b": 1}`, a map `{"a\0b": ..}`): the driver fails to
/// encode the command, `Error::Driver` (a BSON `MalformedBytes`), where every update and insert
/// of the same value is `Error::InvalidValue`.
#[test]
fn filter_values_with_a_nul_in_a_key_are_invalid_values() {
    filter_table("defect_nul_key", Some(Defect::NulKey), 30);
}

/// `Filter::ne` / `gt` / `gte` / `lt` / `lte` of a regex (a `Bson` field): sent, and refused by
/// the server ("Can't have regex as arg to $ne", "Can't have RegEx as arg to non-equality
/// predicate"), `Error::Driver`. `is_in`, `not_in` and `all` refuse a regex before sending;
/// these should too.
#[test]
fn ne_and_order_filters_refuse_a_regex_before_sending() {
    filter_table("defect_regex_comparison", Some(Defect::RegexComparison), 18);
}

/// Any typed filter of a value holding `undefined` (`Bson::Undefined`, alone or in an array):
/// was sent, and refused by the server, `Error::Driver`. Updates and inserts refuse `undefined`
/// as `Error::InvalidValue` before sending, and filters now do too, at any depth (17 rows with
/// `undefined` as an operand or an item of one, and 5 where it is inside a document value,
/// which the server compared as a value).
#[test]
fn filter_values_holding_undefined_are_refused_before_sending() {
    filter_table("defect_undefined", Some(Defect::Undefined), 22);
}

/// `Filter::all` of an item that is a document with a `$`-prefixed key (a `Vec<Bson>` field):
/// `{bag: {$all: [{$elemMatch: {$gt: 1}}]}}` is read by the server as an `$elemMatch`
/// operator, so the filter matches every document whose `bag` has a number above 1, none of
/// which holds that document; any other `$` key there is refused by the server ("no $
/// expressions in $all"), `Error::Driver`. Expected: refused before sending (as a regex item
/// is), or a literal match.
#[test]
fn all_never_reads_an_item_as_an_operator() {
    filter_table(
        "defect_all_operator_doc",
        Some(Defect::AllOperatorDocument),
        10,
    );
}

/// Keyset pages over an `f64` sort key holding NaN: the condition for what follows `last` is
/// `{real: {$gt: NaN}}` (or `$lt`), which matches nothing (a NaN on either side of `$gt`/`$lt`
/// compares false), though NaN sorts below every number: ascending, the page after a NaN is
/// empty and every number is skipped; descending, the page after the lowest number skips the
/// NaNs. Expected: every document once, in the sort's order.
#[test]
fn keyset_pages_walk_past_a_nan_key() {
    big_stack(|| async {
        let db = test_db("defect_keyset_nan").await;
        let mut ledger = Ledger::new("defect_keyset_nan");
        let walks = walk(&db, &mut ledger, "with NaN", &Key::Real(f64s())).await;
        assert_eq!(walks, 12, "walks");
        ledger.finish(walks);
    });
}

/// Keyset pages over a `Bson` sort key holding values of several BSON types (strings, numbers,
/// dates, booleans, `null`, regexes, JavaScript): the condition `{any: {$gt: last}}` compares
/// within `last`'s type only, so the documents of the types that sort after it are skipped;
/// with a regex as `last`, `{any: {$gt: /re/}}` is refused by the server (`Error::Driver`).
/// Expected: every document once in the sort's order, or a typed refusal before sending.
#[test]
fn keyset_pages_over_a_bson_key_walk_every_type() {
    big_stack(|| async {
        let db = test_db("defect_keyset_types").await;
        let mut ledger = Ledger::new("defect_keyset_types");
        let mixed = Key::Any(vec![
            Bson::String("$gt".into()),
            Bson::Int32(5),
            Bson::Double(-0.0),
            Bson::DateTime(DateTime::MAX),
            Bson::Boolean(true),
            Bson::Null,
            regex("^a", "i"),
        ]);
        let walks = walk(&db, &mut ledger, "mixed types", &mixed).await;
        let regexes = Key::Any(vec![regex("^a", "i"), regex(".*", ""), regex("$where", "")]);
        let walks = walks + walk(&db, &mut ledger, "regexes", &regexes).await;
        // A double's and a decimal's NaN among numbers of other types: below every number.
        let nans = Key::Any(vec![
            Bson::Int32(1),
            Bson::Double(f64::NAN),
            Bson::Int64(7),
            Bson::Decimal128("NaN".parse().unwrap()),
            Bson::Double(-1.5),
        ]);
        let walks = walks + walk(&db, &mut ledger, "numbers and NaNs", &nans).await;
        assert_eq!(walks, 24 + 12, "walks");
        ledger.finish(walks);
    });
}

/// `update_many` whose filter the server refuses (here `Filter::ne` of a regex, or `is_in` of
/// an operator document), with an update holding an `$inc`: the server's `BadValue` about the
/// filter is taken for an `$inc` overflow, and reported as `Error::InvalidValue` naming the
/// `$inc`'s field, "the result would leave the 64-bit integer range", though nothing
/// overflowed. Expected: the filter's own error (refused before sending, naming its field).
#[test]
fn update_many_does_not_report_a_refused_filter_as_an_overflow() {
    big_stack(|| async {
        let db = test_db("defect_filter_as_overflow").await;
        let things = Thing::collection(&db);
        things.insert(&base(1)).await.unwrap();
        let f = Thing::FIELDS;
        let mut failures = Vec::new();
        for (what, filter) in [
            ("any != /^a/i", Filter::ne(f.any, regex("^a", "i"))),
            (
                "doc in [{$gt: 1}]",
                Filter::is_in(f.doc, [doc! { "$gt": 1 }]),
            ),
        ] {
            let e = things
                .update_many(filter, Update::new().inc(f.hits, 1))
                .await
                .unwrap_err();
            if matches!(&e, Error::InvalidValue { field, .. } if field == "hits") {
                failures.push(format!("{what}: {e}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

/// The escape, a `doc!` update, is held to what the typed forms refuse: every value it stores
/// as given (`$push`, `$addToSet` and their `$each` items, `$min`, `$max`, `$pullAll`, as
/// `$set`) with a `$`-prefixed or dotted key is `InvalidValue`, nothing written. Before, only
/// `$set` and `$setOnInsert` were checked, and a `$push` of `{"$where": 1}` was stored, leaving
/// a document that `replace(&get(..))` then refused. A `$pull` takes a condition (a query), so
/// `{$pull: {bag: {$gt: 1}}}` is still sent.
#[test]
fn doc_updates_store_no_key_the_typed_forms_refuse() {
    big_stack(|| async {
        let db = test_db("doc_update_values").await;
        let things = Thing::collection(&db);
        reset(&db, "qv_things", &[raw(&base(1))]).await;
        let before = stored(&db, "qv_things").await;
        let mut failures = Vec::new();
        for u in [
            doc! { "$push": { "bag": { "$where": 1 } } },
            doc! { "$addToSet": { "bag": { "$where": 1 } } },
            doc! { "$push": { "bag": { "$each": [1, { "$gt": 1 }] } } },
            doc! { "$addToSet": { "bag": { "$each": [{ "a.b": 1 }] } } },
            doc! { "$push": { "parts": { "label": "x", "qty": 1, "extra": { "$x": 1 } } } },
            doc! { "$min": { "doc": { "$x": 1 } } },
            doc! { "$max": { "doc": { "~": { "$y": 1 } } } },
            doc! { "$pullAll": { "bag": [{ "$where": 1 }] } },
        ] {
            db.take_commands();
            match things.update(1, u.clone()).await {
                Err(Error::InvalidValue { .. }) => {}
                other => failures.push(format!("{u}: {other:?}")),
            }
            let sent = writes(&db);
            if !sent.is_empty() {
                failures.push(format!("{u}: sent {sent:?}"));
            }
            if let Some(d) = diff(&before, &stored(&db, "qv_things").await) {
                failures.push(format!("{u}: {d}"));
                reset(&db, "qv_things", &before).await;
            }
        }
        // A condition is not a stored value: sent, and it pulls what it matches.
        things
            .update(1, doc! { "$pull": { "bag": { "$gt": 1_000_000 } } })
            .await
            .unwrap();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

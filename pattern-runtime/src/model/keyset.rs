//! Keyset pages: what comes after a document in a sort, and whether an index serves the sort.

use bson::{Bson, Document};

use crate::error::{Error, Result};
use crate::index::{IndexKind, IndexSpec};
use crate::schema::ModelSchema;

/// Whether `value` is `1` or `-1`, as a number of any type.
fn plain_direction(value: &Bson) -> bool {
    match value {
        Bson::Int32(d) => d.abs() == 1,
        Bson::Int64(d) => d.abs() == 1,
        Bson::Double(d) => d.abs() == 1.0,
        _ => false,
    }
}

/// `1` or `-1` as a sort document holds it (any other value reads as ascending).
pub(crate) fn direction(value: &Bson) -> i32 {
    match value {
        Bson::Int32(d) if *d < 0 => -1,
        Bson::Int64(d) if *d < 0 => -1,
        Bson::Double(d) if *d < 0.0 => -1,
        _ => 1,
    }
}

/// The indexes of `model`'s collection that can serve a sort of every document: its own
/// and those its patterns declare there, but not a sparse, hidden or partial one (the
/// planner does not use it for a query without its filter) nor one with a collation (it
/// orders strings by it).
fn indexes(model: &'static ModelSchema) -> impl Iterator<Item = &'static IndexSpec> {
    let patterns = model
        .patterns()
        .iter()
        .flat_map(move |p| p.indexes(model))
        .filter(move |(collection, _)| *collection == model.collection())
        .map(|(_, spec)| spec);
    model.indexes().iter().chain(patterns).filter(|spec| {
        !spec.is_sparse()
            && !spec.is_hidden()
            && spec.partial().is_empty()
            && spec.collation().is_none()
    })
}

/// The orders the indexes of `model`'s collection serve from their start, as the derive
/// lists them (`SchemaParts::orders`): each index's keys up to its first dotted, `_id`,
/// text, hashed or geo key, each order once.
pub(crate) fn orders(model: &'static ModelSchema) -> Vec<Vec<(&'static str, i32)>> {
    let mut out: Vec<Vec<(&'static str, i32)>> = Vec::new();
    for spec in indexes(model) {
        let order: Vec<(&'static str, i32)> = spec
            .keys()
            .iter()
            .map_while(|k| {
                let dir = match k.kind {
                    IndexKind::Ascending => 1,
                    IndexKind::Descending => -1,
                    _ => return None,
                };
                (!k.path.contains('.') && k.path != "_id").then_some((k.path, dir))
            })
            .collect();
        if !order.is_empty() && !out.contains(&order) {
            out.push(order);
        }
    }
    out
}

/// Refuses a sort (ending with `_id`) whose other keys no index of `model`'s collection
/// serves: one whose keys start with them, in their directions or all reversed (the last
/// ties, by `_id`, are few). `_id` alone is always served.
pub(crate) fn served(model: &'static ModelSchema, sort: &Document) -> Result<()> {
    if let Some((key, value)) = sort.iter().find(|(_, d)| !plain_direction(d)) {
        return Err(Error::Unsupported {
            operation: format!("after, sorted by {key}: {value}"),
            reason: "a keyset page follows a sort of `1`s and `-1`s: a text score or \
                     another sort value has no order its condition can compare",
        });
    }
    let wanted: Vec<(&str, i32)> = sort
        .iter()
        .filter(|(k, _)| k.as_str() != "_id")
        .map(|(k, d)| (k.as_str(), direction(d)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let serves = |keys: &[crate::index::IndexKey]| {
        let sign = |k: &crate::index::IndexKey| match k.kind {
            IndexKind::Ascending => Some(1),
            IndexKind::Descending => Some(-1),
            _ => None,
        };
        wanted.len() <= keys.len()
            && [1, -1].iter().any(|flip| {
                wanted.iter().zip(keys).all(|((path, dir), key)| {
                    key.path == *path && sign(key).is_some_and(|s| s * flip == *dir)
                })
            })
    };
    if indexes(model).any(|spec| serves(spec.keys())) {
        return Ok(());
    }
    Err(Error::Unsupported {
        operation: format!(
            "after, sorted by {}",
            wanted
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        reason: "no index of the model serves this sort, so each keyset page would sort \
                 the collection: declare `#[index(..)]` on these fields, in the sort's \
                 order and directions (or all reversed)",
    })
}

/// The condition for the documents after `last` in `sort`: for keys `a, b, _id`,
/// `{$or: [{a: {$gt: la}}, {a: la, b: {$gt: lb}}, {a: la, b: lb, _id: {$gt: lid}}]}`
/// (`$lt` for a descending key).
///
/// `$gt`/`$lt` compare within one type bracket (numbers, strings, dates, ...), while a sort
/// orders the brackets too (`null` < numbers < strings < documents < ... < dates < ...), so
/// each key's branch also takes the values of the brackets that sort after its own (a
/// `$type` condition), for a field that holds several types (a `Bson`):
/// - a key `last` lacks, or holds as `null`, is `null`: ascending, every value follows it
///   (`$ne: null`); descending, nothing does, and the `null`s follow every value (a branch
///   `{a: null}`, which also matches a missing field);
/// - NaN sorts below every other number but compares false with each: ascending, every
///   other number follows a NaN (`$gte: -inf`); descending, the NaNs follow every other
///   number (a branch `{a: NaN}`);
/// - a regex, JavaScript code, `MinKey` and `MaxKey` have no order the server compares, and
///   an array has no single place in a sort (it sorts by one of its items):
///   [`Error::InvalidValue`], nothing sent.
pub(crate) fn after(sort: &Document, last: &Document) -> Result<Document> {
    let keys: Vec<(&str, i32)> = sort
        .iter()
        .map(|(k, d)| (k.as_str(), direction(d)))
        .collect();
    let mut branches = Vec::with_capacity(keys.len() + 1);
    let mut equal = Document::new();
    for (key, dir) in &keys {
        let value = value_at(last, key);
        crate::literal::check_value(key, &value)?;
        let rank = bracket(&value).ok_or_else(|| Error::InvalidValue {
            field: (*key).to_owned(),
            reason: "a keyset page cannot come after this value: the server compares a \
                     regex, JavaScript code, MinKey or MaxKey for equality only, and sorts an \
                     array by one of its items (sort by another field)"
                .to_owned(),
        })?;
        let nan = is_nan(&value);
        let mut push = |condition: Document| {
            let mut branch = equal.clone();
            branch.insert(*key, condition);
            branches.push(Bson::Document(branch));
        };
        if *dir > 0 {
            match (rank, nan) {
                (NULL, _) => push(bson::doc! { "$ne": Bson::Null }),
                (_, true) => push(bson::doc! { "$gte": f64::NEG_INFINITY }),
                _ => push(bson::doc! { "$gt": value.clone() }),
            }
            if rank != NULL && *key != "_id" {
                push(bson::doc! { "$type": types_between(rank + 1, BRACKETS.len()) });
            }
        } else if rank != NULL {
            if !nan {
                push(bson::doc! { "$lt": value.clone() });
            }
            if *key != "_id" {
                // The NaNs, of any number type, follow every other number descending.
                if rank == 1 && !nan {
                    push(bson::doc! { "$eq": f64::NAN });
                }
                let mut earlier = types_between(NULL + 1, rank);
                earlier.push("minKey");
                push(bson::doc! { "$type": earlier });
                push(bson::doc! { "$eq": Bson::Null });
            }
        }
        // Nothing sorts after `null` descending.
        equal.insert(*key, bson::doc! { "$eq": value });
    }
    if branches.is_empty() {
        // Only when every key is `null` descending: nothing follows.
        return Ok(bson::doc! { "_id": { "$in": [] } });
    }
    Ok(bson::doc! { "$or": branches })
}

const NULL: usize = 0;

/// A double's or a decimal's NaN: below every other number in a sort, equal to no number
/// under `$gt`/`$lt`.
fn is_nan(value: &Bson) -> bool {
    match value {
        Bson::Double(v) => v.is_nan(),
        Bson::Decimal128(d) => d.to_string().ends_with("NaN"),
        _ => false,
    }
}

/// The type brackets a sort orders, from `null` (`MinKey` is before it) to `MaxKey`, each
/// with the `$type` aliases of its types. Arrays are left out: a sort orders an array by
/// one of its items, so an array has no single place in it.
const BRACKETS: [&[&str]; 14] = [
    &["null"],
    &["double", "int", "long", "decimal"],
    &["string", "symbol"],
    &["object"],
    &["binData"],
    &["objectId"],
    &["bool"],
    &["date"],
    &["timestamp"],
    &["regex"],
    &["dbPointer"],
    &["javascript"],
    &["javascriptWithScope"],
    &["maxKey"],
];

/// The place of `value`'s type in [`BRACKETS`], or `None` for a type with no order the
/// server compares with `$gt`/`$lt` (from the regexes on) and for an array.
fn bracket(value: &Bson) -> Option<usize> {
    Some(match value {
        Bson::Null | Bson::Undefined => NULL,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => 1,
        Bson::String(_) | Bson::Symbol(_) => 2,
        Bson::Document(_) => 3,
        Bson::Binary(_) => 4,
        Bson::ObjectId(_) => 5,
        Bson::Boolean(_) => 6,
        Bson::DateTime(_) => 7,
        Bson::Timestamp(_) => 8,
        _ => return None,
    })
}

/// The `$type` aliases of the brackets `from..to`.
fn types_between(from: usize, to: usize) -> Vec<&'static str> {
    BRACKETS
        .get(from..to)
        .unwrap_or_default()
        .iter()
        .flat_map(|b| b.iter().copied())
        .collect()
}

/// The value at the dotted `path` of `doc` (`null` when missing).
fn value_at(doc: &Document, path: &str) -> Bson {
    let mut current = Bson::Document(doc.clone());
    for part in path.split('.') {
        current = match current {
            Bson::Document(d) => d.get(part).cloned().unwrap_or(Bson::Null),
            _ => return Bson::Null,
        };
    }
    current
}

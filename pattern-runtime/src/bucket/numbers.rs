//! Window arithmetic and the numbers of summaries, shared by both layouts: array buckets
//! (`write`) and keyed windows (`keyed`).

use std::cmp::Ordering;

use bson::{Bson, DateTime, Document};

/// `ms` rounded down to a multiple of `span_ms`. Near `i64::MIN` the window's start is below
/// it: the earliest time stands for it.
pub(crate) fn align(ms: i64, span_ms: i64) -> i64 {
    ms.div_euclid(span_ms)
        .checked_mul(span_ms)
        .unwrap_or(i64::MIN)
}

/// The numeric values of `field` among a group's measurements.
pub(crate) fn numbers<'a>(items: &'a [(Document, DateTime)], field: &str) -> Vec<&'a Bson> {
    items
        .iter()
        .filter_map(|i| i.0.get(field))
        .filter(|v| number(v).is_some())
        .collect()
}

/// An Int32 when it fits (what the shell sends), else an Int64.
pub(crate) use crate::schema::shape::narrowest as small_int;

pub(crate) fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) if !n.is_nan() => Some(*n),
        _ => None,
    }
}

pub(crate) fn extreme<'a>(values: &[&'a Bson], want: Ordering) -> Option<&'a Bson> {
    values
        .iter()
        .copied()
        .reduce(|best, v| match (number(v), number(best)) {
            (Some(a), Some(b)) if a.partial_cmp(&b) == Some(want) => v,
            _ => best,
        })
}

/// The sum of a chunk's values: exact in integers (as the server's `$inc` would be), a double as
/// soon as one value is.
pub(crate) fn sum(values: &[&Bson]) -> Bson {
    if let [one] = values {
        return (*one).clone();
    }
    let mut int: Option<i64> = Some(0);
    let mut float = 0.0;
    for v in values {
        match v {
            Bson::Int32(n) => int = int.and_then(|s| s.checked_add(i64::from(*n))),
            Bson::Int64(n) => int = int.and_then(|s| s.checked_add(*n)),
            _ => int = None,
        }
        float += number(v).unwrap_or(0.0);
    }
    // As the server's `$inc` keeps it: an Int32 while every value is one and the sum fits.
    let all_int32 = values.iter().all(|v| matches!(v, Bson::Int32(_)));
    match int {
        Some(s) if all_int32 => small_int(s),
        Some(s) => Bson::Int64(s),
        None => Bson::Double(float),
    }
}

/// [`sum`], or [`Error::InvalidValue`] naming `field` when the sum of one write's integers
/// would leave the 64-bit range (which `sum` would make a double, and the server refuses when
/// it adds to a stored sum). Floats add up as `f64` does: past `f64::MAX`, to infinity.
pub(crate) fn checked_sum(values: &[&Bson], field: &str) -> crate::error::Result<Bson> {
    let total = sum(values);
    let integers = values
        .iter()
        .all(|v| matches!(v, Bson::Int32(_) | Bson::Int64(_)));
    if integers && matches!(total, Bson::Double(_)) {
        return Err(crate::error::Error::InvalidValue {
            field: field.to_owned(),
            reason: "the sum of its integers in one window would leave the 64-bit range".to_owned(),
        });
    }
    Ok(total)
}

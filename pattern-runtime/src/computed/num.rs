//! The numbers computed fields add up and compare: [`Num`], an integer or a float as the
//! server's arithmetic treats them, and [`agrees`], the check's equality.

use bson::Bson;

use super::Aggregate;
use crate::schema::shape::narrowest;

/// A BSON number, as the sums and comparisons need it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub(super) fn of(value: Option<&Bson>) -> Option<Num> {
        match value? {
            Bson::Int32(n) => Some(Num::Int(i64::from(*n))),
            Bson::Int64(n) => Some(Num::Int(*n)),
            Bson::Double(n) => Some(Num::Float(*n)),
            _ => None,
        }
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(n) => n as f64,
            Num::Float(n) => n,
        }
    }

    pub(super) fn minus(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.wrapping_sub(b)),
            (a, b) => Num::Float(a.as_f64() - b.as_f64()),
        }
    }

    /// `self + other`; `None` when integers overflow (the server would widen them).
    pub(super) fn plus(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_add(b).map(Num::Int),
            (a, b) => Some(Num::Float(a.as_f64() + b.as_f64())),
        }
    }

    pub(super) fn negated(self) -> Num {
        match self {
            Num::Int(n) => Num::Int(n.wrapping_neg()),
            Num::Float(n) => Num::Float(-n),
        }
    }

    pub(super) fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    pub(super) fn bson(self) -> Bson {
        match self {
            Num::Int(n) => narrowest(n),
            Num::Float(n) => Bson::Double(n),
        }
    }
}

/// Whether a stored value equals the computed one: numbers by value (to a relative 1e-9 when a
/// double is involved), `null` and missing alike only for a min or max.
pub(super) fn agrees(aggregate: Aggregate, stored: Option<&Bson>, computed: &Bson) -> bool {
    match (Num::of(stored), Num::of(Some(computed))) {
        (Some(Num::Int(a)), Some(Num::Int(b))) => a == b,
        (Some(a), Some(b)) => {
            let (a, b) = (a.as_f64(), b.as_f64());
            (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
        }
        (None, None) => {
            matches!(aggregate, Aggregate::Min | Aggregate::Max)
                && matches!(stored, None | Some(Bson::Null))
                && matches!(computed, Bson::Null)
        }
        _ => false,
    }
}

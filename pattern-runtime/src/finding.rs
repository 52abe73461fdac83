//! What the [doctor](mod@crate::doctor) reports: the types both the patterns (through
//! [`PatternSpec::audit`](crate::schema::PatternSpec::audit)) and the doctor use, below both.

use std::cmp::Ordering;
use std::fmt;

use bson::Bson;

/// What a finding is about: one line of the modelling checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Check {
    /// An array field (`Vec`, a set) no pattern or `#[bounded(n)]` keeps bounded.
    UnboundedArray,
    /// An array over its `#[bounded(n)]` bound in a stored document.
    OverBound,
    /// A stored document over 1 MiB (the checklist's guideline; MongoDB's limit is 16 MiB).
    LargeDocument,
    /// A stored document nested deeper than 3 levels of embedded documents.
    DeepNesting,
    /// A declared index the server does not have.
    MissingIndex,
    /// An index on the server no model declares.
    UndeclaredIndex,
    /// An index with no access since the server started (`$indexStats`).
    UnusedIndex,
    /// An index whose keys begin another index's keys: the longer one serves its queries.
    PrefixIndex,
    /// A declared TTL index the server does not have: the data never expires.
    MissingTtl,
    /// A subset array over its limit, out of its order, or a count that disagrees with the full
    /// collection.
    SubsetDrift,
    /// A computed value that disagrees with its source documents.
    ComputedDrift,
    /// An extended-reference copy that differs from its source document.
    StaleCopy,
    /// A bucket holding more measurements than its `max_count`.
    BucketOverCap,
    /// A tree node whose ancestors, or a holder whose path, disagrees with the parents.
    TreeDrift,
    /// An outlier document whose count or flag disagrees with its items.
    OutlierDrift,
    /// A two-way relation whose two sides disagree.
    TwoWayDrift,
    /// An attribute array holding one key twice, or a key a query cannot name.
    AttributeDrift,
    /// A preallocated slot whose bitmap has bits past its sub-slots, or a slot allocated twice.
    GridDrift,
    /// A collection not sharded on its declared shard key, on a sharded cluster.
    ShardKey,
    /// Documents stored in an older schema version, or in one the model does not declare.
    SchemaVersions,
    /// Stored documents the model's declared validator refuses.
    Validator,
    /// Documents a pattern keeps for a document that no longer exists: a subset's full items
    /// whose parent is gone, a sharded counter's shards of a deleted document.
    Orphans,
}

impl Check {
    /// A short name: `unbounded array`, `unused index`, ...
    pub fn name(self) -> &'static str {
        match self {
            Check::UnboundedArray => "unbounded array",
            Check::OverBound => "array over its bound",
            Check::LargeDocument => "large document",
            Check::DeepNesting => "deep nesting",
            Check::MissingIndex => "missing index",
            Check::UndeclaredIndex => "undeclared index",
            Check::UnusedIndex => "unused index",
            Check::PrefixIndex => "prefix index",
            Check::MissingTtl => "missing TTL",
            Check::SubsetDrift => "subset drift",
            Check::ComputedDrift => "computed drift",
            Check::StaleCopy => "stale copy",
            Check::BucketOverCap => "bucket over its cap",
            Check::TreeDrift => "tree drift",
            Check::OutlierDrift => "outlier drift",
            Check::TwoWayDrift => "two-way drift",
            Check::AttributeDrift => "attribute drift",
            Check::GridDrift => "grid drift",
            Check::ShardKey => "shard key",
            Check::SchemaVersions => "schema versions",
            Check::Validator => "fails the validator",
            Check::Orphans => "orphaned documents",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem the doctor found: where, how much, and the fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What kind of problem.
    pub check: Check,
    /// The model it concerns (`None` for an index no model declares).
    pub model: Option<&'static str>,
    /// The collection.
    pub collection: String,
    /// The field (BSON name), index name or document `_id` it is about.
    pub subject: String,
    /// What was measured: `2.1 MiB`, `0 accesses since 2026-11-24 00:59`, ...
    pub figure: String,
    /// What to do about it: the attribute to add, the call that repairs it, the index to drop.
    pub fix: String,
    /// The `_id`s of the documents of `collection` it concerns, where the check lists them
    /// (pattern drift): what the pattern's `repair` starts from. For stale extended-reference
    /// copies, the *source* documents' `_id`s (what `rebuild` takes). Empty for a finding about
    /// a field or an index.
    pub documents: Vec<Bson>,
}

impl Finding {
    /// The same finding about the documents `ids`.
    #[must_use]
    pub fn about(mut self, ids: impl IntoIterator<Item = Bson>) -> Self {
        self.documents = ids.into_iter().collect();
        self
    }
}

/// What a pattern handle's `check()` found: the same shape for every pattern
/// (`Tree::check`, `Subset::check`, `Outlier::check`, ...). The check reads every stored
/// document the pattern keeps data or invariants in, a page at a time, and writes nothing;
/// the [doctor](mod@crate::doctor) runs the same checks over a sample.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CheckReport {
    /// Documents read.
    pub examined: u64,
    /// Each problem, with the documents it concerns and the call that repairs it.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Every document a finding concerns, each once.
    pub fn documents(&self) -> Vec<Bson> {
        let mut seen = std::collections::HashSet::new();
        self.findings
            .iter()
            .flat_map(|f| f.documents.iter())
            .filter(|id| seen.insert(id_key(id)))
            .cloned()
            .collect()
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_report(f, (self.examined, "read"), (&self.findings, ""))
    }
}

/// What a pattern handle's `repair()` did: the same shape for every pattern. A repair
/// rewrites what the check found from what it derives from (the parents, the sources, the
/// items), then checks again: `left` is what it could not repair (an orphan whose owner does
/// not exist, a node whose parents loop).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Documents rewritten.
    pub repaired: u64,
    /// What a check after the repair still finds.
    pub left: Vec<Finding>,
}

impl RepairReport {
    /// Whether nothing is left to repair.
    pub fn is_clean(&self) -> bool {
        self.left.is_empty()
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_report(f, (self.repaired, "repaired"), (&self.left, " left"))
    }
}

/// What a pattern handle's `rebuild(id)` did: the same shape for every pattern. A rebuild
/// rewrites one document's derived data (its computed values, the copies of it, a parent's
/// subset, an outlier's count and flag) from what it derives from, writing only what differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RebuildReport {
    /// Documents rewritten: 0 when everything already agreed.
    pub repaired: u64,
}

impl RebuildReport {
    pub(crate) fn new(repaired: u64) -> Self {
        RebuildReport { repaired }
    }
}

impl fmt::Display for RebuildReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} repaired", self.repaired)
    }
}

/// A report as its `Display` writes it: `{documents} {done}, {findings}{left}`, then one
/// finding a line.
fn write_report(
    f: &mut fmt::Formatter<'_>,
    (documents, done): (u64, &str),
    (findings, left): (&[Finding], &str),
) -> fmt::Result {
    write!(
        f,
        "{} {done}, {}{left}",
        plural(documents, "document"),
        plural(findings.len() as u64, "finding")
    )?;
    for finding in findings {
        write!(f, "\n{finding}")?;
    }
    Ok(())
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {} · {} ({}): {}\n    fix: {}",
            self.check,
            self.collection,
            self.subject,
            self.model.unwrap_or("no model"),
            self.figure,
            self.fix
        )
    }
}

/// `1 finding`, `2 findings`: every count in a report's text.
pub(crate) fn plural(n: impl TryInto<u64>, what: &str) -> String {
    let n: u64 = n.try_into().unwrap_or(u64::MAX);
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// How an array field is kept bounded, as its pattern tells the doctor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded {
    /// The array field's BSON name.
    pub field: &'static str,
    /// What bounds it: `subset, limit 10`, `outlier overflow`, ...
    pub by: &'static str,
    /// The most items it holds in one document, where the pattern keeps a number (a subset's
    /// `limit`, an outlier's, `#[bounded(n)]`): the validator's `maxItems`.
    pub max: Option<u32>,
}

impl Bounded {
    /// `field`, bounded by `by`, with no number of items the pattern keeps.
    pub fn new(field: &'static str, by: &'static str) -> Self {
        Bounded {
            field,
            by,
            max: None,
        }
    }

    /// The same, holding at most `max` items in one document.
    #[must_use]
    pub fn at_most(self, max: u32) -> Self {
        Bounded {
            max: Some(max),
            ..self
        }
    }
}

/// The order of two stored values of one type: numbers by value, strings, dates, ObjectIds,
/// booleans; `None` across types (what a check then leaves alone).
pub(crate) fn compare(a: &Bson, b: &Bson) -> Option<Ordering> {
    match (a, b) {
        (Bson::String(x), Bson::String(y)) => Some(x.cmp(y)),
        (Bson::DateTime(x), Bson::DateTime(y)) => Some(x.cmp(y)),
        (Bson::ObjectId(x), Bson::ObjectId(y)) => Some(x.cmp(y)),
        (Bson::Boolean(x), Bson::Boolean(y)) => Some(x.cmp(y)),
        _ => number(a)?.partial_cmp(&number(b)?),
    }
}

/// A key under which two stored values the server takes as equal (`1`, `1i64`, `1.0`) are
/// equal: what a map by `_id` needs when the same id was written as another numeric type. The
/// toolkit's one rule for ids, keys and pointers held in maps (trees, counters, computed
/// targets, relations, audits).
pub(crate) fn id_key(value: &Bson) -> String {
    match value {
        Bson::Int32(n) => format!("n:{n}"),
        Bson::Int64(n) => format!("n:{n}"),
        #[allow(clippy::cast_possible_truncation, clippy::float_cmp)]
        Bson::Double(d) if d.fract() == 0.0 && d.abs() < 9.0e15 => format!("n:{}", *d as i64),
        other => format!("{other:?}"),
    }
}

/// Whether two stored values are the same bytes: what a copy of a value is, NaN included (NaN
/// is not equal to itself as a number, yet a copy of NaN is a faithful copy).
pub(crate) fn same_value(a: Option<&Bson>, b: Option<&Bson>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a == b || {
                let bytes = |v: &Bson| {
                    let mut d = bson::Document::new();
                    d.insert("v", v.clone());
                    bson::RawDocumentBuf::try_from(&d)
                        .ok()
                        .map(|r| r.into_bytes())
                };
                bytes(a).is_some() && bytes(a) == bytes(b)
            }
        }
        _ => false,
    }
}

/// Whether two stored values hold the same data as the server compares it: numbers by value
/// whatever their width (an `Int32` written where a type writes an `Int64`, an index option
/// `1` listed as `1.0`), documents field by
/// field, arrays item by item, anything else as the same bytes.
pub(crate) fn same_stored(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_stored(v, w)))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_stored(v, w))
        }
        (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
            let int = |v: &Bson| match v {
                Bson::Int32(n) => i64::from(*n),
                Bson::Int64(n) => *n,
                _ => 0,
            };
            int(a) == int(b)
        }
        _ => match (number(a), number(b)) {
            #[allow(clippy::float_cmp)] // the same number, as the server compares it
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => same_value(Some(a), Some(b)),
        },
    }
}

/// A stored number as an `f64`.
pub(crate) fn number(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(n) => Some(f64::from(*n)),
        #[allow(clippy::cast_precision_loss)]
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) => Some(*n),
        _ => None,
    }
}

/// Up to three `_id`s, for a finding's figure: `e.g. 7, 12, 31`.
pub(crate) fn examples(ids: &[Bson]) -> String {
    let shown: Vec<String> = ids.iter().take(3).map(ToString::to_string).collect();
    let more = if ids.len() > 3 { ", ..." } else { "" };
    format!("e.g. `_id` {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_equal_as_the_server_takes_them() {
        assert_eq!(id_key(&Bson::Int32(1)), id_key(&Bson::Int64(1)));
        assert_eq!(id_key(&Bson::Double(1.0)), id_key(&Bson::Int64(1)));
        assert_ne!(id_key(&Bson::Double(1.5)), id_key(&Bson::Int64(1)));
        assert_ne!(id_key(&Bson::String("1".into())), id_key(&Bson::Int32(1)));
    }

    #[test]
    fn orders() {
        assert_eq!(
            compare(&Bson::Int32(2), &Bson::Double(1.5)),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(&Bson::String("a".into()), &Bson::Int32(1)), None);
    }
}

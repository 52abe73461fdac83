//! The source's side: one `Feed` per (target, source, `by`), the dependent in the map of
//! derived data that moves each target by what a source write changed, or recomputes it.

use super::*;
use crate::schema::shape::narrowest;
use crate::schema::{Applying, Changed};

/// The computed fields of one target model fed by one source model through one `by` field: what
/// one source document contributes to, and what one aggregation recomputes.
#[derive(Debug, Clone)]
pub(super) struct Feed {
    pub(super) target: &'static ModelSchema,
    pub(super) source: &'static ModelSchema,
    pub(super) by: &'static str,
    pub(super) specs: Vec<&'static ComputedFromSpec>,
}

impl Feed {
    /// The feeds of `specs`, grouped by source and `by`.
    pub(super) fn group(
        target: &'static ModelSchema,
        specs: impl Iterator<Item = &'static ComputedFromSpec>,
    ) -> Vec<Feed> {
        let mut feeds: Vec<Feed> = Vec::new();
        for spec in specs {
            let source = spec.source();
            match feeds
                .iter_mut()
                .find(|f| std::ptr::eq(f.source, source) && f.by == spec.by())
            {
                Some(f) => f.specs.push(spec),
                None => feeds.push(Feed {
                    target,
                    source,
                    by: spec.by(),
                    specs: vec![spec],
                }),
            }
        }
        feeds
    }

    /// The source fields this feed reads.
    pub(super) fn source_fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.specs.iter().filter_map(|s| s.source_field())
    }

    /// What this feed cannot keep in `after`, a source as written (or the fields an update
    /// sets): a NaN or infinite summed field, or a `by` value that cannot name one target (an
    /// operator document, a regex, ...).
    pub(super) fn refused(&self, after: &Document) -> Option<Abort> {
        for field in self.source_fields() {
            if let Some(Bson::Double(v)) = after.get(field)
                && !v.is_finite()
            {
                return Some(Abort::NotFinite { field });
            }
        }
        let p = pointer(Some(after), self.by)?;
        match crate::literal::check_id(self.by, &p) {
            Err(Error::InvalidValue { reason, .. }) => Some(Abort::BadPointer {
                field: self.by,
                reason,
            }),
            _ => None,
        }
    }

    /// The `$group` stage of this feed's sources, one accumulator per spec (`f0`, `f1`, ...).
    fn group_stage(&self) -> Document {
        let mut group = doc! { "_id": format!("${}", self.by) };
        for (i, spec) in self.specs.iter().enumerate() {
            group.insert(
                format!("f{i}"),
                spec.aggregate()
                    .accumulator(spec.source_field().unwrap_or_default()),
            );
        }
        doc! { "$group": group }
    }
}

/// A `by` value that points at a target (not `null`, not missing).
fn pointer(doc: Option<&Document>, by: &str) -> Option<Bson> {
    doc?.get(by).filter(|b| !matches!(b, Bson::Null)).cloned()
}

// ----- the writes of a source -----

/// Why a transaction body gave up: returned as its error, so the transaction is aborted and
/// nothing it wrote is kept.
#[derive(Debug, Clone)]
pub(super) enum Abort {
    /// The source document to change does not exist.
    NoSource,
    /// A target a source points at does not exist.
    NoTarget {
        collection: &'static str,
        id: Box<Bson>,
    },
    /// A summed field is NaN or infinite.
    NotFinite { field: &'static str },
    /// A sum that the contribution would take out of its range: past the largest finite
    /// double (`integers: false`), or out of the 64-bit integers.
    SumOutOfRange {
        fields: String,
        target: Box<Bson>,
        integers: bool,
    },
    /// A `by` pointer (given, or stored by someone else) that cannot name one target: an
    /// operator document, a regex, ...
    BadPointer { field: &'static str, reason: String },
}

/// For each integer of the increments `inc`: the condition under which adding it keeps the
/// field within the 64-bit integers, what an integer sum's update adds to its filter
/// (`{$not: {$gt: MAX - d}}`, so that a missing or `null` sum passes). An operator `$inc` past
/// the range is refused by the server, but a pipeline's `$add` (the update when a `$min` is
/// kept) would store a double instead.
fn integer_guard(inc: &Document) -> Document {
    let mut guard = Document::new();
    for (field, value) in inc {
        let d = match value {
            Bson::Int32(d) => i64::from(*d),
            Bson::Int64(d) => *d,
            _ => continue,
        };
        if d > 0 {
            guard.insert(field, doc! { "$not": { "$gt": i64::MAX - d } });
        } else if d < 0 {
            guard.insert(field, doc! { "$not": { "$lt": i64::MIN - d } });
        }
    }
    guard
}

/// The fields of `inc` whose sum on `stored` leaves its range (an integer past the 64-bit
/// range, a double past the largest finite one), and whether they are integers.
fn out_of_range(stored: &Document, inc: &Document) -> (Vec<String>, bool) {
    let ints = crate::error::overflowing(stored, &doc! { "$inc": inc.clone() });
    if !ints.is_empty() {
        return (ints, true);
    }
    let floats = inc
        .iter()
        .filter_map(|(field, d)| {
            let d = d.as_f64()?;
            let s = stored
                .get(field)
                .and_then(crate::finding::number)
                .unwrap_or(0.0);
            (s + d).is_infinite().then(|| field.clone())
        })
        .collect();
    (floats, false)
}

/// For each double of the increments `inc`: the condition under which adding it leaves the
/// field finite, what a float sum's update adds to its filter. A sum `s` plus `d > 0` rounds to
/// infinity once `s + d` reaches the midpoint between `f64::MAX` and the next power of two,
/// `MAX + 2^970`: the field must stay below `(MAX - d) + 2^970` (`{$not: {$gte: ..}}`, so that
/// a missing or `null` sum passes), and symmetrically for `d < 0`. The bound is computed in
/// doubles, so it may refuse a sum one unit in the last place short of overflowing; an
/// increment too small to move a sum near `MAX` gives an infinite bound, which every sum
/// meets.
fn finite_guard(inc: &Document) -> Document {
    let half_ulp = 2f64.powi(970);
    let mut guard = Document::new();
    for (field, value) in inc {
        match value {
            Bson::Double(d) if *d > 0.0 => {
                guard.insert(
                    field,
                    doc! { "$not": { "$gte": (f64::MAX - d) + half_ulp } },
                );
            }
            Bson::Double(d) if *d < 0.0 => {
                guard.insert(
                    field,
                    doc! { "$not": { "$lte": (-f64::MAX - d) - half_ulp } },
                );
            }
            _ => {}
        }
    }
    guard
}

/// The driver error that aborts the transaction: a typed [`Error`] (through
/// [`refusal`](crate::error::refusal)) for everything but a missing source, which only the
/// caller can name.
pub(super) fn abort(a: Abort) -> mongodb::error::Error {
    let error = match a {
        Abort::NoSource => return mongodb::error::Error::custom(Abort::NoSource),
        Abort::NoTarget { collection, id } => Error::NotFound {
            collection: collection.to_owned(),
            missing: Box::new(crate::error::Missing::Document { id: *id }),
        },
        Abort::BadPointer { field, reason } => Error::InvalidValue {
            field: field.to_owned(),
            reason,
        },
        Abort::SumOutOfRange {
            fields,
            target,
            integers: false,
        } => Error::InvalidValue {
            field: fields,
            reason: format!(
                "the sum of `{target}` would leave the range of a double (past ±{:e}): nothing \
                 was written",
                f64::MAX
            ),
        },
        Abort::SumOutOfRange {
            fields,
            target,
            integers: true,
        } => Error::InvalidValue {
            field: fields,
            reason: format!(
                "the sum of `{target}` would leave the 64-bit integer range: nothing was written"
            ),
        },
        Abort::NotFinite { field } => Error::InvalidValue {
            field: field.to_owned(),
            reason: "a field computed from it (a sum, a min or a max) would keep a NaN or an \
                     infinity for good"
                .to_owned(),
        },
    };
    crate::error::refusal(error)
}

impl Dependent for Feed {
    fn source(&self) -> &'static ModelSchema {
        self.source
    }

    fn pattern(&self) -> &'static str {
        "computed"
    }

    fn reads(&self) -> Vec<&'static str> {
        std::iter::once(self.by)
            .chain(self.source_fields())
            .collect()
    }

    fn describe(&self) -> String {
        let fields: Vec<&str> = self.specs.iter().map(|s| s.field()).collect();
        format!(
            "{}.{} (computed from {} by `{}`)",
            self.target.name(),
            fields.join(", "),
            self.source.name(),
            self.by
        )
    }

    fn check_written(&self, fields: &Document) -> Result<()> {
        match self.refused(fields) {
            Some(a) => Err(Error::from(abort(a))),
            None => Ok(()),
        }
    }

    fn apply<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        let (db, mut session, changes) = changed.into_parts();
        Box::pin(async move {
            // What other models keep from the computed fields (a copy of a count): the targets
            // touched, watched around the writes, so a copy of a computed value follows it.
            let mut targets: Vec<Bson> = Vec::new();
            for c in changes {
                for d in [&c.before, &c.after].into_iter().flatten() {
                    match d.get(self.by) {
                        None | Some(Bson::Null) => {}
                        Some(Bson::Array(ids)) => targets.extend(ids.iter().cloned()),
                        Some(id) => targets.push(id.clone()),
                    }
                }
            }
            let fields: Vec<&str> = self.specs.iter().map(|s| s.field()).collect();
            let watch = if targets.is_empty() {
                None
            } else {
                crate::derived::watch(
                    db,
                    session.as_deref_mut(),
                    self.target,
                    Some(&fields),
                    &doc! { "_id": { "$in": targets } },
                )
                .await?
            };
            for c in changes {
                self.move_contribution(
                    db,
                    session.as_deref_mut(),
                    c.before.as_ref(),
                    c.after.as_ref(),
                )
                .await?;
            }
            if let Some(watch) = watch {
                watch.after(db, session).await?;
            }
            Ok(())
        })
    }

    fn rebuild<'a>(&'a self, changed: Changed<'a>) -> Applying<'a> {
        Box::pin(self.rebuild_targets(changed.db, changed.session, changed.changes))
    }

    /// Every target: one whose sources are all gone still holds what they summed.
    fn held<'a>(&'a self, db: &'a Database) -> crate::derived::Held<'a> {
        Box::pin(crate::derived::held_in(
            db,
            self.target.collection(),
            self.by,
        ))
    }
}

impl Feed {
    /// [`Dependent::rebuild`]: the targets `changes` point at (before and after), their fields
    /// recomputed from the sources as stored now and written (`$set`) where they exist.
    async fn rebuild_targets(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        changes: &[Change],
    ) -> mongodb::error::Result<()> {
        let mut targets: Vec<Bson> = Vec::new();
        for c in changes {
            for d in [&c.before, &c.after].into_iter().flatten() {
                if let Some(p) = pointer(Some(d), self.by)
                    && crate::literal::check_id(self.by, &p).is_ok()
                    && !targets.iter().any(|t| id_key(t) == id_key(&p))
                {
                    targets.push(p);
                }
            }
        }
        let all: Vec<&'static ComputedFromSpec> = self.specs.clone();
        for target in targets {
            self.recompute_target(
                db,
                s.as_deref_mut(),
                &target,
                &all,
                "a repair of the sources",
            )
            .await?;
        }
        Ok(())
    }

    /// Recomputes `specs` of the target `target` from its sources (one `$group`) and writes
    /// them (`$set`), what derives from them following; `why` goes into the event.
    async fn recompute_target(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        target: &Bson,
        specs: &[&'static ComputedFromSpec],
        why: &'static str,
    ) -> mongodb::error::Result<()> {
        self.upgrade_sources(db, s.as_deref_mut(), std::slice::from_ref(target))
            .await?;
        let values = aggregate_one(db, s.as_deref_mut(), self, target, specs).await?;
        let extremes = specs
            .iter()
            .all(|spec| matches!(spec.aggregate(), Aggregate::Min | Aggregate::Max));
        let watch = self
            .watch_target(db, s.as_deref_mut(), target, extremes)
            .await?;
        // A NaN or an infinity summed from sources written around the toolkit: refused, as
        // the toolkit's own writes refuse one (the value would stay for good).
        if let Some((field, _)) = values
            .iter()
            .find(|(_, v)| matches!(v, Bson::Double(d) if !d.is_finite()))
        {
            return Err(crate::error::refusal(Error::InvalidValue {
                field: field.clone(),
                reason: format!(
                    "its sources, as stored, compute to a NaN or an infinity for `{target}`: \
                     fix the source documents"
                ),
            }));
        }
        let collection = self.target_collection(db);
        // Only where a value differs (numerically: a stored `Int64` 0 is a computed `Int32` 0):
        // a target already right is not rewritten, and keeps its stored types.
        let differs: Vec<Document> = values
            .iter()
            .map(|(field, value)| doc! { field: { "$ne": value.clone() } })
            .collect();
        if differs.is_empty() {
            return Ok(());
        }
        let write = collection.update_one(
            doc! { "_id": target.clone(), "$or": differs },
            doc! { "$set": values.clone() },
        );
        let result = in_session!(write, s.as_deref_mut())?;
        if let Some(watch) = watch {
            watch.after(db, s).await?;
        }
        tracing::debug!(
            target_collection = self.target.collection(),
            target_id = %target,
            values = %values,
            matched = result.matched_count,
            after = why,
            "computed fields recomputed from their sources"
        );
        Ok(())
    }

    /// Moves one source's contribution from `before` to `after` (either missing for an insert
    /// or a delete): the update of the old target and of the new one (one when they are the
    /// same), then a recomputation of the min and max fields a removal may have changed.
    async fn move_contribution(
        &self,
        db: &Database,
        mut s: Option<&mut ClientSession>,
        before: Option<&Document>,
        after: Option<&Document>,
    ) -> mongodb::error::Result<()> {
        let feed = self;
        if let Some(a) = after.and_then(|after| feed.refused(after)) {
            return Err(abort(a));
        }
        let old = pointer(before, feed.by);
        let new = pointer(after, feed.by);
        // A pointer is an equality in the targets' filters: one that would match another
        // target (stored that way by someone else, or moved in by `$rename`) is refused,
        // and the transaction writes nothing.
        for p in old.iter().chain(new.iter()) {
            if let Err(Error::InvalidValue { reason, .. }) = crate::literal::check_id(feed.by, p) {
                return Err(abort(Abort::BadPointer {
                    field: feed.by,
                    reason,
                }));
            }
        }
        let moved = old.as_ref().map(id_key) != new.as_ref().map(id_key);
        let targets = feed.target_collection(db);
        // Per target: the update, whether the target must exist, the min/max to recompute.
        let mut writes: Vec<(Bson, Contribution, bool)> = Vec::new();
        if let Some(old) = &old {
            let change = if moved {
                contribution(feed, before, None)
            } else {
                contribution(feed, before, after)
            };
            // A target the source already pointed at may be gone: nothing to keep there.
            writes.push((old.clone(), change, false));
        }
        if let (Some(new), true) = (&new, moved) {
            writes.push((new.clone(), contribution(feed, None, after), true));
        }
        for (target, (update, redo, guard, inc), must_exist) in writes {
            if !update.is_empty() {
                // A sum stays in its range: the update applies only while the sum has room for
                // the increment (a missing or null sum has); otherwise nothing is written.
                let mut filter = doc! { "_id": target.clone() };
                filter.extend(guard.clone());
                let write = targets.update_one(filter, update.clone());
                let fields: Vec<&str> = feed.specs.iter().map(|s| s.field()).collect();
                let what = format!("{}.{} of `{target}`", feed.target.name(), fields.join(", "));
                let result = match in_session!(write, s.as_deref_mut()) {
                    Ok(result) => result,
                    Err(e) => {
                        let one = doc! { "_id": target.clone() };
                        let ops = match &update {
                            Update::Operators(ops) => ops.clone(),
                            Update::Pipeline(_) => Document::new(),
                        };
                        let e = crate::error::update_overflow(e, &targets, &one, &ops, &what);
                        // A pipeline names no `$inc`: every field it keeps.
                        let e = crate::error::inc_overflow(e.await, &fields, &what);
                        return Err(e);
                    }
                };
                tracing::debug!(
                    target_collection = feed.target.collection(),
                    target_id = %target,
                    update = %update,
                    matched = result.matched_count,
                    "computed fields updated"
                );
                if result.matched_count == 0 && !guard.is_empty() {
                    let find = targets.find_one(doc! { "_id": target.clone() });
                    if let Some(stored) = in_session!(find, s.as_deref_mut())? {
                        // The fields whose guard failed; all of them if none does now.
                        let (mut fields, integers) = out_of_range(&stored, &inc);
                        if fields.is_empty() {
                            fields = guard.keys().cloned().collect();
                        }
                        return Err(abort(Abort::SumOutOfRange {
                            fields: fields.join(", "),
                            target: Box::new(target),
                            integers,
                        }));
                    }
                }
                if result.matched_count == 0 && must_exist {
                    return Err(abort(Abort::NoTarget {
                        collection: feed.target.collection(),
                        id: Box::new(target),
                    }));
                }
            }
            if !redo.is_empty() {
                self.recompute_target(db, s.as_deref_mut(), &target, &redo, "a removal")
                    .await?;
            }
        }
        Ok(())
    }
}

impl Feed {
    /// Before an update of the target `id`'s computed fields (its min and max only, when
    /// `extremes`): what the target's own dependents read, when one reads them.
    async fn watch_target(
        &self,
        db: &Database,
        s: Option<&mut ClientSession>,
        id: &Bson,
        extremes: bool,
    ) -> mongodb::error::Result<Option<derived::Watch>> {
        let fields: Vec<&str> = self
            .specs
            .iter()
            .filter(|spec| !extremes || matches!(spec.aggregate(), Aggregate::Min | Aggregate::Max))
            .map(|spec| spec.field())
            .collect();
        derived::watch(
            db,
            s,
            self.target,
            Some(&fields),
            &doc! { "_id": id.clone() },
        )
        .await
    }

    fn target_collection(&self, db: &Database) -> Collection<Document> {
        db.collection(self.target.collection())
    }

    fn source_collection(&self, db: &Database) -> Collection<Document> {
        db.collection(self.source.collection())
    }
}

/// The update that moves one source's contribution to one target from `before` to `after`
/// (both pointing at that target; either missing), and the min/max specs to recompute because a
/// value left or moved away from the extreme.
fn contribution(feed: &Feed, before: Option<&Document>, after: Option<&Document>) -> Contribution {
    let mut inc = Document::new();
    let mut max = Document::new();
    let mut min = Document::new();
    let mut redo = Vec::new();
    let value = |d: Option<&Document>, spec: &ComputedFromSpec| {
        d.and_then(|d| Num::of(d.get(spec.source_field().unwrap_or_default())))
    };
    for spec in &feed.specs {
        let (old, new) = (value(before, spec), value(after, spec));
        match spec.aggregate() {
            Aggregate::Count => {
                let delta = i64::from(after.is_some()) - i64::from(before.is_some());
                if delta != 0 {
                    inc.insert(spec.field(), narrowest(delta));
                }
            }
            Aggregate::Sum => {
                let delta = match (old, new) {
                    (Some(o), Some(n)) => Some(n.minus(o)),
                    (Some(o), None) => Some(o.negated()),
                    (None, Some(n)) => Some(n),
                    (None, None) => None,
                };
                if let Some(d) = delta.filter(|d| !d.is_zero()) {
                    inc.insert(spec.field(), d.bson());
                }
            }
            Aggregate::Max | Aggregate::Min => {
                let lowered = match (old, new) {
                    (Some(o), Some(n)) => {
                        let (o, n) = (o.as_f64(), n.as_f64());
                        if spec.aggregate() == Aggregate::Max {
                            n < o
                        } else {
                            n > o
                        }
                    }
                    (Some(_), None) => true,
                    _ => false,
                };
                if lowered {
                    redo.push(*spec);
                } else if let Some(n) = new {
                    let ops = if spec.aggregate() == Aggregate::Max {
                        &mut max
                    } else {
                        &mut min
                    };
                    // `$max`/`$min` replace the stored type: the field's own.
                    let value = match n {
                        Num::Int(i) => {
                            crate::schema::shape::integer_for(feed.target, spec.field(), i)
                        }
                        Num::Float(f) => Bson::Double(f),
                    };
                    ops.insert(spec.field(), value);
                }
            }
        }
    }
    let mut guard = finite_guard(&inc);
    guard.extend(integer_guard(&inc));
    let increments = inc.clone();
    if min.is_empty() {
        let mut update = Document::new();
        for (op, fields) in [("$inc", inc), ("$max", max)] {
            if !fields.is_empty() {
                update.insert(op, fields);
            }
        }
        return (Update::Operators(update), redo, guard, increments);
    }
    // `$min` keeps a `null` (it sorts before numbers): a pipeline's `$min` ignores it.
    let mut set = Document::new();
    for (field, delta) in inc {
        let current = doc! { "$ifNull": [format!("${field}"), 0] };
        set.insert(field, doc! { "$add": [current, delta] });
    }
    for (op, fields) in [("$max", max), ("$min", min)] {
        for (field, value) in fields {
            let current = format!("${field}");
            set.insert(field, doc! { op: [current, value] });
        }
    }
    (
        Update::Pipeline(vec![doc! { "$set": set }]),
        redo,
        guard,
        increments,
    )
}

/// A target's update, the min and max fields to recompute after it, and what its filter adds so
/// that a float sum stays finite ([`finite_guard`]).
/// A target's update, the min and max fields to recompute after it, what its filter adds to
/// keep each sum in its range, and the increments.
type Contribution = (Update, Vec<&'static ComputedFromSpec>, Document, Document);

/// The update of one target: operators, or a pipeline when a `$min` must ignore a `null`.
#[derive(Debug, Clone)]
enum Update {
    Operators(Document),
    Pipeline(Vec<Document>),
}

impl Update {
    fn is_empty(&self) -> bool {
        match self {
            Update::Operators(d) => d.is_empty(),
            Update::Pipeline(_) => false,
        }
    }
}

impl fmt::Display for Update {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Update::Operators(d) => write!(f, "{d}"),
            Update::Pipeline(p) => write!(f, "{}", Bson::from(p.clone())),
        }
    }
}

impl From<Update> for mongodb::options::UpdateModifications {
    fn from(u: Update) -> Self {
        match u {
            Update::Operators(d) => d.into(),
            Update::Pipeline(p) => p.into(),
        }
    }
}

/// The values of `specs` for one target, aggregated from its sources: `{field: value}`.
async fn aggregate_one(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    target: &Bson,
    specs: &[&'static ComputedFromSpec],
) -> mongodb::error::Result<Document> {
    let sub = Feed {
        specs: specs.to_vec(),
        ..feed.clone()
    };
    let found = aggregate_many(db, s, &sub, std::slice::from_ref(target)).await?;
    Ok(sub.values(found.get(&id_key(target))))
}

impl Feed {
    /// `{field: value}` of every spec from a `$group` result (the values without sources when
    /// there is none).
    pub(super) fn values(&self, group: Option<&Document>) -> Document {
        self.specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let value = group
                    .and_then(|g| g.get(format!("f{i}")))
                    .cloned()
                    .unwrap_or_else(|| spec.aggregate().empty());
                (spec.field().to_owned(), value)
            })
            .collect()
    }
}

/// One aggregation of the sources of `targets`: their `$group` results, by target key.
pub(super) async fn aggregate_many(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    targets: &[Bson],
) -> mongodb::error::Result<HashMap<String, Document>> {
    aggregate_many_within(db, s, feed, targets, None).await
}

/// [`aggregate_many`] bounded by `max_time` (`maxTimeMS`) when given.
pub(super) async fn aggregate_many_within(
    db: &Database,
    s: Option<&mut ClientSession>,
    feed: &Feed,
    targets: &[Bson],
    max_time: Option<Duration>,
) -> mongodb::error::Result<HashMap<String, Document>> {
    let pipeline = vec![
        doc! { "$match": { feed.by: { "$in": targets.to_vec() } } },
        feed.group_stage(),
    ];
    let sources = feed.source_collection(db);
    let action = match max_time {
        Some(limit) => sources.aggregate(pipeline).max_time(limit),
        None => sources.aggregate(pipeline),
    };
    let found = collect_in!(action, s)?
        .into_iter()
        .map(|d| (id_key(d.get("_id").unwrap_or(&Bson::Null)), d))
        .collect();
    Ok(found)
}

#[cfg(test)]
mod tests;

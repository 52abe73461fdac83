//! The preallocation pattern: a grid of slot documents created ahead of time, one per resource
//! and slot (a room and a day), so that checking availability is a lookup and booking is one
//! atomic conditional update (`#[preallocated]`).
//!
//! A booking system: without preallocation, a booking looks for a conflicting booking
//! and then inserts, and two users who both saw the room free both book it. With one document
//! per `(resourceId, date)` created by a scheduled job, a booking is a `findOneAndUpdate` whose
//! filter requires the slot to be free: of two users who saw it free, one gets it and the other
//! learns it is taken. For a finer grain (meeting rooms by the half hour), the day's document
//! keeps a bitmap: a booking of half hours 18 to 20 is one update whose filter requires those
//! bits clear (`$bitsAllClear`) and which sets them (`$bit`).
//!
//! | option | meaning | default |
//! | --- | --- | --- |
//! | `resource = room_id` | the field naming the resource (a string, an integer or an `ObjectId`) | required |
//! | `slot = date` | the field naming the slot (a `bson::DateTime`, a string such as `"2025-08-20"`, or an integer) | required |
//! | `holder = booked_by` | an `Option<T>` field: `None` while the slot is free, who booked it once booked | one of `holder` and `bitmap` (not both: a whole-slot booking would not see the sub-slots) |
//! | `bitmap = half_hours, sub_slots = 48` | an integer field (`i32`: up to 31 sub-slots, `i64`: up to 63) whose bit `k` is set while sub-slot `k` is booked | one of `holder` and `bitmap` |
//!
//! The unique index `{resource: 1, slot: 1}` is declared with the model and created by
//! [`sync_models`](crate::sync_models): it is what makes allocation idempotent and a lookup one
//! index seek.
//!
//! ```
//! use pattern_runtime::{Error, Model};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, Model)]
//! #[serde(rename_all = "camelCase")]
//! #[preallocated(resource = room_id, slot = date, holder = booked_by)]
//! struct RoomDay {
//!     #[serde(rename = "_id")]
//!     id: bson::oid::ObjectId,
//!     room_id: String,
//!     date: String,
//!     booked_by: Option<String>,
//! }
//!
//! fn free(room: &str, date: &str) -> RoomDay {
//!     RoomDay { id: bson::oid::ObjectId::new(), room_id: room.into(), date: date.into(), booked_by: None }
//! }
//!
//! # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
//! let slots = RoomDay::slots(&db);
//! // The scheduled job: idempotent, one insert per 1 000 slots, never touching a booking.
//! slots.allocate(vec![free("101", "2025-08-20"), free("101", "2025-08-21")]).await?;
//! let booked = slots.book("101", "2025-08-20", "alice").await?;
//! assert_eq!(booked.booked_by.as_deref(), Some("alice"));
//! match slots.book("101", "2025-08-20", "bob").await {
//!     Err(Error::AlreadyBooked { .. }) => {} // bob learns that alice has it
//!     other => panic!("{other:?}"),
//! }
//! assert!(matches!(slots.book("101", "2031-01-01", "bob").await, Err(Error::NotAllocated { .. })));
//! // Two nights, all or nothing, in one transaction.
//! let stay = [("101", "2025-08-21"), ("101", "2025-08-22")];
//! assert!(slots.book_all(&stay, "carol").await.is_err()); // the 22nd was never allocated
//! assert_eq!(slots.available("101", "2025-08-20", "2025-08-23").await?.len(), 1);
//! # Ok(()) }
//! ```
//!
//! # Operations
//!
//! - [`Slots::allocate`] inserts the free slot documents you give it, 1 000 per unordered
//!   `insert`: a slot that exists already is skipped by the unique index (counted as
//!   `existing`), so running it twice creates nothing new and never resets a booking.
//!   [`allocate_with_progress`](Slots::allocate_with_progress) reports after each batch, and
//!   [`allocate_every`](Slots::allocate_every) runs a generator on an interval (the next N
//!   days, say) in a background task that [`Allocator::stop`] ends cleanly.
//! - [`Slots::book`] is one `findAndModify` whose filter requires the holder to be `null`.
//!   When it matches nothing, one read tells why: [`Error::AlreadyBooked`] (with the holder) or
//!   [`Error::NotAllocated`]; never one for the other.
//! - [`Slots::book_all`] books several slots for one holder in one transaction: all of them, or
//!   none (a taken or missing slot undoes the others and returns its error).
//! - [`Slots::cancel`] frees a slot only for its holder; [`Slots::release`] frees it whoever
//!   holds it. [`Slots::available`] lists a resource's free slots in a range of slots, one query
//!   on the unique index.
//! - Bitmaps: [`Slots::book_range`], [`Slots::free_range`] and [`Slots::free_ranges`] (the free
//!   sub-slots as ranges).
//!
//! # Tracing
//!
//! Every operation runs in a span `pattern_runtime::preallocation.<operation>` with `model`,
//! `collection` and the resource and slot where there is one; an allocation batch is an `INFO`
//! event with what it inserted and skipped.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::time::Duration;

use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection, Database};
use serde::Serialize;

use crate::error::{check_size, Error, Result, DUPLICATE_KEY};
use crate::finding::{examples, Check, CheckReport, Finding, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::periodic::{Periodic, Stopped};
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{in_session, transact, Transaction};

/// A model declared `#[preallocated(..)]`: its documents are the slots of a grid. Generated by
/// the derive.
pub trait Preallocated: Model {
    /// Where the resource, the slot, the holder and the bitmap are.
    const SLOTS: &'static SlotSpec;
    /// The resource field's type: what [`Slots`] operations take as the resource (a room
    /// number given to a model whose rooms are `String`s does not compile). [`Bson`] when the
    /// field has `#[serde(with = ..)]`.
    type Resource: Serialize + Send + Sync + 'static;
    /// The slot field's type, as [`Resource`](Preallocated::Resource) is the resource's.
    type Slot: Serialize + Send + Sync + 'static;
}

/// A grid of slots, as static data: `#[preallocated(..)]` on `RoomDay`.
#[derive(Debug, Clone, Copy)]
pub struct SlotSpec {
    parts: SlotParts,
}

/// The parts of a [`SlotSpec`], as generated code writes them. Not a stable API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SlotParts {
    pub model: &'static str,
    pub collection: &'static str,
    pub resource: &'static str,
    pub slot: &'static str,
    pub holder: Option<&'static str>,
    pub bitmap: Option<&'static str>,
    /// How many sub-slots the bitmap has.
    pub sub_slots: u32,
    /// Whether the bitmap is an `i64` (else an `i32`).
    pub wide: bool,
    /// The unique `{resource: 1, slot: 1}`.
    pub index: IndexSpec,
}

impl SlotSpec {
    #[doc(hidden)]
    pub const fn from_parts(parts: SlotParts) -> Self {
        SlotSpec { parts }
    }

    /// The slot model's name.
    pub fn model(&self) -> &'static str {
        self.parts.model
    }

    /// The slots' collection.
    pub fn collection(&self) -> &'static str {
        self.parts.collection
    }

    /// The resource field (BSON name).
    pub fn resource(&self) -> &'static str {
        self.parts.resource
    }

    /// The slot field (BSON name).
    pub fn slot(&self) -> &'static str {
        self.parts.slot
    }

    /// The holder field (BSON name), if the slots are booked whole.
    pub fn holder(&self) -> Option<&'static str> {
        self.parts.holder
    }

    /// The bitmap field (BSON name), if the slots have sub-slots.
    pub fn bitmap(&self) -> Option<&'static str> {
        self.parts.bitmap
    }

    /// How many sub-slots the bitmap has (0 without a bitmap).
    pub fn sub_slots(&self) -> u32 {
        self.parts.sub_slots
    }

    /// The unique `{resource: 1, slot: 1}` index.
    pub fn index(&self) -> &IndexSpec {
        &self.parts.index
    }
}

impl PatternSpec for SlotSpec {
    /// The holder and the bitmap: a booking is one conditional write of them.
    fn kept_fields(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static str)> {
        let why = "the grid books and frees a slot with one conditional write: `book`, `cancel`, \
                   `release`, `book_range` or `free_range` through `Slots`";
        self.holder()
            .into_iter()
            .chain(self.bitmap())
            .map(|f| (f, why))
            .collect()
    }

    fn indexes(
        &'static self,
        _model: &'static ModelSchema,
    ) -> Vec<(&'static str, &'static IndexSpec)> {
        vec![(self.collection(), &self.parts.index)]
    }

    /// Sampled slots allocated twice (same resource and slot: the grid's unique index missing
    /// when they were written), and bitmaps with bits past the sub-slots. One aggregation.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<Finding>>>> {
        Some(Box::pin(audit_grid(self, sample)))
    }
}

/// The bits of a bitmap past `sub_slots`.
fn stray_bits(value: Option<&Bson>, sub_slots: u32) -> bool {
    let bits = match value {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        _ => return false,
    };
    let Bson::Int64(mask) = full_mask(sub_slots) else {
        return false;
    };
    bits & !mask != 0
}

async fn audit_grid(spec: &'static SlotSpec, sample: &Sample<'_>) -> Result<Vec<Finding>> {
    if sample.documents.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<Bson> = sample
        .documents
        .iter()
        .map(|d| {
            Bson::Document(doc! {
                spec.resource(): d.get(spec.resource()).cloned().unwrap_or(Bson::Null),
                spec.slot(): d.get(spec.slot()).cloned().unwrap_or(Bson::Null),
            })
        })
        .collect();
    let twice: Vec<Document> = sample
        .db
        .collection::<Document>(spec.collection())
        .aggregate([
            doc! { "$match": { "$or": keys } },
            doc! { "$group": {
                "_id": { "r": format!("${}", spec.resource()), "s": format!("${}", spec.slot()) },
                "n": { "$sum": 1 },
                "ids": { "$push": "$_id" },
            } },
            doc! { "$match": { "n": { "$gt": 1 } } },
        ])
        .max_time(sample.max_time)
        .await?
        .try_collect()
        .await?;
    let mut findings = Vec::new();
    if !twice.is_empty() {
        let ids: Vec<Bson> = twice
            .iter()
            .flat_map(|g| match g.get("ids") {
                Some(Bson::Array(a)) => a.clone(),
                _ => Vec::new(),
            })
            .collect();
        findings.push(
            sample
                .finding(
                    Check::GridDrift,
                    format!("{}, {}", spec.resource(), spec.slot()),
                    format!(
                        "{} slots are allocated more than once ({} documents); {}",
                        twice.len(),
                        ids.len(),
                        examples(&ids)
                    ),
                    "delete the extra documents of each slot by hand (keep the booked one), \
                     then sync the grid's indexes: its unique `{resource, slot}` index keeps \
                     `allocate` from writing a slot twice"
                        .to_owned(),
                )
                .about(ids),
        );
    }
    if let Some(bitmap) = spec.bitmap() {
        let stray: Vec<Bson> = sample
            .documents
            .iter()
            .filter(|d| stray_bits(d.get(bitmap), spec.sub_slots()))
            .filter_map(|d| d.get("_id").cloned())
            .collect();
        if !stray.is_empty() {
            findings.push(
                sample
                    .finding(
                        Check::GridDrift,
                        bitmap,
                        format!(
                            "{} of {} slots have bits set past their {} sub-slots; {}",
                            stray.len(),
                            sample.documents.len(),
                            spec.sub_slots(),
                            examples(&stray)
                        ),
                        format!(
                            "`{}::slots(&db).repair()` clears them; `book_range` and \
                             `free_range` never set them",
                            sample.model.name()
                        ),
                    )
                    .about(stray),
            );
        }
    }
    Ok(findings)
}

impl ModelSchema {
    /// The `#[preallocated(..)]` grid of a slot model.
    pub fn preallocated(&self) -> Option<&'static SlotSpec> {
        self.specs().next()
    }
}

/// What [`Slots::allocate`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocated {
    /// Slot documents inserted.
    pub inserted: u64,
    /// Slots that existed already (left as they were).
    pub existing: u64,
}

impl fmt::Display for Allocated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} slots inserted, {} existing left as they were",
            self.inserted, self.existing
        )
    }
}

/// How many slot documents one `insert` command carries.
const BATCH: usize = 1000;

/// The operations on a grid of slots: from `RoomDay::slots(&db)`. See the [module
/// documentation](self).
pub struct Slots<M> {
    db: Database,
    /// The caller's transaction, when bound to one.
    tx: Option<Transaction>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Clone for Slots<M> {
    fn clone(&self) -> Self {
        Slots {
            db: self.db.clone(),
            tx: self.tx.clone(),
            _model: PhantomData,
        }
    }
}

impl<M: Preallocated> fmt::Debug for Slots<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slots")
            .field("model", &M::SCHEMA.name())
            .field("database", &self.db.name())
            .finish()
    }
}

/// Why a conditional write of a slot matched nothing.
enum Miss {
    NotAllocated,
    /// Held by this holder.
    HeldBy(Bson),
    Free,
}

impl<M: Preallocated> Slots<M> {
    /// The grid of `M` in `db`.
    pub fn new(db: &Database) -> Self {
        Slots {
            db: db.clone(),
            tx: None,
            _model: PhantomData,
        }
    }

    /// The same grid in the caller's transaction `tx`: [`book`](Slots::book),
    /// [`book_all`](Slots::book_all), [`cancel`](Slots::cancel), [`release`](Slots::release),
    /// [`book_range`](Slots::book_range), [`free_range`](Slots::free_range),
    /// [`repair`](Slots::repair) and [`get`](Slots::get) run in it and commit or abort with it
    /// (see [`Transaction`]). [`allocate`](Slots::allocate) and the reads of many slots
    /// ([`available`](Slots::available), [`free_ranges`](Slots::free_ranges)) run on their own:
    /// an allocation skips the slots that exist, which a transaction's first duplicate key
    /// would abort.
    #[must_use]
    pub fn in_transaction(&self, tx: &Transaction) -> Self {
        Slots {
            tx: Some(tx.clone()),
            ..self.clone()
        }
    }

    /// The caller's session, held for one operation, when bound to a transaction.
    async fn session(&self) -> Result<Option<tokio::sync::MutexGuard<'_, ClientSession>>> {
        Transaction::session_of(self.tx.as_ref()).await
    }

    fn raw(&self) -> Collection<Document> {
        self.db.collection(M::SLOTS.collection())
    }

    fn key(resource: &Bson, slot: &Bson) -> Document {
        let s = M::SLOTS;
        doc! { s.resource(): resource.clone(), s.slot(): slot.clone() }
    }

    fn holder_field(&self, operation: &'static str) -> Result<&'static str> {
        M::SLOTS.holder().ok_or(Error::InvalidKey {
            key: operation.to_owned(),
            reason: "the model has no `holder = ..` in its `#[preallocated]`: book its bitmap \
                     with `book_range`",
        })
    }

    /// A holder is someone: `null` would book nothing and tell the caller it won.
    /// The resource and the slot a caller names, checked: they are equalities in filters.
    fn ids(resource: impl IntoId<M::Resource>, slot: impl IntoId<M::Slot>) -> Result<(Bson, Bson)> {
        Ok((
            crate::literal::typed_id(M::SLOTS.resource(), resource.into_id())?,
            crate::literal::typed_id(M::SLOTS.slot(), slot.into_id())?,
        ))
    }

    fn check_holder(holder: &Bson, field: &'static str) -> Result<()> {
        crate::literal::check_id(field, holder)?;
        match holder {
            Bson::Null | Bson::Undefined => Err(Error::InvalidValue {
                field: field.to_owned(),
                reason: "a booking needs a holder; `null` is what a free slot holds".to_owned(),
            }),
            _ => Ok(()),
        }
    }

    fn not_allocated(&self, resource: &Bson, slot: &Bson) -> Error {
        Error::NotAllocated {
            collection: M::SLOTS.collection().to_owned(),
            resource: Box::new(resource.clone()),
            slot: Box::new(slot.clone()),
        }
    }

    fn already_booked(&self, resource: &Bson, slot: &Bson, holder: Option<Bson>) -> Error {
        Error::AlreadyBooked {
            collection: M::SLOTS.collection().to_owned(),
            resource: Box::new(resource.clone()),
            slot: Box::new(slot.clone()),
            holder: holder.map(Box::new),
        }
    }

    /// Why the slot did not match: it is missing, or its holder now.
    async fn miss(
        &self,
        session: Option<&mut ClientSession>,
        resource: &Bson,
        slot: &Bson,
        holder: &'static str,
    ) -> mongodb::error::Result<Miss> {
        let raw = self.raw();
        let find = raw
            .find_one(Self::key(resource, slot))
            .projection(doc! { holder: 1 });
        Ok(match in_session!(find, session)? {
            None => Miss::NotAllocated,
            Some(d) => match d.get(holder) {
                None | Some(Bson::Null) => Miss::Free,
                Some(h) => Miss::HeldBy(h.clone()),
            },
        })
    }

    /// Inserts the free slot documents `slots` (built by the caller, holder `None` and bitmap 0),
    /// 1 000 per unordered `insert`: one that exists already (same resource and slot, by the
    /// grid's unique index, or the same `_id`) is skipped and counted as `existing`, never
    /// overwritten; so is a repeat within `slots`. Run it as often as you like. (A slot whose
    /// `_id` is another slot's is skipped too: give each slot its own `_id`, an `ObjectId` or
    /// one made from its resource and slot.) It needs the grid's unique index,
    /// which [`sync_models`](crate::sync_models) creates: it checks first (one `listIndexes`)
    /// and refuses to run without it ([`Error::CollectionConflict`]).
    ///
    /// A slot that is not free (a holder, a set bit) is [`Error::InvalidValue`], one over
    /// 16 MiB [`Error::DocumentTooLarge`], one that another pattern refuses as a whole
    /// document (an attribute array holding a key twice) [`Error::InvalidKey`], each before its
    /// batch is sent. A slot that sits in a tree (`#[in_tree]`) gets the path of the node it
    /// names, read once per batch, whatever path it was given ([`Error::NoNode`] for a missing
    /// node). What other models derive from the slots (a subset of them, a
    /// count) follows each batch, after it: allocation runs in no transaction, so a failure in
    /// between is left for that pattern's `repair()`. Any other failure of
    /// an insert (another unique index, a validator) is returned too. When earlier batches were
    /// written, the error is [`Error::Incomplete`] with how many slots were inserted: run it again
    /// once the cause is fixed.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.allocate",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn allocate(&self, slots: impl IntoIterator<Item = M>) -> Result<Allocated> {
        self.allocate_with_progress(slots, |_| {}).await
    }

    /// [`Slots::allocate`], calling `progress` with the totals so far after each batch.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.allocate",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn allocate_with_progress(
        &self,
        slots: impl IntoIterator<Item = M>,
        mut progress: impl FnMut(Allocated),
    ) -> Result<Allocated> {
        let mut total = Allocated::default();
        // After a batch was written, an error says how much was.
        let partly = |total: Allocated, failed: usize, e: Error| {
            if total.inserted + total.existing == 0 {
                e
            } else {
                Error::Incomplete {
                    written: total.inserted as usize,
                    failed,
                    source: Box::new(e),
                }
            }
        };
        self.check_unique_index().await?;
        let mut batch = Vec::with_capacity(BATCH);
        let mut slots = slots.into_iter().peekable();
        while slots.peek().is_some() {
            batch.clear();
            for slot in slots.by_ref().take(BATCH) {
                let d = bson::serialize_to_document(&slot)?;
                // A slot placed in a tree gets its node's path below (as `Holders::insert`).
                let not_holder = |spec: &'static dyn PatternSpec| {
                    (spec as &dyn std::any::Any).is::<crate::tree::HolderSpec>()
                };
                let checked = check_size(&d, M::SCHEMA.name())
                    .and_then(|_| check_free(M::SLOTS, &d))
                    .and_then(|_| {
                        crate::derived::check_document_write_except(
                            M::SCHEMA,
                            "insert",
                            Some(&d),
                            &not_holder,
                        )
                    });
                if let Err(e) = checked {
                    return Err(partly(total, 1, e));
                }
                batch.push(d);
            }
            for holder in M::SCHEMA.specs::<crate::tree::HolderSpec>() {
                if let Err(e) = holder.set_paths(&self.db, &mut batch).await {
                    return Err(partly(total, batch.len(), e));
                }
            }
            let sent = batch.len() as u64;
            let skipped = match self.raw().insert_many(batch.clone()).ordered(false).await {
                Ok(_) => Vec::new(),
                Err(e) => match grid_duplicates(&e, M::SLOTS.index().name()) {
                    Ok(skipped) => skipped,
                    Err(failed) => {
                        let inserted = sent.saturating_sub(failed.total);
                        total.inserted += inserted;
                        let code = crate::error::server_code(&e);
                        tracing::debug!(inserted, failed = failed.other, "allocation batch failed");
                        return Err(Error::Incomplete {
                            written: total.inserted as usize,
                            failed: failed.other as usize,
                            source: Box::new(Error::Driver {
                                code: failed.code.or(code),
                                source: Box::new(e),
                            }),
                        });
                    }
                },
            };
            let existing = skipped.len() as u64;
            // What derives from the slots (a subset of them, a count per holder) gets the
            // slots this batch inserted, after the batch: allocation runs in no transaction,
            // so a failure between the two leaves them for the dependents' `repair()`.
            if crate::derived::has_insert_dependents(M::SCHEMA) {
                let inserted: Vec<Document> = batch
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !skipped.contains(i))
                    .map(|(_, d)| d.clone())
                    .collect();
                let kept = crate::derived::inserted(&self.db, None, M::SCHEMA, &inserted).await;
                if let Err(e) = kept {
                    total.inserted += sent - existing;
                    return Err(partly(total, 0, e.into()));
                }
            }
            total.inserted += sent - existing;
            total.existing += existing;
            tracing::info!(
                inserted = sent - existing,
                existing,
                "allocation batch written"
            );
            progress(total);
        }
        Ok(total)
    }

    /// The grid's unique index is on the server (one `listIndexes`): without it, allocating
    /// twice would store every slot twice.
    async fn check_unique_index(&self) -> Result<()> {
        let s = M::SLOTS;
        let ascending =
            |b: &Bson| matches!(b, Bson::Int32(1) | Bson::Int64(1)) || b.as_f64() == Some(1.0);
        let indexes = crate::sync::list_indexes(&self.db, s.collection()).await?;
        let found = indexes.iter().any(|i| {
            let keys: Vec<(&String, &Bson)> = i
                .get_document("key")
                .map(|k| k.iter().collect())
                .unwrap_or_default();
            i.get_bool("unique").unwrap_or(false)
                && keys.len() == 2
                && keys[0].0 == s.resource()
                && keys[1].0 == s.slot()
                && keys.iter().all(|(_, d)| ascending(d))
        });
        if found {
            return Ok(());
        }
        Err(Error::CollectionConflict {
            collection: s.collection().to_owned(),
            reason: format!(
                "the unique index `{}` on {{{}: 1, {}: 1}} is missing, and without it an \
                 allocation run twice would store every slot twice; create it with \
                 `sync_models` (or `sync_indexes`) first",
                s.index().name(),
                s.resource(),
                s.slot()
            ),
        })
    }

    /// Runs `generate` now and then every `interval` in a background task, allocating what it
    /// returns (the slots of the next N days, say: the existing ones are skipped). Each run's
    /// outcome is kept for [`Periodic::next`]; a failed run is an `ERROR` event too, and the
    /// next run is one interval later. [`Periodic::stop`] ends it after the run under way.
    pub fn allocate_every<F>(&self, interval: Duration, mut generate: F) -> Allocator
    where
        M: Send + Sync + 'static,
        F: FnMut() -> Vec<M> + Send + 'static,
    {
        let slots = self.clone();
        Periodic::start(
            "preallocation.allocate",
            M::SCHEMA.name(),
            interval,
            move || {
                let (slots, batch) = (slots.clone(), generate());
                async move { slots.allocate(batch).await }
            },
        )
    }

    /// Reads every slot, a page at a time, and reports slots allocated more than once and
    /// bitmaps with bits past the sub-slots
    /// ([`Check::GridDrift`], listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.check",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn check(&self) -> Result<CheckReport> {
        crate::maintenance::check(&self.db, &[(M::SCHEMA, M::SLOTS as &dyn PatternSpec)]).await
    }

    /// [`check`](Self::check), then clears the bits past the sub-slots of each bitmap it lists
    /// (one read and one conditional `$set` per slot, the bitmap keeping its stored integer
    /// type), then a check again. Slots allocated twice are
    /// left: which of the documents to keep is the application's call.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.repair",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn repair(&self) -> Result<RepairReport> {
        let s = M::SLOTS;
        let targets = [(M::SCHEMA, s as &dyn PatternSpec)];
        let found = crate::maintenance::check(&self.db, &targets).await?;
        let mut repaired = 0;
        if let Some(bitmap) = s.bitmap() {
            let stray: Vec<Bson> = found
                .findings
                .iter()
                .filter(|f| f.subject == bitmap)
                .flat_map(|f| f.documents.iter().cloned())
                .collect();
            let Bson::Int64(mask) = full_mask(s.sub_slots()) else {
                return crate::maintenance::after_repair(&self.db, &targets, 0).await;
            };
            let raw = self.raw();
            for id in stray {
                let read = raw
                    .find_one(doc! { "_id": id.clone() })
                    .projection(doc! { bitmap: 1 });
                let found = {
                    let mut session = self.session().await?;
                    in_session!(read, session.as_deref_mut())?
                };
                // The bits kept, in the type stored (an `i32` bitmap stays one).
                let (stored, kept) = match found.as_ref().and_then(|d| d.get(bitmap)) {
                    Some(Bson::Int32(b)) => {
                        (Bson::Int32(*b), Bson::Int32((i64::from(*b) & mask) as i32))
                    }
                    Some(Bson::Int64(b)) => (Bson::Int64(*b), Bson::Int64(*b & mask)),
                    _ => continue,
                };
                // Conditional on the bits read: a booking meanwhile is left for the next run.
                repaired += crate::derived::update_one(
                    &self.db,
                    self.tx.as_ref(),
                    M::SCHEMA,
                    doc! { "_id": id, bitmap: stored },
                    doc! { "$set": { bitmap: kept } },
                    &[bitmap],
                )
                .await?
                .modified_count;
            }
        }
        crate::maintenance::after_repair(&self.db, &targets, repaired).await
    }

    /// The slot of `resource` and `slot`, if it was allocated.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.get",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn get(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> Result<Option<M>> {
        let (resource, slot) = Self::ids(resource, slot)?;
        let mut session = self.session().await?;
        let raw = self.raw();
        let op = raw.find_one(Self::key(&resource, &slot));
        let found = in_session!(op, session.as_deref_mut())?;
        Ok(found.map(bson::deserialize_from_document).transpose()?)
    }

    /// Books the slot for `holder`: one `findAndModify` whose filter requires it free; returns
    /// the slot as booked. [`Error::AlreadyBooked`] (with its holder) when it is taken,
    /// [`Error::NotAllocated`] when it was never allocated; nothing is written then. When
    /// another model derives data from the holder (a `#[computed(count = .., by = holder)]`),
    /// the booking runs in a transaction with it, and a holder that has no such document is
    /// [`Error::NotFound`] of that model, nothing written (see
    /// [the computed module](crate::computed)'s rule for targets).
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.book",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), resource = tracing::field::Empty, slot = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn book(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        holder: impl Into<Bson>,
    ) -> Result<M> {
        let holder_field = self.holder_field("book")?;
        let (resource, slot) = Self::ids(resource, slot)?;
        let holder = holder.into();
        Self::check_holder(&holder, holder_field)?;
        record(&resource, &slot);
        if self.keeps_derived(holder_field) {
            // In a transaction (the caller's, or one of its own because other data derives
            // from the holder), with what derives from the holder brought up to date in it; a
            // booking the model cannot read back is aborted with the rest.
            let key = Self::key(&resource, &slot);
            let booked = transact!(self.db, self.tx.as_ref(), |s| async {
                let mut s: Option<&mut ClientSession> = s;
                let watch = crate::derived::watch(
                    &self.db,
                    s.as_deref_mut(),
                    M::SCHEMA,
                    Some(&[holder_field]),
                    &key,
                )
                .await?;
                let booked = self
                    .book_in(s.as_deref_mut(), &resource, &slot, &holder, holder_field)
                    .await?
                    .map_err(crate::error::refusal)?;
                let read: M = bson::deserialize_from_document(booked.clone())
                    .map_err(|e| crate::error::refusal(Self::wrong_holder(holder_field, e)))?;
                if let Some(watch) = watch {
                    watch.after(&self.db, s).await?;
                }
                Ok(read)
            })?;
            return Ok(booked);
        }
        let mut session = self.session().await?;
        let booked = self
            .book_in(
                session.as_deref_mut(),
                &resource,
                &slot,
                &holder,
                holder_field,
            )
            .await??;
        match bson::deserialize_from_document(booked) {
            Ok(m) => Ok(m),
            Err(e) => {
                let slots = [(resource, slot)];
                self.unbook(session.as_deref_mut(), &slots, &holder, holder_field)
                    .await?;
                Err(Self::wrong_holder(holder_field, e))
            }
        }
    }

    /// Whether a write of the holder runs in a transaction: the caller's, or one of its own
    /// because another pattern keeps data derived from the holder (the
    /// [map of derived data](mod@crate::derived)).
    fn keeps_derived(&self, holder_field: &'static str) -> bool {
        self.tx.is_some() || crate::derived::has_dependents(M::SCHEMA, Some(&[holder_field]))
    }

    /// Frees the slots `holder` holds among `slots`, in `session` if given: what `book_all`
    /// booked before a slot was not free, or a booking the model cannot read back.
    async fn unbook(
        &self,
        mut session: Option<&mut ClientSession>,
        slots: &[(Bson, Bson)],
        holder: &Bson,
        holder_field: &'static str,
    ) -> mongodb::error::Result<()> {
        let raw = self.raw();
        for (r, sl) in slots {
            let mut filter = Self::key(r, sl);
            filter.insert(holder_field, holder.clone());
            let op = raw.update_one(filter, doc! { "$set": { holder_field: Bson::Null } });
            in_session!(op, session.as_deref_mut())?;
        }
        tracing::debug!(undone = slots.len(), "bookings undone");
        Ok(())
    }

    /// [`Error::InvalidValue`]: the holder is not of the model's holder type.
    fn wrong_holder(holder_field: &'static str, e: bson::error::Error) -> Error {
        Error::InvalidValue {
            field: holder_field.to_owned(),
            reason: format!(
                "the slot does not read back as the model with this holder ({e}): give a holder \
                 of the holder field's type; the booking was undone"
            ),
        }
    }

    async fn book_in(
        &self,
        mut session: Option<&mut ClientSession>,
        resource: &Bson,
        slot: &Bson,
        holder: &Bson,
        holder_field: &'static str,
    ) -> mongodb::error::Result<Result<Document>> {
        let raw = self.raw();
        // A slot freed between the write and the read that tells why: try again (twice).
        for _ in 0..3 {
            let mut filter = Self::key(resource, slot);
            filter.insert(holder_field, Bson::Null);
            let op = raw
                .find_one_and_update(filter, doc! { "$set": { holder_field: holder.clone() } })
                .return_document(ReturnDocument::After);
            if let Some(d) = in_session!(op, session.as_deref_mut())? {
                tracing::debug!(written = 1, "slot booked");
                return Ok(Ok(d));
            }
            match self
                .miss(session.as_deref_mut(), resource, slot, holder_field)
                .await?
            {
                Miss::NotAllocated => return Ok(Err(self.not_allocated(resource, slot))),
                Miss::HeldBy(h) => return Ok(Err(self.already_booked(resource, slot, Some(h)))),
                Miss::Free => {}
            }
        }
        Ok(Err(self.already_booked(resource, slot, None)))
    }

    /// Books every slot of `slots` (resource, slot) for `holder` in one transaction: all of
    /// them, or none. The first that is taken or missing undoes the others in the same
    /// transaction and is returned ([`Error::AlreadyBooked`], [`Error::NotAllocated`]). Without
    /// transactions the undo is a second write, best effort.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.book_all",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), slots = slots.len()),
        err(level = "debug")
    )]
    pub async fn book_all<R, S>(&self, slots: &[(R, S)], holder: impl Into<Bson>) -> Result<Vec<M>>
    where
        R: Clone + IntoId<M::Resource>,
        S: Clone + IntoId<M::Slot>,
    {
        let holder_field = self.holder_field("book_all")?;
        let holder = holder.into();
        Self::check_holder(&holder, holder_field)?;
        let slots: Vec<(Bson, Bson)> = slots
            .iter()
            .map(|(r, s)| Self::ids(r.clone(), s.clone()))
            .collect::<Result<_>>()?;
        for (i, (r, s)) in slots.iter().enumerate() {
            if slots[..i].contains(&(r.clone(), s.clone())) {
                return Err(Error::InvalidValue {
                    field: M::SLOTS.slot().to_owned(),
                    reason: format!("slot {s} of {r} is asked for twice"),
                });
            }
        }
        let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let keys: Vec<Document> = slots.iter().map(|(r, sl)| Self::key(r, sl)).collect();
            let watch = crate::derived::watch(
                &self.db,
                s.as_deref_mut(),
                M::SCHEMA,
                Some(&[holder_field]),
                &doc! { "$or": keys },
            )
            .await?;
            let mut booked: Vec<Document> = Vec::with_capacity(slots.len());
            for (resource, slot) in &slots {
                match self
                    .book_in(s.as_deref_mut(), resource, slot, &holder, holder_field)
                    .await?
                {
                    Ok(d) => booked.push(d),
                    Err(e) => {
                        // Undo what this call booked: the transaction then commits no change.
                        let done = &slots[..booked.len()];
                        self.unbook(s.as_deref_mut(), done, &holder, holder_field)
                            .await?;
                        tracing::debug!("a slot was not free: none booked");
                        return Ok(Err(e));
                    }
                }
            }
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok(Ok(booked))
        })?;
        let booked = outcome?;
        let mut out = Vec::with_capacity(booked.len());
        for d in booked {
            match bson::deserialize_from_document(d) {
                Ok(m) => out.push(m),
                Err(e) => {
                    let mut session = self.session().await?;
                    self.unbook(session.as_deref_mut(), &slots, &holder, holder_field)
                        .await?;
                    return Err(Self::wrong_holder(holder_field, e));
                }
            }
        }
        Ok(out)
    }

    /// Frees the slot if `holder` holds it; returns it as freed (also when it was free already).
    /// [`Error::AlreadyBooked`] when someone else holds it, [`Error::NotAllocated`] when it was
    /// never allocated; nothing is written then. `holder` is compared with the stored holder as
    /// a value, except a document with an `_id` (an extended-reference copy of the holder),
    /// compared by that `_id` alone: a rename of the holder, copied into the slot since the
    /// booking, does not make it someone else.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.cancel",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), resource = tracing::field::Empty, slot = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn cancel(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        holder: impl Into<Bson>,
    ) -> Result<M> {
        let holder_field = self.holder_field("cancel")?;
        let (resource, slot) = Self::ids(resource, slot)?;
        let holder = holder.into();
        Self::check_holder(&holder, holder_field)?;
        record(&resource, &slot);
        let mut filter = Self::key(&resource, &slot);
        match holder {
            // A holder that is a copy of another document (an extended reference) is that
            // document, whatever its copied fields say now (a rename rewrites them).
            Bson::Document(d) if d.contains_key("_id") => {
                let id = d.get("_id").cloned().unwrap_or(Bson::Null);
                filter.insert(format!("{holder_field}._id"), doc! { "$eq": id });
            }
            holder => {
                filter.insert(holder_field, doc! { "$eq": holder });
            }
        }
        self.free(filter, &resource, &slot, holder_field).await
    }

    /// Frees the slot whoever holds it; returns it as freed. [`Error::NotAllocated`] when it was
    /// never allocated.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.release",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), resource = tracing::field::Empty, slot = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn release(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> Result<M> {
        let holder_field = self.holder_field("release")?;
        let (resource, slot) = Self::ids(resource, slot)?;
        record(&resource, &slot);
        self.free(Self::key(&resource, &slot), &resource, &slot, holder_field)
            .await
    }

    async fn free(
        &self,
        filter: Document,
        resource: &Bson,
        slot: &Bson,
        holder_field: &'static str,
    ) -> Result<M> {
        let freed = if self.keeps_derived(holder_field) {
            let key = Self::key(resource, slot);
            transact!(self.db, self.tx.as_ref(), |s| async {
                let mut s: Option<&mut ClientSession> = s;
                let watch = crate::derived::watch(
                    &self.db,
                    s.as_deref_mut(),
                    M::SCHEMA,
                    Some(&[holder_field]),
                    &key,
                )
                .await?;
                let freed = self
                    .free_in(
                        s.as_deref_mut(),
                        filter.clone(),
                        resource,
                        slot,
                        holder_field,
                    )
                    .await?
                    .map_err(crate::error::refusal)?;
                if let Some(watch) = watch {
                    watch.after(&self.db, s).await?;
                }
                Ok(freed)
            })?
        } else {
            self.free_in(None, filter, resource, slot, holder_field)
                .await??
        };
        Ok(bson::deserialize_from_document(freed)?)
    }

    /// The write of [`free`](Self::free), in `session` when there is one: the slot as freed,
    /// or why it was not.
    async fn free_in(
        &self,
        mut session: Option<&mut ClientSession>,
        filter: Document,
        resource: &Bson,
        slot: &Bson,
        holder_field: &'static str,
    ) -> mongodb::error::Result<Result<Document>> {
        let raw = self.raw();
        let op = raw
            .find_one_and_update(filter, doc! { "$set": { holder_field: Bson::Null } })
            .return_document(ReturnDocument::After);
        let freed = in_session!(op, session.as_deref_mut())?;
        if let Some(d) = freed {
            tracing::debug!(written = 1, "slot freed");
            return Ok(Ok(d));
        }
        Ok(
            match self
                .miss(session.as_deref_mut(), resource, slot, holder_field)
                .await?
            {
                Miss::NotAllocated => Err(self.not_allocated(resource, slot)),
                Miss::HeldBy(h) => Err(self.already_booked(resource, slot, Some(h))),
                Miss::Free => {
                    let op = raw.find_one(Self::key(resource, slot));
                    match in_session!(op, session)? {
                        Some(d) => Ok(d),
                        None => Err(self.not_allocated(resource, slot)),
                    }
                }
            },
        )
    }

    /// The free slots of `resource` from `from` (included) to `to` (excluded), in slot order:
    /// one query on the unique `{resource, slot}` index. With a bitmap, the slots with at least
    /// one free sub-slot. `from` and `to` are of the slot's type: MongoDB compares values of one
    /// type only, so a string date against stored `DateTime`s matches nothing.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.available",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn available(
        &self,
        resource: impl IntoId<M::Resource>,
        from: impl IntoId<M::Slot>,
        to: impl IntoId<M::Slot>,
    ) -> Result<Vec<M>> {
        let s = M::SLOTS;
        let resource = crate::literal::typed_id(s.resource(), resource.into_id())?;
        let (from, to) = (
            crate::literal::typed_id(s.slot(), from.into_id())?,
            crate::literal::typed_id(s.slot(), to.into_id())?,
        );
        let mut filter = doc! {
            s.resource(): resource,
            s.slot(): { "$gte": from, "$lt": to },
        };
        match (s.holder(), s.bitmap()) {
            (Some(holder), _) => {
                filter.insert(holder, Bson::Null);
            }
            (None, Some(bitmap)) => {
                filter.insert(bitmap, doc! { "$bitsAnyClear": full_mask(s.sub_slots()) });
            }
            (None, None) => {}
        }
        let docs: Vec<Document> = self
            .raw()
            .find(filter)
            .sort(doc! { s.slot(): 1 })
            .await?
            .try_collect()
            .await?;
        docs.into_iter()
            .map(|d| bson::deserialize_from_document(d).map_err(Error::from))
            .collect()
    }

    fn bitmap_field(&self, sub_slots: &Range<u32>) -> Result<&'static str> {
        let s = M::SLOTS;
        let Some(bitmap) = s.bitmap() else {
            return Err(Error::InvalidKey {
                key: "bitmap".to_owned(),
                reason: "the model has no `bitmap = ..` in its `#[preallocated]`",
            });
        };
        if sub_slots.start >= sub_slots.end || sub_slots.end > s.sub_slots() {
            return Err(Error::InvalidValue {
                field: bitmap.to_owned(),
                reason: format!(
                    "sub-slots {}..{} are not a non-empty range within 0..{}",
                    sub_slots.start,
                    sub_slots.end,
                    s.sub_slots()
                ),
            });
        }
        Ok(bitmap)
    }

    /// The mask of `sub_slots`, typed as the bitmap field is stored.
    fn mask(sub_slots: &Range<u32>) -> Bson {
        let bits: i64 = sub_slots.clone().fold(0, |m, k| m | (1_i64 << k));
        if M::SLOTS.parts.wide {
            Bson::Int64(bits)
        } else {
            // Within 0..31: fits.
            Bson::Int32(bits as i32)
        }
    }

    /// Books sub-slots `sub_slots` (`18..20`: the half hours from 9:00 to 10:00) of the slot:
    /// one update whose filter requires them all clear (`$bitsAllClear`) and which sets them
    /// (`$bit` or). [`Error::AlreadyBooked`] when any is taken (no holder: the bitmap does not
    /// say who), [`Error::NotAllocated`] when the slot was never allocated, [`Error::InvalidValue`]
    /// for a range outside the bitmap; nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.book_range",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), resource = tracing::field::Empty, slot = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn book_range(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        sub_slots: Range<u32>,
    ) -> Result<()> {
        let bitmap = self.bitmap_field(&sub_slots)?;
        let (resource, slot) = Self::ids(resource, slot)?;
        record(&resource, &slot);
        let mask = Self::mask(&sub_slots);
        let mut filter = Self::key(&resource, &slot);
        filter.insert(bitmap, doc! { "$bitsAllClear": mask.clone() });
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            filter,
            doc! { "$bit": { bitmap: { "or": mask } } },
            &[bitmap],
        )
        .await?;
        if result.matched_count == 1 {
            tracing::debug!(written = 1, "sub-slots booked");
            return Ok(());
        }
        let mut session = self.session().await?;
        match self
            .miss(session.as_deref_mut(), &resource, &slot, bitmap)
            .await?
        {
            Miss::NotAllocated => Err(self.not_allocated(&resource, &slot)),
            Miss::HeldBy(Bson::Int32(_) | Bson::Int64(_)) => {
                Err(self.already_booked(&resource, &slot, None))
            }
            Miss::HeldBy(_) | Miss::Free => Err(not_a_bitmap(bitmap)),
        }
    }

    /// Frees sub-slots `sub_slots` of the slot: one update whose filter requires them all set
    /// (`$bitsAllSet`) and which clears them. [`Error::InvalidValue`] when any of them is free
    /// already (a range freed twice, or never booked), [`Error::NotAllocated`] when the slot was
    /// never allocated; nothing is written then.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.free_range",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection(), resource = tracing::field::Empty, slot = tracing::field::Empty),
        err(level = "debug")
    )]
    pub async fn free_range(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        sub_slots: Range<u32>,
    ) -> Result<()> {
        let bitmap = self.bitmap_field(&sub_slots)?;
        let (resource, slot) = Self::ids(resource, slot)?;
        record(&resource, &slot);
        let mask = Self::mask(&sub_slots);
        let keep = match &mask {
            Bson::Int64(m) => Bson::Int64(!m),
            Bson::Int32(m) => Bson::Int32(!m),
            other => other.clone(),
        };
        let mut filter = Self::key(&resource, &slot);
        filter.insert(bitmap, doc! { "$bitsAllSet": mask });
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            filter,
            doc! { "$bit": { bitmap: { "and": keep } } },
            &[bitmap],
        )
        .await?;
        if result.matched_count == 1 {
            tracing::debug!(written = 1, "sub-slots freed");
            return Ok(());
        }
        let mut session = self.session().await?;
        match self
            .miss(session.as_deref_mut(), &resource, &slot, bitmap)
            .await?
        {
            Miss::NotAllocated => Err(self.not_allocated(&resource, &slot)),
            Miss::HeldBy(Bson::Int32(_) | Bson::Int64(_)) => Err(Error::InvalidValue {
                field: bitmap.to_owned(),
                reason: format!(
                    "sub-slots {}..{} are not all booked",
                    sub_slots.start, sub_slots.end
                ),
            }),
            Miss::HeldBy(_) | Miss::Free => Err(not_a_bitmap(bitmap)),
        }
    }

    /// The free sub-slots of the slot, as ranges (`[0..18, 20..48]`): one read.
    /// [`Error::NotAllocated`] when the slot was never allocated.
    #[tracing::instrument(
        name = "pattern_runtime::preallocation.free_ranges",
        skip_all,
        fields(model = M::SCHEMA.name(), collection = M::SLOTS.collection()),
        err(level = "debug")
    )]
    pub async fn free_ranges(
        &self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> Result<Vec<Range<u32>>> {
        let bitmap = self.bitmap_field(&(0..1))?;
        let (resource, slot) = Self::ids(resource, slot)?;
        let found = self
            .raw()
            .find_one(Self::key(&resource, &slot))
            .projection(doc! { bitmap: 1 })
            .await?;
        let Some(d) = found else {
            return Err(self.not_allocated(&resource, &slot));
        };
        let bits = match d.get(bitmap) {
            Some(Bson::Int32(b)) => i64::from(*b),
            Some(Bson::Int64(b)) => *b,
            _ => return Err(not_a_bitmap(bitmap)),
        };
        Ok(free_runs(bits, M::SLOTS.sub_slots()))
    }
}

/// A stored bitmap that is not an integer (written outside the model): no booking can match it.
fn not_a_bitmap(bitmap: &str) -> Error {
    Error::InvalidValue {
        field: bitmap.to_owned(),
        reason: "the stored bitmap is not an integer (missing, null or another type): no \
                 booking can match it; store it as an integer, 0 while every sub-slot is free"
            .to_owned(),
    }
}

/// The runs of clear bits among the first `n` of `bits`.
fn free_runs(bits: i64, n: u32) -> Vec<Range<u32>> {
    let mut runs = Vec::new();
    let mut start = None;
    for k in 0..n {
        let free = bits & (1_i64 << k) == 0;
        match (free, start) {
            (true, None) => start = Some(k),
            (false, Some(s)) => {
                runs.push(s..k);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push(s..n);
    }
    runs
}

/// The mask of all `n` sub-slots.
fn full_mask(n: u32) -> Bson {
    Bson::Int64((0..n).fold(0_i64, |m, k| m | (1_i64 << k)))
}

fn record(resource: &Bson, slot: &Bson) {
    let span = tracing::Span::current();
    span.record("resource", tracing::field::display(resource));
    span.record("slot", tracing::field::display(slot));
}

/// The write errors of an insert that are not a slot existing already.
struct OtherFailures {
    /// Write errors in all.
    total: u64,
    /// Those that are not a duplicate on the grid's index.
    other: u64,
    /// The code of the first of those.
    code: Option<i32>,
}

/// How many of the insert's documents were slots that exist already (duplicates on the grid's
/// unique index `index`), when that is all that failed.
fn grid_duplicates(
    e: &mongodb::error::Error,
    index: &str,
) -> std::result::Result<Vec<usize>, OtherFailures> {
    let mongodb::error::ErrorKind::InsertMany(m) = e.kind.as_ref() else {
        return Err(OtherFailures {
            total: 0,
            other: 1,
            code: None,
        });
    };
    let errors = m.write_errors.as_deref().unwrap_or_default();
    // A slot whose `_id` exists is taken as allocated too: `_id`s made from the resource and
    // the slot (`"r1-1"`) name the slot, and a second run must skip it as well.
    let existing = |w: &&mongodb::error::IndexedWriteError| {
        w.code == DUPLICATE_KEY && (w.message.contains(index) || w.message.contains("index: _id_ "))
    };
    let others: Vec<_> = errors.iter().filter(|w| !existing(w)).collect();
    if others.is_empty() && m.write_concern_error.is_none() && !errors.is_empty() {
        return Ok(errors.iter().map(|w| w.index).collect());
    }
    Err(OtherFailures {
        total: errors.len() as u64,
        other: others.len().max(1) as u64,
        code: others.first().map(|w| w.code),
    })
}

/// A slot to allocate is free: no holder, no bit set.
fn check_free(spec: &SlotSpec, d: &Document) -> Result<()> {
    let taken = |field: &str, what: &Bson| Error::InvalidValue {
        field: field.to_owned(),
        reason: format!("a slot is allocated free, and this one holds {what}"),
    };
    if let Some(holder) = spec.holder() {
        match d.get(holder) {
            None | Some(Bson::Null) => {}
            Some(other) => return Err(taken(holder, other)),
        }
    }
    if let Some(bitmap) = spec.bitmap() {
        match d.get(bitmap) {
            Some(Bson::Int32(0)) | Some(Bson::Int64(0)) => {}
            None | Some(Bson::Null) => {
                return Err(Error::InvalidValue {
                    field: bitmap.to_owned(),
                    reason: "the bitmap is stored as 0 while every sub-slot is free; a missing \
                             or null bitmap never matches a booking"
                        .to_owned(),
                })
            }
            Some(other) => return Err(taken(bitmap, other)),
        }
    }
    Ok(())
}

/// A background allocation from [`Slots::allocate_every`]: a [`Periodic`] whose runs are
/// [`Slots::allocate`] of what the generator returns.
pub type Allocator = Periodic<Allocated>;

/// What an [`Allocator`] did, from [`Periodic::stop`].
pub type AllocatorStopped = Stopped<Allocated>;

/// Compile-time checks of a `#[preallocated]` model's fields (generated code), by autoref
/// specialisation as in `checks`. Not a stable API.
#[doc(hidden)]
pub mod slot_probe {
    use std::marker::PhantomData;

    use crate::checks::{Fail, Pass};
    use crate::schema::FieldName;

    /// The probe of a field of type `T`.
    pub struct SlotProbe<T: ?Sized>(PhantomData<fn() -> T>);

    impl<T: ?Sized> SlotProbe<T> {
        /// The probe of `field`'s type.
        pub const fn of(_field: FieldName<T>) -> Self {
            SlotProbe(PhantomData)
        }
    }

    /// A type that names a resource or a slot: compared by equality, ordered for ranges.
    pub trait SlotKey {}
    macro_rules! slot_key {
        ($($t:ty),*) => { $(impl SlotKey for $t {})* };
    }
    slot_key!(String, i32, i64, bson::oid::ObjectId, bson::DateTime);

    /// `key()` passes for a [`SlotKey`].
    pub trait ProbeSlotKey {
        /// Passes.
        fn key(&self) -> Pass {
            Pass
        }
    }
    impl<T: SlotKey> ProbeSlotKey for &SlotProbe<T> {}

    /// The width of a bitmap field: `i32` holds 31 sub-slots, `i64` 63.
    pub struct Bits<const N: u32>;

    /// A bitmap verdict: how many sub-slots the type holds (0: not a bitmap type).
    pub trait BitsVerdict {
        /// The sub-slots it holds.
        const BITS: u32;
    }
    impl<const N: u32> BitsVerdict for Bits<N> {
        const BITS: u32 = N;
    }

    /// `bits()` for the integer types a bitmap can be.
    pub trait ProbeBits32 {
        /// 31.
        fn bits(&self) -> Bits<31> {
            Bits
        }
    }
    impl ProbeBits32 for &SlotProbe<i32> {}

    /// `bits()` for `i64`.
    pub trait ProbeBits64 {
        /// 63.
        fn bits(&self) -> Bits<63> {
            Bits
        }
    }
    impl ProbeBits64 for &&SlotProbe<i64> {}

    /// Every check, when nothing more specific holds.
    pub trait ProbeOtherSlot {
        /// Fails.
        fn key(&self) -> Fail {
            Fail
        }
        /// Not a bitmap type.
        fn bits(&self) -> Bits<0> {
            Bits
        }
    }
    impl<T: ?Sized> ProbeOtherSlot for SlotProbe<T> {}

    /// The sub-slots the verdict of `check` holds.
    pub const fn bits_of<V: BitsVerdict>(_check: fn() -> V) -> u32 {
        V::BITS
    }
}

#[cfg(test)]
mod tests {
    use super::free_runs;

    #[test]
    fn free_runs_are_the_clear_bits() {
        assert_eq!(free_runs(0, 48), vec![0..48]);
        assert_eq!(free_runs(0b1100, 6), vec![0..2, 4..6]);
        assert_eq!(free_runs((1 << 48) - 1, 48), vec![]);
        assert_eq!(free_runs(1 << 47, 48), vec![0..47]);
    }
}

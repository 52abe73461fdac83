#![doc = include_str!("../../docs/preallocation.md")]

use std::fmt;
use std::ops::Range;
use std::time::Duration;

use bson::{doc, Bson, Document};
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Collection};
use serde::Serialize;

use crate::error::{check_size, Error, Result, DUPLICATE_KEY};
use crate::finding::{examples, Check, CheckReport, Finding, RepairReport};
use crate::index::IndexSpec;
use crate::model::{IntoId, Model};
use crate::periodic::{Periodic, Stopped};
use crate::schema::{ModelSchema, PatternSpec, Sample};
use crate::txn::{in_session, transact, Transaction};

mod allocate;
mod check;
mod read;
mod spec;
mod write;

pub use allocate::{Allocated, Allocator, AllocatorStopped};
pub use spec::{Preallocated, SlotParts, SlotSpec};

crate::span::model_handle! {
    /// The operations on a grid of slots: from `RoomDay::collection(&db).slots()`. See the
    /// [module documentation](self).
    pub struct Slots<M: Preallocated> => M::SLOTS.collection();
}

impl<M: crate::model::Model> crate::model::ModelCollection<M> {
    /// The grid of slots `M`'s documents are: `allocate`, `book`, `cancel`, `release`,
    /// `available`, `repair` (see [`Slots`]). Bound to this handle's transaction when it has
    /// one.
    pub fn slots(&self) -> Slots<M>
    where
        M: Preallocated,
    {
        crate::txn::Bound::bound(Slots::new(self.database()), self.transaction())
    }
}

crate::txn::bound!(impl<M: Preallocated> Slots<M>);

/// Why a conditional write of a slot matched nothing.
enum Miss {
    NotAllocated,
    /// Held by this holder.
    HeldBy(Bson),
    Free,
}

impl<M: Preallocated> Slots<M> {
    crate::txn::in_transaction! {
        /// The same grid in the caller's transaction `tx`: [`book`](Slots::book),
        /// [`book_all`](Slots::book_all), [`cancel`](Slots::cancel), [`release`](Slots::release),
        /// [`book_range`](Slots::book_range), [`free_range`](Slots::free_range) and
        /// [`repair`](Slots::repair) run in it and commit or abort with it (see [`Transaction`]);
        /// its reads ([`get`](Slots::get), [`available`](Slots::available),
        /// [`free_ranges`](Slots::free_ranges)) run in it too, and see its own bookings.
        /// [`allocate`](Slots::allocate) runs on its own: an allocation skips the slots that
        /// exist, which a transaction's first duplicate key would abort.
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
        M::SLOTS.holder().ok_or(Error::Unsupported {
            operation: operation.to_owned(),
            reason: "the model has no `holder = ..` in its `#[preallocated]`: book its bitmap \
                     with `book_range`",
        })
    }

    /// The resource and the slot a caller names, checked (they are equalities in filters) and
    /// recorded on the operation's span (declared `later(resource, slot)`).
    fn ids(resource: impl IntoId<M::Resource>, slot: impl IntoId<M::Slot>) -> Result<(Bson, Bson)> {
        let resource = crate::literal::typed_id(M::SLOTS.resource(), resource.into_id())?;
        let slot = crate::literal::typed_id(M::SLOTS.slot(), slot.into_id())?;
        let span = tracing::Span::current();
        span.record("resource", tracing::field::display(&resource));
        span.record("slot", tracing::field::display(&slot));
        Ok((resource, slot))
    }

    /// A holder is someone: `null` would book nothing and tell the caller it won.
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
        Error::NotFound {
            collection: M::SLOTS.collection().to_owned(),
            missing: Box::new(crate::error::Missing::Slot {
                resource: resource.clone(),
                slot: slot.clone(),
            }),
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

    fn not_holder(&self, resource: &Bson, slot: &Bson, holder: Bson) -> Error {
        Error::NotHolder {
            collection: M::SLOTS.collection().to_owned(),
            resource: Box::new(resource.clone()),
            slot: Box::new(slot.clone()),
            holder: Box::new(holder),
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

    fn bitmap_field(&self, operation: &str, sub_slots: &Range<u32>) -> Result<&'static str> {
        let s = M::SLOTS;
        let Some(bitmap) = s.bitmap() else {
            return Err(Error::Unsupported {
                operation: operation.to_owned(),
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

/// Compile-time checks of a `#[preallocated]` model's fields (generated code), by autoref
/// specialisation as in `checks`. Not a stable API.
#[doc(hidden)]
pub mod slot_probe {
    use crate::checks::{Fail, Pass, Probe};

    /// The probe of a field of type `T`.
    pub type SlotProbe<T> = Probe<T>;

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
    impl<T: SlotKey> ProbeSlotKey for &Probe<T> {}

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
    impl ProbeBits32 for &Probe<i32> {}

    /// `bits()` for `i64`.
    pub trait ProbeBits64 {
        /// 63.
        fn bits(&self) -> Bits<63> {
            Bits
        }
    }
    impl ProbeBits64 for &&Probe<i64> {}

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
    impl<T: ?Sized> ProbeOtherSlot for Probe<T> {}

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

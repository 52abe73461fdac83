//! Reading a grid: one slot, the free slots of a range, a bitmap's free runs.

use super::*;
use crate::span::Spanned as _;
use crate::txn::collect_in;

impl<M: Preallocated> Slots<M> {
    /// The slot of `resource` and `slot`, if it was allocated.
    pub fn get<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> crate::model::Pending<'a, Result<Option<M>>> {
        crate::model::Pending::new(self.get_op(resource.into_id(), slot.into_id()))
    }

    async fn get_op(&self, resource: M::Resource, slot: M::Slot) -> Result<Option<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.get",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let (resource, slot) = Self::ids(resource, slot)?;
                let mut session = self.session().await?;
                let raw = self.raw();
                let op = raw.find_one(Self::key(&resource, &slot));
                let found = in_session!(op, session.as_deref_mut())?;
                found.map(crate::model::read::decode::<M>).transpose()
            },
        )
        .await
    }

    /// The free slots of `resource` from `from` (included) to `to` (excluded), in slot order:
    /// one query on the unique `{resource, slot}` index. With a bitmap, the slots with at least
    /// one free sub-slot. `from` and `to` are of the slot's type: MongoDB compares values of one
    /// type only, so a string date against stored `DateTime`s matches nothing.
    pub fn available<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        from: impl IntoId<M::Slot>,
        to: impl IntoId<M::Slot>,
    ) -> crate::model::Pending<'a, Result<Vec<M>>> {
        crate::model::Pending::new(self.available_op(
            resource.into_id(),
            from.into_id(),
            to.into_id(),
        ))
    }

    async fn available_op(
        &self,
        resource: M::Resource,
        from: M::Slot,
        to: M::Slot,
    ) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.available",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let s = M::SLOTS;
                let resource = crate::literal::typed_id(s.resource(), resource)?;
                let (from, to) = (
                    crate::literal::typed_id(s.slot(), from)?,
                    crate::literal::typed_id(s.slot(), to)?,
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
                let mut session = self.session().await?;
                let raw = self.raw();
                let find = raw.find(filter).sort(doc! { s.slot(): 1 });
                let docs: Vec<Document> = collect_in!(find, session.as_deref_mut())?;
                docs.into_iter()
                    .map(crate::model::read::decode::<M>)
                    .collect()
            },
        )
        .await
    }

    /// The free sub-slots of the slot, as ranges (`[0..18, 20..48]`): one read.
    /// [`Error::NotFound`] of the slot when the slot was never allocated.
    pub fn free_ranges<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> crate::model::Pending<'a, Result<Vec<Range<u32>>>> {
        crate::model::Pending::new(self.free_ranges_op(resource.into_id(), slot.into_id()))
    }

    async fn free_ranges_op(
        &self,
        resource: M::Resource,
        slot: M::Slot,
    ) -> Result<Vec<Range<u32>>> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.free_ranges",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let bitmap = self.bitmap_field("free_ranges", &(0..1))?;
                let (resource, slot) = Self::ids(resource, slot)?;
                let mut session = self.session().await?;
                let raw = self.raw();
                let op = raw
                    .find_one(Self::key(&resource, &slot))
                    .projection(doc! { bitmap: 1 });
                let found = in_session!(op, session.as_deref_mut())?;
                let Some(d) = found else {
                    return Err(self.not_allocated(&resource, &slot));
                };
                let bits = match d.get(bitmap) {
                    Some(Bson::Int32(b)) => i64::from(*b),
                    Some(Bson::Int64(b)) => *b,
                    _ => return Err(not_a_bitmap(bitmap)),
                };
                Ok(free_runs(bits, M::SLOTS.sub_slots()))
            },
        )
        .await
    }
}

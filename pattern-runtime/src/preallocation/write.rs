//! Booking and freeing slots: one conditional update each (a transaction where data derives
//! from the holder), all of several slots or none, and ranges of a bitmap's sub-slots.

use super::*;
use crate::span::Spanned as _;

impl<M: Preallocated> Slots<M> {
    /// Books the slot for `holder`: one `findAndModify` whose filter requires it free; returns
    /// the slot as booked. [`Error::AlreadyBooked`] (with its holder) when it is taken,
    /// [`Error::NotFound`] of the slot when it was never allocated; nothing is written then. When
    /// another model derives data from the holder (a `#[computed(count = .., by = holder)]`),
    /// the booking runs in a transaction with it, and a holder that has no such document is
    /// [`Error::NotFound`] of that model, nothing written (see
    /// [the computed module](crate::computed)'s rule for targets).
    ///
    /// The holder is any BSON value (the resource and the slot are typed, the holder is not: it
    /// may be an extended reference's source id). One the holder field's type cannot hold (`5`
    /// for an `Option<String>`) is [`Error::InvalidValue`]: the slot would not read back as the
    /// model, so the booking is undone.
    pub fn book<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        holder: impl Into<Bson>,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.book_op(resource.into_id(), slot.into_id(), holder.into()))
    }

    async fn book_op(&self, resource: M::Resource, slot: M::Slot, holder: Bson) -> Result<M> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.book",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let holder_field = self.holder_field("book")?;
                let (resource, slot) = Self::ids(resource, slot)?;
                Self::check_holder(&holder, holder_field)?;
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
                        let read: M =
                            bson::deserialize_from_document(booked.clone()).map_err(|e| {
                                crate::error::refusal(Self::wrong_holder(holder_field, e))
                            })?;
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
            },
        )
        .await
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
    /// transaction and is returned ([`Error::AlreadyBooked`], [`Error::NotFound`] of the slot). Without
    /// transactions the undo is a second write, best effort.
    pub async fn book_all<R, S>(&self, slots: &[(R, S)], holder: impl Into<Bson>) -> Result<Vec<M>>
    where
        R: Clone + IntoId<M::Resource>,
        S: Clone + IntoId<M::Slot>,
    {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.book_all",
                model = self.span_model(),
                collection = self.span_collection(),
                slots = slots.len()
            ),
            async move {
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
                    let keys: Vec<Document> =
                        slots.iter().map(|(r, sl)| Self::key(r, sl)).collect();
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
            },
        )
        .await
    }

    /// Frees the slot if `holder` holds it; returns it as freed (also when it was free already).
    /// [`Error::NotHolder`] when someone else holds it, [`Error::NotFound`] of the slot when it was
    /// never allocated; nothing is written then. `holder` is compared with the stored holder as
    /// a value, except a document with an `_id` (an extended-reference copy of the holder),
    /// compared by that `_id` alone: a rename of the holder, copied into the slot since the
    /// booking, does not make it someone else.
    pub fn cancel<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        holder: impl Into<Bson>,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.cancel_op(
            resource.into_id(),
            slot.into_id(),
            holder.into(),
        ))
    }

    async fn cancel_op(&self, resource: M::Resource, slot: M::Slot, holder: Bson) -> Result<M> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.cancel",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let holder_field = self.holder_field("cancel")?;
                let (resource, slot) = Self::ids(resource, slot)?;
                Self::check_holder(&holder, holder_field)?;
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
            },
        )
        .await
    }

    /// Frees the slot whoever holds it; returns it as freed. [`Error::NotFound`] of the slot when it was
    /// never allocated.
    pub fn release<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.release_op(resource.into_id(), slot.into_id()))
    }

    async fn release_op(&self, resource: M::Resource, slot: M::Slot) -> Result<M> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.release",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let holder_field = self.holder_field("release")?;
                let (resource, slot) = Self::ids(resource, slot)?;
                self.free(Self::key(&resource, &slot), &resource, &slot, holder_field)
                    .await
            },
        )
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
        crate::model::read::decode::<M>(freed)
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
                // Only a cancellation names a holder: the slot is someone else's.
                Miss::HeldBy(h) => Err(self.not_holder(resource, slot, h)),
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
    /// say who), [`Error::NotFound`] of the slot when the slot was never allocated, [`Error::InvalidValue`]
    /// for a range outside the bitmap; nothing is written then.
    pub fn book_range<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        sub_slots: Range<u32>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.book_range_op(
            resource.into_id(),
            slot.into_id(),
            sub_slots,
        ))
    }

    async fn book_range_op(
        &self,
        resource: M::Resource,
        slot: M::Slot,
        sub_slots: Range<u32>,
    ) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.book_range",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let bitmap = self.bitmap_field("book_range", &sub_slots)?;
                let (resource, slot) = Self::ids(resource, slot)?;
                let mask = Self::mask(&sub_slots);
                let bits = BitUpdate {
                    bitmap,
                    test: ("$bitsAllClear", mask.clone()),
                    op: ("or", mask),
                    done: "sub-slots booked",
                };
                self.update_bits(&resource, &slot, bits, || {
                    self.already_booked(&resource, &slot, None)
                })
                .await
            },
        )
        .await
    }

    /// Frees sub-slots `sub_slots` of the slot: one update whose filter requires them all set
    /// (`$bitsAllSet`) and which clears them. [`Error::InvalidValue`] when any of them is free
    /// already (a range freed twice, or never booked), [`Error::NotFound`] of the slot when the slot was
    /// never allocated; nothing is written then.
    pub fn free_range<'a>(
        &'a self,
        resource: impl IntoId<M::Resource>,
        slot: impl IntoId<M::Slot>,
        sub_slots: Range<u32>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.free_range_op(
            resource.into_id(),
            slot.into_id(),
            sub_slots,
        ))
    }

    async fn free_range_op(
        &self,
        resource: M::Resource,
        slot: M::Slot,
        sub_slots: Range<u32>,
    ) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::preallocation.free_range",
                model = self.span_model(),
                collection = self.span_collection(),
                resource = tracing::field::Empty,
                slot = tracing::field::Empty
            ),
            async move {
                let bitmap = self.bitmap_field("free_range", &sub_slots)?;
                let (resource, slot) = Self::ids(resource, slot)?;
                let mask = Self::mask(&sub_slots);
                let keep = match &mask {
                    Bson::Int64(m) => Bson::Int64(!m),
                    Bson::Int32(m) => Bson::Int32(!m),
                    other => other.clone(),
                };
                let bits = BitUpdate {
                    bitmap,
                    test: ("$bitsAllSet", mask),
                    op: ("and", keep),
                    done: "sub-slots freed",
                };
                self.update_bits(&resource, &slot, bits, || Error::InvalidValue {
                    field: bitmap.to_owned(),
                    reason: format!(
                        "sub-slots {}..{} are not all booked",
                        sub_slots.start, sub_slots.end
                    ),
                })
                .await
            },
        )
        .await
    }

    /// The write of [`book_range`](Self::book_range) and [`free_range`](Self::free_range):
    /// one `$bit` update of the slot's bitmap whose filter tests the bits first. When it
    /// matches nothing, why: the slot was never allocated, the bits were not as the filter
    /// required (`refused`), or the field is not a bitmap.
    async fn update_bits(
        &self,
        resource: &Bson,
        slot: &Bson,
        bits: BitUpdate,
        refused: impl FnOnce() -> Error,
    ) -> Result<()> {
        let BitUpdate {
            bitmap,
            test: (test, mask),
            op: (op, operand),
            done,
        } = bits;
        let mut filter = Self::key(resource, slot);
        filter.insert(bitmap, doc! { test: mask });
        let result = crate::derived::update_one(
            &self.db,
            self.tx.as_ref(),
            M::SCHEMA,
            filter,
            doc! { "$bit": { bitmap: { op: operand } } },
            &[bitmap],
        )
        .await?;
        if result.matched_count == 1 {
            tracing::debug!(written = 1, "{done}");
            return Ok(());
        }
        let mut session = self.session().await?;
        match self
            .miss(session.as_deref_mut(), resource, slot, bitmap)
            .await?
        {
            Miss::NotAllocated => Err(self.not_allocated(resource, slot)),
            Miss::HeldBy(Bson::Int32(_) | Bson::Int64(_)) => Err(refused()),
            Miss::HeldBy(_) | Miss::Free => Err(not_a_bitmap(bitmap)),
        }
    }
}

/// One `$bit` update of [`Slots::update_bits`]: the bitmap field, the filter's test of it
/// (`$bitsAllClear` or `$bitsAllSet`, with the mask), the `$bit` operation (`or` or `and`,
/// with its operand) and the debug event's message once written.
struct BitUpdate {
    bitmap: &'static str,
    test: (&'static str, Bson),
    op: (&'static str, Bson),
    done: &'static str,
}

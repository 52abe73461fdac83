//! Writing an outlier field: pushes (embedded until the limit or the byte budget, then overflow
//! documents) and removals, each keeping the count and the flag with the items.

use super::*;
use crate::validator::shape::narrowest;
use pattern_derive::operation;

/// How many of `items`, from the first, fit in `count` more items and `bytes` more bytes.
fn fit(items: &[(Bson, usize)], count: usize, bytes: usize) -> usize {
    let mut used = 0usize;
    items
        .iter()
        .take(count)
        .take_while(|(_, c)| {
            used = used.saturating_add(*c);
            used <= bytes
        })
        .count()
}

/// The items' values and their added bytes.
fn split(items: &[(Bson, usize)]) -> (Vec<Bson>, usize) {
    (
        items.iter().map(|(b, _)| b.clone()).collect(),
        items.iter().map(|(_, c)| *c).sum(),
    )
}

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> Outlier<P, T> {
    /// Appends `item` to the document `id`'s items. See [`push_many`](Self::push_many).
    pub async fn push(&self, id: impl IntoId<P::Id>, item: T) -> Result<()> {
        self.push_many(id, vec![item]).await
    }

    /// Appends `items`, in order, to the document `id`'s items: embedded while the main
    /// document has room and is no outlier, else into the overflow documents. One conditional
    /// update when they fit; otherwise the count (one `findAndModify`), then the `$push`es
    /// (no transaction: see the [module documentation](super)). [`Error::NotFound`] when there
    /// is no such document, [`Error::DocumentTooLarge`] for an item that alone would pass
    /// 16 MiB inside its document: nothing is written then. [`Error::Incomplete`] when a write
    /// after the count fails: [`rebuild`](Self::rebuild) repairs the count.
    #[operation(outlier.push, field = self.spec.field(), items = items.len(), later(id, overflowed))]
    pub async fn push_many(&self, id: impl IntoId<P::Id>, items: Vec<T>) -> Result<()> {
        let id = crate::literal::typed_id("_id", id.into_id())?;
        let span = tracing::Span::current();
        span.record("id", tracing::field::display(&id));
        if items.is_empty() {
            return Ok(());
        }
        let spec = self.spec;
        // An item alone in an overflow document: `_id`, parent, seq and the array around it,
        // measured once with an empty item; each item adds its own bytes to that.
        let around = check_size(
            &doc! {
                "_id": format!("{}_{}_0000000000", spec.field(), id_text(&id)),
                spec.parent(): id.clone(),
                SEQ: 0,
                spec.field(): [Document::new()],
            },
            "an outlier's overflow document",
        )? - EMPTY_DOCUMENT;
        let mut docs: Vec<(Bson, usize)> = Vec::with_capacity(items.len());
        for item in &items {
            // A document or a scalar (a `Vec<String>` of tags): stored as serde gives it.
            let doc = bson::serialize_to_bson(item)?;
            crate::literal::check_value(spec.field(), &doc)?;
            let c = value_cost(&doc)?;
            let alone = around + c - ELEMENT_OVERHEAD;
            if alone > crate::error::MAX_DOCUMENT_SIZE {
                return Err(Error::DocumentTooLarge {
                    what: "an item of an outlier array, inside its overflow document,".to_owned(),
                    size: Some(alone),
                    limit: crate::error::MAX_DOCUMENT_SIZE,
                });
            }
            docs.push((doc, c));
        }
        let fields = [spec.field(), spec.count(), spec.flag()];
        if self.tx.is_none() && !crate::derived::has_dependents(P::SCHEMA, Some(&fields)) {
            // Nothing derives from the main document's items or count: no transaction (see
            // the module documentation).
            return self.push_in(None, &id, docs).await;
        }
        // In the caller's transaction, or in one of its own so that what derives from the
        // count or the items moves with them: the same writes, in one session.
        transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            self.push_in(s.as_deref_mut(), &id, docs.clone())
                .await
                .map_err(crate::error::into_body)?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok(())
        })
    }

    /// The writes of [`push_many`](Self::push_many), in `s` when there is one (then an error
    /// is returned as it is: the transaction keeps nothing, so nothing is incomplete).
    async fn push_in(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
        docs: Vec<(Bson, usize)>,
    ) -> Result<()> {
        let spec = self.spec;
        let span = tracing::Span::current();
        let budget = spec.max_bytes() as usize;
        let in_transaction = s.is_some();
        let id = id.clone();
        let n = docs.len() as i64;
        let limit = i64::from(spec.limit());
        let main = self.main();
        let (all, all_bytes) = split(&docs);
        // Fast path: the items fit into a main document that is no outlier. The count, the
        // array and the byte budget all say there is room, so none can be passed.
        if n <= limit && all_bytes <= budget {
            let room = format!("{}.{}", spec.field(), limit - n);
            let update = main.update_one(
                doc! {
                    "_id": id.clone(),
                    spec.flag(): { "$ne": true },
                    spec.count(): { "$lte": limit - n },
                    room: { "$exists": false },
                    "$expr": room_for(budget, all_bytes),
                },
                doc! {
                    "$push": { spec.field(): { "$each": all } },
                    "$inc": { spec.count(): narrowest(n) },
                },
            );
            let result = in_session!(update, s.as_deref_mut())?;
            if result.matched_count == 1 {
                span.record("overflowed", 0);
                return Ok(());
            }
        }
        // The items do not all fit: count them and flag the document in one update, which
        // returns the count before them.
        let count = main
            .find_one_and_update(
                doc! { "_id": id.clone() },
                doc! { "$inc": { spec.count(): narrowest(n) }, "$set": { spec.flag(): true } },
            )
            .projection(doc! { spec.flag(): 1, spec.count(): 1 })
            .return_document(ReturnDocument::Before);
        let before =
            in_session!(count, s.as_deref_mut())?.ok_or_else(|| self.not_found(id.clone()))?;
        let outlier = before.get_bool(spec.flag()).unwrap_or(false);
        let stored = int(before.get(spec.count()));
        // Only the push that crosses the limit has items for the main document: every later
        // one finds the flag set.
        let room = if outlier {
            0
        } else {
            (limit - stored).clamp(0, n)
        } as usize;
        let mut rest: Vec<(Bson, usize)> = docs[room..].to_vec();
        if room > 0 {
            let (embedded, bytes) = split(&docs[..room]);
            let guard = format!("{}.{}", spec.field(), limit - room as i64);
            let push = if bytes > budget {
                None
            } else {
                let update = main.update_one(
                    doc! {
                        "_id": id.clone(),
                        guard: { "$exists": false },
                        "$expr": room_for(budget, bytes),
                    },
                    doc! { "$push": { spec.field(): { "$each": embedded } } },
                );
                Some(in_session!(update, s.as_deref_mut()))
            };
            match push {
                Some(Ok(r)) if r.matched_count == 1 => {}
                None | Some(Ok(_)) => {
                    // No room by bytes, or the count said there was room and the array
                    // disagrees (edited by hand): nothing goes past the limit or the budget,
                    // the items overflow instead.
                    let mut all = docs[..room].to_vec();
                    all.extend(rest);
                    rest = all;
                }
                Some(Err(e)) if in_transaction => return Err(e.into()),
                Some(Err(e)) => {
                    return Err(Error::Incomplete {
                        written: 0,
                        failed: docs.len(),
                        source: Box::new(e.into()),
                    })
                }
            }
        }
        let overflowed = rest.len();
        span.record("overflowed", overflowed);
        let total = rest.len();
        // Where the open overflow document should be, from the count: the search for it starts
        // one document before (a count lowered by removals, or overflow documents closed by
        // their byte budget before their capacity, only widen the search; one ahead of the
        // items makes it miss, and the slow path reads the last document instead).
        let first = (stored + room as i64 - limit).max(0);
        let from_seq = (first / i64::from(spec.capacity())).max(1);
        if let Err(e) = self.overflow_push(s, &id, &mut rest, from_seq).await {
            if in_transaction {
                return Err(e);
            }
            let failed = rest.len();
            tracing::debug!(
                written = docs.len() - failed,
                failed,
                "push incomplete: the count is ahead of the items; `rebuild` repairs it"
            );
            return Err(Error::Incomplete {
                written: docs.len() - failed,
                failed,
                source: Box::new(e),
            });
        }
        debug_assert!(rest.is_empty() && total == overflowed);
        Ok(())
    }

    /// Appends `rest` (items and their bytes) to the overflow documents of `id`, removing from
    /// it what it wrote.
    ///
    /// Only the last overflow document is open (`full` not set): one conditional `$push` into
    /// it, with room for the items by count and by bytes, is the common write; its filter
    /// starts at `from_seq` (from the count), so the `{parent, seq}` index reads one or two
    /// documents, not every one. When it has no room, the writer reads the last document and
    /// its size, fills what room it has, closes it (`full: true`) and creates the next one, at
    /// the next `seq`, by an insert that the unique `{parent, seq}` index guards; a writer that
    /// loses a race to another reads the last document again. A closed document never takes an
    /// item again, even after removals made room in it: the items stay in push order. An item
    /// larger than the byte budget (but within 16 MiB) gets a document of its own.
    ///
    /// In a session (`s`), a duplicate key is returned at once: the transaction is over, and a
    /// retry of the whole transaction reads the documents again.
    async fn overflow_push(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
        rest: &mut Vec<(Bson, usize)>,
        from_seq: i64,
    ) -> Result<()> {
        let spec = self.spec;
        let overflow = self.overflow();
        let capacity = spec.capacity() as usize;
        let budget = spec.max_bytes() as usize;
        // An open document at `seq` with room for `bytes` more and for the items up to `guard`
        // (the array's index past the last one that fits), and the push of the items.
        let room = |seq: Bson, guard: &str, bytes: usize| {
            doc! {
                spec.parent(): id.clone(),
                SEQ: seq,
                FULL: { "$ne": true },
                guard: { "$exists": false },
                "$expr": room_for(budget, bytes),
            }
        };
        let push_each = |items: Vec<Bson>| doc! { "$push": { spec.field(): { "$each": items } } };
        while !rest.is_empty() {
            // The open document, if it has room for all (up to a document's worth).
            let take = fit(rest, capacity, budget).max(1);
            let (items, bytes) = split(&rest[..take]);
            let guard = format!("{}.{}", spec.field(), capacity - take);
            let push = overflow.update_one(
                room(doc! { "$gte": from_seq }.into(), &guard, bytes),
                push_each(items),
            );
            let pushed = in_session!(push, s.as_deref_mut())?;
            if pushed.matched_count == 1 {
                rest.drain(..take);
                continue;
            }
            // No room for all: the last document, its items and its bytes.
            let read = overflow.aggregate([
                doc! { "$match": { spec.parent(): id.clone() } },
                doc! { "$sort": { SEQ: -1 } },
                doc! { "$limit": 1 },
                doc! { "$project": {
                    SEQ: 1,
                    FULL: 1,
                    "n": { "$size": format!("${}", spec.field()) },
                    "bytes": { "$bsonSize": "$$ROOT" },
                } },
            ]);
            let last: Option<Document> = collect_in!(read, s.as_deref_mut())?.pop();
            let (seq, size, bytes_used, open) = match &last {
                Some(d) => (
                    int(d.get(SEQ)),
                    usize::try_from(int(d.get("n"))).unwrap_or(0),
                    usize::try_from(int(d.get("bytes"))).unwrap_or(budget),
                    !d.get_bool(FULL).unwrap_or(false),
                ),
                None => (0, capacity, budget, false),
            };
            if open && size < capacity {
                let take = fit(rest, capacity - size, budget.saturating_sub(bytes_used));
                if take > 0 {
                    let (items, bytes) = split(&rest[..take]);
                    let guard = format!("{}.{}", spec.field(), capacity - take);
                    let fill =
                        overflow.update_one(room(seq.into(), &guard, bytes), push_each(items));
                    let filled = in_session!(fill, s.as_deref_mut())?;
                    if filled.matched_count == 1 {
                        rest.drain(..take);
                        tracing::debug!(seq, added = take, "overflow document filled");
                    }
                    // Else another writer changed it first: read it again.
                    continue;
                }
                // Room by count, none by bytes: it is full.
            }
            if last.is_some() && open {
                let close = overflow.update_one(
                    doc! { spec.parent(): id.clone(), SEQ: seq },
                    doc! { "$set": { FULL: true } },
                );
                in_session!(close, s.as_deref_mut())?;
                tracing::debug!(
                    seq,
                    items = size,
                    bytes = bytes_used,
                    "overflow document closed"
                );
            }
            let seq = seq + 1;
            let take = fit(rest, capacity, budget).max(1);
            let (items, _) = split(&rest[..take]);
            let mut doc = doc! {
                "_id": format!("{}_{}_{seq}", spec.field(), id_text(id)),
                spec.parent(): id.clone(),
                SEQ: seq,
                spec.field(): items,
            };
            let insert = overflow.insert_one(doc.clone());
            let mut inserted = in_session!(insert, s.as_deref_mut());
            if let Err(e) = &inserted {
                if s.is_some() {
                    return Err(e.clone().into());
                }
                if Error::from(e.clone()).is_duplicate_key()
                    && overflow
                        .find_one(doc! { spec.parent(): id.clone(), SEQ: seq })
                        .projection(doc! { "_id": 1 })
                        .await?
                        .is_none()
                {
                    // The readable `_id` is another parent's (`7` and `"7"` read alike in it):
                    // this document takes an ObjectId instead.
                    doc.insert("_id", bson::oid::ObjectId::new());
                    inserted = overflow.insert_one(doc).await;
                }
            }
            match inserted {
                Ok(_) => {
                    rest.drain(..take);
                    tracing::debug!(seq, added = take, "overflow document created");
                }
                Err(e) if Error::from(e.clone()).is_duplicate_key() => {
                    // Another writer created it first (read the last document again), unless
                    // the `_id` is another parent's (`1` and `"1"` read alike in an `_id`).
                    let raced = overflow
                        .find_one(doc! { spec.parent(): id.clone(), SEQ: seq })
                        .projection(doc! { "_id": 1 })
                        .await?;
                    if raced.is_none() {
                        return Err(e.into());
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Removes every item equal to `item`, wherever it lives (`$pull` from the main document
    /// and the overflow documents), and writes the count and flag again, in one transaction.
    /// Returns how many items were removed. Overflow documents left empty are deleted.
    #[operation(outlier.remove, field = self.spec.field(), later(id))]
    pub async fn remove(&self, id: impl IntoId<P::Id>, item: &T) -> Result<u64> {
        let id = crate::literal::span_id(id.into_id())?;
        let item = bson::serialize_to_bson(item)?;
        crate::literal::check_value(self.spec.field(), &item)?;
        // `$eq`: the item is compared whole, never read as a query on its fields (a regex in
        // it would match by pattern).
        let item = Bson::Document(doc! { "$eq": item });
        let spec = self.spec;
        let (main, overflow) = (self.main(), self.overflow());
        let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            let watch = self.watch_main(s.as_deref_mut(), &id).await?;
            let before = self.state_in(s.as_deref_mut(), &id).await?;
            let pull = main.update_one(
                doc! { "_id": id.clone() },
                doc! { "$pull": { spec.field(): item.clone() } },
            );
            in_session!(pull, s.as_deref_mut())?;
            let pull = overflow.update_many(
                doc! { spec.parent(): id.clone() },
                doc! { "$pull": { spec.field(): item.clone() } },
            );
            in_session!(pull, s.as_deref_mut())?;
            let empty = overflow
                .delete_many(doc! { spec.parent(): id.clone(), spec.field(): { "$size": 0 } });
            in_session!(empty, s.as_deref_mut())?;
            let after = self.write_state(s.as_deref_mut(), &id).await?;
            if let Some(watch) = watch {
                watch.after(&self.db, s).await?;
            }
            Ok((before.embedded + before.overflowed) - (after.embedded + after.overflowed))
        });
        self.map_no_parent(id, outcome)
    }

    /// Before a write of the main document's items, count or flag: what other patterns keep
    /// from them, as stored now (`None`, nothing sent, when nothing derives from them).
    pub(super) async fn watch_main(
        &self,
        s: Option<&mut ClientSession>,
        id: &Bson,
    ) -> mongodb::error::Result<Option<crate::derived::Watch>> {
        let spec = self.spec;
        crate::derived::watch(
            &self.db,
            s,
            P::SCHEMA,
            Some(&[spec.field(), spec.count(), spec.flag()]),
            &doc! { "_id": id.clone() },
        )
        .await
    }

    pub(super) fn map_no_parent<R>(&self, id: Bson, outcome: Result<R>) -> Result<R> {
        match outcome {
            Err(Error::Driver { source, .. }) if source.get_custom::<NoParent>().is_some() => {
                Err(self.not_found(id))
            }
            other => other,
        }
    }
}

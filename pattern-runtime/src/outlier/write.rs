//! Writing an outlier field: pushes (embedded until the limit or the byte budget, then overflow
//! documents) and removals, each keeping the count and the flag with the items.

use super::*;
use crate::error::bytes_left;
use crate::schema::shape::narrowest;
use crate::span::Spanned as _;
use bson::oid::ObjectId;

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

/// What `full: true` adds to an overflow document: the type, the key and its NUL, the bool.
const CLOSED: usize = 7;

/// The field a push's pipeline keeps its condition in between its stages (unset at the end).
const FITS: &str = "__outlierFits";

/// What a push's receipt adds to the main document: `(first, next)`, the bytes of the
/// document's first receipt (with the field around it) and of one more beside others.
fn receipt_bytes(spec: &OutlierSpec) -> (i64, i64) {
    let receipt = Bson::Document(doc! { "t": ObjectId::new(), "k": 0_i64, "from": 0_i64 });
    // `{t, k, from}` has one size whatever its values; as an array item (index "0" to "3").
    let next = value_cost(&receipt).unwrap_or(0);
    // The field: its type, its name and NUL, the array's length and final NUL, the item.
    let first = 1 + spec.receipts().len() + 1 + 4 + 1 + next;
    let as_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    (as_i64(first), as_i64(next))
}

/// The pipeline of a push of `items` to the main document (`cum`: the bytes of its first 1, 2,
/// ... items; `token`: the push's own). The first `k` of them are appended: as many as the
/// limit and the byte budget leave room for, none for an outlier or for a document whose count
/// disagrees with its array (drift: the check reports it). The flag is set when not all of them
/// fit, and the count moves by all of them, from the larger of the count and the array's
/// length. A receipt `{t: token, k, from}` (`from`: that count before) joins the last
/// [`RECEIPTS`].
///
/// A document that already holds the token's receipt is left as it is: the push was applied
/// (its command sent again, or its transaction's body run again after a commit whose answer
/// was lost). So the document after the write says what happened, whatever ran at the same
/// moment: its receipt of `token`.
fn main_push(spec: &OutlierSpec, items: Vec<Bson>, cum: &[i64], token: ObjectId) -> Vec<Document> {
    let (field, count, flag, receipts) = (spec.field(), spec.count(), spec.flag(), spec.receipts());
    let n = items.len() as i64;
    let limit = i64::from(spec.limit());
    let array = doc! { "$ifNull": [format!("${field}"), []] };
    let length = doc! { "$size": array.clone() };
    let stored = doc! { "$ifNull": [format!("${count}"), 0] };
    // Whatever else another writer left there reads as no receipts.
    let list =
        doc! { "$cond": [{ "$isArray": format!("${receipts}") }, format!("${receipts}"), []] };
    let by_count = doc! { "$cond": [
        { "$or": [
            { "$eq": [{ "$ifNull": [format!("${flag}"), false] }, true] },
            { "$ne": [stored.clone(), length.clone()] },
        ] },
        0,
        { "$max": [0, { "$min": [n, { "$subtract": [limit, stored.clone()] }] }] },
    ] };
    // The budget counts the receipt this push adds (none once there are `RECEIPTS`: one goes).
    let (first, next) = receipt_bytes(spec);
    let growth = doc! { "$cond": [
        { "$isArray": format!("${receipts}") },
        { "$cond": [{ "$lt": [{ "$size": list.clone() }, RECEIPTS as i64] }, next, 0] },
        first,
    ] };
    let left = doc! { "$subtract": [
        spec.max_bytes() as i64,
        { "$add": [{ "$bsonSize": "$$ROOT" }, growth] },
    ] };
    let by_bytes = doc! { "$size": { "$filter": {
        "input": { "$literal": cum },
        "cond": { "$lte": ["$$this", left] },
    } } };
    let applied = doc! { "$in": [token, { "$map": { "input": list.clone(), "in": "$$this.t" } }] };
    let k = format!("${FITS}");
    let from = doc! { "$max": [stored.clone(), length.clone()] };
    vec![
        // `k`, or -1 for a push applied already.
        doc! { "$set": { FITS: { "$cond": [applied, -1, { "$min": [by_count, by_bytes] }] } } },
        doc! { "$set": {
            field: { "$cond": [
                { "$gt": [k.clone(), 0] },
                { "$concatArrays": [array, { "$slice": [{ "$literal": items }, k.clone()] }] },
                format!("${field}"),
            ] },
            // The count keeps its stored integer type: an `i32` count stays an `Int32`.
            count: { "$cond": [
                { "$lt": [k.clone(), 0] },
                format!("${count}"),
                { "$add": [from.clone(), narrowest(n)] },
            ] },
            flag: { "$cond": [
                { "$and": [{ "$gte": [k.clone(), 0] }, { "$lt": [k.clone(), n] }] },
                true,
                format!("${flag}"),
            ] },
            receipts: { "$cond": [
                { "$lt": [k.clone(), 0] },
                format!("${receipts}"),
                { "$slice": [
                    { "$concatArrays": [list, [{
                        "t": token,
                        "k": { "$toLong": k },
                        "from": { "$toLong": from },
                    }]] },
                    -(RECEIPTS as i64),
                ] },
            ] },
        } },
        doc! { "$unset": FITS },
    ]
}

/// How many of `n` items [`main_push`] appended and the count before them, from the document
/// after it: its receipt of the push (see [`receipt_projection`]), or, when another writer
/// removed it, its count and its array's length (under [`length_key`]).
fn appended(spec: &OutlierSpec, after: &Document, n: usize) -> (usize, i64) {
    let receipt = match after.get(receipt_key(spec)) {
        Some(Bson::Array(mine)) => mine.first().and_then(Bson::as_document),
        _ => None,
    };
    let n = n as i64;
    let (k, from) = match receipt {
        Some(r) => (int(r.get("k")), int(r.get("from"))),
        None => {
            let from = int(after.get(spec.count())) - n;
            (int(after.get(length_key(spec))) - from, from)
        }
    };
    (usize::try_from(k.clamp(0, n)).unwrap_or(0), from)
}

/// Whether `e` is a write-concern error: the write was applied, not acknowledged as asked.
fn is_write_concern_error(e: &mongodb::error::Error) -> bool {
    matches!(
        e.kind.as_ref(),
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteConcernError(_))
    )
}

/// The key under which a push's projection returns its receipt (a one-item array, empty when
/// there is none): not the count's name, nor the length's key.
fn receipt_key(spec: &OutlierSpec) -> String {
    let mut key = "__receipt".to_owned();
    while key == spec.count() || key == length_key(spec) {
        key.push('_');
    }
    key
}

/// The projection of the main document after a push: the count, the array's length and the
/// push's receipt.
fn receipt_projection(spec: &OutlierSpec, token: ObjectId) -> Document {
    let receipts = format!("${}", spec.receipts());
    let list = doc! { "$cond": [{ "$isArray": receipts.clone() }, receipts, []] };
    doc! {
        spec.count(): 1,
        length_key(spec): { "$size": { "$ifNull": [format!("${}", spec.field()), []] } },
        receipt_key(spec): { "$filter": { "input": list, "cond": { "$eq": ["$$this.t", token] } } },
    }
}

impl<P: Model, T: Serialize + DeserializeOwned + Send + Sync + 'static> Outlier<P, T> {
    /// Appends `item` to the document `id`'s items. See [`push_many`](Self::push_many).
    pub fn push<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
        item: T,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.push_op(id.into_id(), item))
    }

    async fn push_op(&self, id: P::Id, item: T) -> Result<()> {
        self.push_many(id, vec![item]).await
    }

    /// Appends `items`, in order, to the document `id`'s items: embedded while the main
    /// document has room and is no outlier, else into the overflow documents. One conditional
    /// update when they fit; otherwise the count (one `findAndModify`), then the `$push`es
    /// (no transaction: see the [module documentation](super)). [`Error::NotFound`] when there
    /// is no such document, [`Error::DocumentTooLarge`] for an item that alone would pass
    /// 16 MiB inside its document: nothing is written then. [`Error::Incomplete`] when a write
    /// after the count fails: [`rebuild`](Self::rebuild) repairs the count. An empty `items`
    /// sends nothing and is `Ok`, whether the document exists or not.
    pub fn push_many<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
        items: Vec<T>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.push_many_op(id.into_id(), items))
    }

    async fn push_many_op(&self, id: P::Id, items: Vec<T>) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::outlier.push",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                items = items.len(),
                id = tracing::field::Empty,
                overflowed = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
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
                        BYTES: 0_i64,
                        FULL: true,
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
                            what: "an item of an outlier array, inside its overflow document,"
                                .to_owned(),
                            size: Some(alone),
                            limit: crate::error::MAX_DOCUMENT_SIZE,
                        });
                    }
                    docs.push((doc, c));
                }
                // A main document stored in an older schema version is rewritten at the current one
                // first, as before every toolkit update (one `find`, only for a model with older
                // versions): an upgrade after the push would not know the items.
                crate::stored::upgrade::upgrade_matching_in(
                    &self.db,
                    self.tx.as_ref(),
                    P::SCHEMA,
                    &doc! { "_id": id.clone() },
                )
                .await?;
                let fields = [spec.field(), spec.count(), spec.flag()];
                // The push's token: its receipt in the main document makes the write apply once, were
                // it sent twice.
                let token = ObjectId::new();
                if self.tx.is_none() && !crate::derived::has_dependents(P::SCHEMA, Some(&fields)) {
                    // Nothing derives from the main document's items or count: no transaction (see
                    // the module documentation).
                    return self.push_in(None, &id, docs, token).await;
                }
                // In the caller's transaction, or in one of its own so that what derives from the
                // count or the items moves with them: the same writes, in one session.
                let runs = std::sync::atomic::AtomicU32::new(0);
                transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    if runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) > 0
                        && self.applied(s.as_deref_mut(), &id, token).await?
                    {
                        // The body runs again after a commit whose answer was lost, and that commit
                        // went through: its writes (the items, the overflow documents, what derives
                        // from them) are all in, or none would be.
                        tracing::debug!(
                            "push applied by a transaction whose commit answer was lost"
                        );
                        return Ok(());
                    }
                    let watch = self.watch_main(s.as_deref_mut(), &id).await?;
                    self.push_in(s.as_deref_mut(), &id, docs.clone(), token)
                        .await
                        .map_err(crate::error::into_body)?;
                    if let Some(watch) = watch {
                        watch.after(&self.db, s).await?;
                    }
                    Ok(())
                })
            },
        )
        .await
    }

    /// Whether the main document `id` holds the receipt of the push `token` (a read, made only
    /// when a transaction's body runs again).
    async fn applied(
        &self,
        s: Option<&mut ClientSession>,
        id: &Bson,
        token: ObjectId,
    ) -> mongodb::error::Result<bool> {
        let main = self.main();
        let find = main
            .find_one(doc! { "_id": id.clone(), format!("{}.t", self.spec.receipts()): token })
            .projection(doc! { "_id": 1 });
        Ok(in_session!(find, s)?.is_some())
    }

    /// The writes of [`push_many`](Self::push_many), in `s` when there is one (then an error
    /// is returned as it is: the transaction keeps nothing, so nothing is incomplete).
    async fn push_in(
        &self,
        mut s: Option<&mut ClientSession>,
        id: &Bson,
        docs: Vec<(Bson, usize)>,
        token: ObjectId,
    ) -> Result<()> {
        let spec = self.spec;
        let span = tracing::Span::current();
        let in_transaction = s.is_some();
        let id = id.clone();
        let limit = i64::from(spec.limit());
        let main = self.main();
        // One write of the main document, whatever it holds: the first items that fit (by its
        // count and by bytes; none for an outlier) are appended, the flag set when not all
        // fit, the count moved by all of them, the push's receipt kept. The condition is
        // evaluated on the document itself (a pipeline), so the filter is the `_id` alone:
        // every server answers it through the index, where a `$expr` filter can make one scan
        // the collection. The push's receipt in the document after the write says how many
        // it took and where the count was (see `main_push`).
        let mut cum = Vec::with_capacity(docs.len());
        let mut sum = 0i64;
        for (_, c) in &docs {
            sum = sum.saturating_add(i64::try_from(*c).unwrap_or(i64::MAX));
            cum.push(sum);
        }
        let (all, _) = split(&docs);
        let write = main
            .find_one_and_update(
                doc! { "_id": id.clone() },
                main_push(spec, all, &cum, token),
            )
            .projection(receipt_projection(spec, token))
            .return_document(ReturnDocument::After);
        // A write-concern error (outside a transaction): the server applied the write without
        // the acknowledgement asked for. The push's receipt says what it did (one `find`, on
        // that path only), the push goes on to the overflow documents so that the count and
        // the items agree, and the error is returned at the end.
        let mut unacknowledged = None;
        let after = match in_session!(write, s.as_deref_mut()) {
            Ok(after) => after,
            Err(e) if !in_transaction && is_write_concern_error(&e) => {
                tracing::debug!(error = %e, "write concern error on the count: reading the receipt");
                let read = main
                    .find_one(doc! { "_id": id.clone() })
                    .projection(receipt_projection(spec, token));
                let after = read.await?;
                unacknowledged = Some(Error::from(e));
                after
            }
            Err(e) => return Err(e.into()),
        }
        .ok_or_else(|| self.not_found(id.clone()))?;
        let (room, stored) = appended(spec, &after, docs.len());
        if room == docs.len() {
            span.record("overflowed", 0);
            return unacknowledged.map_or(Ok(()), Err);
        }
        // The rest go to the overflow documents; the count before them tells where the open
        // one is.
        let mut rest: Vec<(Bson, usize)> = docs[room..].to_vec();
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
        unacknowledged.map_or(Ok(()), Err)
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
        // An open document at `seq` with room for the items up to `guard` (the array's index
        // past the last one that fits) and for their `bytes` (its byte count: a comparison the
        // index's document answers, never a `$expr`), and the push of the items.
        let room = |seq: Bson, guard: &str, bytes: usize| {
            doc! {
                spec.parent(): id.clone(),
                SEQ: seq,
                FULL: { "$ne": true },
                guard: { "$exists": false },
                BYTES: { "$lte": bytes_left(budget, bytes) },
            }
        };
        let push_each = |items: Vec<Bson>, bytes: usize| {
            doc! {
                "$push": { spec.field(): { "$each": items } },
                "$inc": { BYTES: i64::try_from(bytes).unwrap_or(i64::MAX) },
            }
        };
        while !rest.is_empty() {
            // The open document, if it has room for all (up to a document's worth).
            let take = fit(rest, capacity, budget).max(1);
            let (items, bytes) = split(&rest[..take]);
            let guard = format!("{}.{}", spec.field(), capacity - take);
            let push = overflow.update_one(
                room(doc! { "$gte": from_seq }.into(), &guard, bytes),
                push_each(items, bytes),
            );
            let pushed = in_session!(push, s.as_deref_mut())?;
            if pushed.matched_count == 1 {
                rest.drain(..take);
                continue;
            }
            // No room for all: the last document, its items and its bytes.
            let read = overflow.aggregate([
                doc! { "$match": { spec.parent(): parent_is(id) } },
                doc! { "$sort": { SEQ: -1 } },
                doc! { "$limit": 1 },
                doc! { "$project": {
                    SEQ: 1,
                    FULL: 1,
                    "n": { "$size": format!("${}", spec.field()) },
                    BYTES: 1,
                } },
            ]);
            let last: Option<Document> = collect_in!(read, s.as_deref_mut())?.pop();
            let (seq, size, bytes_used, open) = match &last {
                Some(d) => (
                    int(d.get(SEQ)),
                    usize::try_from(int(d.get("n"))).unwrap_or(0),
                    // Without a byte count (written before it was kept): full.
                    match d.get(BYTES) {
                        Some(b) => usize::try_from(int(Some(b))).unwrap_or(budget),
                        None => budget,
                    },
                    !d.get_bool(FULL).unwrap_or(false),
                ),
                None => (0, capacity, budget, false),
            };
            if open && size < capacity {
                let take = fit(rest, capacity - size, budget.saturating_sub(bytes_used));
                if take > 0 {
                    let (items, bytes) = split(&rest[..take]);
                    let guard = format!("{}.{}", spec.field(), capacity - take);
                    let fill = overflow
                        .update_one(room(seq.into(), &guard, bytes), push_each(items, bytes));
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
                    doc! { spec.parent(): parent_is(id), SEQ: seq },
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
                BYTES: 0_i64,
            };
            // Its byte count: its size as inserted, and the `full: true` that closes it.
            let size = check_size(&doc, "an outlier's overflow document")? + CLOSED;
            doc.insert(BYTES, i64::try_from(size).unwrap_or(i64::MAX));
            let insert = overflow.insert_one(doc.clone());
            let mut inserted = in_session!(insert, s.as_deref_mut());
            if let Err(e) = &inserted {
                if s.is_some() {
                    return Err(e.clone().into());
                }
                if Error::from(e.clone()).is_duplicate_key()
                    && overflow
                        .find_one(doc! { spec.parent(): parent_is(id), SEQ: seq })
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
                        .find_one(doc! { spec.parent(): parent_is(id), SEQ: seq })
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
    pub fn remove<'a>(
        &'a self,
        id: impl IntoId<P::Id>,
        item: &'a T,
    ) -> crate::model::Pending<'a, Result<u64>> {
        crate::model::Pending::new(self.remove_op(id.into_id(), item))
    }

    async fn remove_op(&self, id: P::Id, item: &T) -> Result<u64> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::outlier.remove",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let item = bson::serialize_to_bson(item)?;
                crate::literal::check_value(self.spec.field(), &item)?;
                // `$eq`: the item is compared whole, never read as a query on its fields (a regex in
                // it would match by pattern).
                let item = Bson::Document(doc! { "$eq": item });
                let spec = self.spec;
                let (main, overflow) = (self.main(), self.overflow());
                let outcome = transact!(self.db, self.tx.as_ref(), |s| async {
                    let mut s: Option<&mut ClientSession> = s;
                    crate::stored::upgrade::upgrade_matching(
                        &self.db,
                        s.as_deref_mut(),
                        P::SCHEMA,
                        &doc! { "_id": id.clone() },
                    )
                    .await?;
                    let watch = self.watch_main(s.as_deref_mut(), &id).await?;
                    let before = self.state_in(s.as_deref_mut(), &id).await?;
                    let pull = main.update_one(
                        doc! { "_id": id.clone() },
                        doc! { "$pull": { spec.field(): item.clone() } },
                    );
                    in_session!(pull, s.as_deref_mut())?;
                    let pull = overflow.update_many(
                        doc! { spec.parent(): parent_is(&id) },
                        doc! { "$pull": { spec.field(): item.clone() } },
                    );
                    in_session!(pull, s.as_deref_mut())?;
                    let empty = overflow.delete_many(
                        doc! { spec.parent(): parent_is(&id), spec.field(): { "$size": 0 } },
                    );
                    in_session!(empty, s.as_deref_mut())?;
                    let after = self.write_state(s.as_deref_mut(), &id).await?;
                    if let Some(watch) = watch {
                        watch.after(&self.db, s).await?;
                    }
                    Ok((before.embedded + before.overflowed) - (after.embedded + after.overflowed))
                });
                self.map_no_parent(id, outcome)
            },
        )
        .await
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

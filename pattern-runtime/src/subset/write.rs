//! Writing a subset: pushes (the full item inserted, the parent's capped array and summaries
//! updated in one `$push`/`$inc`) and removals (the array refilled from the full
//! collection).

use super::*;
use crate::span::Spanned as _;

/// Sums of the items' fields, as one `$inc` value per summary's sum.
fn sum_of(item: &Document, field: &str) -> Bson {
    match item.get(field) {
        Some(Bson::Int32(i)) => Bson::Int64(i64::from(*i)),
        Some(v @ (Bson::Int64(_) | Bson::Double(_))) => v.clone(),
        // `$sum` ignores missing and non-numeric values; so does the running sum.
        _ => Bson::Int64(0),
    }
}

/// An integer as the shell writes it: `Int32` when it fits (the server promotes a `$inc` that
/// overflows 32 bits to a long).
fn small(v: Bson) -> Bson {
    match v {
        Bson::Int64(i) => i32::try_from(i).map_or(Bson::Int64(i), Bson::Int32),
        other => other,
    }
}

fn add(a: Bson, b: Bson) -> Bson {
    match (a, b) {
        (Bson::Int64(x), Bson::Int64(y)) => Bson::Int64(x.wrapping_add(y)),
        (x, y) => Bson::Double(as_f64(&x) + as_f64(&y)),
    }
}

fn as_f64(v: &Bson) -> f64 {
    match v {
        #[allow(clippy::cast_precision_loss)]
        Bson::Int64(i) => *i as f64,
        Bson::Int32(i) => f64::from(*i),
        Bson::Double(d) => *d,
        _ => 0.0,
    }
}

fn negate(v: Bson) -> Bson {
    match v {
        Bson::Int64(i) => Bson::Int64(i.wrapping_neg()),
        Bson::Double(d) => Bson::Double(-d),
        other => other,
    }
}

impl<P, F, E> Subset<P, F, E>
where
    P: Model,
    F: Model,
    E: Serialize + for<'a> From<&'a F> + Send + Sync,
{
    /// Writes `item` to the full collection and adds it to the parent's subset and summary
    /// fields. Chain `.set(..)` to set more parent fields in the same update.
    ///
    /// Errors: [`Error::InvalidValue`] when the item's parent field names another parent than
    /// `parent_id` (nothing is written: push it to its own parent); [`Error::NotFound`] when no
    /// parent has this `_id` (nothing is written);
    /// [`Error::DocumentTooLarge`] when the item, or the parent with it, is over 16 MiB (nothing is
    /// written); [`Error::InvalidKey`] for a `.set()` key that cannot be a field,
    /// [`Error::KeptField`] for one the subset (or another pattern) writes; [`Error::DuplicateKey`] when an item with this `_id` exists.
    pub fn push(&self, parent_id: impl IntoId<P::Id>, item: F) -> Push<'_, P, F, E> {
        Push {
            subset: self,
            parent_id: crate::literal::typed_id("_id", parent_id.into_id()),
            items: vec![item],
            set: Ok(Document::new()),
        }
    }

    /// [`push`](Subset::push) for many items at once: one insert of the full items and one update
    /// of the parent, whatever their number.
    pub fn push_many(&self, parent_id: impl IntoId<P::Id>, items: Vec<F>) -> Push<'_, P, F, E> {
        Push {
            subset: self,
            parent_id: crate::literal::typed_id("_id", parent_id.into_id()),
            items,
            set: Ok(Document::new()),
        }
    }

    /// The update [`push`](Subset::push) sends to the parent for these full items (before the
    /// average, which a second, pipeline update recomputes): `$push` with `$each`, `$sort` and
    /// `$slice`, `$inc` of every count and sum, and `set` as `$set`.
    pub fn push_update(&self, items: &[F], set: Document) -> Result<Document> {
        self.validate_set(&set)?;
        let mut embedded = Vec::with_capacity(items.len());
        let mut full = Vec::with_capacity(items.len());
        for item in items {
            let doc = bson::serialize_to_document(item)?;
            self.check_item(&doc)?;
            full.push(doc);
            let e = bson::serialize_to_document(&E::from(item))?;
            crate::literal::check_document(self.spec.field(), &e)?;
            embedded.push(Bson::Document(e));
        }
        Ok(self.update_from_docs(&full, embedded, set))
    }

    /// [`Error::InvalidValue`] when a field the summaries' sums and averages add up is NaN or
    /// infinite: one such value would spoil the running sum for good.
    fn update_from_docs(&self, full: &[Document], embedded: Vec<Bson>, set: Document) -> Document {
        let spec = &self.spec.parts;
        let mut inc = Document::new();
        for c in spec.summaries {
            match c.kind {
                SummaryKind::Count => {
                    inc.insert(
                        c.field,
                        small(Bson::Int64(i64::try_from(full.len()).unwrap_or(i64::MAX))),
                    );
                }
                SummaryKind::Sum { item_field } => {
                    let total = full
                        .iter()
                        .map(|d| sum_of(d, item_field))
                        .fold(Bson::Int64(0), add);
                    inc.insert(c.field, small(total));
                }
                SummaryKind::Avg { .. } => {}
            }
        }
        let mut update = Document::new();
        if !inc.is_empty() {
            update.insert("$inc", inc);
        }
        if !set.is_empty() {
            update.insert("$set", set);
        }
        update.insert(
            "$push",
            doc! {
                spec.field: {
                    "$each": embedded,
                    "$sort": self.spec.sort_document(),
                    "$slice": small(Bson::Int64(i64::from(spec.limit))),
                }
            },
        );
        update
    }

    /// The checks of a full item [`push`](Subset::push) makes before writing anything: those of
    /// everything that keeps data from the full items, this subset's among them (an item is
    /// stored as given and its summed fields are finite: see `SubsetItems`).
    fn check_item(&self, full: &Document) -> Result<()> {
        derived::check_written(F::SCHEMA, full)
    }

    /// The checks [`push`](Subset::push) makes before writing anything.
    fn validate_set(&self, set: &Document) -> Result<()> {
        crate::error::check_encodable("the `set` of a push", set)?;
        let spec = &self.spec.parts;
        for (key, value) in set {
            validate_key(key)?;
            // Stored as given: no `$` or `.` keys inside, as in the items.
            crate::literal::check_value(key, value)?;
            if key == "_id" || key.starts_with("_id.") {
                return Err(Error::InvalidKey {
                    key: key.clone(),
                    reason: "a document's `_id` never changes",
                });
            }
            if key == spec.field || spec.summaries.iter().any(|c| c.field == key) {
                return Err(Error::KeptField {
                    field: key.clone(),
                    reason: "the subset already writes this field in the same update",
                });
            }
        }
        // Nor what another pattern keeps in the parent (a tree's parent, a computed value).
        derived::check_kept(P::SCHEMA, set.keys().map(String::as_str))?;
        derived::check_written(P::SCHEMA, set)?;
        Ok(())
    }

    /// `e` from the parent's `update`: an `$inc` of the counters past the 64-bit range as
    /// [`Error::InvalidValue`] naming the one that overflows.
    async fn overflow(
        &self,
        e: mongodb::error::Error,
        filter: &Document,
        update: &Document,
    ) -> mongodb::error::Error {
        let fields: Vec<&str> = self.spec.parts.summaries.iter().map(|c| c.field).collect();
        let what = format!("{}.{}", P::SCHEMA.name(), fields.join(", "));
        crate::error::update_overflow(e, &self.parents(), filter, update, &what).await
    }

    /// Whether `d` is this subset's own entry in the map (its writes keep it themselves).
    fn is_mine(&self, d: &dyn crate::schema::Dependent) -> bool {
        d.pattern() == "subset"
            && d.describe()
                == format!(
                    "{}.{} (subset of {})",
                    P::SCHEMA.name(),
                    self.spec.field(),
                    F::SCHEMA.name()
                )
    }

    pub(super) async fn write_push(
        &self,
        session: Option<&mut ClientSession>,
        parent_id: &Bson,
        full: &[Document],
        update: &Document,
    ) -> mongodb::error::Result<bool> {
        let parents = self.parents();
        let fulls = self.fulls();
        let filter = doc! { "_id": parent_id.clone() };
        let average = self.spec.average_update();
        match session {
            Some(s) => {
                // The parent first: a missing parent aborts before the item is written.
                let r = match parents
                    .update_one(filter.clone(), update.clone())
                    .session(&mut *s)
                    .await
                {
                    Ok(r) => r,
                    Err(e) => return Err(self.overflow(e, &filter, update).await),
                };
                if r.matched_count == 0 {
                    tracing::debug!("no parent with this _id: nothing written");
                    return Ok(false);
                }
                parent_updated(&r, true);
                if let [one] = full {
                    fulls.insert_one(one).session(&mut *s).await?;
                } else {
                    fulls.insert_many(full).session(&mut *s).await?;
                }
                items_inserted(full.len(), true);
                // What other models derive from the full items (a count of them elsewhere).
                derived::appeared_or_gone(&self.db, Some(&mut *s), F::SCHEMA, full, true, &|d| {
                    self.is_mine(d)
                })
                .await?;
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
            }
            None => {
                // Without transactions: is the parent there, then the full items, then the parent.
                if parents.count_documents(filter.clone()).limit(1).await? == 0 {
                    tracing::debug!("no parent with this _id: nothing written");
                    return Ok(false);
                }
                if let [one] = full {
                    fulls.insert_one(one).await?;
                } else {
                    fulls.insert_many(full).await?;
                }
                items_inserted(full.len(), false);
                derived::appeared_or_gone(&self.db, None, F::SCHEMA, full, true, &|d| {
                    self.is_mine(d)
                })
                .await?;
                let r = match parents.update_one(filter.clone(), update.clone()).await {
                    Ok(r) => r,
                    Err(e) => return Err(self.overflow(e, &filter, update).await),
                };
                parent_updated(&r, false);
                if let Some(avg) = average {
                    let r = parents.update_one(filter, avg).await?;
                    averages_updated(&r, false);
                }
            }
        }
        Ok(true)
    }

    pub(super) async fn run_push(
        &self,
        parent_id: Result<Bson>,
        items: Vec<F>,
        set: Document,
    ) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::subset.push",
                model = self.span_model(),
                collection = self.span_collection(),
                items_collection = self.spec.full_collection(),
                field = self.spec.field(),
                items = items.len(),
                id = tracing::field::Empty
            ),
            async move {
                let parent_id = parent_id?;
                tracing::Span::current().record("id", tracing::field::display(&parent_id));
                if items.is_empty() {
                    return Ok(());
                }
                self.validate_set(&set)?;
                let what = format!("the {} item", F::SCHEMA.name());
                let mut full = Vec::with_capacity(items.len());
                let mut embedded = Vec::with_capacity(items.len());
                for item in &items {
                    let mut doc = bson::serialize_to_document(item)?;
                    check_size(&doc, &what)?;
                    self.check_item(&doc)?;
                    // The item belongs to the parent it is pushed to: a parent field naming another
                    // one is a mistake, refused (a missing or null one is filled in).
                    let key = self.spec.parts.parent_key;
                    match doc.get(key) {
                        None | Some(Bson::Null) => {}
                        Some(named)
                            if crate::finding::id_key(named)
                                == crate::finding::id_key(&parent_id) => {}
                        Some(named) => {
                            return Err(Error::InvalidValue {
                                field: key.to_owned(),
                                reason: format!(
                            "the item names the parent {named}, but it is pushed to {parent_id}: \
                             push it to its own parent, or set `{key}` to this one"
                        ),
                            })
                        }
                    }
                    doc.insert(key, parent_id.clone());
                    full.push(doc);
                    let e = bson::serialize_to_document(&E::from(item))?;
                    check_size(&e, &format!("the embedded form of {what}"))?;
                    crate::literal::check_document(self.spec.field(), &e)?;
                    for (key, _) in self.spec.parts.sort {
                        if !e.contains_key(key) {
                            return Err(crate::literal::invalid(
                                &format!("{}.{key}", self.spec.field()),
                                "the embedded item has no such field, yet the subset sorts by it: \
                         serialize it under the same name as in the full item",
                            ));
                        }
                    }
                    embedded.push(Bson::Document(e));
                }
                let update = self.update_from_docs(&full, embedded, set);
                let write = ParentWrite::Push {
                    full: &full,
                    update: &update,
                };
                let found = self.write_parent(&parent_id, write).await?;
                if found.is_some() {
                    Ok(())
                } else {
                    Err(self.parent_not_found(parent_id))
                }
            },
        )
        .await
    }

    /// Deletes the full item `item_id` of the parent and keeps the subset and summary fields
    /// right: the counters go down by the item, and the embedded array is refilled from the full
    /// collection. [`Error::NotFound`] when the parent has no such item.
    pub fn remove<'a>(
        &'a self,
        parent_id: impl IntoId<P::Id>,
        item_id: impl IntoId<F::Id>,
    ) -> crate::model::Pending<'a, Result<()>> {
        crate::model::Pending::new(self.remove_op(parent_id.into_id(), item_id.into_id()))
    }

    async fn remove_op(&self, parent_id: P::Id, item_id: F::Id) -> Result<()> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::subset.remove",
                model = self.span_model(),
                collection = self.span_collection(),
                items_collection = self.spec.full_collection(),
                field = self.spec.field(),
                id = tracing::field::Empty,
                item_id = tracing::field::Empty
            ),
            async move {
                let parent_id = crate::literal::typed_id("_id", parent_id)?;
                let item_id = crate::literal::typed_id("_id", item_id)?;
                let span = tracing::Span::current();
                span.record("id", tracing::field::display(&parent_id));
                span.record("item_id", tracing::field::display(&item_id));
                let write = ParentWrite::Remove { item_id: &item_id };
                let removed = self.write_parent(&parent_id, write).await?;
                if removed.is_some() {
                    Ok(())
                } else {
                    Err(Error::NotFound {
                        collection: self.spec.full_collection().to_owned(),
                        missing: Box::new(crate::error::Missing::Document { id: item_id }),
                    })
                }
            },
        )
        .await
    }

    pub(super) async fn write_remove(
        &self,
        mut session: Option<&mut ClientSession>,
        parent_id: &Bson,
        item_id: &Bson,
    ) -> mongodb::error::Result<bool> {
        let spec = &self.spec.parts;
        let fulls = self.fulls();
        let filter = doc! { "_id": item_id.clone(), spec.parent_key: parent_id.clone() };
        let removed = match session.as_deref_mut() {
            Some(s) => fulls.find_one_and_delete(filter).session(s).await?,
            None => fulls.find_one_and_delete(filter).await?,
        };
        let Some(removed) = removed else {
            tracing::debug!("the parent has no such item: nothing written");
            return Ok(false);
        };
        tracing::debug!(
            deleted = 1,
            in_transaction = session.is_some(),
            "full item deleted"
        );
        derived::appeared_or_gone(
            &self.db,
            session.as_deref_mut(),
            F::SCHEMA,
            std::slice::from_ref(&removed),
            false,
            &|d| self.is_mine(d),
        )
        .await?;
        let mut inc = Document::new();
        for c in spec.summaries {
            match c.kind {
                SummaryKind::Count => {
                    inc.insert(c.field, -1i32);
                }
                SummaryKind::Sum { item_field } => {
                    inc.insert(c.field, small(negate(sum_of(&removed, item_field))));
                }
                SummaryKind::Avg { .. } => {}
            }
        }
        let first = self.first_items(session.as_deref_mut(), parent_id).await?;
        let mut update = doc! { "$set": { spec.field: first } };
        if !inc.is_empty() {
            update.insert("$inc", inc);
        }
        let parents = self.parents();
        let pfilter = doc! { "_id": parent_id.clone() };
        let average = self.spec.average_update();
        match session {
            Some(s) => {
                let r = parents
                    .update_one(pfilter.clone(), update)
                    .session(&mut *s)
                    .await?;
                parent_updated(&r, true);
                if let Some(avg) = average {
                    let r = parents.update_one(pfilter, avg).session(&mut *s).await?;
                    averages_updated(&r, true);
                }
            }
            None => {
                let r = parents.update_one(pfilter.clone(), update).await?;
                parent_updated(&r, false);
                if let Some(avg) = average {
                    let r = parents.update_one(pfilter, avg).await?;
                    averages_updated(&r, false);
                }
            }
        }
        Ok(true)
    }
}

impl SubsetSpec {
    /// The pipeline update that recomputes every average from its sum and count, or `None`.
    pub(super) fn average_update(&self) -> Option<Vec<Document>> {
        let mut set = Document::new();
        for c in self.parts.summaries {
            if let SummaryKind::Avg {
                sum_field,
                count_field,
                ..
            } = c.kind
            {
                let count = format!("${count_field}");
                let sum = format!("${sum_field}");
                set.insert(
                    c.field,
                    doc! { "$cond": [
                        { "$gt": [&count, 0] },
                        { "$divide": [sum, &count] },
                        Bson::Null,
                    ] },
                );
            }
        }
        (!set.is_empty()).then(|| vec![doc! { "$set": set }])
    }
}

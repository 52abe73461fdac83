//! Reading a stored document as the current shape: the one decoding every read of a model goes
//! through, and the model handle's reads.

use super::keyset;
use crate::span::Spanned as _;
use crate::typed::order::{Keyset, NoSort};
use bson::{Document, RawDocument, RawDocumentBuf};

use crate::error::{Error, Result};
use crate::model::{IntoId, Model, ModelCollection, Projection};
use crate::schema::ModelSchema;
use crate::txn::{collect_in, in_session, Transaction};

/// A stored document of `model` as its current shape: unchanged for a model without older
/// versions or a current document, upgraded otherwise. The errors are the document's own
/// ([`Error::UnknownSchemaVersion`], [`Error::Upgrade`]).
pub(crate) fn current_document(model: &'static ModelSchema, doc: Document) -> Result<Document> {
    match model.spec::<crate::stored::SchemaVersionSpec>() {
        None => Ok(doc),
        Some(spec) => spec.upgrade_document(model, doc),
    }
}

/// A stored document of `M` read as `M`, upgraded first if it is of an older version. Every
/// read of a model's documents that returns the model goes through here.
pub(crate) fn decode<M: Model>(doc: Document) -> Result<M> {
    let doc = current_document(M::SCHEMA, doc)?;
    Ok(bson::deserialize_from_document(doc)?)
}

/// [`decode`] of a document as the server sent it: a current one (the common case) is read
/// straight from its bytes, as the driver's own reads do; an older one is upgraded first. A
/// document that does not read is the model's own error ([`Model::unreadable`]: an unknown
/// variant of a polymorphic model).
pub(crate) fn decode_raw<M: Model>(raw: &RawDocument) -> Result<M> {
    if let Some(spec) = M::SCHEMA.spec::<crate::stored::SchemaVersionSpec>()
        && !spec.is_current(raw)
    {
        let doc = Document::try_from(raw)?;
        return decode::<M>(doc);
    }
    read_current::<M>(raw)
}

/// Every document read (`raws`, as `collect_in!` gives them) as `M` ([`decode_raw`]), with a
/// `DEBUG` event of how many.
pub(crate) fn decode_read<M: Model>(raws: &[RawDocumentBuf]) -> Result<Vec<M>> {
    let found = raws
        .iter()
        .map(|raw| decode_raw::<M>(raw))
        .collect::<Result<Vec<M>>>()?;
    tracing::debug!(read = found.len(), "documents read");
    Ok(found)
}

/// A document at the current version (or of a model without versions) read from its bytes.
fn read_current<M: Model>(raw: &RawDocument) -> Result<M> {
    bson::deserialize_from_slice::<M>(raw.as_bytes()).map_err(|e| match Document::try_from(raw) {
        Ok(doc) => M::unreadable(&doc, e),
        Err(_) => Error::from(e),
    })
}

/// The model handle's reads: every document returned as the current shape, whatever version it
/// is stored in.
impl<M: Model> ModelCollection<M> {
    /// The document with this `_id`, if there is one.
    pub fn get<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
    ) -> crate::model::Pending<'a, Result<Option<M>>> {
        crate::model::Pending::new(self.get_op(id.into_id()))
    }

    async fn get_op(&self, id: M::Id) -> Result<Option<M>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.get",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let found = self.read(bson::doc! { "_id": id }, Some(1)).await?;
                self.decode_all(&found).await.pop().transpose()
            },
        )
        .await
    }

    /// The first document matching `filter` (a typed [`Filter`](crate::typed::Filter), or a query
    /// document, sent as it is), if any.
    pub async fn find_one(&self, filter: impl crate::typed::IntoFilter<M>) -> Result<Option<M>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.find_one",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let found = self.read(filter.into_filter()?, Some(1)).await?;
                self.decode_all(&found).await.pop().transpose()
            },
        )
        .await
    }

    /// The documents matching `filter` (a typed [`Filter`](crate::typed::Filter), or a query
    /// document, sent as it is), each read as the current shape: a [`Find`](crate::query::Find) to narrow with
    /// [`sort`](Find::sort) and [`limit`](Find::limit), then `.await` it for a `Vec`, or
    /// [`stream`](Find::stream) it to read one document at a time from the server's cursor.
    ///
    /// Awaited, a document that does not read as `M` (an
    /// [unknown schema version](Error::UnknownSchemaVersion), a failed upgrade, a shape serde
    /// refuses) fails the whole read; [`find_each`](Self::find_each) returns each document's own
    /// result instead, and a stream yields each document's own result.
    pub fn find(&self, filter: impl crate::typed::IntoFilter<M>) -> Find<'_, M> {
        Find {
            on: self,
            filter: filter.into_filter(),
            sort: None,
            limit: None,
            after: None,
            keys: std::marker::PhantomData,
        }
    }

    async fn find_op(
        &self,
        filter: Document,
        sort: Option<Document>,
        limit: Option<i64>,
    ) -> Result<Vec<M>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.find",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                if limit == Some(0) {
                    return Ok(Vec::new());
                }
                let docs = self.read_sorted(filter, sort, limit, None).await?;
                let out = self.decode_all(&docs).await;
                tracing::debug!(read = out.len(), "documents read");
                out.into_iter().collect()
            },
        )
        .await
    }

    /// The documents of a find as a stream, each read by `decode` (as `M`, or as a projection),
    /// with `projection` sent if any.
    async fn stream_op<T: Send + 'static>(
        &self,
        filter: Document,
        sort: Option<Document>,
        limit: Option<i64>,
        projection: Option<Document>,
        decode: fn(&RawDocument) -> Result<T>,
    ) -> Result<futures_util::stream::BoxStream<'static, Result<T>>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.find",
                model = self.span_model(),
                collection = self.span_collection(),
                stream = true
            ),
            async move {
                use futures_util::StreamExt;
                if limit == Some(0) {
                    return Ok(futures_util::stream::empty().boxed());
                }
                if self.transaction().is_some() {
                    // The transaction's session is shared by the caller's other operations: the
                    // documents are read in it first, then yielded.
                    let docs = self.read_sorted(filter, sort, limit, projection).await?;
                    let out = docs.iter().map(|raw| decode(raw)).collect::<Vec<_>>();
                    return Ok(futures_util::stream::iter(out).boxed());
                }
                let coll: mongodb::Collection<RawDocumentBuf> =
                    self.database().collection(M::SCHEMA.collection());
                let mut find = coll.find(filter);
                if let Some(sort) = sort {
                    find = find.sort(sort);
                }
                if let Some(n) = limit {
                    find = find.limit(n);
                }
                if let Some(projection) = projection {
                    find = find.projection(projection);
                }
                let cursor = find.await?;
                // Each document decoded where the cursor's batch holds it, not copied out first: the
                // cost of a stream is then the driver's own. A cursor's error ends the stream.
                let documents =
                    futures_util::stream::unfold(Some(cursor), move |cursor| async move {
                        let mut cursor = cursor?;
                        match cursor.advance().await {
                            Ok(true) => {
                                let decoded = decode(cursor.current());
                                Some((decoded, Some(cursor)))
                            }
                            Ok(false) => None,
                            Err(e) => Some((Err(Error::from(e)), None)),
                        }
                    });
                Ok(documents.boxed())
            },
        )
        .await
    }

    /// The documents of a find read as the projection `P`.
    async fn project_op<P: crate::schema::Fields + serde::de::DeserializeOwned + Send + 'static>(
        &self,
        filter: Document,
        sort: Option<Document>,
        limit: Option<i64>,
    ) -> Result<Vec<P>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.find",
                model = self.span_model(),
                collection = self.span_collection(),
                projected = true
            ),
            async move {
                if limit == Some(0) {
                    return Ok(Vec::new());
                }
                let docs = self
                    .read_sorted(filter, sort, limit, projection::<M, P>())
                    .await?;
                let out = docs
                    .iter()
                    .map(|raw| decode_projection::<M, P>(raw))
                    .collect::<Result<Vec<P>>>()?;
                tracing::debug!(read = out.len(), "documents read");
                Ok(out)
            },
        )
        .await
    }

    /// How many documents match `filter` (a typed [`Filter`](crate::typed::Filter), or a query
    /// document, sent as it is): one `aggregate` (the driver's `countDocuments`), in the
    /// handle's transaction if it has one.
    pub async fn count(&self, filter: impl crate::typed::IntoFilter<M>) -> Result<u64> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.count",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let filter = filter.into_filter()?;
                let mut session = Transaction::session_of(self.transaction()).await?;
                let coll = self.documents();
                let count = coll.count_documents(filter);
                Ok(in_session!(count, session.as_deref_mut())?)
            },
        )
        .await
    }

    /// Every document matching `filter`, each read on its own: a document of an unknown schema
    /// version is its own `Err`, the others are still read.
    pub async fn find_each(
        &self,
        filter: impl crate::typed::IntoFilter<M>,
    ) -> Result<Vec<Result<M>>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::model.find_each",
                model = self.span_model(),
                collection = self.span_collection()
            ),
            async move {
                let docs = self.read(filter.into_filter()?, None).await?;
                let out = self.decode_all(&docs).await;
                let unreadable = out.iter().filter(|r| r.is_err()).count();
                tracing::debug!(read = out.len(), unreadable, "documents read");
                Ok(out)
            },
        )
        .await
    }

    /// Each stored document as `M`. On a handle [`writing_back`](Self::writing_back) (and not
    /// in a transaction), the documents upgraded from an older version are then rewritten at
    /// the current one, each conditional on the document as read: one `update` for them all.
    /// A failure there is a `WARN` event, not the read's error: the documents stay as stored.
    async fn decode_all(&self, raws: &[RawDocumentBuf]) -> Vec<Result<M>> {
        let spec = match M::SCHEMA.spec::<crate::stored::SchemaVersionSpec>() {
            Some(spec) if self.writes_back() && self.transaction().is_none() => spec,
            _ => return raws.iter().map(|raw| decode_raw::<M>(raw)).collect(),
        };
        let mut out = Vec::with_capacity(raws.len());
        let mut rewrites = Vec::new();
        for raw in raws {
            if spec.is_current(raw) {
                out.push(read_current::<M>(raw));
                continue;
            }
            let upgraded = Document::try_from(raw.as_ref())
                .map_err(Error::from)
                .and_then(|stored| {
                    let new = spec.upgrade_document(M::SCHEMA, stored.clone())?;
                    let m: M = bson::deserialize_from_document(new.clone())?;
                    Ok((m, stored, new))
                });
            match upgraded {
                Ok((m, stored, new)) => {
                    if crate::error::check_size(&new, "an upgraded document").is_ok() {
                        rewrites.push((stored, new));
                    }
                    out.push(Ok(m));
                }
                Err(e) => out.push(Err(e)),
            }
        }
        if !rewrites.is_empty() {
            let upgraded = rewrites.len();
            match self.rewrite(rewrites).await {
                Ok(done) => {
                    let written = done.written;
                    tracing::debug!(upgraded, written, "upgraded documents written back");
                }
                Err(e) => {
                    tracing::warn!(upgraded, error = %e, "writing back upgraded documents failed; they stay as stored");
                }
            }
        }
        out
    }

    /// The stored documents matching `filter`, at most `limit`, in the caller's transaction.
    async fn read(&self, filter: Document, limit: Option<i64>) -> Result<Vec<RawDocumentBuf>> {
        self.read_sorted(filter, None, limit, None).await
    }

    /// [`read`](Self::read) in the order of `sort`, each document as `projection` has it.
    async fn read_sorted(
        &self,
        filter: Document,
        sort: Option<Document>,
        limit: Option<i64>,
        projection: Option<Document>,
    ) -> Result<Vec<RawDocumentBuf>> {
        let mut session = Transaction::session_of(self.transaction()).await?;
        let coll: mongodb::Collection<RawDocumentBuf> =
            self.database().collection(M::SCHEMA.collection());
        let find = || {
            let mut find = coll.find(filter.clone());
            if let Some(sort) = &sort {
                find = find.sort(sort.clone());
            }
            if let Some(n) = limit {
                find = find.limit(n);
            }
            if let Some(projection) = &projection {
                find = find.projection(projection.clone());
            }
            find
        };
        Ok(collect_in!(find(), session.as_deref_mut())?)
    }

    /// The collection as stored documents.
    pub(crate) fn documents(&self) -> mongodb::Collection<Document> {
        self.database().collection(M::SCHEMA.collection())
    }
}

/// A `find` of a model's documents ([`ModelCollection::find`]), sent once awaited or streamed.
/// `S` holds the keys of its [`sort`](Find::sort) (see [`query::order`](crate::typed::order)).
#[must_use = "a find sends nothing until it is awaited or streamed"]
pub struct Find<'a, M: Model, S = NoSort> {
    on: &'a ModelCollection<M>,
    filter: Result<Document>,
    sort: Option<Document>,
    limit: Option<i64>,
    /// The last document of the previous page, as stored.
    after: Option<Result<Document>>,
    keys: std::marker::PhantomData<fn() -> S>,
}

impl<'a, M: Model, S> Find<'a, M, S> {
    /// In the order of `sort`: a typed [`Sort`](crate::typed::Sort) or a sort document.
    pub fn sort<T: crate::typed::IntoSort<M>>(self, sort: T) -> Find<'a, M, T::Keys> {
        Find {
            on: self.on,
            filter: self.filter,
            sort: Some(sort.into_sort()),
            limit: self.limit,
            after: self.after,
            keys: std::marker::PhantomData,
        }
    }

    /// At most `n` documents (`0`: none; the server would read 0 as no limit).
    pub fn limit(mut self, n: u64) -> Self {
        self.limit = Some(i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// The keyset page after `last`, the last document of the previous page: the documents
    /// that come after it in this find's [`sort`](Self::sort), whose keys are compared with
    /// `last`'s values. Unlike a `skip`, the server starts where the previous page ended,
    /// through the index that serves the sort.
    ///
    /// The sort ends with `_id`, so that documents with equal keys are in one order on every
    /// page, neither skipped nor repeated: `Sort::desc(f.created_at).then_desc(f.id)`, on every
    /// page including the first. The other keys are those an index of the model has first, in
    /// the sort's order and directions, or all reversed (declare one with `#[index(..)]` on
    /// them): the model's own `#[index]`es and those its patterns declare on its collection (a
    /// relation's parent, a tree's key, a grid's resource and slot). With a typed
    /// [`Sort`](crate::typed::Sort) of the model's fields this is checked at compile time: a
    /// find without a sort, a sort that does not end with `_id`, or one no index serves has no
    /// `after`. A sort given as a document, through a dotted path, or
    /// [`erase`](crate::typed::Sort::erase)d is checked here, refused with
    /// [`Error::Unsupported`] before anything is sent. An index does not serve it when it is
    /// sparse, hidden, partial or collated (the planner does not use it to sort every
    /// document), nor on an array field at compile time (an array sorts by one of its items).
    /// An index another model's pattern declares on this collection (a `#[computed(by = ..)]`
    /// source's, a subset's full items') is not counted: declare it on this model too, with
    /// `#[index]` (the sync creates it once).
    ///
    /// A key missing from `last` compares as `null`, which only documents missing it too
    /// equal: keep the sorted fields present. `null`s, a number key's NaNs and, in a `Bson`
    /// key, the values of each BSON type take their places in the sort's order; a `last` whose
    /// key is a regex, JavaScript code, `MinKey`, `MaxKey` or an array is
    /// [`Error::InvalidValue`] (the server has no order to compare it in). A sort document
    /// holding anything but `1` and `-1` (a `$meta` text score) is [`Error::Unsupported`].
    ///
    /// ```no_run
    /// # use pattern_runtime::Model;
    /// # use pattern_runtime::query::{Filter, Sort};
    /// # #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// # #[serde(rename_all = "camelCase")]
    /// # struct Post { #[serde(rename = "_id")] id: i64, #[index(-1)] created_at: bson::DateTime }
    /// # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
    /// let posts = Post::collection(&db);
    /// let f = Post::FIELDS;
    /// let newest = Sort::desc(f.created_at).then_desc(f.id);
    /// let first = posts.find(Filter::default()).sort(newest.clone()).limit(20).await?;
    /// if let Some(last) = first.last() {
    ///     let next = posts.find(Filter::default()).sort(newest).after(last).limit(20).await?;
    /// #   let _ = next;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn after(mut self, last: &M) -> Self
    where
        S: Keyset<M>,
    {
        self.after = Some(bson::serialize_to_document(last).map_err(Error::from));
        self
    }

    /// The filter, sort and limit to send: with [`after`](Self::after), the filter restricted
    /// to what comes after the last document, and `_id` added to the sort.
    fn parts(self) -> Result<(Document, Option<Document>, Option<i64>)> {
        let filter = self.filter?;
        let Some(last) = self.after else {
            return Ok((filter, self.sort, self.limit));
        };
        let last = last?;
        let Some(sort) = self.sort else {
            return Err(Error::Unsupported {
                operation: "after".to_owned(),
                reason: "a keyset page comes after a document in an order: give the find a \
                         `sort` ending with `_id`, the same on every page",
            });
        };
        if sort.keys().last().map(String::as_str) != Some("_id") {
            return Err(Error::Unsupported {
                operation: "after".to_owned(),
                reason: "a keyset page needs a sort ending with `_id` (`.then_asc(f.id)`), on \
                         every page: documents with equal keys are then in one order, neither \
                         skipped nor repeated",
            });
        }
        keyset::served(M::SCHEMA, &sort)?;
        let after = keyset::after(&sort, &last)?;
        let filter = if filter.is_empty() {
            after
        } else {
            bson::doc! { "$and": [filter, after] }
        };
        Ok((filter, Some(sort), self.limit))
    }

    /// The documents one at a time from the server's cursor (batches fetched as the stream is
    /// read), each read as the current shape; a document that does not read as `M` is its own
    /// `Err`, and the stream goes on. A handle [`writing_back`](ModelCollection::writing_back)
    /// upgrades documents in memory here, without writing them back. In a caller's transaction
    /// the documents are read in its session first, then yielded.
    pub async fn stream(self) -> Result<futures_util::stream::BoxStream<'static, Result<M>>> {
        let on = self.on;
        let (filter, sort, limit) = self.parts()?;
        on.stream_op(filter, sort, limit, None, decode_raw::<M>)
            .await
    }

    /// The same find, each document read as `P`, a struct of some of the model's fields
    /// (`#[derive(Deserialize, Fields)]` with `#[projection(of = Model)]`, which checks at
    /// compile time that each of its fields is a field of the model, under the same name and of
    /// the same type): only those fields are sent back by the server.
    ///
    /// On a model with older schema versions, the whole documents are read and upgraded, then
    /// read as `P`: an older document may not have the fields in their current form.
    ///
    /// ```no_run
    /// # use pattern_runtime::{Fields, Model};
    /// # use pattern_runtime::query::{Filter, Sort};
    /// #[derive(serde::Serialize, serde::Deserialize, Model)]
    /// struct Product { #[serde(rename = "_id")] id: String, name: String, price: f64, description: String }
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Fields)]
    /// #[projection(of = Product)]
    /// struct Listing { #[serde(rename = "_id")] id: String, name: String, price: f64 }
    ///
    /// # async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
    /// let f = Product::FIELDS;
    /// let cheap: Vec<Listing> = Product::collection(&db)
    ///     .find(Filter::lt(f.price, 10.0))
    ///     .sort(Sort::asc(f.price))
    ///     .project::<Listing>()
    ///     .await?;
    /// # let _ = cheap;
    /// # Ok(()) }
    /// ```
    pub fn project<P: Projection<M>>(self) -> Projected<'a, M, P, S> {
        Projected {
            find: self,
            _projection: std::marker::PhantomData,
        }
    }
}

/// A stored document (the projection's fields only, or, for a model with older schema versions,
/// the whole document, upgraded) read as the projection `P`.
fn decode_projection<
    M: Model,
    P: crate::schema::Fields + serde::de::DeserializeOwned + Send + 'static,
>(
    raw: &RawDocument,
) -> Result<P> {
    if M::SCHEMA
        .spec::<crate::stored::SchemaVersionSpec>()
        .is_some()
    {
        let current = decode_raw::<M>(raw)?;
        let doc: Document = bson::serialize_to_document(&current)?
            .into_iter()
            .filter(|(k, _)| P::KEYS.contains(&k.as_str()))
            .collect();
        return Ok(bson::deserialize_from_document(doc)?);
    }
    Ok(bson::deserialize_from_slice(raw.as_bytes())?)
}

/// The projection document of `P` on `M`'s documents (`{k: 1, ..}`, `_id: 0` unless `P` has
/// it), or `None` for a model with older schema versions (whole documents are read and
/// upgraded). `P`'s fields are the model's: `#[projection(of = M)]` checked them.
fn projection<M: Model, P: crate::schema::Fields>() -> Option<Document> {
    if M::SCHEMA
        .spec::<crate::stored::SchemaVersionSpec>()
        .is_some()
    {
        return None;
    }
    let mut doc = crate::model::projection_of(P::KEYS);
    if !P::KEYS.contains(&"_id") {
        doc.insert("_id", 0);
    }
    Some(doc)
}

/// A [`Find`](crate::query::Find) whose documents are read as the projection `P` ([`Find::project`]): awaited, the
/// `Vec<P>`; or [`stream`](Self::stream)ed.
#[must_use = "a find sends nothing until it is awaited or streamed"]
pub struct Projected<'a, M: Model, P, S = NoSort> {
    find: Find<'a, M, S>,
    _projection: std::marker::PhantomData<fn() -> P>,
}

// Bounded by what reading needs, not by `Projection<M>`, which `Find::project` checks: a
// struct not declared a projection is then one error there, not a second at `.await`.
impl<'a, M: Model, P: crate::schema::Fields + serde::de::DeserializeOwned + Send + 'static, S>
    Projected<'a, M, P, S>
{
    /// In the order of `sort` (see [`Find::sort`]): the same before or after `project`.
    pub fn sort<T: crate::typed::IntoSort<M>>(self, sort: T) -> Projected<'a, M, P, T::Keys> {
        Projected {
            find: self.find.sort(sort),
            _projection: std::marker::PhantomData,
        }
    }

    /// At most `n` projections (see [`Find::limit`]).
    pub fn limit(mut self, n: u64) -> Self {
        self.find = self.find.limit(n);
        self
    }

    /// The keyset page after `last`, the last projection of the previous page (see
    /// [`Find::after`]). The sort's fields, `_id` included, must be among the projection's:
    /// otherwise [`Error::Unsupported`], nothing sent (a key the projection lacks would read
    /// as `null`, and the pages would skip or repeat documents).
    pub fn after(mut self, last: &P) -> Self
    where
        P: serde::Serialize,
        S: Keyset<M>,
    {
        self.find.after = Some(bson::serialize_to_document(last).map_err(Error::from));
        self
    }

    /// The find's parts ([`Find::parts`]), once a page's sort keys are found among the
    /// projection's fields.
    fn parts(self) -> Result<(Document, Option<Document>, Option<i64>)> {
        if let (Some(_), Some(sort)) = (&self.find.after, &self.find.sort) {
            let missing = sort.keys().find(|key| {
                let top = key.split('.').next().unwrap_or(key);
                !P::KEYS.contains(&top)
            });
            if let Some(key) = missing {
                return Err(Error::Unsupported {
                    operation: format!("after, sorted by {key}"),
                    reason: "a keyset page after a projection compares the sort's keys with \
                             the projection's values: add every sort key, `_id` included, to \
                             the projection, or page the model's documents",
                });
            }
        }
        self.find.parts()
    }

    /// The projections one at a time from the server's cursor, as [`Find::stream`].
    pub async fn stream(self) -> Result<futures_util::stream::BoxStream<'static, Result<P>>> {
        let on = self.find.on;
        let projection = projection::<M, P>();
        let (filter, sort, limit) = self.parts()?;
        on.stream_op(filter, sort, limit, projection, decode_projection::<M, P>)
            .await
    }
}

impl<'a, M: Model, P: crate::schema::Fields + serde::de::DeserializeOwned + Send + 'static, S>
    std::future::IntoFuture for Projected<'a, M, P, S>
{
    type Output = Result<Vec<P>>;
    type IntoFuture = crate::model::Pending<'a, Result<Vec<P>>>;

    /// Every document, as a `Vec` of projections.
    fn into_future(self) -> Self::IntoFuture {
        let on = self.find.on;
        let parts = self.parts();
        crate::model::Pending::new(async move {
            let (filter, sort, limit) = parts?;
            on.project_op::<P>(filter, sort, limit).await
        })
    }
}

impl<M: Model, P, S> std::fmt::Debug for Projected<'_, M, P, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projected")
            .field("find", &self.find)
            .field("as", &std::any::type_name::<P>())
            .finish()
    }
}

impl<'a, M: Model, S> std::future::IntoFuture for Find<'a, M, S> {
    type Output = Result<Vec<M>>;
    type IntoFuture = crate::model::Pending<'a, Result<Vec<M>>>;

    /// Every document, as a `Vec`.
    fn into_future(self) -> Self::IntoFuture {
        let on = self.on;
        let parts = self.parts();
        crate::model::Pending::new(async move {
            let (filter, sort, limit) = parts?;
            on.find_op(filter, sort, limit).await
        })
    }
}

impl<M: Model, S> std::fmt::Debug for Find<'_, M, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Find")
            .field("model", &M::SCHEMA.name())
            .field("filter", &self.filter)
            .field("sort", &self.sort)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .finish()
    }
}

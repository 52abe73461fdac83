//! Reading a stored document as the current shape: the one decoding every read of a model goes
//! through, and the model handle's reads.

use bson::{Document, RawDocumentBuf};
use pattern_derive::operation;

use crate::error::{Error, Result};
use crate::model::{IntoId, Model, ModelCollection};
use crate::schema::ModelSchema;
use crate::txn::{collect_in, in_session, Transaction};

/// A stored document of `model` as its current shape: unchanged for a model without older
/// versions or a current document, upgraded otherwise. The errors are the document's own
/// ([`Error::UnknownSchemaVersion`], [`Error::Upgrade`]).
pub(crate) fn current_document(model: &'static ModelSchema, doc: Document) -> Result<Document> {
    match model.spec::<super::SchemaVersionSpec>() {
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
pub(crate) fn decode_raw<M: Model>(raw: &RawDocumentBuf) -> Result<M> {
    if let Some(spec) = M::SCHEMA.spec::<super::SchemaVersionSpec>() {
        if !spec.is_current(raw) {
            let doc = Document::try_from(raw.as_ref())?;
            return decode::<M>(doc);
        }
    }
    read_current::<M>(raw)
}

/// Every document of `cursor` read as `M` ([`decode_raw`]), with a `DEBUG` event of how many.
pub(crate) async fn collect<M: Model>(cursor: mongodb::Cursor<RawDocumentBuf>) -> Result<Vec<M>> {
    let raws: Vec<RawDocumentBuf> = futures_util::TryStreamExt::try_collect(cursor).await?;
    let found = raws
        .iter()
        .map(decode_raw::<M>)
        .collect::<Result<Vec<M>>>()?;
    tracing::debug!(read = found.len(), "documents read");
    Ok(found)
}

/// A document at the current version (or of a model without versions) read from its bytes.
fn read_current<M: Model>(raw: &RawDocumentBuf) -> Result<M> {
    bson::deserialize_from_slice::<M>(raw.as_bytes()).map_err(|e| {
        match Document::try_from(raw.as_ref()) {
            Ok(doc) => M::unreadable(&doc, e),
            Err(_) => Error::from(e),
        }
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

    #[operation(model.get, level = "debug", later(id))]
    async fn get_op(&self, id: M::Id) -> Result<Option<M>> {
        let id = crate::literal::span_id(id)?;
        let found = self.read(bson::doc! { "_id": id }, Some(1)).await?;
        self.decode_all(&found).await.pop().transpose()
    }

    /// The first document matching `filter` (a typed [`Filter`](crate::query::Filter), or a query
    /// document, sent as it is), if any.
    #[operation(model.find_one, level = "debug")]
    pub async fn find_one(&self, filter: impl crate::query::IntoFilter) -> Result<Option<M>> {
        let found = self.read(filter.into_filter()?, Some(1)).await?;
        self.decode_all(&found).await.pop().transpose()
    }

    /// Every document matching `filter` (a query document, sent as it is). A document that does
    /// not read as `M` (an [unknown schema version](Error::UnknownSchemaVersion), a failed
    /// upgrade, a shape serde refuses) fails the whole read; [`find_each`](Self::find_each)
    /// returns each document's own result instead.
    #[operation(model.find, level = "debug")]
    pub async fn find(&self, filter: impl crate::query::IntoFilter) -> Result<Vec<M>> {
        self.find_each(filter).await?.into_iter().collect()
    }

    /// How many documents match `filter` (a typed [`Filter`](crate::query::Filter), or a query
    /// document, sent as it is): one `aggregate` (the driver's `countDocuments`), in the
    /// handle's transaction if it has one.
    #[operation(model.count, level = "debug")]
    pub async fn count(&self, filter: impl crate::query::IntoFilter) -> Result<u64> {
        let filter = filter.into_filter()?;
        let mut session = Transaction::session_of(self.transaction()).await?;
        let coll = self.documents();
        let count = coll.count_documents(filter);
        Ok(in_session!(count, session.as_deref_mut())?)
    }

    /// Every document matching `filter`, each read on its own: a document of an unknown schema
    /// version is its own `Err`, the others are still read.
    #[operation(model.find_each, level = "debug")]
    pub async fn find_each(&self, filter: impl crate::query::IntoFilter) -> Result<Vec<Result<M>>> {
        let docs = self.read(filter.into_filter()?, None).await?;
        let out = self.decode_all(&docs).await;
        let unreadable = out.iter().filter(|r| r.is_err()).count();
        tracing::debug!(read = out.len(), unreadable, "documents read");
        Ok(out)
    }

    /// Each stored document as `M`. On a handle [`writing_back`](Self::writing_back) (and not
    /// in a transaction), the documents upgraded from an older version are then rewritten at
    /// the current one, each conditional on the document as read: one `update` for them all.
    /// A failure there is a `WARN` event, not the read's error: the documents stay as stored.
    async fn decode_all(&self, raws: &[RawDocumentBuf]) -> Vec<Result<M>> {
        let spec = match M::SCHEMA.spec::<super::SchemaVersionSpec>() {
            Some(spec) if self.writes_back() && self.transaction().is_none() => spec,
            _ => return raws.iter().map(decode_raw::<M>).collect(),
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
        let mut session = Transaction::session_of(self.transaction()).await?;
        let coll: mongodb::Collection<RawDocumentBuf> =
            self.database().collection(M::SCHEMA.collection());
        let find = || match limit {
            Some(n) => coll.find(filter.clone()).limit(n),
            None => coll.find(filter.clone()),
        };
        Ok(collect_in!(find(), session.as_deref_mut())?)
    }

    /// The collection as stored documents.
    pub(crate) fn documents(&self) -> mongodb::Collection<Document> {
        self.database().collection(M::SCHEMA.collection())
    }
}

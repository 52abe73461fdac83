//! Reading a versioned document's past: its revisions, newest first, and one revision, in the
//! handle's transaction when it is bound to one.

use super::*;
use crate::span::Spanned as _;
use crate::txn::Transaction;

impl<M: Versioned> ModelCollection<M> {
    /// Every archived revision of a document, newest first. In the handle's transaction if it
    /// has one ([`in_transaction`](Self::in_transaction)): it sees the revisions archived there.
    pub fn history<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
    ) -> crate::model::Pending<'a, Result<Vec<Revision<M>>>> {
        crate::model::Pending::new(self.history_op(id.into_id()))
    }

    async fn history_op(&self, id: M::Id) -> Result<Vec<Revision<M>>> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::versioning.history",
                model = self.span_model(),
                collection = self.span_collection(),
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::span_id(id)?;
                let mut session = Transaction::session_of(self.transaction()).await?;
                let history = self
                    .database()
                    .collection::<Revision<Document>>(spec::<M>().history());
                let find = history
                    .find(doc! { "docId": id })
                    .sort(doc! { "version": -1 });
                let stored = collect_in!(find, session.as_deref_mut())?;
                let revisions = stored
                    .into_iter()
                    .map(upgraded)
                    .collect::<Result<Vec<Revision<M>>>>()?;
                tracing::debug!(read = revisions.len(), "revisions read");
                Ok(revisions)
            },
        )
        .await
    }

    /// The document as it was at version `v`: the current one if `v` is current, else its
    /// archived revision. [`Error::NotFound`] when there is no such version: its
    /// [`Missing::Revision`](crate::error::Missing::Revision) names the document and the version, and
    /// its collection is the history's. In the handle's transaction if it has one
    /// ([`in_transaction`](Self::in_transaction)), like [`history`](Self::history).
    pub fn revision<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        v: i64,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.revision_op(id.into_id(), v))
    }

    async fn revision_op(&self, id: M::Id, v: i64) -> Result<M> {
        crate::span::operation(
            tracing::debug_span!(
                "pattern_runtime::versioning.revision",
                model = self.span_model(),
                collection = self.span_collection(),
                version = v,
                id = tracing::field::Empty
            ),
            async move {
                let id = crate::literal::typed_id("_id", id)?;
                self.revision_at(id, v).await
            },
        )
        .await
    }

    /// [`revision`](Self::revision) of an id already checked: two reads at most, in the
    /// handle's transaction if it has one.
    pub(super) async fn revision_at(&self, id: Bson, v: i64) -> Result<M> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let field = spec::<M>().version_field();
        let mut session = Transaction::session_of(self.transaction()).await?;
        let documents = self.documents();
        let find = documents.find_one(doc! { "_id": id.clone(), field: v });
        if let Some(current) = in_session!(find, session.as_deref_mut())? {
            return crate::model::read::decode::<M>(current);
        }
        let history = self
            .database()
            .collection::<Revision<Document>>(spec::<M>().history());
        let find = history.find_one(doc! { "docId": id.clone(), "version": v });
        let found = in_session!(find, session.as_deref_mut())?;
        match found {
            Some(r) => crate::model::read::decode::<M>(r.snapshot),
            None => Err(Error::NotFound {
                collection: spec::<M>().history().to_owned(),
                missing: Box::new(crate::error::Missing::Revision { id, version: v }),
            }),
        }
    }
}

/// A stored revision with its snapshot read as the current shape (upgraded if it was archived
/// at an older schema version).
fn upgraded<M: Versioned>(r: Revision<Document>) -> Result<Revision<M>> {
    Ok(Revision {
        doc_id: r.doc_id,
        version: r.version,
        snapshot: crate::model::read::decode::<M>(r.snapshot)?,
        archived_at: r.archived_at,
        deleted: r.deleted,
    })
}

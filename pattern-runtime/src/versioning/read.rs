//! Reading a versioned document's past: its revisions, newest first, and one revision.

use super::*;
use pattern_derive::operation;

impl<M: Versioned> ModelCollection<M> {
    /// Every archived revision of a document, newest first.
    pub fn history<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
    ) -> crate::model::Pending<'a, Result<Vec<Revision<M>>>> {
        crate::model::Pending::new(self.history_op(id.into_id()))
    }

    #[operation(versioning.history, level = "debug", later(id))]
    async fn history_op(&self, id: M::Id) -> Result<Vec<Revision<M>>> {
        let id = crate::literal::span_id(id)?;
        let cursor = self
            .database()
            .collection::<Revision<Document>>(spec::<M>().history())
            .find(doc! { "docId": id })
            .sort(doc! { "version": -1 })
            .await?;
        let stored: Vec<Revision<Document>> = cursor.try_collect().await?;
        let revisions = stored
            .into_iter()
            .map(upgraded)
            .collect::<Result<Vec<Revision<M>>>>()?;
        tracing::debug!(read = revisions.len(), "revisions read");
        Ok(revisions)
    }

    /// The document as it was at version `v`: the current one if `v` is current, else its
    /// archived revision. [`Error::NotFound`] when there is no such version: its
    /// [`Missing::Revision`](crate::Missing::Revision) names the document and the version, and
    /// its collection is the history's.
    pub fn revision<'a>(
        &'a self,
        id: impl IntoId<M::Id>,
        v: i64,
    ) -> crate::model::Pending<'a, Result<M>> {
        crate::model::Pending::new(self.revision_op(id.into_id(), v))
    }

    #[operation(versioning.revision, level = "debug", version = v, later(id))]
    async fn revision_op(&self, id: M::Id, v: i64) -> Result<M> {
        let id = crate::literal::typed_id("_id", id)?;
        self.revision_at(id, v).await
    }

    /// [`revision`](Self::revision) of an id already checked.
    pub(super) async fn revision_at(&self, id: Bson, v: i64) -> Result<M> {
        tracing::Span::current().record("id", tracing::field::display(&id));
        let field = spec::<M>().version_field();
        if let Some(current) = self
            .documents()
            .find_one(doc! { "_id": id.clone(), field: v })
            .await?
        {
            return crate::schema_version::decode::<M>(current);
        }
        let found = self
            .database()
            .collection::<Revision<Document>>(spec::<M>().history())
            .find_one(doc! { "docId": id.clone(), "version": v })
            .await?;
        match found {
            Some(r) => crate::schema_version::decode::<M>(r.snapshot),
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
        snapshot: crate::schema_version::decode::<M>(r.snapshot)?,
        archived_at: r.archived_at,
        deleted: r.deleted,
    })
}

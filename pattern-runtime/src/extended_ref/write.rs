//! Writing the copies of a source's fields.

use super::*;

impl<M: Model> References<M> {
    /// [`Self::write_copies`] from the source as read, or `Missing`.
    pub(super) async fn copy_from(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: Option<Document>,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        match source {
            None => {
                tracing::debug!("no document with this _id: no copy to update");
                Ok(Step::Missing)
            }
            Some(source) => self.write_copies(session, id, &source, targets).await,
        }
    }

    /// One `updateMany` per target. In a transaction an error aborts everything; without one,
    /// it is reported as a partial propagation.
    pub(super) async fn write_copies(
        &self,
        session: Option<&mut ClientSession>,
        id: &Bson,
        source: &Document,
        targets: &Targets,
    ) -> mongodb::error::Result<Step> {
        let writes = targets
            .iter()
            .map(|(embedding, fields)| {
                let (filter, update, array_filters) = embedding.copy_update(id, source, fields);
                CopyWrite {
                    model: embedding.schema(),
                    path: embedding.path(),
                    fields: fields.clone(),
                    filter,
                    update: update.into(),
                    array_filters,
                }
            })
            .collect();
        Ok(match write_copies(&self.db, session, writes).await? {
            Ok(propagation) => Step::Done(propagation),
            Err(partial) => Step::Partial(partial),
        })
    }
}

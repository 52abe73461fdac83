//! Propagating changes made around the toolkit, as they come, from a change stream.

use super::*;
use crate::span::Spanned as _;

/// A change stream on a source collection that propagates changes as they come: from
/// [`References::watch`].
pub struct Watcher<M> {
    references: References<M>,
    stream: ChangeStream<ChangeStreamEvent<Document>>,
}

impl<M: Model> fmt::Debug for Watcher<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher")
            .field("model", &M::SCHEMA.name())
            .finish_non_exhaustive()
    }
}

impl<M: Referenced> Watcher<M> {
    /// Waits for the next update or replacement of a source document and propagates the copied
    /// fields it touched (all of them for a replacement, whose old values the stream does not
    /// carry), from the document as it is now. A change to fields nobody copies gives an empty
    /// [`Propagation`] and writes nothing; so does a document deleted since the change. `None`
    /// when the stream ends (the collection was dropped or renamed).
    pub async fn next(&mut self) -> Option<Result<Propagation>> {
        let event = match self.stream.next().await? {
            Ok(event) => event,
            Err(e) => return Some(Err(e.into())),
        };
        let id = event
            .document_key
            .as_ref()
            .and_then(|k| k.get("_id"))
            .cloned()
            .unwrap_or(Bson::Null);
        let touched: BTreeSet<String> = match (&event.operation_type, &event.update_description) {
            (OperationType::Update, Some(d)) => crate::derived::event_fields(d),
            // A replacement: the stream does not say what changed.
            _ => M::SCHEMA
                .specs::<super::RefSpec>()
                .flat_map(|r| r.fields().iter().map(|f| (*f).to_owned()))
                .collect(),
        };
        let span = tracing::info_span!(
            "pattern_runtime::extended_ref.watcher.next",
            model = M::SCHEMA.name(),
            collection = M::SCHEMA.collection(),
            id = %id,
            operation = match event.operation_type {
                OperationType::Update => "update",
                OperationType::Replace => "replace",
                _ => "other",
            },
            embeddings = tracing::field::Empty,
        );
        let Some(source) = event.full_document else {
            span.in_scope(|| tracing::debug!("the document is gone: no copy to update"));
            return Some(Ok(Propagation::default()));
        };
        // A source still written in an older shape (by an application not upgraded yet): the
        // copies are made from its upgrade, and the event's field names are the old shape's,
        // so every copied field counts as touched.
        let older = M::SCHEMA
            .spec::<crate::schema_version::SchemaVersionSpec>()
            .is_some_and(|spec| spec.version_of(&source) != Ok(spec.current()));
        let source = match crate::model::read::current_document(M::SCHEMA, source) {
            Ok(source) => source,
            Err(e) => {
                span.in_scope(|| tracing::debug!(error = %e, "source does not upgrade"));
                return Some(Err(e));
            }
        };
        if older {
            span.in_scope(|| {
                tracing::debug!("older source upgraded: every copied field propagated")
            });
        }
        let targets = self.references.targets(&|f| older || touched.contains(f));
        span.record("embeddings", targets.len());
        let step = self
            .references
            .write_copies(None, &id, &source, &targets)
            .instrument(span.clone())
            .await;
        let result = match step {
            Ok(step) => self.references.finish(id, step),
            Err(e) => Err(e.into()),
        };
        if let Err(e) = &result {
            span.in_scope(|| tracing::debug!(error = %e, "propagation failed"));
        }
        Some(result)
    }

    /// Where the stream is: give it to [`References::watch`] to resume after a restart.
    pub fn resume_token(&self) -> Option<ResumeToken> {
        self.stream.resume_token()
    }
}

impl<M: Model> References<M> {
    /// Watches the source collection (a change stream; needs a replica set or a sharded cluster)
    /// and propagates every change as it comes, whoever made it: writes with the driver
    /// directly, other programs, the shell. Each [`Watcher::next`] waits for the next update or
    /// replacement of a source document and propagates the copied fields it touched, without a
    /// transaction (the source change is already committed). `resume_after` is a token from
    /// [`Watcher::resume_token`], to go on after a restart without missing a change.
    ///
    /// Changes made through [`References`] are seen too and propagated a second time, which
    /// changes nothing (`modified` is 0): run a watcher when writes also come from elsewhere.
    pub async fn watch(&self, resume_after: Option<ResumeToken>) -> Result<Watcher<M>>
    where
        M: Referenced,
    {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::extended_ref.watch",
                model = self.span_model(),
                collection = self.span_collection(),
                resumed = resume_after.is_some()
            ),
            async move {
                let stream = self
                    .raw()
                    .watch()
                    .pipeline([doc! {
                        "$match": { "operationType": { "$in": ["update", "replace"] } }
                    }])
                    .full_document(FullDocumentType::UpdateLookup)
                    .resume_after(resume_after)
                    .await?;
                tracing::debug!("change stream opened");
                Ok(Watcher {
                    references: self.clone(),
                    stream,
                })
            },
        )
        .await
    }
}

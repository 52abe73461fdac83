//! The reads: the common fields of every variant, and one variant's documents.

use super::*;
use crate::span::Spanned as _;
use crate::txn::{collect_in, in_session, Transaction};

impl<M: Polymorphic> ModelCollection<M> {
    /// The handle on one variant's documents, `V::collection(&db)`, reached from the enum's
    /// handle: every operation adds `{tag: value}` itself. In the caller's transaction when this
    /// handle is ([`in_transaction`](ModelCollection::in_transaction)).
    pub fn variant<V: Variant<Model = M>>(&self) -> VariantCollection<V> {
        VariantCollection {
            db: self.database().clone(),
            raw: self.database().collection(M::SCHEMA.collection()),
            tx: self.transaction().cloned(),
            _variant: PhantomData,
        }
    }

    /// The documents of every variant matching `filter`, projected to the tag and the common
    /// fields (the generated `Common` struct).
    pub async fn find_common(&self, filter: impl IntoFilter<M>) -> Result<Vec<M::Common>> {
        tracing::Instrument::instrument(
            async move {
                let filter = filter.into_filter()?;
                let projection = crate::model::projection_of(<M::Common as Fields>::KEYS);
                let mut session = Transaction::session_of(self.transaction()).await?;
                let coll = self
                    .database()
                    .collection::<M::Common>(M::SCHEMA.collection());
                let find = || coll.find(filter.clone()).projection(projection.clone());
                let found = collect_in!(find(), session.as_deref_mut())?;
                Ok(read(found))
            },
            tracing::debug_span!(
                "pattern_runtime::polymorphic.find_common",
                model = self.span_model(),
                collection = self.span_collection()
            ),
        )
        .await
    }
}

impl<V: Variant> VariantCollection<V> {
    /// The variant's document with this `_id`, if there is one (`None` for a document of
    /// another variant).
    pub fn get<'a>(
        &'a self,
        id: impl crate::model::IntoId<<V::Model as Model>::Id>,
    ) -> crate::model::Pending<'a, Result<Option<V>>> {
        let id = id.into_id();
        crate::model::Pending::new(async move {
            let id = crate::literal::typed_id("_id", id)?;
            self.find_one(bson::doc! { "_id": id }).await
        })
    }

    /// The variant's documents matching `filter`.
    pub async fn find(&self, filter: impl IntoFilter<V>) -> Result<Vec<V>> {
        tracing::Instrument::instrument(
            async move {
                let filter = self.filter(filter)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let found = collect_in!(
                    self.raw.clone_with_type::<V>().find(filter),
                    session.as_deref_mut()
                )?;
                Ok(read(found))
            },
            tracing::debug_span!(
                "pattern_runtime::polymorphic.find",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
        )
        .await
    }

    /// The first of the variant's documents matching `filter`.
    pub async fn find_one(&self, filter: impl IntoFilter<V>) -> Result<Option<V>> {
        tracing::Instrument::instrument(
            async move {
                let filter = self.filter(filter)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let coll = self.raw.clone_with_type::<V>();
                let find = coll.find_one(filter);
                Ok(in_session!(find, session.as_deref_mut())?)
            },
            tracing::debug_span!(
                "pattern_runtime::polymorphic.find_one",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
        )
        .await
    }

    /// The variant's documents matching `filter`, projected to `P`'s fields: `P` is a
    /// `#[derive(Deserialize, Fields)]` struct declared `#[projection(of = V)]`, so every field of
    /// `P` is known at compile time to be a field of the variant. The server adds `_id` unless
    /// asked not to, and `P` may leave it out.
    pub async fn find_as<P: Projection<V>>(&self, filter: impl IntoFilter<V>) -> Result<Vec<P>> {
        tracing::Instrument::instrument(
            async move {
                let filter = self.filter(filter)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let coll = self.raw.clone_with_type::<P>();
                let find = || {
                    coll.find(filter.clone())
                        .projection(crate::model::projection_of(P::KEYS))
                };
                let found = collect_in!(find(), session.as_deref_mut())?;
                Ok(read(found))
            },
            tracing::debug_span!(
                "pattern_runtime::polymorphic.find_as",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
        )
        .await
    }

    /// How many of the variant's documents match `filter`.
    pub async fn count(&self, filter: impl IntoFilter<V>) -> Result<u64> {
        tracing::Instrument::instrument(
            async move {
                let filter = self.filter(filter)?;
                let mut session = Transaction::session_of(self.tx.as_ref()).await?;
                let count = self.raw.count_documents(filter);
                Ok(in_session!(count, session.as_deref_mut())?)
            },
            tracing::debug_span!(
                "pattern_runtime::polymorphic.count",
                model = self.span_model(),
                collection = self.span_collection(),
                variant = V::TAG_VALUE
            ),
        )
        .await
    }
}

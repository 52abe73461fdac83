//! `ApproximateSpec`: how each `#[approximate(..)]` field of a model is counted, the indexes
//! and validators its counters need, and the shards that follow their document.

use super::*;

/// How a model field declared with `#[approximate(..)]` is counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Approximation {
    /// `#[approximate(batched, threshold = N)]`: a [`BatchedCounter`].
    Batched {
        /// Events per write.
        threshold: u32,
    },
    /// `#[approximate(sampled, p = P)]`: a [`SampledCounter`].
    Sampled {
        /// The probability of a write per event.
        p: f64,
    },
    /// `#[approximate(sharded, shards = N)]`: a [`ShardedField`].
    Sharded {
        /// Shard documents per counted document.
        shards: u32,
        /// The collection of the shard documents.
        collection: &'static str,
    },
}

spec! {
    /// A model field counted approximately, as `#[approximate(..)]` declares it.
    #[derive(Debug)]
    pub struct ApproximateSpec { parts: ApproximateParts }
    pub struct ApproximateParts {
        /// The field's BSON name.
        pub field: &'static str,
        pub approximation: Approximation,
    }
}

impl ApproximateSpec {
    /// The counted field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// How it is counted.
    pub fn approximation(&self) -> Approximation {
        self.parts.approximation
    }
}

/// A sharded field's shards follow their document: deleted with it through any handle (its
/// entry in the map reads the `_id`: only inserts and deletes reach it).
#[derive(Debug)]
struct ShardsOfDeleted {
    spec: &'static ApproximateSpec,
    model: &'static ModelSchema,
    shards: u32,
    collection: &'static str,
}

impl crate::schema::Dependent for ShardsOfDeleted {
    fn source(&self) -> &'static ModelSchema {
        self.model
    }

    fn reads(&self) -> Vec<&'static str> {
        vec!["_id"]
    }

    fn pattern(&self) -> &'static str {
        "approximation"
    }

    fn describe(&self) -> String {
        format!(
            "{} (counter shards of {}.{})",
            self.collection,
            self.model.name(),
            self.spec.field()
        )
    }

    fn apply<'a>(&'a self, changed: crate::schema::Changed<'a>) -> crate::schema::Applying<'a> {
        let (db, session, changes) = changed.into_parts();
        Box::pin(async move {
            // Each shard by its whole `_id`, through the `_id` index.
            let ids: Vec<Bson> = changes
                .iter()
                .filter(|c| c.before.is_some() && c.after.is_none())
                .flat_map(|c| {
                    (0..self.shards)
                        .map(|k| Bson::Document(doc! { "of": c.id.clone(), "shard": k }))
                })
                .collect();
            if ids.is_empty() {
                return Ok(());
            }
            let shards: Collection<Document> = db.collection(self.collection);
            let delete = shards.delete_many(doc! { "_id": { "$in": ids } });
            let deleted = crate::txn::in_session!(delete, session)?;
            tracing::debug!(
                deleted = deleted.deleted_count,
                "counter shards of deleted documents deleted"
            );
            Ok(())
        })
    }

    /// The documents whose shards are left: a delete of each.
    fn held<'a>(&'a self, db: &'a mongodb::Database) -> crate::derived::Held<'a> {
        Box::pin(crate::maintenance::held_for_gone(
            db,
            self.model,
            self.collection,
            "_id.of",
        ))
    }
}

impl PatternSpec for ApproximateSpec {
    /// A sharded field's shards whose document is gone (deleted around the toolkit: its own
    /// deletes take the shards with them).
    fn audit_orphans<'a>(
        &'static self,
        db: &'a mongodb::Database,
        tx: Option<&'a crate::txn::Transaction>,
        model: &'static ModelSchema,
        sample: Option<u32>,
        max_time: Duration,
    ) -> Option<futures_util::future::BoxFuture<'a, Result<Vec<crate::finding::Finding>>>> {
        let Approximation::Sharded { collection, .. } = self.approximation() else {
            return None;
        };
        Some(Box::pin(async move {
            let (gone, shards) =
                crate::maintenance::orphans(db, tx, model, collection, "_id.of", sample, max_time)
                    .await?;
            if gone.is_empty() {
                return Ok(Vec::new());
            }
            let sampled = if sample.is_some() { " sampled" } else { "" };
            Ok(vec![crate::finding::Finding {
                check: crate::finding::Check::Orphans,
                model: Some(model.name()),
                collection: collection.to_owned(),
                subject: self.field().to_owned(),
                figure: format!(
                    "{shards}{sampled} counter shards of `{}` count {} documents `{}` does not \
                     hold; {}",
                    self.field(),
                    gone.len(),
                    model.collection(),
                    crate::finding::examples(&gone)
                ),
                fix: format!(
                    "delete them (`{{\"_id.of\": <_id>}}` in `{collection}`): the toolkit's \
                     deletes take a document's shards with it, a delete around it does not"
                ),
                documents: gone,
            }])
        }))
    }

    /// A sharded field's shards, deleted with their document.
    fn dependents(
        &'static self,
        model: &'static ModelSchema,
    ) -> Vec<Box<dyn crate::schema::Dependent>> {
        match self.approximation() {
            Approximation::Sharded { shards, collection } => vec![Box::new(ShardsOfDeleted {
                spec: self,
                model,
                shards,
                collection,
            })],
            _ => Vec::new(),
        }
    }

    /// A sharded field's shards: `{_id: {of: <the document's _id>, shard}, count}`.
    fn companions(&'static self, model: &'static ModelSchema) -> Vec<crate::schema::Companion> {
        use crate::schema::shape::{Property, Shape};
        let Approximation::Sharded { collection, .. } = self.approximation() else {
            return Vec::new();
        };
        let property = |name, shape| Property::new(name, shape, true);
        let id = Shape::Object(vec![
            property("of", model.id_shape()),
            property("shard", Shape::Types(vec!["int", "long"])),
        ]);
        vec![crate::schema::Companion {
            collection,
            documents: "counter shards",
            shape: Shape::Object(vec![
                property("_id", id),
                property("count", Shape::Types(vec!["long", "int"])),
            ]),
        }]
    }
}

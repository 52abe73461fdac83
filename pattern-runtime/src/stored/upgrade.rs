//! Upgrading stored documents: one document to the current shape, and the older documents an
//! update is about to change. Below the reads, `converge` and the map of derived data (which
//! calls [`upgrade_matching`] before each update), and importing none of them.

use bson::{doc, Bson, Document, RawBsonRef};

use crate::error::{Error, Result};
use crate::schema::ModelSchema;
use crate::stored::SchemaVersionSpec;
use crate::txn::{collect_in, in_session, Transaction};

impl SchemaVersionSpec {
    /// Whether `raw` holds the current version as an integer (what every write stores): read
    /// from its bytes as it is. Anything else goes through [`version_of`](Self::version_of).
    pub(crate) fn is_current(&self, raw: &bson::RawDocument) -> bool {
        match raw.get(self.field()) {
            Ok(Some(RawBsonRef::Int32(v))) => i64::from(v) == i64::from(self.current()),
            Ok(Some(RawBsonRef::Int64(v))) => v == i64::from(self.current()),
            _ => false,
        }
    }

    /// `doc` as the current shape.
    pub(crate) fn upgrade_document(
        &self,
        model: &'static ModelSchema,
        mut doc: Document,
    ) -> Result<Document> {
        let id = || doc_id(&doc);
        let version = self.version_of(&doc).map_err(|found| {
            tracing::debug!(model = model.name(), id = ?doc.get("_id"), found = %found, "unknown schema version");
            Error::UnknownSchemaVersion {
                model: model.name(),
                collection: model.collection().to_owned(),
                id: id(),
                found: Box::new(found),
                known: self.known(),
            }
        })?;
        if version == self.current() {
            // The field as `SchemaVersion` reads it: a document without it (or `null`), when
            // that means the current version, or a whole double.
            if !matches!(doc.get(self.field()), Some(Bson::Int32(_) | Bson::Int64(_))) {
                doc.insert(self.field(), Bson::from(self.current()));
            }
            return Ok(doc);
        }
        let before = doc.get("_id").cloned();
        let failed = |from: u32, reason: String, id: Option<Box<Bson>>| Error::Upgrade {
            model: model.name(),
            collection: model.collection().to_owned(),
            id,
            from,
            reason,
        };
        let id_before = id();
        let mut upgraded = (self.parts.upgrade)(doc, version)
            .map_err(|f| failed(f.from, f.reason, id_before.clone()))?;
        // The same `_id` by the server's rule (an `Int32` 1 read into a `u32` comes back as an
        // `Int64` 1), kept exactly as stored, so that a rewrite replaces the same document.
        let key = |v: Option<&Bson>| v.map(crate::finding::id_key);
        if key(upgraded.get("_id")) != key(before.as_ref()) {
            return Err(failed(
                version,
                "the upgrade changed the document's `_id`".to_owned(),
                id_before,
            ));
        }
        if let Some(id) = before {
            upgraded.insert("_id", id);
        }
        tracing::trace!(
            model = model.name(),
            from = version,
            to = self.current(),
            "document upgraded"
        );
        Ok(upgraded)
    }
}

fn doc_id(doc: &Document) -> Option<Box<Bson>> {
    doc.get("_id").cloned().map(Box::new)
}

/// The filter and the update that replace `stored` with `new` only while the document is
/// exactly as it was read (no concurrent write lost): the filter is the `_id` alone, which
/// every server answers through its index, and the comparison with `stored` is in the update
/// (a pipeline that keeps the document as it is when it differs). The update's modified count
/// says whether it was replaced. Both documents are `$literal`s: their values are data, never
/// expressions. (A filter comparing `$$ROOT` in `$expr` holds the same condition, but the
/// embedded server answers it by scanning the collection: `converge` was quadratic.)
pub(crate) fn replace_unchanged(stored: &Document, new: Document) -> (Document, Vec<Document>) {
    let id = stored.get("_id").cloned().unwrap_or(Bson::Null);
    let same = doc! { "$eq": ["$$ROOT", { "$literal": stored.clone() }] };
    let pipeline = vec![doc! {
        "$replaceWith": { "$cond": [same, { "$literal": new }, "$$ROOT"] },
    }];
    (doc! { "_id": id }, pipeline)
}

/// Before an operator update of `model`'s documents matching `filter`: those stored in an older
/// version are rewritten at the current one first (each conditional on the document as read),
/// so that the update applies to the current shape, never adds current fields to an older one.
/// Nothing is sent for a model without older versions. A document that does not upgrade
/// refuses the update ([`Error::Upgrade`]).
pub(crate) async fn upgrade_matching(
    db: &mongodb::Database,
    mut session: Option<&mut mongodb::ClientSession>,
    model: &'static ModelSchema,
    filter: &Document,
) -> mongodb::error::Result<()> {
    let Some(spec) = model.spec::<SchemaVersionSpec>() else {
        return Ok(());
    };
    let coll: mongodb::Collection<Document> = db.collection(model.collection());
    let find = coll.find(doc! { "$and": [filter.clone(), spec.older_filter()] });
    let older = collect_in!(find, session.as_deref_mut())?;
    for stored in older {
        let new = spec
            .upgrade_document(model, stored.clone())
            .map_err(crate::error::refusal)?;
        let (filter, update) = replace_unchanged(&stored, new);
        let op = coll.update_one(filter, update);
        in_session!(op, session.as_deref_mut())?;
        tracing::debug!(id = ?stored.get("_id"), "older document upgraded before an update");
    }
    Ok(())
}

/// [`upgrade_matching`] in the caller's transaction `tx`, if any.
pub(crate) async fn upgrade_matching_in(
    db: &mongodb::Database,
    tx: Option<&Transaction>,
    model: &'static ModelSchema,
    filter: &Document,
) -> Result<()> {
    if model.spec::<SchemaVersionSpec>().is_none() {
        return Ok(());
    }
    let mut session = Transaction::session_of(tx).await?;
    Ok(upgrade_matching(db, session.as_deref_mut(), model, filter).await?)
}

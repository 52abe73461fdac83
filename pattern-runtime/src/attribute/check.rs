//! The attribute array's check and repair: one item per key, every key a field name.

use super::*;
use crate::span::Spanned as _;

/// The sampled documents whose attribute array holds a key twice (a write around
/// [`Attributes::set`]), and those holding an item a query cannot name: no key, a key that is
/// not a string, or one starting with `$` or holding `.`.
pub(super) async fn audit_attributes(
    spec: &'static AttributeSpec,
    sample: &Sample<'_>,
) -> Result<Vec<Finding>> {
    let key = spec.key_field();
    let (mut twice, mut unnamed) = (Vec::new(), Vec::new());
    for (id, d) in sample.identified() {
        if spec.deduplicated(d).is_some_and(|(_, dropped)| dropped) {
            twice.push(id.clone());
        }
        let Some(Bson::Array(items)) = d.get(spec.field()) else {
            continue;
        };
        let bad = items.iter().any(|item| match item {
            Bson::Document(i) => match i.get(key) {
                Some(Bson::String(k)) => validate_key(k).is_err(),
                _ => true,
            },
            _ => true,
        });
        if bad {
            unnamed.push(id.clone());
        }
    }
    let n = sample.documents.len();
    let model = sample.model.name();
    let rust = sample
        .model
        .field_by_bson_name(spec.field())
        .map_or(spec.field(), |f| f.rust_name());
    // The finding about the documents `ids`: what they hold, then the way out.
    let drift = |ids: Vec<Bson>, hold: &str, repair: String| {
        let about = format!("{} of {n} documents {hold}; {}", ids.len(), examples(&ids));
        sample
            .finding(Check::AttributeDrift, spec.field(), about, repair)
            .about(ids)
    };
    let mut findings = Vec::new();
    if !twice.is_empty() {
        findings.push(drift(
            twice,
            "hold a key twice",
            format!(
                "`{model}::collection(&db).attributes({model}::FIELDS.{rust}).repair()` keeps the first item of each \
                 key (what `get` reads); `set` never writes a key twice"
            ),
        ));
    }
    if !unnamed.is_empty() {
        let hold = format!(
            "hold an item without a usable `{key}` (missing, not a string, or starting with \
             `$` or holding `.`)"
        );
        findings.push(drift(
            unnamed,
            &hold,
            "no repair can name them: `$pull` those items by hand, then `set` them \
             again through `Attributes` (which refuses such keys)"
                .to_owned(),
        ));
    }
    Ok(findings)
}

impl<M: Model, I: AttributeItem> Attributes<M, I> {
    /// Reads every document of the model, a page at a time, and reports those holding a key
    /// twice or an item a query cannot name
    /// ([`Check::AttributeDrift`], listing them), as the
    /// [doctor](mod@crate::doctor) does over a sample. Writes nothing.
    pub async fn check(&self) -> Result<CheckReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::attribute.check",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                crate::maintenance::check(
                    &self.db,
                    self.tx.as_ref(),
                    &[(M::SCHEMA, self.spec as &dyn PatternSpec)],
                )
                .await
            },
        )
        .await
    }

    /// [`check`](Self::check), then, in each document it lists, keeps the first item of each
    /// key (what [`get`](Self::get) reads): one `update` per document, whose filter carries the
    /// array as read, so a document changed meanwhile is left for the next run. Items no
    /// query can name are left (see [`CheckReport`]). Then a check again.
    pub async fn repair(&self) -> Result<RepairReport> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::attribute.repair",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.spec.field()
            ),
            async move {
                let targets = [(M::SCHEMA, self.spec as &dyn PatternSpec)];
                let found = crate::maintenance::check(&self.db, self.tx.as_ref(), &targets).await?;
                let field = self.spec.field();
                let mut repaired = 0;
                for id in found.documents() {
                    let doc = {
                        let mut session =
                            crate::txn::Transaction::session_of(self.tx.as_ref()).await?;
                        let raw = self.raw();
                        let find = raw
                            .find_one(doc! { "_id": id.clone() })
                            .projection(doc! { field: 1 });
                        crate::txn::in_session!(find, session.as_deref_mut())?
                    };
                    let Some(doc) = doc else {
                        continue;
                    };
                    let Some((kept, true)) = self.spec.deduplicated(&doc) else {
                        continue;
                    };
                    let was = doc.get(field).cloned().unwrap_or(Bson::Null);
                    repaired += crate::derived::update_one(
                        &self.db,
                        self.tx.as_ref(),
                        M::SCHEMA,
                        doc! { "_id": id, field: { "$eq": was } },
                        doc! { "$set": { field: kept } },
                        &[field],
                    )
                    .await?
                    .modified_count;
                }
                crate::maintenance::after_repair(&self.db, self.tx.as_ref(), &targets, repaired)
                    .await
            },
        )
        .await
    }
}

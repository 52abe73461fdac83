//! What another handle may not write: the fields each pattern keeps (a tree's ancestors, a
//! computed value, a subset's array, ...), checked on every update and replace before it is
//! sent, with the refusal that names the operation to use instead.

use super::*;

/// The full paths an operator update writes (`customer.name`, `items.$[i].qty`), `$rename`
/// targets included: what [`check_kept`] compares with the kept fields.
pub(crate) fn update_paths(update: &Document) -> Vec<String> {
    let mut paths = Vec::new();
    for (op, body) in update {
        let Bson::Document(body) = body else { continue };
        for (k, v) in body {
            paths.push(k.clone());
            if let (true, Bson::String(to)) = (op == "$rename", v) {
                paths.push(to.clone());
            }
        }
    }
    paths
}

/// Refuses what a dependent of `model` could not keep in `fields` of a document about to be
/// written ([`Dependent::check_written`]: a NaN in a summed field, an operator as a computed
/// `by`), before anything is sent.
pub(crate) fn check_written(
    model: &'static ModelSchema,
    fields: &Document,
) -> crate::error::Result<()> {
    dependents_of(model)
        .iter()
        .try_for_each(|d| d.check_written(fields))
}

/// The checks of an operator update of `model` before it is sent: no field a pattern keeps
/// ([`check_kept`]), and no value set that a dependent could not keep
/// ([`check_update_values`]).
pub(crate) fn check_update(
    model: &'static ModelSchema,
    update: &Document,
) -> crate::error::Result<()> {
    check_kept(model, update_paths(update).iter().map(String::as_str))?;
    check_update_values(model, update)?;
    check_integer_arithmetic(model, update)
}

/// Refuses an `$inc` or `$mul` of a field the model declares as an integer by a double or a
/// decimal: the server would store the result as one (MongoDB's arithmetic widens), and the
/// document would no longer read as the model. [`Error::InvalidValue`] naming the field, before
/// anything is sent.
///
/// [`Error::InvalidValue`]: crate::error::Error::InvalidValue
fn check_integer_arithmetic(
    model: &'static ModelSchema,
    update: &Document,
) -> crate::error::Result<()> {
    let mut shape = None;
    for (op, body) in update {
        if !matches!(op.as_str(), "$inc" | "$mul") {
            continue;
        }
        let Bson::Document(body) = body else { continue };
        for (field, value) in body {
            if !matches!(value, Bson::Double(_) | Bson::Decimal128(_)) {
                continue;
            }
            // The model's stored shape (what its validator is made from), built only for an
            // update that moves a field by a double or a decimal.
            let shape = shape.get_or_insert_with(|| model.shape());
            let integer = match shape {
                Some(crate::schema::shape::Shape::Object(properties)) => properties
                    .iter()
                    .any(|p| p.name == field.as_str() && p.shape.is_integer()),
                _ => false,
            };
            if integer {
                return Err(crate::error::Error::InvalidValue {
                    field: field.clone(),
                    reason: format!(
                        "an integer field of {}: `{op}` by {value} would store a double, which \
                         the model cannot read; give an integer",
                        model.name()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// [`check_written`] of the top-level fields an operator update sets (`$set`,
/// `$setOnInsert`), those a dependent reads: the values the update stores as given. A NaN or
/// an infinity an arithmetic operator (`$inc`, `$mul`, `$min`, `$max`) would bring into such a
/// field is checked the same way, so it is refused before anything is sent.
fn check_update_values(model: &'static ModelSchema, update: &Document) -> crate::error::Result<()> {
    let dependents = dependents_of(model);
    let read = |k: &str| dependents.iter().any(|d| d.reads().contains(&k));
    let mut fields = Document::new();
    for (op, body) in update {
        let Bson::Document(body) = body else { continue };
        let stored = matches!(op.as_str(), "$set" | "$setOnInsert");
        let arithmetic = matches!(op.as_str(), "$inc" | "$mul" | "$min" | "$max");
        for (k, v) in body.iter().filter(|(k, _)| read(k)) {
            let not_finite = matches!(v, Bson::Double(x) if !x.is_finite());
            if stored || (arithmetic && not_finite) {
                fields.insert(k, v.clone());
            }
        }
    }
    if fields.is_empty() {
        return Ok(());
    }
    dependents.iter().try_for_each(|d| d.check_written(&fields))
}

/// Refuses an update of `model` touching a field a pattern keeps itself (a tree's parent, a
/// holder's path, a computed value): [`Error::KeptField`](crate::error::Error::KeptField) naming the
/// operation to use instead.
pub(crate) fn check_kept<'a>(
    model: &'static ModelSchema,
    touched: impl IntoIterator<Item = &'a str>,
) -> crate::error::Result<()> {
    check_kept_except(model, touched, &|_| false)
}

/// [`check_kept`] but for the patterns `skip` accepts (the writer's own).
pub(crate) fn check_kept_except<'a>(
    model: &'static ModelSchema,
    touched: impl IntoIterator<Item = &'a str>,
    skip: &dyn Fn(&'static dyn crate::schema::PatternSpec) -> bool,
) -> crate::error::Result<()> {
    // Each path as a field path: array positions (`lines.0.customer`, `lines.$.customer`,
    // `lines.$[].customer`, `lines.$[i].customer`) name the items' fields (`lines.customer`),
    // as the kept fields do.
    let touched: Vec<String> = touched.into_iter().map(field_path).collect();
    let touched: Vec<&str> = touched.iter().map(String::as_str).collect();
    for spec in model.patterns().iter().copied().filter(|s| !skip(*s)) {
        for (field, reason) in spec.kept_fields(model) {
            // At or under the kept field (`a`, `a.b` for `a`; `copy.name` for `copy.name`, not
            // `copy` itself, which a re-pointed copy writes whole).
            let under = |t: &&str| {
                t.strip_prefix(field)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            };
            if touched.iter().any(under) {
                return Err(crate::error::Error::KeptField {
                    field: field.to_owned(),
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// `path` without its array positions: `lines.0.customer.name`, `lines.$[].customer.name` and
/// `lines.$[i].customer.name` are all `lines.customer.name`.
fn field_path(path: &str) -> String {
    let positional = |segment: &str| {
        segment.bytes().all(|b| b.is_ascii_digit())
            || segment == "$"
            || (segment.starts_with("$[") && segment.ends_with(']'))
    };
    path.split('.')
        .filter(|segment| !segment.is_empty() && !positional(segment))
        .collect::<Vec<_>>()
        .join(".")
}

/// Equalities on the top-level fields the patterns of `model` keep, taken from the replacement
/// `new`: added to a replace's filter, it matches only a document whose kept fields the
/// replacement leaves as stored. (A kept path inside a copy, `customer.name`, is left out: a
/// replacement may re-point the copy.)
pub(crate) fn kept_filter(model: &'static ModelSchema, new: &Document) -> Document {
    let mut filter = Document::new();
    for spec in model.patterns().iter().filter(|s| s.kept_on_replace()) {
        for (field, _) in spec.kept_fields(model) {
            if !field.contains('.') {
                let value = new.get(field).cloned().unwrap_or(Bson::Null);
                filter.insert(field, doc! { "$eq": value });
            }
        }
    }
    filter
}

/// After a replace of `id` filtered by [`kept_filter`] matched nothing: the refusal naming the
/// kept field the replacement changes when the document exists (one `find`), `None` when it
/// does not.
pub(crate) async fn kept_refusal(
    db: &Database,
    session: Option<&mut ClientSession>,
    model: &'static ModelSchema,
    id: &Bson,
    new: &Document,
) -> mongodb::error::Result<Option<crate::error::Error>> {
    let coll: Collection<Document> = db.collection(model.collection());
    let find = coll.find_one(doc! { "_id": id.clone() });
    let Some(stored) = in_session!(find, session)? else {
        return Ok(None);
    };
    let value = |d: &Document, f: &str| match d.get(f) {
        None | Some(Bson::Null) => None,
        Some(v) => Some(v.clone()),
    };
    let kept = model
        .patterns()
        .iter()
        .filter(|spec| spec.kept_on_replace())
        .flat_map(|spec| spec.kept_fields(model))
        .filter(|(field, _)| !field.contains('.'));
    let mut first = None;
    for (field, reason) in kept {
        first.get_or_insert((field, reason));
        let (old, new) = (value(&stored, field), value(new, field));
        // As the filter's `$eq` compares: numbers by value, whatever their width.
        let same = crate::finding::same_value(old.as_ref(), new.as_ref())
            || old.as_ref().map(crate::finding::id_key) == new.as_ref().map(crate::finding::id_key);
        if !same {
            return Ok(Some(crate::error::Error::KeptField {
                field: field.to_owned(),
                reason,
            }));
        }
    }
    // Equal now: changed by another writer between the replace and this read.
    Ok(first.map(|(field, reason)| crate::error::Error::KeptField {
        field: field.to_owned(),
        reason,
    }))
}

/// Refuses another pattern's `operation` (`insert`, `replace`, `delete`) of a whole document of
/// `model` where a pattern writes its documents itself (a tree's nodes and holders):
/// [`Error::Unsupported`](crate::error::Error::Unsupported) naming the operation to use; or a
/// document a pattern could not keep ([`Error::InvalidValue`](crate::error::Error::InvalidValue)).
pub(crate) fn check_document_write(
    model: &'static ModelSchema,
    operation: &'static str,
    doc: Option<&Document>,
) -> crate::error::Result<()> {
    check_document_write_except(model, operation, doc, &|_| false)
}

/// [`check_document_write`] but for the patterns `skip` accepts (what the writer keeps itself).
pub(crate) fn check_document_write_except(
    model: &'static ModelSchema,
    operation: &'static str,
    doc: Option<&Document>,
    skip: &dyn Fn(&'static dyn crate::schema::PatternSpec) -> bool,
) -> crate::error::Result<()> {
    if let Some(doc) = doc {
        crate::literal::check_stored_id(doc)?;
        check_written(model, doc)?;
    }
    for spec in model.patterns().iter().copied().filter(|s| !skip(*s)) {
        if let Some(refused) = spec.document_writes(operation, doc) {
            return Err(refused);
        }
    }
    Ok(())
}

/// The document a `replace` of one of `model`'s writes: `doc` serialized, checked as
/// [`check_document_write`] does and for its size, with the `_id` that finds the stored one.
pub(crate) fn replacement<T: serde::Serialize>(
    model: &'static ModelSchema,
    doc: &T,
) -> crate::error::Result<(Document, Bson)> {
    let new = bson::serialize_to_document(doc)?;
    check_document_write(model, "replace", Some(&new))?;
    crate::error::check_size(&new, model.name())?;
    let id = replaced_id(&new)?;
    Ok((new, id))
}

/// The `_id` by which a `replace` finds the stored document: the new one's, or
/// [`Error::InvalidValue`](crate::error::Error::InvalidValue) when it has none.
pub(crate) fn replaced_id(new: &Document) -> crate::error::Result<Bson> {
    new.get("_id").cloned().ok_or_else(|| {
        crate::literal::invalid(
            "_id",
            "`replace` finds the stored document by the new one's `_id`, and it has none",
        )
    })
}

//! A caller's values are data: the checks every operation runs on the ids, keys and values it
//! is given, before anything is sent. See [safety](crate::guide::safety).
//!
//! - An id (an `_id`, a parent key, a resource, a slot, a tree key) goes into a filter as an
//!   equality: [`check_id`] refuses what the server would read as something else (a document
//!   with a `$` key is an operator, a regex matches by pattern, an array matches its elements).
//! - A value stored by an update operator (`$set`, `$push`) is stored as given; [`check_value`]
//!   refuses what the server cannot store as given (keys starting with `$`, holding `.` or NUL,
//!   nesting past [`MAX_VALUE_DEPTH`]).
//! - A value inside a pipeline (an aggregation stage, a pipeline update) goes through
//!   [`literal`], so no string starting with `$` is read as a field path and no document as an
//!   expression.
//! - An update document the caller writes is checked by [`touched_fields`]: operators of named
//!   fields, no change of `_id`, and `$set` values that can be stored as given.

use std::collections::BTreeSet;

use bson::{doc, Bson, Document};

use crate::error::{validate_key, Error, Result};

/// How deep a caller's value may nest (documents and arrays). MongoDB stores 100 levels; the
/// toolkit puts values inside arrays and documents of its own, and reading a value back through
/// serde recurses once per level (past about 75 levels it overflows a 2 MiB thread stack in a
/// debug build), so it keeps well below both.
pub const MAX_VALUE_DEPTH: usize = 48;

/// `{$literal: value}`: a value a pipeline stores or compares as it is.
pub(crate) fn literal(value: impl Into<Bson>) -> Bson {
    Bson::Document(doc! { "$literal": value.into() })
}

pub(crate) fn invalid(field: &str, reason: impl Into<String>) -> Error {
    Error::InvalidValue {
        field: field.to_owned(),
        reason: reason.into(),
    }
}

/// Checks an id the caller gave for `field` (`_id`, a parent key, a resource, a slot): it is
/// used as an equality in filters, so it must read as one. Refuses an operator document (any key
/// starting with `$`, at any depth), a regex or JavaScript code (at any depth), an array, a
/// key with `.` or NUL, and nesting past [`MAX_VALUE_DEPTH`]: [`Error::InvalidValue`], before
/// anything is sent.
pub(crate) fn check_id(field: &str, id: &Bson) -> Result<()> {
    match id {
        Bson::Array(_) => Err(invalid(
            field,
            "an array cannot be an id: in a filter it matches documents holding any of its items",
        )),
        other => walk(field, other, 0, true),
    }
}

/// The `_id` of a whole document about to be inserted or replaced, when it has one: held to
/// [`check_id`] like every id an operation takes, so that no handle stores an `_id` (an
/// operator document, a key with `.`) that the others would then refuse to address.
pub(crate) fn check_stored_id(doc: &Document) -> Result<()> {
    match doc.get("_id") {
        Some(id) => check_id("_id", id),
        None => Ok(()),
    }
}

/// An id of a typed field (a model's `_id`, a slot's resource), the form most operations use:
/// serialized as the field's type stores it, then [`check_id`]. A value serde cannot write as BSON (a `u64` past `i64::MAX`)
/// is [`Error::InvalidValue`] too.
pub(crate) fn typed_id<T: serde::Serialize>(field: &str, id: T) -> Result<Bson> {
    let id = bson::serialize_to_bson(&id)
        .map_err(|e| invalid(field, format!("cannot be stored: {e}")))?;
    check_id(field, &id)?;
    Ok(id)
}

/// A caller's `_id` as [`typed_id`] checks it, recorded as the `id` field of the current
/// operation's span (declared `id = tracing::field::Empty` where the span is opened).
pub(crate) fn span_id<T: serde::Serialize>(id: T) -> Result<Bson> {
    let id = typed_id("_id", id)?;
    tracing::Span::current().record("id", tracing::field::display(&id));
    Ok(id)
}

/// Checks a value the caller gave for `field`, to be stored by an update operator: refuses keys
/// the server cannot store as given (empty is allowed; a leading `$`, a `.` or NUL is not) and
/// nesting past [`MAX_VALUE_DEPTH`]: [`Error::InvalidValue`]. Strings, regexes and numbers of
/// any kind (NaN and the infinities included) are stored as they are.
pub(crate) fn check_value(field: &str, value: &Bson) -> Result<()> {
    walk(field, value, 0, false)
}

/// [`check_value`] on every field of a document the toolkit serialized from the caller's type.
pub(crate) fn check_document(field: &str, doc: &Document) -> Result<()> {
    for (key, value) in doc {
        check_key(field, key)?;
        walk(field, value, 1, false)?;
    }
    Ok(())
}

fn check_key(field: &str, key: &str) -> Result<()> {
    match crate::error::key_problem(key) {
        None => Ok(()),
        Some(reason) => Err(invalid(field, format!("key `{key}`: {reason}"))),
    }
}

fn walk(field: &str, value: &Bson, depth: usize, as_id: bool) -> Result<()> {
    if depth > MAX_VALUE_DEPTH {
        return Err(invalid(
            field,
            format!(
                "nested deeper than {MAX_VALUE_DEPTH} levels (MongoDB stores 100, and the \
                 toolkit nests values inside its own documents)"
            ),
        ));
    }
    match value {
        Bson::Document(d) => {
            for (key, v) in d {
                check_key(field, key)?;
                walk(field, v, depth + 1, as_id)?;
            }
            Ok(())
        }
        Bson::Array(a) => a.iter().try_for_each(|v| walk(field, v, depth + 1, as_id)),
        Bson::RegularExpression(_) if as_id => Err(invalid(
            field,
            "a regex cannot be an id: in a filter it matches by pattern",
        )),
        Bson::JavaScriptCode(_) | Bson::JavaScriptCodeWithScope(_) if as_id => {
            Err(invalid(field, "JavaScript code cannot be an id"))
        }
        Bson::Undefined => Err(invalid(
            field,
            "`undefined` is deprecated BSON: MongoDB neither stores nor compares it",
        )),
        _ => Ok(()),
    }
}

/// Refuses an update with no operator ([`Error::InvalidKey`]): it would change nothing, and the
/// driver refuses it untyped.
pub(crate) fn check_not_empty(update: &Document) -> Result<()> {
    if update.is_empty() {
        return Err(Error::InvalidKey {
            key: String::new(),
            reason: "an empty update changes nothing: give at least one operator (`$set`, ...)",
        });
    }
    Ok(())
}

/// The top-level fields an operator update touches; refuses what is not a plain operator update
/// of named fields, any change of `_id` (refused with `id_reason`), and a value stored as given
/// (by `$set`, `$setOnInsert`, `$min`, `$max`, `$push`, `$addToSet`, `$pullAll`) that could not
/// be (see [`check_value`]). A `$pull` takes a condition, and `$currentDate` a type: neither is
/// a stored value.
pub(crate) fn touched_fields(
    update: &Document,
    id_reason: &'static str,
) -> Result<BTreeSet<String>> {
    let mut touched = BTreeSet::new();
    let mut add = |path: &str| -> Result<()> {
        // A bad segment is reported with the whole path the caller wrote.
        for part in path.split('.') {
            if let Err(Error::InvalidKey { reason, .. }) = validate_key(part) {
                return Err(Error::InvalidKey {
                    key: path.to_owned(),
                    reason: if part.is_empty() {
                        "a dotted path cannot have an empty segment"
                    } else {
                        reason
                    },
                });
            }
        }
        let top = path.split('.').next().unwrap_or(path);
        if top == "_id" {
            return Err(Error::InvalidKey {
                key: path.to_owned(),
                reason: id_reason,
            });
        }
        touched.insert(top.to_owned());
        Ok(())
    };
    crate::error::check_encodable("the update", update)?;
    check_not_empty(update)?;
    for (op, fields) in update {
        if !op.starts_with('$') {
            return Err(Error::InvalidKey {
                key: op.clone(),
                reason: "an update is made of operators such as `$set`",
            });
        }
        let Bson::Document(fields) = fields else {
            return Err(Error::InvalidKey {
                key: op.clone(),
                reason: "an update operator takes a document of fields",
            });
        };
        for (key, value) in fields {
            add(key)?;
            // Stored as given: no key the server would read as an operator or a path.
            match (op.as_str(), value) {
                ("$set" | "$setOnInsert" | "$min" | "$max", value) => check_value(key, value)?,
                // `{$each: [..], $slice: .., ..}` is the modifier form: its items are stored.
                ("$push" | "$addToSet", Bson::Document(d)) if d.contains_key("$each") => {
                    if let Some(Bson::Array(items)) = d.get("$each") {
                        items.iter().try_for_each(|i| check_value(key, i))?;
                    }
                }
                ("$push" | "$addToSet", value) => check_value(key, value)?,
                ("$pullAll", Bson::Array(items)) => {
                    items.iter().try_for_each(|i| check_value(key, i))?;
                }
                _ => {}
            }
            if op == "$rename"
                && let Bson::String(to) = value
            {
                add(to)?;
            }
        }
    }
    Ok(touched)
}

#[cfg(test)]
mod tests {
    use bson::{doc, Regex};

    use super::*;

    fn nested(levels: usize) -> Bson {
        let mut v = Bson::Int32(1);
        for _ in 0..levels {
            v = Bson::Document(doc! { "a": v });
        }
        v
    }

    #[test]
    fn ids_that_would_not_be_equalities_are_refused() {
        let regex = Bson::RegularExpression(Regex {
            pattern: ".*".try_into().unwrap(),
            options: "".try_into().unwrap(),
        });
        for bad in [
            Bson::Document(doc! { "$gt": "" }),
            Bson::Document(doc! { "$literal": 1 }),
            Bson::Document(doc! { "a": { "$ne": 1 } }),
            Bson::Document(doc! { "a.b": 1 }),
            regex.clone(),
            Bson::Document(doc! { "a": regex }),
            Bson::Array(vec![1.into()]),
            nested(MAX_VALUE_DEPTH + 1),
        ] {
            assert!(
                matches!(check_id("_id", &bad), Err(Error::InvalidValue { .. })),
                "{bad}"
            );
        }
        for good in [
            Bson::String("$gt".into()),
            Bson::String(String::new()),
            Bson::String("a\0b".into()),
            Bson::Document(doc! { "a": 1, "b": "$x" }),
            Bson::Double(f64::NAN),
            nested(MAX_VALUE_DEPTH),
        ] {
            assert!(check_id("_id", &good).is_ok(), "{good}");
        }
    }

    #[test]
    fn values_are_refused_only_for_keys_and_depth() {
        assert!(check_value("v", &Bson::String("$x".into())).is_ok());
        assert!(check_value("v", &Bson::Document(doc! { "$concat": ["a"] })).is_err());
        assert!(check_value("v", &Bson::Document(doc! { "x": { "y.z": 1 } })).is_err());
        assert!(check_value("v", &nested(MAX_VALUE_DEPTH + 1)).is_err());
        assert!(check_document("v", &doc! { "ok": "$fine", "n": f64::INFINITY }).is_ok());
    }

    #[test]
    fn touched_fields_are_the_top_level_names_of_every_key() {
        let t = touched_fields(
            &doc! {
                "$set": { "name": "x", "address.city": "y" },
                "$inc": { "points": 1 },
                "$rename": { "nick": "alias" },
            },
            "",
        )
        .unwrap();
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        assert_eq!(t, ["address", "alias", "name", "nick", "points"]);
    }

    #[test]
    fn touched_fields_refuse_what_is_not_a_plain_update() {
        for bad in [
            doc! { "name": "x" },
            doc! { "$set": 1 },
            doc! { "$set": { "_id": 1 } },
            doc! { "$set": { "_id.x": 1 } },
            doc! { "$set": { "a.$": 1 } },
            doc! { "$set": { "a..b": 1 } },
            doc! { "$rename": { "a": "_id" } },
        ] {
            assert!(
                matches!(touched_fields(&bad, ""), Err(Error::InvalidKey { .. })),
                "{bad}"
            );
        }
    }
}

//! The checks against MongoDB's limits the toolkit runs before sending: key names, finite
//! numbers, document sizes and byte budgets, encodability.

use super::*;

/// Checks a key supplied at run time (a `$set` the caller adds, say): not empty, no leading `$`,
/// no `.` (which would address a nested field), no NUL.
pub fn validate_key(key: &str) -> Result<()> {
    let reason = if key.is_empty() {
        Some("a field name cannot be empty")
    } else {
        key_problem(key)
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(Error::InvalidKey {
            key: key.to_owned(),
            reason,
        }),
    }
}

/// What makes `key` unfit as a field name the server reads literally, if anything: a leading
/// `$`, a `.`, a NUL. (An empty name is stored as it is; [`validate_key`] refuses it too.)
pub(crate) fn key_problem(key: &str) -> Option<&'static str> {
    if key.starts_with('$') {
        Some("a field name cannot start with `$` (it would be read as an operator)")
    } else if key.contains('.') {
        Some("a field name cannot contain `.` (it would address a nested field)")
    } else if key.contains('\0') {
        Some("a field name cannot contain NUL")
    } else {
        None
    }
}

/// [`Error::InvalidValue`] when `field` of `doc` is a double that is NaN or infinite: a summary
/// (a running sum, a min or max) cannot take it in. `what` says which summary.
pub(crate) fn check_finite(doc: &Document, field: &str, what: &str) -> Result<()> {
    match doc.get(field) {
        Some(bson::Bson::Double(v)) if !v.is_finite() => Err(Error::InvalidValue {
            field: field.to_owned(),
            reason: format!(
                "{v} cannot be added to {what}: one non-finite value would make the sum NaN or \
                 infinite for good (and NaN sorts below every number in a min or max); leave \
                 the reading out, or store it in a field that is not summarised"
            ),
        }),
        _ => Ok(()),
    }
}

/// The BSON size of `doc`, or [`Error::DocumentTooLarge`] when it is over 16 MiB, or
/// [`Error::InvalidValue`] (naming `what`) when it cannot be encoded at all (a key holding NUL).
pub fn check_size(doc: &Document, what: &str) -> Result<usize> {
    let size = bson::RawDocumentBuf::try_from(doc)
        .map(|raw| raw.as_bytes().len())
        .map_err(|e| unencodable(what, &e))?;
    if size > MAX_DOCUMENT_SIZE {
        return Err(Error::DocumentTooLarge {
            what: what.to_owned(),
            size: Some(size),
            limit: MAX_DOCUMENT_SIZE,
        });
    }
    Ok(size)
}

/// The byte budget of a document the toolkit grows (an outlier's main and overflow documents
/// by default, an array bucket): half of [`MAX_DOCUMENT_SIZE`], leaving the other half for the
/// document's other fields and for a caller's item that is alone larger than the budget.
pub const BYTE_BUDGET: usize = MAX_DOCUMENT_SIZE / 2;

/// What `item` adds to a document as an array element, at most: its bytes, its type byte and
/// its index as a key (up to ten digits and a NUL).
pub(crate) fn element_cost(item: &Document) -> Result<usize> {
    let raw = bson::RawDocumentBuf::try_from(item).map_err(|e| unencodable("the item", &e))?;
    Ok(raw.as_bytes().len() + ELEMENT_OVERHEAD)
}

/// A caller's document that BSON cannot encode (a key holding NUL): refused as a value.
fn unencodable(what: &str, e: &bson::error::Error) -> Error {
    Error::InvalidValue {
        field: what.to_owned(),
        reason: format!("it cannot be encoded as BSON: {e}"),
    }
}

/// [`element_cost`] of any value, a scalar included: its bytes as an array element.
pub(crate) fn value_cost(value: &Bson) -> Result<usize> {
    if let Bson::Document(d) = value {
        return element_cost(d);
    }
    // `{"0": value}`: a 4-byte length, the type byte, "0" and its NUL, the value, the final NUL.
    let wrapped = bson::RawDocumentBuf::try_from(&bson::doc! { "0": value.clone() })?;
    Ok(wrapped.as_bytes().len() - 8 + ELEMENT_OVERHEAD)
}

/// What [`element_cost`] adds to an item's own bytes: the type byte and a key of up to ten
/// digits and its NUL.
pub(crate) const ELEMENT_OVERHEAD: usize = 12;

/// The most bytes a document may hold before `added` more so that it stays within `budget`:
/// `budget - added`, or -1 (no document) when `added` alone is over it.
pub(crate) fn bytes_left(budget: usize, added: usize) -> i64 {
    match budget.checked_sub(added) {
        Some(left) => i64::try_from(left).unwrap_or(i64::MAX),
        None => -1,
    }
}

/// [`Error::InvalidValue`] when `doc` cannot be encoded as BSON (a key with NUL at any depth),
/// before the driver fails on it; [`Error::DocumentTooLarge`] over 16 MiB, which no command
/// can carry.
/// Also refuses `undefined` at any depth: deprecated BSON that MongoDB neither stores nor
/// compares.
pub(crate) fn check_encodable(what: &str, doc: &Document) -> Result<()> {
    fn undefined(v: &Bson) -> bool {
        match v {
            Bson::Undefined => true,
            Bson::Document(d) => d.values().any(undefined),
            Bson::Array(a) => a.iter().any(undefined),
            _ => false,
        }
    }
    if doc.values().any(undefined) {
        return Err(Error::InvalidValue {
            field: what.to_owned(),
            reason: "`undefined` is deprecated BSON: MongoDB neither stores nor compares it"
                .to_owned(),
        });
    }
    check_size(doc, what).map(drop)
}

//! Reading the server's errors: their codes and messages, the typed `Error` each becomes, and
//! the refusals a transaction's body carries out through the driver's error.

use super::*;

#[doc(hidden)]
/// The server error code carried by a driver error, if any.
pub fn server_code(e: &mongodb::error::Error) -> Option<i32> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::BulkWrite(b) => b
            .write_errors
            .iter()
            .min_by_key(|(i, _)| **i)
            .map(|(_, w)| w.code),
        ErrorKind::InsertMany(m) => m
            .write_errors
            .as_ref()
            .and_then(|errors| errors.first())
            .map(|w| w.code),
        _ => None,
    }
}

pub(super) fn conflicting_declarations(
    collection: &str,
    index: &str,
    models: &[&'static str; 2],
    same_signature_as: Option<&str>,
) -> String {
    let [a, b] = models;
    match same_signature_as {
        None if a == b => format!(
            "model `{a}` declares index `{index}` on `{collection}` twice, differently: give one \
             of them another `name`"
        ),
        None => format!(
            "models `{a}` and `{b}` both declare index `{index}` on `{collection}`, differently: \
             make the two declarations identical, or give one of them another `name`"
        ),
        Some(first) if a == b => format!(
            "model `{a}` declares the same index on `{collection}` (the same keys, `unique`, \
             `sparse`, partial filter and collation) under two names, `{first}` and `{index}`: \
             MongoDB keeps one index per such key pattern and would refuse the second; declare \
             it once"
        ),
        Some(first) => format!(
            "models `{a}` and `{b}` declare the same index on `{collection}` (the same keys, \
             `unique`, `sparse`, partial filter and collation) under two names, `{first}` and \
             `{index}`: MongoDB keeps one index per such key pattern and would refuse the second, \
             whatever its name or TTL; declare it in one model only, or identically (same \
             `name`, same options) in both"
        ),
    }
}

/// A driver error as a person reads it: the server's code, code name and message, without the
/// raw reply the driver's own `Display` can include.
pub(super) fn describe(e: &mongodb::error::Error) -> String {
    let named = |code: i32, name: Option<&str>, message: &str| match name {
        Some(name) if !name.is_empty() => format!("{message} (code {code}, {name})"),
        _ => format!("{message} (code {code})"),
    };
    match e.kind.as_ref() {
        ErrorKind::Command(c) => named(c.code, Some(&c.code_name), &c.message),
        ErrorKind::Write(WriteFailure::WriteError(w)) => {
            named(w.code, w.code_name.as_deref(), &w.message)
        }
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => format!(
            "write concern not satisfied: {}",
            named(w.code, Some(&w.code_name), &w.message)
        ),
        ErrorKind::InsertMany(m) => match m.write_errors.as_deref() {
            Some([first, rest @ ..]) => format!(
                "{}{}",
                named(first.code, first.code_name.as_deref(), &first.message),
                if rest.is_empty() {
                    String::new()
                } else {
                    format!(", and {} more write errors", rest.len())
                }
            ),
            _ => e.kind.to_string(),
        },
        ErrorKind::BulkWrite(b) => match b.write_errors.iter().min_by_key(|(i, _)| **i) {
            Some((_, first)) => format!(
                "{}{}",
                named(first.code, first.code_name.as_deref(), &first.message),
                if b.write_errors.len() > 1 {
                    format!(", and {} more write errors", b.write_errors.len() - 1)
                } else {
                    String::new()
                }
            ),
            None => e.kind.to_string(),
        },
        _ => e.kind.to_string(),
    }
}

/// The server's message for a command or write error, else the driver's text.
pub(crate) fn server_message(e: &mongodb::error::Error) -> String {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => c.message.clone(),
        ErrorKind::Write(WriteFailure::WriteError(w)) => w.message.clone(),
        _ => e.to_string(),
    }
}

/// A typed error carried through a transaction body (whose errors are the driver's): the
/// transaction is aborted, and [`Error::from`] gives the error back.
pub(crate) struct Refusal {
    error: std::sync::Mutex<Option<Error>>,
    /// Whether the operation had written (or the server refused a command) before it: a
    /// caller's transaction it ran in then holds part of the operation, so it is ended.
    pub(crate) ends_transaction: bool,
    /// Whether it tells of a command the server refused (which ended the transaction there).
    by_server: bool,
}

/// Whether `r` tells of a command the server refused.
pub(crate) fn refused_by_server(r: &Refusal) -> bool {
    r.by_server
}

/// `error` as a driver error that aborts a transaction body and converts back into itself.
pub(crate) fn refusal(error: Error) -> mongodb::error::Error {
    mongodb::error::Error::custom(Refusal {
        error: std::sync::Mutex::new(Some(error)),
        ends_transaction: false,
        by_server: false,
    })
}

/// [`refusal`] made once the operation had written, or of a command the server refused: a
/// caller's transaction it ran in is ended (aborted), so that no part of the operation stays.
pub(crate) fn refusal_after_write(error: Error) -> mongodb::error::Error {
    mongodb::error::Error::custom(Refusal {
        error: std::sync::Mutex::new(Some(error)),
        ends_transaction: true,
        by_server: false,
    })
}

/// The server's code for a value an operator cannot apply (an `$inc` past the 64-bit range).
const BAD_VALUE: i32 = 2;

/// Whether `e` is the server's refusal of an `$inc` or `$mul` past the 64-bit range.
pub(crate) fn is_overflow(e: &mongodb::error::Error) -> bool {
    server_code(e) == Some(BAD_VALUE)
}

/// The value at the dotted `path` of `doc`.
fn at_path<'a>(doc: &'a Document, path: &str) -> Option<&'a Bson> {
    let mut parts = path.split('.');
    let mut value = doc.get(parts.next()?)?;
    for part in parts {
        value = match value {
            Bson::Document(d) => d.get(part)?,
            _ => return None,
        };
    }
    Some(value)
}

/// The paths of `update`'s `$inc` and `$mul` that leave the 64-bit integer range on `stored`,
/// as the server computes them (an integer that no longer fits an `Int32` widens to an `Int64`;
/// only past the `Int64` range is it refused).
pub(crate) fn overflowing(stored: &Document, update: &Document) -> Vec<String> {
    let int = |v: &Bson| match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        _ => None,
    };
    let mut paths = Vec::new();
    for (op, apply) in [
        ("$inc", i64::checked_add as fn(i64, i64) -> Option<i64>),
        ("$mul", i64::checked_mul),
    ] {
        let Ok(body) = update.get_document(op) else {
            continue;
        };
        for (path, by) in body {
            let (Some(by), Some(now)) = (int(by), at_path(stored, path).and_then(int)) else {
                continue;
            };
            if apply(now, by).is_none() {
                paths.push(path.clone());
            }
        }
    }
    paths
}

/// `e` from an operator `update` of the documents `filter` matches in `coll` (`what`, for the
/// message): the server's refusal of an `$inc` or `$mul` past the 64-bit range as
/// [`Error::InvalidValue`] naming the field, found by reading the matched document back (one
/// read, outside any transaction: the refused command ended it); any other error as it is,
/// and so is a `BadValue` when that read fails or finds nothing (the filter was refused).
pub(crate) async fn update_overflow(
    e: mongodb::error::Error,
    coll: &mongodb::Collection<Document>,
    filter: &Document,
    update: &Document,
    what: &str,
) -> mongodb::error::Error {
    if !is_overflow(&e) {
        return e;
    }
    let candidates: Vec<String> = ["$inc", "$mul"]
        .iter()
        .filter_map(|op| update.get_document(op).ok())
        .flat_map(|body| body.keys().cloned())
        .collect();
    if candidates.is_empty() {
        return e;
    }
    // A filter the server refuses (also `BadValue`) fails this read too, and a filter that
    // matches nothing any more leaves nothing to tell: the server's error, as it is.
    let Ok(Some(stored)) = coll.find_one(filter.clone()).await else {
        return e;
    };
    // With many documents matched, the first may not be the one that overflowed.
    let found = overflowing(&stored, update);
    let fields = if found.is_empty() { candidates } else { found };
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    inc_overflow(e, &fields, what)
}

/// `e` from an update whose `$inc` keeps `fields` of `what`: the server's refusal of an `$inc`
/// that would leave the 64-bit range (`BadValue`) as [`Error::InvalidValue`] naming the fields;
/// any other error as it is. The server refused a command, so a caller's transaction is over.
pub(crate) fn inc_overflow(
    e: mongodb::error::Error,
    fields: &[&str],
    what: &str,
) -> mongodb::error::Error {
    if server_code(&e) != Some(BAD_VALUE) {
        return e;
    }
    mongodb::error::Error::custom(Refusal {
        error: std::sync::Mutex::new(Some(Error::InvalidValue {
            field: fields.join(", "),
            reason: format!(
                "the server refused to change {what} ({}): the result would leave the \
                 64-bit integer range",
                server_message(&e),
            ),
        })),
        ends_transaction: true,
        by_server: true,
    })
}

/// `e` as it ends a caller's transaction: a [`refusal`] becomes a [`refusal_after_write`]
/// (what a dependent refuses comes after the write it derives from); any other error as it is.
pub(crate) fn after_write(e: mongodb::error::Error) -> mongodb::error::Error {
    if e.get_custom::<Refusal>()
        .is_some_and(|r| r.ends_transaction)
    {
        return e;
    }
    let taken = e.get_custom::<Refusal>().and_then(|r| {
        r.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    });
    match taken {
        Some(error) => refusal_after_write(error),
        None => e,
    }
}

/// `error` as a transaction body's error: a driver error as it came (its labels decide whether
/// the transaction is retried), any other as a [`refusal`].
pub(crate) fn into_body(error: Error) -> mongodb::error::Error {
    match error {
        Error::Driver { source, .. } => *source,
        other => refusal(other),
    }
}

impl From<mongodb::error::Error> for Error {
    fn from(e: mongodb::error::Error) -> Self {
        if let Some(refusal) = e.get_custom::<Refusal>() {
            let taken = refusal
                .error
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(error) = taken {
                return error;
            }
        }
        let code = server_code(&e);
        if code.is_some_and(|c| DOCUMENT_TOO_LARGE.contains(&c)) {
            return Error::DocumentTooLarge {
                what: server_message(&e),
                size: None,
                limit: MAX_DOCUMENT_SIZE,
            };
        }
        if code == Some(DOCUMENT_VALIDATION_FAILURE) {
            let details = validation_details(&e);
            return Error::ValidationFailed {
                fields: details.as_ref().map(failing_fields).unwrap_or_default(),
                message: server_message(&e),
                details: details.map(Box::new),
                source: Box::new(e),
            };
        }
        if code == Some(DUPLICATE_KEY) {
            return Error::DuplicateKey {
                message: server_message(&e),
                source: Box::new(e),
            };
        }
        Error::Driver {
            code,
            source: Box::new(e),
        }
    }
}

/// The server's `errInfo` of a validation failure: on the write error (or the first of
/// several), else in the reply (a command's `errInfo`, as `findAndModify` sends it, or its
/// first write error's).
fn validation_details(e: &mongodb::error::Error) -> Option<Document> {
    reported_details(e).or_else(|| {
        let reply = Document::try_from(e.server_response()?).ok()?;
        let info = reply.get_document("errInfo").ok().cloned().or_else(|| {
            let first = reply
                .get_array("writeErrors")
                .ok()?
                .first()?
                .as_document()?;
            first.get_document("errInfo").ok().cloned()
        })?;
        Some(info)
    })
}

/// The details the driver parsed into the error's kind.
fn reported_details(e: &mongodb::error::Error) -> Option<Document> {
    match e.kind.as_ref() {
        ErrorKind::Write(WriteFailure::WriteError(w)) => w.details.clone(),
        ErrorKind::InsertMany(m) => m
            .write_errors
            .as_ref()
            .and_then(|errors| errors.first())
            .and_then(|w| w.details.clone()),
        ErrorKind::BulkWrite(b) => b
            .write_errors
            .iter()
            .min_by_key(|(i, _)| **i)
            .and_then(|(_, w)| w.details.clone()),
        _ => None,
    }
}

/// The dotted paths of the fields a validation failure's `details` names, in the order the
/// server lists them, each once: where a `$jsonSchema` rule failed (`properties` name the
/// field, `required` the missing ones, `additionalProperties` those not allowed, `items` the
/// index), or the field a query-operator validator compared. `""` for a rule about the whole
/// document.
pub(super) fn failing_fields(details: &Document) -> Vec<String> {
    let mut out = Vec::new();
    rule_fields(details, "", &mut out, 0);
    out
}

/// A validation failure's details nest one level per rule; a hostile or corrupt reply does not
/// recurse past this.
const MAX_RULE_DEPTH: usize = 64;

fn rule_fields(rule: &Document, path: &str, out: &mut Vec<String>, depth: usize) {
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    // Rules beneath a rule: an array of them, or one (a query clause's `details`).
    let docs = |value: Option<&Bson>| -> Vec<Document> {
        match value {
            Some(Bson::Array(a)) => a.iter().filter_map(Bson::as_document).cloned().collect(),
            Some(Bson::Document(d)) => vec![d.clone()],
            _ => Vec::new(),
        }
    };
    let names = |key: &str| -> Vec<String> {
        match rule.get(key) {
            Some(Bson::Array(a)) => a.iter().filter_map(|v| v.as_str().map(join)).collect(),
            _ => Vec::new(),
        }
    };
    if depth > MAX_RULE_DEPTH {
        return add(out, path.to_owned());
    }
    match rule.get_str("operatorName").unwrap_or_default() {
        "properties" => {
            for property in docs(rule.get("propertiesNotSatisfied")) {
                let name = join(property.get_str("propertyName").unwrap_or_default());
                let inner = docs(property.get("details"));
                if inner.is_empty() {
                    add(out, name.clone());
                }
                for d in &inner {
                    rule_fields(d, &name, out, depth + 1);
                }
            }
            return;
        }
        "required" => {
            return names("missingProperties")
                .into_iter()
                .for_each(|n| add(out, n))
        }
        "additionalProperties" => {
            return names("additionalProperties")
                .into_iter()
                .for_each(|n| add(out, n));
        }
        _ => {}
    }
    // `$jsonSchema`, `$and`, `items`, `anyOf`...: the rules beneath, at this path (an item's
    // index when the server gives it).
    let at = match rule.get("itemIndex") {
        Some(Bson::Int32(i)) => join(&i.to_string()),
        Some(Bson::Int64(i)) => join(&i.to_string()),
        _ => path.to_owned(),
    };
    let nested: Vec<Document> = [
        "schemaRulesNotSatisfied",
        "clausesNotSatisfied",
        "schemasNotSatisfied",
        "details",
    ]
    .iter()
    .flat_map(|key| docs(rule.get(*key)))
    .collect();
    if !nested.is_empty() {
        for d in &nested {
            rule_fields(d, &at, out, depth + 1);
        }
        return;
    }
    // A query operator's clause names its field in `specifiedAs` (`{qty: {$gt: 0}}`); a
    // `$jsonSchema` keyword's names the keyword (`{minimum: 0}`), at this path.
    let query = rule
        .get_str("operatorName")
        .is_ok_and(|o| o.starts_with('$'));
    let compared: Vec<String> = match rule.get("specifiedAs") {
        Some(Bson::Document(spec)) if query => spec
            .keys()
            .filter(|k| !k.starts_with('$'))
            .map(|k| join(k))
            .collect(),
        _ => Vec::new(),
    };
    if compared.is_empty() {
        add(out, at);
    }
    for f in compared {
        add(out, f);
    }
}

/// `field` at the end of `out`, unless it is there already.
fn add(out: &mut Vec<String>, field: String) {
    if !out.contains(&field) {
        out.push(field);
    }
}

/// The fields of [`Error::ValidationFailed`] as its message says them.
pub(super) fn fields_text(fields: &[String]) -> String {
    match fields {
        [] => "the server named no field".to_owned(),
        [one] if one.is_empty() => "the document as a whole".to_owned(),
        _ => {
            let named: Vec<String> = fields
                .iter()
                .map(|f| {
                    if f.is_empty() {
                        "the document as a whole".to_owned()
                    } else {
                        format!("`{f}`")
                    }
                })
                .collect();
            format!("field {}", named.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    /// The shape of MongoDB's `errInfo.details` (from its manual's examples).
    #[test]
    fn the_failing_fields_of_a_json_schema_refusal() {
        let details = doc! {
            "operatorName": "$jsonSchema",
            "schemaRulesNotSatisfied": [
                { "operatorName": "properties", "propertiesNotSatisfied": [
                    { "propertyName": "price", "details": [
                        { "operatorName": "minimum", "specifiedAs": { "minimum": 0 },
                          "reason": "comparison failed", "consideredValue": -2 },
                    ] },
                    { "propertyName": "address", "details": [
                        { "operatorName": "properties", "propertiesNotSatisfied": [
                            { "propertyName": "city", "details": [
                                { "operatorName": "bsonType", "specifiedAs": { "bsonType": "string" } },
                            ] },
                        ] },
                    ] },
                    { "propertyName": "tags", "details": [
                        { "operatorName": "maxItems", "specifiedAs": { "maxItems": 3 } },
                        { "operatorName": "items", "reason": "At least one item did not match",
                          "itemIndex": 4, "details": [
                            { "operatorName": "bsonType", "specifiedAs": { "bsonType": "string" } },
                        ] },
                    ] },
                ] },
                { "operatorName": "required", "specifiedAs": { "required": ["name", "sku"] },
                  "missingProperties": ["sku"] },
                { "operatorName": "additionalProperties", "specifiedAs": { "additionalProperties": false },
                  "additionalProperties": ["extra"] },
            ],
        };
        assert_eq!(
            failing_fields(&details),
            ["price", "address.city", "tags", "tags.4", "sku", "extra"]
        );
    }

    #[test]
    fn the_failing_fields_of_a_query_validator_and_of_a_whole_document_rule() {
        let details = doc! {
            "operatorName": "$and",
            "clausesNotSatisfied": [
                { "index": 0, "details": {
                    "operatorName": "$gt", "specifiedAs": { "qty": { "$gt": 0 } },
                    "reason": "comparison failed", "consideredValue": 0 } },
                { "operatorName": "$expr", "specifiedAs": { "$expr": { "$lt": ["$a", "$b"] } },
                  "reason": "expression did not match" },
            ],
        };
        // The `$gt` clause names `qty`; the `$expr` is about the whole document.
        assert_eq!(failing_fields(&details), ["qty", ""]);
        assert_eq!(fields_text(&[String::new()]), "the document as a whole");
        assert_eq!(
            fields_text(&["a".to_owned(), "b.c".to_owned()]),
            "field `a`, `b.c`"
        );
        assert_eq!(fields_text(&[]), "the server named no field");
    }

    #[test]
    fn a_hostile_reply_nested_past_the_limit_stops() {
        let mut rule = doc! { "operatorName": "bsonType" };
        for _ in 0..200 {
            rule = doc! { "operatorName": "items", "details": [rule] };
        }
        assert_eq!(failing_fields(&rule), [""]);
    }
}

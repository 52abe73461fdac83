//! The one error type of the toolkit.

use bson::{Bson, Document};
use mongodb::error::{ErrorKind, WriteFailure};

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Server code of a unique index violation.
pub(crate) const DUPLICATE_KEY: i32 = 11000;
/// Server code: an index with these keys or this name exists with other options.
pub(crate) const INDEX_OPTIONS_CONFLICT: i32 = 85;
/// Server code: an index with this name exists with other keys.
pub(crate) const INDEX_KEY_SPECS_CONFLICT: i32 = 86;
/// Server code: the collection does not exist.
pub(crate) const NAMESPACE_NOT_FOUND: i32 = 26;
/// Server code: the index does not exist.
pub(crate) const INDEX_NOT_FOUND: i32 = 27;
/// `NamespaceExists`: `create` of a collection that exists.
pub(crate) const NAMESPACE_EXISTS: i32 = 48;
#[doc(hidden)]
/// Server code: the operation is not allowed here (transactions on a standalone server).
pub const ILLEGAL_OPERATION: i32 = 20;
/// Server codes for a document over the BSON size limit (insert, update result).
pub(crate) const DOCUMENT_TOO_LARGE: [i32; 3] = [10334, 17419, 17420];

/// MongoDB's limit on a document's size: 16 MiB.
pub const MAX_DOCUMENT_SIZE: usize = 16 * 1024 * 1024;

/// Everything that can go wrong in the toolkit.
///
/// Each failure a caller may want to handle on its own has its own variant; anything else from the
/// driver is [`Error::Driver`], with the server's error code where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A write violated a unique index (server code 11000).
    #[error("duplicate key: {message}")]
    DuplicateKey {
        /// The server's message, which names the index and the duplicate key.
        message: String,
        /// The driver's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// Creating a declared index failed because the collection has an index with the same keys or
    /// the same name and other options (server codes 85 and 86).
    #[error(transparent)]
    IndexConflict(Box<IndexConflict>),

    /// No document of `collection` has this `_id`.
    #[error("no document with _id {id} in `{collection}`")]
    NotFound {
        /// The collection.
        collection: String,
        /// The `_id` looked for (boxed: it keeps every `Result` small).
        id: Box<bson::Bson>,
    },

    /// The document is no longer at the version the caller holds: someone saved it since. Read
    /// it again and retry. Nothing was written.
    #[error("document {id} in `{collection}` is at version {found}, not {expected}: it changed since it was read; reload and retry")]
    VersionConflict {
        /// The collection.
        collection: String,
        /// The document's `_id`.
        id: Box<bson::Bson>,
        /// The version the caller held.
        expected: i64,
        /// The version stored now.
        found: i64,
    },

    /// A document is, or an update would make it, larger than MongoDB's 16 MiB limit. Nothing
    /// was written.
    #[error(
        "{what} {}, over MongoDB's limit of {limit} bytes; nothing was written",
        size.map_or_else(|| "is too large".to_owned(), |s| format!("is {s} bytes"))
    )]
    DocumentTooLarge {
        /// What was too large (`"the review"`, `"the updated products document"`; from the
        /// server, its message).
        what: String,
        /// Its size, when known before writing.
        size: Option<usize>,
        /// The limit, [`MAX_DOCUMENT_SIZE`].
        limit: usize,
    },

    /// A key supplied at run time cannot be a MongoDB field name. Nothing was written.
    #[error("invalid key `{key}`: {reason}; nothing was written")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why it is refused.
        reason: &'static str,
    },

    /// A value supplied at run time cannot be stored as the pattern needs it (a NaN or an
    /// infinity in a field a summary adds up). Nothing was written.
    #[error("invalid value for `{field}`: {reason}; nothing was written")]
    InvalidValue {
        /// The field (BSON name).
        field: String,
        /// Why it is refused.
        reason: String,
    },

    /// A document of a polymorphic model's collection whose tag names no variant of the enum
    /// (and the enum has no `#[serde(other)]` catch-all), or has no tag. Only that document is
    /// affected: the others of the same read are still returned.
    #[error(
        "document {} in `{collection}` has {}: `{model}` knows {}",
        id.as_ref().map_or_else(|| "without _id".to_owned(), ToString::to_string),
        match value {
            Some(v) => format!("`{tag}: {v}`"),
            None => format!("no string `{tag}`"),
        },
        known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
    )]
    UnknownVariant {
        /// The model (the enum's name).
        model: &'static str,
        /// The collection read.
        collection: String,
        /// The tag's key (`type`).
        tag: &'static str,
        /// The tag's value in the document, if it is a string.
        value: Option<String>,
        /// The document's `_id`, if it has one (boxed: it keeps every `Result` small).
        id: Option<Box<bson::Bson>>,
        /// The tag values the enum knows.
        known: &'static [&'static str],
    },

    /// Two models synced together declare one index name on one collection with different keys
    /// or options, or the same index (keys, `unique`, `sparse`, partial filter, collation) under
    /// two names, which the server would refuse. Nothing was synced.
    #[error(
        "{}",
        conflicting_declarations(collection, index, models, *same_signature_as)
    )]
    ConflictingDeclarations {
        /// The collection.
        collection: String,
        /// The index name (the second model's, for one index under two names).
        index: &'static str,
        /// The two models.
        models: [&'static str; 2],
        /// For one index under two names: the first model's name for it.
        same_signature_as: Option<&'static str>,
    },

    /// A collection exists in a form the model cannot use (a normal collection where a native
    /// time-series one is declared, or a time-series collection with other options). Nothing
    /// was changed.
    #[error("collection `{collection}` cannot be used as declared: {reason}")]
    CollectionConflict {
        /// The collection.
        collection: String,
        /// What is there, and what to do about it.
        reason: String,
    },

    /// [`sync_group`](crate::sync_group) was given a group that no model compiled into the
    /// program names with `#[model(group = "...")]`. Nothing was synced.
    #[error(
        "no model is in group `{group}`; the groups are: {}",
        if known.is_empty() { "(none: no model has `#[model(group = \"...\")]`)".to_owned() } else { known.join(", ") }
    )]
    UnknownGroup {
        /// The group asked for.
        group: String,
        /// The groups the registered models name.
        known: Vec<&'static str>,
    },

    /// A [tree](crate::tree) has no node with this key (the node asked for, or the parent named
    /// by a node or a move). Nothing was written.
    #[error("no node with {key} {value} in `{collection}`; nothing was written")]
    NoNode {
        /// The tree's collection.
        collection: String,
        /// The key's field (BSON name): `_id`, or the tree's `key = ..`.
        key: &'static str,
        /// The value looked for (boxed: it keeps every `Result` small).
        value: Box<bson::Bson>,
    },

    /// A [tree](crate::tree) move would put a node under itself or under one of its own
    /// descendants. Nothing was written: the tree is still a tree.
    #[error(
        "moving node {node} of `{collection}` under {under} would make a cycle: {under} is {}; \
         nothing was written",
        if node == under { "the node itself" } else { "one of its descendants" }
    )]
    Cycle {
        /// The tree's collection.
        collection: String,
        /// The node moved.
        node: Box<bson::Bson>,
        /// The parent asked for.
        under: Box<bson::Bson>,
    },

    /// A [tree](crate::tree) node was not deleted: it has descendants or holders, and the
    /// deletion asked for leaves them without a place. Nothing was written.
    #[error(
        "node {node} of `{collection}` was not deleted: {reason} ({descendants} descendants, \
         {holders} holders under it); nothing was written"
    )]
    NodeInUse {
        /// The tree's collection.
        collection: String,
        /// The node.
        node: Box<bson::Bson>,
        /// Nodes below it.
        descendants: u64,
        /// Documents of holder models placed in it or below it.
        holders: u64,
        /// Why, and what to ask for instead.
        reason: &'static str,
    },

    /// A [preallocated](crate::preallocation) slot is booked: by `holder` when the slot says
    /// who (a bitmap does not). Nothing was written.
    #[error(
        "slot {slot} of {resource} in `{collection}` is already booked{}; nothing was written",
        holder.as_ref().map_or_else(String::new, |h| format!(" by {h}"))
    )]
    AlreadyBooked {
        /// The slots' collection.
        collection: String,
        /// The resource (boxed: it keeps every `Result` small).
        resource: Box<bson::Bson>,
        /// The slot.
        slot: Box<bson::Bson>,
        /// Who holds it, where the slot says.
        holder: Option<Box<bson::Bson>>,
    },

    /// No [preallocated](crate::preallocation) slot exists for this resource and slot: it was
    /// never allocated (or lies outside the allocated range). Nothing was written.
    #[error(
        "slot {slot} of {resource} in `{collection}` was never allocated; nothing was written"
    )]
    NotAllocated {
        /// The slots' collection.
        collection: String,
        /// The resource.
        resource: Box<bson::Bson>,
        /// The slot.
        slot: Box<bson::Bson>,
    },

    /// A range that a rollup series cannot answer: a rollup (`#[bucket(rollup, ..)]`) keeps one
    /// row of sums per window, so [`Series::summary`](crate::Series::summary) takes a range that
    /// starts and ends on window boundaries. Nothing was read.
    #[error(
        "a rollup series keeps one row per window of {span_seconds} s: the range [{from}, {to}) \
         must start and end on a window boundary (round with `pattern_runtime::bucket::window_start`)"
    )]
    RangeNotAligned {
        /// The window of the series, in seconds.
        span_seconds: u64,
        /// The range's start.
        from: bson::DateTime,
        /// The range's end.
        to: bson::DateTime,
    },

    /// A stored document does not have the shape its model declares (a slot series' slot keyed
    /// by something other than a slot number, a slot map that is not a document). The document
    /// was left as it is.
    #[error("a document in `{collection}` is not as declared: {reason}")]
    Malformed {
        /// The collection.
        collection: String,
        /// What is wrong, with the document's key and window.
        reason: String,
    },

    /// A batch was partly written: `written` items are stored, `failed` are not (and can be sent
    /// again). `source` is the first failure.
    ///
    /// From a propagation of extended references without a transaction
    /// ([`References`](crate::References)), the items are the `updateMany`s of the copies: the
    /// source document was written, `failed` embeddings still hold the old values, and
    /// [`References::resync`](crate::References::resync) repairs them.
    #[error("{written} written, {failed} not written: {source}")]
    Incomplete {
        /// Items stored.
        written: usize,
        /// Items not stored.
        failed: usize,
        /// The first failure.
        #[source]
        source: Box<Error>,
    },

    /// A handle bound to a caller's [`Transaction`](crate::Transaction) was used after the
    /// transaction was committed or aborted: nothing was sent (a write would otherwise run
    /// outside any transaction).
    #[error("the transaction was {how}: start a new one (`Transaction::start`) and bind the handles to it")]
    TransactionEnded {
        /// `committed`, `aborted`, `aborted by the server` (an operation in it failed at the
        /// server, which ends a MongoDB transaction) or `aborted after a refusal` (an operation
        /// in it was refused once it had written).
        how: &'static str,
    },

    /// A value could not be converted to or from BSON.
    #[error("BSON conversion failed: {0}")]
    Bson(#[from] bson::error::Error),

    /// Any other driver or server error. Its `Display` is the server's code, code name and
    /// message (or the driver's description); the raw reply is in `source` and in `Debug`.
    #[error("MongoDB error: {}", describe(source))]
    Driver {
        /// The server's error code, where the server sent one.
        code: Option<i32>,
        /// The driver's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },
}

impl Error {
    /// Whether this is a [`VersionConflict`](Error::VersionConflict): someone saved the document
    /// since it was read. Reload and retry, or let
    /// [`ModelCollection::modify`](crate::ModelCollection::modify) do it.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::VersionConflict { .. })
    }

    /// Whether this is a [`NotFound`](Error::NotFound): no document has that `_id`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// Whether this is a [`DuplicateKey`](Error::DuplicateKey): a unique index refused the write.
    pub fn is_duplicate_key(&self) -> bool {
        matches!(self, Error::DuplicateKey { .. })
    }

    /// Whether this is an [`IndexConflict`](Error::IndexConflict): a declared index could not
    /// be created next to an existing one.
    pub fn is_index_conflict(&self) -> bool {
        matches!(self, Error::IndexConflict(_))
    }

    /// Whether this is an [`UnknownVariant`](Error::UnknownVariant): a document whose tag the
    /// polymorphic model does not know.
    pub fn is_unknown_variant(&self) -> bool {
        matches!(self, Error::UnknownVariant { .. })
    }

    /// Whether this is [`DocumentTooLarge`](Error::DocumentTooLarge): over 16 MiB, nothing
    /// written; also the first failure of an [`Incomplete`](Error::Incomplete) batch.
    pub fn is_too_large(&self) -> bool {
        match self {
            Error::DocumentTooLarge { .. } => true,
            Error::Incomplete { source, .. } => source.is_too_large(),
            _ => false,
        }
    }

    /// Whether this is an [`InvalidValue`](Error::InvalidValue) or an
    /// [`InvalidKey`](Error::InvalidKey): the toolkit refused a value, key or write of the
    /// caller's (an operator document as an id, a field another pattern keeps, ...), nothing
    /// written.
    pub fn is_refused_input(&self) -> bool {
        matches!(self, Error::InvalidValue { .. } | Error::InvalidKey { .. })
    }

    /// Whether this is an [`AlreadyBooked`](Error::AlreadyBooked): the slot is someone else's.
    pub fn is_already_booked(&self) -> bool {
        matches!(self, Error::AlreadyBooked { .. })
    }

    /// Whether this is a [`NotAllocated`](Error::NotAllocated): the slot was never allocated.
    pub fn is_not_allocated(&self) -> bool {
        matches!(self, Error::NotAllocated { .. })
    }

    /// Whether this is a [`NoNode`](Error::NoNode): the tree has no node with that key.
    pub fn is_no_node(&self) -> bool {
        matches!(self, Error::NoNode { .. })
    }

    /// Whether this is a [`TransactionEnded`](Error::TransactionEnded): the caller's transaction
    /// was committed, aborted, or ended by an operation's error; start a new one.
    pub fn is_transaction_ended(&self) -> bool {
        matches!(self, Error::TransactionEnded { .. })
    }

    /// Whether the driver labelled it `TransientTransactionError` (a write conflict, a
    /// failover): in a caller's [`Transaction`](crate::Transaction), abort it and run it again.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Driver { source, .. } | Error::DuplicateKey { source, .. } => {
                source.contains_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR)
            }
            _ => false,
        }
    }

    /// The server's error code, where there is one.
    pub fn code(&self) -> Option<i32> {
        match self {
            Error::DuplicateKey { .. } => Some(DUPLICATE_KEY),
            Error::IndexConflict(c) => Some(c.code),
            Error::Driver { code, .. } => *code,
            Error::Incomplete { source, .. } => source.code(),
            Error::ConflictingDeclarations { .. }
            | Error::CollectionConflict { .. }
            | Error::UnknownGroup { .. }
            | Error::InvalidValue { .. }
            | Error::RangeNotAligned { .. }
            | Error::Malformed { .. }
            | Error::UnknownVariant { .. }
            | Error::Bson(_)
            | Error::NotFound { .. }
            | Error::NoNode { .. }
            | Error::Cycle { .. }
            | Error::NodeInUse { .. }
            | Error::AlreadyBooked { .. }
            | Error::NotAllocated { .. }
            | Error::VersionConflict { .. }
            | Error::DocumentTooLarge { .. }
            | Error::InvalidKey { .. }
            | Error::TransactionEnded { .. } => None,
        }
    }
}

/// A declared index the server refused to create next to an existing one: see
/// [`Error::IndexConflict`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "index `{index}` declared by model `{model}` conflicts with an existing index on \
     `{collection}` (server code {code}): declared {declared}, existing {}; {message}. \
     Drop or rename the existing index, or sync with `SyncOptions::replace_mismatched()`",
    existing.as_ref().map_or_else(|| "(not found)".to_owned(), Document::to_string)
)]
#[non_exhaustive]
pub struct IndexConflict {
    /// The model that declares the index.
    pub model: &'static str,
    /// The collection.
    pub collection: String,
    /// The declared index's name.
    pub index: &'static str,
    /// The declared index, as sent to `createIndexes`.
    pub declared: Document,
    /// The existing index it collides with, as `listIndexes` shows it, when it could be found.
    pub existing: Option<Document>,
    /// The server code (85 or 86).
    pub code: i32,
    /// The server's message.
    pub message: String,
}

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

fn conflicting_declarations(
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
fn describe(e: &mongodb::error::Error) -> String {
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
                "the server refused to add to {what} ({}): a sum would leave the 64-bit \
                 integer range",
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

/// Checks a key supplied at run time (a `$set` the caller adds, say): not empty, no leading `$`,
/// no `.` (which would address a nested field), no NUL.
pub fn validate_key(key: &str) -> Result<()> {
    let reason = if key.is_empty() {
        "a field name cannot be empty"
    } else if key.starts_with('$') {
        "a field name cannot start with `$` (it would be read as an operator)"
    } else if key.contains('.') {
        "a field name cannot contain `.` (it would address a nested field)"
    } else if key.contains('\0') {
        "a field name cannot contain NUL"
    } else {
        return Ok(());
    };
    Err(Error::InvalidKey {
        key: key.to_owned(),
        reason,
    })
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

/// `{$lte: [{$bsonSize: "$$ROOT"}, budget - added]}`, for a filter's `$expr`: the document has
/// room for `added` more bytes within `budget` ([`bytes_left`]).
pub(crate) fn room_for(budget: usize, added: usize) -> Document {
    bson::doc! { "$lte": [{ "$bsonSize": "$$ROOT" }, bytes_left(budget, added)] }
}

/// [`Error::InvalidValue`] when `doc` cannot be encoded as BSON (a key with NUL at any depth),
/// before the driver fails on it.
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
    bson::RawDocumentBuf::try_from(doc)
        .map(|_| ())
        .map_err(|e| unencodable(what, &e))
}

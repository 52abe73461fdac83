//! The one error type of the toolkit.

use bson::{Bson, Document};
use mongodb::error::{ErrorKind, WriteFailure};

mod limits;
mod missing;
mod server;

pub(crate) use limits::key_problem;
pub(crate) use limits::{
    bytes_left, check_encodable, check_finite, element_cost, value_cost, ELEMENT_OVERHEAD,
};
pub use limits::{check_size, validate_key, BYTE_BUDGET};
pub use missing::Missing;
pub use server::server_code;
pub(crate) use server::{
    after_write, inc_overflow, into_body, is_overflow, overflowing, refusal, refused_by_server,
    server_message, update_overflow, Refusal,
};
use server::{conflicting_declarations, describe, fields_text};

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Server code of a unique index violation.
pub(crate) const DUPLICATE_KEY: i32 = 11000;
/// Server code of a cursor the server no longer has (timed out, or lost in a restart).
pub(crate) const CURSOR_NOT_FOUND: i32 = 43;
/// The server's code for a write its collection's validator refused.
pub(crate) const DOCUMENT_VALIDATION_FAILURE: i32 = 121;
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

    /// The collection's validator refused a write (server code 121, `DocumentValidationFailure`):
    /// the document does not have the shape the validator declares. Nothing of that write is
    /// stored.
    #[error(
        "the collection's validator refused the document ({}): {message}",
        fields_text(fields)
    )]
    ValidationFailed {
        /// The fields the server says broke a rule, as dotted paths (`address.city`,
        /// `tags.3`): a wrong type, a missing required field, a field not allowed, too many
        /// items. `[""]` when the rule that failed is about the whole document; empty when the
        /// server sent no details.
        fields: Vec<String>,
        /// The server's message.
        message: String,
        /// The server's details (`errInfo.details`): which rules failed and why.
        details: Option<Box<Document>>,
        /// The driver's error.
        #[source]
        source: Box<mongodb::error::Error>,
    },

    /// Creating a declared index failed because the collection has an index with the same keys or
    /// the same name and other options (server codes 85 and 86).
    #[error(transparent)]
    IndexConflict(Box<IndexConflict>),

    /// Something an operation names does not exist: a document by `_id`, a revision, a tree's
    /// node, a preallocated slot ([`Missing`] says which). Nothing was written, unless the
    /// operation's docs say otherwise.
    #[error("{missing} in `{collection}`")]
    NotFound {
        /// The collection looked in.
        collection: String,
        /// What was looked for (boxed: it keeps every `Result` small).
        missing: Box<Missing>,
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

    /// A key of the caller's (a field name or an operator, supplied at run time) that MongoDB
    /// refuses (a leading `$`, a `.` inside, NUL, empty), or that this operation does not take
    /// (an update without operators, `_id` in an update, a polymorphic tag in a variant's
    /// filter). Nothing was written.
    #[error("invalid key `{key}`: {reason}; nothing was written")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why it is refused.
        reason: &'static str,
    },

    /// The operation does not apply to this model, series or grid as declared, or not in this
    /// form: a keyset page without a sort an index serves, `book` on a grid without a holder,
    /// the measurements of a rollup series. `reason` says what to declare or call instead.
    /// Nothing was sent.
    #[error("`{operation}` does not apply here: {reason}; nothing was sent")]
    Unsupported {
        /// The operation (`after`, `book`, `measurements`, ...), or what it was given.
        operation: String,
        /// Why, and what to do instead.
        reason: &'static str,
    },

    /// A write names a field a pattern keeps itself (a tree's ancestors, a computed value, an
    /// extended-reference copy, a subset's array, a version, ...): only that pattern's handle
    /// writes it, and `reason` names the call to use. A typed update of such a field does not
    /// compile; this is the run-time refusal of a `doc!` update or a replace. Nothing was
    /// written.
    #[error("`{field}` is kept by its pattern: {reason}; nothing was written")]
    KeptField {
        /// The kept field (BSON path).
        field: String,
        /// Which pattern keeps it, and the call that writes it.
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

    /// A stored document whose schema version the model does not declare: written by a newer
    /// application, or by hand. Only that document is affected: the others of the same read
    /// are still returned, and [`converge`](crate::model::ModelCollection::converge) leaves it alone.
    #[error(
        "document {} in `{collection}` is at schema version {found}: `{model}` knows {}",
        id.as_ref().map_or_else(|| "without _id".to_owned(), ToString::to_string),
        known.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    UnknownSchemaVersion {
        /// The model.
        model: &'static str,
        /// The collection read.
        collection: String,
        /// The document's `_id`, if it has one (boxed: it keeps every `Result` small).
        id: Option<Box<bson::Bson>>,
        /// The version field's value.
        found: Box<bson::Bson>,
        /// The versions the model declares, ascending.
        known: Vec<u32>,
    },

    /// A stored document of an older schema version that does not upgrade: it does not read as
    /// its version's shape, or an upgrade (`TryFrom`) refused it. Only that document is
    /// affected; it is left as stored.
    #[error(
        "document {} in `{collection}` does not upgrade from schema version {from}: {reason}",
        id.as_ref().map_or_else(|| "without _id".to_owned(), ToString::to_string)
    )]
    Upgrade {
        /// The model.
        model: &'static str,
        /// The collection read.
        collection: String,
        /// The document's `_id`, if it has one.
        id: Option<Box<bson::Bson>>,
        /// The version of the step that failed.
        from: u32,
        /// Why.
        reason: String,
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

    /// [`sync(..).group(..)`](crate::sync::SyncRun::group) or
    /// [`doctor(..).group(..)`](crate::doctor::DoctorRun::group) was given a group that no
    /// model compiled into the program names with `#[model(group = "...")]`. Nothing was synced
    /// or audited.
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

    /// A document was not deleted: documents of another collection name it in a field that
    /// cannot be empty (the children of a [two-way relation](crate::relation)'s owner, whose
    /// owner field is not an `Option`). Nothing was written.
    #[error(
        "document {id} of `{collection}` was not deleted: documents of `{named_by}` name it in \
         `{field}`, which cannot be empty; {reason}; nothing was written"
    )]
    StillNamed {
        /// The collection of the document not deleted.
        collection: String,
        /// Its `_id`.
        id: Box<bson::Bson>,
        /// The collection of the documents naming it.
        named_by: String,
        /// Their field that names it.
        field: String,
        /// What to do instead.
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

    /// A cancellation by someone who does not hold the slot
    /// ([`Slots::cancel`](crate::preallocation::Slots::cancel)): the slot is someone else's, and stays theirs.
    #[error(
        "slot {slot} of {resource} in `{collection}` is held by {holder}, not by the holder who \
         cancels it; nothing was written"
    )]
    NotHolder {
        /// The slots' collection.
        collection: String,
        /// The resource (boxed: it keeps every `Result` small).
        resource: Box<bson::Bson>,
        /// The slot.
        slot: Box<bson::Bson>,
        /// Who holds it.
        holder: Box<bson::Bson>,
    },

    /// A range that a rollup series cannot answer: a rollup (`#[bucket(rollup, ..)]`) keeps one
    /// row of sums per window, so [`Series::summary`](crate::bucket::Series::summary) takes a range that
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
    /// ([`References`](crate::extended_ref::References)), the items are the `updateMany`s of the copies: the
    /// source document was written, `failed` embeddings still hold the old values, and
    /// [`References::rebuild`](crate::extended_ref::References::rebuild) repairs them.
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

    /// A handle bound to a caller's [`Transaction`](crate::txn::Transaction) was used after the
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
    /// [`ModelCollection::modify`](crate::model::ModelCollection::modify) do it.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::VersionConflict { .. })
    }

    /// Whether this is a [`NotFound`](Error::NotFound): what the operation names does not
    /// exist (a document, a revision, a tree's node, a slot: see [`missing`](Error::missing)).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// What a [`NotFound`](Error::NotFound) looked for; `None` for any other error.
    pub fn missing(&self) -> Option<&Missing> {
        match self {
            Error::NotFound { missing, .. } => Some(missing),
            _ => None,
        }
    }

    /// Whether this is a [`ValidationFailed`](Error::ValidationFailed): the collection's
    /// validator refused the write.
    pub fn is_validation_failed(&self) -> bool {
        matches!(self, Error::ValidationFailed { .. })
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

    /// Whether this is an [`InvalidValue`](Error::InvalidValue), an
    /// [`InvalidKey`](Error::InvalidKey), a [`KeptField`](Error::KeptField) or an
    /// [`Unsupported`](Error::Unsupported): the toolkit refused a value, key, write or call of
    /// the caller's (an operator document as an id, a field another pattern keeps, a keyset
    /// page without a served sort, ...), nothing written.
    pub fn is_refused_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidValue { .. }
                | Error::InvalidKey { .. }
                | Error::KeptField { .. }
                | Error::Unsupported { .. }
        )
    }

    /// Whether this is a stored document the model cannot read as its current shape: an
    /// [`UnknownSchemaVersion`](Error::UnknownSchemaVersion) or a failed
    /// [`Upgrade`](Error::Upgrade). The other documents of the same read are unaffected.
    pub fn is_schema_version(&self) -> bool {
        matches!(
            self,
            Error::UnknownSchemaVersion { .. } | Error::Upgrade { .. }
        )
    }

    /// Whether this is an [`AlreadyBooked`](Error::AlreadyBooked): the slot is someone else's.
    pub fn is_already_booked(&self) -> bool {
        matches!(self, Error::AlreadyBooked { .. })
    }

    /// Whether this is a [`NotHolder`](Error::NotHolder): the slot to cancel is someone
    /// else's.
    pub fn is_not_holder(&self) -> bool {
        matches!(self, Error::NotHolder { .. })
    }

    /// Whether this is a [`NotFound`](Error::NotFound) of a [slot](Missing::Slot): the slot was
    /// never allocated.
    pub fn is_not_allocated(&self) -> bool {
        matches!(self.missing(), Some(Missing::Slot { .. }))
    }

    /// Whether this is a [`NotFound`](Error::NotFound) of a [node](Missing::Node): the tree has
    /// no node with that key.
    pub fn is_no_node(&self) -> bool {
        matches!(self.missing(), Some(Missing::Node { .. }))
    }

    /// Whether this is a [`TransactionEnded`](Error::TransactionEnded): the caller's transaction
    /// was committed, aborted, or ended by an operation's error; start a new one.
    pub fn is_transaction_ended(&self) -> bool {
        matches!(self, Error::TransactionEnded { .. })
    }

    /// Whether the driver labelled it `TransientTransactionError` (a write conflict, a
    /// failover): in a caller's [`Transaction`](crate::txn::Transaction), abort it and run it again.
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
            Error::ValidationFailed { .. } => Some(DOCUMENT_VALIDATION_FAILURE),
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
            | Error::UnknownSchemaVersion { .. }
            | Error::Upgrade { .. }
            | Error::Bson(_)
            | Error::NotFound { .. }
            | Error::Cycle { .. }
            | Error::NodeInUse { .. }
            | Error::StillNamed { .. }
            | Error::AlreadyBooked { .. }
            | Error::NotHolder { .. }
            | Error::VersionConflict { .. }
            | Error::DocumentTooLarge { .. }
            | Error::InvalidKey { .. }
            | Error::Unsupported { .. }
            | Error::KeptField { .. }
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

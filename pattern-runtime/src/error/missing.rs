//! What a [`NotFound`](super::Error::NotFound) looked for: one "not found" for every pattern,
//! with the context of the pattern that looked.

use bson::Bson;
use std::fmt;

/// What was looked for and not found: the context of an [`Error::NotFound`](crate::error::Error::NotFound).
///
/// Every operation that names something that must exist (a document by `_id`, a revision, a
/// tree's node, a preallocated slot) reports its absence as the one
/// [`NotFound`](crate::error::Error::NotFound) error; this says which kind of thing was missing and
/// which one. [`Error::is_not_found`](crate::error::Error::is_not_found) is true for all of them;
/// [`is_no_node`](crate::error::Error::is_no_node) and
/// [`is_not_allocated`](crate::error::Error::is_not_allocated) pick out one kind.
///
/// ```
/// use pattern_runtime::{Error, Missing};
///
/// fn explain(e: &Error) -> String {
///     match e {
///         Error::NotFound { missing, .. } => match &**missing {
///             Missing::Document { id } => format!("create {id} first"),
///             Missing::Node { value, .. } => format!("add node {value} to the tree first"),
///             Missing::Slot { resource, slot } => format!("allocate {slot} of {resource} first"),
///             other => other.to_string(),
///         },
///         other => other.to_string(),
///     }
/// }
/// # let e = Error::NotFound {
/// #     collection: "rooms".into(),
/// #     missing: Box::new(Missing::Document { id: "r1".into() }),
/// # };
/// # assert_eq!(explain(&e), "create \"r1\" first");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Missing {
    /// No document has this `_id`.
    Document {
        /// The `_id` looked for.
        id: Bson,
    },
    /// A [versioned](crate::versioning) document has no stored revision with this version.
    Revision {
        /// The document's `_id`.
        id: Bson,
        /// The version looked for.
        version: i64,
    },
    /// A [tree](crate::tree) has no node with this key: the node asked for, or the parent
    /// named by a node or a move.
    Node {
        /// The key's field (BSON name): `_id`, or the tree's `key = ..`.
        key: &'static str,
        /// The value looked for.
        value: Bson,
    },
    /// No [preallocated](crate::preallocation) slot exists for this resource and slot: it was
    /// never allocated (or lies outside the allocated range).
    Slot {
        /// The resource.
        resource: Bson,
        /// The slot.
        slot: Bson,
    },
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Document { id } => write!(f, "no document with _id {id}"),
            Missing::Revision { id, version } => {
                write!(f, "no revision {version} of document {id}")
            }
            Missing::Node { key, value } => write!(f, "no node with {key} {value}"),
            Missing::Slot { resource, slot } => {
                write!(f, "no slot {slot} of {resource} (it was never allocated)")
            }
        }
    }
}

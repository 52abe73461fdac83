//! Helpers several files of this binary use (no models: a model's validators are installed for
//! the tests of its own module).

use bson::{doc, Bson, Document};
use pattern_runtime::Error;
use pattern_testkit::TestDb;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The commands sent since the last call, as `(name, collection)`.
pub(crate) fn sent(db: &TestDb) -> Vec<(String, String)> {
    db.take_commands()
        .into_iter()
        .map(|c| (c.name, c.target))
        .collect()
}

pub(crate) fn count_named(cmds: &[(String, String)], name: &str) -> usize {
    cmds.iter().filter(|(n, _)| n == name).count()
}

/// Every document of a collection, sorted by `_id`, as raw documents (for before/after
/// comparisons).
pub(crate) async fn dump(db: &TestDb, collection: &str) -> Vec<Document> {
    use futures_util::TryStreamExt;
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

pub(crate) async fn raw_one(
    db: &TestDb,
    collection: &str,
    id: impl Into<Bson>,
) -> Option<Document> {
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": { "$eq": id.into() } })
        .await
        .unwrap()
}

pub(crate) fn refused_value(e: &Error) -> bool {
    matches!(e, Error::InvalidValue { .. })
}

pub(crate) fn refused_key(e: &Error) -> bool {
    matches!(e, Error::InvalidKey { .. } | Error::KeptField { .. })
}

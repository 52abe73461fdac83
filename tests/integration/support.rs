//! Helpers several test files of this binary use (no models: a model's validators are installed
//! for the tests of its own module).

use bson::{DateTime, Document};
use pattern_runtime::{sync, Error, SyncOptions};
use pattern_testkit::{docs, test_db, TestDb};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

pub(crate) async fn synced(name: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group("nsh")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// Every document of every collection, as text.
pub(crate) async fn everything(db: &TestDb) -> String {
    let mut names = db.list_collection_names().await.unwrap();
    names.sort();
    let mut out = String::new();
    for c in names {
        out.push_str(&format!("{c}: {:?}\n", docs(db, &c).await));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// 2026-01-01T00:00:00Z: on a minute and an hour boundary.
pub(crate) const T0: i64 = 1_767_225_600_000;

pub(crate) fn at(ms: i64) -> DateTime {
    DateTime::from_millis(T0 + ms)
}

pub(crate) async fn raw_insert(
    db: &mongodb::Database,
    coll: &str,
    d: Document,
) -> Result<(), Error> {
    db.collection::<Document>(coll)
        .insert_one(d)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

pub(crate) fn is_invalid_value(e: &Error) -> bool {
    matches!(e, Error::InvalidValue { .. })
}

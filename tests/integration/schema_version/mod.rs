//! Schema versioning (`#[schema_version]`), a file per subject: reads of every stored version as
//! the current shape (`reads`), rewriting the older documents (`converge`), and the patterns
//! combined with it: a versioned model's revisions (`versioned`), the copies, subsets and counts
//! made from older-shape documents (`copies_and_counts`), trees and relations over them
//! (`tree_and_relation`).
//!
//! This module holds the models and helpers several of those files use. The tests write
//! older-shape documents around the toolkit, so they open their databases with
//! `test_db_unvalidated`.

use bson::{doc, Bson, Document};
use pattern_runtime::{schema_version::SchemaVersion, Model};
use serde::{Deserialize, Serialize};
use std::{collections::BTreeMap, time::Duration};

/// Version 1: one name, no version field in the documents of the first application.
#[derive(Deserialize)]
struct UserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[serde(default)]
    marks: BTreeMap<String, i64>,
}

/// Version 2: first and last names, cents.
#[derive(Deserialize)]
struct UserV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    #[serde(default)]
    marks: BTreeMap<String, i64>,
}

/// Version 3: the current shape, with `rename_all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "sv_users")]
#[schema_version(older(UserV1 = 1, UserV2 = 2))]
#[serde(rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<3>,
    full_name: String,
    initials: String,
    marks: BTreeMap<String, i64>,
}

impl From<UserV1> for UserV2 {
    fn from(v: UserV1) -> Self {
        let (first, last) = v.name.split_once(' ').unwrap_or((&v.name, ""));
        UserV2 {
            id: v.id,
            first: first.to_owned(),
            last: last.to_owned(),
            marks: v.marks,
        }
    }
}

impl TryFrom<UserV2> for User {
    type Error = String;
    fn try_from(v: UserV2) -> Result<Self, String> {
        if v.first == "refuse" {
            return Err(format!("user {} has no usable name", v.id));
        }
        let initials = format!(
            "{}{}",
            v.first.chars().next().unwrap_or('-'),
            v.last.chars().next().unwrap_or('-')
        );
        Ok(User {
            id: v.id,
            schema_version: SchemaVersion,
            full_name: format!("{} {}", v.first, v.last),
            initials,
            marks: v.marks,
        })
    }
}

/// What the upgrades give for user `i`, computed here from the test's own data.
fn expected(i: i64) -> (String, String) {
    let (first, last) = (format!("F{i}"), format!("L{i}"));
    let initials = format!("F{}", "L");
    (format!("{first} {last}"), initials)
}

/// User `i` stored in version `i % 4`: 0 without the field (version 1), 1, 2 and 3 (current).
fn stored_user(i: i64) -> Document {
    match i % 4 {
        0 => doc! { "_id": i, "name": format!("F{i} L{i}") },
        1 => doc! { "_id": i, "schemaVersion": 1, "name": format!("F{i} L{i}") },
        2 => {
            doc! { "_id": i, "schemaVersion": 2_i64, "first": format!("F{i}"), "last": format!("L{i}") }
        }
        _ => doc! {
            "_id": i, "schemaVersion": 3, "fullName": format!("F{i} L{i}"), "initials": "FL",
            "marks": {}
        },
    }
}

async fn seed(db: &mongodb::Database, n: i64) {
    let docs: Vec<Document> = (0..n).map(stored_user).collect();
    db.collection::<Document>("sv_users")
        .insert_many(docs)
        .await
        .unwrap();
}

/// A revision-history model whose shape changed: revisions archived in the old shape read as
/// the current one.
#[derive(Deserialize)]
struct NoteV1 {
    #[serde(rename = "_id")]
    id: u32,
    version: i64,
    text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_notes")]
#[versioned(history = "sv_note_revisions")]
#[schema_version(older(NoteV1 = 1))]
struct Note {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    sv: SchemaVersion<2>,
    body: String,
    words: u32,
}

impl From<NoteV1> for Note {
    fn from(v: NoteV1) -> Self {
        Note {
            id: v.id,
            version: v.version,
            sv: SchemaVersion,
            words: v.text.split_whitespace().count() as u32,
            body: v.text,
        }
    }
}

/// A schema-versioned model as an extended reference's source: copies are made from the
/// upgraded document.
#[derive(Deserialize)]
struct PatronV1 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "sv_patrons")]
#[extended_ref(PatronRef(name))]
#[schema_version(older(PatronV1 = 1))]
struct Patron {
    #[serde(rename = "_id")]
    id: i64,
    v: SchemaVersion<2>,
    name: String,
}

impl From<PatronV1> for Patron {
    fn from(p: PatronV1) -> Self {
        Patron {
            id: p.id,
            v: SchemaVersion,
            name: format!("{} {}", p.first, p.last),
        }
    }
}

const LONG: Duration = Duration::from_secs(300);

fn raw(db: &mongodb::Database, collection: &str) -> mongodb::Collection<Document> {
    db.collection::<Document>(collection)
}

async fn stored(db: &mongodb::Database, collection: &str, id: impl Into<Bson>) -> Option<Document> {
    raw(db, collection)
        .find_one(doc! { "_id": id.into() })
        .await
        .unwrap()
}

// ------------------------------------------------------------------------------------------
// The module docs' users, with a visit counter every shape shares.

#[derive(Debug, Deserialize)]
struct NsvUserV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    #[serde(default)]
    visits: i64,
}

#[derive(Debug, Deserialize)]
struct NsvUserV2 {
    #[serde(rename = "_id")]
    id: i64,
    first: String,
    last: String,
    #[serde(default)]
    visits: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(collection = "nsv_users")]
#[schema_version(older(NsvUserV1 = 1, NsvUserV2 = 2))]
#[serde(rename_all = "camelCase")]
struct NsvUser {
    #[serde(rename = "_id")]
    id: i64,
    schema_version: SchemaVersion<3>,
    first: String,
    last: String,
    email: Option<String>,
    #[serde(default)]
    visits: i64,
}

impl From<NsvUserV1> for NsvUserV2 {
    fn from(v1: NsvUserV1) -> Self {
        let (first, last) = v1.name.split_once(' ').unwrap_or((&v1.name, ""));
        NsvUserV2 {
            id: v1.id,
            first: first.into(),
            last: last.into(),
            visits: v1.visits,
        }
    }
}

impl From<NsvUserV2> for NsvUser {
    fn from(v2: NsvUserV2) -> Self {
        NsvUser {
            id: v2.id,
            schema_version: SchemaVersion,
            first: v2.first,
            last: v2.last,
            email: None,
            visits: v2.visits,
        }
    }
}

const USERS: &str = "nsv_users";

// ------------------------------------------------------------------------------------------
// Concurrency.

async fn seed_v1_users(db: &mongodb::Database, n: i64) {
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! { "_id": i, "name": format!("U{i} Last"), "visits": 0_i64 })
        .collect();
    for chunk in docs.chunks(500) {
        raw(db, USERS).insert_many(chunk.to_vec()).await.unwrap();
    }
}

async fn total_visits(db: &mongodb::Database) -> i64 {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = raw(db, USERS)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.iter()
        .map(|d| {
            d.get_i64("visits")
                .or_else(|_| d.get_i32("visits").map(i64::from))
                .unwrap()
        })
        .sum()
}

mod converge;
mod copies_and_counts;
mod reads;
mod tree_and_relation;
mod versioned;

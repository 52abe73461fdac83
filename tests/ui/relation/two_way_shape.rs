//! The sides of a two-way relation are one array and one single reference, and refer to each
//! other's model: both arrays, both single, and a side that refers to a third model.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Author {
    #[serde(rename = "_id")]
    id: ObjectId,
    // Both arrays.
    #[relation(inverse = authors)]
    books: Vec<Ref<Book>>,
    // Both single.
    #[relation(inverse = editor)]
    edits: Option<Ref<Book>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Book {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = books)]
    authors: Vec<Ref<Author>>,
    #[relation(inverse = edits)]
    editor: Option<Ref<Author>>,
    // `Shelf.books` refers to `Author`, not `Book`.
    #[relation(inverse = books)]
    shelf: Option<Ref<Shelf>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Shelf {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = books)]
    books: Vec<Ref<Author>>,
}

fn main() {}

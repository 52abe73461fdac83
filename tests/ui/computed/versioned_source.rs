// A versioned model's writes go through its own insert/save/update/delete (which keep what is
// computed from it); `Computing` would write around its revisions.
use pattern_runtime::computed::Computing;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "article_revisions")]
struct Article {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    author: String,
}

#[derive(Serialize, Deserialize, Model)]
struct Author {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = Article, by = author)]
    articles: i64,
}

fn writes(db: &mongodb::Database) {
    let _ = Computing::<Article>::new(db);
    let _ = Article::computing(db);
}

fn main() {}

// A versioned model's writes name the version: `insert` and `replace` take `&mut` (the version
// is set on the value), `update` takes `At(id, version)`, and the writes of many documents at
// once, which would go around the revisions, are refused.
use pattern_runtime::{At, Model};
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

async fn writes(db: &mongodb::Database, mut article: Article, author: Author) {
    let articles = Article::collection(db);
    // Fine: the version is set on `article`, and checked by `update`.
    let _ = articles.insert(&mut article).await;
    let _ = articles.update(At(1, 1), bson::doc! {}).await;
    // Refused: no version to check.
    let _ = articles.insert(&article).await;
    let _ = articles.update(1, bson::doc! {}).await;
    let _ = articles.insert_many(&[]).await;
    // Refused the other way: a model without `#[versioned]` has no version to name.
    let authors = Author::collection(db);
    let _ = authors.update(At("ada", 1), bson::doc! {}).await;
    let _ = authors.insert(&author).await;
}

fn main() {}

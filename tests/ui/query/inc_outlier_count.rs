use pattern_runtime::query::Update;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Post {
    text: String,
}

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

fn main() {
    let _ = Update::new().inc(User::FIELDS.posts_count, 1);
}

// A field is a subset or an outlier array, not both.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(n = -1), full = Post, parent = user_id)]
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Clone, Serialize, Deserialize, Model)]
struct Post {
    #[serde(rename = "_id")]
    id: String,
    user_id: String,
    n: i64,
}

fn main() {}

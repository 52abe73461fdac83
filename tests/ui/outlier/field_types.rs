// The flag is a `bool` and the count an integer.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: i32,
    posts_count: String,
}

fn main() {}

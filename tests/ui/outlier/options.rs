// Options out of range or missing: each one error at its token.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 0, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    a: Vec<String>,
    #[outlier(limit = 5, overflow = "user_posts", capacity = 0, flag = is_outlier, count = posts_count)]
    b: Vec<String>,
    #[outlier(limit = 5, flag = is_outlier, count = posts_count)]
    c: Vec<String>,
    #[outlier(limit = 5, overflow = "user_posts", count = posts_count)]
    d: Vec<String>,
    #[outlier(limt = 5, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    e: Vec<String>,
    #[outlier(limit = 5, overflow = "user_posts", flag = is_outlir, count = posts_count)]
    f: Vec<String>,
    #[outlier(limit = 5, overflow = "user_posts", max_bytes = 100, flag = is_outlier, count = posts_count)]
    g: Vec<String>,
    #[outlier(limit = 5, overflow = "user_posts", max_bytes = 16_777_216, flag = is_outlier, count = posts_count)]
    h: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

fn main() {}

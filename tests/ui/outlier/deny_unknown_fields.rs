// The main document keeps the receipts of its last pushes, which the struct does not declare;
// and a field of the struct may not take their name.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Star {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "star_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
    #[serde(rename = "__postsPushes")]
    pushes: Vec<String>,
}

fn main() {}

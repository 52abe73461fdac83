// An outlier array's pushes would bypass the versioned model's revisions.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "user_revisions")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

fn main() {}

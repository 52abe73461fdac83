// The overflow documents in the model's own collection: the unique index on their parent and
// number would admit one member only.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(collection = "members")]
struct Member {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 50, overflow = "members", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

fn main() {}

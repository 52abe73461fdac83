//! A kept copy of an `#[approximate]` counter: the counter's events are single `$inc`s that no
//! copy follows. A `snapshot` shape may copy it (a snapshot is never kept in sync).

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(PostCard(title, likes))]
#[extended_ref(PostAsSeen(title, likes), snapshot)]
struct Post {
    #[serde(rename = "_id")]
    id: String,
    title: String,
    #[approximate(sampled, p = 0.5)]
    likes: i64,
}

fn main() {}

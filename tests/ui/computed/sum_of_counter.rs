//! A computed sum of an `#[approximate]` counter: the counter's events are single `$inc`s that
//! no computed value follows. A count of the documents is fine.

use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Webpage {
    #[serde(rename = "_id")]
    id: String,
    site_id: String,
    #[approximate(sampled, p = 0.5)]
    view_count: i64,
    words: i64,
}

#[derive(Serialize, Deserialize, Model)]
struct Website {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Webpage.view_count, by = site_id)]
    views: i64,
    #[computed(max = Webpage.view_count, by = site_id)]
    most_viewed: Option<i64>,
    #[computed(count = Webpage, by = site_id)]
    pages: i64,
    #[computed(sum = Webpage.words, by = site_id)]
    words: i64,
}

fn main() {}

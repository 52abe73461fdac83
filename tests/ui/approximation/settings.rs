// Settings out of range or in the wrong place: each is one error at its token.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(batched, threshold = 0)]
    a: i64,
    #[approximate(sampled, p = 1.5)]
    b: i64,
    #[approximate(sampled, p = 0.0)]
    c: i64,
    #[approximate(sharded, shards = 0)]
    d: i64,
    #[approximate(batchd, threshold = 10)]
    e: i64,
    #[approximate(sampled, threshold = 10)]
    f: i64,
    #[approximate(batched)]
    g: i64,
    // A repeated setting, and an unknown one beside a setting that does not parse: each is
    // reported, and the reading goes on.
    #[approximate(batched, threshold = 10, threshold = 20)]
    h: i64,
    #[approximate(sharded, shard = 4, shards = "many")]
    i: i64,
}

fn main() {}

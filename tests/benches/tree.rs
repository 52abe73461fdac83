//! The tree pattern (`pattern_runtime::tree`): a subtree read through the ancestors index vs a
//! recursive `$graphLookup` and a parent-by-parent walk, on the same 1 000 categories.
//!
//! `cargo bench --ignore-rust-version -p pattern-tests --bench patterns -- tree` (embedded server, or
//! `MONGODB_URI`). The tree: `root`, under it `a0` with 99 nodes below it and `b0` with 898,
//! each node `aN`/`bN` the child of node `(N - 1) / 3` (three children each: `a0`'s subtree is
//! 5 levels deep, `b0`'s 7). Indexes as the tree declares them (`parent`, `ancestors`, the
//! unique `name`). One group per subtree, `tree_subtree_100` (`a0`) and `tree_subtree_899`
//! (`b0`), every side returning the same `Vec<Category>` (checked before timing):
//! - `toolkit`: `Category::collection(&db).tree().subtree(key)`: the node by `name`, then its descendants,
//!   `find({ancestors: key})`, sorted by depth on the client.
//! - `by_hand_two_finds`: the same two `find`s with the driver, decoded, not sorted.
//! - `by_hand_or`: one `find` of `{$or: [{name: key}, {ancestors: key}]}`, through the same
//!   two indexes (what `subtree` sent first: twice as slow on this server at 899 nodes).
//! - `graph_lookup`: one aggregation, `$match` of the node then `$graphLookup` from the
//!   categories, `startWith: "$name"`, `connectFromField: "name"`, `connectToField: "parent"`:
//!   the server walks the parents itself, one lookup per level through the `parent` index.
//! - `parent_walk`: what a tree without ancestors does from the client: the node, then one
//!   `find({parent: {$in: <the previous level>}})` per level until one comes back empty.
//!
//! One run on the embedded server, 2 cores, quiet machine, all groups in one process:
//!
//! | side | 100 nodes | ratio to `toolkit` | 899 nodes | ratio to `toolkit` |
//! | --- | --- | --- | --- | --- |
//! | `toolkit` | 2.95 ms | 1 | 18.9 ms | 1 |
//! | `by_hand_two_finds` | 2.73 ms | 0.92 | 20.8 ms | 1.10 |
//! | `by_hand_or` | 3.77 ms | 1.28 | 33.4 ms | 1.77 |
//! | `graph_lookup` | 119 ms | 40 | 789 ms | 42 |
//! | `parent_walk` | 6.62 ms | 2.24 | 36.1 ms | 1.91 |
//!
//! The toolkit costs what the same two `find`s cost by hand (within the spread of runs, which
//! is ±10 % here). The ancestors index is 40 times faster than `$graphLookup` on this server
//! (not profiled: a real `mongod` may narrow that gap) and twice as fast as walking the levels
//! from the client (6 and 8 round trips). On this server the work per
//! document returned dominates a subtree's read: 899 nodes cost about 20 µs each, whichever way
//! they are found. One `$or` query returns the same documents through the same indexes
//! (`explain`: 100 keys and 100 documents examined for 100 returned) and is still slower than
//! the two plain queries; by elimination its `OR` stage costs that, not a round trip, but that
//! is not profiled either.

use bson::{doc, Bson, Document};
use criterion::{criterion_group, Criterion};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use mongodb::Database;
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::runtime::Runtime;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Category {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

fn category(name: &str, parent: Option<&str>) -> Category {
    Category {
        id: bson::oid::ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

async fn setup(db: &Database) {
    let mut nodes = vec![category("root", None), category("a0", Some("root"))];
    for i in 1..100 {
        nodes.push(category(
            &format!("a{i}"),
            Some(&format!("a{}", (i - 1) / 3)),
        ));
    }
    nodes.push(category("b0", Some("root")));
    for i in 1..899 {
        nodes.push(category(
            &format!("b{i}"),
            Some(&format!("b{}", (i - 1) / 3)),
        ));
    }
    Category::collection(db)
        .tree()
        .insert_many(&nodes)
        .await
        .unwrap();
}

fn decode(docs: Vec<Document>) -> Vec<Category> {
    docs.into_iter()
        .map(|d| bson::deserialize_from_document(d).unwrap())
        .collect()
}

async fn toolkit(db: &Database, key: &str) -> Vec<Category> {
    Category::collection(db).tree().subtree(key).await.unwrap()
}

async fn by_hand_two_finds(db: &Database, key: &str) -> Vec<Category> {
    let coll = db.collection::<Document>("categories");
    let mut docs: Vec<Document> = coll
        .find(doc! { "name": key })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let descendants: Vec<Document> = coll
        .find(doc! { "ancestors": key })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.extend(descendants);
    decode(docs)
}

async fn by_hand_or(db: &Database, key: &str) -> Vec<Category> {
    let docs: Vec<Document> = db
        .collection::<Document>("categories")
        .find(doc! { "$or": [ { "name": key }, { "ancestors": key } ] })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    decode(docs)
}

async fn graph_lookup(db: &Database, key: &str) -> Vec<Category> {
    let pipeline = [
        doc! { "$match": { "name": key } },
        doc! { "$graphLookup": {
            "from": "categories",
            "startWith": "$name",
            "connectFromField": "name",
            "connectToField": "parent",
            "as": "descendants",
        } },
    ];
    let mut found: Vec<Document> = db
        .collection::<Document>("categories")
        .aggregate(pipeline)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut root = found.pop().unwrap();
    let descendants = match root.remove("descendants") {
        Some(Bson::Array(a)) => a,
        _ => vec![],
    };
    let mut docs = vec![root];
    docs.extend(descendants.into_iter().filter_map(|b| match b {
        Bson::Document(d) => Some(d),
        _ => None,
    }));
    decode(docs)
}

async fn parent_walk(db: &Database, key: &str) -> Vec<Category> {
    let coll = db.collection::<Document>("categories");
    let mut docs: Vec<Document> = coll
        .find(doc! { "name": key })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut level = vec![key.to_owned()];
    loop {
        let next: Vec<Document> = coll
            .find(doc! { "parent": { "$in": level } })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        if next.is_empty() {
            break;
        }
        level = next
            .iter()
            .map(|d| d.get_str("name").unwrap().to_owned())
            .collect();
        docs.extend(next);
    }
    decode(docs)
}

type Read = for<'a> fn(&'a Database, &'static str) -> BoxFuture<'a, Vec<Category>>;

const READS: [(&str, Read); 5] = [
    ("toolkit", |db, k| Box::pin(toolkit(db, k))),
    ("by_hand_two_finds", |db, k| {
        Box::pin(by_hand_two_finds(db, k))
    }),
    ("by_hand_or", |db, k| Box::pin(by_hand_or(db, k))),
    ("graph_lookup", |db, k| Box::pin(graph_lookup(db, k))),
    ("parent_walk", |db, k| Box::pin(parent_walk(db, k))),
];

fn names(nodes: &[Category]) -> BTreeSet<String> {
    nodes.iter().map(|c| c.name.clone()).collect()
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let test_db = rt.block_on(async {
        let db = pattern_testkit::test_db("bench_tree").await;
        pattern_runtime::sync(&db)
            .models(&[Category::SCHEMA])
            .options(&pattern_runtime::SyncOptions::new())
            .await
            .unwrap();
        setup(&db).await;
        db
    });
    let db = test_db.db();
    for (group, key, size) in [
        ("tree_subtree_100", "a0", 100),
        ("tree_subtree_899", "b0", 899),
    ] {
        // Every side returns the same nodes.
        let expected = names(&rt.block_on(toolkit(db, key)));
        assert_eq!(expected.len(), size);
        for (name, read) in READS {
            assert_eq!(names(&rt.block_on(read(db, key))), expected, "{name}");
        }
        let mut g = c.benchmark_group(group);
        g.sample_size(30);
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(4));
        for (name, read) in READS {
            g.bench_function(name, |b| b.to_async(&rt).iter(|| read(db, key)));
        }
        g.finish();
    }
}

criterion_group!(tree, benches);

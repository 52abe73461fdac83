//! Patterns composed: the writes of one pattern keep the data other patterns derive from the
//! fields it changes (the map of derived data, `pattern_runtime::derived`).
//!
//! - a tree whose nodes are extended-reference sources, the key among the copied fields: a
//!   rename rewrites the copies;
//! - a tree whose nodes count the holders placed in them (`#[computed(count = .., by = ..)]`):
//!   inserts, placements and deletions (leaf, reparent, cascade) keep every count;
//! - a model that is both a computed source and an extended-reference source: the writes of
//!   either pattern keep the other's data;
//! - a failure in the middle of a combined write leaves nothing partial;
//! - 8 writers mixing tree and holder operations leave every count exact.

use crate::support::{count_named, dump, refused_key, refused_value, sent};
use bson::oid::ObjectId;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use pattern_runtime::derived::dependents_of;
use pattern_runtime::At;
use pattern_runtime::{doctor, sync, tree::Deletion, DoctorOptions, Model, SyncOptions};
use pattern_testkit::{test_db, TestDb};
use serde::{Deserialize, Serialize};

// ----- a tree of genres, copied into books by key -----

/// Genres named by a slug, copied (slug and title) into the books that cite them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_genres")]
#[tree(parent = parent, ancestors = ancestors, key = slug)]
#[extended_ref(GenreRef(slug, title), derive(PartialEq))]
struct Genre {
    #[serde(rename = "_id")]
    id: ObjectId,
    slug: String,
    title: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

/// A book placed in a genre (node and path), holding a copy of its main genre.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_genres")]
#[serde(rename_all = "camelCase")]
#[in_tree(Genre, node = genre_slug, path = genre_path)]
struct Book {
    #[serde(rename = "_id")]
    id: i64,
    genre_slug: String,
    genre_path: Vec<String>,
    #[extended_ref(propagate)]
    genre: GenreRef,
}

fn genre(slug: &str, parent: Option<&str>) -> Genre {
    Genre {
        id: ObjectId::new(),
        slug: slug.into(),
        title: slug.to_uppercase(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

/// A fresh database with the models of `group` synced.
async fn synced(name: &str, group: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group(group)
        .options(&SyncOptions::default())
        .await
        .unwrap();
    db
}

/// Every stored document of `M`, by `_id`.
async fn stored<M: Model>(db: &TestDb) -> Vec<M> {
    M::collection(db)
        .raw()
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

async fn assert_clean(db: &TestDb, group: &str) {
    let report = doctor(db)
        .group(group)
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let findings: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    assert!(findings.is_empty(), "the doctor found: {findings:#?}");
}

#[tokio::test]
async fn a_tree_rename_rewrites_the_extended_reference_copies_of_the_key() {
    let db = synced("compose_rename_copies", "compose_genres").await;
    assert!(
        dependents_of(Genre::SCHEMA)
            .iter()
            .any(|d| d.pattern() == "extended_ref" && d.reads().contains(&"slug")),
        "the map lists the copies of the genre's slug"
    );
    let tree = Genre::collection(&db).tree();
    let fiction = genre("fiction", None);
    let scifi = genre("scifi", Some("fiction"));
    let space = genre("space-opera", Some("scifi"));
    for g in [&fiction, &scifi, &space] {
        tree.insert(g).await.unwrap();
    }
    let scifi = tree.get("scifi").await.unwrap().unwrap();
    let books = tree.holders::<Book>();
    for (id, node) in [(1, &scifi), (2, &scifi), (3, &fiction)] {
        books
            .insert(&Book {
                id,
                genre_slug: node.slug.clone(),
                genre_path: vec![],
                genre: GenreRef::from(node),
            })
            .await
            .unwrap();
    }

    tree.rename("scifi", "science-fiction").await.unwrap();

    let stored: Vec<Book> = stored(&db).await;
    for book in &stored[..2] {
        assert_eq!(book.genre_slug, "science-fiction");
        assert_eq!(book.genre_path, ["fiction", "science-fiction"]);
        assert_eq!(
            book.genre.slug, "science-fiction",
            "the copy follows the rename"
        );
        assert_eq!(book.genre.title, "SCIFI");
    }
    assert_eq!(
        stored[2].genre.slug, "fiction",
        "another genre's copy is left alone"
    );
    assert!(tree.check().await.unwrap().is_clean());
    assert_clean(&db, "compose_genres").await;
}

/// `fiction`, `scifi` under it, and book 1 in `scifi` holding a copy of it.
async fn fiction_with_a_scifi_book(db: &TestDb) -> pattern_runtime::Tree<Genre> {
    let tree = Genre::collection(db).tree();
    tree.insert(&genre("fiction", None)).await.unwrap();
    tree.insert(&genre("scifi", Some("fiction"))).await.unwrap();
    let scifi = tree.get("scifi").await.unwrap().unwrap();
    tree.holders::<Book>()
        .insert(&Book {
            id: 1,
            genre_slug: "scifi".into(),
            genre_path: vec![],
            genre: GenreRef::from(&scifi),
        })
        .await
        .unwrap();
    tree
}

#[tokio::test]
async fn a_rename_that_fails_half_way_leaves_nothing_partial() {
    let db = synced("compose_rename_fail", "compose_genres").await;
    let tree = fiction_with_a_scifi_book(&db).await;
    let before = snapshot(&db, &["genres", "books"]).await;
    // The rename's updates: parent, ancestors, the holders' node and path, the node's key, then
    // the copies of the key. Fail the last one, after the node is renamed.
    db.fail_command_after(&["update"], 5, doc! { "errorCode": 2 })
        .await;
    let err = tree.rename("scifi", "science-fiction").await.unwrap_err();
    db.fail_command_off().await;
    assert!(
        matches!(err, pattern_runtime::Error::Driver { code: Some(2), .. }),
        "{err:?}"
    );
    assert_eq!(snapshot(&db, &["genres", "books"]).await, before);
    // Run again: it all goes through.
    tree.rename("scifi", "science-fiction").await.unwrap();
    assert_clean(&db, "compose_genres").await;
}

async fn snapshot(db: &TestDb, collections: &[&str]) -> Vec<Vec<Document>> {
    let mut all = Vec::new();
    for c in collections {
        let docs: Vec<Document> = db
            .collection::<Document>(c)
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        all.push(docs);
    }
    all
}

// ----- a tree of aisles that count their items -----

/// Aisles named by `_id`, each counting the items placed directly in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_aisles")]
#[serde(rename_all = "camelCase")]
#[tree(parent = parent, ancestors = ancestors)]
struct Aisle {
    #[serde(rename = "_id")]
    id: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    #[computed(count = Item, by = aisle)]
    item_count: i64,
    #[computed(sum = Item.stock, by = aisle)]
    stock: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_aisles")]
#[serde(rename_all = "camelCase")]
#[in_tree(Aisle, node = aisle, path = aisle_path)]
struct Item {
    #[serde(rename = "_id")]
    id: i64,
    aisle: Option<String>,
    aisle_path: Vec<String>,
    stock: i64,
}

fn aisle(id: &str, parent: Option<&str>) -> Aisle {
    Aisle {
        id: id.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
        item_count: 0,
        stock: 0,
    }
}

fn item(id: i64, aisle: &str) -> Item {
    Item {
        id,
        aisle: Some(aisle.into()),
        aisle_path: vec![],
        stock: 10 + id,
    }
}

/// Every aisle's count and stock against its items, computed here.
async fn assert_counts(db: &TestDb) {
    let items: Vec<Item> = stored(db).await;
    let aisles: Vec<Aisle> = stored(db).await;
    for a in &aisles {
        let mine: Vec<&Item> = items
            .iter()
            .filter(|i| i.aisle.as_deref() == Some(&a.id))
            .collect();
        assert_eq!(a.item_count, mine.len() as i64, "aisle {}", a.id);
        assert_eq!(
            a.stock,
            mine.iter().map(|i| i.stock).sum::<i64>(),
            "aisle {}",
            a.id
        );
    }
    assert!(Aisle::collection(db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

async fn aisles(name: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group("compose_aisles")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    let tree = Aisle::collection(&db).tree();
    for a in [
        aisle("food", None),
        aisle("dairy", Some("food")),
        aisle("milk", Some("dairy")),
        aisle("cheese", Some("dairy")),
    ] {
        tree.insert(&a).await.unwrap();
    }
    db
}

#[tokio::test]
async fn holders_inserted_and_placed_are_counted() {
    let db = aisles("compose_holders_counted").await;
    let items = Aisle::collection(&db).tree().holders::<Item>();
    items.insert(&item(1, "dairy")).await.unwrap();
    items
        .insert_many(&[
            item(2, "dairy"),
            item(3, "milk"),
            item(4, "milk"),
            item(5, "cheese"),
        ])
        .await
        .unwrap();
    assert_counts(&db).await;
    items.place(3, "cheese").await.unwrap();
    assert_counts(&db).await;
    let cheese = Aisle::collection(&db)
        .tree()
        .get("cheese")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((cheese.item_count, cheese.stock), (2, 13 + 15));
    assert_clean(&db, "compose_aisles").await;
}

#[tokio::test]
async fn deleting_a_node_moves_or_removes_its_counts() {
    let db = aisles("compose_delete_counts").await;
    let tree = Aisle::collection(&db).tree();
    let items = tree.holders::<Item>();
    let mut all = vec![item(1, "dairy"), item(2, "dairy")];
    all.extend((3..8).map(|i| item(i, "milk")));
    all.push(item(8, "cheese"));
    items.insert_many(&all).await.unwrap();

    // The issue's case: 5 items move up to dairy, which held 2.
    tree.delete("milk", Deletion::Reparent).await.unwrap();
    let dairy = tree.get("dairy").await.unwrap().unwrap();
    assert_eq!(dairy.item_count, 7);
    assert_counts(&db).await;

    tree.delete("dairy", Deletion::Cascade).await.unwrap();
    assert_eq!(
        Item::collection(&db)
            .raw()
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );
    assert_counts(&db).await;
    assert_clean(&db, "compose_aisles").await;
}

#[tokio::test]
async fn writes_no_dependent_reads_send_no_extra_command() {
    let db = aisles("compose_no_extra").await;
    Aisle::collection(&db)
        .tree()
        .holders::<Item>()
        .insert(&item(1, "milk"))
        .await
        .unwrap();
    // The nodes have no dependents; the items' counts read `aisle` and `stock`, which a move
    // does not change (it rewrites `aislePath`): no read beyond the move's own.
    assert!(dependents_of(Aisle::SCHEMA).is_empty());
    db.take_commands();
    Aisle::collection(&db)
        .tree()
        .move_under("milk", "food")
        .await
        .unwrap();
    let sent = db.take_commands();
    let reads_of_items: Vec<_> = sent
        .iter()
        .filter(|c| c.target == "items" && c.name != "update")
        .collect();
    assert!(reads_of_items.is_empty(), "{sent:?}");
    assert_counts(&db).await;
}

#[tokio::test]
async fn eight_writers_mixing_tree_and_holder_operations_keep_every_count() {
    let db = aisles("compose_concurrent").await;
    let tree = Aisle::collection(&db).tree();
    for a in ["a", "b", "c", "d"] {
        tree.insert(&aisle(a, Some("food"))).await.unwrap();
    }
    let mut tasks = Vec::new();
    for w in 0..8i64 {
        let db = db.db().clone();
        tasks.push(tokio::spawn(async move {
            let tree = Aisle::collection(&db).tree();
            let items = tree.holders::<Item>();
            let nodes = ["a", "b", "c", "d", "dairy", "milk"];
            for i in 0..12i64 {
                let id = w * 100 + i;
                let node = nodes[((w + i) % 6) as usize];
                items.insert(&item(id, node)).await.unwrap();
                if i % 3 == 0 {
                    let to = nodes[((w * 7 + i) % 6) as usize];
                    items.place(id, to).await.unwrap();
                }
                if i % 4 == 0 {
                    Item::collection(&db)
                        .update(id, doc! { "$inc": { "stock": 5 } })
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    tree.delete("milk", Deletion::Reparent).await.unwrap();
    assert_counts(&db).await;
    assert_clean(&db, "compose_aisles").await;
}

// ----- one model, two patterns deriving from it -----

/// A shelf counting the records on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_records")]
#[serde(rename_all = "camelCase")]
struct Shelf {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(count = Record, by = shelf)]
    record_count: i64,
}

/// A record: counted by its shelf (computed source) and copied into reviews (extended reference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_records")]
#[extended_ref(RecordRef(title, shelf), derive(PartialEq))]
struct Record {
    #[serde(rename = "_id")]
    id: i64,
    title: String,
    shelf: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_records")]
struct Review {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    record: RecordRef,
}

async fn records(name: &str) -> TestDb {
    let db = test_db(name).await;
    sync(&db)
        .group("compose_records")
        .options(&SyncOptions::default())
        .await
        .unwrap();
    Shelf::collection(&db)
        .raw()
        .insert_many([
            Shelf {
                id: 1,
                record_count: 0,
            },
            Shelf {
                id: 2,
                record_count: 0,
            },
        ])
        .await
        .unwrap();
    let record = Record {
        id: 10,
        title: "Blue Train".into(),
        shelf: 1,
    };
    Record::collection(&db).insert(&record).await.unwrap();
    Review::collection(&db)
        .raw()
        .insert_one(Review {
            id: 100,
            record: RecordRef::from(&record),
        })
        .await
        .unwrap();
    db
}

async fn review_copy(db: &TestDb) -> Document {
    let raw = db.collection::<Document>("reviews");
    let review = raw.find_one(doc! { "_id": 100 }).await.unwrap().unwrap();
    review.get_document("record").unwrap().clone()
}

async fn shelf_counts(db: &TestDb) -> Vec<i64> {
    let shelves: Vec<Shelf> = stored(db).await;
    shelves.iter().map(|s| s.record_count).collect()
}

#[tokio::test]
async fn a_computed_write_carries_the_copies_and_a_copy_write_carries_the_counts() {
    let db = records("compose_two_ways").await;
    // Through the computed pattern: moves the count and rewrites the copy.
    Record::collection(&db)
        .update(10, doc! { "$set": { "shelf": 2, "title": "Giant Steps" } })
        .await
        .unwrap();
    assert_eq!(shelf_counts(&db).await, [0, 1]);
    let copy = review_copy(&db).await;
    assert_eq!(copy.get_str("title").unwrap(), "Giant Steps");
    assert_eq!(copy.get("shelf"), Some(&bson::Bson::Int32(2)));

    // Through the extended reference: rewrites the copy and moves the count back.
    Record::collection(&db)
        .update(10, doc! { "$set": { "shelf": 1 } })
        .await
        .unwrap();
    assert_eq!(shelf_counts(&db).await, [1, 0]);
    assert_eq!(
        review_copy(&db).await.get("shelf"),
        Some(&bson::Bson::Int32(1))
    );

    // A replace through either handle does the same.
    Record::collection(&db)
        .replace(&Record {
            id: 10,
            title: "Kind of Blue".into(),
            shelf: 2,
        })
        .await
        .unwrap();
    assert_eq!(shelf_counts(&db).await, [0, 1]);
    assert_eq!(
        review_copy(&db).await.get_str("title").unwrap(),
        "Kind of Blue"
    );

    // A target that does not exist refuses the whole write, copies included.
    let before = snapshot(&db, &["shelves", "records", "reviews"]).await;
    let err = Record::collection(&db)
        .update(10, doc! { "$set": { "shelf": 99, "title": "Lost" } })
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(
        snapshot(&db, &["shelves", "records", "reviews"]).await,
        before
    );
    assert_clean(&db, "compose_records").await;
}

// ----- a polymorphic model as a computed source -----

/// Events of several shapes, each counted and its points summed for its account (common fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_events", collection = "events")]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
enum Event {
    Click {
        #[serde(rename = "_id")]
        id: i64,
        account: i64,
        points: i64,
    },
    View {
        #[serde(rename = "_id")]
        id: i64,
        account: i64,
        points: i64,
        seconds: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_events")]
struct Account {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(count = Event, by = account)]
    events: i64,
    #[computed(sum = Event.points, by = account)]
    points: i64,
}

#[tokio::test]
async fn a_polymorphic_model_feeds_computed_fields_through_its_common_fields() {
    let db = synced("compose_polymorphic_source", "compose_events").await;
    Account::collection(&db)
        .raw()
        .insert_many([1, 2].map(|id| Account {
            id,
            events: 0,
            points: 0,
        }))
        .await
        .unwrap();
    let events = Event::collection(&db);
    events
        .insert(&Event::Click {
            id: 1,
            account: 1,
            points: 3,
        })
        .await
        .unwrap();
    events
        .insert(&Event::View {
            id: 2,
            account: 1,
            points: 5,
            seconds: 40,
        })
        .await
        .unwrap();
    events
        .update(2, doc! { "$set": { Event::FIELDS.account: 2 } })
        .await
        .unwrap();
    events.delete(1).await.unwrap();
    let accounts: Vec<Account> = stored(&db).await;
    let figures: Vec<(i64, i64)> = accounts.iter().map(|a| (a.events, a.points)).collect();
    assert_eq!(figures, [(0, 0), (1, 5)]);
    assert!(Account::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    assert_clean(&db, "compose_events").await;
}

// ----- a versioned model that other models copy and count -----

/// A versioned article: its revisions archived, its title copied into comments, counted and its
/// words summed by its author.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_articles")]
#[versioned(history = "article_revisions")]
#[extended_ref(ArticleRef(title), derive(PartialEq))]
struct Article {
    #[serde(rename = "_id")]
    id: i64,
    #[version]
    version: i64,
    title: String,
    author: i64,
    words: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_articles")]
struct Writer {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(count = Article, by = author)]
    articles: i64,
    #[computed(sum = Article.words, by = author)]
    words: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_articles")]
struct Comment {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    article: ArticleRef,
}

async fn writer_figures(db: &TestDb) -> Vec<(i64, i64)> {
    let writers: Vec<Writer> = stored(db).await;
    writers.iter().map(|w| (w.articles, w.words)).collect()
}

#[tokio::test]
async fn a_versioned_model_keeps_the_copies_and_counts_of_other_models() {
    let db = synced("compose_versioned", "compose_articles").await;
    Writer::collection(&db)
        .raw()
        .insert_many([1, 2].map(|id| Writer {
            id,
            articles: 0,
            words: 0,
        }))
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let mut article = Article {
        id: 7,
        version: 0,
        title: "Draft".into(),
        author: 1,
        words: 100,
    };
    articles.insert(&mut article).await.unwrap();
    assert_eq!(writer_figures(&db).await, [(1, 100), (0, 0)]);
    Comment::collection(&db)
        .raw()
        .insert_one(Comment {
            id: 1,
            article: ArticleRef::from(&article),
        })
        .await
        .unwrap();

    // `save`: a new title and another author.
    article.title = "Final".into();
    article.author = 2;
    article.words = 120;
    articles.replace(&mut article).await.unwrap();
    assert_eq!(writer_figures(&db).await, [(0, 0), (1, 120)]);
    let comment = Comment::collection(&db)
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(comment.article.title, "Final");

    // `update`: the title again, through an operator update.
    articles
        .update(
            At(7, 2),
            doc! { "$set": { "title": "Final, v3" }, "$inc": { "words": 5 } },
        )
        .await
        .unwrap();
    let comment = Comment::collection(&db)
        .raw()
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(comment.article.title, "Final, v3");
    assert_eq!(writer_figures(&db).await, [(0, 0), (1, 125)]);
    assert_eq!(articles.history(7).await.unwrap().len(), 2);

    // A stale version writes nothing, counts included.
    let before = snapshot(&db, &["writers", "articles", "comments"]).await;
    let err = articles
        .update(At(7, 1), doc! { "$set": { "author": 1 } })
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    assert_eq!(
        snapshot(&db, &["writers", "articles", "comments"]).await,
        before
    );

    articles.delete(7).await.unwrap();
    assert_eq!(writer_figures(&db).await, [(0, 0), (0, 0)]);
    assert!(Writer::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    assert_clean(&db, "compose_articles").await;
}

// ----- a pattern's index that another index serves -----

/// A buyer whose orders are counted by `buyer` (computed's index `buyer_1` on orders)...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_indexes")]
struct Buyer {
    #[serde(rename = "_id")]
    id: i64,
    #[computed(count = Purchase, by = buyer)]
    purchases: i64,
}

/// ... while the orders declare `{buyer: 1, at: -1}`, which serves the same queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_indexes")]
#[index(keys(buyer = 1, at = -1))]
struct Purchase {
    #[serde(rename = "_id")]
    id: i64,
    buyer: i64,
    at: i64,
}

#[tokio::test]
async fn a_patterns_index_a_declared_one_serves_is_not_created() {
    let db = synced("compose_redundant_index", "compose_indexes").await;
    let names: Vec<String> = pattern_runtime::sync::list_indexes(&db, "purchases")
        .await
        .unwrap()
        .iter()
        .filter_map(|i| i.get_str("name").ok().map(str::to_owned))
        .collect();
    assert!(names.contains(&"buyer_1_at_-1".to_owned()), "{names:?}");
    assert!(!names.contains(&"buyer_1".to_owned()), "{names:?}");
    Buyer::collection(&db)
        .raw()
        .insert_one(Buyer {
            id: 1,
            purchases: 0,
        })
        .await
        .unwrap();
    Purchase::collection(&db)
        .insert(&Purchase {
            id: 1,
            buyer: 1,
            at: 5,
        })
        .await
        .unwrap();
    assert!(Buyer::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
    // No prefix finding, no missing index: the declared one stands for it.
    assert_clean(&db, "compose_indexes").await;
}

// ----- several patterns in one caller transaction -----

/// A hotel room's nights (preallocated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[model(group = "compose_booking")]
#[serde(rename_all = "camelCase")]
#[preallocated(resource = room, slot = night, holder = guest)]
struct Night {
    #[serde(rename = "_id")]
    id: ObjectId,
    room: String,
    night: i64,
    guest: Option<String>,
}

/// A guest: the latest stays embedded (subset of `Stay`), the stays counted by `Computing`.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_booking")]
#[serde(rename_all = "camelCase")]
struct Guest {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 3, sort(night = -1), full = Stay, parent = guest)]
    latest: Vec<StayLine>,
    #[computed(count = Invoice, by = guest)]
    invoices: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_booking")]
#[serde(rename_all = "camelCase")]
struct Stay {
    #[serde(rename = "_id")]
    id: String,
    guest: String,
    room: String,
    night: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, pattern_runtime::Fields)]
#[serde(rename_all = "camelCase")]
struct StayLine {
    room: String,
    night: i64,
}

impl From<&Stay> for StayLine {
    fn from(s: &Stay) -> Self {
        StayLine {
            room: s.room.clone(),
            night: s.night,
        }
    }
}

/// A room counting the stays in it: the subset's full items, counted by another model.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_booking")]
struct Room {
    #[serde(rename = "_id")]
    id: String,
    #[computed(count = Stay, by = room)]
    stays: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_booking")]
struct Invoice {
    #[serde(rename = "_id")]
    id: String,
    guest: String,
    amount: i64,
}

async fn booking(name: &str) -> TestDb {
    let db = synced(name, "compose_booking").await;
    Night::collection(&db)
        .slots()
        .allocate((1..=3).map(|night| Night {
            id: ObjectId::new(),
            room: "101".into(),
            night,
            guest: None,
        }))
        .await
        .unwrap();
    Guest::collection(&db)
        .raw()
        .insert_one(Guest {
            id: "eve".into(),
            latest: vec![],
            invoices: 0,
        })
        .await
        .unwrap();
    Room::collection(&db)
        .raw()
        .insert_one(Room {
            id: "101".into(),
            stays: 0,
        })
        .await
        .unwrap();
    db
}

/// Books night `n` for eve, records the stay in her subset and the invoice with its count: one
/// transaction for all three patterns.
async fn book_stay(
    db: &TestDb,
    tx: &pattern_runtime::Transaction,
    n: i64,
) -> pattern_runtime::Result<()> {
    Night::collection(db)
        .slots()
        .in_transaction(tx)
        .book("101", n, "eve")
        .await?;
    let stay = Stay {
        id: format!("stay-{n}"),
        guest: "eve".into(),
        room: "101".into(),
        night: n,
    };
    Guest::collection(db)
        .subset(Guest::FIELDS.latest)
        .in_transaction(tx)
        .push("eve", stay)
        .await?;
    Invoice::collection(db)
        .in_transaction(tx)
        .insert(&Invoice {
            id: format!("inv-{n}"),
            guest: "eve".into(),
            amount: 120,
        })
        .await
        .map(drop)
}

#[tokio::test]
async fn several_patterns_in_one_caller_transaction_commit_or_abort_together() {
    let db = booking("compose_caller_tx").await;
    let all = ["nights", "guests", "stays", "invoices", "rooms"];

    // Aborted: nothing of the three patterns' writes is kept.
    let before = snapshot(&db, &all).await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    book_stay(&db, &tx, 1).await.unwrap();
    // Inside, the transaction sees its own writes.
    let night = Night::collection(&db)
        .slots()
        .in_transaction(&tx)
        .get("101", 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(night.guest.as_deref(), Some("eve"));
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db, &all).await, before);

    // Committed: every write and every dependent is there.
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    book_stay(&db, &tx, 1).await.unwrap();
    book_stay(&db, &tx, 2).await.unwrap();
    // Not visible outside before the commit.
    assert_eq!(snapshot(&db, &all).await, before);
    tx.commit().await.unwrap();
    let guest = Guest::collection(&db)
        .raw()
        .find_one(doc! { "_id": "eve" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(guest.invoices, 2);
    assert_eq!(
        guest.latest.iter().map(|l| l.night).collect::<Vec<_>>(),
        [2, 1]
    );
    let booked = Night::collection(&db)
        .slots()
        .get("101", 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(booked.guest.as_deref(), Some("eve"));
    // The subset's full items are counted by the room.
    let room = Room::collection(&db)
        .raw()
        .find_one(doc! { "_id": "101" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(room.stays, 2);

    // A refusal inside (the night is taken): the caller aborts, nothing of that attempt stays.
    let before = snapshot(&db, &all).await;
    let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
    Invoice::collection(&db)
        .in_transaction(&tx)
        .insert(&Invoice {
            id: "inv-x".into(),
            guest: "eve".into(),
            amount: 1,
        })
        .await
        .unwrap();
    let err = book_stay(&db, &tx, 2).await.unwrap_err();
    assert!(
        matches!(err, pattern_runtime::Error::AlreadyBooked { .. }),
        "{err:?}"
    );
    tx.abort().await.unwrap();
    assert_eq!(snapshot(&db, &all).await, before);

    // A stay removed from the subset leaves the room's count.
    Guest::collection(&db)
        .subset(Guest::FIELDS.latest)
        .remove("eve", "stay-1")
        .await
        .unwrap();
    let room = Room::collection(&db)
        .raw()
        .find_one(doc! { "_id": "101" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(room.stays, 1);
    assert_clean(&db, "compose_booking").await;
}

#[tokio::test]
async fn the_doctor_reports_tree_drift_and_repair_fixes_it() {
    let db = synced("compose_tree_drift", "compose_genres").await;
    let tree = fiction_with_a_scifi_book(&db).await;
    assert_clean(&db, "compose_genres").await;
    // Written around the toolkit: a node's ancestors and a holder's path.
    db.collection::<Document>("genres")
        .update_one(
            doc! { "slug": "scifi" },
            doc! { "$set": { "ancestors": ["nowhere"] } },
        )
        .await
        .unwrap();
    db.collection::<Document>("books")
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "genrePath": ["x"] } })
        .await
        .unwrap();
    let report = doctor(&db)
        .group("compose_genres")
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let drift: Vec<(&str, &str)> = report
        .with_check(pattern_runtime::doctor::Check::TreeDrift)
        .map(|f| (f.collection.as_str(), f.subject.as_str()))
        .collect();
    assert_eq!(
        drift,
        [("books", "genrePath"), ("genres", "ancestors")],
        "{report}"
    );
    assert_eq!(report.findings.len(), 2, "{report}");
    let fix = &report.findings[0].fix;
    assert!(
        fix.contains("Genre::collection(&db).tree().repair()"),
        "{fix}"
    );
    // The repair it names works.
    tree.repair().await.unwrap();
    assert_clean(&db, "compose_genres").await;
}

/// A feed whose posts overflow past 2 (2 per overflow document).
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_feeds")]
#[serde(rename_all = "camelCase")]
struct Feed {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 2, overflow = "feed_posts", capacity = 2, flag = is_outlier, count = post_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    post_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Post {
    text: String,
}

#[tokio::test]
async fn the_doctor_reports_outlier_drift_and_rebuild_fixes_it() {
    let db = synced("compose_outlier_drift", "compose_feeds").await;
    Feed::collection(&db)
        .raw()
        .insert_one(Feed {
            id: 1,
            posts: vec![],
            is_outlier: false,
            post_count: 0,
        })
        .await
        .unwrap();
    let posts = Feed::collection(&db).outlier(Feed::FIELDS.posts);
    for n in 0..5 {
        posts
            .push(
                1,
                Post {
                    text: format!("post {n}"),
                },
            )
            .await
            .unwrap();
    }
    assert_clean(&db, "compose_feeds").await;
    db.collection::<Document>("feeds")
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "postCount": 3 } })
        .await
        .unwrap();
    let report = doctor(&db)
        .group("compose_feeds")
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    assert_eq!(report.findings.len(), 1, "{report}");
    let f = &report.findings[0];
    assert_eq!(f.check, pattern_runtime::doctor::Check::OutlierDrift);
    assert!(f.figure.contains("counts 3"), "{}", f.figure);
    posts.rebuild(1).await.unwrap();
    assert_clean(&db, "compose_feeds").await;
}

/// An outlier of scalars: tags, strings as given.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(group = "compose_feeds")]
#[serde(rename_all = "camelCase")]
struct Tagged {
    #[serde(rename = "_id")]
    id: i64,
    #[outlier(limit = 2, overflow = "tag_overflow", capacity = 2, flag = overflowing, count = tag_count)]
    tags: Vec<String>,
    overflowing: bool,
    tag_count: i64,
}

#[tokio::test]
async fn an_outlier_of_scalars_stores_them_as_given() {
    let db = synced("compose_outlier_scalars", "compose_feeds").await;
    Tagged::collection(&db)
        .raw()
        .insert_one(Tagged {
            id: 1,
            tags: vec![],
            overflowing: false,
            tag_count: 0,
        })
        .await
        .unwrap();
    let tags = Tagged::collection(&db).outlier(Tagged::FIELDS.tags);
    for t in ["rust", "$set", "a.b", "", "mongo"] {
        tags.push(1, t.to_owned()).await.unwrap();
    }
    assert_eq!(tags.remove(1, &"$set".to_owned()).await.unwrap(), 1);
    let state = tags.state(1).await.unwrap();
    assert!(state.is_consistent(), "{state:?}");
    assert_eq!(state.stored_count, 4);
    let main = db
        .collection::<Document>("taggeds")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap()
        .unwrap();
    let overflow = db
        .collection::<Document>("tag_overflow")
        .find(doc! {})
        .await
        .unwrap()
        .try_collect::<Vec<Document>>()
        .await
        .unwrap();
    let mut all: Vec<String> = main
        .get_array("tags")
        .unwrap()
        .iter()
        .chain(
            overflow
                .iter()
                .flat_map(|d| d.get_array("tags").unwrap().iter()),
        )
        .map(|b| b.as_str().unwrap().to_owned())
        .collect();
    all.sort();
    assert_eq!(all, ["", "a.b", "mongo", "rust"]);
    assert_clean(&db, "compose_feeds").await;
}

// ----- two-way relation drift -----

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "compose_two_way")]
struct Owner {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = owner)]
    #[bounded(100)]
    chores: Vec<pattern_runtime::Ref<Chore>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "compose_two_way")]
struct Chore {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = chores)]
    owner: pattern_runtime::Ref<Owner>,
}

#[tokio::test]
async fn the_doctor_reports_two_way_drift_and_repair_fixes_it() {
    let db = synced("compose_two_way_drift", "compose_two_way").await;
    let raw = |c: &str| db.collection::<Document>(c);
    raw("owners")
        .insert_many([
            doc! { "_id": 1, "chores": [10, 11] },
            doc! { "_id": 2, "chores": [] },
        ])
        .await
        .unwrap();
    raw("chores")
        .insert_many([
            doc! { "_id": 10, "owner": 1 },
            doc! { "_id": 11, "owner": 1 },
        ])
        .await
        .unwrap();
    assert_clean(&db, "compose_two_way").await;
    // Written around the toolkit: chore 11 moves to owner 2, whose array is left as it was.
    raw("chores")
        .update_one(doc! { "_id": 11 }, doc! { "$set": { "owner": 2 } })
        .await
        .unwrap();
    let report = doctor(&db)
        .group("compose_two_way")
        .options(&DoctorOptions::new().sample_size(1000))
        .await
        .unwrap();
    let drift: Vec<(&str, &str)> = report
        .with_check(pattern_runtime::doctor::Check::TwoWayDrift)
        .map(|f| (f.collection.as_str(), f.subject.as_str()))
        .collect();
    // Both sides see it: the chore is not listed by its owner, the old owner lists it.
    assert_eq!(
        drift,
        [("chores", "owner"), ("owners", "chores")],
        "{report}"
    );
    assert_eq!(report.findings.len(), 2, "{report}");
    assert!(
        report.findings[0]
            .fix
            .contains("Chore::collection(&db).relation(Chore::FIELDS.owner).repair()"),
        "{}",
        report.findings[0].fix
    );
    Chore::collection(&db)
        .relation(Chore::FIELDS.owner)
        .repair()
        .await
        .unwrap();
    assert_clean(&db, "compose_two_way").await;
}

#[tokio::test]
async fn tree_and_holder_writes_in_one_caller_transaction() {
    let db = aisles("compose_tree_caller_tx").await;
    let all = ["aisles", "items"];
    Aisle::collection(&db)
        .tree()
        .holders::<Item>()
        .insert(&item(1, "milk"))
        .await
        .unwrap();
    let before = snapshot(&db, &all).await;
    for commit in [false, true] {
        let tx = pattern_runtime::Transaction::start(&db).await.unwrap();
        let tree = Aisle::collection(&db).tree().in_transaction(&tx);
        let items = tree.holders::<Item>();
        // A node inserted in the transaction takes holders in the same transaction.
        tree.insert(&aisle("yogurt", Some("dairy"))).await.unwrap();
        items.insert(&item(2, "yogurt")).await.unwrap();
        items
            .insert_many(&[item(3, "yogurt"), item(4, "cheese")])
            .await
            .unwrap();
        items.place(1, "yogurt").await.unwrap();
        tree.move_under("yogurt", "food").await.unwrap();
        tree.delete("cheese", Deletion::Reparent).await.unwrap();
        // Nothing is visible outside before the commit.
        assert_eq!(snapshot(&db, &all).await, before);
        if commit {
            tx.commit().await.unwrap();
        } else {
            tx.abort().await.unwrap();
            assert_eq!(snapshot(&db, &all).await, before);
        }
    }
    let yogurt = Aisle::collection(&db)
        .tree()
        .get("yogurt")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(yogurt.ancestors, ["food"]);
    assert_eq!(yogurt.item_count, 3);
    let dairy = Aisle::collection(&db)
        .tree()
        .get("dairy")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(dairy.item_count, 1, "item 4 moved up from cheese");
    assert_counts(&db).await;
    assert_clean(&db, "compose_aisles").await;
}

/// Two-way, and the owner counts its chores.
#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "compose_two_way_counted")]
struct Crew {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = crew)]
    #[bounded(100)]
    jobs: Vec<pattern_runtime::Ref<Job>>,
    #[computed(count = Job, by = crew)]
    job_count: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(group = "compose_two_way_counted")]
struct Job {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = jobs)]
    crew: pattern_runtime::Ref<Crew>,
}

#[tokio::test]
async fn a_two_way_assignment_moves_the_owners_counts() {
    let db = synced("compose_two_way_counted", "compose_two_way_counted").await;
    let raw = |c: &str| db.collection::<Document>(c);
    raw("crews")
        .insert_many([
            doc! { "_id": 1, "jobs": [10, 11], "job_count": 2 },
            doc! { "_id": 2, "jobs": [], "job_count": 0 },
        ])
        .await
        .unwrap();
    raw("jobs")
        .insert_many([doc! { "_id": 10, "crew": 1 }, doc! { "_id": 11, "crew": 1 }])
        .await
        .unwrap();
    assert_clean(&db, "compose_two_way_counted").await;
    Job::collection(&db)
        .relation(Job::FIELDS.crew)
        .assign(&11, &2)
        .await
        .unwrap();
    let counts: Vec<i64> = stored::<Crew>(&db)
        .await
        .iter()
        .map(|c| c.job_count)
        .collect();
    assert_eq!(counts, [1, 1]);
    assert_clean(&db, "compose_two_way_counted").await;
}

/// Every model of this binary compiles into keyset impls the orders its indexes serve at run
/// time, patterns' indexes included (see `integration/query.rs`).
#[test]
fn keyset_orders_compiled_are_those_the_indexes_serve() {
    let checked = pattern_testkit::assert_keyset_orders_agree();
    assert!(checked > 100, "only {checked} models registered");
}

// An extended-reference source that is also a computed source, written through
// `Customer::collection(&db).references()`: the copies and the counts move together.

// ---------------------------------------------------------------------------------------------
// 3: an extended-reference source that is also counted per region
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_customers")]
#[extended_ref(CustomerRef(name, city))]
pub struct Customer {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub city: String,
    pub region_id: String,
    pub loyalty: i64,
    pub notes: Option<Document>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_regions")]
pub struct Region {
    #[serde(rename = "_id")]
    pub id: String,
    #[computed(count = Customer, by = region_id)]
    pub customers: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nwi_invoices")]
pub struct CustomerInvoice {
    #[serde(rename = "_id")]
    pub id: i64,
    #[extended_ref(propagate)]
    pub customer: CustomerRef,
    pub amount: i64,
}

async fn region_count(db: &TestDb, id: &str) -> i64 {
    Region::collection(db)
        .raw()
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .unwrap()
        .customers
}

#[tokio::test]
async fn references_writes_move_counts_and_copies() {
    let db = test_db("nwi_references_counts").await;
    for r in [
        pattern_runtime::sync(&db).models(&[Customer::SCHEMA]).await,
        pattern_runtime::sync(&db).models(&[Region::SCHEMA]).await,
        pattern_runtime::sync(&db)
            .models(&[CustomerInvoice::SCHEMA])
            .await,
    ] {
        r.unwrap();
    }
    for r in ["r1", "r2"] {
        Region::collection(&db)
            .insert(&Region {
                id: r.into(),
                customers: 0,
            })
            .await
            .unwrap();
    }
    let ada = Customer {
        id: "c1".into(),
        name: "Ada".into(),
        city: "London".into(),
        region_id: "r1".into(),
        loyalty: 0,
        notes: None,
    };
    sent(&db);
    Customer::collection(&db).insert(&ada).await.unwrap();
    // The page: computed `insert` 3. The new customer has no copies yet, but the copies'
    // `update` is sent all the same (4 commands), in the same transaction.
    let cmds = sent(&db);
    assert_eq!(
        cmds[0],
        ("insert".into(), "nwi_customers".into()),
        "{cmds:?}"
    );
    assert_eq!(count_named(&cmds, "commitTransaction"), 1, "{cmds:?}");
    assert!(
        cmds.iter()
            .any(|(n, t)| n == "update" && t == "nwi_regions"),
        "{cmds:?}"
    );
    assert!(!cmds.iter().any(|(n, _)| n == "find"), "{cmds:?}");
    assert_eq!(region_count(&db, "r1").await, 1);
    for i in 1..=2 {
        CustomerInvoice::collection(&db)
            .insert(&CustomerInvoice {
                id: i,
                customer: CustomerRef::from(&ada),
                amount: 100 * i,
            })
            .await
            .unwrap();
    }
    sent(&db);

    let customers = Customer::collection(&db).references();

    // A copied field: the page's `update` 3 (findAndModify, one updateMany, the commit), even
    // though the model is also a computed source (the region count reads `regionId` only).
    Customer::collection(&db)
        .update("c1", doc! { "$set": { "name": "$where" } })
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(
        cmds,
        [
            ("findAndModify".into(), "nwi_customers".into()),
            ("update".into(), "nwi_invoices".into()),
            ("commitTransaction".into(), "".into()),
        ],
        "References::update of a copied field: 3"
    );
    for inv in dump(&db, "nwi_invoices").await {
        assert_eq!(
            inv.get_document("customer")
                .unwrap()
                .get_str("name")
                .unwrap(),
            "$where",
            "stored literally in every copy"
        );
    }
    sent(&db);

    // A field neither copied nor counted: the page's `update` (of a field not copied) 1.
    Customer::collection(&db)
        .update("c1", doc! { "$inc": { "loyalty": 5 } })
        .await
        .unwrap();
    assert_eq!(
        sent(&db),
        [("update".into(), "nwi_customers".into())],
        "References::update of a field not copied: 1"
    );

    // The counted field: the region counts move, in one transaction.
    Customer::collection(&db)
        .update("c1", doc! { "$set": { "regionId": "r2" } })
        .await
        .unwrap();
    let cmds = sent(&db);
    assert_eq!(count_named(&cmds, "commitTransaction"), 1, "{cmds:?}");
    assert_eq!(region_count(&db, "r1").await, 0);
    assert_eq!(region_count(&db, "r2").await, 1);

    // Hostile updates: refused, nothing written.
    let customers_before = dump(&db, "nwi_customers").await;
    let invoices_before = dump(&db, "nwi_invoices").await;
    let regions_before = dump(&db, "nwi_regions").await;
    for (update, expected) in [
        (doc! { "$set": { "regionId": "nowhere" } }, "not found"),
        (doc! { "$set": { "$where": "1" } }, "key"),
        (doc! { "name": "no operator" }, "key"),
        (doc! { "$set": { "_id": "c9" } }, "key"),
        (doc! { "$set": { "notes": { "a.b": 1 } } }, "value"),
        (doc! { "$set": { "notes": { "$gt": "" } } }, "value"),
    ] {
        let e = Customer::collection(&db)
            .update("c1", update.clone())
            .await
            .unwrap_err();
        match expected {
            "not found" => assert!(e.is_not_found(), "{update}: {e:?}"),
            "key" => assert!(refused_key(&e), "{update}: {e:?}"),
            _ => assert!(refused_value(&e), "{update}: {e:?}"),
        }
    }
    // An id that reads like an operator is a literal id: nobody has it.
    let e = Customer::collection(&db)
        .update(r#"{"$gt": ""}"#, doc! { "$set": { "name": "x" } })
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    let e = Customer::collection(&db)
        .update("$where", doc! { "$set": { "name": "x" } })
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(dump(&db, "nwi_invoices").await, invoices_before);
    assert_eq!(dump(&db, "nwi_regions").await, regions_before);
    assert_eq!(dump(&db, "nwi_customers").await, customers_before);

    assert!(customers.check().await.unwrap().is_clean());
    assert!(Region::collection(&db)
        .computed()
        .check()
        .await
        .unwrap()
        .is_clean());
}

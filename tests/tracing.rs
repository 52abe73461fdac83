//! Tracing against a real server: the operation spans, the retry events under a fail point, and
//! the fallback without transactions.
//!
//! Each test installs a capturing subscriber for its own thread only (`set_default`, never a
//! global default: the other tests of the binary run in parallel). `#[tokio::test]` runs the
//! operation on that thread (a current-thread runtime), so its spans and events are captured.
//! Each test configures fail points through its one `TestDb`, which holds the process's fail
//! point until it is dropped (see `pattern-testkit`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use bson::{doc, DateTime};
use pattern_runtime::{versioning::Versioned, Model};
use pattern_testkit::test_db;
use serde::{Deserialize, Serialize};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

// ----- the capturing subscriber -----

/// Field values as text: `%` and `?` values by their formatting, numbers and strings as written.
#[derive(Debug, Clone, Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Fields {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// One event: its level, target, fields (the message under `message`) and the names of the
/// spans it happened in, outermost first.
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    target: String,
    fields: Fields,
    spans: Vec<&'static str>,
}

/// What the subscriber saw: a span entered (with its fields as recorded by then), or an event.
#[derive(Debug, Clone)]
enum Seen {
    Entered { name: &'static str, fields: Fields },
    Event(Captured),
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

impl Capture {
    fn seen(&self) -> Vec<Seen> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn push(&self, seen: Seen) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(seen);
    }

    /// The fields of every entry into a span named `name`.
    fn entered(&self, name: &str) -> Vec<Fields> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Entered { name: n, fields } if n == name => Some(fields),
                _ => None,
            })
            .collect()
    }

    /// The events whose message contains `text`.
    fn events(&self, text: &str) -> Vec<Captured> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Event(e) if e.fields.get("message").is_some_and(|m| m.contains(text)) => {
                    Some(e)
                }
                _ => None,
            })
            .collect()
    }

    /// Every event message, in order (for assertion messages).
    fn messages(&self) -> Vec<String> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Event(e) => e.fields.get("message").map(str::to_owned),
                Seen::Entered { .. } => None,
            })
            .collect()
    }
}

impl<S> Layer<S> for Capture
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
                values.record(fields);
            }
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let fields = span
                .extensions()
                .get::<Fields>()
                .cloned()
                .unwrap_or_default();
            self.push(Seen::Entered {
                name: span.name(),
                fields,
            });
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let spans = ctx
            .event_scope(event)
            .map(|scope| scope.from_root().map(|s| s.name()).collect())
            .unwrap_or_default();
        self.push(Seen::Event(Captured {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
            spans,
        }));
    }
}

/// A capture, and the guard that makes it this thread's subscriber until dropped.
fn capture() -> (Capture, tracing::subscriber::DefaultGuard) {
    let capture = Capture::default();
    let guard = tracing::subscriber::set_default(Registry::default().with(capture.clone()));
    (capture, guard)
}

// ----- models -----

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "articles")]
#[versioned(history = "article_revisions")]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    rating_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "product_reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
    created_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, pattern_runtime::Fields)]
#[serde(rename_all = "camelCase")]
struct ReviewExcerpt {
    review_id: String,
    stars: i32,
    created_at: DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            stars: r.stars,
            created_at: r.created_at,
        }
    }
}

// ----- tests -----

#[tokio::test]
async fn a_transient_failure_is_retried_and_says_so() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_retry").await;
    pattern_runtime::sync(&db)
        .models(&[Article::SCHEMA])
        .await
        .unwrap();
    let articles = Article::collection(&db);
    let mut a = Article {
        id: 1,
        version: 0,
        title: "v1".into(),
    };
    articles.insert(&mut a).await.unwrap();

    // The transaction's first write fails once with a transient error: it runs again.
    db.fail_command(
        &["findAndModify"],
        1,
        doc! { "errorCode": 112, "errorLabels": ["TransientTransactionError"] },
    )
    .await;
    a.title = "v2".into();
    assert_eq!(
        articles.replace(&mut a).await.unwrap().version,
        Some(2),
        "the save succeeds"
    );
    assert_eq!(a.version(), 2);

    // The retry event: the attempt that failed, the code and label that caused it, the delay,
    // in the span of the save.
    let [retry] = capture
        .events("running it again")
        .try_into()
        .unwrap_or_else(|e| {
            panic!(
                "one retry event expected, not {e:#?}; all: {:#?}",
                capture.messages()
            )
        });
    assert_eq!(retry.level, Level::INFO);
    assert_eq!(retry.target, "pattern_runtime::txn");
    let fields = &retry.fields;
    assert_eq!(fields.get("attempt"), Some("1"), "{fields:?}");
    assert_eq!(fields.get("code"), Some("112"), "{fields:?}");
    assert_eq!(
        fields.get("label"),
        Some("TransientTransactionError"),
        "{fields:?}"
    );
    assert_eq!(fields.get("during"), Some("body"), "{fields:?}");
    let delay: u64 = fields.get("delay_ms").unwrap().parse().unwrap();
    assert!(delay <= 500, "{fields:?}");
    assert_eq!(retry.spans, ["pattern_runtime::versioning.replace"]);

    // The operation span, entered with the model, the collection, the _id and the version held.
    let saves = capture.entered("pattern_runtime::versioning.replace");
    let save = saves.last().expect("the save span was entered");
    assert_eq!(save.get("model"), Some("Article"), "{save:?}");
    assert_eq!(save.get("collection"), Some("articles"), "{save:?}");
    assert_eq!(save.get("id"), Some("1"), "{save:?}");
    assert_eq!(save.get("expected_version"), Some("1"), "{save:?}");

    // Then the second attempt wrote, archived and committed (the insert before committed its
    // own transaction).
    let [commit] = capture
        .events("transaction committed")
        .into_iter()
        .filter(|e| e.spans == ["pattern_runtime::versioning.replace"])
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|e| panic!("one commit expected, not {e:#?}"));
    assert_eq!(commit.level, Level::DEBUG);
    assert_eq!(commit.fields.get("attempts"), Some("2"), "{commit:?}");
    assert_eq!(commit.spans, ["pattern_runtime::versioning.replace"]);
    let archived = capture.events("revision archived");
    assert!(
        archived
            .iter()
            .any(|e| e.fields.get("history") == Some("article_revisions")),
        "{archived:?}"
    );

    // The index sync before it: its span, and what it created.
    let syncs = capture.entered("pattern_runtime::sync.sync_indexes");
    assert_eq!(
        syncs.first().and_then(|f| f.get("database")),
        Some(db.name())
    );
    let [synced] = capture
        .events("indexes synced")
        .try_into()
        .unwrap_or_else(|e| panic!("one sync summary expected, not {e:#?}"));
    assert_eq!(synced.level, Level::INFO, "the sync created an index");
    assert_eq!(synced.fields.get("created"), Some("1"), "{synced:?}");
}

#[tokio::test]
async fn the_fallback_without_transactions_is_reported() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_fallback").await;
    Product::collection(&db)
        .raw()
        .insert_one(Product {
            id: "prod_1".into(),
            recent_reviews: Vec::new(),
            rating_count: 0,
        })
        .await
        .unwrap();
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);

    // mongod without a replica set refuses a transaction's first command with code 20; the
    // embedded server has transactions, so the fail point answers as mongod would.
    db.fail_command(
        &["update"],
        1,
        doc! { "errorCode": 20, "errmsg": "Transaction numbers are only allowed on a replica set member or mongos" },
    )
    .await;
    let review = Review {
        id: "r_1".into(),
        product_id: "prod_1".into(),
        stars: 4,
        created_at: DateTime::from_millis(1_700_000_000_000),
    };
    reviews.push("prod_1", review).await.unwrap();
    let stored = Product::collection(&db)
        .raw()
        .find_one(doc! { "_id": "prod_1" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.rating_count, 1, "the push succeeded");

    // The fallback: WARN the first time in the process, DEBUG after (should another test of this
    // binary ever be first), in the span of the push.
    let [fallback] = capture
        .events("no transactions")
        .try_into()
        .unwrap_or_else(|e| {
            panic!(
                "one fallback event expected, not {e:#?}; all: {:#?}",
                capture.messages()
            )
        });
    assert!(
        matches!(fallback.level, Level::WARN | Level::DEBUG),
        "{fallback:?}"
    );
    assert_eq!(fallback.target, "pattern_runtime::txn");
    assert_eq!(fallback.fields.get("code"), Some("20"), "{fallback:?}");
    assert!(
        fallback
            .fields
            .get("message")
            .unwrap()
            .contains("unprotected"),
        "{fallback:?}"
    );
    assert_eq!(fallback.spans, ["pattern_runtime::subset.push"]);
    assert!(capture.events("running it again").is_empty());

    let pushes = capture.entered("pattern_runtime::subset.push");
    let push = pushes.last().expect("the push span was entered");
    assert_eq!(push.get("model"), Some("Product"), "{push:?}");
    assert_eq!(push.get("collection"), Some("products"), "{push:?}");
    assert_eq!(push.get("items_collection"), Some("product_reviews"));
    assert_eq!(push.get("id"), Some("\"prod_1\""), "{push:?}");
    assert_eq!(push.get("items"), Some("1"), "{push:?}");

    // Without a transaction, in the documented order: the review, then the product.
    let messages = capture.messages();
    let position = |text: &str| {
        messages
            .iter()
            .position(|m| m.contains(text))
            .unwrap_or_else(|| panic!("no `{text}` event: {messages:#?}"))
    };
    assert!(position("no transactions") < position("full items inserted"));
    assert!(position("full items inserted") < position("parent updated"));
    let [inserted] = capture.events("full items inserted").try_into().unwrap();
    assert_eq!(inserted.fields.get("inserted"), Some("1"), "{inserted:?}");
    assert_eq!(inserted.fields.get("in_transaction"), Some("false"));
    let [updated] = capture.events("parent updated").try_into().unwrap();
    assert_eq!(updated.fields.get("modified"), Some("1"), "{updated:?}");
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
struct Owner {
    #[serde(rename = "_id")]
    id: u32,
    #[relation(inverse = owner)]
    chores: Vec<pattern_runtime::Ref<Chore>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
struct Chore {
    #[serde(rename = "_id")]
    id: u32,
    #[relation(inverse = chores)]
    owner: pattern_runtime::Ref<Owner>,
}

#[tokio::test]
async fn relation_loads_and_assignments_run_in_spans_with_their_events() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_relation").await;
    Owner::collection(&db)
        .raw()
        .insert_many([
            Owner {
                id: 1,
                chores: vec![pattern_runtime::Ref::new(10)],
            },
            Owner {
                id: 2,
                chores: vec![],
            },
        ])
        .await
        .unwrap();
    let chore = Chore {
        id: 10,
        owner: pattern_runtime::Ref::new(1),
    };
    Chore::collection(&db)
        .raw()
        .insert_one(&chore)
        .await
        .unwrap();

    let loaded = Chore::collection(&db)
        .relation(Chore::FIELDS.owner)
        .load(std::slice::from_ref(&chore))
        .await
        .unwrap();
    assert_eq!(loaded.queries(), 1);
    let loads = capture.entered("pattern_runtime::relation.load");
    let load = loads.last().expect("the load span was entered");
    assert_eq!(load.get("model"), Some("Chore"), "{load:?}");
    assert_eq!(load.get("field"), Some("owner"), "{load:?}");
    let [found] = capture
        .events("loaded referenced documents")
        .try_into()
        .unwrap_or_else(|e| panic!("one load event expected, not {e:#?}"));
    assert_eq!(found.fields.get("asked"), Some("1"), "{found:?}");
    assert_eq!(found.fields.get("found"), Some("1"), "{found:?}");
    assert_eq!(found.spans, ["pattern_runtime::relation.load"]);

    Chore::collection(&db)
        .relation(Chore::FIELDS.owner)
        .assign(&10, &2)
        .await
        .unwrap();
    let assigns = capture.entered("pattern_runtime::relation.assign");
    let assign = assigns.last().expect("the assign span was entered");
    assert_eq!(assign.get("collection"), Some("chores"), "{assign:?}");
    assert_eq!(assign.get("child"), Some("10"), "{assign:?}");
    assert_eq!(assign.get("owner"), Some("2"), "{assign:?}");
    let [assigned] = capture
        .events("assigned")
        .try_into()
        .unwrap_or_else(|e| panic!("one assigned event expected, not {e:#?}"));
    assert_eq!(assigned.fields.get("pulled"), Some("1"), "{assigned:?}");
    assert_eq!(assigned.spans, ["pattern_runtime::relation.assign"]);
    assert!(
        capture
            .events("transaction committed")
            .iter()
            .any(|e| e.spans == ["pattern_runtime::relation.assign"]),
        "the assignment commits in its span"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Buyer {
    #[serde(rename = "_id")]
    id: u32,
    #[computed(sum = Purchase.amount, by = buyer_id)]
    total_spent: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Purchase {
    #[serde(rename = "_id")]
    id: u32,
    buyer_id: u32,
    amount: i64,
}

#[tokio::test]
async fn computed_writes_and_recomputations_run_in_spans_with_their_events() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_computed").await;
    Buyer::collection(&db)
        .raw()
        .insert_one(Buyer {
            id: 1,
            total_spent: 0,
        })
        .await
        .unwrap();
    let purchases = Purchase::collection(&db);
    purchases
        .insert(&Purchase {
            id: 7,
            buyer_id: 1,
            amount: 30,
        })
        .await
        .unwrap();
    let inserts = capture.entered("pattern_runtime::model.insert");
    let insert = inserts.last().expect("the insert span was entered");
    assert_eq!(insert.get("model"), Some("Purchase"), "{insert:?}");
    assert_eq!(insert.get("collection"), Some("purchases"), "{insert:?}");
    let [updated] = capture
        .events("computed fields updated")
        .try_into()
        .unwrap_or_else(|e| panic!("one target update event expected, not {e:#?}"));
    assert_eq!(updated.fields.get("target_id"), Some("1"), "{updated:?}");
    assert_eq!(updated.fields.get("matched"), Some("1"), "{updated:?}");
    assert_eq!(updated.spans, ["pattern_runtime::model.insert"]);

    Buyer::collection(&db).computed().repair().await.unwrap();
    assert!(!capture
        .entered("pattern_runtime::computed.repair")
        .is_empty());
    let [repaired] = capture
        .events("repaired")
        .try_into()
        .unwrap_or_else(|e| panic!("one repair event expected, not {e:#?}"));
    assert_eq!(repaired.fields.get("repaired"), Some("0"), "{repaired:?}");
    assert_eq!(repaired.fields.get("left"), Some("0"), "{repaired:?}");
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Note {
    n: u32,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Notebook {
    #[serde(rename = "_id")]
    id: u32,
    #[outlier(limit = 2, overflow = "notebook_pages", capacity = 2, flag = is_outlier, count = notes_count)]
    notes: Vec<Note>,
    is_outlier: bool,
    notes_count: i64,
}

#[tokio::test]
async fn outlier_pushes_run_in_spans_and_say_what_overflowed() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_outlier").await;
    Notebook::collection(&db)
        .raw()
        .insert_one(Notebook {
            id: 1,
            notes: vec![],
            is_outlier: false,
            notes_count: 0,
        })
        .await
        .unwrap();
    let notes = Notebook::collection(&db).outlier(Notebook::FIELDS.notes);
    notes
        .push_many(1, (0..5).map(|n| Note { n }).collect())
        .await
        .unwrap();
    let pushes = capture.entered("pattern_runtime::outlier.push");
    let push = pushes.last().expect("the push span was entered");
    assert_eq!(push.get("model"), Some("Notebook"), "{push:?}");
    assert_eq!(push.get("field"), Some("notes"), "{push:?}");
    assert_eq!(push.get("items"), Some("5"), "{push:?}");
    assert_eq!(push.get("overflowed"), Some("3"), "{push:?}");
    let created = capture.events("overflow document created");
    // Three items past the limit, two per overflow document: two documents.
    assert_eq!(created.len(), 2, "{created:#?}");
    assert_eq!(created[0].spans, ["pattern_runtime::outlier.push"]);
}

#[tokio::test]
async fn an_operations_error_is_a_debug_event_of_its_span() {
    let (capture, _guard) = capture();
    let db = test_db("tracing_error").await;
    let products = Product::collection(&db);
    let product = Product {
        id: "p1".into(),
        recent_reviews: vec![],
        rating_count: 0,
    };
    products.insert(&product).await.unwrap();
    let again = products.insert(&product).await.unwrap_err();
    assert!(again.is_duplicate_key(), "{again:?}");
    // The error, once, at DEBUG (the caller decides whether it is an error), inside the
    // operation's span, which names the model and its collection.
    let errors: Vec<Captured> = capture
        .seen()
        .into_iter()
        .filter_map(|s| match s {
            Seen::Event(e) if e.fields.get("error").is_some() => Some(e),
            _ => None,
        })
        .collect();
    let [error] = errors.as_slice() else {
        panic!("one error event: {errors:?}");
    };
    assert_eq!(error.level, Level::DEBUG);
    assert_eq!(
        error.spans.last().copied(),
        Some("pattern_runtime::model.insert")
    );
    let spans = capture.entered("pattern_runtime::model.insert");
    let entered = spans.last().expect("the insert's span was entered");
    assert_eq!(entered.get("model"), Some("Product"));
    assert_eq!(entered.get("collection"), Some("products"));
}

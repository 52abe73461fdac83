//! The round trips of every pattern's main operations, measured against the server and compared
//! with the table of `pattern-runtime/docs/patterns.md`, so the page cannot drift.
//!
//! Each operation runs once, in the common case, between two calls of `take_commands()`: the
//! first discards what came before, the second lists what the operation sent. A round trip is
//! one command the test's client started (driver command monitoring), whatever it is:
//! `commitTransaction` counts, and so would `getMore`, `killCursors` or `endSessions` if an
//! operation sent them. [`NOT_COUNTED`] lists the commands left out by name, and why; it is empty:
//! the driver's own housekeeping (`hello` heartbeats, connection handshakes) is not a command
//! event, and no operation measured here sends a command it does not need.
//!
//! Then each test parses the table of the page (the `operations (round trips)` column of the rows
//! it measures) and asserts both ways: every measured operation is in the table with the same
//! figure, and every operation of those rows in the table was measured. A last test checks that
//! every row of the table belongs to one of the tests.

use pattern_runtime::At;
use std::collections::BTreeMap;

use bson::oid::ObjectId;
use bson::{doc, Bson, DateTime};
use futures_util::TryStreamExt;
use pattern_runtime::approximation::Random;
use pattern_runtime::query::{Filter, Update};
use pattern_runtime::{Fields, Measurement, Model, Ref, SyncOptions};
use pattern_testkit::{test_db, test_db_unvalidated, TestDb};
use serde::{Deserialize, Serialize};

/// The page whose figures this file checks.
const PAGE: &str = include_str!("../../pattern-runtime/docs/patterns.md");

/// Commands not counted as round trips, by name. None: see the module docs.
const NOT_COUNTED: &[&str] = &[];

// ----- measuring -----

/// One operation's measure: the commands it sent.
#[derive(Debug)]
struct Measured {
    row: &'static str,
    op: String,
    sent: Vec<String>,
}

/// Collects the measures of one test.
struct Meter<'a> {
    db: &'a TestDb,
    row: &'static str,
    measured: Vec<Measured>,
}

impl<'a> Meter<'a> {
    fn new(db: &'a TestDb) -> Self {
        Meter {
            db,
            row: "",
            measured: Vec::new(),
        }
    }

    /// The row of the table the next operations belong to.
    fn row(&mut self, row: &'static str) {
        self.row = row;
    }

    /// Whether `op` of the current row is measured.
    fn has(&self, op: &str) -> bool {
        self.measured
            .iter()
            .any(|m| m.row == self.row && m.op == op)
    }

    /// Right before an operation: forget what was sent so far.
    fn start(&self) {
        self.db.take_commands();
    }

    /// Right after it: what it sent is the operation `op`'s measure.
    fn record(&mut self, op: &str) {
        let sent: Vec<String> = self
            .db
            .take_commands()
            .into_iter()
            .filter(|c| !NOT_COUNTED.contains(&c.name.as_str()))
            .map(|c| format!("{} {}", c.name, c.target))
            .collect();
        assert!(!self.has(op), "{}: `{op}` measured twice", self.row);
        self.measured.push(Measured {
            row: self.row,
            op: op.to_owned(),
            sent,
        });
    }
}

/// `measure!(meter, "op", future)`: runs the future between [`Meter::start`] and
/// [`Meter::record`], and gives its output.
macro_rules! measure {
    ($meter:expr, $op:expr, $call:expr) => {{
        $meter.start();
        let out = $call.await;
        $meter.record($op);
        out
    }};
}

// ----- the page's table -----

/// The header of the column holding the figures.
const OPERATIONS: &str = "operations (round trips)";

/// The rows of the page's table: the `pattern` cell, then each operation of the operations cell
/// with its figure.
fn table() -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut lines = PAGE.lines().map(str::trim).filter(|l| l.starts_with('|'));
    let header = cells(lines.next().expect("the page has a table"));
    let pattern_col = header.iter().position(|h| h == "pattern");
    let ops_col = header.iter().position(|h| h == OPERATIONS);
    let (Some(pattern_col), Some(ops_col)) = (pattern_col, ops_col) else {
        panic!("the table's header has no `pattern` or `{OPERATIONS}` column: {header:?}");
    };
    let mut rows = BTreeMap::new();
    for line in lines {
        let row = cells(line);
        if row
            .iter()
            .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':')))
        {
            continue; // the separator under the header
        }
        assert_eq!(
            row.len(),
            header.len(),
            "a row of the table has {} cells, the header {}: {line}",
            row.len(),
            header.len()
        );
        let pattern = row[pattern_col].clone();
        let ops = operations(&pattern, &row[ops_col]);
        assert!(
            rows.insert(pattern.clone(), ops).is_none(),
            "the row `{pattern}` is in the table twice"
        );
    }
    rows
}

/// The cells of a table line `| a | b |`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_owned()).collect()
}

/// The operations cell: items separated by ` · `, each `` `name` `` then an optional `(case)`,
/// then the number of round trips. The key is `name`, or `name (case)`.
fn operations(row: &str, cell: &str) -> BTreeMap<String, usize> {
    let mut ops = BTreeMap::new();
    for item in cell.split(" · ") {
        let bad = |why: &str| -> ! {
            panic!(
                "row `{row}`: the operation `{item}` is not `` `name` N `` or \
                 `` `name` (case) N ``: {why}"
            )
        };
        let rest = item
            .trim()
            .strip_prefix('`')
            .unwrap_or_else(|| bad("no leading backtick"));
        let (name, rest) = rest
            .split_once('`')
            .unwrap_or_else(|| bad("no closing backtick"));
        let rest = rest.trim();
        let (key, figure) = match rest.strip_prefix('(') {
            Some(case) => {
                let (case, figure) = case
                    .split_once(')')
                    .unwrap_or_else(|| bad("no closing parenthesis"));
                (format!("{name} ({})", case.trim()), figure.trim())
            }
            None => (name.to_owned(), rest),
        };
        let figure: usize = figure
            .parse()
            .unwrap_or_else(|_| bad("the figure is not a whole number"));
        assert!(
            ops.insert(key.clone(), figure).is_none(),
            "row `{row}`: `{key}` is in the operations cell twice"
        );
    }
    ops
}

/// Asserts that the table's rows `rows` hold exactly the operations measured, with the same
/// figures, reporting every difference at once.
fn check_table(rows: &[&str], measured: &[Measured]) {
    let table = table();
    let mut wrong = Vec::new();
    for m in measured {
        assert!(
            rows.contains(&m.row),
            "`{}` measured for the row `{}`, which this test does not check",
            m.op,
            m.row
        );
        let count = m.sent.len();
        match table.get(m.row).and_then(|ops| ops.get(&m.op)) {
            Some(&figure) if figure == count => {}
            Some(&figure) => wrong.push(format!(
                "{}: `{}`: the table says {figure}, measured {count} (sent {:?})",
                m.row, m.op, m.sent
            )),
            None => wrong.push(format!(
                "{}: `{}`: not in the table, measured {count} (sent {:?})",
                m.row, m.op, m.sent
            )),
        }
    }
    for row in rows {
        let Some(ops) = table.get(*row) else {
            wrong.push(format!("{row}: no such row in the table"));
            continue;
        };
        for (op, figure) in ops {
            if !measured.iter().any(|m| m.row == *row && &m.op == op) {
                wrong.push(format!(
                    "{row}: `{op}`: the table says {figure}, not measured"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "pattern-runtime/docs/patterns.md disagrees with the server:\n{}",
        wrong.join("\n")
    );
}

async fn sync(db: &TestDb, schemas: &[&'static pattern_runtime::ModelSchema]) {
    pattern_runtime::sync(db)
        .models(schemas)
        .options(&SyncOptions::new())
        .await
        .unwrap();
}

// ----- the model handle, versioning, subset, computed, extended reference -----

/// A model nothing derives from: the model handle's verbs alone.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_articles")]
#[versioned(history = "rt_article_revisions", keep = 50)]
struct Article {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
}

/// The same without `keep`: nothing to trim.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_drafts")]
#[versioned(history = "rt_draft_revisions")]
struct Draft {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    title: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_products")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
    #[summary(count = recent_reviews)]
    review_count: i64,
    #[summary(sum = recent_reviews.stars)]
    star_sum: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_reviews")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    stars: i32,
    created_at: DateTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, Fields)]
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

fn review(n: i64) -> Review {
    Review {
        id: format!("r{n}"),
        product_id: "p1".into(),
        stars: 4,
        created_at: DateTime::from_millis(1_700_000_000_000 + n * 1000),
    }
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_shoppers")]
struct Shopper {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = Purchase.amount, by = shopper_id)]
    total_spent: i64,
    #[computed(count = Purchase, by = shopper_id)]
    purchase_count: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_purchases")]
struct Purchase {
    #[serde(rename = "_id")]
    id: i64,
    shopper_id: String,
    amount: i64,
    note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_customers")]
#[extended_ref(CustomerRef(name, address))]
struct Customer {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    address: String,
    loyalty_points: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "rt_invoices")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    #[extended_ref(propagate)]
    customer: CustomerRef,
    total: i64,
}

const DOCUMENT_ROWS: &[&str] = &[
    "model handle",
    "versioning",
    "subset",
    "computed",
    "extended reference",
];

#[tokio::test]
async fn versioning_subset_computed_and_extended_reference() {
    let db = test_db("round_trips_documents").await;
    sync(
        &db,
        &[
            Article::SCHEMA,
            Draft::SCHEMA,
            Note::SCHEMA,
            Product::SCHEMA,
            Review::SCHEMA,
            Shopper::SCHEMA,
            Purchase::SCHEMA,
            Customer::SCHEMA,
            Invoice::SCHEMA,
        ],
    )
    .await;
    let mut m = Meter::new(&db);

    // The model handle, on a model nothing derives from: one command per verb.
    m.row("model handle");
    let notes = Note::collection(&db);
    let note = |id: i64, text: &str| Note {
        id,
        text: text.into(),
    };
    measure!(m, "insert", notes.insert(&note(1, "a"))).unwrap();
    measure!(
        m,
        "insert_many",
        notes.insert_many([note(2, "b"), note(3, "c")])
    )
    .unwrap();
    measure!(m, "get", notes.get(1)).unwrap();
    let f = Note::FIELDS;
    measure!(m, "find_one", notes.find_one(Filter::eq(f.text, "b"))).unwrap();
    let all = measure!(m, "find", notes.find(Filter::gte(f.id, 1))).unwrap();
    assert_eq!(all.len(), 3);
    measure!(m, "count", notes.count(doc! {})).unwrap();
    measure!(m, "update", notes.update(1, Update::new().set(f.text, "A"))).unwrap();
    let updated = measure!(
        m,
        "update_many",
        notes.update_many(Filter::gte(f.id, 2), Update::new().set(f.text, "B"))
    )
    .unwrap();
    assert_eq!(updated.modified, 2);
    measure!(m, "replace", notes.replace(&note(1, "again"))).unwrap();
    measure!(m, "delete", notes.delete(1)).unwrap();
    let deleted = measure!(m, "delete_many", notes.delete_many(doc! {})).unwrap();
    assert_eq!(deleted, 2);

    // Versioning: every change archives the stored version first, in one transaction.
    m.row("versioning");
    let articles = Article::collection(&db);
    let mut a = Article {
        id: 1,
        version: 0,
        title: "v1".into(),
    };
    measure!(m, "insert", articles.insert(&mut a)).unwrap();
    a.title = "v2".into();
    measure!(m, "replace", articles.replace(&mut a)).unwrap();
    let update = doc! { "$set": { Article::FIELDS.title: "v3" } };
    measure!(m, "update", articles.update(At(1, 2), update)).unwrap();
    let history = measure!(m, "history", articles.history(1)).unwrap();
    assert_eq!(history.len(), 2);
    let modified = measure!(m, "modify", articles.modify(1, 3, |a| a.title.push('!'))).unwrap();
    assert_eq!((modified.version, modified.title.as_str()), (4, "v3!"));
    let reverted = measure!(m, "revert", articles.revert(1, 1)).unwrap();
    assert_eq!(reverted, 5);
    measure!(m, "delete", articles.delete(1)).unwrap();
    let drafts = Draft::collection(&db);
    let mut d = Draft {
        id: 1,
        version: 0,
        title: "v1".into(),
    };
    drafts.insert(&mut d).await.unwrap();
    d.title = "v2".into();
    measure!(m, "replace (without `keep`)", drafts.replace(&mut d)).unwrap();

    // Subset: the full item and the parent's capped array and counters.
    m.row("subset");
    Product::collection(&db)
        .raw()
        .insert_one(Product {
            id: "p1".into(),
            recent_reviews: vec![],
            review_count: 0,
            star_sum: 0,
        })
        .await
        .unwrap();
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    for n in 0..11 {
        reviews.push("p1", review(n)).await.unwrap();
    }
    measure!(m, "push", reviews.push("p1", review(11))).unwrap();
    measure!(m, "remove", reviews.remove("p1", "r11")).unwrap();
    let page = measure!(m, "page", reviews.page("p1", 10, 10)).unwrap();
    assert_eq!(page.len(), 1);
    let count = measure!(m, "count", reviews.count("p1")).unwrap();
    assert_eq!(count, 11);

    // Computed: the source's write and the target's `$inc`, in one transaction.
    m.row("computed");
    Shopper::collection(&db)
        .raw()
        .insert_one(Shopper {
            id: "u1".into(),
            total_spent: 0,
            purchase_count: 0,
        })
        .await
        .unwrap();
    let purchases = Purchase::collection(&db);
    let purchase = |id: i64, amount: i64| Purchase {
        id,
        shopper_id: "u1".into(),
        amount,
        note: String::new(),
    };
    purchases.insert(&purchase(1, 500)).await.unwrap();
    measure!(m, "insert", purchases.insert(&purchase(2, 1200))).unwrap();
    let amount = doc! { "$set": { Purchase::FIELDS.amount: 1500 } };
    measure!(m, "update", purchases.update(2, amount)).unwrap();
    let note = doc! { "$set": { Purchase::FIELDS.note: "gift" } };
    measure!(
        m,
        "update (of a field nothing computes from)",
        purchases.update(2, note)
    )
    .unwrap();
    measure!(m, "delete", purchases.delete(1)).unwrap();
    let shoppers = Shopper::collection(&db).computed();
    measure!(m, "ComputedFields::rebuild", shoppers.rebuild("u1")).unwrap();
    let report = shoppers.check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
    let stored = Shopper::collection(&db)
        .raw()
        .find_one(doc! { "_id": "u1" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.total_spent, stored.purchase_count), (1500, 1));

    // Extended reference: the source, then one `updateMany` per embedding copying a field.
    m.row("extended reference");
    let ada = Customer {
        id: 1,
        name: "Ada".into(),
        address: "1 Main St".into(),
        loyalty_points: 0,
    };
    Customer::collection(&db)
        .raw()
        .insert_one(&ada)
        .await
        .unwrap();
    Invoice::collection(&db)
        .raw()
        .insert_many((1..=3).map(|id| Invoice {
            id,
            customer: CustomerRef::from(&ada),
            total: 10,
        }))
        .await
        .unwrap();
    let rename = doc! { "$set": { Customer::FIELDS.name: "Ada L." } };
    measure!(m, "update", Customer::collection(&db).update(1, rename)).unwrap();
    let points = doc! { "$inc": { Customer::FIELDS.loyalty_points: 10 } };
    measure!(
        m,
        "update (of a field not copied)",
        Customer::collection(&db).update(1, points)
    )
    .unwrap();
    let customers = Customer::collection(&db).references();
    measure!(m, "References::rebuild", customers.rebuild(1)).unwrap();
    let report = customers.check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");

    check_table(DOCUMENT_ROWS, &m.measured);
}

// ----- attribute, polymorphic, relation -----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct Vital {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "rt_records")]
struct Record {
    #[serde(rename = "_id")]
    id: i32,
    #[attribute]
    attributes: Vec<Vital>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[model(collection = "rt_notifications")]
enum Notification {
    Email {
        #[serde(rename = "_id")]
        id: ObjectId,
        to: String,
        created_at: DateTime,
    },
    Sms {
        #[serde(rename = "_id")]
        id: ObjectId,
        phone_number: String,
        created_at: DateTime,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_parts")]
struct Part {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_assemblies")]
struct Assembly {
    #[serde(rename = "_id")]
    id: i64,
    #[relation]
    parts: Vec<Ref<Part>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_hosts")]
struct Host {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_log_messages")]
struct LogMessage {
    #[serde(rename = "_id")]
    id: i64,
    time: DateTime,
    #[relation(parent, sort(time = -1))]
    host: Ref<Host>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_persons")]
struct Person {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_tasks")]
struct Task {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(inverse = tasks)]
    owner: Ref<Person>,
}

const SHAPE_ROWS: &[&str] = &[
    "attribute",
    "polymorphic",
    "relation: references",
    "relation: parent",
    "relation: two-way",
];

#[tokio::test]
async fn attribute_polymorphic_and_relations() {
    let db = test_db("round_trips_shapes").await;
    sync(
        &db,
        &[
            Record::SCHEMA,
            Notification::SCHEMA,
            Part::SCHEMA,
            Assembly::SCHEMA,
            Host::SCHEMA,
            LogMessage::SCHEMA,
            Person::SCHEMA,
            Task::SCHEMA,
        ],
    )
    .await;
    let mut m = Meter::new(&db);

    // Attribute: one pipeline update per `set`, one query through the compound index.
    m.row("attribute");
    Record::collection(&db)
        .raw()
        .insert_one(Record {
            id: 1,
            attributes: vec![],
        })
        .await
        .unwrap();
    let vitals = Record::collection(&db).attributes(Record::FIELDS.attributes);
    let bmi = Vital {
        name: "bmi".into(),
        value: Bson::Double(26.1),
        unit: None,
    };
    measure!(m, "set", vitals.set(1, &bmi)).unwrap();
    let got = measure!(m, "get", vitals.get(1, "bmi".to_owned())).unwrap();
    assert_eq!(got, Some(bmi));
    let heavy = vitals.key("bmi".to_owned()).gt(25).unwrap();
    let found = measure!(m, "find", vitals.find(heavy)).unwrap();
    assert_eq!(found.len(), 1);
    measure!(m, "unset", vitals.unset(1, "bmi".to_owned())).unwrap();

    // Polymorphic: a variant's handle adds its tag to every read and write.
    m.row("polymorphic");
    let emails = NotificationEmail::collection(&db);
    let email = NotificationEmail {
        id: ObjectId::new(),
        to: "ada@example.com".into(),
        created_at: DateTime::now(),
    };
    measure!(m, "insert", emails.insert(&email)).unwrap();
    let found = measure!(m, "find", emails.find(doc! {})).unwrap();
    assert_eq!(found.len(), 1);
    let got = measure!(m, "get", emails.get(email.id)).unwrap();
    assert_eq!(got.map(|e| e.to), Some(email.to.clone()));
    let renamed = NotificationEmail {
        id: email.id,
        to: "ada@example.net".into(),
        created_at: email.created_at,
    };
    measure!(m, "replace", emails.replace(&renamed)).unwrap();
    let to = doc! { "$set": { "to": "ada@example.org" } };
    measure!(m, "update_many", emails.update_many(doc! {}, to)).unwrap();
    let to = doc! { "$set": { "to": "ada@example.com" } };
    measure!(m, "update", emails.update(email.id, to)).unwrap();
    let every = Notification::collection(&db);
    let common = measure!(
        m,
        "ModelCollection::find_common",
        every.find_common(doc! {})
    )
    .unwrap();
    assert_eq!(common.len(), 1);
    measure!(m, "delete", emails.delete(email.id)).unwrap();

    // Relation, references: one `$in` per referenced model.
    m.row("relation: references");
    Part::collection(&db)
        .raw()
        .insert_many((1..=3).map(|id| Part {
            id,
            name: format!("part {id}"),
        }))
        .await
        .unwrap();
    let assemblies: Vec<Assembly> = (1..=2)
        .map(|id| Assembly {
            id,
            parts: (1..=3).map(Ref::new).collect(),
        })
        .collect();
    let parts = Assembly::collection(&db).relation(Assembly::FIELDS.parts);
    let loaded = measure!(m, "load", parts.load(&assemblies)).unwrap();
    assert!(loaded.dangling().is_empty());

    // Relation, parent: the children through the `{host, time}` index.
    m.row("relation: parent");
    Host::collection(&db)
        .raw()
        .insert_one(Host {
            id: 1,
            name: "goofy".into(),
        })
        .await
        .unwrap();
    LogMessage::collection(&db)
        .raw()
        .insert_many((1..=5).map(|id| LogMessage {
            id,
            time: DateTime::from_millis(1_700_000_000_000 + id * 1000),
            host: Ref::new(1),
        }))
        .await
        .unwrap();
    let host = LogMessage::collection(&db).relation(LogMessage::FIELDS.host);
    let children = measure!(m, "children_of", host.children_of(&1).limit(100).to_vec()).unwrap();
    assert_eq!(children.len(), 5);

    // Relation, two-way: three documents in one transaction.
    m.row("relation: two-way");
    Person::collection(&db)
        .raw()
        .insert_many([
            Person {
                id: 1,
                tasks: vec![Ref::new(1)],
            },
            Person {
                id: 2,
                tasks: vec![],
            },
        ])
        .await
        .unwrap();
    Task::collection(&db)
        .raw()
        .insert_one(Task {
            id: 1,
            owner: Ref::new(1),
        })
        .await
        .unwrap();
    let owner = Task::collection(&db).relation(Task::FIELDS.owner);
    let done = measure!(m, "assign", owner.assign(&1, &2)).unwrap();
    assert!(done.added);
    let report = owner.check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");

    check_table(SHAPE_ROWS, &m.measured);
}

// ----- approximation, outlier -----

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "rt_pages")]
struct Page {
    #[serde(rename = "_id")]
    id: String,
    #[approximate(batched, threshold = 100)]
    views: i64,
    #[approximate(sampled, p = 0.01)]
    likes: i64,
    #[approximate(sharded, shards = 16)]
    hits: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Post {
    n: i64,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_members")]
struct Member {
    #[serde(rename = "_id")]
    id: String,
    #[outlier(limit = 3, overflow = "rt_member_posts", capacity = 100, flag = is_outlier, count = posts_count)]
    posts: Vec<Post>,
    is_outlier: bool,
    posts_count: i64,
}

const COUNTER_ROWS: &[&str] = &[
    "approximation: batched",
    "approximation: sampled",
    "approximation: sharded",
    "outlier",
];

#[tokio::test]
async fn approximation_and_outlier() {
    let db = test_db("round_trips_counters").await;
    sync(&db, &[Page::SCHEMA, Member::SCHEMA]).await;
    let mut m = Meter::new(&db);
    Page::collection(&db)
        .raw()
        .insert_one(Page {
            id: "home".into(),
            views: 0,
            likes: 0,
            hits: 0,
        })
        .await
        .unwrap();

    // Batched: counted in memory, one `$inc` per threshold.
    m.row("approximation: batched");
    let views = Page::collection(&db).counter(Page::FIELDS.views);
    measure!(m, "add", views.add("home", 1)).unwrap();
    views.add("home", 98).await.unwrap();
    measure!(m, "add (reaching the threshold)", views.add("home", 1)).unwrap();
    views.add("home", 1).await.unwrap();
    let wrote = measure!(m, "flush", views.flush()).unwrap();
    assert_eq!(wrote, 1);

    // Sampled: an event is written with probability p.
    m.row("approximation: sampled");
    let likes = Page::collection(&db)
        .counter(Page::FIELDS.likes)
        .with_random(Random::seeded(7));
    for _ in 0..10_000 {
        m.start();
        let op = if likes.add("home").await.unwrap() {
            "add (drawn)"
        } else {
            "add"
        };
        if !m.has(op) {
            m.record(op);
        }
        if m.has("add") && m.has("add (drawn)") {
            break;
        }
    }
    assert!(m.has("add (drawn)"), "10 000 events at p = 0.01 wrote none");

    // Sharded: one upsert per event, the read sums the shards.
    m.row("approximation: sharded");
    let hits = Page::collection(&db).counter(Page::FIELDS.hits).of("home");
    measure!(m, "add", hits.add(1)).unwrap();
    let total = measure!(m, "read", hits.read()).unwrap();
    assert_eq!(total, 1);
    let snapshot = measure!(m, "snapshot", hits.snapshot()).unwrap();
    assert_eq!(snapshot, 1);

    // Outlier: one conditional update while the array has room.
    m.row("outlier");
    Member::collection(&db)
        .raw()
        .insert_one(Member {
            id: "ada".into(),
            posts: vec![],
            is_outlier: false,
            posts_count: 0,
        })
        .await
        .unwrap();
    let posts = Member::collection(&db).outlier(Member::FIELDS.posts);
    posts.push("ada", Post { n: 0 }).await.unwrap();
    posts.push("ada", Post { n: 1 }).await.unwrap();
    measure!(m, "push", posts.push("ada", Post { n: 2 })).unwrap();
    let items = measure!(m, "items", posts.items("ada")).unwrap();
    assert_eq!(items.len(), 3);
    let removed = measure!(m, "remove", posts.remove("ada", &Post { n: 2 })).unwrap();
    assert_eq!(removed, 1);
    posts.push("ada", Post { n: 2 }).await.unwrap();
    measure!(
        m,
        "push (the one that overflows)",
        posts.push("ada", Post { n: 3 })
    )
    .unwrap();
    measure!(m, "push (to an outlier)", posts.push("ada", Post { n: 4 })).unwrap();
    let items = measure!(m, "items (of an outlier)", posts.items("ada")).unwrap();
    assert_eq!(items.len(), 5);
    let page = measure!(m, "page (of an outlier)", posts.page("ada", 1, 3)).unwrap();
    assert_eq!(page.len(), 3);
    let count = measure!(m, "count", posts.count("ada")).unwrap();
    assert_eq!(count, 5);
    let report = posts.check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");

    check_table(COUNTER_ROWS, &m.measured);
}

// ----- tree, preallocation, bucket -----

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "rt_categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Category {
    #[serde(rename = "_id")]
    id: ObjectId,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_items")]
#[in_tree(Category, node = category, path = category_path)]
struct Item {
    #[serde(rename = "_id")]
    id: ObjectId,
    category: String,
    category_path: Vec<String>,
}

fn category(name: &str, parent: Option<&str>) -> Category {
    Category {
        id: ObjectId::new(),
        name: name.into(),
        parent: parent.map(str::to_owned),
        ancestors: vec![],
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "rt_room_days")]
#[preallocated(resource = room_id, slot = date, holder = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: ObjectId,
    room_id: String,
    date: String,
    booked_by: Option<String>,
}

fn free(date: &str) -> RoomDay {
    RoomDay {
        id: ObjectId::new(),
        room_id: "101".into(),
        date: date.into(),
        booked_by: None,
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
#[serde(rename_all = "camelCase")]
#[bucket(
    collection = "rt_sensor_buckets",
    key = device_id,
    time = timestamp,
    max_count = 200,
    span = "1h",
    summary(value(min, max, sum))
)]
struct Reading {
    device_id: String,
    timestamp: DateTime,
    value: f64,
}

const HOUR: i64 = 3_600_000;

fn reading(at: i64, value: f64) -> Reading {
    Reading {
        device_id: "sensor-1".into(),
        timestamp: DateTime::from_millis(at),
        value,
    }
}

const PLACEMENT_ROWS: &[&str] = &["tree", "preallocation", "bucket"];

#[tokio::test]
async fn tree_preallocation_and_bucket() {
    let db = test_db("round_trips_placement").await;
    sync(
        &db,
        &[
            Category::SCHEMA,
            Item::SCHEMA,
            RoomDay::SCHEMA,
            Reading::SCHEMA,
        ],
    )
    .await;
    let mut m = Meter::new(&db);

    // Tree: every change of the tree's shape and its holders' paths, in one transaction.
    m.row("tree");
    let tree = Category::collection(&db).tree();
    tree.insert(&category("electronics", None)).await.unwrap();
    tree.insert(&category("storage", Some("electronics")))
        .await
        .unwrap();
    measure!(m, "insert (a root)", tree.insert(&category("books", None))).unwrap();
    measure!(m, "insert", tree.insert(&category("ssd", Some("storage")))).unwrap();
    let items = tree.holders::<Item>();
    let ssd = Item {
        id: ObjectId::new(),
        category: "ssd".into(),
        category_path: vec![],
    };
    measure!(m, "Holders::insert", items.insert(&ssd)).unwrap();
    let moved = measure!(m, "move_under", tree.move_under("storage", "books")).unwrap();
    assert_eq!(moved.modified(), 3, "storage, ssd and the item");
    measure!(m, "rename", tree.rename("ssd", "solid state")).unwrap();
    let below = measure!(m, "descendants", tree.descendants("books")).unwrap();
    assert_eq!(below.len(), 2);
    let under = measure!(m, "Holders::under", items.under("books")).unwrap();
    assert_eq!(under[0].category_path, ["books", "storage", "solid state"]);
    let children = measure!(m, "children", tree.children("books")).unwrap();
    assert_eq!(children.len(), 1);
    measure!(m, "Holders::place", items.place(ssd.id, "electronics")).unwrap();
    let deleted = measure!(
        m,
        "delete",
        tree.delete("solid state", pattern_runtime::tree::Deletion::LeafOnly)
    )
    .unwrap();
    assert_eq!((deleted.nodes, deleted.holders), (1, 0));
    let report = tree.check().await.unwrap();
    assert!(report.is_clean(), "{report:?}");

    // Preallocation: one conditional update books a slot.
    m.row("preallocation");
    let slots = RoomDay::collection(&db).slots();
    let dates = ["2025-08-20", "2025-08-21", "2025-08-22"];
    measure!(m, "allocate", slots.allocate(dates.map(free))).unwrap();
    measure!(m, "book", slots.book("101", "2025-08-20", "alice")).unwrap();
    let taken = measure!(m, "book (taken)", slots.book("101", "2025-08-20", "bob"));
    assert!(
        matches!(taken, Err(pattern_runtime::Error::AlreadyBooked { .. })),
        "{taken:?}"
    );
    measure!(m, "release", slots.release("101", "2025-08-20")).unwrap();
    slots.book("101", "2025-08-21", "carol").await.unwrap();
    measure!(m, "cancel", slots.cancel("101", "2025-08-21", "carol")).unwrap();
    let both = measure!(
        m,
        "book_all (two slots)",
        slots.book_all(&[("101", "2025-08-21"), ("101", "2025-08-22")], "dave")
    )
    .unwrap();
    assert_eq!(both.len(), 2);
    let open = measure!(
        m,
        "available",
        slots.available("101", "2025-08-20", "2025-08-23")
    )
    .unwrap();
    assert_eq!(open.len(), 1, "the 20th; dave holds the 21st and 22nd");

    // Bucket: one upsert per measurement, one query per range.
    m.row("bucket");
    let series = Reading::series(&db);
    let t0 = (DateTime::now().timestamp_millis() / HOUR - 2) * HOUR;
    measure!(m, "insert", series.insert(&reading(t0, 20.5))).unwrap();
    let batch: Vec<Reading> = (1..10).map(|i| reading(t0 + i * 60_000, 20.0)).collect();
    measure!(m, "insert_many", series.insert_many(&batch)).unwrap();
    let (from, to) = (DateTime::from_millis(t0), DateTime::from_millis(t0 + HOUR));
    let read: Vec<Reading> = measure!(m, "range", async {
        series
            .range("sensor-1", from, to)
            .await?
            .try_collect()
            .await
    })
    .unwrap();
    assert_eq!(read.len(), 10);
    let summary = measure!(m, "summary", series.summary("sensor-1", from, to)).unwrap();
    assert_eq!(summary.count(), 10);

    check_table(PLACEMENT_ROWS, &m.measured);
}

// ----- schema versioning -----

#[derive(Deserialize)]
struct SubscriberV1 {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[model(collection = "subscribers")]
#[schema_version(older(SubscriberV1 = 1))]
struct Subscriber {
    #[serde(rename = "_id")]
    id: i64,
    v: pattern_runtime::schema_version::SchemaVersion<2>,
    names: Vec<String>,
}

impl From<SubscriberV1> for Subscriber {
    fn from(m: SubscriberV1) -> Self {
        Subscriber {
            id: m.id,
            v: pattern_runtime::schema_version::SchemaVersion,
            names: vec![m.name],
        }
    }
}

const VERSION_ROWS: &[&str] = &["schema versioning"];

#[tokio::test]
async fn schema_versioning() {
    let db = test_db_unvalidated("round_trips_schema_version").await;
    let stored = db.collection::<bson::Document>("subscribers");
    let old: Vec<bson::Document> = (0..20_i64)
        .map(|i| doc! { "_id": i, "name": format!("s{i}") })
        .collect();
    stored.insert_many(old).await.unwrap();
    let mut m = Meter::new(&db);
    m.row("schema versioning");
    let subscribers = Subscriber::collection(&db);
    let one = measure!(m, "get", subscribers.get(1)).unwrap().unwrap();
    assert_eq!(one.names, ["s1"]);
    let all = measure!(m, "find", subscribers.find(doc! {})).unwrap();
    assert_eq!(all.len(), 20);
    let lazy = subscribers.writing_back();
    measure!(m, "get (of an older document, writing back)", lazy.get(2)).unwrap();
    let counts = measure!(m, "schema_versions", subscribers.schema_versions()).unwrap();
    assert_eq!(counts.older(), 19);
    // A count, a batch read, its `update`, and the read that finds nothing left.
    let done = measure!(m, "converge (of one batch)", subscribers.converge()).unwrap();
    assert_eq!(done.upgraded, 19);

    check_table(VERSION_ROWS, &m.measured);
}

/// Every row of the table is measured by one of the tests above, and the operations cells parse.
#[test]
fn every_row_of_the_table_is_measured() {
    let measured: Vec<&str> = [
        DOCUMENT_ROWS,
        SHAPE_ROWS,
        COUNTER_ROWS,
        PLACEMENT_ROWS,
        VERSION_ROWS,
    ]
    .concat();
    let table = table();
    let rows: Vec<&str> = table.keys().map(String::as_str).collect();
    for row in &rows {
        assert!(
            measured.contains(row),
            "the table's row `{row}` is measured by no test"
        );
    }
    for row in &measured {
        assert!(rows.contains(row), "no row `{row}` in the table");
    }
}

//! Attribute: the hostile inputs through its operations.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value, qualifiers(unit))]
struct HAttr {
    name: String,
    value: Bson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    unit: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, Model)]
#[model(collection = "h_records")]
struct HRecord {
    #[serde(rename = "_id")]
    id: Bson,
    patient: String,
    #[attribute]
    attributes: Vec<HAttr>,
}

fn attr(name: &str, value: impl Into<Bson>, unit: Option<&str>) -> HAttr {
    HAttr {
        name: name.into(),
        value: value.into(),
        unit: unit.map(str::to_owned),
    }
}

fn item_doc(item: &HAttr) -> Bson {
    Bson::Document(bson::serialize_to_document(item).unwrap())
}

/// `Attributes::{set, unset, get}` with hostile values, qualifiers, keys and ids; attribute
/// conditions with hostile values.
#[test]
fn attribute() {
    big_stack(attribute_test);
}

async fn attribute_test() {
    let db = test_db("hostile_attribute").await;
    pattern_runtime::sync(&db)
        .models(&[HRecord::SCHEMA])
        .await
        .unwrap();
    let attrs = HRecord::collection(&db).attributes(HRecord::FIELDS.attributes);
    let mut l = Ledger::new("attribute", &db);
    const C: &str = "h_records";
    let baseline = vec![
        doc! { "_id": 1, "patient": "Alice", "attributes": [] },
        doc! { "_id": 2, "patient": "Bob", "attributes": [{ "name": "cost", "value": 7 }, { "name": "bmi", "value": 22 }] },
    ];

    // Values and qualifiers: on {_id: 1, patient: "Alice"} (appended) and on record 2 (replacing
    // its `cost` in place), each stored exactly as given, or refused (`InvalidValue` for keys
    // starting with `$`, holding `.` or NUL, or nesting past MAX_VALUE_DEPTH) with nothing
    // written.
    let mut items: Vec<HAttr> = hostile()
        .into_iter()
        .map(|v| attr("cost", v, None))
        .collect();
    items.push(attr("cost", "$120", Some("$/month")));
    for s in hostile_strings() {
        items.push(attr("cost", 1, Some(&s)));
    }
    for item in &items {
        let input = format!(
            "item {{value: {}, unit: {:?}}}",
            label(&item.value),
            item.unit.as_deref().map(|u| label(&Bson::String(u.into())))
        );
        for id in [1, 2] {
            reset(&db, C, &baseline).await;
            let before = snap(&db).await;
            let expected = before.with(C, |docs| {
                for d in docs.iter_mut() {
                    if d.get("_id") == Some(&Bson::Int32(id)) {
                        let mut items: Vec<Bson> = d.get_array("attributes").unwrap().clone();
                        match items.iter().position(|i| {
                            i.as_document().unwrap().get_str("name").ok() == Some("cost")
                        }) {
                            Some(p) => items[p] = item_doc(item),
                            None => items.push(item_doc(item)),
                        }
                        d.insert("attributes", items);
                    }
                }
            });
            let (done, _) = l
                .judge(
                    &format!("Attributes::set(id {id})"),
                    &input,
                    &before,
                    attrs.set(id, item),
                    |_, after| exactly(&expected, after),
                )
                .await;
            if done.is_some() {
                // Read back through the toolkit too.
                let now = snap(&db).await;
                l.read(
                    "Attributes::get",
                    &input,
                    &now,
                    attrs.get(id, "cost".to_owned()),
                    |got| match got {
                        Some(g) if same(&item_doc(g), &item_doc(item)) => Ok(()),
                        other => Err(format!("read back {other:?}")),
                    },
                )
                .await;
            }
        }
    }

    // The brief's cases by name: on {_id: 1, patient: "Alice"}, `"$120"` with unit `"$/month"`,
    // `"$patient"`, `{$concat: ["$patient", "-x"]}` and `{$gt: 1}` are stored exactly or refused
    // (the first two are plain strings: stored; the documents have `$` keys: `InvalidValue`);
    // NaN and the infinities are stored as given.
    for (item, must_store) in [
        (attr("cost", "$120", Some("$/month")), true),
        (attr("cost", "$patient", None), true),
        (
            attr("cost", doc! { "$concat": ["$patient", "-x"] }, None),
            false,
        ),
        (attr("cost", doc! { "$gt": 1 }, None), false),
        (attr("cost", f64::NAN, None), true),
        (attr("cost", f64::INFINITY, None), true),
        (attr("cost", f64::NEG_INFINITY, None), true),
    ] {
        reset(&db, C, &baseline).await;
        let input = format!(
            "item {{value: {}, unit: {:?}}}",
            label(&item.value),
            item.unit
        );
        match attrs.set(1, &item).await {
            Ok(()) => {
                let got = attrs.get(1, "cost".to_owned()).await.ok().flatten();
                let stored = db
                    .collection::<Document>(C)
                    .find_one(doc! { "_id": 1 })
                    .await
                    .unwrap()
                    .unwrap();
                let ok = got
                    .as_ref()
                    .is_some_and(|g| same(&item_doc(g), &item_doc(&item)))
                    && stored.get_str("patient").ok() == Some("Alice")
                    && stored
                        .get_array("attributes")
                        .is_ok_and(|a| a.len() == 1 && same(&a[0], &item_doc(&item)));
                if !ok {
                    l.fail(
                        "Attributes::set (the brief's cases)",
                        &input,
                        format!("stored {stored}, read back {got:?}"),
                    );
                }
            }
            Err(e) if !must_store && matches!(e, Error::InvalidValue { .. }) => {}
            Err(e) => l.fail(
                "Attributes::set (the brief's cases)",
                &input,
                format!(
                    "expected {}, got {}",
                    if must_store { "Ok" } else { "InvalidValue" },
                    short(&e)
                ),
            ),
        }
    }

    // Keys: a hostile key is stored as given or refused (`InvalidKey` for `$`, `.`, NUL, empty).
    for key in hostile_strings() {
        let input = format!("key {}", label(&Bson::String(key.clone())));
        reset(&db, C, &baseline).await;
        let before = snap(&db).await;
        let item = attr(&key, 1, None);
        let expected = before.with(C, |docs| {
            for d in docs
                .iter_mut()
                .filter(|d| d.get("_id") == Some(&Bson::Int32(1)))
            {
                d.insert("attributes", vec![item_doc(&item)]);
            }
        });
        let (set, after) = l
            .judge(
                "Attributes::set",
                &input,
                &before,
                attrs.set(1, &item),
                |_, after| exactly(&expected, after),
            )
            .await;
        let stored = set.is_some();
        let after = l
            .read(
                "Attributes::get",
                &input,
                &after,
                attrs.get(1, &key),
                |got| match (stored, got) {
                    (true, Some(g)) if *g == item => Ok(()),
                    (false, None) => Ok(()),
                    (_, other) => Err(format!("read back {other:?}")),
                },
            )
            .await;
        let expected = after.with(C, |docs| {
            for d in docs
                .iter_mut()
                .filter(|d| d.get("_id") == Some(&Bson::Int32(1)))
            {
                d.insert("attributes", Vec::<Bson>::new());
            }
        });
        l.judge(
            "Attributes::unset",
            &input,
            &after,
            attrs.unset(1, &key),
            |_, after| exactly(&expected, after),
        )
        .await;
        let after = snap(&db).await;
        if let Ok(filter) = attrs.key(&key).eq(1) {
            l.read(
                "Attributes::find(key(..).eq(1))",
                &input,
                &after,
                attrs.find(filter),
                |found| {
                    // Record 1's item was unset; record 2 has no such key (or it is `cost`/`bmi`).
                    let ids: Vec<&Bson> = found.iter().map(|r| &r.id).collect();
                    if ids.is_empty() || (key == "cost" || key == "bmi") {
                        Ok(())
                    } else {
                        Err(format!("matched {ids:?}"))
                    }
                },
            )
            .await;
        }
    }

    // Ids: `set`, `get`, `unset` on an id no document has must refuse (`NotFound`, or
    // `InvalidValue` for what cannot be an equality: operator documents, regexes, arrays, deep
    // nesting) and write nothing; on a document whose `_id` is that value (where the server
    // stores it), they work on that document and on no other.
    let cost = attr("cost", 5, None);
    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset(&db, C, &baseline).await;
        let before = snap(&db).await;
        let after = l
            .refused(
                "Attributes::set",
                &input,
                &before,
                attrs.set(v.clone(), &cost),
            )
            .await;
        let after = l
            .refused(
                "Attributes::get",
                &input,
                &after,
                attrs.get(v.clone(), "cost".to_owned()),
            )
            .await;
        l.refused(
            "Attributes::unset",
            &input,
            &after,
            attrs.unset(v.clone(), "cost".to_owned()),
        )
        .await;
        if !try_insert(
            &db,
            C,
            doc! { "_id": v.clone(), "patient": "Eve", "attributes": [] },
        )
        .await
        {
            continue;
        }
        let before = snap(&db).await;
        let expected = before.with(C, |docs| {
            for d in docs
                .iter_mut()
                .filter(|d| d.get_str("patient").ok() == Some("Eve"))
            {
                d.insert("attributes", vec![item_doc(&cost)]);
            }
        });
        let (set, after) = l
            .judge(
                "Attributes::set (stored id)",
                &input,
                &before,
                attrs.set(v.clone(), &cost),
                |_, after| exactly(&expected, after),
            )
            .await;
        let after = l
            .read(
                "Attributes::get (stored id)",
                &input,
                &after,
                attrs.get(v.clone(), "cost".to_owned()),
                |got| match (set.is_some(), got) {
                    (true, Some(g)) if *g == cost => Ok(()),
                    (false, None) => Ok(()),
                    (_, other) => Err(format!("read back {other:?}")),
                },
            )
            .await;
        let expected = after.with(C, |docs| {
            for d in docs
                .iter_mut()
                .filter(|d| d.get_str("patient").ok() == Some("Eve"))
            {
                d.insert("attributes", Vec::<Bson>::new());
            }
        });
        l.judge(
            "Attributes::unset (stored id)",
            &input,
            &after,
            attrs.unset(v.clone(), "cost".to_owned()),
            |_, after| exactly(&expected, after),
        )
        .await;
    }

    // Conditions: a hostile value matches exactly the records whose value equals it (`eq`,
    // `is_in`), all the others that have the key (`ne`), or is refused (`InvalidValue`).
    // `eq(doc!{"$gt": 0})` must not match the record whose value is 5, `eq(regex)` must not
    // match strings by pattern.
    let stored: Vec<(i32, Bson)> = vec![
        (10, Bson::Int32(5)),
        (11, "abc".into()),
        (12, "$x".into()),
        (13, Bson::Document(doc! { "a": 1 })),
        (14, Bson::Double(f64::NAN)),
        (15, regex(".*", "")),
        (16, Bson::Null),
        (17, "".into()),
        (18, Bson::Double(f64::INFINITY)),
        (19, "a.b".into()),
    ];
    let records: Vec<Document> = stored
        .iter()
        .map(|(id, v)| doc! { "_id": id, "patient": "P", "attributes": [{ "name": "bmi", "value": v.clone() }] })
        .collect();
    reset(&db, C, &records).await;
    let before = snap(&db).await;
    let bmi = "bmi".to_owned();
    // The brief's cases by name: `eq({$gt: 0})` does not match the record whose value is 5
    // (refused: `InvalidValue`), `eq(regex)` matches the stored regex only, never a string.
    match attrs.key(&bmi).eq(doc! { "$gt": 0 }) {
        Err(Error::InvalidValue { .. }) => {}
        Err(e) => l.fail(
            "Attributes::key(..).eq",
            "{$gt: 0}",
            format!("expected InvalidValue, got {}", short(&e)),
        ),
        Ok(f) => {
            let found = attrs.find(f).await;
            l.fail(
                "Attributes::key(..).eq",
                "{$gt: 0}",
                format!(
                    "not refused; it matched {:?}",
                    found.map(|r| r.iter().map(|r| r.id.clone()).collect::<Vec<_>>())
                ),
            );
        }
    }
    if let Ok(f) = attrs.key(&bmi).eq(regex(".*", "")) {
        match attrs.find(f).await {
            Ok(found) if found.len() == 1 && found[0].id == Bson::Int32(15) => {}
            other => l.fail(
                "Attributes::key(..).eq",
                "/.*/",
                format!(
                    "expected the record holding the regex (15) only, got {:?}",
                    other.map(|r| r.iter().map(|r| r.id.clone()).collect::<Vec<_>>())
                ),
            ),
        }
    }
    for v in hostile() {
        let input = format!("value {}", label(&v));
        let eq: Vec<i32> = stored
            .iter()
            .filter(|(_, s)| mongo_eq(s, &v))
            .map(|(i, _)| *i)
            .collect();
        let ne: Vec<i32> = stored
            .iter()
            .filter(|(_, s)| !mongo_eq(s, &v))
            .map(|(i, _)| *i)
            .collect();
        let conditions: Vec<Condition> = vec![
            ("eq", attrs.key(&bmi).eq(v.clone()), Some(eq.clone())),
            (
                "is_in",
                attrs.key(&bmi).is_in([v.clone()]),
                Some(eq.clone()),
            ),
            ("ne", attrs.key(&bmi).ne(v.clone()), Some(ne)),
            ("gt", attrs.key(&bmi).gt(v.clone()), None),
            ("gte", attrs.key(&bmi).gte(v.clone()), None),
            ("lt", attrs.key(&bmi).lt(v.clone()), None),
            ("lte", attrs.key(&bmi).lte(v.clone()), None),
        ];
        for (op, filter, expected) in conditions {
            let op = format!("Attributes::find(key(bmi).{op}(..))");
            let filter = match filter {
                Ok(f) => f,
                Err(e) => {
                    l.checks += 1;
                    if !typed(&e) {
                        l.fail(&op, &input, format!("untyped error {}", short(&e)));
                    }
                    continue;
                }
            };
            let v = v.clone();
            l.read(&op, &input, &before, attrs.find(filter), |found| {
                let mut ids: Vec<i32> = found.iter().map(|r| r.id.as_i32().unwrap_or(-1)).collect();
                ids.sort_unstable();
                match &expected {
                    Some(e) if ids != *e => Err(format!("matched records {ids:?}, expected {e:?}")),
                    Some(_) => Ok(()),
                    // An order comparison matches values of the same type only (MinKey and
                    // MaxKey aside).
                    None => {
                        let bracket = |b: &Bson| match b {
                            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => 1,
                            other => other.element_type() as u8 as i32 + 100,
                        };
                        let wrong: Vec<i32> = ids
                            .iter()
                            .filter(|i| {
                                let s = &stored.iter().find(|(id, _)| id == *i).unwrap().1;
                                !matches!(v, Bson::MinKey | Bson::MaxKey)
                                    && bracket(s) != bracket(&v)
                            })
                            .copied()
                            .collect();
                        if wrong.is_empty() {
                            Ok(())
                        } else {
                            Err(format!(
                                "matched records {wrong:?}, whose values are of another type"
                            ))
                        }
                    }
                }
            })
            .await;
        }
    }
    l.finish();
}

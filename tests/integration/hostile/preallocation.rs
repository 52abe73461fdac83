//! Preallocation: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_slots")]
#[preallocated(resource = room, slot = day, holder = booked_by)]
struct HSlot {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    room: String,
    day: String,
    booked_by: Option<Bson>,
}

/// The same grid with a typed holder, as the seed declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_typed_slots")]
#[preallocated(resource = room, slot = day, holder = booked_by)]
struct HTypedSlot {
    #[serde(rename = "_id")]
    id: bson::oid::ObjectId,
    room: String,
    day: String,
    booked_by: Option<String>,
}

fn slot(room: &str, day: &str) -> HSlot {
    HSlot {
        id: bson::oid::ObjectId::new(),
        room: room.into(),
        day: day.into(),
        booked_by: None,
    }
}

/// `Slots::{get, book, book_all, cancel, release, available}` with hostile resources, slots and
/// holders. The example: `slots.book(doc!{"$gt": ""}, day, "eve")` books nothing.
#[test]
fn preallocation() {
    big_stack(preallocation_test);
}

async fn preallocation_test() {
    let db = test_db("hostile_preallocation").await;
    pattern_runtime::sync(&db)
        .models(&[HSlot::SCHEMA, HTypedSlot::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let slots = HSlot::collection(&db).slots();
    let mut l = Ledger::new("preallocation", &db);
    const S: &str = "h_slots";
    // r1/d1, r1/d2, r2/d1, and for every hostile string s a slot (s, s): a hostile string is a
    // resource and a slot like any other.
    let mut grid = vec![slot("r1", "d1"), slot("r1", "d2"), slot("r2", "d1")];
    let strings = hostile_strings();
    grid.extend(strings.iter().map(|s| slot(s, s)));
    let allocated = run(slots.allocate(grid.clone())).await;
    match &allocated {
        Outcome::Ok(a) if a.inserted as usize == grid.len() => {}
        Outcome::Ok(a) => l.fail(
            "Slots::allocate",
            "hostile strings as resources and slots",
            format!("{a:?}"),
        ),
        Outcome::Err(e) => l.fail(
            "Slots::allocate",
            "hostile strings as resources and slots",
            short(e),
        ),
        _ => l.fail(
            "Slots::allocate",
            "hostile strings as resources and slots",
            "panicked or timed out",
        ),
    }
    let baseline = both(&db, &[S]).await;
    let holder_of = |s: &Snap, room: &str, day: &str| -> Option<Bson> {
        s.docs(S)
            .into_iter()
            .find(|d| d.get_str("room").ok() == Some(room) && d.get_str("day").ok() == Some(day))
            .and_then(|d| d.get("bookedBy").cloned())
    };
    let booked_only =
        |before: &Snap, after: &Snap, room: &str, day: &str, holder: &Bson| -> Result<(), String> {
            let expected = before.with(S, |docs| {
                for d in docs.iter_mut().filter(|d| {
                    d.get_str("room").ok() == Some(room) && d.get_str("day").ok() == Some(day)
                }) {
                    d.insert("bookedBy", holder.clone());
                }
            });
            exactly(&expected, after)
        };

    // The example, `slots.book(doc! { "$gt": "" }, "d1", "eve")`, does not compile:
    // the resource is a `String` (`tests/ui/ids`). Hostile strings are resources and slots like
    // any other; every value is a holder (below).
    for v in hostile() {
        let input = format!("value {}", label(&v));
        reset_all(&db, &baseline).await;
        let is_slot = |room: &str| matches!(&v, Bson::String(s) if s == room);
        let s = snap(&db).await;
        // As a resource and as a slot, where no slot has it: `NotFound` of the slot.
        let text = v.as_str().map(str::to_owned);
        let s = if let (false, Some(t)) = (is_slot("d1"), &text) {
            let s = l
                .refused(
                    "Slots::book(resource)",
                    &input,
                    &s,
                    slots.book(t.clone(), "d1", "eve"),
                )
                .await;
            let s = l
                .refused(
                    "Slots::book(slot)",
                    &input,
                    &s,
                    slots.book("r2", t.clone(), "eve"),
                )
                .await;
            let s = l
                .refused(
                    "Slots::cancel(resource)",
                    &input,
                    &s,
                    slots.cancel(t.clone(), "d1", "eve"),
                )
                .await;
            let s = l
                .refused(
                    "Slots::release(resource)",
                    &input,
                    &s,
                    slots.release(t.clone(), "d1"),
                )
                .await;
            let s = l
                .refused(
                    "Slots::release(slot)",
                    &input,
                    &s,
                    slots.release("r2", t.clone()),
                )
                .await;
            let s = l
                .refused(
                    "Slots::book_all",
                    &input,
                    &s,
                    slots.book_all(
                        &[
                            ("r1".to_owned(), "d1".to_owned()),
                            (t.clone(), "d1".to_owned()),
                        ],
                        "eve",
                    ),
                )
                .await;
            let s = l
                .read(
                    "Slots::get(resource)",
                    &input,
                    &s,
                    slots.get(t.clone(), "d1"),
                    |got| {
                        if got.is_none() {
                            Ok(())
                        } else {
                            Err(format!("{got:?}"))
                        }
                    },
                )
                .await;
            l.read(
                "Slots::get(slot)",
                &input,
                &s,
                slots.get("r2", t.clone()),
                |got| {
                    if got.is_none() {
                        Ok(())
                    } else {
                        Err(format!("{got:?}"))
                    }
                },
            )
            .await
        } else {
            s
        };

        // Ranges: the free slots of a resource with `from <= day < to`, compared as MongoDB
        // compares (strings with strings, byte by byte; another type matches nothing).
        let in_range = |day: &str, from: &str, to: &str| {
            day.as_bytes() >= from.as_bytes() && day.as_bytes() < to.as_bytes()
        };
        let top = "\u{10FFFF}".to_owned();
        let ranges = text.iter().flat_map(|t| {
            [
                (t.clone(), String::new(), top.clone()),
                ("r1".to_owned(), t.clone(), top.clone()),
                ("r1".to_owned(), String::new(), t.clone()),
            ]
        });
        for (resource, from, to) in ranges {
            let want: Vec<String> = grid
                .iter()
                .filter(|g| resource == g.room && in_range(&g.day, &from, &to))
                .map(|g| g.day.clone())
                .collect();
            l.read(
                "Slots::available",
                &format!(
                    "{input} (resource {}, from {}, to {})",
                    label(&Bson::from(resource.as_str())),
                    label(&Bson::from(from.as_str())),
                    label(&Bson::from(to.as_str()))
                ),
                &s,
                slots.available(resource.clone(), from.clone(), to.clone()),
                |got| {
                    let mut days: Vec<String> = got.iter().map(|g| g.day.clone()).collect();
                    days.sort();
                    let mut want = want.clone();
                    want.sort();
                    if days == want {
                        Ok(())
                    } else {
                        Err(format!("{} slots, expected {}", days.len(), want.len()))
                    }
                },
            )
            .await;
        }

        // A hostile string's own slot: booked, read, cancelled and released exactly there.
        if let Bson::String(name) = &v {
            let s = snap(&db).await;
            let (done, s) = l
                .judge(
                    "Slots::book (its own slot)",
                    &input,
                    &s,
                    slots.book(name.as_str(), name.as_str(), "eve"),
                    |b, after| {
                        if b.booked_by != Some("eve".into()) {
                            return Err(format!("returned {b:?}"));
                        }
                        booked_only(&s, after, name, name, &"eve".into())
                    },
                )
                .await;
            if done.is_some() {
                let s = l
                    .read(
                        "Slots::get (its own slot)",
                        &input,
                        &s,
                        slots.get(name.as_str(), name.as_str()),
                        |got| match got {
                            Some(g)
                                if g.room == *name
                                    && g.day == *name
                                    && g.booked_by == Some("eve".into()) =>
                            {
                                Ok(())
                            }
                            other => Err(format!("{other:?}")),
                        },
                    )
                    .await;
                let (_, s) = l
                    .judge(
                        "Slots::cancel (its own slot)",
                        &input,
                        &s,
                        slots.cancel(name.as_str(), name.as_str(), "eve"),
                        |_, after| booked_only(&s, after, name, name, &Bson::Null),
                    )
                    .await;
                let (_, s) = l
                    .judge(
                        "Slots::book (its own slot, again)",
                        &input,
                        &s,
                        slots.book(name.as_str(), name.as_str(), "bob"),
                        |_, after| booked_only(&s, after, name, name, &"bob".into()),
                    )
                    .await;
                l.judge(
                    "Slots::release (its own slot)",
                    &input,
                    &s,
                    slots.release(name.as_str(), name.as_str()),
                    |_, after| booked_only(&s, after, name, name, &Bson::Null),
                )
                .await;
            }
        }

        // As the holder of r1/d1: stored exactly as given, cancelled by the same value; or
        // refused (`InvalidValue`: null, operator documents, regexes, arrays) with nothing written.
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        let (done, s) = l
            .judge(
                "Slots::book(holder)",
                &input,
                &s,
                slots.book("r1", "d1", v.clone()),
                |_, after| booked_only(&s, after, "r1", "d1", &v),
            )
            .await;
        if done.is_some() {
            let s = l
                .read(
                    "Slots::get (booked)",
                    &input,
                    &s,
                    slots.get("r1", "d1"),
                    |got| match got.as_ref().and_then(|g| g.booked_by.as_ref()) {
                        Some(h) if same(h, &v) => Ok(()),
                        other => Err(format!("holder {:?}", other.map(label))),
                    },
                )
                .await;
            let s = l
                .refused(
                    "Slots::book (taken)",
                    &input,
                    &s,
                    slots.book("r1", "d1", "eve"),
                )
                .await;
            let expected = before_free(&s, S, "r1", "d1");
            l.judge(
                "Slots::cancel(holder)",
                &input,
                &s,
                slots.cancel("r1", "d1", v.clone()),
                |_, after| exactly(&expected, after),
            )
            .await;
        } else {
            // Refused: r1/d1 is still free.
            if holder_of(&s, "r1", "d1").is_some_and(|h| h != Bson::Null) {
                l.fail("Slots::book(holder)", &input, "refused, but r1/d1 is held");
            }
        }
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        l.judge(
            "Slots::book_all(holder)",
            &input,
            &s,
            slots.book_all(&[("r1", "d1"), ("r1", "d2")], v.clone()),
            |_, after| {
                let expected = s.with(S, |docs| {
                    for d in docs.iter_mut().filter(|d| {
                        d.get_str("room").ok() == Some("r1")
                            && matches!(d.get_str("day").ok(), Some("d1" | "d2"))
                    }) {
                        d.insert("bookedBy", v.clone());
                    }
                });
                exactly(&expected, after)
            },
        )
        .await;
    }

    // A holder of another type than the model's: refused, or stored and read back; never
    // written and then reported as an error.
    let typed = HTypedSlot::collection(&db).slots();
    let t = HTypedSlot {
        id: bson::oid::ObjectId::new(),
        room: "r1".into(),
        day: "d1".into(),
        booked_by: None,
    };
    typed.allocate(vec![t]).await.unwrap();
    let typed_baseline = both(&db, &["h_typed_slots"]).await;
    for v in [
        Bson::Int32(42),
        Bson::Document(doc! { "name": "eve" }),
        Bson::Double(f64::NAN),
    ] {
        reset_all(&db, &typed_baseline).await;
        let s = snap(&db).await;
        l.judge(
            "Slots::book (String holder model)",
            &format!("holder {}", label(&v)),
            &s,
            typed.book("r1", "d1", v.clone()),
            |_, _| Ok(()),
        )
        .await;
    }
    l.finish();
}

fn before_free(s: &Snap, c: &str, room: &str, day: &str) -> Snap {
    s.with(c, |docs| {
        for d in docs
            .iter_mut()
            .filter(|d| d.get_str("room").ok() == Some(room) && d.get_str("day").ok() == Some(day))
        {
            d.insert("bookedBy", Bson::Null);
        }
    })
}

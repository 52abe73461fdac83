//! Computed: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_accounts")]
struct HAccount {
    #[serde(rename = "_id")]
    id: String,
    #[computed(sum = HCharge.amount, by = account_id)]
    total: i64,
    #[computed(count = HCharge, by = account_id)]
    charges: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "h_charges")]
struct HCharge {
    #[serde(rename = "_id")]
    id: i64,
    account_id: Option<String>,
    amount: i64,
    note: Bson,
}

/// `ModelCollection::{update, delete}` and `ComputedFields::rebuild` with hostile ids; updates that
/// set the `by` pointer, the summed field and another field to hostile values: a pointer names
/// exactly one target (or none), never a set of them.
#[test]
fn computed() {
    big_stack(computed_test);
}

async fn computed_test() {
    let db = test_db("hostile_computed").await;
    pattern_runtime::sync(&db)
        .models(&[HAccount::SCHEMA, HCharge::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let charges = HCharge::collection(&db);
    let accounts = HAccount::collection(&db).computed();
    let mut l = Ledger::new("computed", &db);
    const A: &str = "h_accounts";
    const CH: &str = "h_charges";
    let account = |id: &str, total: i64, n: i64| doc! { "_id": id, "total": total, "charges": n };
    let mut base_accounts = vec![account("a1", 10, 1), account("a2", 0, 0)];
    // An account for every hostile string: a pointer may name it, exactly.
    let strings = hostile_strings();
    base_accounts.extend(strings.iter().map(|s| account(s, 0, 0)));
    reset(&db, A, &base_accounts).await;
    reset(
        &db,
        CH,
        &[doc! { "_id": 1_i64, "accountId": "a1", "amount": 10_i64, "note": "n" }],
    )
    .await;
    let baseline = both(&db, &[A, CH]).await;
    let acct = |s: &Snap, id: &Bson| -> Option<(i64, i64)> {
        s.docs(A)
            .into_iter()
            .find(|d| d.get("_id").is_some_and(|i| same(i, id)))
            .map(|d| {
                let n = |k: &str| match d.get(k) {
                    Some(Bson::Int32(i)) => i64::from(*i),
                    Some(Bson::Int64(i)) => *i,
                    Some(Bson::Double(d)) => *d as i64,
                    _ => -999,
                };
                (n("total"), n("charges"))
            })
    };

    for v in hostile() {
        let input = format!("value {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        // Ids are typed (`HCharge`'s an `i64`, `HAccount`'s a `String`): only a string value
        // can name an account, and one names exactly the account whose `_id` it is.
        let account_id = match &v {
            Bson::String(id) => Some(id.clone()),
            _ => None,
        };
        let is_account = account_id.as_ref().is_some_and(|id| strings.contains(id));
        if let (Some(id), false) = (&account_id, is_account) {
            l.refused(
                "ComputedFields::rebuild",
                &input,
                &s,
                accounts.rebuild(id.clone()),
            )
            .await;
        } else if let Some(id) = account_id.as_ref().filter(|_| is_account) {
            l.read(
                "ComputedFields::rebuild (its account)",
                &input,
                &s,
                accounts.rebuild(id.clone()),
                |r| {
                    if r.repaired == 0 {
                        Ok(())
                    } else {
                        Err(format!("{r:?}"))
                    }
                },
            )
            .await;
        }

        // The pointer set to the value: the charge moves to the account whose `_id` is exactly
        // the value (a hostile string's own account), to nobody for null, and is refused
        // (`NotFound`: no such account; `InvalidValue`) otherwise, with nothing written.
        let s = snap(&db).await;
        l.judge(
            "ModelCollection::update({$set: {accountId: value}})",
            &input,
            &s,
            charges.update(1, doc! { "$set": { "accountId": v.clone() } }),
            |_, after| {
                let charge = after.docs(CH).into_iter().next();
                if !charge
                    .as_ref()
                    .and_then(|c| c.get("accountId"))
                    .is_some_and(|p| same(p, &v))
                {
                    return Err(format!("the charge is {charge:?}"));
                }
                let moved_to = if is_account { Some((10, 1)) } else { None };
                if !is_account && v != Bson::Null {
                    return Err("no account has this `_id`, yet the charge moved".into());
                }
                if acct(after, &"a1".into()) != Some((0, 0))
                    || (is_account && acct(after, &v) != moved_to)
                {
                    return Err(format!(
                        "a1 is {:?}, the target {:?}",
                        acct(after, &"a1".into()),
                        acct(after, &v)
                    ));
                }
                // No other account changed.
                let others = |s: &Snap| -> Vec<Document> {
                    s.docs(A)
                        .into_iter()
                        .filter(|d| {
                            d.get_str("_id").ok() != Some("a1")
                                && d.get("_id").is_none_or(|i| !same(i, &v))
                        })
                        .collect()
                };
                if others(&s) != others(after) {
                    return Err("another account changed".into());
                }
                Ok(())
            },
        )
        .await;

        // The summed field set to the value: a number is summed, anything else counts as no
        // amount (stored as given); NaN and the infinities are refused (`InvalidValue`).
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        l.judge(
            "ModelCollection::update({$set: {amount: value}})",
            &input,
            &s,
            charges.update(1, doc! { "$set": { "amount": v.clone() } }),
            |_, after| {
                let charge = after.docs(CH).into_iter().next();
                if !charge
                    .as_ref()
                    .and_then(|c| c.get("amount"))
                    .is_some_and(|p| same(p, &v))
                {
                    return Err(format!("the charge is {charge:?}"));
                }
                let amount = match &v {
                    Bson::Int32(i) => i64::from(*i),
                    Bson::Int64(i) => *i,
                    Bson::Double(d) => *d as i64,
                    _ => 0,
                };
                if acct(after, &"a1".into()) == Some((amount, 1)) {
                    Ok(())
                } else {
                    Err(format!("a1 is {:?}", acct(after, &"a1".into())))
                }
            },
        )
        .await;

        // Another field: stored as given, no account touched.
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        l.judge(
            "ModelCollection::update({$set: {note: value}})",
            &input,
            &s,
            charges.update(1, doc! { "$set": { "note": v.clone() } }),
            |_, after| {
                let expected = s.with(CH, |docs| {
                    for d in docs.iter_mut() {
                        d.insert("note", v.clone());
                    }
                });
                exactly(&expected, after)
            },
        )
        .await;

        // A new charge pointing at a hostile string: counted in that account exactly.
        if let Bson::String(id) = &v {
            reset_all(&db, &baseline).await;
            let s = snap(&db).await;
            let c = HCharge {
                id: 2,
                account_id: Some(id.clone()),
                amount: 7,
                note: "x".into(),
            };
            l.judge(
                "ModelCollection::insert(accountId: value)",
                &input,
                &s,
                charges.insert(&c),
                |_, after| {
                    if acct(after, &v) == Some((7, 1)) && acct(after, &"a1".into()) == Some((10, 1))
                    {
                        Ok(())
                    } else {
                        Err(format!("the account is {:?}", acct(after, &v)))
                    }
                },
            )
            .await;
        }
    }
    // Pointers that reach the toolkit from the database, not from the caller: a charge stored by
    // someone else whose `accountId` is a hostile value, or one a `$rename` moves into
    // `accountId`. Its update, deletion or rename counts in the account whose `_id` is exactly
    // that value (none here), never in one an operator would select; or is refused with nothing
    // written.
    for v in hostile() {
        let input = format!("stored accountId {}", label(&v));
        let is_account = matches!(&v, Bson::String(id) if strings.contains(id));
        if is_account || v == Bson::Null {
            continue;
        }
        reset_all(&db, &baseline).await;
        if !try_insert(
            &db,
            CH,
            doc! { "_id": 5_i64, "accountId": v.clone(), "amount": 10_i64, "note": v.clone() },
        )
        .await
        {
            continue;
        }
        let untouched = |s: &Snap, after: &Snap| -> Result<(), String> {
            if s.0.get(A) == after.0.get(A) {
                Ok(())
            } else {
                Err(format!(
                    "an account changed: {}",
                    s.diff(after).unwrap_or_default()
                ))
            }
        };
        let s = snap(&db).await;
        let (_, s) = l
            .judge(
                "ModelCollection::update (stored pointer, summed field)",
                &input,
                &s,
                charges.update(5, doc! { "$set": { "amount": 20 } }),
                |_, after| untouched(&s, after),
            )
            .await;
        let (_, _) = l
            .judge(
                "ModelCollection::delete (stored pointer)",
                &input,
                &s,
                charges.delete(5),
                |_, after| untouched(&s, after),
            )
            .await;
        // `note` holds the value too: renamed onto `accountId` of charge 1 (which counts in a1).
        reset_all(&db, &baseline).await;
        db.collection::<Document>(CH)
            .update_one(
                doc! { "_id": 1_i64 },
                doc! { "$set": { "note": v.clone() } },
            )
            .await
            .ok();
        let s = snap(&db).await;
        l.judge(
            "ModelCollection::update({$rename: {note: accountId}})",
            &input,
            &s,
            charges.update(1, doc! { "$rename": { "note": "accountId" } }),
            |_, after| {
                // a1 loses the charge; no other account gains it (none has this `_id`).
                let others = |s: &Snap| -> Vec<Document> {
                    s.docs(A)
                        .into_iter()
                        .filter(|d| d.get_str("_id").ok() != Some("a1"))
                        .collect()
                };
                if others(&s) != others(after) {
                    return Err(format!(
                        "another account changed: {}",
                        s.diff(after).unwrap_or_default()
                    ));
                }
                Ok(())
            },
        )
        .await;
    }
    l.finish();
}

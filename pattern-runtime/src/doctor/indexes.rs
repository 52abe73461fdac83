//! The doctor's index checks of one collection: declared indexes the server lacks, indexes no
//! model declares, unused ones, prefixes of others, and shard keys.

use super::*;

/// What the index checks know of one collection.
pub(super) struct OnCollection {
    pub(super) name: &'static str,
    /// The indexes the checked models declare on it.
    pub(super) declared: Vec<Declared>,
    /// The names any registered model declares on it, and its shard keys' supporting indexes.
    pub(super) managed: BTreeSet<&'static str>,
    /// The shard keys declared for it: the indexes that support one are needed without reads.
    pub(super) shard_keys: Vec<&'static ShardKey>,
}

/// The declared indexes the server lacks, the ones no model declares, the unused ones and the
/// prefixes of others, on one collection.
pub(super) async fn check_indexes(
    db: &Database,
    on: &OnCollection,
    options: &DoctorOptions,
    stats_skipped: &mut bool,
    report: &mut DoctorReport,
) -> Result<()> {
    let (collection, declared, managed) = (on.name, &on.declared, &on.managed);
    let existing: Vec<Document> = match db
        .run_cursor_command(doc! { "listIndexes": collection })
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if server_code(&e) == Some(NAMESPACE_NOT_FOUND) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let name_of = |i: &Document| i.get_str("name").unwrap_or_default().to_owned();
    let key_of = |i: &Document| i.get_document("key").cloned().unwrap_or_default();
    // Declared and missing (by name, or the same keys under another name).
    let mut seen: BTreeSet<&'static str> = BTreeSet::new();
    for d in declared {
        if !seen.insert(d.spec.name()) {
            continue;
        }
        let present = existing
            .iter()
            .any(|i| name_of(i) == d.spec.name() || key_of(i) == d.spec.key_document());
        if present {
            continue;
        }
        let (check, fix) = match d.spec.expire_after_seconds() {
            Some(secs) => (
                Check::MissingTtl,
                format!(
                    "documents meant to expire after {secs} s never do: run \
                     `pattern_runtime::sync(&db)` at start-up, which creates it"
                ),
            ),
            None => (
                Check::MissingIndex,
                "run `pattern_runtime::sync(&db)` at start-up, which creates it".to_owned(),
            ),
        };
        report.findings.push(Finding {
            check,
            model: Some(d.model),
            collection: collection.to_owned(),
            subject: d.spec.name().to_owned(),
            figure: format!("declared {}, not on the server", d.spec.key_document()),
            fix,
            documents: Vec::new(),
        });
    }
    // On the server and declared by no model.
    for i in &existing {
        let name = name_of(i);
        if name == "_id_" || managed.contains(name.as_str()) {
            continue;
        }
        report.findings.push(Finding {
            check: Check::UndeclaredIndex,
            model: None,
            collection: collection.to_owned(),
            subject: name.clone(),
            figure: format!("{} on the server, declared by no model", key_of(i)),
            fix: format!(
                "declare it with `#[index(...)]` on the model whose queries need it; otherwise \
                 hide it first (`SyncOptions::hide_unmanaged`), watch that nothing slows down, \
                 then drop it (`dropIndexes: \"{collection}\", index: \"{name}\"`)"
            ),
            documents: Vec::new(),
        });
    }
    // A prefix of another index.
    for a in &existing {
        let name = name_of(a);
        if !plain(a) || a.get_bool("unique").unwrap_or(false) || name == "_id_" {
            continue;
        }
        let ka = key_of(a);
        let longer = existing.iter().find(|b| {
            let kb = key_of(b);
            plain(b)
                && kb.len() > ka.len()
                && ka.iter().zip(kb.iter()).all(|((pa, va), (pb, vb))| {
                    pa == pb && number(va).is_some() && number(va) == number(vb)
                })
                && a.get_document("collation").ok() == b.get_document("collation").ok()
        });
        if let Some(b) = longer {
            let declaration = declared.iter().find(|d| d.spec.name() == name);
            let declared_by = declaration.map(|d| d.model);
            let by_pattern = declaration.is_some_and(|d| d.by_pattern);
            report.findings.push(Finding {
                check: Check::PrefixIndex,
                model: declared_by,
                collection: collection.to_owned(),
                subject: name.clone(),
                figure: format!(
                    "its keys {ka} begin `{}` {}, which serves the same queries",
                    name_of(b),
                    key_of(b)
                ),
                fix: match declared_by {
                    Some(model) if by_pattern => format!(
                        "a pattern of `{model}` needs these keys, and `{b}` is declared by no \
                         model: declare `{b}` with `#[index(...)]` on the model whose queries \
                         need it (the sync then leaves this one out), then drop this one \
                         (`dropIndexes: \"{collection}\", index: \"{name}\"`)",
                        b = name_of(b)
                    ),
                    Some(model) => format!(
                        "remove this `#[index]` from `{model}` and drop the index; every write \
                         pays for it"
                    ),
                    None => format!(
                        "drop it (`dropIndexes: \"{collection}\", index: \"{name}\"`): every \
                         write pays for it"
                    ),
                },
                documents: Vec::new(),
            });
        }
    }
    // Unused since the server started.
    if existing.is_empty() || *stats_skipped {
        return Ok(());
    }
    let stats: Vec<Document> = match db
        .collection::<Document>(collection)
        .aggregate(vec![doc! { "$indexStats": {} }])
        .max_time(options.max_time)
        .await
    {
        Ok(cursor) => cursor.try_collect().await?,
        Err(e) if unsupported(&e) => {
            *stats_skipped = true;
            report.skipped.push(Skipped {
                check: Check::UnusedIndex,
                collection: None,
                reason: reason("`$indexStats`", &e),
            });
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    // On a sharded cluster, one row per shard: the accesses add up.
    let mut ops: BTreeMap<String, (f64, Option<Bson>)> = BTreeMap::new();
    for row in &stats {
        let accesses = row.get_document("accesses").ok();
        let n = accesses
            .and_then(|a| a.get("ops"))
            .and_then(number)
            .unwrap_or(0.0);
        let entry = ops.entry(name_of(row)).or_insert((0.0, None));
        entry.0 += n;
        if entry.1.is_none() {
            entry.1 = accesses.and_then(|a| a.get("since")).cloned();
        }
    }
    for i in &existing {
        let name = name_of(i);
        let needed_without_reads = name == "_id_"
            || i.get_bool("unique").unwrap_or(false)
            || i.contains_key("expireAfterSeconds")
            || i.get_bool("hidden").unwrap_or(false)
            || on.shard_keys.iter().any(|k| k.is_supported_by(&key_of(i)));
        let Some((n, since)) = ops.get(&name) else {
            continue;
        };
        // A pattern's index serves the pattern's own operations and checks, which the user
        // does not declare and cannot remove.
        let by_pattern = declared
            .iter()
            .any(|d| d.spec.name() == name && d.by_pattern);
        if needed_without_reads || by_pattern || *n > 0.0 {
            continue;
        }
        let since = match since {
            Some(Bson::DateTime(t)) => {
                let counted = bson::DateTime::now().timestamp_millis() - t.timestamp_millis();
                let counted = Duration::from_millis(u64::try_from(counted).unwrap_or(0));
                if counted < options.unused_after {
                    // Too short a watch for 0 accesses to mean anything.
                    if !report.skipped.iter().any(|k| {
                        k.check == Check::UnusedIndex && k.collection.as_deref() == Some(collection)
                    }) {
                        report.skipped.push(Skipped {
                            check: Check::UnusedIndex,
                            collection: Some(collection.to_owned()),
                            reason: format!(
                                "its indexes' accesses were counted for {} s only (`{name}`, \
                                 for one); an index is judged once counted for {} s \
                                 (`DoctorOptions::unused_after`)",
                                counted.as_secs(),
                                options.unused_after.as_secs()
                            ),
                        });
                    }
                    continue;
                }
                t.try_to_rfc3339_string()
                    .map_or_else(|_| format!(" since {t}"), |t| format!(" since {t}"))
            }
            _ => {
                // Without `since`, a count of 0 says nothing about how long it was watched.
                if !report.skipped.iter().any(|k| {
                    k.check == Check::UnusedIndex && k.collection.as_deref() == Some(collection)
                }) {
                    report.skipped.push(Skipped {
                        check: Check::UnusedIndex,
                        collection: Some(collection.to_owned()),
                        reason: "the server's `$indexStats` gives no `accesses.since`, so a \
                                 count of 0 cannot say since when"
                            .to_owned(),
                    });
                }
                continue;
            }
        };
        let model = declared
            .iter()
            .find(|d| d.spec.name() == name)
            .map(|d| d.model);
        report.findings.push(Finding {
            check: Check::UnusedIndex,
            model,
            collection: collection.to_owned(),
            subject: name.clone(),
            figure: format!("0 accesses{since} (counted from the server's start)"),
            fix: format!(
                "if no query needs it, hide it (`collMod: \"{collection}\", index: {{name: \
                 \"{name}\", hidden: true}}`), watch that nothing slows down, then remove its \
                 declaration and drop it; counts restart with the server, so judge after a \
                 representative period"
            ),
            documents: Vec::new(),
        });
    }
    Ok(())
}

/// A shard key declared and not in place, on a sharded cluster; skipped elsewhere.
pub(super) async fn check_shard_keys(
    db: &Database,
    models: &[&'static ModelSchema],
    report: &mut DoctorReport,
) -> Result<()> {
    let keyed: Vec<_> = models
        .iter()
        .filter_map(|m| m.shard_key().map(|k| (*m, k)))
        .collect();
    if keyed.is_empty() {
        return Ok(());
    }
    if let Some(reason) = shard::not_a_cluster(db).await? {
        report.skipped.push(Skipped {
            check: Check::ShardKey,
            collection: None,
            reason,
        });
        return Ok(());
    }
    for (model, key) in keyed {
        let (figure, fix) = match shard::sharded_on(db, model.collection()).await? {
            Some(existing) if shard::is_key(key, &existing) => continue,
            Some(existing) => (
                format!("sharded on {existing}, declared {}", key.key_document()),
                "changing a shard key is a decision for a person: `reshardCollection` \
                 (MongoDB 5.0+), or change the declaration to the key in place"
                    .to_owned(),
            ),
            None => (
                format!("not sharded, declared {}", key.key_document()),
                "run `pattern_runtime::sync(&db)` at start-up, which shards it".to_owned(),
            ),
        };
        report.findings.push(Finding {
            check: Check::ShardKey,
            model: Some(model.name()),
            collection: model.collection().to_owned(),
            subject: "shard key".to_owned(),
            figure,
            fix,
            documents: Vec::new(),
        });
    }
    Ok(())
}

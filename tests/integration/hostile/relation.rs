//! Two-way relation: the hostile inputs through its operations.

use super::*;

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "h_teams")]
struct HTeam {
    #[serde(rename = "_id")]
    id: Bson,
    #[relation(inverse = team)]
    #[bounded(100)]
    members: Vec<pattern_runtime::Ref<HPlayer>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[model(collection = "h_players")]
struct HPlayer {
    #[serde(rename = "_id")]
    id: Bson,
    #[relation(inverse = members)]
    team: Option<pattern_runtime::Ref<HTeam>>,
}

/// `TwoWay::assign` with hostile child and owner ids: an id is an equality in the owners'
/// filters (`{_id: owner}`, `{members: child}`), so an operator document or a regex would match
/// other teams; each is refused with nothing written, or names exactly the stored document.
#[test]
fn relation() {
    big_stack(relation_test);
}

async fn relation_test() {
    let db = test_db("hostile_relation").await;
    pattern_runtime::sync(&db)
        .models(&[HTeam::SCHEMA, HPlayer::SCHEMA])
        .options(&pattern_runtime::SyncOptions::new())
        .await
        .unwrap();
    let relation = HPlayer::collection(&db).relation(HPlayer::FIELDS.team);
    let mut l = Ledger::new("relation", &db);
    const T: &str = "h_teams";
    const P: &str = "h_players";
    let team = |id: Bson, members: Vec<Bson>| doc! { "_id": id, "members": members };
    let player = |id: Bson, team: Bson| doc! { "_id": id, "team": team };
    reset(
        &db,
        T,
        &[
            team("red".into(), vec!["p1".into()]),
            team("blue".into(), vec!["p2".into()]),
        ],
    )
    .await;
    reset(
        &db,
        P,
        &[
            player("p1".into(), "red".into()),
            player("p2".into(), "blue".into()),
        ],
    )
    .await;
    let baseline = both(&db, &[T, P]).await;

    for v in hostile() {
        let input = format!("id {}", label(&v));
        reset_all(&db, &baseline).await;
        let s = snap(&db).await;
        // No team and no player has this id: refused (NotFound or InvalidValue), nothing written.
        let s = l
            .refused(
                "TwoWay::assign(child: value)",
                &input,
                &s,
                relation.assign(&v, &Bson::from("red")),
            )
            .await;
        l.refused(
            "TwoWay::assign(owner: value)",
            &input,
            &s,
            relation.assign(&Bson::from("p1"), &v),
        )
        .await;

        // A team and a player stored with `_id` `v`: the assignment names exactly them.
        if !try_insert(&db, T, team(v.clone(), vec![])).await
            || !try_insert(&db, P, player(v.clone(), Bson::Null)).await
        {
            continue;
        }
        let s = snap(&db).await;
        l.judge(
            "TwoWay::assign(stored child and owner)",
            &input,
            &s,
            relation.assign(&v, &v),
            |_, after| {
                let expected = s
                    .with(T, |docs| {
                        for d in docs
                            .iter_mut()
                            .filter(|d| d.get("_id").is_some_and(|id| bytes_of(id) == bytes_of(&v)))
                        {
                            d.insert("members", vec![v.clone()]);
                        }
                    })
                    .with(P, |docs| {
                        for d in docs
                            .iter_mut()
                            .filter(|d| d.get("_id").is_some_and(|id| bytes_of(id) == bytes_of(&v)))
                        {
                            d.insert("team", v.clone());
                        }
                    });
                exactly(&expected, after)
            },
        )
        .await;
    }
    // The relation's check and repair over what the loop left: nothing else was touched.
    reset_all(&db, &baseline).await;
    let checked = relation.check().await.unwrap();
    if !checked.is_clean() {
        l.fail("TwoWay::check", "baseline", format!("{checked}"));
    }
    l.finish();
}

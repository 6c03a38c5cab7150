//! Several collectors writing one run at once (`collect --run-key`), on
//! both backends: every probe stored exactly once, link buckets merged, and
//! each collector's reject counts added to the others' rather than
//! overwriting them.

mod common;

use common::*;
use intpath_collector::capture::{Collector, Options};
use intpath_core::plan::Plan;
use intpath_store::query::{self, RunInfo};
use intpath_store::Db;
use intpath_store::Store;
use intpath_test_support::on_both_backends;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `plan()` plus path 3, which follows path 1 hop for hop: two collectors
/// each seeing one of them merge into the same link buckets.
fn twin_plan() -> Plan {
    let mut plan = plan();
    let mut twin = plan.paths[0].clone();
    twin.id = 3;
    plan.paths.push(twin);
    plan
}

fn shared(key: &str) -> Options {
    Options {
        run_key: Some(key.into()),
        ..options()
    }
}

/// One number from a statement, straight from the database.
async fn scalar(db: &Db, sql: &str) -> i64 {
    match db {
        Db::Sqlite(path) => {
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
                .await
                .unwrap();
            let n = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
        Db::Postgres(url) => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let n = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
    }
}

on_both_backends!(two_collectors_store_every_probe_once_and_add_their_rejects);

async fn two_collectors_store_every_probe_once_and_add_their_rejects(db: String) {
    let db: Db = db.parse().unwrap();
    let links = Arc::new(line4());
    let plan = twin_plan();
    let n = 2_000;
    let frames: Vec<(u16, Vec<u8>)> = probes(&links, &plan, n)
        .into_iter()
        .map(|p| (p.payload.path_id, p.to_bytes().unwrap()))
        .collect();
    // What each collector must reject: cut-off frames (3 and 5 of them) and
    // probes of a path the plan does not have (2 and 1).
    let mut unknown = probes(&links, &plan, 1).remove(0);
    unknown.sr.path_id = 9;
    unknown.payload.path_id = 9;
    let unknown = unknown.to_bytes().unwrap();
    let cut = frames[0].1[..frames[0].1.len() - 20].to_vec();
    let bad = [(3, 2), (5, 1)].map(|(cuts, unknowns)| {
        let mut v = vec![cut.clone(); cuts];
        v.extend(std::iter::repeat_n(unknown.clone(), unknowns));
        v
    });

    let mut collectors = Vec::new();
    for _ in 0..2 {
        let store = Store::open(&db).await.unwrap();
        let c = Collector::start(store, links.clone(), &plan, shared("split"))
            .await
            .unwrap();
        collectors.push(c);
    }
    assert_eq!(collectors[0].run_id(), collectors[1].run_id(), "one run");
    // Collector 0 sinks paths 1 and 2, collector 1 path 3; both at once, the
    // bad frames spread through the good ones so that both write their
    // counts in several batches.
    let feeds = collectors.iter().enumerate().map(|(i, c)| {
        let intake = c.intake();
        let mine: Vec<Vec<u8>> = frames
            .iter()
            .filter(|(path, _)| (*path == 3) == (i == 1))
            .map(|(_, f)| f.clone())
            .collect();
        let bad = bad[i].clone();
        tokio::spawn(async move {
            let (mut good, mut rejected) = (0, BTreeMap::<&str, i64>::new());
            let every = mine.len() / bad.len();
            for (k, f) in mine.iter().enumerate() {
                intake.submit_frame(f).await.unwrap();
                good += 1;
                if k % every == 0 && k / every < bad.len() {
                    if k > 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
                    }
                    let r = intake.submit_frame(&bad[k / every]).await.unwrap_err();
                    *rejected.entry(r.name()).or_default() += 1;
                }
            }
            (good, rejected)
        })
    });
    let mut fed = Vec::new();
    for f in feeds.collect::<Vec<_>>() {
        fed.push(f.await.unwrap());
    }
    assert_eq!(fed[0].0, 2 * n as usize);
    assert_eq!(fed[1].0, n as usize);
    let mut expected = fed[0].1.clone();
    for (reason, k) in &fed[1].1 {
        *expected.entry(reason).or_default() += k;
    }
    assert_eq!(expected.values().sum::<i64>(), 11, "{expected:?}");
    assert_eq!(expected.len(), 2, "two reasons: {expected:?}");
    let mut total = 0;
    for c in collectors {
        total += c.shutdown().await.unwrap().probes;
    }
    assert_eq!(total, 3 * u64::from(n));

    let store = Store::open_existing(&db).await.unwrap();
    let runs = query::runs(&store).await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0].probes, runs[0].hops),
        (3 * i64::from(n), 12 * i64::from(n))
    );
    let run = RunInfo::load(&store, None).await.unwrap();
    assert_eq!(store.collectors(run.id).await.unwrap(), 2);
    let stored: BTreeMap<String, i64> = query::rejects(&store, &run)
        .await
        .unwrap()
        .into_iter()
        .collect();
    let expected: BTreeMap<String, i64> = expected
        .into_iter()
        .map(|(r, k)| (r.to_owned(), k))
        .collect();
    assert_eq!(stored, expected, "both collectors' rejects, added");
    store.close().await;

    let repeated = scalar(
        &db,
        "SELECT COUNT(*) FROM (SELECT path_id, seq FROM probes GROUP BY path_id, seq \
         HAVING COUNT(*) <> 1) AS r",
    )
    .await;
    assert_eq!(repeated, 0, "every probe stored exactly once");
    // s1 -> s2 is on paths 1 and 3: both collectors' samples add up.
    let first = links.egress_link("s1", 2).unwrap();
    let samples = scalar(
        &db,
        &format!("SELECT CAST(SUM(samples) AS BIGINT) FROM link_buckets WHERE link_id = {first}"),
    )
    .await;
    assert_eq!(samples, 2 * i64::from(n));
}

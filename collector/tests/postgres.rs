//! What only a shared PostgreSQL store has to get right: several collectors
//! writing one run at once, the server restarting under a collector, and
//! old partitions dropped by the retention.

mod common;

use common::*;
use intpath_collector::capture::{Collector, Options};
use intpath_collector::ingest::Aggregator;
use intpath_collector::query;
use intpath_collector::store::{Db, Retention};
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_collector::{parse_udp_payload, Store};
use intpath_core::plan::Plan;
use intpath_test_support::postgres::{fresh_database, PrivateServer};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_collectors_store_every_probe_exactly_once_in_one_run() {
    let url = fresh_database("two_collectors").await;
    let links = Arc::new(line4());
    let plan = twin_plan();
    let n = 2_000;
    let frames: Vec<(u16, Vec<u8>)> = probes(&links, &plan, n)
        .into_iter()
        .map(|p| (p.payload.path_id, p.to_bytes().unwrap()))
        .collect();
    let mut collectors = Vec::new();
    for _ in 0..2 {
        let store = Store::open(Db::Postgres(url.clone())).await.unwrap();
        let c = Collector::start(store, links.clone(), &plan, shared("split"))
            .await
            .unwrap();
        collectors.push(c);
    }
    assert_eq!(collectors[0].run_id(), collectors[1].run_id(), "one run");
    // Collector 0 sinks paths 1 and 2, collector 1 path 3; both at once.
    let feeds = collectors.iter().enumerate().map(|(i, c)| {
        let intake = c.intake();
        let mine: Vec<Vec<u8>> = frames
            .iter()
            .filter(|(path, _)| (*path == 3) == (i == 1))
            .map(|(_, f)| f.clone())
            .collect();
        tokio::spawn(async move {
            for f in &mine {
                intake.submit_frame(f).await.unwrap();
            }
            mine.len()
        })
    });
    let fed: Vec<usize> = futures_join(feeds).await;
    assert_eq!(fed, vec![2 * n as usize, n as usize]);
    let mut total = 0;
    for c in collectors {
        total += c.shutdown().await.unwrap().probes;
    }
    assert_eq!(total, 3 * u64::from(n));

    let store = Store::open_existing(Db::Postgres(url.clone()))
        .await
        .unwrap();
    let runs = query::runs(&store).await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0].probes, runs[0].hops),
        (3 * i64::from(n), 12 * i64::from(n))
    );
    store.close().await;
    let pool = PgPool::connect(&url).await.unwrap();
    let repeated: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT path_id, seq FROM probes GROUP BY path_id, seq \
         HAVING COUNT(*) <> 1) AS r",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(repeated, 0, "every probe stored exactly once");
    // s1 -> s2 is on paths 1 and 3: both collectors' samples add up.
    let first = links.egress_link("s1", 2).unwrap();
    let samples: i64 = sqlx::query_scalar(
        "SELECT CAST(SUM(samples) AS BIGINT) FROM link_buckets WHERE link_id = $1",
    )
    .bind(i64::from(first))
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(samples, 2 * i64::from(n));
    pool.close().await;
}

async fn futures_join<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for h in handles.collect::<Vec<_>>() {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_loses_nothing_and_the_gap_is_reported() {
    let server = tokio::task::spawn_blocking(PrivateServer::start)
        .await
        .unwrap();
    let links = Arc::new(line4());
    let plan = plan();
    let frames: Vec<Vec<u8>> = probes(&links, &plan, 500)
        .iter()
        .map(|p| p.to_bytes().unwrap())
        .collect();
    let store = Store::open(Db::Postgres(server.url.clone())).await.unwrap();
    let c = Collector::start(store, links, &plan, options())
        .await
        .unwrap();
    let intake = c.intake();
    let (before, after) = frames.split_at(frames.len() / 2);
    for f in before {
        intake.submit_frame(f).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = tokio::task::spawn_blocking(move || {
        server.stop();
        server
    })
    .await
    .unwrap();
    for f in after {
        intake.submit_frame(f).await.unwrap();
    }
    // Flushes fail while the server is away (each within a second).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let server = tokio::task::spawn_blocking(move || {
        server.start_again();
        server
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    drop(intake);
    let summary = c.shutdown().await.unwrap();
    assert_eq!(summary.probes, frames.len() as u64);
    assert!(summary.store_outages >= 1, "{summary:?}");
    assert!(summary.store_outage_ms >= 1_000, "{summary:?}");
    let store = Store::open_existing(Db::Postgres(server.url.clone()))
        .await
        .unwrap();
    let runs = query::runs(&store).await.unwrap();
    assert_eq!(
        runs[0].probes,
        frames.len() as i64,
        "nothing lost, nothing twice"
    );
    store.close().await;
}

#[tokio::test]
async fn retention_drops_whole_hours_older_than_it_keeps() {
    let url = fresh_database("retention").await;
    let store = Store::open(Db::Postgres(url.clone())).await.unwrap();
    let links = Arc::new(line4());
    let plan = plan();
    let run = store
        .begin_run(&links, &plan, 100_000_000, None)
        .await
        .unwrap();
    let hour = 3_600_000_000_000u64;
    let now = (BASE_NS / hour + 10) * hour;
    let mut agg = Aggregator::new(links.clone(), 100_000_000);
    let q = |_: u32| 2;
    for (seq, send_ns) in [(0, now - 3 * hour), (1, now - 3 * hour + 5), (2, now + 5)] {
        let c = Conditions {
            sequence: seq,
            send_ns,
            qdepth: &q,
            sink_port: 3,
        };
        let p = finished_probe(&plan.paths[0], &links, &c);
        agg.add(parse_udp_payload(&udp_payload(&p), send_ns + 1_000).unwrap());
    }
    store.write(run, &agg.take(), &[]).await.unwrap();
    let keep = Retention(Duration::from_secs(3_600));
    assert_eq!(store.drop_expired(keep, now as i64 + 10).await.unwrap(), 1);
    assert_eq!(store.drop_expired(keep, now as i64 + 10).await.unwrap(), 0);
    let runs = query::runs(&store).await.unwrap();
    assert_eq!(
        runs[0].probes, 1,
        "only the probe of the current hour stays"
    );
    let info = query::RunInfo::load(&store, None).await.unwrap();
    let (lo, hi) = info.buckets.unwrap();
    assert!(
        lo >= (now / 100_000_000) as i64,
        "old buckets went too: {lo}..{hi}"
    );
    store.close().await;
    // SQLite has no partitions: asking is an error, not a silent no-op.
    let dir = tempfile::tempdir().unwrap();
    let lite = Store::open(dir.path().join("t.db")).await.unwrap();
    let e = lite.drop_expired(keep, 0).await.unwrap_err();
    assert!(e.to_string().contains("PostgreSQL"), "{e}");
}

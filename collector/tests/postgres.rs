//! What only a PostgreSQL store has to get right: the server restarting
//! under a collector, and old partitions dropped by the retention (several
//! collectors sharing a run: `shared_run.rs`, on both backends).

mod common;

use common::*;
use intpath_collector::capture::Collector;
use intpath_collector::ingest::Aggregator;
use intpath_collector::query;
use intpath_collector::store::{Db, Retention};
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_collector::{parse_udp_payload, Store};
use intpath_test_support::postgres::{fresh_database, PrivateServer};
use std::sync::Arc;
use std::time::Duration;

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

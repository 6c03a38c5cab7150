//! What only a PostgreSQL store has to get right under a collector: the
//! server restarting (several collectors sharing a run: `shared_run.rs`, on
//! both backends; the retention: `store/tests/retention.rs`).

mod common;

use common::*;
use intpath_collector::capture::Collector;
use intpath_store::{query, Db, Store};
use intpath_test_support::postgres::PrivateServer;
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

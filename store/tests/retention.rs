//! PostgreSQL's retention drops whole hours of partitions older than it
//! keeps, and a SQLite store, which has no partitions, refuses to pretend.

use intpath_core::plan::{Plan, PlanStats};
use intpath_store::rows::{Batch, HopRecords, PathAgg, ProbeRow};
use intpath_store::{query, Db, Retention, Store};
use intpath_test_support::postgres::fresh_database;
use intpath_test_support::telemetry::{line4, plan, BASE_NS};
use std::time::Duration;

const BUCKET_NS: i64 = 100_000_000;
const HOUR: i64 = 3_600_000_000_000;

/// One probe of path 1 without records, sent at `send_ns`, and its bucket.
fn probe_at(batch: &mut Batch, seq: u32, send_ns: i64) {
    batch.probes.push(ProbeRow {
        path_id: 1,
        sequence: seq,
        send_ns,
        recv_ns: send_ns + 1_000,
        hops: 0,
        ts0_us: 0,
        records: HopRecords::new(0, 0).finish(),
    });
    let agg = batch.paths.entry((1, send_ns / BUCKET_NS)).or_default();
    *agg = PathAgg {
        probes: agg.probes + 1,
        e2e_sum_ns: agg.e2e_sum_ns + 1_000,
        e2e_max_ns: 1_000,
        ..*agg
    };
}

#[tokio::test]
async fn retention_drops_whole_hours_older_than_it_keeps() {
    let url = fresh_database("retention").await;
    let store = Store::open(Db::Postgres(url)).await.unwrap();
    let run = store
        .begin_run(&line4(), &plan(), BUCKET_NS as u64, None)
        .await
        .unwrap();
    let now = (BASE_NS as i64 / HOUR + 10) * HOUR;
    let mut batch = Batch::default();
    for (seq, send_ns) in [(0, now - 3 * HOUR), (1, now - 3 * HOUR + 5), (2, now + 5)] {
        probe_at(&mut batch, seq, send_ns);
    }
    store.write(run, &batch, &[]).await.unwrap();
    let keep = Retention(Duration::from_secs(3_600));
    assert_eq!(store.drop_expired(keep, now + 10).await.unwrap(), 1);
    assert_eq!(store.drop_expired(keep, now + 10).await.unwrap(), 0);
    let runs = query::runs(&store).await.unwrap();
    assert_eq!(
        runs[0].probes, 1,
        "only the probe of the current hour stays"
    );
    let info = query::RunInfo::load(&store, None).await.unwrap();
    let (lo, hi) = info.buckets.unwrap();
    assert!(lo >= now / BUCKET_NS, "old buckets went too: {lo}..{hi}");
    store.close().await;
}

#[tokio::test]
async fn a_sqlite_store_has_no_retention_to_apply() {
    let dir = tempfile::tempdir().unwrap();
    let lite = Store::open(dir.path().join("t.db")).await.unwrap();
    let plan = Plan {
        topology: "line:4".into(),
        algo: "test".into(),
        paths: Vec::new(),
        stats: PlanStats::default(),
    };
    lite.begin_run(&line4(), &plan, BUCKET_NS as u64, None)
        .await
        .unwrap();
    let keep = Retention(Duration::from_secs(3_600));
    let e = lite.drop_expired(keep, 0).await.unwrap_err();
    assert!(e.to_string().contains("PostgreSQL"), "{e}");
    lite.close().await;
}

//! The compact hop layout reads back, through the `hops` view, exactly the
//! records that went in.

use super::Store;
use crate::ingest::Aggregator;
use crate::parse::Probe;
use intpath_core::plan::{Plan, PlanStats};
use intpath_core::wire::IntRecordRepr;
use std::sync::Arc;

intpath_test_support::on_both_backends!(hops_view_returns_every_record_as_stored);

async fn hops_view_returns_every_record_as_stored(db: String) {
    let store = Store::open(db.parse::<super::Db>().unwrap()).await.unwrap();
    let links = crate::links::two_switches();
    let plan = Plan {
        topology: "line:2".into(),
        algo: "test".into(),
        paths: Vec::new(),
        stats: PlanStats::default(),
    };
    let run = store
        .begin_run(&links, &plan, 100_000_000, None)
        .await
        .unwrap();
    let rec = |switch_id, ingress_port, egress_port, ingress_ts, qdepth| IntRecordRepr {
        switch_id,
        ingress_port,
        egress_port,
        ingress_ts,
        egress_ts: ingress_ts + 7,
        enq_qdepth: qdepth,
        deq_timedelta: 7,
    };
    // The stack holds the last switch first; s2's port 3 is on no link.
    let records = vec![
        rec(102, 1, 3, 1_700_000_000_000_123, 0),
        rec(101, 0, 2, 1_700_000_000_000_100, 40),
    ];
    let probe = Probe {
        path_id: 1,
        sequence: 9,
        send_ns: 1_700_000_000_000_000_000,
        recv_ns: 1_700_000_000_000_200_000,
        records: records.clone(),
    };
    let mut agg = Aggregator::new(Arc::new(links), 100_000_000);
    agg.add(probe);
    store.write(run, &agg.take(), &[]).await.unwrap();
    type Row = (i64, i64, i64, i64, i64, Option<i64>, i64, i64, i64, i64);
    let rows: Vec<Row> = on_pool!(store, pool => sqlx::query_as(
        "SELECT probe_id, hop, switch_id, ingress_port, egress_port, link_id, ingress_ts_us, \
         egress_ts_us, qdepth, qdelay_us FROM hops ORDER BY probe_id, hop",
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    let want: Vec<Row> = records
        .iter()
        .rev()
        .enumerate()
        .map(|(hop, r)| {
            (
                1,
                hop as i64,
                i64::from(r.switch_id),
                i64::from(r.ingress_port),
                i64::from(r.egress_port),
                (r.switch_id == 101).then_some(0),
                r.ingress_ts as i64,
                r.egress_ts as i64,
                i64::from(r.enq_qdepth),
                i64::from(r.deq_timedelta),
            )
        })
        .collect();
    assert_eq!(rows, want);
    store.close().await;
}

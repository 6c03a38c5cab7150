//! The compact hop layout reads back, through the `hops` view, exactly the
//! records that went in, and bucket sums saturate instead of failing.

use crate::links::{two_switches, LinkMap};
use crate::rows::{Batch, HopRecords, PathAgg, ProbeRow};
use crate::{on_pool, Db, Pool, RunId, Store};
use intpath_core::plan::{Plan, PlanStats};
use intpath_core::wire::IntRecordRepr;

/// A store on `db` with a run over two switches and no planned paths.
async fn two_switch_run(db: &str) -> (Store, LinkMap, RunId) {
    let store = Store::open(db.parse::<Db>().unwrap()).await.unwrap();
    let links = two_switches();
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
    (store, links, run)
}

intpath_test_support::on_both_backends!(hops_view_returns_every_record_as_stored);

async fn hops_view_returns_every_record_as_stored(db: String) {
    let (store, links, run) = two_switch_run(&db).await;
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
    let records = [
        rec(102, 1, 3, 1_700_000_000_000_123, 0),
        rec(101, 0, 2, 1_700_000_000_000_100, 40),
    ];
    let ts0_us = records[1].ingress_ts as i64;
    let mut json = HopRecords::new(records.len(), ts0_us);
    for r in records.iter().rev() {
        json.push(r, links.record_link(r.switch_id, r.egress_port));
    }
    let batch = Batch {
        probes: vec![ProbeRow {
            path_id: 1,
            sequence: 9,
            send_ns: 1_700_000_000_000_000_000,
            recv_ns: 1_700_000_000_000_200_000,
            hops: 2,
            ts0_us,
            records: json.finish(),
        }],
        ..Batch::default()
    };
    store.write(run, &batch, &[]).await.unwrap();
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
    // As evidence: s1's link, met at the send time, held the probe 7 µs,
    // and s2 stamped it in 16 µs after s1 stamped it out (123 - 107).
    let samples = crate::samples::link_samples(&store, run, i64::MIN, i64::MAX)
        .await
        .unwrap();
    let want = crate::samples::LinkSample {
        link: 0,
        at_ns: 1_700_000_000_000_000_000,
        qdelay_ns: 7_000,
        wire_ns: Some(16_000),
    };
    assert_eq!(samples, vec![want]);
    store.close().await;
}

intpath_test_support::on_both_backends!(e2e_sums_saturate_at_the_integer_limits);

/// Sums of end-to-end delays that leave a 64-bit integer (a sender clock far
/// off) stop at its limits and stay integers; sums just inside stay exact.
async fn e2e_sums_saturate_at_the_integer_limits(db: String) {
    let (store, _, run) = two_switch_run(&db).await;
    let big = i64::MAX / 4 * 3;
    // Per path: the end-to-end delay of the one probe in each of two
    // batches, all in bucket 0.
    let cases: [(u16, [i64; 2]); 3] = [
        // Up past i64::MAX.
        (1, [big; 2]),
        // Down past i64::MIN (the receiver's clock far behind).
        (2, [-big; 2]),
        // Up to i64::MAX - 1, exactly.
        (3, [i64::MAX / 2; 2]),
    ];
    for batch in 0..2 {
        let mut b = Batch::default();
        for (path, e2e) in &cases {
            let agg = PathAgg {
                probes: 1,
                e2e_sum_ns: e2e[batch],
                e2e_max_ns: e2e[batch],
                ..PathAgg::default()
            };
            b.paths.insert((*path, 0), agg);
        }
        store.write(run, &b, &[]).await.unwrap();
    }
    let sums: Vec<(i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT path_id, probes, e2e_sum_ns FROM path_buckets ORDER BY path_id, bucket",
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    assert_eq!(
        sums,
        vec![(1, 2, i64::MAX), (2, 2, i64::MIN), (3, 2, i64::MAX - 1)]
    );
    if let Pool::Sqlite(pool) = store.pool() {
        let types: Vec<String> = sqlx::query_scalar("SELECT typeof(e2e_sum_ns) FROM path_buckets")
            .fetch_all(pool)
            .await
            .unwrap();
        assert_eq!(types, ["integer"; 3], "no REAL in an INTEGER column");
    }
    store.close().await;
}

intpath_test_support::on_both_backends!(span_arrivals_are_the_spans_stored_after_a_time);

/// The receiver's export asks which spans arrived since its last look:
/// those stored after the time given, in storage order, whenever they
/// started.
async fn span_arrivals_are_the_spans_stored_after_a_time(db: String) {
    use crate::spans::{ResourceRow, SpanBatch, SpanRow};
    let store = Store::open(db.parse::<Db>().unwrap()).await.unwrap();
    let batch = |trace: &str, spans: &[(&str, i64)]| SpanBatch {
        resources: vec![ResourceRow {
            service: "frontend".into(),
            attributes: r#"{"service.name":"frontend"}"#.into(),
        }],
        spans: spans
            .iter()
            .map(|&(id, start_ns)| {
                let row = SpanRow {
                    trace_id: trace.into(),
                    span_id: id.into(),
                    parent_span_id: None,
                    trace_state: String::new(),
                    flags: 0,
                    name: "call".into(),
                    kind: 2,
                    start_ns,
                    end_ns: start_ns + 10,
                    scope_name: String::new(),
                    scope_version: String::new(),
                    attributes: "{}".into(),
                    events: "[]".into(),
                    links: "[]".into(),
                    status_code: 0,
                    status_message: String::new(),
                    dropped_attributes: 0,
                    dropped_events: 0,
                    dropped_links: 0,
                };
                (0, row)
            })
            .collect(),
    };
    store
        .write_spans(&batch("aa", &[("01", 500), ("02", 100)]))
        .await
        .unwrap();
    let first = store.span_arrivals(i64::MIN).await.unwrap();
    assert_eq!(first.len(), 2);
    let between = first[1].received_ns;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    store
        .write_spans(&batch("bb", &[("03", 50), ("04", 900)]))
        .await
        .unwrap();
    let later = store.span_arrivals(between).await.unwrap();
    let got: Vec<(&str, &str, i64)> = later
        .iter()
        .map(|a| (a.trace_id.as_str(), a.span_id.as_str(), a.start_ns))
        .collect();
    assert_eq!(got, [("bb", "03", 50), ("bb", "04", 900)]);
    assert!(later.iter().all(|a| a.received_ns > between));
    let all = store.span_arrivals(i64::MIN).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|a| a.span_id.as_str()).collect();
    assert_eq!(ids, ["01", "02", "03", "04"]);
    store.close().await;
}

//! The exposition text: the newest bucket of each link across batches,
//! path counters, reject counters, and a format Prometheus parses (checked
//! against a real Prometheus in `tests/prometheus.rs`).

use super::Metrics;
use crate::ingest::Aggregator;
use crate::parse::{Probe, Reject, RejectCounts};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::wire::IntRecordRepr;
use intpath_store::links::{Cable, LinkMap};
use std::sync::Arc;

const BUCKET_NS: u64 = 100_000_000;
const T0: u64 = 1_700_000_000_000_000_000;

fn probe(sequence: u32, send_ns: u64, qdepth: u32) -> Probe {
    let rec = |switch_id, ingress_port, egress_port, qdepth: u32| IntRecordRepr {
        switch_id,
        ingress_port,
        egress_port,
        ingress_ts: send_ns / 1000,
        egress_ts: send_ns / 1000 + u64::from(qdepth) * 12,
        enq_qdepth: qdepth,
        deq_timedelta: qdepth * 12,
    };
    Probe {
        path_id: 1,
        sequence,
        send_ns,
        recv_ns: send_ns + 1000,
        // The last switch first; s2's port 3 is on no link.
        records: vec![rec(102, 1, 3, 0), rec(101, 0, 2, qdepth)],
    }
}

fn line(text: &str, prefix: &str) -> f64 {
    let l = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"));
    l.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_newest_bucket_of_each_link_is_what_a_scrape_shows() {
    // s1 (id 101) port 2 —— port 1 s2 (id 102).
    let links = LinkMap::new(
        [("s1".into(), 101), ("s2".into(), 102)],
        [Cable::new("s1", 2, "s2", 1)],
    )
    .unwrap();
    let plan = Plan {
        topology: "line:2".into(),
        algo: "test".into(),
        paths: vec![ProbePath {
            id: 1,
            nodes: vec!["s1".into(), "s2".into()],
            egress_ports: vec![2],
        }],
        stats: PlanStats::default(),
    };
    let rejects = Arc::new(RejectCounts::default());
    let m = Metrics::default();
    m.begin_run(7, &links, &plan, BUCKET_NS, rejects.clone());
    let mut agg = Aggregator::new(Arc::new(links), BUCKET_NS);
    // Bucket 0: depth 10; bucket 1 split over two batches: 4 then 8; a late
    // probe of bucket 0 in the second batch; sequence 3 never arrives.
    agg.add(probe(0, T0, 10));
    agg.add(probe(1, T0 + BUCKET_NS, 4));
    m.stored(&agg.take());
    agg.add(probe(2, T0 + BUCKET_NS + 1, 8));
    agg.add(probe(4, T0 + 5, 30));
    m.stored(&agg.take());
    rejects.count(Reject::Truncated);

    let text = m.encode();
    let link = r#"{link="s1:2->s2",sender="s1",port="2",receiver="s2"}"#;
    assert_eq!(
        line(
            &text,
            &format!("intpath_link_queue_depth_mean_packets{link}")
        ),
        6.0
    );
    assert_eq!(
        line(
            &text,
            &format!("intpath_link_queue_depth_max_packets{link}")
        ),
        8.0
    );
    assert_eq!(
        line(
            &text,
            &format!("intpath_link_queueing_delay_max_seconds{link}")
        ),
        96e-6
    );
    assert_eq!(
        line(&text, &format!("intpath_link_samples_total{link}")),
        4.0
    );
    assert_eq!(
        line(&text, &format!("intpath_link_bucket_start_seconds{link}")),
        (T0 + BUCKET_NS) as f64 / 1e9
    );
    // Sequence numbers 0..=4 with 3 missing: one lost of five.
    assert_eq!(line(&text, &format!("intpath_link_loss_ratio{link}")), 0.2);
    assert_eq!(line(&text, r#"intpath_path_probes_total{path="1"}"#), 4.0);
    assert_eq!(line(&text, r#"intpath_path_lost_probes{path="1"}"#), 1.0);
    assert_eq!(
        line(
            &text,
            r#"intpath_collector_rejected_probes_total{reason="truncated"}"#
        ),
        1.0
    );
    assert_eq!(line(&text, "intpath_collector_stored_probes_total"), 4.0);
    assert_eq!(line(&text, "intpath_collector_run "), 7.0);
    // Every reason is a series from the start; s2:3 (no link) is none.
    assert_eq!(
        text.matches("intpath_collector_rejected_probes_total{")
            .count(),
        Reject::ALL.len()
    );
    assert_eq!(text.matches("intpath_link_samples_total{").count(), 1);
    assert!(text.ends_with("# EOF\n"), "{text}");
}

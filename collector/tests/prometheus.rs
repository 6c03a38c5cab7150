//! A real Prometheus (Debian's package) scrapes the collector daemon's
//! `/metrics` every second while probes arrive over UDP; what Prometheus
//! then answers over its query API is what the collector stored in SQLite
//! for the congested link, the path and the rejects.

mod common;

use common::*;
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_test_support::prometheus::Prometheus;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Duration;

const PROBES: u32 = 400;

#[test]
fn prometheus_scrapes_what_the_collector_stored() {
    let (links, plan) = fattree_path();
    let path = &plan.paths[0];
    let hot = links
        .egress_link(&path.nodes[0], path.egress_ports[0])
        .unwrap();
    let hot_link = links.link(hot).unwrap().clone();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("metrics.db");
    let metrics = intpath_test_support::free_addr();
    let (child, addr) = start_daemon(
        dir.path(),
        &plan,
        &db,
        &[
            "--flush-ms",
            "100",
            "--store",
            "buckets",
            "--metrics-listen",
            &metrics,
            // The probes replay 2023 send times.
            "--send-window",
            "off",
        ],
    );
    let prom = Prometheus::start(&[&metrics]);

    // The first hop's queue grows by one packet per probe, bucket after
    // bucket (10 probes per 100 ms bucket); every other queue holds 2.
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for seq in 0..PROBES {
        let q = move |l: u32| if l == hot { 5 + seq } else { 2 };
        let c = Conditions {
            sequence: seq,
            send_ns: BASE_NS + u64::from(seq) * 10_000_000,
            qdepth: &q,
            sink_port: 1,
        };
        sock.send_to(&udp_payload(&finished_probe(path, &links, &c)), &addr)
            .unwrap();
        std::thread::sleep(Duration::from_micros(500));
    }
    sock.send_to(b"not a probe", &addr).unwrap();

    let until_all = |s: &[(serde_json::Value, f64)]| s.first().is_some_and(|v| v.1 == 400.0);
    prom.wait_for(
        "intpath_collector_stored_probes_total",
        Duration::from_secs(30),
        until_all,
    );
    for own in [
        "intpath_collector_lost_probes_total",
        "intpath_collector_socket_dropped_probes_total",
    ] {
        let got = prom.query(own);
        assert!(got.len() == 1 && got[0].1 == 0.0, "{own}: {got:?}");
    }
    let selector = format!(
        "{{sender=\"{}\",port=\"{}\",receiver=\"{}\"}}",
        hot_link.src, hot_link.src_port, hot_link.dst
    );
    let one = |name: &str| {
        let got = prom.query(&format!("{name}{selector}"));
        assert_eq!(got.len(), 1, "{name}: {got:?}");
        assert_eq!(got[0].0["link"], hot_link.to_string());
        got[0].1
    };

    // The newest bucket of the hot link, as the store holds it.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let row: (i64, i64, i64, i64, i64, i64) = rt.block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .read_only(true);
        let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
        let row = sqlx::query_as(
            "SELECT bucket, samples, qdepth_sum, qdepth_max, qdelay_sum, qdelay_max \
             FROM link_buckets WHERE link_id = ? ORDER BY bucket DESC LIMIT 1",
        )
        .bind(i64::from(hot))
        .fetch_one(&pool)
        .await
        .unwrap();
        pool.close().await;
        row
    });
    let (bucket, samples, qdepth_sum, qdepth_max, qdelay_sum, qdelay_max) = row;
    assert_eq!((samples, qdepth_max), (10, 5 + 399), "the last ten probes");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let mean = one("intpath_link_queue_depth_mean_packets");
    assert!(close(mean, qdepth_sum as f64 / 10.0), "{mean}");
    assert_eq!(
        one("intpath_link_queue_depth_max_packets"),
        qdepth_max as f64
    );
    let delay = one("intpath_link_queueing_delay_mean_seconds");
    assert!(close(delay, qdelay_sum as f64 / 10.0 / 1e6), "{delay}");
    let delay_max = one("intpath_link_queueing_delay_max_seconds");
    assert!(close(delay_max, qdelay_max as f64 / 1e6), "{delay_max}");
    let start = one("intpath_link_bucket_start_seconds");
    assert!(
        close(start, bucket as f64 / 10.0),
        "{start} vs bucket {bucket}"
    );
    assert_eq!(one("intpath_link_samples_total"), f64::from(PROBES));
    assert_eq!(one("intpath_link_loss_ratio"), 0.0);

    let probes = prom.query("intpath_path_probes_total{path=\"5\"}");
    assert_eq!(probes.iter().map(|s| s.1).collect::<Vec<_>>(), [400.0]);
    let rejects = prom.wait_for(
        "sum(intpath_collector_rejected_probes_total)",
        Duration::from_secs(10),
        |s| s.first().is_some_and(|v| v.1 == 1.0),
    );
    assert_eq!(rejects.len(), 1);
    // Bounded: 6 series per link that probes crossed (and loss for the
    // planned ones: not the sink's last link), 4 for the one path, one per
    // reject reason and 5 of the collector's own (stored, raw, lost to the
    // store, dropped by the kernel at the socket).
    let ports = path.egress_ports.iter().chain([&1]);
    let crossed = path.nodes.iter().zip(ports);
    let crossed = crossed
        .filter(|(n, p)| links.egress_link(n, **p).is_some())
        .count();
    let series = prom.query("count({job=\"intpath\", __name__=~\"intpath_.*\"})");
    let reasons = intpath_collector::Reject::ALL.len();
    assert_eq!(
        series[0].1 as usize,
        7 * crossed - 1 + 4 + reasons + 5,
        "{series:?}"
    );

    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "collector exit {:?}", out.status);
}

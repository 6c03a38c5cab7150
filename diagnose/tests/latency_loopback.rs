//! Pirate on real traffic: a TCP server on 127.0.0.1 answering after a
//! known delay, a client keeping a window of requests in flight and
//! measuring its own latencies, the loopback captured (root) and the
//! estimate compared with what the client measured.

use intpath_diagnose::latency::{analyse, ClientFilter, Config};
use intpath_test_support::latency_lab::{run, Capture, Workload};
use std::time::Duration;

#[test]
#[ignore = "needs root"]
fn estimates_match_the_clients_own_latency_on_loopback() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    for (delay_ms, window) in [(2, 4), (5, 2)] {
        let pcap = dir.path().join(format!("lo-{delay_ms}ms.pcap"));
        // The server's port is not known before it binds; capture all TCP
        // on lo and pick the connection by the client's address below.
        let cap = Capture::start(&pcap, None);
        let m = run(Workload {
            delay: Duration::from_millis(delay_ms),
            window,
            duration: Duration::from_millis(2500),
        });
        let frames = cap.stop();
        assert!(frames > 100, "only {frames} frames captured");
        let cfg = Config {
            client: Some(ClientFilter {
                ip: m.client.ip(),
                port: Some(m.client.port()),
            }),
            ..Config::default()
        };
        let a = analyse(&pcap, &cfg).expect("the capture reads");
        assert_eq!(a.connections, 1, "{:?}", a.rows);
        let (mut time, mut batches) = (0.0, 0u64);
        for r in &a.rows {
            let e = r.result.estimate.expect("an estimate per epoch");
            let (truth, n) = m.mean_between(r.epoch_start_ns, r.epoch_start_ns + 1_000_000_000);
            eprintln!(
                "{delay_ms} ms ×{window}: epoch {}: estimate {:.1} µs, client {:.1} µs over {n}",
                r.result.epoch,
                e.latency_ns / 1e3,
                truth / 1e3
            );
            time += e.latency_ns * e.batches as f64;
            batches += e.batches;
        }
        let estimate = time / batches as f64;
        let truth = m.mean();
        let rel = (estimate - truth) / truth;
        eprintln!(
            "{delay_ms} ms ×{window}: estimate {:.1} µs, client {:.1} µs, error {:+.2} %",
            estimate / 1e3,
            truth / 1e3,
            rel * 100.0
        );
        assert!(rel.abs() < 0.05, "relative error {rel}");
    }
}

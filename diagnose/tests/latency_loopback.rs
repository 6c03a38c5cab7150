//! Pirate on real traffic: a TCP server on 127.0.0.1 answering after a
//! known delay, a client keeping a window of requests in flight and
//! measuring its own latencies, the loopback captured (root) and the
//! estimate compared with what the client measured.

use intpath_diagnose::latency::{analyse, ClientFilter, Config};
use intpath_test_support::latency_lab::{assert_median_error_below, run, Capture, Workload};
use std::time::Duration;

/// Whole epochs only: the first and last hold a handful of requests.
const WHOLE: usize = 200;

#[test]
#[ignore = "needs root"]
fn estimates_match_the_clients_own_latency_on_loopback() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let mut errors = Vec::new();
    for (delay_ms, window) in [(2, 4), (5, 2)] {
        let pcap = dir.path().join(format!("lo-{delay_ms}ms.pcap"));
        // The server's port is not known before it binds; capture all TCP
        // on lo and pick the connection by the client's address below.
        let cap = Capture::start(&pcap, None);
        let m = run(Workload {
            delay: Duration::from_millis(delay_ms),
            window,
            duration: Duration::from_millis(3500),
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
        for r in &a.rows {
            let e = r.result.estimate.expect("an estimate per epoch");
            let (truth, n) = m.mean_between(r.epoch_start_ns, r.epoch_start_ns + 1_000_000_000);
            let rel = (e.latency_ns - truth) / truth;
            eprintln!(
                "{delay_ms} ms ×{window}: epoch {}: estimate {:.1} µs ({:?}), client {:.1} µs over {n}: {:+.2} %",
                r.result.epoch,
                e.latency_ns / 1e3,
                e.basis,
                truth / 1e3,
                rel * 100.0
            );
            if n >= WHOLE {
                errors.push(rel.abs());
            }
        }
    }
    assert_median_error_below(errors, 4, 0.02);
}

//! `intpath diagnose latency` as a user runs it: on a written capture (any
//! user), on a broken file (one line, non-zero exit) and on real loopback
//! traffic (root).

use intpath_test_support::latency_lab::{assert_median_error_below, run, Capture, Workload};
use intpath_test_support::pcap::{write_ethernet, Tcp};
use std::process::Command;
use std::time::Duration;

/// Held by the real-traffic test and by the one that burns CPU generating a
/// workload, so the latter cannot delay the former's client and server
/// (whose own timing is the truth being compared against).
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn intpath(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .expect("intpath runs")
}

/// The rows `intpath diagnose latency ARGS --output json` prints, once it
/// succeeded.
fn json_rows(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["diagnose", "latency"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json"]);
    let out = intpath(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    rows.as_array().expect("an array").clone()
}

#[test]
fn prints_one_row_per_connection_and_epoch_in_every_format() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let p = dir.path().join("c.pcap");
    let t0 = 1_700_000_000_000_000_000i64;
    // 2 ms between single requests over two epochs.
    let segs: Vec<Tcp> = (0..1000)
        .map(|i| Tcp::data(t0 + i * 2_000_000, "10.0.0.1:40000", "10.0.0.2:80", 100))
        .collect();
    write_ethernet(&p, &segs);
    let path = p.to_str().expect("utf-8 path");
    let rows = json_rows(&["--pcap", path]);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["client"], "10.0.0.1:40000");
        let e = r["estimate_us"].as_f64().expect("an estimate");
        assert!((e - 2000.0).abs() < 0.01, "{e}");
    }
    let csv = intpath(&[
        "diagnose", "latency", "--pcap", path, "--output", "csv", "--epoch", "2",
    ]);
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.starts_with("client,server,transport,epoch_start_s,estimate_us"));
    let table = intpath(&[
        "diagnose", "latency", "--pcap", path, "--client", "10.0.0.9",
    ]);
    assert_eq!(String::from_utf8_lossy(&table.stdout).lines().count(), 1);
}

#[test]
fn a_broken_capture_is_one_line_on_stderr() {
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let p = dir.path().join("bad.pcap");
    std::fs::write(&p, b"\xd4\xc3\xb2\xa1 not really").expect("written");
    let out = intpath(&["diagnose", "latency", "--pcap", p.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.pcap") && err.contains("not a pcap"),
        "{err}"
    );
    let out = intpath(&[
        "diagnose", "latency", "--pcap", "x.pcap", "--client", "nobody",
    ]);
    assert!(!out.status.success());
}

#[test]
#[ignore = "needs root"]
fn estimates_real_loopback_traffic() {
    let _quiet = TIMING.lock().unwrap_or_else(|p| p.into_inner());
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let p = dir.path().join("lo.pcap");
    let cap = Capture::start(&p, None);
    let m = run(Workload {
        delay: Duration::from_millis(10),
        window: 3,
        duration: Duration::from_millis(3200),
    });
    cap.stop();
    let client = m.client.to_string();
    let rows = json_rows(&["--pcap", p.to_str().expect("utf-8"), "--client", &client]);
    // Per whole epoch (the first and last hold a few requests), against
    // the client's mean over the requests it sent in that epoch; the median
    // epoch must be close (one can be off when the machine stalls the
    // client mid-epoch).
    let errors: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let start = (r["epoch_start_s"].as_f64().expect("epoch") * 1e9).round() as i64;
            let (truth, n) = m.mean_between(start, start + 1_000_000_000);
            let estimate = r["estimate_us"].as_f64().expect("an estimate") * 1e3;
            eprintln!(
                "epoch {start}: estimate {estimate:.0} ns ({}), client {truth:.0} ns over {n}",
                r["basis"]
            );
            (n >= 100).then(|| ((estimate - truth) / truth).abs())
        })
        .collect();
    assert_median_error_below(errors, 2, 0.02);
}

/// With `--db` and `--topo`: a connection whose path crosses a link that
/// queues 3 ms the whole time has about that much taken out of its server
/// time; one whose path avoids the link keeps nearly all of its estimate.
/// Telemetry from `intpath diagnose synth` (a real SQLite collector
/// database, probes over the routes deploy installs).
#[test]
fn int_queueing_of_both_directions_comes_out_of_the_server_time() {
    let _quiet = TIMING.lock().unwrap_or_else(|p| p.into_inner());
    use intpath_core::topo::Topology;
    use intpath_diagnose::path::{LinkIndex, Resolver};
    use intpath_eval::synth::{generate, App, Config};

    let dir = intpath_test_support::tempdir().expect("temp dir");
    let topo = Topology::load("fattree:k=4").expect("topology");
    let index = LinkIndex::new(&topo);
    let mut routes = Resolver::new(&topo);
    // Hosts in different pods; the congested link is a switch link on the
    // route from the first to the second.
    let last = topo.hosts().len() as u16 - 1;
    let hot_pair = (0, last);
    let route = routes.path(&index, 0, last).expect("route").clone();
    let hot = *route
        .forward
        .iter()
        .find(|&&l| !index.host_link[l as usize])
        .expect("a switch link");
    let cool_pair = (1..last)
        .flat_map(|a| (1..last).map(move |b| (a, b)))
        .find(|&(a, b)| {
            a / 2 != b / 2
                && routes
                    .path(&index, a, b)
                    .is_ok_and(|p| !p.all().any(|l| l == hot))
        })
        .expect("a pair elsewhere");
    let cfg = Config {
        topo: topo.clone(),
        app: App::Hotel,
        world: intpath_eval::synth::World::default(),
        faults: vec![format!("decoy:{}:3", index.name(hot))
            .parse()
            .expect("fault")],
        seed: 5,
        requests: 300,
        rate: 100.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(generate(&cfg))
        .expect("synth");
    let ip = |h: u16| topo.hosts()[usize::from(h)].ip;
    // One second into synthetic time, one request every 4 ms, one in
    // flight, for two one-second epochs inside the run.
    let t0 = intpath_eval::synth::T0_NS + 1_000_000_000;
    let mut segs = Vec::new();
    for (i, (a, b)) in [hot_pair, cool_pair].into_iter().enumerate() {
        let (client, server) = (format!("{}:4000{i}", ip(a)), format!("{}:80", ip(b)));
        segs.extend((0..500).map(|k| Tcp::data(t0 + k * 4_000_000, &client, &server, 100)));
    }
    segs.sort_by_key(|s| s.at_ns);
    let p = dir.path().join("c.pcap");
    write_ethernet(&p, &segs);
    let db = dir.path().join("telemetry.db");
    let topo_file = dir.path().join("topology.json");
    let rows = json_rows(&[
        "--pcap",
        p.to_str().expect("utf-8"),
        "--db",
        db.to_str().expect("utf-8"),
        "--topo",
        topo_file.to_str().expect("utf-8"),
    ]);
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
        let (estimate, int, server) = (f("estimate_us"), f("int_us"), f("server_us"));
        assert!((estimate - 4000.0).abs() < 1.0, "{r}");
        assert!((server - (estimate - int)).abs() < 1e-6, "{r}");
        let hot = r["client"].as_str().is_some_and(|c| c.ends_with(":40000"));
        if hot {
            // 3 ms on one direction (its level wanders 0.5-1.5x), plus the
            // fabric's ordinary queueing both ways.
            assert!((1500.0..5000.0).contains(&int), "crossing the link: {r}");
        } else {
            assert!(int < 500.0, "away from the link: {r}");
        }
    }
}

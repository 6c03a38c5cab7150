//! `intpath diagnose latency` as a user runs it: on a written capture (any
//! user), on a broken file (one line, non-zero exit) and on real loopback
//! traffic (root).

use intpath_test_support::latency_lab::{run, Capture, Workload};
use intpath_test_support::pcap::{write_ethernet, Tcp};
use std::process::Command;
use std::time::Duration;

fn intpath(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .expect("intpath runs")
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
    let out = intpath(&["diagnose", "latency", "--pcap", path, "--output", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 2);
    for r in rows {
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
    let dir = intpath_test_support::tempdir().expect("temp dir");
    let p = dir.path().join("lo.pcap");
    let cap = Capture::start(&p, None);
    let m = run(Workload {
        delay: Duration::from_millis(3),
        window: 3,
        duration: Duration::from_millis(2200),
    });
    cap.stop();
    let client = m.client.to_string();
    let out = intpath(&[
        "diagnose",
        "latency",
        "--pcap",
        p.to_str().expect("utf-8"),
        "--client",
        &client,
        "--output",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let (mut time, mut batches) = (0.0, 0.0);
    for r in rows.as_array().expect("an array") {
        let b = r["batches"].as_f64().expect("batches");
        time += r["estimate_us"].as_f64().expect("an estimate") * b;
        batches += b;
    }
    let (estimate, truth) = (time / batches, m.mean() / 1e3);
    eprintln!("estimate {estimate:.1} µs, client {truth:.1} µs");
    assert!(
        ((estimate - truth) / truth).abs() < 0.05,
        "{estimate} vs {truth}"
    );
}

//! `intpath-collector collect` refuses bad arguments before it touches the
//! database, and reports what it stored in one line.

mod common;

use common::otlp::{request_json, JSON};
use common::{fattree_path, start_daemon};
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_core::time::now_ns;
use std::process::Command;

#[test]
fn a_missing_interface_fails_before_a_run_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"topology":"t","algo":"euler","paths":[{"id":1,"nodes":["s1","s2"],"egress_ports":[3]}],
            "stats":{"paths":1,"lower_bound":1,"max_len":1,"mean_len":1.0,"len_variance":0.0,"plan_ms":0.1}}"#,
    )
    .unwrap();
    let db = dir.path().join("t.db");
    let out = Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["collect", "--iface", "nonexist0", "--topo", "fattree:k=4"])
        .arg("--plan")
        .arg(&plan)
        .arg("--db")
        .arg(&db)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.starts_with("intpath-collector: error: "), "{e}");
    assert!(
        e.contains("nonexist0") && e.trim().lines().count() == 1,
        "{e}"
    );
    assert!(
        !db.exists(),
        "a database was created for a run that cannot start"
    );
}

/// Probes over UDP and spans over OTLP/HTTP into one collector: the last
/// line of its stdout (what the demo reads) holds both counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_spans_are_reported_in_one_line() {
    let (links, plan) = fattree_path();
    let dir = tempfile::tempdir().unwrap();
    let otlp = intpath_test_support::free_addr();
    let (child, addr) = start_daemon(
        dir.path(),
        &plan,
        dir.path().join("t.db"),
        &["--flush-ms", "50", "--otlp-listen", &otlp],
    );
    assert!(intpath_test_support::otlp::wait_for_listener(
        &otlp,
        std::time::Duration::from_secs(20)
    ));
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let q = |_: u32| 2;
    for seq in 0..20 {
        let c = Conditions {
            sequence: seq,
            send_ns: now_ns(),
            qdepth: &q,
            sink_port: 1,
        };
        let p = finished_probe(&plan.paths[0], &links, &c);
        sock.send_to(&udp_payload(&p), &addr).unwrap();
    }
    let client = reqwest::Client::new();
    let answer = intpath_test_support::otlp::post(&client, &otlp, JSON, None, request_json(1))
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["probes"], 20, "{report}");
    assert_eq!(report["spans"]["spans_stored"], 2, "{report}");
}

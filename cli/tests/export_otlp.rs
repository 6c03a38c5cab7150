//! `intpath diagnose rpcs --export-otlp URL` against a real OTLP/HTTP
//! receiver (ours, `intpath_collector::otlp`): every diagnosed span arrives
//! with its ids, and each RPC's spans carry what `--format json` prints for
//! that call, with the network-evidence event where the network explains it.

use intpath_collector::otlp::{Config, Receiver};
use intpath_eval::synth::{App, Config as SynthConfig};
use intpath_store::Store;
use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnosed_spans_reach_an_otlp_receiver_with_the_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SynthConfig {
        topo: intpath_core::topo::Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        world: Default::default(),
        faults: vec!["link:auto:5".parse().unwrap()],
        seed: 11,
        requests: 300,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    let truth = intpath_eval::synth::generate(&cfg).await.unwrap();
    let fault = truth.faults[0].name.clone();
    let traces = dir.path().join("traces.otlp.json");
    let telemetry = dir.path().join("telemetry.db");

    let backend = dir.path().join("backend.db");
    let receiver = Receiver::start(
        Store::open(&backend).await.unwrap(),
        Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..Config::default()
        },
    )
    .await
    .unwrap();
    let url = format!("http://{}", receiver.local_addr());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_intpath"))
            .args(["diagnose", "rpcs", "--format", "json", "--traces"])
            .arg(&traces)
            .arg("--db")
            .arg(&telemetry)
            .args(["--export-otlp", &url])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rpcs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let summary = receiver.shutdown().await.unwrap();
    assert!(
        stderr.contains(&format!(
            "exported {} diagnosed spans",
            summary.spans_stored
        )),
        "{stderr} {summary:?}"
    );
    assert_eq!(summary.spans_rejected, 0);

    let store = Store::open_existing(&backend).await.unwrap();
    let stored = store.spans_between(i64::MIN, i64::MAX).await.unwrap();
    store.close().await;
    let by_id: HashMap<(&str, &str), &intpath_store::spans::SpanRow> = stored
        .spans
        .iter()
        .map(|s| ((s.span.trace_id.as_str(), s.span.span_id.as_str()), &s.span))
        .collect();
    let mut network = 0;
    for r in &rpcs {
        let (trace, span) = (r["trace"].as_str().unwrap(), r["span"].as_str().unwrap());
        let s = by_id
            .get(&(trace, span))
            .unwrap_or_else(|| panic!("{trace}/{span} not stored"));
        let a: Value = serde_json::from_str(&s.attributes).unwrap();
        assert_eq!(a["intpath.blame"], r["verdict"], "{a}");
        assert_eq!(a["intpath.network_ms"], r["network_ms"], "{a}");
        assert_eq!(a["intpath.links.forward"], r["forward"], "{a}");
        assert_eq!(a["intpath.links.reverse"], r["reverse"], "{a}");
        assert!(a["intpath.queueing_ms"].as_f64().unwrap() >= 0.0, "{a}");
        match r["culprit"].as_str().unwrap() {
            "" => assert!(a.get("intpath.culprit").is_none(), "{a}"),
            c => assert_eq!(a["intpath.culprit"], c, "{a}"),
        }
        assert_eq!(
            s.name,
            format!(
                "{} → {}",
                r["caller"].as_str().unwrap(),
                r["callee"].as_str().unwrap()
            )
        );
        let events: Vec<Value> = serde_json::from_str(&s.events).unwrap();
        let evidence: Vec<&Value> = events
            .iter()
            .filter(|e| e["name"] == "intpath.network_evidence")
            .collect();
        if r["verdict"] == "network" {
            network += 1;
            assert_eq!(evidence.len(), 1, "{events:?}");
            assert_eq!(evidence[0]["attributes"]["intpath.link"], r["culprit"]);
            assert_eq!(
                evidence[0]["attributes"]["intpath.fabric_ms"],
                r["fabric_ms"]
            );
        } else if r["verdict"] != "loss" {
            assert!(evidence.is_empty(), "{events:?}");
        }
    }
    // The injected link explains the network-blamed calls, in the backend.
    assert!(network > 10, "{network}");
    let blamed_on_fault = rpcs
        .iter()
        .filter(|r| r["verdict"] == "network" && r["culprit"] == fault.as_str())
        .count();
    assert!(
        blamed_on_fault * 2 > network,
        "{blamed_on_fault} of {network}"
    );
}

#[test]
fn an_export_url_that_is_not_http_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("t.json");
    std::fs::write(&traces, "{\"resourceSpans\": []}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["diagnose", "rpcs", "--traces"])
        .arg(&traces)
        .args(["--export-otlp", "localhost:4318"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"localhost:4318\" is not an http:// URL of an OTLP/HTTP endpoint"),
        "{err}"
    );
}

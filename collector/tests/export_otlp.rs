//! `intpath-collector receive --export-otlp URL`: a real receiver process
//! takes a multi-service trace set over OTLP/HTTP and sends it on,
//! diagnosed, to a second real receiver (ours, in this process): every
//! span arrives once with the `intpath.*` attributes of its call, a span
//! that arrives after its trace went out is sent alone, and a backend that
//! is down neither stops the receiver nor loses what it held.

use intpath_collector::otlp::{Config, Receiver, Summary};
use intpath_eval::synth::{App, Config as SynthConfig};
use intpath_store::spans::StoredSpans;
use intpath_store::Store;
use intpath_test_support::otlp::{post, wait_for_listener};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A synthetic Hotel run on FatTree k=4 with a congested link:
/// `traces.otlp.json` and `telemetry.db` (its INT run) in `dir`.
async fn synth(dir: &Path, requests: usize) -> Value {
    let cfg = SynthConfig {
        topo: intpath_core::topo::Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        world: Default::default(),
        faults: vec!["link:auto:5".parse().unwrap()],
        seed: 11,
        requests,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.to_owned(),
    };
    intpath_eval::synth::generate(&cfg).await.unwrap();
    serde_json::from_slice(&std::fs::read(dir.join("traces.otlp.json")).unwrap()).unwrap()
}

/// `doc` with only the spans `keep` takes.
fn only(doc: &Value, keep: impl Fn(&Value) -> bool) -> Value {
    let mut out = doc.clone();
    for rs in out["resourceSpans"].as_array_mut().unwrap() {
        for ss in rs["scopeSpans"].as_array_mut().unwrap() {
            ss["spans"].as_array_mut().unwrap().retain(&keep);
        }
    }
    out
}

/// The first half of the traces of `spans` (trace and span ids), in
/// trace id order: what a test sends before the rest.
fn first_half(spans: &HashSet<(String, String)>) -> HashSet<String> {
    let mut traces: Vec<&String> = spans.iter().map(|(t, _)| t).collect();
    traces.sort();
    traces.dedup();
    traces.truncate(traces.len() / 2);
    traces.into_iter().cloned().collect()
}

/// Whether span `s` (OTLP JSON) belongs to one of `traces`.
fn in_traces(traces: &HashSet<String>, s: &Value) -> bool {
    traces.contains(&s["traceId"].as_str().unwrap().to_lowercase())
}

/// Every span of `doc`, as (trace, span) ids.
fn ids(doc: &Value) -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    for rs in doc["resourceSpans"].as_array().unwrap() {
        for ss in rs["scopeSpans"].as_array().unwrap() {
            for s in ss["spans"].as_array().unwrap() {
                let id = |k: &str| s[k].as_str().unwrap().to_lowercase();
                out.insert((id("traceId"), id("spanId")));
            }
        }
    }
    out
}

/// Posts `doc` as OTLP/JSON to the receiver at `addr`; it must take it.
async fn send(addr: &str, doc: &Value) {
    let body = serde_json::to_vec(doc).unwrap();
    let client = reqwest::Client::new();
    let a = post(&client, addr, "application/json", None, body)
        .await
        .unwrap();
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
}

/// A receiver process, killed if a failed assertion drops it.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `receive` on `db` exporting to `url` every 0.3 s, traces quiet for 1 s,
/// its log into `log`; once it listens, with its address.
fn receiver(db: &Path, url: &str, log: &Path) -> (Running, String) {
    let addr = intpath_test_support::free_addr();
    let child = Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["receive", "--db"])
        .arg(db)
        .args(["--otlp-listen", &addr, "--export-otlp", url])
        .args(["--export-every", "0.3", "--export-quiet", "1"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let child = Running(Some(child));
    assert!(wait_for_listener(&addr, Duration::from_secs(20)));
    (child, addr)
}

/// SIGTERM, and the summary the receiver prints as it stops.
fn stop(mut running: Running) -> Value {
    let child = running.0.take().unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "receiver exited with {}", out.status);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A backend: our receiver on `listen`, storing into `db`.
async fn backend(db: &Path, listen: &str) -> Receiver {
    let cfg = Config {
        listen: listen.parse().unwrap(),
        ..Config::default()
    };
    Receiver::start(Store::open(db).await.unwrap(), cfg)
        .await
        .unwrap()
}

async fn stored(db: &Path) -> StoredSpans {
    let store = Store::open_existing(db).await.unwrap();
    let s = store.spans().await.unwrap();
    store.close().await;
    s
}

/// Waits until `db` holds every span of `want` (at most a minute).
async fn wait_for(db: &Path, want: &HashSet<(String, String)>) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let got: HashSet<(String, String)> = stored(db)
            .await
            .spans
            .into_iter()
            .map(|s| (s.span.trace_id, s.span.span_id))
            .collect();
        if want.is_subset(&got) {
            return;
        }
        assert!(
            Instant::now() < until,
            "{} of {} spans exported",
            want.intersection(&got).count(),
            want.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The backend stored each span it was sent once, and only once.
fn once(summary: &Summary, n: usize) {
    assert_eq!(summary.spans_stored, n as u64, "{summary:?}");
    assert_eq!(summary.spans_duplicate, 0, "{summary:?}");
    assert_eq!(summary.spans_conflicting, 0, "{summary:?}");
    assert_eq!(summary.spans_rejected, 0, "{summary:?}");
}

/// The attributes of each stored span, by ids.
fn attributes(s: &StoredSpans) -> std::collections::HashMap<(String, String), (Value, Value)> {
    s.spans
        .iter()
        .map(|s| {
            let a = serde_json::from_str(&s.span.attributes).unwrap();
            let e = serde_json::from_str(&s.span.events).unwrap();
            ((s.span.trace_id.clone(), s.span.span_id.clone()), (a, e))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn received_traces_reach_the_backend_diagnosed_each_span_once() {
    let dir = tempfile::tempdir().unwrap();
    let doc = synth(dir.path(), 300).await;
    let all = ids(&doc);
    // The first half of the traces, but for one server span of a call that
    // arrives late; then the rest.
    let first = first_half(&all);
    let is_first = |s: &Value| in_traces(&first, s);
    let late = only(&doc, |s| {
        is_first(s) && s.get("parentSpanId").is_some() && s["kind"] == 2
    });
    let late_id = ids(&late).into_iter().min().unwrap();
    let is_late = |s: &Value| {
        s["spanId"].as_str().unwrap().to_lowercase() == late_id.1
            && s["traceId"].as_str().unwrap().to_lowercase() == late_id.0
    };
    let part_a = only(&doc, |s| is_first(s) && !is_late(s));
    let part_b = only(&doc, |s| !is_first(s) || is_late(s));

    let backend_db = dir.path().join("backend.db");
    let back = backend(&backend_db, "127.0.0.1:0").await;
    let url = format!("http://{}", back.local_addr());
    // The receiver stores into the synthetic run's database: its INT and
    // topology are the evidence, as `intpath diagnose --db` takes them.
    let log = dir.path().join("receive.log");
    let (child, addr) = receiver(&dir.path().join("telemetry.db"), &url, &log);

    send(&addr, &part_a).await;
    wait_for(&backend_db, &ids(&part_a)).await;
    send(&addr, &part_b).await;
    wait_for(&backend_db, &all).await;
    let summary = stop(child);
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(summary["spans_stored"], all.len(), "{summary}");
    let export = &summary["export"];
    assert_eq!(export["spans_exported"], all.len(), "{summary}\n{log}");
    assert_eq!(export["spans_failed"], 0, "{summary}\n{log}");
    assert_eq!(export["spans_undiagnosed"], 0, "{summary}\n{log}");
    assert_eq!(export["failed_rounds"], 0, "{summary}\n{log}");
    assert!(!log.contains("OTLP export round failed"), "{log}");

    let back_summary = back.shutdown().await.unwrap();
    once(&back_summary, all.len());
    let got = stored(&backend_db).await;
    let attrs = attributes(&got);
    let got_ids: HashSet<(String, String)> = attrs.keys().cloned().collect();
    assert_eq!(got_ids, all);

    // Every call the diagnosis of the whole run joins carries its findings
    // on both of its spans, with the links it crossed.
    let req = intpath_diagnose::Request::of_db(dir.path().join("telemetry.db").into());
    let inputs = intpath_diagnose::load(&req).await.unwrap();
    let d = intpath_diagnose::analyze(&inputs, &intpath_diagnose::Options::default()).unwrap();
    assert!(d.run.is_some(), "the run's INT is the evidence");
    assert!(d.edges.len() > 300, "{}", d.edges.len());
    let by_id: std::collections::HashMap<(String, String), &intpath_store::spans::SpanRow> = got
        .spans
        .iter()
        .map(|s| ((s.span.trace_id.clone(), s.span.span_id.clone()), &s.span))
        .collect();
    let mut evidence = 0;
    let mut late_seen = false;
    for e in &d.edges {
        let trace = d.traces[e.trace as usize].clone();
        let server = (trace.clone(), e.server_span.clone());
        let client = by_id[&server]
            .parent_span_id
            .clone()
            .map(|p| (trace.clone(), p));
        // The late span's client went out with its trace, before the
        // call could be joined: it is not sent again with the findings.
        let client = match server == late_id {
            true => {
                late_seen = true;
                let (a, _) = &attrs[client.as_ref().unwrap()];
                assert!(a.get("intpath.blame").is_none(), "{a}");
                None
            }
            false => client,
        };
        for span in std::iter::once(&server).chain(client.as_ref()) {
            let (a, events) = &attrs[span];
            for key in ["intpath.blame", "intpath.network_ms", "intpath.queueing_ms"] {
                assert!(a.get(key).is_some(), "{span:?} has no {key}: {a}");
            }
            assert!(a["intpath.links.forward"].as_array().is_some(), "{a}");
            assert!(a["intpath.links.reverse"].as_array().is_some(), "{a}");
            if a["intpath.blame"] == "network" {
                assert!(a["intpath.culprit"].as_str().is_some(), "{a}");
                let names: Vec<&Value> = events
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| &e["name"])
                    .collect();
                assert!(
                    names.contains(&&Value::from("intpath.network_evidence")),
                    "{events}"
                );
                evidence += 1;
            }
        }
    }
    assert!(late_seen, "the late span is a call's server span");
    assert!(evidence > 0, "no call blamed on the congested link");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_that_is_down_is_logged_and_retried_and_stops_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let doc = synth(dir.path(), 100).await;
    let all = ids(&doc);
    let first = first_half(&all);
    let is_first = |s: &Value| in_traces(&first, s);

    // A fresh database, no probe run: a diagnosis from the traces alone.
    let db = dir.path().join("spans.db");
    let down = intpath_test_support::free_addr();
    let url = format!("http://{down}");
    let log = dir.path().join("receive.log");
    let (mut child, addr) = receiver(&db, &url, &log);
    send(&addr, &only(&doc, is_first)).await;
    // Rounds fail, one line each; the receiver goes on taking spans.
    let until = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&log)
        .unwrap()
        .matches("OTLP export round failed")
        .count()
        < 2
    {
        assert!(Instant::now() < until, "no failed round logged");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let alive = child.0.as_mut().unwrap().try_wait().unwrap().is_none();
    assert!(alive, "the receiver stopped");
    send(&addr, &only(&doc, |s| !is_first(s))).await;

    // The backend comes up: what was held is sent, once.
    let backend_db = dir.path().join("backend.db");
    let back = backend(&backend_db, &down).await;
    wait_for(&backend_db, &all).await;
    let summary = stop(child);
    let log = std::fs::read_to_string(&log).unwrap();
    let failures: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("OTLP export round failed"))
        .collect();
    assert!(
        failures.iter().all(|l| l.contains(&format!(
            "OTLP export round failed: {url}/v1/traces: cannot export: "
        )) && l.contains("spans held for the next round")),
        "{log}"
    );
    let export = &summary["export"];
    assert_eq!(summary["spans_stored"], all.len(), "{summary}");
    assert_eq!(export["spans_exported"], all.len(), "{summary}");
    assert_eq!(export["spans_failed"], 0, "{summary}");
    assert_eq!(export["failed_rounds"], failures.len(), "{summary}\n{log}");
    once(&back.shutdown().await.unwrap(), all.len());
    // From the traces alone: findings, but no links.
    let got = stored(&backend_db).await;
    let attrs = attributes(&got);
    let blamed = attrs
        .values()
        .filter(|(a, _)| a.get("intpath.blame").is_some())
        .count();
    assert!(blamed > all.len() / 2, "{blamed} of {}", all.len());
    assert!(attrs
        .values()
        .all(|(a, _)| a.get("intpath.links.forward").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_down_to_the_end_counts_the_spans_it_never_took() {
    let dir = tempfile::tempdir().unwrap();
    let doc = synth(dir.path(), 100).await;
    let all = ids(&doc);
    let db: PathBuf = dir.path().join("spans.db");
    let url = format!("http://{}", intpath_test_support::free_addr());
    let log = dir.path().join("receive.log");
    let (child, addr) = receiver(&db, &url, &log);
    send(&addr, &doc).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let summary = stop(child);
    let log = std::fs::read_to_string(&log).unwrap();
    // Nothing received is lost: the spans are stored, and counted failed.
    assert_eq!(summary["spans_stored"], all.len(), "{summary}");
    assert_eq!(summary["spans_lost"], 0, "{summary}");
    let export = &summary["export"];
    assert_eq!(export["spans_exported"], 0, "{summary}");
    assert_eq!(export["spans_failed"], all.len(), "{summary}\n{log}");
    assert!(export["failed_rounds"].as_u64().unwrap() >= 1, "{summary}");
    assert!(
        log.contains(&format!("{} spans not exported at stop", all.len())),
        "{log}"
    );
    assert_eq!(stored(&db).await.spans.len(), all.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traces_outside_the_databases_run_are_diagnosed_from_the_traces_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = synth(dir.path(), 100).await;
    // The same requests a day after the run's probes.
    for rs in doc["resourceSpans"].as_array_mut().unwrap() {
        for ss in rs["scopeSpans"].as_array_mut().unwrap() {
            for s in ss["spans"].as_array_mut().unwrap() {
                for k in ["startTimeUnixNano", "endTimeUnixNano"] {
                    let t: i64 = s[k].as_str().unwrap().parse().unwrap();
                    s[k] = Value::from((t + 86_400_000_000_000).to_string());
                }
            }
        }
    }
    let all = ids(&doc);
    let backend_db = dir.path().join("backend.db");
    let back = backend(&backend_db, "127.0.0.1:0").await;
    let url = format!("http://{}", back.local_addr());
    let log = dir.path().join("receive.log");
    let (child, addr) = receiver(&dir.path().join("telemetry.db"), &url, &log);
    send(&addr, &doc).await;
    wait_for(&backend_db, &all).await;
    let summary = stop(child);
    assert_eq!(summary["export"]["spans_exported"], all.len(), "{summary}");
    assert_eq!(summary["export"]["spans_undiagnosed"], 0, "{summary}");
    once(&back.shutdown().await.unwrap(), all.len());
    let attrs = attributes(&stored(&backend_db).await);
    let blamed = attrs
        .values()
        .filter(|(a, _)| a.get("intpath.blame").is_some())
        .count();
    assert!(blamed > all.len() / 2, "{blamed} of {}", all.len());
    assert!(attrs
        .values()
        .all(|(a, _)| a.get("intpath.links.forward").is_none()));
}

#[test]
fn export_flags_that_cannot_work_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
            .arg("receive")
            .arg("--db")
            .arg(&db)
            .args(["--otlp-listen", &intpath_test_support::free_addr()])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} was taken");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&["--export-otlp", "localhost:4318"]);
    assert!(
        err.contains("\"localhost:4318\" is not an http:// URL of an OTLP/HTTP endpoint"),
        "{err}"
    );
    let err = run(&["--export-otlp", "http://127.0.0.1:1", "--export-every", "0"]);
    assert!(
        err.contains("0: expected a number of seconds above 0, at most a day"),
        "{err}"
    );
    assert!(!db.exists(), "nothing is created for flags refused");
}

//! `intpath diagnose culprits` as a user runs it on a run it did not set
//! up by hand: the run's own topology and plan are the defaults, a wrong
//! one is refused, traces without INT (or from another time than the
//! run's) are diagnosed from the spans alone, and traces that cannot be used say why in a table before the error.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn intpath(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .expect("intpath runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The last line of a failed command's stderr: its one-line error.
fn error_line(out: &Output) -> String {
    assert!(!out.status.success(), "succeeded where it must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines().last().unwrap_or_default().to_owned()
}

/// A small synthetic FatTree k=4 run with a slow service: traces,
/// telemetry database, topology, plan.
fn synth(dir: &Path) {
    let out = dir.to_str().unwrap();
    ok(&intpath(&[
        "diagnose",
        "synth",
        "--topo",
        "fattree:k=4",
        "--fault",
        "service:profile:5:0.3",
        "--requests",
        "1500",
        "--rate",
        "150",
        "--seed",
        "3",
        "--out",
        out,
    ]));
}

/// Culprits as JSON, with `args` after the database and the traces.
fn culprits(dir: &Path, args: &[&str]) -> Output {
    let db = dir.join("telemetry.db");
    let traces = dir.join("traces.otlp.json");
    let mut all = vec![
        "diagnose",
        "culprits",
        "--db",
        db.to_str().unwrap(),
        "--traces",
        traces.to_str().unwrap(),
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    intpath(&all)
}

#[test]
fn the_runs_own_topology_and_plan_are_the_defaults_and_others_are_refused() {
    let dir = intpath_test_support::tempdir().unwrap();
    synth(dir.path());

    // Nothing but the database and the traces: the run's topology and
    // plan, INT links localised.
    let json: Value = serde_json::from_str(&ok(&culprits(dir.path(), &[]))).unwrap();
    assert_eq!(json["int"], true, "{json}");
    let first = &json["culprits"][0];
    assert_eq!(
        (first["kind"].as_str(), first["name"].as_str()),
        (Some("service"), Some("profile")),
        "{json}"
    );
    for key in ["kind", "name", "score", "evidence"] {
        assert!(first.get(key).is_some(), "{key} missing: {first}");
    }

    // The same topology, given: accepted.
    let topo = dir.path().join("topology.json");
    ok(&culprits(dir.path(), &["--topo", topo.to_str().unwrap()]));

    // Another topology: refused in one line naming both.
    let wrong = "leafspine:spines=4,leaves=8,hosts=4";
    let err = error_line(&culprits(dir.path(), &["--topo", wrong]));
    assert!(
        err.starts_with("intpath: error: ")
            && err.contains(wrong)
            && err.contains("not the one run 1 measured")
            && err.contains("20 switches, 16 hosts"),
        "{err}"
    );

    // A plan the run did not measure: refused.
    let other_plan = dir.path().join("other-plan.json");
    let dfs = ok(&intpath(&[
        "plan",
        "--topo",
        topo.to_str().unwrap(),
        "--algo",
        "dfs",
        "--format",
        "json",
    ]));
    std::fs::write(&other_plan, dfs).unwrap();
    let err = error_line(&culprits(
        dir.path(),
        &["--plan", other_plan.to_str().unwrap()],
    ));
    assert!(
        err.starts_with("intpath: error: the plan given")
            && err.contains("is not the one run 1 measured"),
        "{err}"
    );
}

#[test]
fn without_int_the_spans_alone_name_the_slow_service_and_say_links_are_not_localised() {
    let dir = intpath_test_support::tempdir().unwrap();
    synth(dir.path());
    let traces = dir.path().join("traces.otlp.json");
    let out = intpath(&[
        "diagnose",
        "culprits",
        "--traces",
        traces.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let json: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(json["int"], false, "{json}");
    assert_eq!(json["culprits"][0]["name"], "profile", "{json}");
    assert!(
        json["culprits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["kind"] != "link" && c["kind"] != "loss"),
        "a link named without INT: {json}"
    );

    // --no-int with the database: the same, and the table says why.
    let db = dir.path().join("telemetry.db");
    let table = ok(&intpath(&[
        "diagnose",
        "culprits",
        "--db",
        db.to_str().unwrap(),
        "--traces",
        traces.to_str().unwrap(),
        "--no-int",
    ]));
    assert!(table.contains("links are not localised"), "{table}");
}

/// Every span of an OTLP/JSON file moved `by_ns` later.
fn shifted(value: &mut Value, by_ns: i64) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v.as_str()) {
                    ("startTimeUnixNano" | "endTimeUnixNano", Some(t)) => {
                        let t: i64 = t.parse().unwrap();
                        *v = Value::String((t + by_ns).to_string());
                    }
                    _ => shifted(v, by_ns),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| shifted(v, by_ns)),
        _ => {}
    }
}

#[test]
fn spans_from_outside_every_run_are_diagnosed_without_int_and_say_so() {
    let dir = intpath_test_support::tempdir().unwrap();
    synth(dir.path());
    // The same requests an hour after the run's probes.
    let traces = dir.path().join("traces.otlp.json");
    let mut json: Value = serde_json::from_slice(&std::fs::read(&traces).unwrap()).unwrap();
    shifted(&mut json, 3_600_000_000_000);
    let later = dir.path().join("later.otlp.json");
    std::fs::write(&later, json.to_string()).unwrap();
    let db = dir.path().join("telemetry.db");
    let (db, later) = (db.to_str().unwrap(), later.to_str().unwrap());

    let out = intpath(&[
        "diagnose", "culprits", "--db", db, "--traces", later, "--format", "json",
    ]);
    let json: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(json["int"], false, "{json}");
    assert_eq!(json["culprits"][0]["name"], "profile", "{json}");
    let table = ok(&intpath(&[
        "diagnose", "culprits", "--db", db, "--traces", later,
    ]));
    assert!(
        table.contains("no collector run in") && table.contains("shares a moment with the spans"),
        "{table}"
    );
}

#[test]
fn spans_that_cannot_be_used_print_their_rejects_before_the_error() {
    let dir = intpath_test_support::tempdir().unwrap();
    // Two services, one call, but the client span never reached a server
    // span of another service: no RPC edge can be formed.
    let lone = serde_json::json!({"resourceSpans": [{
        "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "front"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": "0102030405060708090a0b0c0d0e0f10",
            "spanId": "0102030405060708",
            "name": "GET /x", "kind": 3,
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000000005000000"}]}]}]});
    let path = dir.path().join("lone.json");
    std::fs::write(&path, lone.to_string()).unwrap();
    let out = intpath(&["diagnose", "culprits", "--traces", path.to_str().unwrap()]);
    let err = error_line(&out);
    assert!(
        err.starts_with("intpath: error: no usable RPC edge"),
        "{err}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rejects") && stderr.contains("call made outside any request"),
        "no reject table before the error: {stderr}"
    );

    // A file that is no span format names the flag that exists.
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, r#"{"algo":"euler","paths":[]}"#).unwrap();
    let err = error_line(&intpath(&[
        "diagnose",
        "culprits",
        "--traces",
        plan.to_str().unwrap(),
    ]));
    assert!(err.contains("--trace-format"), "{err}");
}

/// `--baseline`: a healthy period's spans, reported in the output; one
/// that cannot be read is refused in one line that says it was the
/// baseline.
#[test]
fn a_baseline_is_reported_and_one_that_cannot_be_read_is_refused_in_a_line() {
    let dir = intpath_test_support::tempdir().unwrap();
    synth(dir.path());
    // The run's own spans as its baseline: nothing differs between the
    // two, and the change within the run is still found.
    let traces = dir.path().join("traces.otlp.json");
    let same = ["--baseline", traces.to_str().unwrap()];
    let json: Value = serde_json::from_str(&ok(&culprits(dir.path(), &same))).unwrap();
    assert_eq!(json["culprits"][0]["name"], "profile", "{json}");
    let spans = json["baseline"]["spans"].as_u64().unwrap();
    assert!(spans > 10_000, "{json}");
    assert!(
        json["culprits"][0]["evidence"]["p_baseline"]
            .as_f64()
            .unwrap()
            > 0.05,
        "a run differs from itself: {json}"
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"spans_please": 1}"#).unwrap();
    let err = error_line(&culprits(
        dir.path(),
        &["--baseline", bad.to_str().unwrap()],
    ));
    assert!(
        err.starts_with("intpath: error: baseline: ") && err.contains("unknown span format"),
        "{err}"
    );
}

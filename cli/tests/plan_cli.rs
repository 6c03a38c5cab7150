//! The `intpath topo` and `intpath plan` commands as a user runs them.

use std::process::{Command, Output};

fn intpath(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run intpath")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn show_export_plan_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let show = stdout(&intpath(&["topo", "show", "--topo", "fattree:k=6"]));
    assert!(show.contains("switches         45"), "{show}");
    assert!(show.contains("odd-degree       18 switches"), "{show}");
    assert!(
        show.contains("minimum paths    9 (switch links, no hop limit)"),
        "{show}"
    );

    // The JSON export is a topology file in its own right.
    let topo = dir.path().join("t.json");
    let t = topo.to_str().unwrap();
    stdout(&intpath(&[
        "topo",
        "export",
        "--topo",
        "fattree:k=6",
        "-o",
        t,
    ]));
    let dot = stdout(&intpath(&[
        "topo", "export", "--topo", t, "--format", "dot",
    ]));
    assert!(dot.starts_with("graph topology {"), "{dot}");

    let plan = dir.path().join("plan.json");
    let p = plan.to_str().unwrap();
    stdout(&intpath(&[
        "plan", "--topo", t, "--format", "json", "-o", p,
    ]));
    let ok = stdout(&intpath(&["plan", "--topo", t, "--check", p]));
    assert!(ok.contains("ok: 9 paths cover all 108 links"), "{ok}");
    let table = stdout(&intpath(&[
        "plan",
        "--topo",
        t,
        "--algo",
        "dfs",
        "--max-hops",
        "6",
    ]));
    assert!(table.contains("algo dfs:"), "{table}");

    // A plan for another topology is refused, with reasons, and a non-zero exit.
    let other = intpath(&["plan", "--topo", "fattree:k=4", "--check", p]);
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("plan rejected"), "{err}");
    assert!(err.contains("is not in the topology"), "{err}");

    let bad = intpath(&["plan", "--topo", "fattree:k=5"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("fattree:k=5: k must be even"));
}

#[test]
fn shipped_topologies_load_and_match_their_generators() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../topologies");
    for (file, spec) in [
        ("fattree-4.json", "fattree:k=4"),
        ("fattree-8.json", "fattree:k=8"),
        ("leafspine-4x8.json", "leafspine:spines=4,leaves=8,hosts=2"),
        ("paper-fig4.json", "paper-fig4"),
    ] {
        let path = dir.join(file);
        let shipped = std::fs::read_to_string(&path).unwrap();
        let fresh = stdout(&intpath(&["topo", "export", "--topo", spec]));
        assert_eq!(shipped, fresh, "{file} is stale: re-export {spec}");
    }
    for file in [
        "p4lang-topology.json",
        "example-backbone.graphml",
        "example-backbone.gml",
        "ring.json",
        "p4app.json",
    ] {
        let path = dir.join(file);
        let out = stdout(&intpath(&["plan", "--topo", path.to_str().unwrap()]));
        assert!(out.contains("(lower bound"), "{out}");
    }
}

/// Runs intpath as a developer's shell would, with backtraces on.
fn intpath_err(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run intpath");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let e = String::from_utf8(o.stderr).unwrap();
    assert!(e.starts_with("intpath: error: "), "{e}");
    assert_eq!(e.lines().count(), 1, "not one line: {e}");
    e
}

#[test]
fn user_errors_are_one_line_even_with_backtraces_on() {
    let e = intpath_err(&["topo", "show", "--topo", "/nonexistent/t.json"]);
    assert_eq!(e.matches("os error 2").count(), 1, "cause repeated: {e}");
    let e = intpath_err(&["plan", "--topo", "fatree:k=4"]);
    assert!(
        e.contains("\"fatree\" is not a generator (known: fattree:k=K"),
        "{e}"
    );
    let e = intpath_err(&["plan", "--topo", "fattree:k=4", "--max-hops", "500"]);
    assert!(
        e.contains("--max-hops 500: a path has at most 44 links"),
        "{e}"
    );
}

#[test]
fn planning_checks_what_deploy_would_refuse() {
    // An MTU that would allow longer paths than the P4 stacks hold is capped.
    let plan = stdout(&intpath(&[
        "plan",
        "--topo",
        "fattree:k=8",
        "--mtu",
        "65535",
        "--format",
        "json",
    ]));
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan["stats"]["max_len"], 44, "{}", plan["stats"]);
    let help = stdout(&intpath(&["plan", "--help"]));
    assert!(
        help.contains("unless trails longer than the hop limit must be split"),
        "{help}"
    );
}

#[test]
fn self_loops_warn_or_fail_with_strict() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("zoo.gml");
    std::fs::write(
        &f,
        "graph [ node [ id 1 ] node [ id 2 ] edge [ source 1 target 2 ] edge [ source 2 target 2 ] ]",
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let o = intpath(&["topo", "show", "--topo", f]);
    let warn = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{warn}");
    assert!(warn.contains("self-loop at \"s2\" skipped"), "{warn}");
    let e = intpath_err(&["topo", "show", "--strict", "--topo", f]);
    assert!(e.contains("self-loop at \"s2\""), "{e}");
}

#[test]
fn a_single_switch_gets_the_include_hosts_hint() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("topology.json");
    std::fs::write(
        &f,
        r#"{"switches": {"s1": {}}, "hosts": {"h1": {}, "h2": {}},
            "links": [["h1", "s1-p1"], ["h2", "s1-p2"]]}"#,
    )
    .unwrap();
    let o = intpath(&["plan", "--topo", f.to_str().unwrap()]);
    assert!(o.status.success());
    let warn = String::from_utf8_lossy(&o.stderr);
    assert!(
        warn.contains("--include-hosts covers the host links"),
        "{warn}"
    );
}

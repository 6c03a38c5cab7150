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
    ] {
        let path = dir.join(file);
        let out = stdout(&intpath(&["plan", "--topo", path.to_str().unwrap()]));
        assert!(out.contains("(lower bound"), "{out}");
    }
}

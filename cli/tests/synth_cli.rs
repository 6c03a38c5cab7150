//! `intpath diagnose synth --family`: a family of `intpath eval diagnose`
//! written by name, its world and app recorded in truth.json.

use std::process::{Command, Output};

fn intpath(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .expect("intpath runs")
}

#[test]
fn a_family_is_written_by_name_with_its_world() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("media");
    let o = intpath(&[
        "diagnose",
        "synth",
        "--topo",
        "leafspine:spines=2,leaves=2,hosts=2",
        "--family",
        "media",
        "--seed",
        "1",
        "--requests",
        "40",
        "--rate",
        "100",
        "--jitter-us",
        "7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("truth.json")).unwrap()).unwrap();
    assert_eq!(truth["app"], "media");
    // The family's pools, its high fault, and the world flag on top.
    assert_eq!(truth["world"]["workers"], 4);
    assert_eq!(truth["world"]["work_sigma"], 0.6);
    assert_eq!(truth["world"]["jitter_us"], 7.0);
    assert_eq!(truth["faults"][0]["kind"], "service");
    assert!(truth["placement"]["compose-review"].is_string());

    let o = intpath(&[
        "diagnose",
        "synth",
        "--topo",
        "leafspine:spines=2,leaves=2,hosts=2",
        "--family",
        "crowded",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--family \"crowded\": no such family (link, service,")
            && err.contains("pools, jitter, loaded, media, delay, silent, early, whole)"),
        "{err}"
    );
}

//! `intpath-collector collect` refuses bad arguments before it touches the
//! database.

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

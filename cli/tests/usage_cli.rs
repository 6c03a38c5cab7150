//! What `intpath` says about how it is called: usage lines that mark only
//! the required flags, and a version on every subcommand.

use std::process::Command;

fn intpath(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .unwrap()
}

fn usage_line(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find(|l| l.starts_with("Usage:"))
        .unwrap_or_else(|| panic!("no usage line in {err}"))
        .to_owned()
}

#[test]
fn a_mistake_shows_the_usage_of_the_command_not_the_flags_given() {
    let bad = intpath(&[
        "plan",
        "--topo",
        "fattree:k=4",
        "--format",
        "json",
        "--bogus",
    ]);
    assert!(!bad.status.success());
    assert_eq!(
        usage_line(&bad),
        "Usage: intpath plan [OPTIONS] --topo <TOPO>"
    );
    let missing = intpath(&["plan", "--format", "json"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--topo <TOPO>"));
    assert_eq!(
        usage_line(&missing),
        "Usage: intpath plan [OPTIONS] --topo <TOPO>"
    );
    let nested = intpath(&[
        "query", "--db", "x.db", "link", "--metric", "qdelay", "--bogus",
    ]);
    assert_eq!(
        usage_line(&nested),
        "Usage: intpath query link [OPTIONS] <LINK>"
    );
}

#[test]
fn every_subcommand_has_a_version() {
    for args in [
        &["-V"][..],
        &["diagnose", "-V"],
        &["diagnose", "culprits", "--version"],
    ] {
        let out = intpath(args);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with("intpath") && text.trim_end().ends_with(env!("CARGO_PKG_VERSION")),
            "{args:?}: {text}"
        );
    }
}

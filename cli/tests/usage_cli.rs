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

/// A GraphML file has no hosts: `topo export`, `diagnose synth` and the
/// demo take them from `--hosts-per-switch` or `--hosts`, and say so when
/// they are missing.
#[test]
fn hosts_are_added_to_a_file_without_them() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/example-backbone.graphml"
    );
    let export = |extra: &[&str]| {
        let mut args = vec!["topo", "export", "--topo", file];
        args.extend_from_slice(extra);
        let out = intpath(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["hosts"].as_array().unwrap().clone()
    };
    assert!(export(&[]).is_empty());
    assert_eq!(export(&["--hosts-per-switch", "2"]).len(), 20);
    let on = export(&["--hosts", "s3,s7"]);
    assert_eq!(
        (on[0]["switch"].as_str(), on[1]["switch"].as_str()),
        (Some("s3"), Some("s7"))
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let synth = |extra: &[&str]| {
        let mut args = vec![
            "diagnose",
            "synth",
            "--topo",
            file,
            "--requests",
            "200",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        intpath(&args)
    };
    let refused = synth(&[]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("--hosts-per-switch N"), "{err}");
    let made = synth(&["--hosts-per-switch", "1"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let topo = std::fs::read_to_string(dir.path().join("topology.json")).unwrap();
    assert!(
        topo.contains("\"h10\"") && topo.contains("Northport"),
        "{topo}"
    );

    let both = intpath(&[
        "topo",
        "export",
        "--topo",
        file,
        "--hosts",
        "s1",
        "--hosts-per-switch",
        "1",
    ]);
    assert!(!both.status.success());
}

/// The README's first look builds `--no-default-features`, without the
/// lab and the web view: a command it leaves out says so in one line, with
/// the build that has it, where clap would call it unknown. `test.sh` runs
/// this file in both builds.
#[test]
fn a_command_left_out_of_the_build_says_how_to_build_it() {
    for (command, feature, present) in [
        ("demo", "lab", cfg!(feature = "lab")),
        ("watch", "lab", cfg!(feature = "lab")),
        ("serve", "web", cfg!(feature = "web")),
    ] {
        let out = intpath(&[command, "--help"]);
        let err = String::from_utf8_lossy(&out.stderr);
        if present {
            assert!(out.status.success(), "{command}: {err}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "intpath: `intpath {command}` is not in this build (built without the \
                 `{feature}` feature); `cargo build --release --locked --bin intpath` \
                 builds every command"
            )
        );
    }
    let typo = intpath(&["dmeo"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("unrecognized subcommand"));
}

/// `intpath … | head`: the reader closes the pipe after a few bytes, and
/// intpath stops there without an error or a panic, as `cat` would.
#[test]
fn a_reader_that_stops_early_ends_intpath_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    // Both outputs are larger than a pipe's buffer, so intpath is still
    // writing when the reader goes.
    for args in [
        &["completions", "bash"][..],
        &["plan", "--topo", "fattree:k=32", "--format", "json"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_intpath"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        let mut stdout = child.stdout.take().unwrap();
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

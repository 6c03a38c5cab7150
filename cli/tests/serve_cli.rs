//! `intpath serve` as a user runs it: it prints the page's address, answers
//! from a database the collector's real pipeline filled, waits for one that
//! does not exist yet, stops on SIGTERM, and refuses bad flags in one line.

use intpath_test_support::telemetry::lossy_db;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Starts `intpath serve --db DB` on a free port; the process and the URL
/// it printed.
fn serve(db: &str) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["serve", "--db", db, "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(
        line.starts_with(&format!("serving {db} on http://127.0.0.1:")),
        "{line}"
    );
    (child, url)
}

fn stop(mut child: std::process::Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_a_database_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("telemetry.db");
    let db = path.to_str().unwrap().to_owned();

    // Before the database exists: the page is served and says it waits.
    let (child, url) = serve(&db);
    let runs: serde_json::Value = reqwest::get(format!("{url}api/runs"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        runs["waiting"]
            .as_str()
            .unwrap()
            .contains("no such database"),
        "{runs}"
    );
    stop(child);

    lossy_db(db.clone()).await;
    let (child, url) = serve(&db);
    let page = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(page.contains("<title>intpath</title>"));
    let h: serde_json::Value = reqwest::get(format!("{url}api/heatmap"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(h["rows"][2]["name"], "s2:2->s3");
    stop(child);
}

/// Stopped the moment its port opens, it stops cleanly, exit 0; tried a
/// few times, since the window is short.
#[test]
fn sigterm_the_moment_the_port_opens_still_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("telemetry.db");
    intpath_test_support::daemon::stops_cleanly_once_listening(10, |addr| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_intpath"));
        c.args(["serve", "--listen", addr, "--db"]).arg(&db);
        c
    });
}

#[test]
fn bad_flags_fail_in_one_line() {
    for (args, says) in [
        (
            &["--live-window", "0"][..],
            "not a positive number of seconds",
        ),
        (&["--listen", "localhost"][..], "invalid socket address"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
            .arg("serve")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A port in use: one line naming it.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["serve", "--db", "x.db", "--listen", &addr])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
}

/// `intpath demo --web` serves before anything else starts, and stops with
/// the demo (here at once: the topology does not exist).
#[test]
fn demo_web_prints_the_address_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args([
            "demo",
            "--web",
            "127.0.0.1:0",
            "--topo",
            "no-such-topology.json",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let db = dir.path().join("telemetry.db");
    assert!(
        stdout.starts_with(&format!("web view of {}: http://127.0.0.1:", db.display())),
        "{stdout}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-topology.json"), "{err}");
}

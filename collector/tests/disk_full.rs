//! The collector on a filesystem that fills up (a small tmpfs, filled
//! once the collector runs; root only):
//! every probe it reports as stored is in the database, every other one is
//! reported as lost with a non-zero exit, and batches held while the disk
//! was full reach the file once space comes back.

mod common;

use common::*;
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_core::plan::Plan;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mnt)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mount tmpfs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self { _dir: dir, mnt }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mnt).output();
    }
}

/// A collector writing into a tmpfs of its own.
struct Run {
    fs: Tmpfs,
    /// The plan and the collector's log.
    dir: tempfile::TempDir,
    db: PathBuf,
    plan: Plan,
    child: std::process::Child,
    addr: String,
}

impl Run {
    /// The collector starts on an 8 MiB tmpfs: an empty database takes
    /// about 1.1 MB there (the migrations' WAL in 16 KiB pages), so the
    /// tests fill the disk with [`fill`] once it runs, whatever the schema
    /// costs.
    fn start() -> Self {
        let fs = Tmpfs::mount("8m");
        let dir = tempfile::tempdir().unwrap();
        let db = fs.mnt.join("t.db");
        let (_, plan) = fattree_path();
        let (child, addr) = start_daemon(dir.path(), &plan, &db, &["--flush-ms", "50"]);
        Self {
            fs,
            dir,
            db,
            plan,
            child,
            addr,
        }
    }
}

/// Fills `dir`'s filesystem with one file, then gives back `keep` bytes.
fn fill(dir: &Path, keep: u64) -> PathBuf {
    let path = dir.join("ballast");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![0xa5u8; 16 << 10];
    let mut len = 0u64;
    while f.write_all(&chunk).is_ok() {
        len += chunk.len() as u64;
    }
    let _ = f.flush();
    f.set_len(len.saturating_sub(keep)).unwrap();
    path
}

/// Sends probes `seqs` of the plan's path, paced so the kernel keeps up.
fn send(plan: &Plan, addr: &str, seqs: std::ops::Range<u32>) {
    let (links, _) = fattree_path();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let q = |_: u32| 3;
    for seq in seqs {
        let c = Conditions {
            sequence: seq,
            send_ns: now,
            qdepth: &q,
            sink_port: 1,
        };
        let p = finished_probe(&plan.paths[0], &links, &c);
        sock.send_to(&udp_payload(&p), addr).unwrap();
        if seq % 50 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Stops the daemon; its exit status, JSON summary and log.
fn stop(child: std::process::Child, dir: &Path) -> (bool, serde_json::Value, String) {
    std::thread::sleep(Duration::from_millis(500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    // The log copier finishes once the pipe closes.
    std::thread::sleep(Duration::from_millis(200));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout:?}"));
    (
        out.status.success(),
        summary,
        std::fs::read_to_string(dir.join("collector.log")).unwrap(),
    )
}

/// Probe rows, distinct sequence numbers and probes counted in the path
/// buckets, read from a copy of the database (the full tmpfs cannot hold a
/// reader's files).
fn rows(db: &Path) -> (u64, u64, u64) {
    let copy = tempfile::tempdir().unwrap();
    for ext in ["", "-wal"] {
        let from = PathBuf::from(format!("{}{ext}", db.display()));
        if from.exists() {
            std::fs::copy(&from, copy.path().join(format!("t.db{ext}"))).unwrap();
        }
    }
    let c = rusqlite::Connection::open(copy.path().join("t.db")).unwrap();
    c.query_row(
        "SELECT (SELECT count(*) FROM probes), (SELECT count(DISTINCT seq) FROM probes), \
         (SELECT COALESCE(sum(probes), 0) FROM path_buckets)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

fn field(s: &serde_json::Value, name: &str) -> u64 {
    s[name].as_u64().unwrap_or(0)
}

#[test]
#[ignore = "needs root"]
fn a_disk_that_fills_loses_nothing_acknowledged_and_reports_the_rest() {
    let Run {
        fs,
        dir,
        db,
        plan,
        child,
        addr,
    } = Run::start();
    // Room for a few batches, then the disk is full for good.
    let _ballast = fill(&fs.mnt, 512 << 10);
    let sent = 20_000;
    send(&plan, &addr, 0..sent);
    let (ok, summary, stderr) = stop(child, dir.path());
    eprintln!("summary: {summary}");
    let (probes, distinct, bucketed) = rows(&db);
    assert!(!ok, "exit 0 although the disk filled: {summary} {stderr}");
    let err = stderr.lines().last().unwrap_or_default();
    assert!(
        err.starts_with("intpath-collector: error: ")
            && err.contains("lost")
            && err.contains("full"),
        "{err}"
    );
    let lost = field(&summary, "lost_probes");
    assert!(lost > 0, "{summary}");
    assert!(probes > 0, "the disk was full before the run: {summary}");
    assert!(
        err.contains(&lost.to_string()),
        "the error names another count: {err} {summary}"
    );
    assert_eq!(field(&summary, "probes"), probes, "{summary}");
    assert_eq!((distinct, bucketed), (probes, probes), "{summary}");
    assert_eq!(
        probes + lost + field(&summary, "udp_drops"),
        u64::from(sent),
        "{summary}"
    );
}

#[test]
#[ignore = "needs root"]
fn batches_held_while_the_disk_is_full_reach_the_file_when_space_returns() {
    let Run {
        fs,
        dir,
        db,
        plan,
        child,
        addr,
    } = Run::start();
    let ballast = fill(&fs.mnt, 96 << 10);
    send(&plan, &addr, 0..20_000);
    std::thread::sleep(Duration::from_secs(1));
    std::fs::remove_file(ballast).unwrap();
    send(&plan, &addr, 20_000..22_000);
    let (ok, summary, stderr) = stop(child, dir.path());
    eprintln!("summary: {summary}");
    assert!(
        field(&summary, "store_outages") > 0,
        "the disk never filled: {summary}"
    );
    assert!(ok, "{summary} {stderr}");
    let (probes, distinct, bucketed) = rows(&db);
    assert_eq!(field(&summary, "lost_probes"), 0, "{summary}");
    assert_eq!(field(&summary, "probes"), probes, "{summary}");
    assert_eq!((distinct, bucketed), (probes, probes), "{summary}");
    assert_eq!(probes + field(&summary, "udp_drops"), 22_000, "{summary}");
}

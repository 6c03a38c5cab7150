//! A collector on a small tmpfs that the test fills and frees (root
//! only), the probes sent to it and what its database holds afterwards:
//! shared by the disk-full tests of probes and spans.

use super::*;
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_core::plan::Plan;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
pub struct Tmpfs {
    _dir: tempfile::TempDir,
    pub mnt: PathBuf,
}

impl Tmpfs {
    pub fn mount(size: &str) -> Self {
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

/// The size of the tmpfs the tests fill.
pub const TMPFS: &str = "64m";

/// A collector writing into a tmpfs of its own.
pub struct Run {
    pub fs: Tmpfs,
    /// The plan and the collector's log.
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
    pub plan: Plan,
    pub child: std::process::Child,
    pub addr: String,
}

impl Run {
    /// The collector starts on a tmpfs of [`TMPFS`]: an empty database
    /// takes about 1.1 MB (the migrations' WAL in 16 KiB pages), so the
    /// tests fill the disk with [`fill`] once it runs, whatever the schema
    /// costs, and have room to spare once they free it.
    pub fn start(extra: &[&str]) -> Self {
        let fs = Tmpfs::mount(TMPFS);
        let dir = tempfile::tempdir().unwrap();
        let db = fs.mnt.join("t.db");
        let (_, plan) = fattree_path();
        let (child, addr) = start_daemon(
            dir.path(),
            &plan,
            &db,
            &[&["--flush-ms", "50"], extra].concat(),
        );
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
pub fn fill(dir: &Path, keep: u64) -> PathBuf {
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
pub fn send_probes(plan: &Plan, addr: &str, seqs: std::ops::Range<u32>) {
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
pub fn stop(child: std::process::Child, dir: &Path) -> (bool, serde_json::Value, String) {
    std::thread::sleep(Duration::from_millis(500));
    let (ok, summary, _) = terminate(child);
    // The log copier finishes once the pipe closes.
    std::thread::sleep(Duration::from_millis(200));
    let log = std::fs::read_to_string(dir.join("collector.log")).unwrap();
    (ok, summary, log)
}

/// Sends SIGTERM; whether the process exited 0, the JSON summary on its
/// last line of output, and its output.
pub fn terminate(child: std::process::Child) -> (bool, serde_json::Value, std::process::Output) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout:?}"));
    (out.status.success(), summary, out)
}

/// A copy of the database `db` with its WAL, to read (a full tmpfs cannot
/// hold a reader's files); the copy lives as long as the directory.
pub fn copy_db(db: &Path) -> (tempfile::TempDir, PathBuf) {
    let copy = tempfile::tempdir().unwrap();
    for ext in ["", "-wal"] {
        let from = PathBuf::from(format!("{}{ext}", db.display()));
        if from.exists() {
            std::fs::copy(&from, copy.path().join(format!("t.db{ext}"))).unwrap();
        }
    }
    let path = copy.path().join("t.db");
    (copy, path)
}

/// Probe rows, distinct sequence numbers and probes counted in the path
/// buckets.
pub fn rows(db: &Path) -> (u64, u64, u64) {
    let (_copy, path) = copy_db(db);
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(
        "SELECT (SELECT count(*) FROM probes), (SELECT count(DISTINCT seq) FROM probes), \
         (SELECT COALESCE(sum(probes), 0) FROM path_buckets)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

pub fn field(s: &serde_json::Value, name: &str) -> u64 {
    s[name].as_u64().unwrap_or(0)
}

//! `intpath lab down`: the user's processes first (SIGTERM, so that their
//! exporters flush their spans while the receiver still runs), then the
//! supervisor, which stops the collector once everything is stored and
//! then the network. Idempotent: a lab already down is left alone, and
//! whatever a lab whose processes were killed left (switch processes, host
//! shells holding namespaces, switch interfaces) is cleared by the
//! launcher's `--cleanup`.

use super::state::{alive, LabDir, LabState};
use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long the user's processes get to flush and exit after SIGTERM.
const USER_GRACE: Duration = Duration::from_secs(10);
/// How long the supervisor gets to store the last spans and probes and tear
/// the network down (a FatTree k=8 takes about 15 s).
const SUPERVISOR_GRACE: Duration = Duration::from_secs(120);

/// What `down` did.
#[derive(Debug, Default, Clone)]
pub struct DownReport {
    /// User processes stopped by SIGTERM, and those that needed SIGKILL.
    pub stopped: usize,
    pub killed: usize,
    /// Whether a running supervisor was stopped.
    pub supervisor: bool,
    /// Whether leftovers of a killed lab were cleaned up.
    pub cleaned: bool,
}

impl DownReport {
    pub fn did_something(&self) -> bool {
        self.stopped + self.killed > 0 || self.supervisor || self.cleaned
    }
}

impl std::fmt::Display for DownReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.did_something() {
            return write!(f, "nothing was running");
        }
        let mut parts = Vec::new();
        if self.stopped + self.killed > 0 {
            parts.push(format!(
                "{} of your processes stopped ({} needed SIGKILL)",
                self.stopped + self.killed,
                self.killed
            ));
        }
        if self.supervisor {
            parts.push("collector, probes and network stopped".to_owned());
        }
        if self.cleaned {
            parts.push("leftovers of a killed lab removed".to_owned());
        }
        write!(f, "{}", parts.join("; "))
    }
}

/// Stops the lab in `dir`, whatever state it is in.
pub fn down(dir: &LabDir) -> Result<DownReport> {
    let mut report = DownReport::default();
    if !dir.path.exists() {
        return Ok(report);
    }
    stop_user_procs(dir, &mut report)?;
    if dir.running()? {
        let state: Option<LabState> = super::state::read_json(&dir.state()).ok();
        let pid = state
            .map(|s| s.supervisor_pid)
            .or_else(|| lock_holder(dir))
            .context("a lab runs but neither lab.json nor /proc names its supervisor")?;
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        let deadline = Instant::now() + SUPERVISOR_GRACE;
        while dir.running()? {
            if Instant::now() > deadline {
                tracing::warn!("the supervisor (pid {pid}) did not stop within {SUPERVISOR_GRACE:?}; killing it");
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                std::thread::sleep(Duration::from_millis(500));
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        report.supervisor = true;
    }
    report.cleaned = clean_leftovers(dir)?;
    Ok(report)
}

/// SIGTERM to every recorded process group still running, SIGKILL to those
/// still there after [`USER_GRACE`]; the records go.
fn stop_user_procs(dir: &LabDir, report: &mut DownReport) -> Result<()> {
    let procs = dir.user_procs()?;
    let running: Vec<_> = procs
        .iter()
        .filter(|(_, p)| alive(p.pid, p.start_time))
        .collect();
    for (_, p) in &running {
        let _ = kill(Pid::from_raw(-(p.pid as i32)), Signal::SIGTERM);
    }
    let deadline = Instant::now() + USER_GRACE;
    while running.iter().any(|(_, p)| alive(p.pid, p.start_time)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    for (_, p) in &running {
        if alive(p.pid, p.start_time) {
            tracing::warn!(
                "pid {} ({}) ignored SIGTERM for {USER_GRACE:?}; killing it",
                p.pid,
                p.argv.join(" ")
            );
            let _ = kill(Pid::from_raw(-(p.pid as i32)), Signal::SIGKILL);
            report.killed += 1;
        } else {
            report.stopped += 1;
        }
    }
    for (path, _) in procs {
        std::fs::remove_file(&path)
            .with_context(|| format!("{}: cannot remove", path.display()))?;
    }
    Ok(())
}

/// The pid holding the lab's lock, from /proc/locks, for a supervisor
/// that died before it wrote lab.json.
fn lock_holder(dir: &LabDir) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(dir.lock()).ok()?.ino();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // `1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END`
        let inode = f.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
        (f.get(1) == Some(&"FLOCK") && inode == ino).then(|| f.get(4)?.parse().ok())?
    })
}

/// Runs the launcher's `--cleanup` for the lab's topology if anything of
/// the lab is left: a host shell of its network or a switch interface.
fn clean_leftovers(dir: &LabDir) -> Result<bool> {
    let topo_json = dir.path.join("topology.json");
    let script = dir.path.join("intpath_net.py");
    if !topo_json.exists() {
        return Ok(false);
    }
    let topo = intpath_core::topo::Topology::load(&topo_json.to_string_lossy())?;
    let switches: Vec<String> = topo
        .switches()
        .iter()
        .map(|s| format!("{}-eth", s.name))
        .collect();
    let interfaces = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    switches.iter().any(|s| n.starts_with(s.as_str()))
                })
                .count()
        })
        .unwrap_or(0);
    let shells = host_shells(&topo);
    if interfaces == 0 && shells == 0 {
        return Ok(false);
    }
    std::fs::write(&script, crate::network::LAUNCHER)
        .with_context(|| format!("{}: cannot write", script.display()))?;
    let mut cmd = Command::new(crate::network::PYTHON);
    cmd.arg(&script)
        .arg("--cleanup")
        .arg("--topo")
        .arg(&topo_json);
    if let Ok(me) = std::env::current_exe() {
        cmd.arg("--intpath").arg(me);
    }
    let out = cmd
        .output()
        .context("cannot run the Mininet launcher's cleanup")?;
    anyhow::ensure!(
        out.status.success(),
        "cleaning up what the lab left failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(true)
}

/// Mininet host shells (`bash … -is mininet:NAME`) of `topo`'s hosts still
/// running.
fn host_shells(topo: &intpath_core::topo::Topology) -> usize {
    let names: Vec<String> = topo
        .hosts()
        .iter()
        .map(|h| format!("mininet:{}", h.name))
        .collect();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmdline| {
            cmdline
                .split(|&b| b == 0)
                .any(|arg| names.iter().any(|n| arg == n.as_bytes()))
        })
        .count()
}

//! `intpath lab up`: starts the supervisor in a session of its own and
//! returns once it has written where everything is.

use super::state::{write_json, LabConfig, LabDir, LabState};
use anyhow::{bail, Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the network, deploy, collector and probes may take together
/// (a FatTree k=8 on two busy cores takes about a minute).
const READY_TIMEOUT: Duration = Duration::from_secs(240);

/// Starts a lab in `dir` with `config`. `supervisor` is the command that
/// runs [`super::supervise`] on `dir` (the caller's own program, which
/// knows its command line); it is started detached, its output in
/// `DIR/logs/supervisor.log`.
pub fn up(dir: &LabDir, config: &LabConfig, mut supervisor: Command) -> Result<LabState> {
    std::fs::create_dir_all(dir.logs())
        .with_context(|| format!("{}: cannot create", dir.logs().display()))?;
    let Some(lock) = dir.try_lock()? else {
        bail!(
            "a lab already runs in {}; `intpath lab down --dir {}` first",
            dir.path.display(),
            dir.path.display()
        );
    };
    crate::network::preflight()?;
    // What a lab killed earlier left: its processes and network go first.
    if dir.state().exists() {
        drop(lock);
        let report = super::down::down(dir)?;
        if report.did_something() {
            println!(
                "cleared what the previous lab in {} left: {report}",
                dir.path.display()
            );
        }
    } else {
        drop(lock);
    }
    for stale in [dir.state(), dir.faults()] {
        match std::fs::remove_file(&stale) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("{}: cannot remove", stale.display()))
            }
            _ => {}
        }
    }
    write_json(&dir.config(), config)?;
    let log_path = dir.logs().join("supervisor.log");
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("{}: cannot create", log_path.display()))?;
    supervisor
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log));
    // SAFETY: setsid is async-signal-safe and touches no shared memory.
    unsafe {
        // Its own session: no terminal's Ctrl-C or hang-up reaches the lab.
        supervisor.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = supervisor
        .spawn()
        .context("cannot start the lab's supervisor")?;
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait()? {
            bail!(
                "the lab did not come up ({status}); {}:\n{}",
                log_path.display(),
                tail(&log_path, 15)
            );
        }
        if dir.state().exists() {
            let state: LabState = super::state::read_json(&dir.state())?;
            if state.supervisor_pid == child.id() {
                return Ok(state);
            }
        }
        if Instant::now() > deadline {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            bail!(
                "the lab was not up after {READY_TIMEOUT:?}; stopping it; {}:\n{}",
                log_path.display(),
                tail(&log_path, 15)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The last `n` lines of a log, for error messages.
pub(crate) fn tail(path: &std::path::Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

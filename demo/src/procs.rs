//! The demo's child processes.
//!
//! Each child runs in its own process group, so a Ctrl-C in the terminal
//! reaches only the demo, which then stops the children in an order that
//! loses no data (senders first, the collector after the last probe, the
//! network last). A child still running when its handle is dropped is
//! killed, so an error anywhere leaves nothing behind, and if the demo is
//! killed the kernel stops them ([`orphan_gets_sigterm`]).

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A named child process with its output in a log file.
pub struct Proc {
    pub name: String,
    pub log: PathBuf,
    child: Child,
    status: Option<ExitStatus>,
}

impl Proc {
    /// Starts `cmd` with stdout and stderr appended to `log` (stdout piped
    /// instead when `capture_stdout`, for children that report in JSON).
    pub fn spawn(
        name: impl Into<String>,
        mut cmd: Command,
        log: &Path,
        capture_stdout: bool,
    ) -> Result<Self> {
        let name = name.into();
        let out = File::create(log).with_context(|| format!("{}: cannot create", log.display()))?;
        let err = out.try_clone()?;
        cmd.stdin(Stdio::null())
            .stdout(if capture_stdout {
                Stdio::piped()
            } else {
                Stdio::from(out)
            })
            .stderr(Stdio::from(err))
            .process_group(0);
        orphan_gets_sigterm(&mut cmd);
        let child = cmd
            .spawn()
            .with_context(|| format!("{name}: cannot start {:?}", cmd.get_program()))?;
        Ok(Self {
            name,
            log: log.to_owned(),
            child,
            status: None,
        })
    }

    /// Wraps an already started child (one whose stdin the caller keeps).
    pub fn adopt(name: impl Into<String>, child: Child, log: &Path) -> Self {
        Self {
            name: name.into(),
            log: log.to_owned(),
            child,
            status: None,
        }
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The exit status once the child has ended.
    pub fn poll(&mut self) -> Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    pub fn signal(&self, sig: Signal) {
        if self.status.is_none() {
            // The child may have exited since the last poll; nothing to do then.
            let _ = kill(Pid::from_raw(self.child.id() as i32), sig);
        }
    }

    /// Waits until the child ends or `timeout` passes.
    pub fn wait_for(&mut self, timeout: Duration) -> Result<Option<ExitStatus>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.poll()? {
                return Ok(Some(s));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGINT, then SIGKILL if the child has not ended within `grace`.
    pub fn stop(&mut self, grace: Duration) -> Result<ExitStatus> {
        self.signal(Signal::SIGINT);
        if let Some(s) = self.wait_for(grace)? {
            return Ok(s);
        }
        tracing::warn!("{} ignored SIGINT for {grace:?}; killing it", self.name);
        self.signal(Signal::SIGKILL);
        let s = self.child.wait()?;
        self.status = Some(s);
        Ok(s)
    }

    /// The JSON report a finished child printed as its last stdout line
    /// (spawned with `capture_stdout`).
    pub fn report(&mut self) -> Result<serde_json::Value> {
        let mut out = String::new();
        if let Some(mut s) = self.child.stdout.take() {
            std::io::Read::read_to_string(&mut s, &mut out)?;
        }
        let line = out.lines().last().unwrap_or_default();
        serde_json::from_str(line)
            .with_context(|| format!("{}: no report on stdout; {}", self.name, self.log.display()))
    }

    /// The last lines of the child's log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.poll(), Ok(None)) {
            self.signal(Signal::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// Own process groups keep Ctrl-C away from the children, but also keep
/// them alive if the demo itself is killed; the kernel's parent-death signal
/// ends them then (it survives nsenter's exec).
pub fn orphan_gets_sigterm(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe, and the closure touches no memory
    // shared with the parent.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
        });
    }
}

/// `program args…` run inside the network namespace of process `pid` (a
/// Mininet host), via util-linux's nsenter.
pub fn in_netns(pid: u32, program: &Path) -> Command {
    let mut cmd = Command::new("nsenter");
    cmd.arg(format!("--net=/proc/{pid}/ns/net"))
        .arg("--")
        .arg(program);
    cmd
}

/// A program of this build: next to the running `intpath`, else on PATH.
pub fn sibling_binary(name: &str) -> Result<PathBuf> {
    let here = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(name)))
        .filter(|p| p.is_file());
    here.or_else(|| which(OsStr::new(name))).with_context(|| {
        format!("{name} is neither next to this intpath nor on PATH; build it with `cargo build --release --locked --bin {name}`")
    })
}

fn which(name: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

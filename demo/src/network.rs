//! The Mininet network of a demo run, driven through `mininet/intpath_net.py`.
//!
//! The launcher is built into the binary and written next to the run's other
//! files, so `intpath demo` works from any directory. It keeps the network
//! up while its standard input is open: closing it (or this process dying)
//! tears everything down, and the launcher clears what an earlier crashed
//! run left before it starts.

use crate::procs::{orphan_gets_sigterm, Proc};
use anyhow::{bail, Context, Result};
use intpath_core::switch_map::SwitchMap;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The launcher script, as shipped in `mininet/`.
pub const LAUNCHER: &str = include_str!("../../mininet/intpath_net.py");

/// Debian's interpreter: the one that sees the `mininet` package.
pub const PYTHON: &str = "/usr/bin/python3";

/// A Mininet host as the launcher reports it.
#[derive(Debug, Clone, Deserialize)]
pub struct HostNs {
    /// A process inside the host's network namespace.
    pub pid: u32,
    pub intf: String,
    pub ip: Ipv4Addr,
}

/// What the launcher is asked to build.
pub struct NetworkSpec<'a> {
    /// `intpath topo export --format json` output.
    pub topo_json: &'a Path,
    /// `soft` or `bmv2`.
    pub switch: &'a str,
    pub switch_binary: Option<&'a Path>,
    /// `SWITCH:PORT=PPS` bottlenecks.
    pub queue_rates: Vec<String>,
    pub queue_depth: u32,
    /// Where the launcher, its log, the switch map and the hosts file go.
    pub dir: &'a Path,
}

/// A running network; dropping it tears the network down.
pub struct Network {
    launcher: Option<Proc>,
    script: PathBuf,
    topo_json: PathBuf,
    pub switch_map_path: PathBuf,
    pub switch_map: SwitchMap,
    pub hosts: BTreeMap<String, HostNs>,
}

/// The root-namespace interface of `switch`'s port `port` (Mininet names a
/// node's interfaces NODE-ethPORT).
pub fn switch_port(switch: &str, port: u16) -> String {
    format!("{switch}-eth{port}")
}

/// Checks that Mininet can run here, with a hint when it cannot.
pub fn preflight() -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!("the demo needs root: Mininet creates network namespaces and veth pairs");
    }
    let ok = Command::new(PYTHON)
        .args(["-c", "import mininet.net"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        bail!("{PYTHON} cannot import mininet; install it with scripts/install-deps.sh (apt-get install mininet)");
    }
    Ok(())
}

impl Network {
    /// Starts the launcher and waits (up to `timeout`) until every switch
    /// serves P4Runtime and the hosts are known.
    pub fn start(spec: &NetworkSpec, timeout: Duration) -> Result<Self> {
        let script = spec.dir.join("intpath_net.py");
        std::fs::write(&script, LAUNCHER)
            .with_context(|| format!("{}: cannot write", script.display()))?;
        let switch_map_path = spec.dir.join("switches.json");
        let hosts_path = spec.dir.join("hosts.json");
        for stale in [&switch_map_path, &hosts_path] {
            match std::fs::remove_file(stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("{}: cannot remove", stale.display()))
                }
                _ => {}
            }
        }
        let log = spec.dir.join("mininet.log");
        let out = std::fs::File::create(&log)
            .with_context(|| format!("{}: cannot create", log.display()))?;
        let mut cmd = Command::new(PYTHON);
        cmd.arg(&script)
            .arg("--topo")
            .arg(spec.topo_json)
            .args(["--switch", spec.switch])
            .arg("--switch-map")
            .arg(&switch_map_path)
            .arg("--hosts-file")
            .arg(&hosts_path)
            .args(["--queue-depth", &spec.queue_depth.to_string()])
            .arg("--until-stdin-closes");
        if let Some(b) = spec.switch_binary {
            cmd.arg("--switch-binary").arg(b);
        }
        // The launcher resolves the topology through this very program.
        if let Ok(me) = std::env::current_exe() {
            cmd.arg("--intpath").arg(me);
        }
        for q in &spec.queue_rates {
            cmd.args(["--queue-rate", q]);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::from(out.try_clone()?))
            .stderr(Stdio::from(out))
            .process_group(0);
        orphan_gets_sigterm(&mut cmd);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {PYTHON} {}", script.display()))?;
        let mut launcher = Proc::adopt("mininet", child, &log);
        let deadline = Instant::now() + timeout;
        while !hosts_path.exists() {
            if let Some(status) = launcher.poll()? {
                bail!(
                    "the Mininet launcher exited ({status}) before the network was up; {}:\n{}",
                    log.display(),
                    launcher.log_tail(15)
                );
            }
            if Instant::now() > deadline {
                bail!(
                    "the network was not up after {timeout:?}; {}:\n{}",
                    log.display(),
                    launcher.log_tail(15)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let switch_map = SwitchMap::load(&switch_map_path)?;
        let text = std::fs::read_to_string(&hosts_path)
            .with_context(|| format!("{}: cannot read", hosts_path.display()))?;
        let hosts = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a hosts file", hosts_path.display()))?;
        Ok(Self {
            launcher: Some(launcher),
            script,
            topo_json: spec.topo_json.to_owned(),
            switch_map_path,
            switch_map,
            hosts,
        })
    }

    pub fn host(&self, name: &str) -> Result<&HostNs> {
        self.hosts
            .get(name)
            .with_context(|| format!("host {name} is not in the network"))
    }

    /// [`Network::stop`] at the end of a run, saying how long it took.
    pub fn stop_timed(&mut self) -> Result<()> {
        let t0 = std::time::Instant::now();
        self.stop()?;
        println!("network down in {:.1} s", t0.elapsed().as_secs_f64());
        Ok(())
    }

    /// Closes the launcher's input and waits for its teardown; a launcher
    /// that hangs is killed and its leftovers are cleared.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut l) = self.launcher.take() else {
            return Ok(());
        };
        drop(l.child_mut().stdin.take());
        if l.wait_for(Duration::from_secs(60))?.is_some() {
            return Ok(());
        }
        tracing::warn!("Mininet did not stop within a minute; killing it and cleaning up");
        l.signal(nix::sys::signal::Signal::SIGKILL);
        l.wait_for(Duration::from_secs(5))?;
        let status = Command::new(PYTHON)
            .arg(&self.script)
            .arg("--cleanup")
            .arg("--topo")
            .arg(&self.topo_json)
            .status()?;
        anyhow::ensure!(status.success(), "Mininet cleanup failed ({status})");
        Ok(())
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::error!("tearing down the network: {e:#}");
        }
    }
}

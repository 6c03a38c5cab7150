//! What a lab keeps in its directory, so that every `intpath lab` command
//! can be a process of its own: the settings `up` was given
//! (`config.json`), where everything is once it runs (`lab.json`), the
//! user's detached processes (`procs/`) and the faults in force
//! (`faults.json`).
//!
//! Whether a lab runs is not read from these files but from a lock its
//! supervisor holds for its whole life (`lab.lock`): a supervisor that was
//! killed leaves its files behind, never a lock.

use crate::SwitchKind;
use anyhow::{Context, Result};
use intpath_core::topo::AddHosts;
use intpath_store::{Db, RunId};
use nix::fcntl::{Flock, FlockArg};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::fs::File;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// The settings of a lab (`intpath lab up`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabConfig {
    /// Topology: generator expression or file.
    pub topo: String,
    /// Hosts for a topology file without them.
    #[serde(default)]
    pub add_hosts: AddHosts,
    pub switch: SwitchKind,
    /// bmv2 JSON of `p4/sr_int.p4` (with `SwitchKind::Bmv2`).
    pub device_config: Option<PathBuf>,
    /// Probes per path per second.
    pub probe_pps: f64,
    /// Background UDP packets/s per host; 0 for none.
    pub traffic_pps: f64,
    /// Egress queue depth of every switch port, packets.
    pub queue_depth: u32,
    /// The host that runs the collector and its OTLP receiver; `None`: one
    /// on no probe path's first switch.
    pub collector_host: Option<String>,
}

/// A host of the lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabHost {
    pub name: String,
    pub ip: Ipv4Addr,
    /// Its interface, inside its namespace.
    pub intf: String,
    /// A process holding the host's network namespace.
    pub pid: u32,
}

/// A switch of the lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabSwitch {
    pub name: String,
    pub grpc_addr: String,
    /// The reference switch's admin interface (faults, queues).
    pub admin_addr: Option<String>,
}

/// Where everything of a running lab is (`lab.json`, written by the
/// supervisor once the lab is ready).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabState {
    pub dir: PathBuf,
    pub topology: String,
    pub switch: SwitchKind,
    pub supervisor_pid: u32,
    /// Unix time, seconds, when the lab was ready.
    pub started_unix: f64,
    /// `http://<collector host ip>:4318`.
    pub otlp_endpoint: String,
    pub collector: LabHost,
    pub database: PathBuf,
    /// The collector's run: everything since `up`.
    pub run: RunId,
    pub hosts: Vec<LabHost>,
    pub switches: Vec<LabSwitch>,
    pub topology_json: PathBuf,
    pub plan_json: PathBuf,
    pub switch_map: PathBuf,
    /// The live web view the supervisor serves (`lab up --web`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<String>,
}

impl LabState {
    pub fn db(&self) -> Db {
        Db::Sqlite(self.database.clone())
    }

    /// A host by name or address.
    pub fn host(&self, name: &str) -> Result<&LabHost> {
        self.hosts
            .iter()
            .find(|h| h.name == name || h.ip.to_string() == name)
            .with_context(|| {
                format!(
                    "{name}: no such host in the lab (hosts: {})",
                    self.hosts
                        .iter()
                        .map(|h| h.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

/// A process `lab exec --detach` started (`procs/PID.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserProc {
    pub pid: u32,
    /// The kernel's start time of `pid`, so that a reused pid is never
    /// mistaken for it.
    pub start_time: u64,
    pub host: String,
    pub argv: Vec<String>,
    pub log: PathBuf,
}

/// A fault in force (`faults.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// `s13:1->s15`.
    pub link: String,
    pub fault: super::LinkFault,
}

/// The files of a lab directory.
#[derive(Debug, Clone)]
pub struct LabDir {
    pub path: PathBuf,
}

impl LabDir {
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
        }
    }

    pub fn config(&self) -> PathBuf {
        self.path.join("config.json")
    }
    pub fn state(&self) -> PathBuf {
        self.path.join("lab.json")
    }
    pub fn lock(&self) -> PathBuf {
        self.path.join("lab.lock")
    }
    pub fn procs(&self) -> PathBuf {
        self.path.join("procs")
    }
    pub fn faults(&self) -> PathBuf {
        self.path.join("faults.json")
    }
    pub fn logs(&self) -> PathBuf {
        self.path.join("logs")
    }
    /// The collector's database (where a demo run in `path` writes it).
    pub fn database(&self) -> PathBuf {
        self.path.join("telemetry.db")
    }

    /// Takes the lab's lock: `None` while a supervisor holds it.
    pub fn try_lock(&self) -> Result<Option<Flock<File>>> {
        let path = self.lock();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("{}: cannot open", path.display()))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Some(lock)),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => Err(e).with_context(|| format!("{}: cannot lock", path.display())),
        }
    }

    /// Whether a supervisor runs this lab now.
    pub fn running(&self) -> Result<bool> {
        if !self.lock().exists() {
            return Ok(false);
        }
        Ok(self.try_lock()?.is_none())
    }

    /// The state of the lab that runs here; an error naming the directory
    /// when none does.
    pub fn running_state(&self) -> Result<LabState> {
        anyhow::ensure!(
            self.running()?,
            "no lab runs in {} (start one with `intpath lab up --dir {}`)",
            self.path.display(),
            self.path.display()
        );
        read_json(&self.state())
    }

    /// The detached processes recorded, with their record files.
    pub fn user_procs(&self) -> Result<Vec<(PathBuf, UserProc)>> {
        let dir = self.procs();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(e).with_context(|| format!("{}: cannot list", dir.display())),
        };
        let mut out = Vec::new();
        for e in entries {
            let path = e?.path();
            if path.extension().is_some_and(|x| x == "json") {
                out.push((path.clone(), read_json::<UserProc>(&path)?));
            }
        }
        out.sort_by_key(|(_, p)| p.pid);
        Ok(out)
    }

    pub fn fault_records(&self) -> Result<Vec<FaultRecord>> {
        if !self.faults().exists() {
            return Ok(vec![]);
        }
        read_json(&self.faults())
    }
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not what a lab writes", path.display()))
}

/// Writes `value` so that a reader never sees half of it.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(value)?)
        .with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))
}

/// The kernel's start time of process `pid` (clock ticks since boot), or
/// `None` when it does not exist.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 22 overall, the 20th after the name.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process recorded as (`pid`, `start`) still runs (a zombie
/// counts as ended).
pub fn alive(pid: u32, start: u64) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    let zombie = state
        .as_deref()
        .and_then(|s| {
            s.rfind(')')
                .map(|i| s[i + 1..].trim_start().starts_with('Z'))
        })
        .unwrap_or(true);
    !zombie && start_time(pid) == Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_known_by_pid_and_start_time() {
        let me = std::process::id();
        let start = start_time(me).expect("own start time");
        assert!(alive(me, start));
        assert!(!alive(me, start + 1), "a reused pid is another process");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(start_time(pid).is_none() || !alive(pid, 0));
    }

    #[test]
    fn the_lock_tells_whether_a_lab_runs() {
        let dir = tempfile::tempdir().unwrap();
        let lab = LabDir::new(dir.path());
        assert!(!lab.running().unwrap());
        let held = lab.try_lock().unwrap().expect("free");
        assert!(lab.running().unwrap());
        assert!(lab.running_state().is_err());
        drop(held);
        assert!(!lab.running().unwrap());
    }

    #[test]
    fn the_hosts_a_lab_was_given_are_kept_in_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let lab = LabDir::new(dir.path());
        let config = |add_hosts| LabConfig {
            topo: "topologies/example-backbone.graphml".into(),
            add_hosts,
            switch: SwitchKind::Soft,
            device_config: None,
            probe_pps: 50.0,
            traffic_pps: 20.0,
            queue_depth: 64,
            collector_host: None,
        };
        for hosts in [
            AddHosts::PerSwitch(2),
            AddHosts::On(vec!["s1".into(), "s4".into()]),
        ] {
            write_json(&lab.config(), &config(hosts.clone())).unwrap();
            let read: LabConfig = read_json(&lab.config()).unwrap();
            assert_eq!(read.add_hosts, hosts);
        }
        // A lab's settings from before the hosts flags: the file's own hosts.
        let mut old = serde_json::to_value(config(AddHosts::None)).unwrap();
        old.as_object_mut().unwrap().remove("add_hosts");
        std::fs::write(lab.config(), old.to_string()).unwrap();
        let read: LabConfig = read_json(&lab.config()).unwrap();
        assert_eq!(read.add_hosts, AddHosts::None);
    }
}

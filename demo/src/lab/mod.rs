//! `intpath lab`: a long-lived emulated network for the user's own
//! application, driven from the shell one command at a time.
//!
//! `up` starts a supervisor ([`supervisor`]) that runs the demo's stages
//! (Mininet network, deploy, collector with its OTLP receiver on the
//! collector host's address, probes, background traffic) until `down`
//! ([`down`]) stops it. Everything a command needs is in the lab's directory
//! ([`state`]), so each command is a process of its own: `exec` runs a
//! command in a host's namespace ([`exec`]), `route` names the links
//! between two hosts, `fault` breaks a link ([`fault`]), `status` says what
//! runs; `intpath lab diagnose` is `intpath diagnose culprits` on the lab's
//! run.

pub mod down;
pub mod exec;
pub mod fault;
pub mod state;
pub mod supervisor;
pub mod up;

pub use down::{down, DownReport};
pub use exec::{exec, ExecRequest, Executed};
pub use fault::LinkFault;
pub use state::{LabConfig, LabDir, LabState};
pub use supervisor::run as supervise;
pub use up::up;

use anyhow::{Context, Result};
use intpath_core::link::{DirLink, LinkName};
use intpath_core::routes::Routes;
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use serde::Serialize;
use state::{alive, write_json, FaultRecord, UserProc};

/// The links between two hosts, both ways.
#[derive(Debug, Clone, Serialize)]
pub struct Route {
    pub src: String,
    pub dst: String,
    /// What a packet from `src` to `dst` crosses, host links included.
    pub request: Vec<DirLink>,
    /// What the reply crosses.
    pub reply: Vec<DirLink>,
}

/// The route between hosts `src` and `dst` (names or addresses), as deploy
/// installed it.
pub fn route(dir: &LabDir, src: &str, dst: &str) -> Result<Route> {
    let topo = topology(dir)?;
    let name = |h: &str| -> Result<String> {
        topo.hosts()
            .iter()
            .find(|x| x.name == h || x.ip.to_string() == h)
            .map(|x| x.name.clone())
            .with_context(|| format!("{h}: no such host in {}", topo.origin()))
    };
    let (src, dst) = (name(src)?, name(dst)?);
    let routes = Routes::shortest(&topo);
    Ok(Route {
        request: routes.path(&topo, &src, &dst)?,
        reply: routes.path(&topo, &dst, &src)?,
        src,
        dst,
    })
}

/// The lab's topology, as `up` resolved it (with ports).
fn topology(dir: &LabDir) -> Result<Topology> {
    let path = dir.path.join("topology.json");
    anyhow::ensure!(
        path.exists(),
        "{}: no lab was started here (`intpath lab up --dir {}`)",
        dir.path.display(),
        dir.path.display()
    );
    Ok(Topology::load(&path.to_string_lossy())?)
}

/// Sets `fault` on `link` (`s13:1->s15`) of the running lab; returns the
/// link resolved.
pub fn fault(dir: &LabDir, link: &str, fault: LinkFault) -> Result<DirLink> {
    let state = dir.running_state()?;
    let topo = topology(dir)?;
    let resolved = LinkName::parse(link)
        .and_then(|n| n.resolve(&topo))
        .with_context(|| {
            format!("{link}: not a link of {} (links are named SWITCH:PORT->PEER, as `intpath lab route` prints them)", topo.origin())
        })?;
    let map = SwitchMap::load(&state.switch_map)?;
    fault::apply(&map, &resolved, fault)?;
    let mut records: Vec<FaultRecord> = dir
        .fault_records()?
        .into_iter()
        .filter(|r| {
            !(r.link == resolved.to_string()
                && std::mem::discriminant(&r.fault) == std::mem::discriminant(&fault))
        })
        .collect();
    // A fault set to 0 is one switched off.
    if fault != fault.cleared() {
        records.push(FaultRecord {
            link: resolved.to_string(),
            fault,
        });
    }
    write_json(&dir.faults(), &records)?;
    Ok(resolved)
}

/// Switches off every fault `fault` set; returns them.
pub fn clear(dir: &LabDir) -> Result<Vec<FaultRecord>> {
    let state = dir.running_state()?;
    let topo = topology(dir)?;
    let map = SwitchMap::load(&state.switch_map)?;
    let records = dir.fault_records()?;
    for r in &records {
        let link = LinkName::parse(&r.link)
            .and_then(|n| n.resolve(&topo))
            .with_context(|| format!("{}: faults.json names a link the lab lacks", r.link))?;
        fault::apply(&map, &link, r.fault.cleared())?;
    }
    write_json(&dir.faults(), &Vec::<FaultRecord>::new())?;
    Ok(records)
}

/// What `lab status` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub running: bool,
    pub state: Option<LabState>,
    /// Probes the collector has stored in the lab's run.
    pub probes: Option<i64>,
    /// The processes `exec --detach` started.
    pub procs: Vec<ProcStatus>,
    pub faults: Vec<FaultRecord>,
}

/// A process `exec --detach` started, and whether it still runs.
#[derive(Debug, Clone, Serialize)]
pub struct ProcStatus {
    #[serde(flatten)]
    pub proc: UserProc,
    pub running: bool,
}

pub fn status(dir: &LabDir) -> Result<Status> {
    let running = dir.path.exists() && dir.running()?;
    let state: Option<LabState> = running
        .then(|| state::read_json(&dir.state()).ok())
        .flatten();
    let probes = match &state {
        Some(s) => crate::setup::runtime()?
            .block_on(crate::telemetry::Snapshot::read(&s.db(), s.run))
            .ok()
            .map(|snap| snap.probes()),
        None => None,
    };
    let procs = if dir.path.exists() {
        dir.user_procs()?
            .into_iter()
            .map(|(_, proc)| ProcStatus {
                running: alive(proc.pid, proc.start_time),
                proc,
            })
            .collect()
    } else {
        vec![]
    };
    let faults = if running {
        dir.fault_records()?
    } else {
        vec![]
    };
    Ok(Status {
        running,
        state,
        probes,
        procs,
        faults,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_named_as_everywhere_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let topo = Topology::load("fattree:k=4").unwrap();
        std::fs::write(dir.path().join("topology.json"), topo.to_json()).unwrap();
        let lab = LabDir::new(dir.path());
        let r = route(&lab, "h1", "10.0.0.16").unwrap();
        assert_eq!((r.src.as_str(), r.dst.as_str()), ("h1", "h16"));
        assert_eq!(r.request.first().unwrap().src, "h1");
        assert_eq!(r.request.last().unwrap().dst, "h16");
        assert_eq!(r.reply.first().unwrap().src, "h16");
        let routes = Routes::shortest(&topo);
        assert_eq!(r.request, routes.path(&topo, "h1", "h16").unwrap());
        assert!(r.request[1].to_string().contains(":") && r.request[1].to_string().contains("->"));
        assert!(route(&lab, "h1", "h99")
            .unwrap_err()
            .to_string()
            .contains("h99"));
        let empty = tempfile::tempdir().unwrap();
        assert!(route(&LabDir::new(empty.path()), "h1", "h2").is_err());
    }
}

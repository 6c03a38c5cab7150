//! The demo's senders: one probe-gen per generator switch and, for
//! background traffic, one per host.
//!
//! Probe senders run on a host of their generator switch; a generator
//! without a host of its own (fat-tree core and aggregation switches) gets
//! its probes as P4Runtime packet-outs instead. Each probe sender reports
//! what it sent on stdout when it ends, which is the denominator of the
//! run's loss.

use crate::network::{HostNs, Network};
use crate::procs::{in_netns, Proc};
use anyhow::{bail, Context, Result};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// What every sender needs to know.
pub struct SenderSpec<'a> {
    pub probe_gen: &'a Path,
    pub plan_json: &'a Path,
    pub topo_json: &'a Path,
    /// Hosts of the collectors the probes are addressed to.
    pub collectors: &'a [&'a str],
    /// Generator switch → index in `collectors` (see
    /// [`crate::collector::assign_generators`]).
    pub assignment: &'a BTreeMap<String, usize>,
    /// Probes per path per second.
    pub probe_pps: f64,
    /// Background packets per second per host; 0 for none.
    pub traffic_pps: f64,
    /// Seconds to send; `None`: until stopped (the lab).
    pub duration: Option<f64>,
    /// Where each sender's log goes.
    pub logs: &'a Path,
}

/// The running senders.
pub struct Senders {
    probes: Vec<Proc>,
    traffic: Vec<Proc>,
}

impl Senders {
    /// Starts every probe sender, then every traffic sender.
    pub fn start(spec: &SenderSpec, topo: &Topology, plan: &Plan, net: &Network) -> Result<Self> {
        let count = spec.duration.map(|d| (spec.probe_pps * d).ceil() as u64);
        let mut generators: Vec<&str> = plan.paths.iter().map(|p| p.generator()).collect();
        generators.sort_unstable();
        generators.dedup();
        let mut probes = Vec::new();
        for g in generators {
            let k = spec.assignment.get(g).copied().unwrap_or(0);
            let collector = spec
                .collectors
                .get(k)
                .with_context(|| format!("no collector {k} for generator {g}"))?;
            let coll = net.host(collector)?;
            let sender = topo
                .hosts_of(g)
                .find(|h| !spec.collectors.contains(&h.name.as_str()));
            let mut cmd = match sender {
                Some(h) => in_host(net.host(&h.name)?, spec.probe_gen, "send"),
                None => {
                    let mut cmd = Command::new(spec.probe_gen);
                    cmd.args([
                        "send",
                        "--switch",
                        g,
                        "--election-id",
                        &intpath_core::sessions::PACKET_OUT.to_string(),
                    ])
                    .arg("--switch-map")
                    .arg(&net.switch_map_path)
                    .args(["--src-ip", &coll.ip.to_string()]);
                    cmd
                }
            };
            cmd.arg("--plan")
                .arg(spec.plan_json)
                .args(["--generator", g, "--collector", &coll.ip.to_string()])
                .args(["--rate", &spec.probe_pps.to_string()]);
            if let Some(n) = count {
                cmd.args(["--count", &n.to_string()]);
            }
            let log = spec.logs.join(format!("probes-{g}.log"));
            probes.push(Proc::spawn(format!("probe-gen@{g}"), cmd, &log, true)?);
        }
        let mut traffic = Vec::new();
        if spec.traffic_pps > 0.0 {
            for (i, h) in topo.hosts().iter().enumerate() {
                let mut cmd = in_host(net.host(&h.name)?, spec.probe_gen, "traffic");
                cmd.arg("--poisson")
                    .arg("--topology")
                    .arg(spec.topo_json)
                    .args(["--rate", &spec.traffic_pps.to_string()])
                    .args(["--seed", &(i + 1).to_string()]);
                if let Some(d) = spec.duration {
                    cmd.args(["--duration", &d.to_string()]);
                }
                let log = spec.logs.join(format!("traffic-{}.log", h.name));
                let name = format!("traffic@{}", h.name);
                traffic.push(Proc::spawn(name, cmd, &log, false)?);
            }
        }
        Ok(Self { probes, traffic })
    }

    /// Probe senders and traffic senders started.
    pub fn counts(&self) -> (usize, usize) {
        (self.probes.len(), self.traffic.len())
    }

    /// How many senders are still running; a sender that failed is an error
    /// with the end of its log.
    pub fn running(&mut self) -> Result<usize> {
        let mut running = 0;
        for p in self.probes.iter_mut().chain(self.traffic.iter_mut()) {
            match p.poll()? {
                None => running += 1,
                Some(s) if !s.success() => bail!(
                    "{} failed ({s}); {}:\n{}",
                    p.name,
                    p.log.display(),
                    p.log_tail(10)
                ),
                Some(_) => {}
            }
        }
        Ok(running)
    }

    /// Stops whatever still runs; returns the probes sent.
    pub fn stop(&mut self) -> Result<u64> {
        let mut sent = 0;
        for p in &mut self.probes {
            p.stop(Duration::from_secs(5))?;
            sent += sent_count(p)?;
        }
        for t in &mut self.traffic {
            t.stop(Duration::from_secs(5))?;
        }
        Ok(sent)
    }
}

/// `probe-gen MODE --iface …` inside a Mininet host.
fn in_host(host: &HostNs, probe_gen: &Path, mode: &str) -> Command {
    let mut cmd = in_netns(host.pid, probe_gen);
    cmd.args([mode, "--iface", &host.intf]);
    cmd
}

/// Probes a finished probe-gen reports as sent.
fn sent_count(p: &mut Proc) -> Result<u64> {
    p.report()?["sent"]
        .as_u64()
        .with_context(|| format!("{}: report without a sent count", p.name))
}

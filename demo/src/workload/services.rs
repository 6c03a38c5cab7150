//! The demo's microservice workload: the six HotelReservation services of
//! `intpath-workload` on Mininet hosts, and its Poisson load generator.
//!
//! Services bind to their hosts' addresses (RPCs must cross the fabric to
//! be measured), callees start before their callers (a caller's first
//! request must find its peer), and each exports its spans over OTLP/HTTP
//! to the collector's receiver. They are stopped with SIGTERM, callers
//! first, and each flushes its spans before it exits, so the receiver must
//! outlive them.

use crate::network::Network;
use crate::procs::{in_netns, Proc};
use anyhow::{bail, Context, Result};
use nix::sys::signal::Signal;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The port every service listens on (each has a host of its own).
pub const SERVICE_PORT: u16 = 8080;

/// Services in start order: every callee before its callers.
pub const START_ORDER: [&str; 6] = [
    "geo",
    "rate",
    "profile",
    "reservation",
    "search",
    "frontend",
];

/// Who calls whom, as `intpath-workload serve --peers` wants it.
fn callees(service: &str) -> &'static [&'static str] {
    match service {
        "frontend" => &["search", "profile", "reservation"],
        "search" => &["geo", "rate"],
        _ => &[],
    }
}

/// Which host runs each service, and which offers the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// (service, host), in [`START_ORDER`].
    pub services: Vec<(&'static str, String)>,
    pub load: String,
}

impl Placement {
    /// Seven hosts spread evenly over `hosts` without `exclude` (the
    /// collector's), so that calls cross pods and the core.
    pub fn spread(hosts: &[String], exclude: &str) -> Result<Self> {
        let free: Vec<&String> = hosts.iter().filter(|h| *h != exclude).collect();
        let n = START_ORDER.len() + 1;
        anyhow::ensure!(
            free.len() >= n,
            "the workload needs {n} hosts besides the collector's; the topology has {}",
            free.len()
        );
        let pick = |i: usize| free[i * free.len() / n].clone();
        Ok(Self {
            services: START_ORDER
                .iter()
                .enumerate()
                .map(|(i, s)| (*s, pick(i)))
                .collect(),
            load: pick(n - 1),
        })
    }

    pub fn host_of(&self, service: &str) -> Option<&str> {
        self.services
            .iter()
            .find(|(s, _)| *s == service)
            .map(|(_, h)| h.as_str())
    }

    /// Host pairs that exchange requests: load → frontend and every call.
    pub fn calls(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .host_of("frontend")
            .map_or(vec![], |f| vec![(self.load.as_str(), f)]);
        for (caller, host) in &self.services {
            for callee in callees(caller) {
                if let Some(to) = self.host_of(callee) {
                    out.push((host, to));
                }
            }
        }
        out
    }
}

/// The service delay fault, as the workload takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayFault {
    pub service: String,
    pub ms: u64,
    pub pct: f64,
    /// Seconds after the service starts.
    pub after: f64,
}

/// What the services need to run.
pub struct ServicesSpec<'a> {
    pub binary: &'a Path,
    pub collector_ip: Ipv4Addr,
    pub delay: Option<&'a DelayFault>,
    pub logs: &'a Path,
}

/// The six running services.
pub struct Services {
    procs: Vec<Proc>,
    pub frontend: SocketAddr,
}

impl Services {
    /// Starts every service and waits until each listens.
    pub fn start(spec: &ServicesSpec, placement: &Placement, net: &Network) -> Result<Self> {
        let mut procs = Vec::new();
        let mut addrs: Vec<(&str, SocketAddr)> = Vec::new();
        for (service, host) in &placement.services {
            let ns = net.host(host)?;
            let listen = SocketAddr::from((ns.ip, SERVICE_PORT));
            let peers: Vec<String> = callees(service)
                .iter()
                .filter_map(|c| addrs.iter().find(|(s, _)| s == c))
                .map(|(s, a)| format!("{s}={a}"))
                .collect();
            let mut cmd = in_netns(ns.pid, spec.binary);
            cmd.args(["serve", "--service", service])
                .args(["--listen", &listen.to_string()])
                .args(["--peers", &peers.join(",")])
                .args([
                    "--otlp-endpoint",
                    &format!("http://{}:4318", spec.collector_ip),
                ]);
            if let Some(d) = spec.delay.filter(|d| d.service == *service) {
                cmd.args(["--delay-ms", &d.ms.to_string()])
                    .args(["--delay-pct", &d.pct.to_string()])
                    .args(["--delay-after", &format!("{:.3}", d.after)]);
            }
            let log = spec.logs.join(format!("{service}.log"));
            let mut proc = Proc::spawn(*service, cmd, &log, true)?;
            wait_listening(&mut proc)?;
            procs.push(proc);
            addrs.push((service, listen));
        }
        let frontend = addrs
            .iter()
            .find(|(s, _)| *s == "frontend")
            .map(|(_, a)| *a)
            .context("no frontend in the placement")?;
        Ok(Self { procs, frontend })
    }

    /// SIGTERM to every service, callers first; each exports the spans it
    /// still holds before it exits.
    pub fn stop(&mut self) -> Result<()> {
        for p in self.procs.iter_mut().rev() {
            p.signal(Signal::SIGTERM);
            if p.wait_for(Duration::from_secs(10))?.is_none() {
                tracing::warn!("{} did not stop within 10 s of SIGTERM; killing it", p.name);
                p.stop(Duration::ZERO)?;
            }
        }
        Ok(())
    }
}

/// Reads the service's `listening on ADDR` line.
fn wait_listening(proc: &mut Proc) -> Result<()> {
    let out = proc
        .child_mut()
        .stdout
        .take()
        .context("service stdout not captured")?;
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line)?;
    if !line.starts_with("listening on") {
        let status = proc.wait_for(Duration::from_secs(2))?;
        bail!(
            "{} did not start ({}); {}:\n{}",
            proc.name,
            status.map_or("still running".into(), |s| s.to_string()),
            proc.log.display(),
            proc.log_tail(10)
        );
    }
    Ok(())
}

/// The load generator, running for a set time.
pub struct Load {
    proc: Proc,
}

/// What the load generator reports at the end (`load --json`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct LoadSummary {
    pub requests: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub first_error: Option<String>,
}

impl Load {
    pub fn start(
        binary: &Path,
        net: &Network,
        host: &str,
        frontend: SocketAddr,
        rate: f64,
        duration: f64,
        log: &Path,
    ) -> Result<Self> {
        let ns = net.host(host)?;
        let mut cmd = in_netns(ns.pid, binary);
        cmd.args(["load", "--frontend", &frontend.to_string()])
            .args(["--rate", &rate.to_string()])
            .args(["--duration", &duration.to_string()])
            .args(["--timeout-ms", "5000", "--json"]);
        Ok(Self {
            proc: Proc::spawn("load", cmd, log, true)?,
        })
    }

    pub fn running(&mut self) -> Result<bool> {
        Ok(self.proc.poll()?.is_none())
    }

    /// Waits for the end of the run and reads the summary.
    pub fn finish(mut self) -> Result<LoadSummary> {
        let out = self
            .proc
            .child_mut()
            .stdout
            .take()
            .context("load stdout not captured")?;
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line)?;
        let status = self.proc.wait_for(Duration::from_secs(15))?;
        if !status.is_some_and(|s| s.success()) {
            bail!(
                "the load generator failed; {}:\n{}",
                self.proc.log.display(),
                self.proc.log_tail(10)
            );
        }
        serde_json::from_str(&line)
            .with_context(|| format!("the load generator's summary is not JSON: {line:?}"))
    }

    /// Stops the load early (Ctrl-C).
    pub fn stop(mut self) -> Result<()> {
        self.proc.stop(Duration::from_secs(5)).map(drop)
    }
}

/// The workload's program, next to `intpath`.
pub fn binary() -> Result<PathBuf> {
    crate::procs::sibling_binary("intpath-workload")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_spreads_and_skips_the_collector() {
        let hosts: Vec<String> = (1..=16).map(|i| format!("h{i}")).collect();
        let p = Placement::spread(&hosts, "h16").unwrap();
        let used: Vec<&str> = p.services.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(used, ["h1", "h3", "h5", "h7", "h9", "h11"]);
        assert_eq!(p.load, "h13");
        assert_eq!(p.calls().len(), 6);
        assert_eq!(p.calls()[0], ("h13", "h11"));
        assert!(Placement::spread(&hosts[..7], "h1").is_err());
    }
}

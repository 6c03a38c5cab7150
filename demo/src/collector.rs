//! The demo's collectors: `intpath-collector collect` on one Mininet host,
//! or on several (`--collectors N`) sharing one run under a run key, each
//! storing into the run's database (SQLite, or PostgreSQL with `--db`; with
//! the workload, also the spans its OTLP receiver takes).
//!
//! A sink forwards a finished probe to the address its generator put in it,
//! so the probe paths are split across collectors by generator switch:
//! every probe of a generator's paths goes to that generator's collector.
//!
//! A collector writing into PostgreSQL runs in the root namespace, where the
//! server listens on loopback (a Mininet host cannot reach it), and captures
//! on the switch port that leads to its host: the same frames, seen as the
//! switch sends them. Otherwise it runs inside its host.

use crate::network::HostNs;
use crate::procs::{in_netns, Proc};
use crate::telemetry::{joined, newest_run};
use anyhow::{bail, Context, Result};
use intpath_core::plan::Plan;
use intpath_store::{Db, RunId};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a collector may take to open or join its run.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// What the collectors are started with.
pub struct CollectorSpec<'a> {
    pub binary: &'a Path,
    pub db: &'a Db,
    pub plan_json: &'a Path,
    pub topo_json: &'a Path,
    /// Where each collector's log goes.
    pub logs: &'a Path,
    /// Also receive OTLP/HTTP spans on this port of the (one) collector's
    /// host address.
    pub otlp_port: Option<u16>,
}

/// Where a collector captures.
#[derive(Debug, Clone)]
pub struct CollectorHost {
    pub name: String,
    pub ns: HostNs,
    /// The root-namespace interface of the switch port leading to the host.
    pub switch_port: String,
}

/// One collector process and the host it captures on.
struct Member {
    host: String,
    proc: Proc,
}

/// The running collectors and the one run they store into.
pub struct Collectors {
    members: Vec<Member>,
    pub run: RunId,
    pub db: Db,
}

/// What one collector stored, by its own count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub host: String,
    pub probes: u64,
}

impl Collectors {
    /// Starts a collector for each of `hosts`, one after the other, and
    /// waits until each has opened or joined the run.
    pub fn start(
        rt: &tokio::runtime::Runtime,
        spec: &CollectorSpec,
        hosts: &[CollectorHost],
    ) -> Result<Self> {
        anyhow::ensure!(!hosts.is_empty(), "no collector host");
        anyhow::ensure!(
            spec.otlp_port.is_none() || hosts.len() == 1,
            "one collector receives the OTLP spans"
        );
        // Unique per demo run, so a re-run never joins an old run.
        let key = (hosts.len() > 1).then(|| {
            format!(
                "demo-{}-{}",
                std::process::id(),
                intpath_core::time::now_ns()
            )
        });
        let before = rt.block_on(newest_run(spec.db))?;
        let mut members = Vec::new();
        let mut run = None;
        for host in hosts {
            let name = &host.name;
            let log = match hosts.len() {
                1 => spec.logs.join("collector.log"),
                _ => spec.logs.join(format!("collector-{name}.log")),
            };
            let (mut cmd, iface) = match spec.db {
                Db::Postgres(_) => (Command::new(spec.binary), &host.switch_port),
                Db::Sqlite(_) => (in_netns(host.ns.pid, spec.binary), &host.ns.intf),
            };
            cmd.arg("collect")
                .args(["--iface", iface])
                .arg("--db")
                .arg(db_arg(spec.db))
                .arg("--plan")
                .arg(spec.plan_json)
                .arg("--topo")
                .arg(spec.topo_json);
            if let Some(k) = &key {
                cmd.args(["--run-key", k]);
            }
            if let Some(port) = spec.otlp_port {
                let addr = std::net::SocketAddr::from((host.ns.ip, port));
                cmd.args(["--otlp-listen", &addr.to_string()]);
            }
            let mut m = Member {
                host: name.clone(),
                proc: Proc::spawn(format!("collector@{name}"), cmd, &log, true)?,
            };
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                check_running(&mut m.proc)?;
                let started = match run {
                    None => {
                        run = rt
                            .block_on(newest_run(spec.db))?
                            .filter(|&r| Some(r) != before);
                        run.is_some()
                    }
                    Some(r) => rt.block_on(joined(spec.db, r))? > members.len() as i64,
                };
                if started {
                    break;
                }
                anyhow::ensure!(
                    Instant::now() < deadline,
                    "the collector on {name} started no run within {START_TIMEOUT:?}; {}",
                    log.display()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            members.push(m);
        }
        Ok(Self {
            members,
            run: run.context("no collector")?,
            db: spec.db.to_owned(),
        })
    }

    /// The hosts the collectors capture on, in start order.
    pub fn hosts(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.host.as_str()).collect()
    }

    /// An error with the end of its log if a collector has stopped.
    pub fn check(&mut self) -> Result<()> {
        for m in &mut self.members {
            check_running(&mut m.proc)?;
        }
        Ok(())
    }

    /// Stops every collector (each flushes what it holds first), checks that
    /// each ended well and returns what each says it stored.
    pub fn stop(&mut self) -> Result<Vec<Stored>> {
        let mut out = Vec::new();
        for m in &mut self.members {
            let status = m.proc.stop(Duration::from_secs(20))?;
            anyhow::ensure!(
                status.success(),
                "the collector on {} failed ({status}); {}:\n{}",
                m.host,
                m.proc.log.display(),
                m.proc.log_tail(10)
            );
            let probes = m.proc.report()?["probes"]
                .as_u64()
                .with_context(|| format!("{}: report without a probe count", m.proc.name))?;
            out.push(Stored {
                host: m.host.clone(),
                probes,
            });
        }
        Ok(out)
    }
}

/// Which of `n` collectors each generator switch's probes go to: generators
/// with the most paths first, each to the collector with the fewest paths
/// so far (ties to the lower index), so the paths split about evenly.
pub fn assign_generators(plan: &Plan, n: usize) -> BTreeMap<String, usize> {
    let mut paths: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &plan.paths {
        *paths.entry(p.generator()).or_default() += 1;
    }
    let mut order: Vec<(&str, usize)> = paths.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut load = vec![0usize; n.max(1)];
    let mut out = BTreeMap::new();
    for (g, k) in order {
        let (least, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(i, l)| (*l, i))
            .unwrap_or((0, &0));
        load[least] += k;
        out.insert(g.to_owned(), least);
    }
    out
}

/// `--db` as the collector must get it (a URL with its password).
fn db_arg(db: &Db) -> std::ffi::OsString {
    match db {
        Db::Sqlite(p) => p.clone().into(),
        Db::Postgres(url) => url.into(),
    }
}

fn check_running(proc: &mut Proc) -> Result<()> {
    if let Some(status) = proc.poll()? {
        bail!(
            "{} stopped ({status}); {}:\n{}",
            proc.name,
            proc.log.display(),
            proc.log_tail(10)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::plan::{PlanStats, ProbePath};

    fn plan(generators: &[&str]) -> Plan {
        Plan {
            topology: "test".into(),
            algo: "test".into(),
            paths: generators
                .iter()
                .enumerate()
                .map(|(i, g)| ProbePath {
                    id: i as u16 + 1,
                    nodes: vec![(*g).into(), "s9".into()],
                    egress_ports: vec![1],
                })
                .collect(),
            stats: PlanStats::default(),
        }
    }

    #[test]
    fn generators_split_their_paths_evenly_and_whole() {
        // s1 starts 3 paths, s2 2, s3 and s4 one each: 3 + 0 | 2 + 1 + 1.
        let p = plan(&["s1", "s1", "s1", "s2", "s2", "s3", "s4"]);
        let a = assign_generators(&p, 2);
        assert_eq!(
            a,
            BTreeMap::from([
                ("s1".into(), 0),
                ("s2".into(), 1),
                ("s3".into(), 1),
                ("s4".into(), 0)
            ])
        );
        let per = |k| p.paths.iter().filter(|x| a[x.generator()] == k).count();
        assert_eq!((per(0), per(1)), (4, 3));
        // One collector takes everything; more collectors than generators
        // leave some idle rather than splitting a generator.
        assert!(assign_generators(&p, 1).values().all(|&k| k == 0));
        let wide = assign_generators(&p, 6);
        assert_eq!(wide.len(), 4);
        assert!(wide.values().all(|&k| k < 4));
    }
}

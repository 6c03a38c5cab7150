//! The demo's stages that the congested and the workload runs share:
//! prepare the topology, plan and files; launch the network, deploy and
//! start the collector; start the probe and traffic senders; wait, minding
//! Ctrl-C.

use crate::collector::{assign_generators, CollectorHost, CollectorSpec, Collectors};
use crate::network::{self, Network, NetworkSpec};
use crate::procs::sibling_binary;
use crate::senders::{SenderSpec, Senders};
use crate::{DemoConfig, SwitchKind};
use anyhow::{bail, Context, Result};
use intpath_controller::deploy::{self, check_map, host_routes, DeployOptions, SinkMode};
use intpath_core::plan::Plan;
use intpath_core::topo::{LoadOptions, Topology};
use intpath_planner::{plan, PlanOptions};
use intpath_store::Db;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `n` hosts for collectors: first those whose switch starts no probe path
/// (the last such first), then the others from the last: a collector should
/// not capture the fresh probes a host sends.
pub fn default_collectors(topo: &Topology, plan: &Plan, n: usize) -> Vec<String> {
    let starts =
        |h: &intpath_core::topo::Host| plan.paths.iter().any(|p| p.generator() == h.switch);
    let hosts = topo.hosts();
    let (quiet, busy): (Vec<_>, Vec<_>) = hosts.iter().rev().partition(|h| !starts(h));
    quiet
        .into_iter()
        .chain(busy)
        .take(n)
        .map(|h| h.name.clone())
        .collect()
}

pub fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(path)
}

/// The programs the demo starts.
pub struct Binaries {
    pub switch: Option<PathBuf>,
    pub collector: PathBuf,
    pub probe_gen: PathBuf,
}

/// What a run starts from: checked settings, the programs, topology and
/// plan.
pub struct Prepared {
    pub device_config: Vec<u8>,
    pub bins: Binaries,
    pub logs: PathBuf,
    /// Set by Ctrl-C.
    pub stop: Arc<AtomicBool>,
    pub topo: Topology,
    pub topo_json: PathBuf,
    pub plan: Plan,
    pub plan_json: PathBuf,
}

pub fn prepare(a: &DemoConfig) -> Result<Prepared> {
    anyhow::ensure!(a.duration > 0.0, "--duration must be positive");
    anyhow::ensure!(a.probe_pps > 0.0, "--probe-pps must be positive");
    anyhow::ensure!(a.traffic_pps >= 0.0, "--traffic-pps cannot be negative");
    let device_config = match (a.switch, &a.device_config) {
        (SwitchKind::Bmv2, None) => {
            bail!("--switch bmv2 needs --device-config (the bmv2 JSON of p4/sr_int.p4)")
        }
        (_, Some(p)) => {
            std::fs::read(p).with_context(|| format!("{}: cannot read", p.display()))?
        }
        (SwitchKind::Soft, None) => Vec::new(),
    };
    network::preflight()?;
    let bins = Binaries {
        switch: match a.switch {
            SwitchKind::Soft => Some(sibling_binary("intpath-switch")?),
            SwitchKind::Bmv2 => None,
        },
        collector: sibling_binary("intpath-collector")?,
        probe_gen: sibling_binary("probe-gen")?,
    };
    let logs = a.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("{}: cannot create", logs.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot install the Ctrl-C handler")?;

    let load = LoadOptions {
        add_hosts: a.add_hosts.clone(),
        ..LoadOptions::default()
    };
    let topo = Topology::load_with(&a.topo, &load)?;
    anyhow::ensure!(
        topo.hosts().len() >= 2,
        "{}: the demo needs at least two hosts (collector and traffic); for a file without \
         hosts, add some with --hosts-per-switch N or --hosts SW,...",
        a.topo
    );
    let topo_json = write(&a.out, "topology.json", &topo.to_json())?;
    let plan = plan(
        &topo,
        &PlanOptions {
            directed: true,
            ..PlanOptions::default()
        },
    )?;
    let plan_json = write(&a.out, "plan.json", &serde_json::to_string_pretty(&plan)?)?;
    println!(
        "plan: {} paths cover all {} link directions of {} (lower bound {}), longest {} hops",
        plan.stats.paths,
        plan.paths.iter().map(|p| p.len()).sum::<usize>(),
        topo.origin(),
        plan.stats.lower_bound,
        plan.stats.max_len
    );
    Ok(Prepared {
        device_config,
        bins,
        logs,
        stop,
        topo,
        topo_json,
        plan,
        plan_json,
    })
}

/// The running network, deployed, with its collectors.
pub struct Live {
    pub net: Network,
    pub rt: tokio::runtime::Runtime,
    pub collectors: Collectors,
    /// The (first) collector's host and address.
    pub collector_host: String,
    pub collector_ip: std::net::Ipv4Addr,
    pub db: Db,
}

/// Starts Mininet (`queue_rates` throttled from the start), deploys the
/// plan and starts the collector, with the OTLP receiver on its host's
/// address when `otlp` (the caller has refused a PostgreSQL database and
/// several collectors then).
pub fn launch(
    a: &DemoConfig,
    prep: &Prepared,
    queue_rates: Vec<String>,
    otlp: bool,
) -> Result<Live> {
    let (topo, plan, bins) = (&prep.topo, &prep.plan, &prep.bins);
    println!(
        "starting Mininet: {} switches, {} hosts ({} switch)…",
        topo.switches().len(),
        topo.hosts().len(),
        if a.switch == SwitchKind::Soft {
            "reference"
        } else {
            "bmv2"
        }
    );
    let t0 = Instant::now();
    let net = Network::start(
        &NetworkSpec {
            topo_json: &prep.topo_json,
            switch: if a.switch == SwitchKind::Soft {
                "soft"
            } else {
                "bmv2"
            },
            switch_binary: bins.switch.as_deref(),
            queue_rates,
            queue_depth: a.queue_depth,
            dir: &a.out,
        },
        Duration::from_secs(180),
    )?;
    println!("network up in {:.1} s", t0.elapsed().as_secs_f64());

    check_map(topo, &net.switch_map, &net.switch_map_path)?;
    let intents = deploy::intents(
        plan,
        &net.switch_map,
        host_routes(topo),
        SinkMode::Collector,
    )?;
    let options = DeployOptions {
        device_config: prep.device_config.clone(),
        ..DeployOptions::default()
    };
    let rt = runtime()?;
    let t0 = Instant::now();
    let reports = rt.block_on(deploy::deploy(
        Arc::new(intpath_sr_int::p4info()?),
        &net.switch_map,
        &intents,
        &options,
    ))?;
    println!(
        "deployed {} entries on {} switches in {:.0} ms",
        reports
            .iter()
            .map(|r| r.inserts + r.modifies)
            .sum::<usize>(),
        reports.len(),
        t0.elapsed().as_secs_f64() * 1e3
    );

    let hosts = collector_hosts(a, topo, plan)?;
    let db = a.db();
    let places = hosts
        .iter()
        .map(|name| {
            let h = topo
                .hosts()
                .iter()
                .find(|h| &h.name == name)
                .with_context(|| format!("host {name} is not in {}", topo.origin()))?;
            Ok(CollectorHost {
                name: name.clone(),
                ns: net.host(name)?.clone(),
                switch_port: network::switch_port(&h.switch, h.port),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let collectors = Collectors::start(
        &rt,
        &CollectorSpec {
            binary: &bins.collector,
            db: &db,
            plan_json: &prep.plan_json,
            topo_json: &prep.topo_json,
            logs: &prep.logs,
            otlp_port: otlp.then_some(OTLP_PORT),
        },
        &places,
    )?;
    let (collector_host, collector_ip) = (places[0].name.clone(), places[0].ns.ip);
    let assignment = assign_generators(plan, hosts.len());
    for (i, c) in places.iter().enumerate() {
        let paths = plan
            .paths
            .iter()
            .filter(|p| assignment.get(p.generator()) == Some(&i))
            .count();
        println!(
            "collector on {} ({}): run {} in {db}, {paths} of {} paths{}",
            c.name,
            c.ns.ip,
            collectors.run,
            plan.paths.len(),
            match otlp {
                true => format!(", OTLP/HTTP on {}:{OTLP_PORT}", c.ns.ip),
                false => String::new(),
            }
        );
    }
    Ok(Live {
        net,
        rt,
        collectors,
        collector_host,
        collector_ip,
        db,
    })
}

/// The collectors' hosts: `--collector-host` as given, else `--collectors`
/// (default one) chosen by [`default_collectors`].
fn collector_hosts(a: &DemoConfig, topo: &Topology, plan: &Plan) -> Result<Vec<String>> {
    let n = a.collectors.unwrap_or(a.collector_hosts.len().max(1));
    anyhow::ensure!(n >= 1, "--collectors must be at least 1");
    if !a.collector_hosts.is_empty() {
        anyhow::ensure!(
            a.collector_hosts.len() == n,
            "--collectors {n} but {} --collector-host given",
            a.collector_hosts.len()
        );
        return Ok(a.collector_hosts.clone());
    }
    let generators = plan
        .paths
        .iter()
        .map(|p| p.generator())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    anyhow::ensure!(
        n <= generators,
        "--collectors {n}: the plan's paths start at only {generators} switches, and each switch's probes go to one collector"
    );
    anyhow::ensure!(
        n < topo.hosts().len(),
        "--collectors {n}: {} has only {} hosts",
        topo.origin(),
        topo.hosts().len()
    );
    Ok(default_collectors(topo, plan, n))
}

/// Probes from every generator switch, each to its collector, and
/// background traffic from every host, for `duration` seconds (`None`:
/// until stopped).
pub fn start_senders(
    a: &DemoConfig,
    prep: &Prepared,
    collectors: &Collectors,
    net: &Network,
    duration: Option<f64>,
) -> Result<Senders> {
    let hosts = collectors.hosts();
    Senders::start(
        &SenderSpec {
            probe_gen: &prep.bins.probe_gen,
            plan_json: &prep.plan_json,
            topo_json: &prep.topo_json,
            collectors: &hosts,
            assignment: &assign_generators(&prep.plan, hosts.len()),
            probe_pps: a.probe_pps,
            traffic_pps: a.traffic_pps,
            duration,
            logs: &prep.logs,
        },
        &prep.topo,
        &prep.plan,
        net,
    )
}

/// OTLP/HTTP's standard port.
pub const OTLP_PORT: u16 = 4318;

/// Waits until `until`; true if Ctrl-C came first.
pub fn interrupted_before(stop: &AtomicBool, until: Instant) -> bool {
    while Instant::now() < until {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.load(Ordering::Relaxed)
}

/// The runtime the demo's database reads and deploy run on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectors_go_to_distinct_hosts_off_the_generators_first() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let plan = plan(
            &topo,
            &PlanOptions {
                directed: true,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        let generator = |name: &str| {
            plan.paths
                .iter()
                .any(|p| p.generator() == topo.host(name).unwrap().switch)
        };
        let all = topo.hosts().len();
        let hosts = default_collectors(&topo, &plan, all);
        assert_eq!(hosts.len(), all, "every host, once");
        let quiet = hosts.iter().take_while(|h| !generator(h)).count();
        assert!(quiet >= 2, "{hosts:?}");
        assert!(hosts[quiet..].iter().all(|h| generator(h)), "{hosts:?}");
        assert_eq!(default_collectors(&topo, &plan, 2), hosts[..2]);
    }
}

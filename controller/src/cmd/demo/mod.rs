//! `intpath demo`: the whole telemetry loop in one command.
//!
//! Topology → plan → Mininet network with one throttled egress port →
//! deploy → collector, probes and background traffic for a set time →
//! heatmaps and a summary that must name the throttled port as the hottest
//! link. Every artefact lands in `--out`, so the run can be inspected with
//! `intpath query` / `intpath heatmap` afterwards.
//!
//! With `--workload hotel` the run also carries microservice traffic and
//! ends in a diagnosis instead (see [`workload`]).

mod workload;

use super::deploy::{check_map, runtime};
use anyhow::{bail, Context, Result};
use intpath::demo::bottleneck::busiest_probed;
use intpath::demo::collector::{Collector, CollectorSpec};
use intpath::demo::heatmaps;
use intpath::demo::network::{self, Network, NetworkSpec};
use intpath::demo::procs::sibling_binary;
use intpath::demo::report::{progress, summary, Assessment};
use intpath::demo::senders::{SenderSpec, Senders};
use intpath::demo::telemetry::Snapshot;
use intpath::deploy::{self, host_routes, DeployOptions, SinkMode};
use intpath_collector::store::Db;
use intpath_core::plan::Plan;
use intpath_core::routes::Routes;
use intpath_core::topo::Topology;
use intpath_planner::{plan, PlanOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Topology to build in Mininet: generator expression or file.
    #[arg(long, default_value = "fattree:k=4")]
    topo: String,
    /// Seconds of probes and background traffic.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Directory for everything the run writes: topology, plan, switch map,
    /// telemetry database, heatmaps and every process's log.
    #[arg(long, default_value = "intpath-demo")]
    out: PathBuf,
    /// Background UDP traffic each host sends to the other hosts, packets/s
    /// (Poisson arrivals, uniformly chosen destinations).
    #[arg(long, default_value_t = 200.0)]
    traffic_pps: f64,
    /// Probes per path per second.
    #[arg(long, default_value_t = 50.0)]
    probe_pps: f64,
    /// Egress rate of the congested port, packets/s [default: a third of
    /// what the background traffic offers it].
    #[arg(long)]
    bottleneck_pps: Option<u32>,
    /// Egress queue depth of every switch port, packets.
    #[arg(long, default_value_t = 64)]
    queue_depth: u32,
    /// Telemetry database: a SQLite file or a `postgres://` URL [default:
    /// telemetry.db in --out].
    #[arg(long)]
    db: Option<Db>,
    /// Host that runs the collector [default: a host on no probe path's
    /// first switch, so it never sees its own outgoing probes].
    #[arg(long)]
    collector_host: Option<String>,
    /// soft: the intpath reference switch; bmv2: simple_switch_grpc (needs
    /// --device-config).
    #[arg(long, value_enum, default_value_t = SwitchKind::Soft)]
    switch: SwitchKind,
    /// bmv2 JSON compiled from p4/sr_int.p4 (`make -C p4`), pushed with the
    /// P4Info when --switch bmv2.
    #[arg(long, value_name = "FILE")]
    device_config: Option<PathBuf>,
    /// Fail when the paths that avoid the congested link lose more than
    /// this percentage of their probes (in sequence) [default: report only].
    #[arg(long, value_name = "PCT")]
    max_loss: Option<f64>,
    #[command(flatten)]
    workload: workload::WorkloadArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SwitchKind {
    Soft,
    Bmv2,
}

/// The programs the demo starts.
struct Binaries {
    switch: Option<PathBuf>,
    collector: PathBuf,
    probe_gen: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    if a.workload.workload.is_some() {
        return workload::run(a);
    }
    let prep = prepare(&a)?;
    let (topo, plan) = (&prep.topo, &prep.plan);
    // The port to congest, and how hard.
    let hot = busiest_probed(topo, &Routes::shortest(topo), plan)?;
    let pairs = topo.hosts().len() * (topo.hosts().len() - 1);
    let offered = a.traffic_pps * hot.routes as f64 / (topo.hosts().len() - 1) as f64;
    let rate = a
        .bottleneck_pps
        .unwrap_or_else(|| ((offered / 3.0).round() as u32).max(1));
    println!(
        "bottleneck: {} carries {} of {pairs} host pairs' routes: ≈{offered:.0} pps offered, egress limited to {rate} pps",
        hot.link,
        hot.routes
    );

    let live = launch(
        &a,
        &prep,
        vec![format!("{}:{}={rate}", hot.link.src, hot.link.src_port)],
        false,
    )?;
    let Live {
        mut net,
        rt,
        mut collector,
        collector_host,
        db,
        ..
    } = live;
    let run = collector.run;
    let t0 = Instant::now();
    let mut senders = start_senders(&a, &prep, &collector_host, &net)?;
    let (probe_senders, traffic_senders) = senders.counts();
    println!(
        "running {:.0} s: {probe_senders} probe senders ({} pps per path), {traffic_senders} traffic senders ({} pps each), started in {:.1} s",
        a.duration,
        a.probe_pps,
        a.traffic_pps,
        t0.elapsed().as_secs_f64()
    );

    // Progress, once a second, until the senders are done or Ctrl-C.
    let started = Instant::now();
    let mut next = started;
    let interrupted = loop {
        next += Duration::from_secs(1);
        if interrupted_before(&prep.stop, next) {
            break true;
        }
        collector.check()?;
        let running = senders.running()?;
        let snap = rt.block_on(Snapshot::read(&db, run)).unwrap_or_default();
        println!("{}", progress(started.elapsed(), a.duration, &snap, &hot));
        if running == 0 {
            break false;
        }
    };
    if interrupted {
        println!("interrupted: stopping the senders and storing what arrived");
    }
    let sent = senders.stop()?;
    // Probes still in flight (queued behind the bottleneck) arrive within this.
    std::thread::sleep(Duration::from_millis(500));
    collector.stop()?;
    let t0 = Instant::now();
    net.stop()?;
    println!("network down in {:.1} s", t0.elapsed().as_secs_f64());

    // Pictures and the verdict.
    let snap = rt.block_on(Snapshot::read(&db, run))?;
    println!("heatmaps:");
    for png in rt.block_on(heatmaps::render_all(&db, run, &a.out))? {
        println!("{}", png.display());
    }
    let assessment = Assessment::new(plan, &snap, &hot);
    println!();
    println!("{}", summary(plan, &snap, sent, &hot, &assessment));
    // Commands to paste as they are: this program as it was called, one per line.
    let me = std::env::args().next().unwrap_or_else(|| "intpath".into());
    println!("explore: {me} query --db {db} hottest\n         {me} query --db {db} paths");
    if interrupted {
        bail!("interrupted before the end of the run");
    }
    anyhow::ensure!(snap.probes() > 0, "no probe reached the collector");
    anyhow::ensure!(
        assessment.hottest_found,
        "the hottest link is {}, not the congested {}",
        snap.by_qdepth
            .first()
            .map_or("(none)".to_owned(), |h| h.link.to_string()),
        hot.link
    );
    anyhow::ensure!(
        assessment.silent_paths.is_empty(),
        "no probe of path(s) {:?} reached the collector",
        assessment.silent_paths
    );
    if let Some(max) = a.max_loss {
        anyhow::ensure!(
            assessment.other_loss_pct <= max,
            "the paths avoiding the congested link lost {:.2}% of their probes (limit {max}%)",
            assessment.other_loss_pct
        );
    }
    Ok(())
}

/// A host whose switch starts no probe path (the last such), else the last
/// host: the collector should not capture the fresh probes a host sends.
fn default_collector(topo: &Topology, plan: &Plan) -> String {
    let starts =
        |h: &&intpath_core::topo::Host| plan.paths.iter().any(|p| p.generator() == h.switch);
    let hosts = topo.hosts();
    hosts
        .iter()
        .rev()
        .find(|h| !starts(h))
        .or(hosts.last())
        .map(|h| h.name.clone())
        .unwrap_or_default()
}

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(path)
}

/// What a run starts from: checked flags, the programs, topology and plan.
struct Prepared {
    device_config: Vec<u8>,
    bins: Binaries,
    logs: PathBuf,
    /// Set by Ctrl-C.
    stop: Arc<AtomicBool>,
    topo: Topology,
    topo_json: PathBuf,
    plan: Plan,
    plan_json: PathBuf,
}

fn prepare(a: &Args) -> Result<Prepared> {
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

    let topo = Topology::load(&a.topo)?;
    anyhow::ensure!(
        topo.hosts().len() >= 2,
        "{}: the demo needs at least two hosts (collector and traffic)",
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

/// The running network, deployed, with its collector.
struct Live {
    net: Network,
    rt: tokio::runtime::Runtime,
    collector: Collector,
    collector_host: String,
    collector_ip: std::net::Ipv4Addr,
    db: Db,
}

/// Starts Mininet (`queue_rates` throttled from the start), deploys the
/// plan and starts the collector, with the OTLP receiver on its host's
/// address when `otlp`.
fn launch(a: &Args, prep: &Prepared, queue_rates: Vec<String>, otlp: bool) -> Result<Live> {
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

    let collector_host = match &a.collector_host {
        Some(h) => h.clone(),
        None => default_collector(topo, plan),
    };
    let coll = net.host(&collector_host)?.clone();
    let db =
        a.db.clone()
            .unwrap_or_else(|| Db::Sqlite(a.out.join("telemetry.db")));
    match &db {
        Db::Sqlite(path) if otlp => fresh_database(path)?,
        Db::Postgres(_) if otlp => bail!(
            "--workload diagnoses every span in its database, so it keeps its own SQLite file in --out; leave out --db"
        ),
        _ => {}
    }
    let otlp_listen = otlp.then(|| std::net::SocketAddr::from((coll.ip, OTLP_PORT)));
    let collector = Collector::start(
        &rt,
        &CollectorSpec {
            binary: &bins.collector,
            db: &db,
            plan_json: &prep.plan_json,
            topo_json: &prep.topo_json,
            log: &prep.logs.join("collector.log"),
            otlp_listen,
        },
        &coll,
    )?;
    println!(
        "collector on {collector_host} ({}): run {} in {db}{}",
        coll.ip,
        collector.run,
        otlp_listen.map_or(String::new(), |l| format!(", OTLP/HTTP on {l}"))
    );
    Ok(Live {
        net,
        rt,
        collector,
        collector_host,
        collector_ip: coll.ip,
        db,
    })
}

/// Probes from every generator switch and background traffic from every
/// host, for the run's duration.
fn start_senders(
    a: &Args,
    prep: &Prepared,
    collector_host: &str,
    net: &Network,
) -> Result<Senders> {
    Senders::start(
        &SenderSpec {
            probe_gen: &prep.bins.probe_gen,
            plan_json: &prep.plan_json,
            topo_json: &prep.topo_json,
            collector: collector_host,
            probe_pps: a.probe_pps,
            traffic_pps: a.traffic_pps,
            duration: a.duration,
            logs: &prep.logs,
        },
        &prep.topo,
        &prep.plan,
        net,
    )
}

/// Waits until `until`; true if Ctrl-C came first.
fn interrupted_before(stop: &AtomicBool, until: Instant) -> bool {
    while Instant::now() < until {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.load(Ordering::Relaxed)
}

/// OTLP/HTTP's standard port.
const OTLP_PORT: u16 = 4318;

/// The workload's diagnosis reads every span in the database, so spans of an
/// earlier run in the same `--out` would be diagnosed with this one's: the
/// workload demo starts from an empty database.
fn fresh_database(db: &std::path::Path) -> Result<()> {
    let mut removed = false;
    for suffix in ["", "-wal", "-shm"] {
        let f = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        match std::fs::remove_file(&f) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", f.display())),
        }
    }
    if removed {
        println!("replaced the previous run's {}", db.display());
    }
    Ok(())
}

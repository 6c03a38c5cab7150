//! `intpath demo`: the whole telemetry loop in one command.
//!
//! Topology → plan → Mininet network with one throttled egress port →
//! deploy → collector, probes and background traffic for a set time →
//! heatmaps and a summary that must name the throttled port as the hottest
//! link. Every artefact lands in `--out`, so the run can be inspected with
//! `intpath query` / `intpath heatmap` afterwards.

use super::deploy::{check_map, runtime};
use anyhow::{bail, Context, Result};
use intpath::demo::bottleneck::{busiest_probed, Egress};
use intpath::demo::network::{self, Network, NetworkSpec};
use intpath::demo::procs::{in_netns, sibling_binary, Proc};
use intpath::demo::telemetry::{newest_run, Snapshot};
use intpath::deploy::{self, host_routes, DeployOptions, SinkMode};
use intpath_collector::heatmap::{self, HeatmapKind, HeatmapRequest};
use intpath_collector::query::{Metric, Stat, TimeRange};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_planner::{plan, PlanOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
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

    // Topology and plan.
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

    // The port to congest, and how hard.
    let routes = host_routes(&topo);
    let hot = busiest_probed(&topo, &routes, &plan)?;
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

    // The network.
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
    let mut net = Network::start(
        &NetworkSpec {
            topo_json: &topo_json,
            switch: if a.switch == SwitchKind::Soft {
                "soft"
            } else {
                "bmv2"
            },
            switch_binary: bins.switch.as_deref(),
            queue_rates: vec![format!("{}:{}={rate}", hot.link.src, hot.link.src_port)],
            queue_depth: a.queue_depth,
            dir: &a.out,
        },
        Duration::from_secs(180),
    )?;
    println!("network up in {:.1} s", t0.elapsed().as_secs_f64());

    // Deploy.
    check_map(&topo, &net.switch_map, &net.switch_map_path)?;
    let intents = deploy::intents(&plan, &net.switch_map, routes, SinkMode::Collector)?;
    let options = DeployOptions {
        device_config,
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

    // Collector, then probes and traffic.
    let collector_host = match &a.collector_host {
        Some(h) => h.clone(),
        None => default_collector(&topo, &plan),
    };
    let coll = net.host(&collector_host)?.clone();
    let db = a.out.join("telemetry.db");
    let before = rt.block_on(newest_run(&db))?;
    let mut cmd = in_netns(coll.pid, &bins.collector);
    cmd.arg("collect")
        .args(["--iface", &coll.intf])
        .arg("--db")
        .arg(&db)
        .arg("--plan")
        .arg(&plan_json)
        .arg("--topo")
        .arg(&topo_json);
    let mut collector = Proc::spawn("collector", cmd, &logs.join("collector.log"), true)?;
    let run = wait_for_run(&rt, &db, before, &mut collector)?;
    println!(
        "collector on {collector_host} ({}): run {run} in {}",
        coll.ip,
        db.display()
    );

    let count = (a.probe_pps * a.duration).ceil() as u64;
    let mut probes = Vec::new();
    let mut generators: Vec<&str> = plan.paths.iter().map(|p| p.generator()).collect();
    generators.sort_unstable();
    generators.dedup();
    for g in generators {
        let mut cmd = match topo.hosts_of(g).find(|h| h.name != collector_host) {
            Some(h) => {
                let ns = net.host(&h.name)?;
                let mut cmd = in_netns(ns.pid, &bins.probe_gen);
                cmd.args(["send", "--iface", &ns.intf]);
                cmd
            }
            None => {
                // No host of its own: inject as packet-outs over P4Runtime.
                let mut cmd = Command::new(&bins.probe_gen);
                cmd.args(["send", "--switch", g, "--election-id", "2"])
                    .arg("--switch-map")
                    .arg(&net.switch_map_path)
                    .args(["--src-ip", &coll.ip.to_string()]);
                cmd
            }
        };
        cmd.arg("--plan")
            .arg(&plan_json)
            .args(["--generator", g, "--collector", &coll.ip.to_string()])
            .args([
                "--rate",
                &a.probe_pps.to_string(),
                "--count",
                &count.to_string(),
            ]);
        let log = logs.join(format!("probes-{g}.log"));
        probes.push(Proc::spawn(format!("probe-gen@{g}"), cmd, &log, true)?);
    }
    let mut traffic = Vec::new();
    if a.traffic_pps > 0.0 {
        for (i, h) in topo.hosts().iter().enumerate() {
            let ns = net.host(&h.name)?;
            let mut cmd = in_netns(ns.pid, &bins.probe_gen);
            cmd.args(["traffic", "--iface", &ns.intf, "--poisson"])
                .arg("--topology")
                .arg(&topo_json)
                .args(["--rate", &a.traffic_pps.to_string()])
                .args(["--duration", &a.duration.to_string()])
                .args(["--seed", &(i + 1).to_string()]);
            let log = logs.join(format!("traffic-{}.log", h.name));
            traffic.push(Proc::spawn(
                format!("traffic@{}", h.name),
                cmd,
                &log,
                false,
            )?);
        }
    }
    println!(
        "running {:.0} s: {} probe senders ({} pps per path), {} traffic senders ({} pps each)",
        a.duration,
        probes.len(),
        a.probe_pps,
        traffic.len(),
        a.traffic_pps
    );

    // Progress, once a second, until the senders are done or Ctrl-C.
    let started = Instant::now();
    let mut next = started;
    let interrupted = loop {
        next += Duration::from_secs(1);
        while Instant::now() < next {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if stop.load(Ordering::Relaxed) {
            break true;
        }
        if let Some(status) = collector.poll()? {
            bail!(
                "the collector stopped ({status}); {}:\n{}",
                collector.log.display(),
                collector.log_tail(10)
            );
        }
        let mut running = 0;
        for p in probes.iter_mut().chain(traffic.iter_mut()) {
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
        let snap = rt.block_on(Snapshot::read(&db, run)).unwrap_or_default();
        println!("{}", progress(started.elapsed(), a.duration, &snap, &hot));
        if running == 0 {
            break false;
        }
    };
    if interrupted {
        println!("interrupted: stopping the senders and storing what arrived");
    }
    let mut sent = 0;
    for p in &mut probes {
        p.stop(Duration::from_secs(5))?;
        sent += sent_count(p)?;
    }
    for t in &mut traffic {
        t.stop(Duration::from_secs(5))?;
    }
    // Probes still in flight (queued behind the bottleneck) arrive within this.
    std::thread::sleep(Duration::from_millis(500));
    let status = collector.stop(Duration::from_secs(20))?;
    anyhow::ensure!(
        status.success(),
        "the collector failed ({status}); {}:\n{}",
        collector.log.display(),
        collector.log_tail(10)
    );
    net.stop()?;

    // Pictures and the verdict.
    let snap = rt.block_on(Snapshot::read(&db, run))?;
    println!("heatmaps:");
    let timeline = HeatmapKind::Timeline {
        range: TimeRange::default(),
        hosts: false,
    };
    let snapshot = HeatmapKind::Snapshot(TimeRange::default());
    for (metric, kind) in [
        (Metric::Qdepth, timeline),
        (Metric::Qdepth, snapshot),
        (Metric::Qdelay, timeline),
        (Metric::Loss, snapshot),
    ] {
        let name = match kind {
            HeatmapKind::Timeline { .. } => "timeline",
            _ => "snapshot",
        };
        let req = HeatmapRequest {
            db: db.clone(),
            run: Some(run),
            metric,
            stat: Stat::Mean,
            out: a.out.join(format!("heatmap-{name}-{}.png", metric.name())),
            kind,
        };
        rt.block_on(heatmap::render(&req))?;
        println!("{}", req.out.display());
    }
    println!();
    println!("{}", summary(&plan, &snap, sent, &hot));
    // Commands to paste as they are: this program as it was called, one per line.
    let me = std::env::args().next().unwrap_or_else(|| "intpath".into());
    println!(
        "explore: {me} query --db {0} hottest\n         {me} query --db {0} paths",
        db.display()
    );
    let hottest = snap.by_qdepth.first().map(|h| &h.link);
    if interrupted {
        bail!("interrupted before the end of the run");
    }
    anyhow::ensure!(snap.probes() > 0, "no probe reached the collector");
    anyhow::ensure!(
        hottest == Some(&hot.link),
        "the hottest link is {}, not the congested {}",
        hottest.map_or("(none)".to_owned(), |l| l.to_string()),
        hot.link
    );
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

/// Waits until the collector has opened a run newer than `before`.
fn wait_for_run(
    rt: &tokio::runtime::Runtime,
    db: &Path,
    before: Option<i64>,
    collector: &mut Proc,
) -> Result<i64> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = collector.poll()? {
            bail!(
                "the collector exited ({status}); {}:\n{}",
                collector.log.display(),
                collector.log_tail(10)
            );
        }
        if let Some(run) = rt.block_on(newest_run(db))?.filter(|&r| Some(r) != before) {
            return Ok(run);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the collector started no run within 20 s; {}",
            collector.log.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Probes a finished probe-gen reports as sent (its last stdout line).
fn sent_count(p: &mut Proc) -> Result<u64> {
    let mut out = String::new();
    if let Some(mut s) = p.child_mut().stdout.take() {
        s.read_to_string(&mut out)?;
    }
    let line = out.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line)
        .with_context(|| format!("{}: no report on stdout; {}", p.name, p.log.display()))?;
    v["sent"]
        .as_u64()
        .with_context(|| format!("{}: report without a sent count: {line}", p.name))
}

fn progress(elapsed: Duration, total: f64, s: &Snapshot, hot: &Egress) -> String {
    let at = s
        .by_qdepth
        .iter()
        .find(|h| h.link == hot.link)
        .map_or(0.0, |h| h.value);
    let top = s
        .by_qdepth
        .first()
        .map_or("-".to_owned(), |h| format!("{} ({:.1})", h.link, h.value));
    format!(
        "[{:>5.1}/{total:.0} s] probes stored {:>6}  mean queue depth at {} {at:>5.1}  hottest {top}",
        elapsed.as_secs_f64(),
        s.probes(),
        hot.link
    )
}

fn summary(plan: &Plan, s: &Snapshot, sent: u64, hot: &Egress) -> String {
    use std::fmt::Write;
    let received = s.probes();
    let loss = if sent > 0 {
        100.0 * (sent as f64 - received as f64).max(0.0) / sent as f64
    } else {
        0.0
    };
    let mut out = format!(
        "summary\n  paths           {}\n  probes sent     {sent}\n  probes received {received}\n  loss            {loss:.1}%\n",
        plan.paths.len()
    );
    for p in &s.paths {
        let _ = writeln!(
            out,
            "    path {:>3}: {:>6} probes, {:>5.1}% lost in sequence, e2e mean {:.0} µs",
            p.path, p.probes, p.loss_pct, p.e2e_mean_us
        );
    }
    let _ = writeln!(out, "  congested link  {}", hot.link);
    let _ = writeln!(
        out,
        "  hottest links (mean queue depth, packets; mean queueing delay, µs):"
    );
    for h in s.by_qdepth.iter().take(3) {
        let delay = s
            .by_qdelay
            .iter()
            .find(|d| d.link == h.link)
            .map_or(0.0, |d| d.value);
        let _ = writeln!(
            out,
            "    {:<16} {:>6.1} pkts {:>9.0} µs",
            h.link.to_string(),
            h.value,
            delay
        );
    }
    let verdict = match s.by_qdepth.first() {
        Some(h) if h.link == hot.link => "the hottest link is the congested one".to_owned(),
        Some(h) => format!("MISMATCH: the hottest link is {}", h.link),
        None => "MISMATCH: no link was measured".to_owned(),
    };
    let _ = write!(out, "  verdict         {verdict}");
    out
}

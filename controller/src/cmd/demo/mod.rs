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

mod setup;
mod workload;

use anyhow::{bail, Result};
use intpath::demo::bottleneck::{busiest_probed, MIN_QUEUE_PPS};
use intpath::demo::heatmaps;
use intpath::demo::report::{collected, progress, summary, Assessment};
use intpath::demo::telemetry::Snapshot;
use intpath_core::routes::Routes;
use intpath_store::Db;
use setup::{launch, prepare, start_senders, Live};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Collector processes, all writing one run into --db, each taking the
    /// probes of its share of the generator switches [default: one, or one
    /// per --collector-host].
    #[arg(long, value_name = "N")]
    collectors: Option<usize>,
    /// Host that runs a collector; repeat for several [default: hosts on no
    /// probe path's first switch, so they never see outgoing probes].
    #[arg(long)]
    collector_host: Vec<String>,
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
        .unwrap_or_else(|| ((offered / 3.0).round() as u32).max(MIN_QUEUE_PPS));
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
        mut collectors,
        db,
        ..
    } = live;
    let run = collectors.run;
    let t0 = Instant::now();
    let mut senders = start_senders(&a, &prep, &collectors, &net)?;
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
        collectors.check()?;
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
    let stored = collectors.stop()?;
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
    println!("{}", collected(&stored, &snap));
    // Commands to paste as they are: this program as it was called, one per line.
    let me = std::env::args().next().unwrap_or_else(|| "intpath".into());
    println!("explore: {me} query --db {db} hottest\n         {me} query --db {db} paths");
    if interrupted {
        bail!("interrupted before the end of the run");
    }
    anyhow::ensure!(snap.probes() > 0, "no probe reached the collector");
    let by_collectors: u64 = stored.iter().map(|s| s.probes).sum();
    anyhow::ensure!(
        by_collectors == snap.probes() as u64,
        "the collectors stored {by_collectors} probes between them, the database holds {}",
        snap.probes()
    );
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

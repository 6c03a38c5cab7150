//! `probe-gen`: sends SR-INT probes along planned paths, or background
//! traffic, at a controlled rate.

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use intpath_core::plan::{FollowedPlan, Plan, ProbePath};
use intpath_core::switch_map::{SwitchEntry, SwitchMap};
use intpath_core::topo::Topology;
use intpath_core::wire::{max_hops, max_path_links, MacAddr, DEFAULT_MTU, MAX_HOPS};
use intpath_p4rt::client::{ClientConfig, Target};
use probe_gen::frames::{Endpoints, FrameSource, ProbeSource, TrafficSource};
use probe_gen::schedule::{Interarrival, Limit, Schedule, Spacing};
use probe_gen::selection::{select, PathSelection};
use probe_gen::sender::{self, MAX_BATCH};
use probe_gen::stats::Report;
use probe_gen::transport::{AfPacket, Interface, PacketOut, PnetChannel, Transport};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    version,
    about = "Inject SR-INT probes or background traffic at controlled rates"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Send fresh SR-INT probes (no labels, no records) for planned paths.
    ///
    /// The first switch looks the path id up in its generator table and pushes
    /// the route; every switch on the path adds a record; the sink forwards
    /// the probe to the collector.
    Send(SendArgs),
    /// Send background UDP traffic to random destinations.
    Traffic(TrafficArgs),
}

#[derive(Args)]
struct SendArgs {
    /// Plan file written by `intpath plan`.
    #[arg(long)]
    plan: PathBuf,
    #[command(flatten)]
    which: Which,
    /// Keep following the plan file: when it is rewritten (`intpath watch
    /// --plan` after a replan), send on the new plan's paths. --count then
    /// applies per plan, --duration to the whole run.
    #[arg(long)]
    follow_plan: bool,
    /// Collector IPv4 address (the probes' IP destination).
    #[arg(long)]
    collector: Ipv4Addr,
    /// Records a probe may collect, one per switch [default: the most that
    /// fit --mtu]; 2 to 45 (sr_int.p4's stacks).
    #[arg(long)]
    max_hops: Option<u8>,
    /// Link MTU (IPv4 bytes) the default --max-hops is derived from.
    #[arg(long, default_value_t = DEFAULT_MTU)]
    mtu: usize,
    /// The plan's topology (file or generator expression), which says
    /// which switches have hosts; for --hostless.
    #[arg(long, value_name = "SPEC")]
    topo: Option<String>,
    #[command(flatten)]
    out: Out,
    #[command(flatten)]
    pace: Pace,
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct Which {
    /// Probe these path ids.
    #[arg(long, num_args = 1.., value_name = "ID")]
    path: Vec<u16>,
    /// Probe every path that starts at this switch.
    #[arg(long, value_name = "SWITCH")]
    generator: Option<String>,
    /// Probe every path of the plan (they must all start at one switch: the
    /// one the interface leads to, or --switch).
    #[arg(long)]
    all: bool,
    /// Probe every path whose first switch has no host in --topo, as
    /// P4Runtime packet-outs at that switch (needs --switch-map and
    /// --src-ip). With --follow-plan, the sender for what no host can send.
    #[arg(long, requires = "topo")]
    hostless: bool,
}

impl Which {
    fn selection(&self) -> PathSelection {
        if self.all || self.hostless {
            PathSelection::All
        } else if let Some(g) = &self.generator {
            PathSelection::Generator(g.clone())
        } else {
            PathSelection::Ids(self.path.clone())
        }
    }
}

#[derive(Args)]
struct TrafficArgs {
    #[command(flatten)]
    to: Destinations,
    /// Frame size in bytes, Ethernet header included (FCS excluded).
    #[arg(long, default_value_t = 512)]
    size: usize,
    #[arg(long, default_value_t = 40000)]
    src_port: u16,
    #[arg(long, default_value_t = 5001)]
    dst_port: u16,
    #[command(flatten)]
    out: Out,
    #[command(flatten)]
    pace: Pace,
}

/// Each frame goes to one destination drawn uniformly at random.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct Destinations {
    /// Destination IPv4 addresses (all get --dst-mac).
    #[arg(long, num_args = 1..)]
    dst: Vec<Ipv4Addr>,
    /// File of destinations, one `IP [MAC]` per line (`#` comments).
    #[arg(long)]
    dst_file: Option<PathBuf>,
    /// Every host of this topology (file or generator expression, as
    /// `intpath plan --topo` takes it) except the sender, with the host's MAC.
    #[arg(long, value_name = "SPEC", alias = "topology")]
    topo: Option<String>,
}

#[derive(Args, Clone)]
struct Out {
    /// Interface to send on (a Mininet host's, for example); needed unless
    /// probes go in as packet-outs (--switch, --hostless).
    #[arg(long, value_name = "IF", conflicts_with = "switch")]
    iface: Option<String>,
    /// Inject as P4Runtime packet-outs into this switch's ingress pipeline
    /// instead (for a switch without a host); needs --switch-map and --src-ip.
    #[arg(
        long,
        value_name = "SWITCH",
        requires = "switch_map",
        requires = "src_ip"
    )]
    switch: Option<String>,
    /// Switch map written by the Mininet launcher (name, gRPC address, device id).
    #[arg(long, value_name = "FILE")]
    switch_map: Option<PathBuf>,
    /// P4Runtime election id; the switch takes packet-outs only from its
    /// primary, so it must beat any controller connected to it.
    #[arg(long, default_value_t = 1)]
    election_id: u64,
    /// Source IPv4 address [default: the interface's first one].
    #[arg(long)]
    src_ip: Option<Ipv4Addr>,
    /// Source MAC [default: the interface's, or zero with --switch].
    #[arg(long)]
    src_mac: Option<MacAddr>,
    /// Destination MAC (switches do not check it; a host would use the first
    /// switch's).
    #[arg(long, default_value_t = MacAddr::BROADCAST)]
    dst_mac: MacAddr,
    /// How frames reach the interface.
    #[arg(long, value_enum, default_value_t = Tx::Mmsg)]
    tx: Tx,
    /// Skip the interface's qdisc (PACKET_QDISC_BYPASS; no gain measured on
    /// veth, and it skips tc shaping such as Mininet's link emulation). Only
    /// with --tx mmsg.
    #[arg(long)]
    qdisc_bypass: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Tx {
    /// Batches of frames per sendmmsg(2) on a transmit-only AF_PACKET socket.
    Mmsg,
    /// pnet's datalink channel, one frame per call.
    Pnet,
}

#[derive(Args)]
struct Pace {
    /// Packets per second (per path for probes).
    #[arg(long, value_parser = positive)]
    rate: f64,
    /// Exponential inter-arrival times (a Poisson process) instead of constant.
    #[arg(long)]
    poisson: bool,
    /// Stop after this many packets (per path for probes).
    #[arg(long, conflicts_with = "duration")]
    count: Option<u64>,
    /// Stop after this many seconds. Without --count or --duration: until Ctrl-C.
    #[arg(long, value_parser = positive)]
    duration: Option<f64>,
    /// Seed of the Poisson gaps and the destination choice [default: from the clock].
    #[arg(long)]
    seed: Option<u64>,
    /// Most frames per system call when behind schedule.
    #[arg(long, default_value_t = MAX_BATCH as u16, value_parser = clap::value_parser!(u16).range(1..=MAX_BATCH as i64))]
    batch: u16,
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number")),
    }
}

fn main() -> ExitCode {
    intpath_core::logging::init("info").expect("a valid default filter");
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Send(a) => send(a),
        Cmd::Traffic(a) => traffic(a),
    };
    intpath_core::logging::exit("probe-gen", result)
}

fn send(a: SendArgs) -> Result<()> {
    record_limit(&a)?;
    if a.which.hostless && a.out.iface.is_some() {
        bail!("--hostless sends P4Runtime packet-outs at each path's first switch; drop --iface");
    }
    let topo = a.topo.as_deref().map(Topology::load).transpose()?;
    let interrupted = interrupt_flag()?;
    if a.follow_plan {
        return follow(&a, topo.as_ref(), &interrupted);
    }
    let plan = Plan::load(&a.plan)?;
    let paths = to_probe(&a, topo.as_ref(), &plan).map_err(|e| anyhow::anyhow!("{e}"))?;
    let report = probe_all(&a, &paths, &interrupted, a.pace.duration)?;
    print_counts(&report);
    Ok(())
}

/// Why a plan leaves this sender nothing to send.
#[derive(Debug, thiserror::Error)]
enum Idle {
    /// Other senders serve the plan.
    #[error("{0}")]
    Nothing(String),
    /// Paths nobody will send on: an error, not a wait.
    #[error(
        "paths {ids} start at switches without a host ({switches}) and nobody sends on them: \
         give --switch-map to inject their probes as P4Runtime packet-outs"
    )]
    Unsent { ids: String, switches: String },
}

/// The paths of `plan` this sender probes.
fn to_probe<'p>(
    a: &SendArgs,
    topo: Option<&Topology>,
    plan: &'p Plan,
) -> Result<Vec<&'p ProbePath>, Idle> {
    let named = |e: &dyn std::fmt::Display| Idle::Nothing(format!("{}: {e}", a.plan.display()));
    let paths = select(plan, &a.which.selection()).map_err(|e| named(&e))?;
    let Some(topo) = topo.filter(|_| a.which.hostless) else {
        return Ok(paths);
    };
    let ids = intpath_planner::hostless_ends(topo, plan).generators;
    let paths: Vec<&ProbePath> = paths.into_iter().filter(|p| ids.contains(&p.id)).collect();
    if paths.is_empty() {
        return Err(named(&"every path starts at a switch with a host"));
    }
    if a.out.switch_map.is_none() {
        let mut switches: Vec<&str> = paths.iter().map(|p| p.generator()).collect();
        switches.sort_unstable();
        switches.dedup();
        return Err(Idle::Unsent {
            ids: paths
                .iter()
                .map(|p| p.id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            switches: switches.join(", "),
        });
    }
    Ok(paths)
}

/// Probes the plan in force, moving to the new paths whenever the plan
/// file is rewritten (by `intpath watch` after a replan). A plan with none
/// of the selected paths leaves this sender idle until the next one.
fn follow(a: &SendArgs, topo: Option<&Topology>, interrupted: &AtomicBool) -> Result<()> {
    let (mut followed, mut plan) = FollowedPlan::open(&a.plan)?;
    let started = Instant::now();
    let mut total = Report::default();
    loop {
        let left = a.pace.duration.map(|d| d - started.elapsed().as_secs_f64());
        if left.is_some_and(|l| l <= 0.0) || interrupted.load(Ordering::Relaxed) {
            break;
        }
        // Set when this plan's sending must end: Ctrl-C or a new plan.
        let halt = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let (report, next) = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    if interrupted.load(Ordering::Relaxed) {
                        halt.store(true, Ordering::Relaxed);
                        return None;
                    }
                    match followed.poll() {
                        Some(Ok(p)) => {
                            tracing::info!("{} changed: moving to the new plan", a.plan.display());
                            halt.store(true, Ordering::Relaxed);
                            return Some(p);
                        }
                        Some(Err(e)) => tracing::warn!("keeping the current plan: {e}"),
                        None => {}
                    }
                }
                None
            });
            let report = match to_probe(a, topo, &plan) {
                Ok(paths) => probe_all(a, &paths, &halt, left),
                Err(e) => {
                    match e {
                        Idle::Nothing(_) => tracing::info!("{e}; waiting for a new plan"),
                        Idle::Unsent { .. } => tracing::error!("{e}"),
                    }
                    let deadline = left.map(|l| Instant::now() + Duration::from_secs_f64(l));
                    while !halt.load(Ordering::Relaxed)
                        && deadline.is_none_or(|d| Instant::now() < d)
                    {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Ok(Report::default())
                }
            };
            done.store(true, Ordering::Relaxed);
            (report, watcher.join())
        });
        let report = report?;
        total.sent += report.sent;
        total.errors += report.errors;
        match next {
            Ok(Some(p)) => plan = p,
            Ok(None) => break,
            Err(_) => bail!("the plan watcher panicked"),
        }
    }
    total.elapsed = started.elapsed();
    total.interrupted = interrupted.load(Ordering::Relaxed);
    print_counts(&total);
    Ok(())
}

/// Sends probes on `paths`: out of the one sender's interface or switch,
/// or with --hostless as packet-outs at each path's first switch, one
/// P4Runtime session per switch, side by side.
fn probe_all(
    a: &SendArgs,
    paths: &[&ProbePath],
    stop: &AtomicBool,
    duration: Option<f64>,
) -> Result<Report> {
    if !a.which.hostless {
        return probe(a, &a.out, paths, stop, duration);
    }
    let mut by_switch: std::collections::BTreeMap<&str, Vec<&ProbePath>> = Default::default();
    for p in paths {
        by_switch.entry(p.generator()).or_default().push(p);
    }
    let reports: Vec<Result<Report>> = std::thread::scope(|s| {
        let senders: Vec<_> = by_switch
            .into_iter()
            .map(|(sw, paths)| {
                let out = Out {
                    switch: Some(sw.to_owned()),
                    ..a.out.clone()
                };
                s.spawn(move || probe(a, &out, &paths, stop, duration))
            })
            .collect();
        senders
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a sender panicked")))
            })
            .collect()
    });
    let mut total = Report::default();
    for r in reports {
        let r = r?;
        total.sent += r.sent;
        total.errors += r.errors;
        total.elapsed = total.elapsed.max(r.elapsed);
        total.interrupted |= r.interrupted;
    }
    Ok(total)
}

/// Sends probes on `paths` (all from one generator) out `out` until the
/// pace's limit, `duration` seconds, or `stop`.
fn probe(
    a: &SendArgs,
    out: &Out,
    paths: &[&ProbePath],
    stop: &AtomicBool,
    duration: Option<f64>,
) -> Result<Report> {
    let mut generators: Vec<&str> = paths.iter().map(|p| p.generator()).collect();
    generators.sort_unstable();
    generators.dedup();
    if generators.len() > 1 {
        bail!(
            "the selected paths start at {} switches ({}), but probes enter at one; \
             pick one with --generator (one probe-gen per generator switch)",
            generators.len(),
            generators.join(", ")
        );
    }
    if let Some(sw) = out.switch.as_deref().filter(|sw| *sw != generators[0]) {
        bail!(
            "the selected paths start at {}, not at --switch {sw}",
            generators[0]
        );
    }
    let hops = record_limit(a)?;
    let (via, ends) = endpoints(out)?;
    let ids: Vec<u16> = paths.iter().map(|p| p.id).collect();
    tracing::info!(
        "probing {} path(s) from {} via {via} towards {} at {} pps each",
        ids.len(),
        generators[0],
        a.collector,
        a.pace.rate
    );
    let mut source = ProbeSource::new(&ids, ends, a.collector, hops);
    run(out, via, &a.pace, duration, ids.len(), &mut source, stop)
}

/// The records a probe may collect, checked as `intpath plan` checks its
/// hop limit: room for at least one link, at most what sr_int.p4 holds.
fn record_limit(a: &SendArgs) -> Result<u8> {
    if max_path_links(a.mtu) == 0 {
        bail!(
            "--mtu {}: leaves no room for a probe crossing one link (as `intpath plan` says)",
            a.mtu
        );
    }
    let hops = match a.max_hops {
        Some(h) if h < 2 => {
            bail!("--max-hops {h}: a probe crossing one link collects 2 records (one per switch)")
        }
        Some(h) if usize::from(h) > MAX_HOPS => {
            bail!("--max-hops {h}: sr_int.p4's stacks hold at most {MAX_HOPS} records")
        }
        Some(h) => usize::from(h),
        None => max_hops(a.mtu).min(MAX_HOPS),
    };
    Ok(u8::try_from(hops).expect("at most MAX_HOPS"))
}

fn traffic(a: TrafficArgs) -> Result<()> {
    let (via, ends) = endpoints(&a.out)?;
    let dsts: Vec<(Ipv4Addr, MacAddr)> = match (&a.to.dst_file, &a.to.topo) {
        (Some(f), _) => probe_gen::destinations::load(f, a.out.dst_mac)?,
        (None, Some(spec)) => {
            let topo = Topology::load(spec)?;
            let hosts: Vec<_> = topo
                .hosts()
                .iter()
                .filter(|h| h.ip != ends.src_ip)
                .map(|h| (h.ip, h.mac))
                .collect();
            if hosts.is_empty() {
                bail!("{spec}: no host other than {} to send to", ends.src_ip);
            }
            hosts
        }
        (None, None) => a.to.dst.iter().map(|&ip| (ip, a.out.dst_mac)).collect(),
    };
    let seed = seed(&a.pace);
    let mut source = TrafficSource::new(ends, &dsts, (a.src_port, a.dst_port), a.size, seed)?;
    tracing::info!(
        "sending {}-byte frames via {via} to {} destination(s) at {} pps",
        a.size,
        dsts.len(),
        a.pace.rate
    );
    let interrupted = interrupt_flag()?;
    let report = run(
        &a.out,
        via,
        &a.pace,
        a.pace.duration,
        1,
        &mut source,
        &interrupted,
    )?;
    print_counts(&report);
    Ok(())
}

/// Where frames enter the network.
enum Via {
    Iface(Interface),
    Switch(SwitchEntry),
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Via::Iface(i) => write!(f, "interface {}", i.name),
            Via::Switch(s) => write!(f, "packet-out at {} ({})", s.name, s.grpc_addr),
        }
    }
}

fn endpoints(out: &Out) -> Result<(Via, Endpoints)> {
    let (via, default_ip, default_mac) = match (&out.iface, &out.switch, &out.switch_map) {
        (Some(name), _, _) => {
            let iface = Interface::find(name)?;
            let (ip, mac) = (iface.ipv4, iface.mac);
            (Via::Iface(iface), ip, mac)
        }
        (None, Some(sw), Some(map_file)) => {
            let map = SwitchMap::load(map_file)?;
            let Some(entry) = map.get(sw) else {
                bail!(
                    "switch {sw:?} is not in the switch map {}",
                    map_file.display()
                );
            };
            (Via::Switch(entry.clone()), None, None)
        }
        _ => bail!("give --iface, or --switch with --switch-map"),
    };
    let src_ip = match out.src_ip.or(default_ip) {
        Some(ip) => ip,
        None => bail!("{via} has no IPv4 address; give one with --src-ip"),
    };
    let ends = Endpoints {
        src_mac: out.src_mac.or(default_mac).unwrap_or_default(),
        dst_mac: out.dst_mac,
        src_ip,
    };
    Ok((via, ends))
}

fn seed(p: &Pace) -> u64 {
    p.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    })
}

/// Paces `flows` flows of `source` out `via` for at most `duration`
/// seconds, until `stop`, and reports on stderr.
fn run(
    out: &Out,
    via: Via,
    pace: &Pace,
    duration: Option<f64>,
    flows: usize,
    source: &mut dyn FrameSource,
    stop: &AtomicBool,
) -> Result<Report> {
    let spacing = if pace.poisson {
        Spacing::Poisson
    } else {
        Spacing::Constant
    };
    let seed = seed(pace);
    let gaps = (0..flows as u64)
        .map(|i| Interarrival::new(pace.rate, spacing, seed.wrapping_add(i)))
        .collect::<Result<_, _>>()?;
    let limit = Limit {
        count_per_flow: pace.count,
        duration: duration.map(Duration::from_secs_f64),
    };
    let mut schedule = Schedule::new(gaps, limit);
    let mut transport: Box<dyn Transport> = match (via, out.tx) {
        (Via::Iface(iface), Tx::Mmsg) => Box::new(AfPacket::open(&iface, out.qdisc_bypass)?),
        (Via::Iface(_), Tx::Pnet) if out.qdisc_bypass => bail!("--qdisc-bypass needs --tx mmsg"),
        (Via::Iface(iface), Tx::Pnet) => Box::new(PnetChannel::open(&iface)?),
        (Via::Switch(sw), _) => {
            let mut config = ClientConfig::new(Target {
                name: sw.name,
                addr: sw.grpc_addr,
                device_id: sw.device_id,
            });
            config.election_id = u128::from(out.election_id);
            Box::new(PacketOut::connect(config)?)
        }
    };
    let opts = sender::Options {
        batch: usize::from(pace.batch),
        ..Default::default()
    };
    let mut last = Report::default();
    let report = sender::run(
        &mut schedule,
        source,
        transport.as_mut(),
        stop,
        &opts,
        &mut |r: &Report| {
            let dt = (r.elapsed - last.elapsed).as_secs_f64();
            eprintln!(
                "probe-gen: {:.1} s: sent {}, errors {} ({:.0} pps)",
                r.elapsed.as_secs_f64(),
                r.sent,
                r.errors,
                (r.sent - last.sent) as f64 / dt.max(1e-9)
            );
            last.clone_from(r);
        },
    );
    let l = &report.lateness;
    eprintln!(
        "probe-gen: {} after {:.3} s: sent {}, errors {} ({:.1} pps); lateness p50 {} µs, p99 {} µs, max {} µs",
        if report.interrupted { "interrupted" } else { "done" },
        report.elapsed.as_secs_f64(),
        report.sent,
        report.errors,
        report.pps(),
        l.quantile_ns(0.5) / 1000,
        l.quantile_ns(0.99) / 1000,
        l.max_ns() / 1000
    );
    Ok(report)
}

/// Ctrl-C (SIGINT) and SIGTERM end the run gracefully: final counts are
/// still reported.
fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot install the Ctrl-C handler")?;
    Ok(stop)
}

/// The final counts on stdout, for programs that drive probe-gen
/// (`intpath demo`).
fn print_counts(report: &Report) {
    println!(
        "{}",
        serde_json::json!({
            "sent": report.sent,
            "errors": report.errors,
            "elapsed_s": report.elapsed.as_secs_f64(),
            "interrupted": report.interrupted,
        })
    );
}

//! `probe-gen`: sends SR-INT probes along planned paths, or background
//! traffic, at a controlled rate. This file holds the flags and turns them
//! into the library's typed requests (`probe_gen::config`).

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use intpath_core::topo::Topology;
use intpath_core::wire::{max_hops, max_path_links, MacAddr, DEFAULT_MTU, MAX_HOPS};
use probe_gen::config;
use probe_gen::frames::TrafficSource;
use probe_gen::inject;
use probe_gen::selection::PathSelection;
use probe_gen::send::SendConfig;
use probe_gen::sender::MAX_BATCH;
use probe_gen::stats::Report;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    run: Run,
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
    run: Run,
}

/// Where frames go and how fast: the same flags for probes and traffic.
#[derive(Args)]
struct Run {
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
    /// primary. The default ranks below intpath's deploy and watch (see
    /// `intpath_core::sessions`): their short syncs win, the sender is
    /// primary again as soon as they are done.
    #[arg(long, default_value_t = intpath_core::sessions::PACKET_OUT)]
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

impl From<&Out> for config::Out {
    fn from(o: &Out) -> Self {
        config::Out {
            iface: o.iface.clone(),
            switch: o.switch.clone(),
            switch_map: o.switch_map.clone(),
            election_id: o.election_id,
            src_ip: o.src_ip,
            src_mac: o.src_mac,
            dst_mac: o.dst_mac,
            tx: match o.tx {
                Tx::Mmsg => config::Tx::Mmsg,
                Tx::Pnet => config::Tx::Pnet,
            },
            qdisc_bypass: o.qdisc_bypass,
        }
    }
}

impl From<&Pace> for config::Pace {
    fn from(p: &Pace) -> Self {
        config::Pace {
            rate: p.rate,
            poisson: p.poisson,
            count: p.count,
            duration: p.duration,
            seed: p.seed,
            batch: usize::from(p.batch),
        }
    }
}

fn send(a: SendArgs) -> Result<()> {
    let hops = record_limit(&a)?;
    if a.which.hostless && a.run.out.iface.is_some() {
        bail!("--hostless sends P4Runtime packet-outs at each path's first switch; drop --iface");
    }
    let config = SendConfig {
        topo: a.topo.as_deref().map(Topology::load).transpose()?,
        selection: a.which.selection(),
        hostless: a.which.hostless,
        follow: a.follow_plan,
        collector: a.collector,
        hops,
        out: (&a.run.out).into(),
        pace: (&a.run.pace).into(),
        plan: a.plan,
    };
    let interrupted = interrupt_flag()?;
    let report = probe_gen::send::send(&config, &interrupted)?;
    print_counts(&report);
    Ok(())
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
    let (out, pace): (config::Out, config::Pace) = ((&a.run.out).into(), (&a.run.pace).into());
    let (via, ends) = inject::endpoints(&out)?;
    let dsts: Vec<(Ipv4Addr, MacAddr)> = match (&a.to.dst_file, &a.to.topo) {
        (Some(f), _) => probe_gen::destinations::load(f, out.dst_mac)?,
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
        (None, None) => a.to.dst.iter().map(|&ip| (ip, out.dst_mac)).collect(),
    };
    let mut source =
        TrafficSource::new(ends, &dsts, (a.src_port, a.dst_port), a.size, pace.seed())?;
    tracing::info!(
        "sending {}-byte frames via {via} to {} destination(s) at {} pps",
        a.size,
        dsts.len(),
        pace.rate
    );
    let interrupted = interrupt_flag()?;
    let report = inject::run(
        &out,
        via,
        &pace,
        pace.duration,
        1,
        &mut source,
        &interrupted,
    )?;
    print_counts(&report);
    Ok(())
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

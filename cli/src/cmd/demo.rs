//! `intpath demo`: the whole telemetry loop in one command
//! (`intpath_demo`).

use anyhow::Result;
use intpath_demo::workload::FaultSpec;
use intpath_demo::{DemoConfig, SwitchKind, WorkloadConfig};
use intpath_store::Db;
use intpath_web::ServeConfig;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Topology to build in Mininet: generator expression or file.
    #[arg(long, default_value = "fattree:k=4")]
    topo: String,
    #[command(flatten)]
    hosts: super::hosts::HostArgs,
    /// Seconds of probes and background traffic.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Directory for everything the run writes: topology, plan, switch map,
    /// telemetry database, heatmaps and every process's log.
    #[arg(long, default_value = "intpath-demo")]
    out: PathBuf,
    /// Background UDP traffic each host sends to the other hosts, packets/s
    /// (Poisson arrivals, uniformly chosen destinations) [default: 200;
    /// 20 with --switch bmv2].
    #[arg(long)]
    traffic_pps: Option<f64>,
    /// Probes per path per second [default: 50; 20 with --switch bmv2].
    #[arg(long)]
    probe_pps: Option<f64>,
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
    #[arg(long, value_enum, default_value_t = Switch::Soft)]
    switch: Switch,
    /// bmv2 JSON compiled from p4/sr_int.p4 (`make -C p4`), pushed with the
    /// P4Info when --switch bmv2.
    #[arg(long, value_name = "FILE")]
    device_config: Option<PathBuf>,
    /// Fail when the paths that avoid the congested link lose more than
    /// this percentage of their probes (in sequence) [default: report only].
    #[arg(long, value_name = "PCT")]
    max_loss: Option<f64>,
    /// Serve the live web view of the run (`intpath serve`) on this
    /// address while the demo runs [default address: 127.0.0.1:8088].
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = intpath_web::DEFAULT_LISTEN)]
    web: Option<SocketAddr>,
    #[command(flatten)]
    workload: WorkloadArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    Soft,
    Bmv2,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Workload {
    /// Six HotelReservation services (intpath-workload).
    Hotel,
}

#[derive(clap::Args)]
struct WorkloadArgs {
    /// Also run this microservice workload, its spans going to the
    /// collector's OTLP receiver, and end with a diagnosis of the fault.
    #[arg(long, value_enum)]
    workload: Option<Workload>,
    /// The fault switched on halfway, one per run (the diagnosis must name
    /// it first): service:NAME (a delay), link:auto|LINK (an egress-queue
    /// throttle), loss:auto|LINK (random loss: the reference switch's
    /// set_port_loss, tc netem loss with --switch bmv2), delay:auto|LINK
    /// (every frame held, no queue growing: set_port_delay, tc netem
    /// delay). auto: a switch-to-switch link of the frontend → search
    /// calls. None: diagnose only.
    #[arg(long, requires = "workload", value_name = "KIND:TARGET")]
    fault: Option<FaultSpec>,
    /// Requests per second the load generator offers (Poisson arrivals).
    #[arg(long, default_value_t = 40.0, requires = "workload")]
    request_rate: f64,
    /// Service fault: milliseconds added to a request of the service ...
    #[arg(long, default_value_t = 60)]
    fault_delay_ms: u64,
    /// ... for this percentage of its requests (a share, so that a slow
    /// request still stands out from the service's median).
    #[arg(long, default_value_t = 30.0)]
    fault_delay_pct: f64,
    /// Link fault: egress rate of the throttled port, packets/s [default:
    /// 80 % of the probes and background traffic offered to it].
    #[arg(long)]
    fault_pps: Option<u32>,
    /// Loss fault: percentage of packets lost on the link.
    #[arg(long, default_value_t = 5.0)]
    fault_loss_pct: f64,
    /// Delay fault: milliseconds the link holds every frame.
    #[arg(long, default_value_t = 20.0)]
    fault_link_delay_ms: f64,
}

pub fn run(a: Args) -> Result<()> {
    let w = a.workload;
    let workload = w.workload.map(|Workload::Hotel| WorkloadConfig {
        fault: w.fault,
        request_rate: w.request_rate,
        fault_delay_ms: w.fault_delay_ms,
        fault_delay_pct: w.fault_delay_pct,
        fault_pps: w.fault_pps,
        fault_loss_pct: w.fault_loss_pct,
        fault_link_delay_ms: w.fault_link_delay_ms,
    });
    let switch = match a.switch {
        Switch::Soft => SwitchKind::Soft,
        Switch::Bmv2 => SwitchKind::Bmv2,
    };
    let rates = switch.demo_rates();
    let config = DemoConfig {
        topo: a.topo,
        add_hosts: a.hosts.add_hosts(),
        duration: a.duration,
        out: a.out,
        traffic_pps: a.traffic_pps.unwrap_or(rates.traffic_pps),
        probe_pps: a.probe_pps.unwrap_or(rates.probe_pps),
        bottleneck_pps: a.bottleneck_pps,
        queue_depth: a.queue_depth,
        db: a.db,
        collectors: a.collectors,
        collector_hosts: a.collector_host,
        switch,
        device_config: a.device_config,
        max_loss: a.max_loss,
        workload,
    };
    let web = match a.web {
        Some(listen) => Some(super::serve::in_background(ServeConfig {
            listen,
            ..ServeConfig::new(config.db())
        })?),
        None => None,
    };
    intpath_demo::run(&config)?;
    if web.is_some() {
        println!(
            "the web view stops with the demo; to keep exploring: intpath serve --db {}",
            config.db()
        );
    }
    Ok(())
}

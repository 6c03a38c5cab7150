//! `intpath diagnose synth`: a workload with known faults.

use crate::cmd::hosts::HostArgs;
use anyhow::Result;
use intpath_core::topo::Topology;
use intpath_eval::matrix::families::{Family, FAMILIES};
use intpath_eval::synth::{self, App, FaultSpec, World};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Topology file or generator (fattree:k=4, leafspine:…).
    #[arg(long)]
    topo: String,
    #[command(flatten)]
    hosts: HostArgs,
    /// hotel, social or media [default: hotel, or with --family its apps in
    /// turn by --seed; a run of `intpath eval diagnose` is its runs.csv
    /// row's synth_seed and app, its load as --rate, --requests 1500].
    #[arg(long)]
    app: Option<App>,
    /// KIND:TARGET[:AMOUNT[:SHARE]]: service:profile:5:0.3, link:s1:1->s5:5,
    /// loss:auto:0.05, host:h3:3, decoy:auto:8, incast:h3:5 (the host's
    /// downlink, named as a link in truth.json), delay:auto:8 (a link
    /// between switches holding every packet 8 ms more, from 30-60 % into
    /// the run), silent:auto:50:0.3 (a service that answers none of 30 % of
    /// its calls from 30-60 % into the run on; its callers give up after 50
    /// ms). TARGET may be auto. A service, silent or delay fault ending in
    /// @ONSET begins that share of the run in (service:auto:10:0.3@0.1).
    #[arg(long)]
    fault: Vec<FaultSpec>,
    /// A scenario family of `intpath eval diagnose` (link, service, loss,
    /// host, decoy, double, incast, pools, jitter, loaded, media, delay,
    /// silent, early, whole): its world, app and faults (--fault, --app and
    /// the world flags override; `whole`'s healthy baseline run is another
    /// seed of --intensity none).
    #[arg(long)]
    family: Option<String>,
    /// The family's fault intensity: low, high or none (its world alone).
    #[arg(long, default_value = "high")]
    intensity: String,
    /// Workers per service instance (requests overtake each other when > 1).
    #[arg(long)]
    workers: Option<u32>,
    /// Lognormal σ of each request's work (and a random split around its
    /// calls) [default: the app's own, 0.25].
    #[arg(long)]
    work_sigma: Option<f64>,
    /// Per-host scheduling jitter: mean µs per packet per call the host
    /// makes per request (heavy-tailed).
    #[arg(long)]
    jitter_us: Option<f64>,
    /// A loaded machine: every host's jitter swells to this mean µs per
    /// packet and back, twice over the run.
    #[arg(long)]
    load_us: Option<f64>,
    /// Each service records an INTERNAL handler span between its server
    /// span and its calls, the calls' parent (as Express's and Spring's
    /// instrumentations do).
    #[arg(long)]
    handler_spans: bool,
    /// Each client span names its callee (`server.address`, `server.port`),
    /// as HTTP and gRPC client instrumentations do.
    #[arg(long)]
    peer_addresses: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 2000)]
    requests: usize,
    /// Requests per second.
    #[arg(long, default_value_t = 200.0)]
    rate: f64,
    /// INT probes per second per plan path.
    #[arg(long, default_value_t = 50.0)]
    probe_rate: f64,
    #[arg(long)]
    out: PathBuf,
}

pub fn run(s: Args) -> Result<()> {
    let topo = Topology::load_with(&s.topo, &s.hosts.load_options(false))?;
    anyhow::ensure!(
        topo.hosts().len() >= 2,
        "{}: a workload needs at least two hosts; for a file without hosts, add some with \
         --hosts-per-switch N or --hosts SW,...",
        s.topo
    );
    let family = match &s.family {
        Some(name) => Some(Family::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
            anyhow::anyhow!("--family {name:?}: no such family ({})", names.join(", "))
        })?),
        None => None,
    };
    let mut world = family.map_or_else(World::default, |f| (f.world)());
    world.workers = s.workers.unwrap_or(world.workers);
    world.work_sigma = s.work_sigma.or(world.work_sigma);
    world.jitter_us = s.jitter_us.unwrap_or(world.jitter_us);
    world.load_us = s.load_us.unwrap_or(world.load_us);
    world.handler_spans |= s.handler_spans;
    world.peer_addresses |= s.peer_addresses;
    let mut faults = s.fault;
    if let (Some(f), true) = (family, faults.is_empty()) {
        faults = f
            .faults(&s.intensity)
            .ok_or_else(|| anyhow::anyhow!("--intensity {:?}: low, high or none", s.intensity))?;
    }
    let app = s
        .app
        .or(family.map(|f| f.app(s.seed)))
        .unwrap_or(App::Hotel);
    let cfg = synth::Config {
        topo,
        app,
        world,
        faults,
        seed: s.seed,
        requests: s.requests,
        rate: s.rate,
        probe_rate: s.probe_rate,
        out: s.out,
    };
    let truth = super::super::runtime()?.block_on(synth::generate(&cfg))?;
    for f in &truth.faults {
        let from = f
            .onset_s
            .map(|s| format!(", from {s:.1} s"))
            .unwrap_or_default();
        println!(
            "fault {} {} (amount {}, share {}{from})",
            f.kind, f.name, f.amount, f.share
        );
    }
    println!(
        "wrote {} RPC edges' traces, telemetry, topology, plan and truth to {}",
        truth.edges.len(),
        cfg.out.display()
    );
    Ok(())
}

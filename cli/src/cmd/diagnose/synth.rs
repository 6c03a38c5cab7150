//! `intpath diagnose synth`: a workload with known faults.

use crate::cmd::hosts::HostArgs;
use anyhow::Result;
use intpath_core::topo::Topology;
use intpath_eval::synth::{self, App, FaultSpec};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Topology file or generator (fattree:k=4, leafspine:…).
    #[arg(long)]
    topo: String,
    #[command(flatten)]
    hosts: HostArgs,
    #[arg(long, default_value = "hotel")]
    app: App,
    /// KIND:TARGET[:AMOUNT[:SHARE]]: service:profile:5:0.3, link:s1:1->s5:5,
    /// loss:auto:0.05, host:h3:3, decoy:auto:8, incast:h3:5 (the host's
    /// downlink, named as a link in truth.json). TARGET may be auto.
    #[arg(long)]
    fault: Vec<FaultSpec>,
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
    let cfg = synth::Config {
        topo,
        app: s.app,
        faults: s.fault,
        seed: s.seed,
        requests: s.requests,
        rate: s.rate,
        probe_rate: s.probe_rate,
        out: s.out,
    };
    let truth = super::super::runtime()?.block_on(synth::generate(&cfg))?;
    for f in &truth.faults {
        println!(
            "fault {} {} (amount {}, share {})",
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

//! `intpath topo show|export`.

use super::hosts::HostArgs;
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use intpath_core::topo::{NodeId, Topology};
use intpath_planner::{lower_bound, PlanOptions};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Counts: switches, hosts, links, odd-degree switches, minimum path count.
    Show {
        /// Generator expression (fattree:k=4, leafspine:spines=2,leaves=4,hosts=2,
        /// random:n=50,m=80,odd=10,seed=1, paper-fig4) or topology file
        /// (intpath JSON, p4lang topology.json, p4-utils p4app.json, .graphml, .gml).
        #[arg(long)]
        topo: String,
        /// Refuse self-loops instead of skipping them with a warning.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        hosts: HostArgs,
    },
    /// Write the topology as intpath JSON (what the Mininet launcher reads) or DOT.
    Export {
        /// Generator expression or topology file, as for `show`.
        #[arg(long)]
        topo: String,
        /// Refuse self-loops instead of skipping them with a warning.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        hosts: HostArgs,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// Output file (default: stdout).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Dot,
}

pub fn run(a: Args) -> Result<()> {
    match a.action {
        Action::Show {
            topo,
            strict,
            hosts,
        } => {
            let t = Topology::load_with(&topo, &hosts.load_options(strict))?;
            super::emit(None, &show(&t)?)
        }
        Action::Export {
            topo,
            strict,
            hosts,
            format,
            output,
        } => {
            let t = Topology::load_with(&topo, &hosts.load_options(strict))?;
            let text = match format {
                Format::Json => t.to_json(),
                Format::Dot => t.to_dot(),
            };
            super::emit(output.as_deref(), &text)
        }
    }
}

fn show(t: &Topology) -> Result<String> {
    let switch_links = t.switch_links().count();
    let odd = (0..t.switches().len())
        .filter(|&i| t.switch_degree(NodeId(i as u32)) % 2 == 1)
        .count();
    let unlimited = PlanOptions {
        max_hops: Some(usize::MAX),
        ..PlanOptions::default()
    };
    let limited = PlanOptions::default();
    let with_hosts = PlanOptions {
        include_hosts: true,
        ..PlanOptions::default()
    };
    Ok(format!(
        "topology         {}\n\
         switches         {}\n\
         hosts            {}\n\
         links            {} ({} switch-to-switch, {} to hosts)\n\
         odd-degree       {} switches\n\
         minimum paths    {} (switch links, no hop limit)\n\
         \x20                {} (switch links, {}-link hop limit at MTU {})\n\
         \x20                {} (with host links)\n",
        t.origin(),
        t.switches().len(),
        t.hosts().len(),
        t.links().len(),
        switch_links,
        t.links().len() - switch_links,
        odd,
        lower_bound(t, &unlimited)?,
        lower_bound(t, &limited)?,
        limited.hop_limit()?,
        limited.mtu,
        lower_bound(t, &with_hosts)?,
    ))
}

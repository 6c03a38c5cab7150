//! `intpath watch`: keep a deployed plan covering the network while
//! switches and links fail (`intpath_controller::watch`).

use super::deploy::ConnectionArgs;
use anyhow::Result;
use intpath_controller::watch::{Watch, WatchConfig};
use intpath_core::topo::Topology;
use intpath_planner::{Algo, PlanOptions};
use intpath_store::Db;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Generator expression or topology file.
    #[arg(long)]
    topo: String,
    #[command(flatten)]
    conn: ConnectionArgs,
    /// Planner used for (re)plans: dfs, euler, balanced, paper.
    #[arg(long, default_value = "balanced")]
    algo: String,
    /// The plan in force: deployed as it is if the file exists (else
    /// planned afresh), and rewritten after every replan so that `probe-gen
    /// send --follow-plan` and `intpath-collector collect --follow-plan`
    /// move to the new paths.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// The collector's telemetry database (a SQLite file or a `postgres://`
    /// URL): a path with no new probe there for --silence seconds sends
    /// watch looking for the broken link.
    #[arg(long, value_name = "DB")]
    db: Option<Db>,
    /// Seconds without a new probe after which a path counts as silent
    /// (give the probes of a few rounds: at 50 pps, 1 s is plenty).
    #[arg(long, default_value_t = 3.0)]
    silence: f64,
    /// Seconds between rounds.
    #[arg(long, default_value_t = 2.0)]
    interval: f64,
    /// Stop after this many rounds (default: run until interrupted).
    #[arg(long)]
    rounds: Option<u64>,
}

pub fn run(a: Args) -> Result<()> {
    let topo = Topology::load(&a.topo)?;
    let algo: Algo = a.algo.parse().map_err(anyhow::Error::msg)?;
    let config = WatchConfig {
        topo,
        connection: a.conn.connection()?,
        plan_options: PlanOptions {
            algo,
            ..PlanOptions::default()
        },
        plan_file: a.plan,
        db: a.db,
        silence: Duration::from_secs_f64(a.silence.max(0.0)),
    };
    let mut watch = Watch::new(config)?;
    let interval = Duration::from_secs_f64(a.interval.max(0.05));
    super::runtime()?.block_on(watch.run(a.rounds, interval))?;
    Ok(())
}

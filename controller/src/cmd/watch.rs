//! `intpath watch`: keep a deployed plan covering the network while
//! switches fail and come back.
//!
//! Every round asks every switch; when the set of unreachable switches
//! changes it replans on the surviving topology, and every round it syncs
//! the reachable switches (a no-op when nothing changed, a full re-sync for
//! a switch that restarted between two rounds).

use super::deploy::{check_map, runtime, Connection};
use anyhow::Result;
use intpath::failover;
use intpath::{plan, Algo, PlanOptions};
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use intpath_p4rt::deploy::{self, SinkMode};
use intpath_p4rt::routes::host_routes;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Generator expression or topology file.
    #[arg(long)]
    topo: String,
    #[command(flatten)]
    conn: Connection,
    /// Planner used for (re)plans: dfs, euler, balanced, paper.
    #[arg(long, default_value = "balanced")]
    algo: String,
    /// Seconds between rounds.
    #[arg(long, default_value_t = 2.0)]
    interval: f64,
    /// Stop after this many rounds (default: run until interrupted).
    #[arg(long)]
    rounds: Option<u64>,
    /// Write the plan in force to this file after every replan (for
    /// probe-gen and the collector).
    #[arg(long, value_name = "FILE")]
    plan_out: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let topo = Topology::load(&a.topo)?;
    let (map, ix) = a.conn.load()?;
    check_map(&topo, &map, &a.conn.switches)?;
    let algo: Algo = a.algo.parse().map_err(anyhow::Error::msg)?;
    let popts = PlanOptions {
        algo,
        ..PlanOptions::default()
    };
    let options = a.conn.options();
    let rt = runtime()?;
    let mut down: Option<BTreeSet<String>> = None;
    let mut current = None;
    let mut round = 0u64;
    loop {
        let status = rt.block_on(deploy::status(ix.clone(), &map, &options));
        let now_down: BTreeSet<String> = status
            .iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.name.clone())
            .collect();
        if down.as_ref() != Some(&now_down) {
            let before = down.clone().unwrap_or_default();
            for s in now_down.difference(&before) {
                let why = status
                    .iter()
                    .find(|x| &x.name == s)
                    .and_then(|x| x.error.clone());
                tracing::warn!(
                    switch = %s,
                    suspect_links = ?failover::links_of(&topo, s),
                    "switch unreachable: {}",
                    why.unwrap_or_default()
                );
            }
            for s in before.difference(&now_down) {
                tracing::info!(switch = %s, "switch reachable again");
            }
            let alive = failover::surviving(&topo, &now_down)?;
            let p = plan(&alive, &popts)?;
            tracing::info!(
                paths = p.paths.len(),
                switches = alive.switches().len(),
                links = alive.switch_links().count(),
                "replanned on the surviving topology"
            );
            if let Some(out) = &a.plan_out {
                std::fs::write(out, serde_json::to_string_pretty(&p)?)?;
            }
            current = Some((alive, p));
            down = Some(now_down.clone());
        }
        if let Some((alive, p)) = &current {
            let live = SwitchMap {
                switches: map
                    .switches
                    .iter()
                    .filter(|s| !now_down.contains(&s.name))
                    .cloned()
                    .collect(),
            };
            let intents = deploy::intents(p, &live, host_routes(alive), SinkMode::Collector)?;
            match rt.block_on(deploy::deploy(ix.clone(), &live, &intents, &options)) {
                Ok(reports) => {
                    for r in reports
                        .iter()
                        .filter(|r| r.inserts + r.modifies + r.deletes > 0)
                    {
                        tracing::info!(
                            switch = %r.name,
                            inserts = r.inserts,
                            modifies = r.modifies,
                            deletes = r.deletes,
                            "synced"
                        );
                    }
                }
                // Retried next round (a switch may have failed meanwhile).
                Err(e) => tracing::warn!("deploy incomplete: {e}"),
            }
        }
        round += 1;
        if a.rounds.is_some_and(|n| round >= n) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs_f64(a.interval.max(0.05)));
    }
}

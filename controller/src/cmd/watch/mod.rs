//! `intpath watch`: keep a deployed plan covering the network while
//! switches and links fail.
//!
//! Every round asks every switch for its state and port counters, and (with
//! `--db`) the collector's database for the newest probe of every path. A
//! switch that stops answering, or a path whose probes stop arriving while
//! the counters show one of its links swallowing frames, makes watch plan
//! again on what is left, write the new plan for the probe senders and the
//! collector, and deploy it. Every round also syncs the reachable switches:
//! a no-op when nothing changed, a full re-sync for a switch that restarted.

mod collector_db;
mod report;

use super::deploy::{check_map, runtime, Connection};
use anyhow::{Context, Result};
use collector_db::CollectorDb;
use intpath::deploy::{self, host_routes, SinkMode, SwitchStatus};
use intpath::failover::{self, LinkEnd, PortCounters, SilenceTracker};
use intpath_core::plan::Plan;
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use intpath_planner::{plan, Algo, PlanOptions};
use intpath_store::Db;
use report::{report_switch_changes, report_unsent, suspects};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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

/// What the network looks like to watch, and the plan deployed on it.
struct InForce {
    down: BTreeSet<String>,
    dead: BTreeSet<LinkEnd>,
    alive: Topology,
    plan: Plan,
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
    let options = a.conn.options(intpath_core::sessions::WATCH);
    let rt = runtime()?;
    let mut collector = a.db.clone().map(CollectorDb::new);
    let mut silence = SilenceTracker::new(Duration::from_secs_f64(a.silence.max(0.0)));
    let mut counters: Option<BTreeMap<String, PortCounters>> = None;
    let mut in_force: Option<InForce> = None;
    let mut round = 0u64;
    let mut refused: Option<(BTreeSet<String>, BTreeSet<LinkEnd>)> = None;
    loop {
        let was_down = in_force
            .as_ref()
            .map(|f| f.down.clone())
            .unwrap_or_default();
        let status = look(&rt, &ix, &map, &options, &was_down);
        let down: BTreeSet<String> = status
            .iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.name.clone())
            .collect();
        let now_counters = port_counters(&status);
        let lossy = counters
            .replace(now_counters.clone())
            .map(|before| failover::lossy_links(&topo, &before, &now_counters))
            .unwrap_or_default();

        let mut dead = in_force
            .as_ref()
            .map(|f| f.dead.clone())
            .unwrap_or_default();
        if let (Some(db), Some(f)) = (collector.as_mut(), in_force.as_ref()) {
            let mut silent = match rt.block_on(db.progress(&f.plan)) {
                Some((run, progress)) => {
                    let silent = silence.observe(
                        run,
                        progress.iter().map(|p| (p.path, p.received)),
                        Instant::now(),
                    );
                    let unsent = failover::unsent(&f.plan, &silent, &progress);
                    report_unsent(f, &unsent, &mut db.unsent);
                    silent
                }
                None => BTreeSet::new(),
            };
            silent.retain(|p| !db.unsent.contains(p));
            dead.extend(suspects(&f.plan, &silent, &lossy, &mut db.unexplained));
        }

        report_switch_changes(&status, &was_down, &down, &topo);
        let changed = in_force
            .as_ref()
            .is_none_or(|f| f.down != down || f.dead != dead);
        let key = (down.clone(), dead.clone());
        if changed && refused.as_ref() != Some(&key) {
            match replan(
                &topo,
                &popts,
                down,
                dead,
                in_force.as_ref(),
                a.plan.as_deref(),
            ) {
                Ok(f) => {
                    silence.restart();
                    in_force = Some(f);
                    refused = None;
                }
                Err(e) if e.is::<Shrink>() => {
                    tracing::error!("{e}");
                    refused = Some(key);
                }
                // The network may still be served by the plan in force;
                // the next round tries again.
                Err(e) if in_force.is_some() => {
                    tracing::error!("cannot replan, keeping the plan in force: {e:#}");
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(f) = &in_force {
            sync(&rt, &ix, &map, f, &options);
        }
        round += 1;
        if a.rounds.is_some_and(|n| round >= n) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs_f64(a.interval.max(0.05)));
    }
}

/// How long a switch that just stopped answering gets before it counts as
/// down: one slow answer (a busy switch, a brief connection hiccup) must not
/// cost a replan.
const CONFIRM_AFTER: Duration = Duration::from_millis(500);

/// Every switch's state, by reads alone (no arbitration, so no other
/// client's session can make a switch look down). A switch that was up and
/// fails is asked again after [`CONFIRM_AFTER`]; only a second failure
/// counts.
fn look(
    rt: &tokio::runtime::Runtime,
    ix: &std::sync::Arc<intpath_p4rt::p4info::P4InfoIndex>,
    map: &SwitchMap,
    options: &deploy::DeployOptions,
    was_down: &BTreeSet<String>,
) -> Vec<SwitchStatus> {
    let query = deploy::StatusQuery::default();
    let mut status = rt.block_on(deploy::status(ix.clone(), map, options, &query));
    let doubtful = SwitchMap {
        switches: map
            .switches
            .iter()
            .filter(|s| !was_down.contains(&s.name))
            .filter(|s| {
                status
                    .iter()
                    .any(|st| st.name == s.name && st.error.is_some())
            })
            .cloned()
            .collect(),
    };
    if doubtful.switches.is_empty() {
        return status;
    }
    std::thread::sleep(CONFIRM_AFTER);
    for again in rt.block_on(deploy::status(ix.clone(), &doubtful, options, &query)) {
        if again.error.is_none() {
            tracing::info!(switch = %again.name, "answered when asked again: not down");
        }
        if let Some(st) = status.iter_mut().find(|st| st.name == again.name) {
            *st = again;
        }
    }
    status
}

/// `(port, rx, tx)` rows of every switch that answered, by switch.
fn port_counters(status: &[SwitchStatus]) -> BTreeMap<String, PortCounters> {
    status
        .iter()
        .filter(|s| s.error.is_none())
        .map(|s| {
            let ports = s
                .ports
                .iter()
                .filter_map(|&(port, rx, tx)| Some((u16::try_from(port).ok()?, (rx, tx))))
                .collect();
            (s.name.clone(), ports)
        })
        .collect()
}

/// The plan for the network as it is now. At the first round that is the
/// plan file as given, if every switch answers; otherwise a fresh plan,
/// written back to the plan file for the programs that follow it.
fn replan(
    topo: &Topology,
    popts: &PlanOptions,
    down: BTreeSet<String>,
    dead: BTreeSet<LinkEnd>,
    before: Option<&InForce>,
    file: Option<&std::path::Path>,
) -> Result<InForce> {
    if let Some(f) = before {
        check_shrink(topo, f, &down, &dead, None)?;
    }
    let alive = failover::surviving(topo, &down, &dead)?;
    let given = match (before, file) {
        (None, Some(f)) if down.is_empty() && f.exists() => Some(Plan::load(f)?),
        _ => None,
    };
    let plan = match given {
        Some(p) => {
            tracing::info!(paths = p.paths.len(), "deploying the plan in force");
            p
        }
        None => {
            let p = plan(&alive, popts)?;
            if let Some(f) = before {
                check_shrink(topo, f, &down, &dead, Some(&p))?;
            }
            tracing::info!(
                paths = p.paths.len(),
                paths_before = before.map(|f| f.plan.paths.len()),
                switches = alive.switches().len(),
                links = alive.switch_links().count(),
                "replanned on the surviving topology"
            );
            let hostless = intpath_planner::hostless_ends(&alive, &p).generators;
            if !hostless.is_empty() {
                tracing::warn!(
                    paths = ?hostless,
                    "these paths start at switches without a host: only a packet-out sender \
                     (`probe-gen send --follow-plan --hostless`) probes them"
                );
            }
            if let Some(f) = file {
                p.save(f)
                    .with_context(|| "cannot publish the new plan".to_string())?;
            }
            p
        }
    };
    Ok(InForce {
        down,
        dead,
        alive,
        plan,
    })
}

/// A replan refused because it would give up most of the network: far more
/// likely a fault of watch's view (or of whoever made the switches look
/// down) than a real failure, and acting on it deletes the entries of
/// every switch still serving probes.
#[derive(Debug, thiserror::Error)]
#[error("refusing to replan, keeping the plan in force ({paths} paths): {what}")]
struct Shrink {
    paths: usize,
    what: String,
}

/// Refuses a new network view that loses more than half of the switches,
/// or (with the new plan) a plan with no path where the one in force had
/// some.
fn check_shrink(
    topo: &Topology,
    before: &InForce,
    down: &BTreeSet<String>,
    dead: &BTreeSet<LinkEnd>,
    new: Option<&Plan>,
) -> Result<(), Shrink> {
    let total = topo.switches().len();
    let paths = before.plan.paths.len();
    if down.len() * 2 > total {
        let names: Vec<&str> = down.iter().map(String::as_str).collect();
        return Err(Shrink {
            paths,
            what: format!(
                "it would drop {} of {total} switches ({}) as down",
                down.len(),
                names.join(", ")
            ),
        });
    }
    if new.is_some_and(|p| p.paths.is_empty()) && paths > 0 {
        return Err(Shrink {
            paths,
            what: format!(
                "it would plan 0 paths ({} switches down, {} links dead)",
                down.len(),
                dead.len()
            ),
        });
    }
    Ok(())
}

/// Brings every reachable switch to the plan in force; what could not be
/// written is retried next round (a switch may have failed meanwhile).
fn sync(
    rt: &tokio::runtime::Runtime,
    ix: &std::sync::Arc<intpath_p4rt::p4info::P4InfoIndex>,
    map: &SwitchMap,
    f: &InForce,
    options: &deploy::DeployOptions,
) {
    let live = SwitchMap {
        switches: map
            .switches
            .iter()
            .filter(|s| !f.down.contains(&s.name))
            .cloned()
            .collect(),
    };
    let intents = match deploy::intents(&f.plan, &live, host_routes(&f.alive), SinkMode::Collector)
    {
        Ok(i) => i,
        Err(e) => {
            tracing::warn!("cannot deploy the plan in force: {e}");
            return;
        }
    };
    match rt.block_on(deploy::deploy(ix.clone(), &live, &intents, options)) {
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
        Err(e) => tracing::warn!("deploy incomplete: {e}"),
    }
}

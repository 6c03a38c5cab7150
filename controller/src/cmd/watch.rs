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

use super::deploy::{check_map, runtime, Connection};
use anyhow::{Context, Result};
use intpath::deploy::{self, host_routes, SinkMode, SwitchStatus};
use intpath::failover::{self, LinkEnd, LossyLink, PortCounters, SilenceTracker};
use intpath_collector::query::{path_progress, PathProgress};
use intpath_collector::store::{Db, Store};
use intpath_core::plan::{Plan, ProbePath};
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use intpath_planner::{plan, Algo, PlanOptions};
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
    let options = a.conn.options();
    let rt = runtime()?;
    let mut collector = a.db.clone().map(CollectorDb::new);
    let mut silence = SilenceTracker::new(Duration::from_secs_f64(a.silence.max(0.0)));
    let mut counters: Option<BTreeMap<String, PortCounters>> = None;
    let mut in_force: Option<InForce> = None;
    let mut round = 0u64;
    loop {
        let status = rt.block_on(deploy::status(ix.clone(), &map, &options));
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
                        progress.iter().map(|p| (p.path, p.newest_probe)),
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

        let was_down = in_force
            .as_ref()
            .map(|f| f.down.clone())
            .unwrap_or_default();
        report_switch_changes(&status, &was_down, &down, &topo);
        let changed = in_force
            .as_ref()
            .is_none_or(|f| f.down != down || f.dead != dead);
        if changed {
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

/// The link ends to plan around, logged with their evidence. Silent paths
/// that no counter explains are logged once per change (`unexplained`
/// remembers them).
fn suspects(
    plan: &Plan,
    silent: &BTreeSet<u16>,
    lossy: &[LossyLink],
    unexplained: &mut BTreeSet<u16>,
) -> Vec<LinkEnd> {
    let b = failover::blame(plan, silent, lossy);
    for path in b.unexplained.difference(unexplained) {
        tracing::warn!(
            path,
            "probes stopped arriving, but no link loses frames in the port counters"
        );
    }
    *unexplained = b.unexplained;
    b.suspects
        .iter()
        .map(|s| {
            match s.path {
                Some(path) => tracing::warn!(
                    path,
                    suspect_link = %s.link,
                    "probes stopped arriving; the port counters blame a link of the path"
                ),
                None => tracing::warn!(
                    silent_paths = ?silent,
                    suspect_link = %s.link,
                    "probes stopped arriving; the port counters blame a link off the paths \
                     (on the way to the collector?)"
                ),
            }
            s.end()
        })
        .collect()
}

/// Paths that never delivered a probe in the collector's run: nobody sends
/// on them. Logged once per change (`reported` remembers them), as errors:
/// coverage is lost until a sender starts.
fn report_unsent(f: &InForce, unsent: &[&ProbePath], reported: &mut BTreeSet<u16>) {
    let hostless = intpath_planner::hostless_ends(&f.alive, &f.plan).generators;
    for p in unsent.iter().filter(|p| !reported.contains(&p.id)) {
        let why = if hostless.contains(&p.id) {
            "it has no host: run `probe-gen send --follow-plan --hostless --topo … \
             --switch-map …` to inject its probes as P4Runtime packet-outs"
        } else {
            "is its host's `probe-gen send --follow-plan` running?"
        };
        tracing::error!(
            path = p.id,
            first_switch = p.generator(),
            "nobody sends on this path: no probe arrived since the plan took effect; {why}"
        );
    }
    *reported = unsent.iter().map(|p| p.id).collect();
}

fn report_switch_changes(
    status: &[SwitchStatus],
    before: &BTreeSet<String>,
    now: &BTreeSet<String>,
    topo: &Topology,
) {
    for s in now.difference(before) {
        let why = status
            .iter()
            .find(|x| &x.name == s)
            .and_then(|x| x.error.clone());
        tracing::warn!(
            switch = %s,
            suspect_links = ?failover::links_of(topo, s),
            "switch unreachable: {}",
            why.unwrap_or_default()
        );
    }
    for s in before.difference(now) {
        tracing::info!(switch = %s, "switch reachable again");
    }
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

/// The collector's database, opened once it exists.
struct CollectorDb {
    db: Db,
    store: Option<Store>,
    /// The run whose plan differs from ours, already reported.
    foreign_run: Option<i64>,
    /// Silent paths already reported as unexplained.
    unexplained: BTreeSet<u16>,
    /// Paths without a single probe, already reported.
    unsent: BTreeSet<u16>,
}

impl CollectorDb {
    fn new(db: Db) -> Self {
        Self {
            db,
            store: None,
            foreign_run: None,
            unexplained: BTreeSet::new(),
            unsent: BTreeSet::new(),
        }
    }

    /// The newest run's progress, if that run measures `plan` (a collector
    /// still on the previous plan says nothing about this one).
    async fn progress(&mut self, plan: &Plan) -> Option<(i64, Vec<PathProgress>)> {
        if self.store.is_none() {
            match Store::open_existing(&self.db).await {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    tracing::debug!("collector database not readable yet: {e}");
                    return None;
                }
            }
        }
        let store = self.store.as_ref()?;
        let (run, progress) = match path_progress(store).await {
            Ok(p) => p?,
            Err(e) => {
                tracing::warn!("cannot read {}: {e}", self.db);
                return None;
            }
        };
        if !failover::follows_plan(plan, &progress) {
            if self.foreign_run != Some(run) {
                tracing::info!(
                    run,
                    "the collector's newest run follows another plan; waiting for one on the plan in force"
                );
                self.foreign_run = Some(run);
            }
            return None;
        }
        Some((run, progress))
    }
}

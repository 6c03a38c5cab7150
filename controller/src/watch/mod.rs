//! Keeping a deployed plan covering the network while switches and links
//! fail: what `intpath watch` runs, one [`Watch::round`] at a time.
//!
//! Every round asks every switch for its state and port counters, and (with
//! a collector database) the newest probe of every path. A switch that stops
//! answering, or a path whose probes stop arriving while the counters show
//! one of its links swallowing frames, makes watch plan again on what is
//! left ([`surviving`]), write the new plan for the probe senders and the
//! collector, and deploy it. Every round also syncs the reachable switches:
//! a no-op when nothing changed, a full re-sync for a switch that restarted.
//!
//! The parts: [`silence`](SilenceTracker) (which paths went silent, on
//! watch's own clock), [`lossy_links`] (which links the port counters
//! blame), [`blame`] (the lossy links on the silent paths), `progress` (the
//! collector's database), `replan` (the new plan, or the [`Shrink`]
//! refusal), `switches` (looking and syncing) and `report` (what the
//! operator is told, once per change).

mod blame;
mod counters;
mod progress;
mod replan;
mod report;
mod silence;
mod surviving;
mod switches;

pub use blame::{blame, follows_plan, unsent, Blame, Suspect};
pub use counters::{lossy_links, LossyLink, PortCounters};
pub use replan::{InForce, Shrink};
pub use silence::SilenceTracker;
pub use surviving::{links_of, surviving, LinkEnd};

use crate::deploy::{Connection, ConnectionError, DeployError, DeployOptions, SwitchReport};
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::{TopoError, Topology};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_planner::PlanOptions;
use intpath_store::Db;
use progress::CollectorDb;
use report::{report_switch_changes, report_unsent, suspects};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to watch and how.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    pub topo: Topology,
    /// The switches; watch's own election id unless one is given.
    pub connection: Connection,
    /// How (re)plans are made.
    pub plan_options: PlanOptions,
    /// The plan in force: deployed as it is if the file exists (else
    /// planned afresh), and rewritten after every replan so that programs
    /// following it move to the new paths.
    pub plan_file: Option<PathBuf>,
    /// The collector's telemetry database: a path with no new probe there
    /// for [`WatchConfig::silence`] sends watch looking for the broken link.
    pub db: Option<Db>,
    /// Time without a new probe after which a path counts as silent.
    pub silence: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    #[error(transparent)]
    Topo(#[from] TopoError),
    #[error(transparent)]
    PlanFile(#[from] intpath_core::plan::PlanError),
    #[error("cannot publish the new plan")]
    Publish(#[source] intpath_core::plan::PlanError),
    #[error(transparent)]
    Plan(#[from] intpath_planner::PlanError),
    #[error(transparent)]
    Shrink(#[from] Shrink),
}

/// What a round did about the plan.
#[derive(Debug)]
pub enum Replan {
    /// The network looks as it did (or as a view already refused).
    Unchanged,
    /// At the first round, with every switch answering: the plan file as
    /// given is in force.
    Given,
    /// A fresh plan for what is left of the network is in force (and
    /// written to the plan file).
    Planned,
    /// The new view gives up most of the network; the plan in force stays.
    /// Refused once per view, not every round.
    Refused(Shrink),
    /// Planning failed; the plan in force stays and the next round tries
    /// again.
    Failed(WatchError),
}

/// What one round saw and did.
#[derive(Debug)]
pub struct Round {
    /// Switches that did not answer (twice).
    pub down: BTreeSet<String>,
    /// Link ends planned around: blamed by the port counters for paths
    /// that went silent.
    pub dead: BTreeSet<LinkEnd>,
    pub replan: Replan,
    /// What syncing the reachable switches to the plan in force changed, by
    /// switch; `None` while no plan is in force.
    pub synced: Option<Result<Vec<SwitchReport>, DeployError>>,
}

/// A running watch: the plan in force and what earlier rounds saw.
pub struct Watch {
    topo: Topology,
    map: SwitchMap,
    ix: Arc<P4InfoIndex>,
    options: DeployOptions,
    plan_options: PlanOptions,
    plan_file: Option<PathBuf>,
    collector: Option<CollectorDb>,
    silence: SilenceTracker,
    /// The previous round's port counters.
    counters: Option<BTreeMap<String, PortCounters>>,
    in_force: Option<InForce>,
    /// The view whose replan was refused, so it is refused only once.
    refused: Option<(BTreeSet<String>, BTreeSet<LinkEnd>)>,
}

impl Watch {
    /// Loads the switch map (checked against the topology) and the P4Info;
    /// no switch is asked yet.
    pub fn new(config: WatchConfig) -> Result<Self, WatchError> {
        let (map, ix) = config.connection.load_for(&config.topo)?;
        Ok(Watch {
            options: config.connection.options(intpath_core::sessions::WATCH),
            topo: config.topo,
            map,
            ix,
            plan_options: config.plan_options,
            plan_file: config.plan_file,
            collector: config.db.map(CollectorDb::new),
            silence: SilenceTracker::new(config.silence),
            counters: None,
            in_force: None,
            refused: None,
        })
    }

    /// The plan in force and the view it was made for.
    pub fn in_force(&self) -> Option<&InForce> {
        self.in_force.as_ref()
    }

    /// Rounds `interval` apart, `rounds` of them or until an error: only the
    /// first round's failure to put any plan in force is one.
    pub async fn run(&mut self, rounds: Option<u64>, interval: Duration) -> Result<(), WatchError> {
        let mut done = 0u64;
        loop {
            self.round().await?;
            done += 1;
            if rounds.is_some_and(|n| done >= n) {
                return Ok(());
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// Looks at the switches and the collector's progress, replans if the
    /// network changed, and syncs the reachable switches to the plan in
    /// force. An error only when no plan could be put in force at all.
    pub async fn round(&mut self) -> Result<Round, WatchError> {
        let was_down = self
            .in_force
            .as_ref()
            .map(|f| f.down.clone())
            .unwrap_or_default();
        let status = switches::look(&self.ix, &self.map, &self.options, &was_down).await;
        let down: BTreeSet<String> = status
            .iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.name.clone())
            .collect();
        let now_counters = switches::port_counters(&status);
        let lossy = self
            .counters
            .replace(now_counters.clone())
            .map(|before| lossy_links(&self.topo, &before, &now_counters))
            .unwrap_or_default();

        let mut dead = self
            .in_force
            .as_ref()
            .map(|f| f.dead.clone())
            .unwrap_or_default();
        if let (Some(db), Some(f)) = (self.collector.as_mut(), self.in_force.as_ref()) {
            let mut silent = match db.progress(&f.plan).await {
                Some((run, progress)) => {
                    let silent = self.silence.observe(
                        run,
                        progress.iter().map(|p| (p.path, p.received)),
                        Instant::now(),
                    );
                    let unsent = unsent(&f.plan, &silent, &progress);
                    report_unsent(f, &unsent, &mut db.unsent);
                    silent
                }
                None => BTreeSet::new(),
            };
            silent.retain(|p| !db.unsent.contains(p));
            dead.extend(suspects(&f.plan, &silent, &lossy, &mut db.unexplained));
        }

        report_switch_changes(&status, &was_down, &down, &self.topo);
        let changed = self
            .in_force
            .as_ref()
            .is_none_or(|f| f.down != down || f.dead != dead);
        let key = (down.clone(), dead.clone());
        let replan = if changed && self.refused.as_ref() != Some(&key) {
            match replan::replan(
                &self.topo,
                &self.plan_options,
                down.clone(),
                dead.clone(),
                self.in_force.as_ref(),
                self.plan_file.as_deref(),
            ) {
                Ok((f, how)) => {
                    self.silence.restart();
                    self.in_force = Some(f);
                    self.refused = None;
                    how
                }
                Err(WatchError::Shrink(s)) => {
                    tracing::error!("{s}");
                    self.refused = Some(key);
                    Replan::Refused(s)
                }
                // The network may still be served by the plan in force;
                // the next round tries again.
                Err(e) if self.in_force.is_some() => {
                    tracing::error!(
                        "cannot replan, keeping the plan in force: {}",
                        intpath_core::logging::one_line(&e)
                    );
                    Replan::Failed(e)
                }
                Err(e) => return Err(e),
            }
        } else {
            Replan::Unchanged
        };
        let synced = match &self.in_force {
            Some(f) => Some(switches::sync(&self.ix, &self.map, f, &self.options).await),
            None => None,
        };
        Ok(Round {
            down,
            dead,
            replan,
            synced,
        })
    }
}

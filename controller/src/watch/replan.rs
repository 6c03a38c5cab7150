//! The plan for the network as watch sees it, and the refusal to act on a
//! view that gives up most of the network.

use super::{surviving, LinkEnd, Replan, WatchError};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_planner::{plan, PlanOptions};
use std::collections::BTreeSet;
use std::path::Path;

/// What the network looks like to watch, and the plan deployed on it.
#[derive(Debug, Clone)]
pub struct InForce {
    /// Switches that stopped answering.
    pub down: BTreeSet<String>,
    /// Link ends the port counters blamed for silent paths.
    pub dead: BTreeSet<LinkEnd>,
    /// The topology without them: what the plan was made for.
    pub alive: Topology,
    pub plan: Plan,
}

/// A replan refused because it would give up most of the network: far more
/// likely a fault of watch's view (or of whoever made the switches look
/// down) than a real failure, and acting on it deletes the entries of
/// every switch still serving probes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to replan, keeping the plan in force ({paths} paths): {what}")]
pub struct Shrink {
    /// Paths of the plan in force, which stays.
    pub paths: usize,
    pub what: String,
}

/// The plan for the network as it is now. At the first round that is the
/// plan file as given, if every switch answers; otherwise a fresh plan,
/// written back to the plan file for the programs that follow it.
pub(super) fn replan(
    topo: &Topology,
    popts: &PlanOptions,
    down: BTreeSet<String>,
    dead: BTreeSet<LinkEnd>,
    before: Option<&InForce>,
    file: Option<&Path>,
) -> Result<(InForce, Replan), WatchError> {
    if let Some(f) = before {
        check_shrink(topo, f, &down, &dead, None)?;
    }
    let alive = surviving(topo, &down, &dead)?;
    let given = match (before, file) {
        (None, Some(f)) if down.is_empty() && f.exists() => Some(Plan::load(f)?),
        _ => None,
    };
    let (plan, how) = match given {
        Some(p) => {
            tracing::info!(paths = p.paths.len(), "deploying the plan in force");
            (p, Replan::Given)
        }
        None => {
            let p = plan(&alive, popts)?;
            if let Some(f) = before {
                check_shrink(topo, f, &down, &dead, Some(&p))?;
            }
            // Written before it is announced: whoever reads the log line
            // (a user, a test, a script following the plan) finds the new
            // plan in the file.
            if let Some(f) = file {
                p.save(f).map_err(WatchError::Publish)?;
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
            (p, Replan::Planned)
        }
    };
    let f = InForce {
        down,
        dead,
        alive,
        plan,
    };
    Ok((f, how))
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

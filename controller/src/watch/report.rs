//! What watch tells its operator: suspect links with their evidence, paths
//! nobody sends on, switches lost and regained. Each is logged once per
//! change, not every round.

use super::{blame, links_of, InForce, LinkEnd, LossyLink};
use crate::deploy::SwitchStatus;
use intpath_core::plan::{Plan, ProbePath};
use intpath_core::topo::Topology;
use std::collections::BTreeSet;

/// The link ends to plan around, logged with their evidence. Silent paths
/// that no counter explains are logged once per change (`unexplained`
/// remembers them).
pub(super) fn suspects(
    plan: &Plan,
    silent: &BTreeSet<u16>,
    lossy: &[LossyLink],
    unexplained: &mut BTreeSet<u16>,
) -> Vec<LinkEnd> {
    let b = blame(plan, silent, lossy);
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
pub(super) fn report_unsent(f: &InForce, unsent: &[&ProbePath], reported: &mut BTreeSet<u16>) {
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

pub(super) fn report_switch_changes(
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
            suspect_links = ?links_of(topo, s),
            "switch unreachable: {}",
            why.unwrap_or_default()
        );
    }
    for s in before.difference(now) {
        tracing::info!(switch = %s, "switch reachable again");
    }
}

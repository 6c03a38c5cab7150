//! What watch does on the switches: looks at them by reads alone, and
//! brings the reachable ones to the plan in force.

use super::{InForce, PortCounters};
use crate::deploy::{self, host_routes, DeployError, DeployOptions, SinkMode, StatusQuery};
use crate::deploy::{SwitchReport, SwitchStatus};
use intpath_core::switch_map::SwitchMap;
use intpath_p4rt::p4info::P4InfoIndex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// How long a switch that just stopped answering gets before it counts as
/// down: one slow answer (a busy switch, a brief connection hiccup) must not
/// cost a replan.
const CONFIRM_AFTER: Duration = Duration::from_millis(500);

/// Every switch's state, by reads alone (no arbitration, so no other
/// client's session can make a switch look down). A switch that was up and
/// fails is asked again after [`CONFIRM_AFTER`]; only a second failure
/// counts.
pub(super) async fn look(
    ix: &Arc<P4InfoIndex>,
    map: &SwitchMap,
    options: &DeployOptions,
    was_down: &BTreeSet<String>,
) -> Vec<SwitchStatus> {
    let query = StatusQuery::default();
    let mut status = deploy::status(ix.clone(), map, options, &query).await;
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
    tokio::time::sleep(CONFIRM_AFTER).await;
    for again in deploy::status(ix.clone(), &doubtful, options, &query).await {
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
pub(super) fn port_counters(status: &[SwitchStatus]) -> BTreeMap<String, PortCounters> {
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

/// Brings every reachable switch to the plan in force; what could not be
/// written is retried next round (a switch may have failed meanwhile).
pub(super) async fn sync(
    ix: &Arc<P4InfoIndex>,
    map: &SwitchMap,
    f: &InForce,
    options: &DeployOptions,
) -> Result<Vec<SwitchReport>, DeployError> {
    let live = SwitchMap {
        switches: map
            .switches
            .iter()
            .filter(|s| !f.down.contains(&s.name))
            .cloned()
            .collect(),
    };
    let intents = deploy::intents(&f.plan, &live, host_routes(&f.alive), SinkMode::Collector)
        .inspect_err(|e| tracing::warn!("cannot deploy the plan in force: {e}"))?;
    let reports = deploy::deploy(ix.clone(), &live, &intents, options)
        .await
        .inspect_err(|e| tracing::warn!("deploy incomplete: {e}"))?;
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
    Ok(reports)
}

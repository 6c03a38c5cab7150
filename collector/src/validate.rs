//! Is a parsed probe consistent with the plan it claims to follow?
//!
//! A probe of a known path must carry one record per switch of the path, from
//! the planned switches, leaving by the planned ports. Anything else means a
//! misconfigured switch or a corrupted probe, and its numbers must not reach
//! the per-link statistics. A probe on its plan must then also carry numbers
//! our switches could have written ([`Plausibility`]).

use crate::parse::{Probe, Reject};
use crate::plausible::Plausibility;
use intpath_core::plan::Plan;
use intpath_store::LinkMap;
use std::collections::HashMap;

/// What each hop of one planned path must look like, in visiting order.
#[derive(Debug, Clone)]
struct Expected {
    switch_id: u32,
    /// `None` where the plan does not fix it (the sink's port to the collector).
    egress_port: Option<u16>,
    /// The port the previous node's link arrives on, where known.
    ingress_port: Option<u16>,
}

/// Checks probes against a plan and a topology.
#[derive(Debug, Clone)]
pub struct Validator {
    paths: HashMap<u16, Vec<Expected>>,
    plausible: Plausibility,
}

/// A plan that does not fit the topology.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanMismatch {
    #[error("path {path}: node {node} is not in the topology")]
    UnknownNode { path: u16, node: String },
    #[error("path {path}: {node} has no link on port {port} to the next node")]
    NoLink { path: u16, node: String, port: u16 },
    #[error("path {path}: visits no switch")]
    NoSwitch { path: u16 },
}

impl Validator {
    pub fn new(plan: &Plan, links: &LinkMap) -> Result<Self, PlanMismatch> {
        let mut paths = HashMap::new();
        for p in &plan.paths {
            let mut hops = Vec::with_capacity(p.nodes.len());
            let mut arriving: Option<u16> = None;
            for (i, node) in p.nodes.iter().enumerate() {
                let egress = p.egress_ports.get(i).copied();
                let next_ingress = match egress {
                    Some(port) => {
                        let link = links
                            .egress_link(node, port)
                            .and_then(|l| links.link(l))
                            .filter(|l| p.nodes.get(i + 1).is_some_and(|n| *n == l.dst))
                            .ok_or_else(|| PlanMismatch::NoLink {
                                path: p.id,
                                node: node.to_string(),
                                port,
                            })?;
                        Some(link.dst_port)
                    }
                    None => None,
                };
                match links.switch_id(node) {
                    Some(switch_id) => hops.push(Expected {
                        switch_id,
                        egress_port: egress,
                        ingress_port: arriving,
                    }),
                    // Hosts at the ends of a path push no record; the link
                    // checks above already placed them in the topology.
                    None if i == 0 || i + 1 == p.nodes.len() => {}
                    None => {
                        return Err(PlanMismatch::UnknownNode {
                            path: p.id,
                            node: node.to_string(),
                        })
                    }
                }
                arriving = next_ingress;
            }
            if hops.is_empty() {
                return Err(PlanMismatch::NoSwitch { path: p.id });
            }
            paths.insert(p.id, hops);
        }
        Ok(Self {
            paths,
            plausible: Plausibility::default(),
        })
    }

    /// Judges the probes' numbers by `p` instead of the default.
    pub fn with_plausibility(self, p: Plausibility) -> Self {
        Self {
            plausible: p,
            ..self
        }
    }

    /// Records a probe of `path_id` must carry.
    pub fn hops(&self, path_id: u16) -> Option<usize> {
        self.paths.get(&path_id).map(Vec::len)
    }

    pub fn check(&self, p: &Probe) -> Result<(), Reject> {
        let expected = self.paths.get(&p.path_id).ok_or(Reject::UnknownPath)?;
        if p.records.len() != expected.len() {
            return Err(Reject::WrongHopCount);
        }
        // Records are newest first; the plan is in visiting order.
        for (rec, exp) in p.records.iter().rev().zip(expected) {
            if rec.switch_id != exp.switch_id
                || exp.egress_port.is_some_and(|e| e != rec.egress_port)
                || exp.ingress_port.is_some_and(|i| i != rec.ingress_port)
            {
                return Err(Reject::OffPath);
            }
        }
        self.plausible.check(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::plan::{PlanStats, ProbePath};
    use intpath_store::links::Cable;

    fn plan(nodes: &[&str], ports: &[u16]) -> Plan {
        Plan {
            topology: "t".into(),
            algo: "t".into(),
            paths: vec![ProbePath {
                id: 1,
                nodes: nodes.iter().map(|&n| n.into()).collect(),
                egress_ports: ports.to_vec(),
            }],
            stats: PlanStats::default(),
        }
    }

    #[test]
    fn plans_that_do_not_fit_the_topology_are_refused() {
        let links = LinkMap::new(
            [("s1".into(), 1), ("s2".into(), 2)],
            [Cable::new("h1", 0, "s1", 1), Cable::new("s1", 2, "s2", 1)],
        )
        .unwrap();
        assert_eq!(
            Validator::new(&plan(&["h1", "s1", "s2"], &[0, 2]), &links)
                .unwrap()
                .hops(1),
            Some(2)
        );
        assert_eq!(
            Validator::new(&plan(&["s1", "s2"], &[3]), &links).unwrap_err(),
            PlanMismatch::NoLink {
                path: 1,
                node: "s1".into(),
                port: 3
            }
        );
        // Port 2 of s1 leads to s2, not back to h1.
        assert!(matches!(
            Validator::new(&plan(&["s1", "h1"], &[2]), &links),
            Err(PlanMismatch::NoLink { .. })
        ));
        assert_eq!(
            Validator::new(&plan(&["s1", "x", "s2"], &[2, 1]), &links).unwrap_err(),
            PlanMismatch::NoLink {
                path: 1,
                node: "s1".into(),
                port: 2
            }
        );
    }
}

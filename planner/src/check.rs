//! Verifying a plan against a topology (`intpath plan --check`, and before
//! `deploy` and `watch` use one): every path a real walk, within the hop
//! limit, and every link to be covered covered exactly once.

use crate::ends::{hostless_ends, HostlessEnds};
use intpath_core::plan::Plan;
use intpath_core::topo::{NodeId, Topology};
use std::collections::HashSet;
use std::fmt;

/// What the plan is expected to cover. `None` takes the answer from the
/// plan itself: directed if some link is walked both ways, hosts included
/// if some path visits a host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Most links per path; `None` checks no limit.
    pub max_links: Option<usize>,
    pub directed: Option<bool>,
    pub include_hosts: Option<bool>,
}

/// A plan that passed, and what it was held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub paths: usize,
    /// Link traversals checked (links, or link directions if directed).
    pub covered: usize,
    pub directed: bool,
    pub include_hosts: bool,
    /// Paths whose probes need the CPU port to get in or out (no host at
    /// that end): callers inject them as P4Runtime packet-outs and report
    /// them rather than wait for a host that never sends.
    pub hostless: HostlessEnds,
}

/// Everything wrong with a plan, one sentence each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CheckFailure {
    pub problems: Vec<String>,
}

/// Problems listed in the message; the rest are counted.
const SHOWN: usize = 20;

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "plan rejected, {n} problem{}:",
            if n == 1 { "" } else { "s" }
        )?;
        for p in self.problems.iter().take(SHOWN) {
            write!(f, "\n  {p}")?;
        }
        if n > SHOWN {
            write!(f, "\n  … and {} more", n - SHOWN)?;
        }
        Ok(())
    }
}

pub fn check(t: &Topology, plan: &Plan, o: &CheckOptions) -> Result<CheckReport, CheckFailure> {
    let mut problems = Vec::new();
    // Each path's link traversals: (link, walked from its b end).
    let mut walks: Vec<(u16, Vec<(u32, bool)>)> = Vec::with_capacity(plan.paths.len());
    let mut ids = HashSet::new();
    let mut visits_host = false;
    for p in &plan.paths {
        let id = p.id;
        if !ids.insert(id) {
            problems.push(format!("path {id}: id used twice"));
        }
        if p.nodes.len() < 2 || p.egress_ports.len() + 1 != p.nodes.len() {
            problems.push(format!(
                "path {id}: {} nodes and {} egress ports (a path of n nodes has n-1 ports, n >= 2)",
                p.nodes.len(),
                p.egress_ports.len()
            ));
            continue;
        }
        if let Some(n) = o.max_links.filter(|&n| p.len() > n) {
            problems.push(format!(
                "path {id}: {} links, over the hop limit of {n}",
                p.len()
            ));
        }
        let mut steps = Vec::with_capacity(p.len());
        let mut ok = true;
        let nodes: Vec<Option<NodeId>> = p.nodes.iter().map(|n| t.node(n)).collect();
        for (i, (name, n)) in p.nodes.iter().zip(&nodes).enumerate() {
            match n {
                None => {
                    problems.push(format!(
                        "path {id}: node {i} {name:?} is not in the topology"
                    ));
                    ok = false;
                }
                Some(n) if !t.is_switch(*n) => visits_host = true,
                Some(_) => {}
            }
        }
        if !ok {
            continue;
        }
        for (i, &port) in p.egress_ports.iter().enumerate() {
            let (from, to) = (nodes[i].expect("checked"), nodes[i + 1].expect("checked"));
            match t.port(from, port) {
                None => problems.push(format!(
                    "path {id}: hop {i}: {} has no port {port}",
                    p.nodes[i]
                )),
                Some(r) if r.peer != to => problems.push(format!(
                    "path {id}: hop {i}: {} port {port} leads to {}, not {}",
                    p.nodes[i],
                    t.name(r.peer),
                    p.nodes[i + 1]
                )),
                Some(r) => {
                    let from_b = t.link_ends(r.link as usize)[0] != (from, port);
                    steps.push((r.link, from_b));
                }
            }
        }
        walks.push((id, steps));
    }

    // Coverage: which link traversals the plan must hold exactly once.
    let directed = o.directed.unwrap_or_else(|| {
        let seen: HashSet<(u32, bool)> =
            walks.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        seen.iter().any(|&(l, dir)| seen.contains(&(l, !dir)))
    });
    let include_hosts = o.include_hosts.unwrap_or(visits_host);
    let dirs = if directed { 2 } else { 1 };
    let mut by: Vec<Vec<u16>> = vec![Vec::new(); t.links().len() * dirs];
    for (id, steps) in &walks {
        for &(l, from_b) in steps {
            let slot = l as usize * dirs + if directed { usize::from(from_b) } else { 0 };
            by[slot].push(*id);
        }
    }
    let mut covered = 0;
    for (l, link) in t.links().iter().enumerate() {
        let [(a, _), (b, _)] = t.link_ends(l);
        let wanted = include_hosts || (t.is_switch(a) && t.is_switch(b));
        for d in 0..dirs {
            let who = &by[l * dirs + d];
            let what = if directed {
                let (x, y) = if d == 0 {
                    (&link.a, &link.b)
                } else {
                    (&link.b, &link.a)
                };
                format!("link {link} direction {x}->{y}")
            } else {
                format!("link {link}")
            };
            match (wanted, who.len()) {
                (true, 1) => covered += 1,
                (true, 0) => problems.push(format!("{what} is not covered")),
                (false, 0) => {}
                (false, _) => problems.push(format!(
                    "{what} is a host link, covered by path {} though host links are not planned",
                    who[0]
                )),
                (true, _) => problems.push(format!(
                    "{what} is covered {} times (paths {})",
                    who.len(),
                    who.iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
    }
    if problems.is_empty() {
        Ok(CheckReport {
            paths: plan.paths.len(),
            covered,
            directed,
            include_hosts,
            hostless: hostless_ends(t, plan),
        })
    } else {
        Err(CheckFailure { problems })
    }
}

//! Probe path planning: edge-disjoint walks that together cover every link
//! exactly once (each direction once with `directed`), no longer than the
//! hop limit.
//!
//! Lower bound: a component with `2k` odd-degree vertices needs `k` trails
//! (at least one), since each trail has only two ends; under a hop limit
//! of `N` links it also needs `ceil(E / N)`. `euler` meets the first bound
//! exactly, and the hop limit may cost it a few more paths; `balanced`
//! reshapes the trails to meet both (`balance.rs`), its longest path
//! within 1.25 × `ceil(E / paths)` where its search finds a way. The
//! plan's stats report the bound so any gap is visible.

mod balance;
mod check;
mod dfs;
mod ends;
mod euler;
mod graph;
mod halve;
mod paper;
mod split;

pub use check::{check, CheckFailure, CheckOptions, CheckReport};
pub use ends::{hostless_ends, is_hosted, HostlessEnds};
use graph::Graph;
use intpath_core::plan::{NodeName, Plan, PlanStats, ProbePath};
use intpath_core::topo::{NodeId, Topology};
use intpath_core::wire::{max_path_links, DEFAULT_MTU};
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// Which planner to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algo {
    /// The paper's DFS planner (baseline; more paths than needed).
    Dfs,
    /// Minimum path count, linear time.
    Euler,
    /// The lower-bound path count under the hop limit, lengths balanced.
    #[default]
    Balanced,
    /// The paper's §III-E balancing heuristic (for comparison; slow).
    Paper,
}

impl Algo {
    pub const ALL: [Algo; 4] = [Algo::Dfs, Algo::Euler, Algo::Balanced, Algo::Paper];

    pub fn name(self) -> &'static str {
        match self {
            Algo::Dfs => "dfs",
            Algo::Euler => "euler",
            Algo::Balanced => "balanced",
            Algo::Paper => "paper",
        }
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Algo::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown algorithm {s:?} (dfs, euler, balanced, paper)"))
    }
}

/// What to plan and under which constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanOptions {
    pub algo: Algo,
    /// Most links per path; `None` derives it from `mtu`.
    pub max_hops: Option<usize>,
    /// IPv4 MTU the probes must fit (the default hop limit follows from it).
    pub mtu: usize,
    /// Cover every link in both directions (every egress queue measured).
    pub directed: bool,
    /// Cover host links too (paths may then start or end at a host).
    pub include_hosts: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            algo: Algo::default(),
            max_hops: None,
            mtu: DEFAULT_MTU,
            directed: false,
            include_hosts: false,
        }
    }
}

impl PlanOptions {
    /// Most links one path may have.
    pub fn hop_limit(&self) -> Result<usize, PlanError> {
        match self.max_hops {
            Some(0) => Err(PlanError::ZeroLimit),
            Some(n) => Ok(n),
            None => match max_path_links(self.mtu) {
                0 => Err(PlanError::MtuTooSmall(self.mtu)),
                n => Ok(n),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the hop limit must be at least 1 link")]
    ZeroLimit,
    #[error("an MTU of {0} bytes leaves no room for a probe crossing one link")]
    MtuTooSmall(usize),
    #[error("the plan needs {0} paths, more than the 65536 16-bit path ids")]
    TooManyPaths(usize),
}

/// A planner's result before names: walks as arcs of the planner graph.
pub(crate) struct Trail {
    pub arcs: Vec<u32>,
    /// Connected component (of the covered links) the trail lies in.
    pub comp: u32,
}

impl Trail {
    pub fn new(arcs: Vec<u32>, comp: u32) -> Trail {
        Trail { arcs, comp }
    }
}

/// Plans probe paths for `t`.
pub fn plan(t: &Topology, o: &PlanOptions) -> Result<Plan, PlanError> {
    let started = Instant::now();
    let limit = o.hop_limit()?;
    let (g, ports) = Graph::from_topology(t, o.include_hosts);
    let (comp, ncomp) = g.components();
    // Where probes get in and out without the CPU port: hosts, and
    // switches with a host.
    let mut prefer: Vec<bool> = (0..g.n).map(|v| !t.is_switch(NodeId(v as u32))).collect();
    for l in 0..t.links().len() {
        let [(a, _), (b, _)] = t.link_ends(l);
        prefer[a.index()] |= !t.is_switch(b);
        prefer[b.index()] |= !t.is_switch(a);
    }
    let bounds = bounds(&g, &comp, ncomp, o.directed, limit);
    let mut trails = match (o.algo, o.directed) {
        (Algo::Dfs, _) => dfs::decompose(&g, &comp, ncomp, o.directed),
        (Algo::Paper, false) => paper::decompose(&g, &comp, &prefer),
        (Algo::Euler | Algo::Paper, _) => euler::decompose(&g, &comp, ncomp, o.directed, &prefer),
        (Algo::Balanced, _) => {
            let mut trails = euler::decompose(&g, &comp, ncomp, o.directed, &prefer);
            // Paired before balancing too: which odd vertices share a
            // trail decides where the hosted ends go.
            ends::pair(&g, &mut trails, &prefer, limit);
            balance::balanced(&g, trails, limit, &bounds, o.directed, &prefer)
        }
    };
    ends::pair(&g, &mut trails, &prefer, limit);
    let mut pieces = split::split(&g, trails, limit, &prefer);
    if !o.directed {
        // Reversing a directed piece would walk links the wrong way.
        ends::orient(&g, &mut pieces, &prefer);
    }
    if pieces.len() > usize::from(u16::MAX) + 1 {
        return Err(PlanError::TooManyPaths(pieces.len()));
    }
    let mut stops = Vec::new();
    // Each name read from the topology once: a switch is a stop of many
    // paths, and copying a name is cheaper than finding it again.
    let mut names: Vec<Option<NodeName>> = vec![None; g.n];
    let mut name = |v: u32| {
        names[v as usize]
            .get_or_insert_with(|| t.name(NodeId(v)).into())
            .clone()
    };
    let paths: Vec<ProbePath> = pieces
        .iter()
        .enumerate()
        .map(|(id, arcs)| {
            g.stops(arcs, &mut stops);
            ProbePath {
                id: id as u16,
                nodes: stops.iter().map(|&v| name(v)).collect(),
                egress_ports: arcs
                    .iter()
                    .map(|&a| ports[(a >> 1) as usize][(a & 1) as usize])
                    .collect(),
            }
        })
        .collect();
    let mut stats = stats_of(&paths);
    stats.lower_bound = bounds.iter().sum();
    stats.plan_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(Plan {
        topology: t.origin().to_owned(),
        algo: o.algo.name().to_owned(),
        paths,
        stats,
    })
}

/// The fewest paths any plan of `t` under `o` can have.
pub fn lower_bound(t: &Topology, o: &PlanOptions) -> Result<usize, PlanError> {
    let limit = o.hop_limit()?;
    let (g, _) = Graph::from_topology(t, o.include_hosts);
    let (comp, ncomp) = g.components();
    Ok(bound(&g, &comp, ncomp, o.directed, limit))
}

fn bound(g: &Graph, comp: &[u32], ncomp: usize, directed: bool, limit: usize) -> usize {
    bounds(g, comp, ncomp, directed, limit).iter().sum()
}

/// The fewest paths of each component.
fn bounds(g: &Graph, comp: &[u32], ncomp: usize, directed: bool, limit: usize) -> Vec<usize> {
    let mut odd = vec![0usize; ncomp];
    let mut units = vec![0usize; ncomp];
    for v in 0..g.n {
        if comp[v] == graph::NONE {
            continue;
        }
        let d = g.degree(v);
        odd[comp[v] as usize] += d % 2;
        units[comp[v] as usize] += d;
    }
    // Summed degrees count each link twice: once per direction.
    odd.iter()
        .zip(&units)
        .map(|(&o, &u)| {
            let e = if directed { u } else { u / 2 };
            let trails = if directed { 1 } else { (o / 2).max(1) };
            trails.max(e.div_ceil(limit))
        })
        .collect()
}

/// Path count and length figures (not the bound or the time).
pub fn stats_of(paths: &[ProbePath]) -> PlanStats {
    let n = paths.len();
    let lens = paths.iter().map(|p| p.len() as f64);
    let mean = if n == 0 {
        0.0
    } else {
        lens.clone().sum::<f64>() / n as f64
    };
    let var = if n == 0 {
        0.0
    } else {
        lens.map(|l| (l - mean) * (l - mean)).sum::<f64>() / n as f64
    };
    PlanStats {
        paths: n,
        lower_bound: 0,
        max_len: paths.iter().map(ProbePath::len).max().unwrap_or(0),
        mean_len: mean,
        len_variance: var,
        plan_ms: 0.0,
    }
}

//! Path ends where probes can get in and out. A probe is injected by a
//! host (or through the switch's CPU port with a P4Runtime packet-out) and
//! collected by a host behind the sink; switches without hosts need the
//! slower CPU route, so ends are moved onto "hosted" vertices (a switch
//! with a host, or a host itself) wherever the minimum path count allows.
//!
//! In a minimum plan the ends are forced: every odd vertex ends exactly one
//! trail. What is free is which odd vertices share a trail and which way a
//! trail runs. So: a trail with both ends hosted and one with none that
//! meet at a vertex swap tails (each then has one hosted end), and every
//! open path is turned to start at its hosted end.

use super::graph::Graph;
use super::Trail;
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;

/// Paths of a plan whose ends cannot reach a host: their probes must be
/// injected (`generators`) or collected (`sinks`) through the switch's CPU
/// port. Ids in plan order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostlessEnds {
    pub generators: Vec<u16>,
    pub sinks: Vec<u16>,
}

/// Whether probes can enter or leave at `node` without the CPU port.
pub fn is_hosted(t: &Topology, node: &str) -> bool {
    t.node(node)
        .is_some_and(|n| !t.is_switch(n) || t.has_host(n))
}

/// Which paths of `plan` start or end away from every host.
pub fn hostless_ends(t: &Topology, plan: &Plan) -> HostlessEnds {
    let pick = |end: fn(&intpath_core::plan::ProbePath) -> &str| {
        plan.paths
            .iter()
            .filter(|p| !p.nodes.is_empty() && !is_hosted(t, end(p)))
            .map(|p| p.id)
            .collect()
    };
    HostlessEnds {
        generators: pick(|p| p.generator()),
        sinks: pick(|p| p.sink()),
    }
}

fn reversed(arcs: &[u32]) -> Vec<u32> {
    arcs.iter().rev().map(|a| a ^ 1).collect()
}

/// Pairs trails with two hosted ends with trails with none where they
/// meet, so that as many trails as possible have a hosted end. Each swap
/// is taken at the shared vertex that keeps the longer result shortest,
/// and only if neither result is longer than the longer of the two (the
/// balance is kept) nor do they split into more pieces under `limit`.
pub(crate) fn pair(g: &Graph, trails: &mut [Trail], prefer: &[bool], limit: usize) {
    let ends = |arcs: &[u32]| match (arcs.first(), arcs.last()) {
        (Some(&f), Some(&l)) if g.tail(f) != g.head(l) => {
            Some(u8::from(prefer[g.tail(f) as usize]) + u8::from(prefer[g.head(l) as usize]))
        }
        _ => None,
    };
    let rich: Vec<usize> = (0..trails.len())
        .filter(|&i| ends(&trails[i].arcs) == Some(2))
        .collect();
    if rich.is_empty() || !trails.iter().any(|t| ends(&t.arcs) == Some(0)) {
        return;
    }
    // Where each poor trail (open, no hosted end) passes: vertex -> stops,
    // in one block (`visits[first[v]..first[v + 1]]`).
    let poor: Vec<usize> = (0..trails.len())
        .filter(|&i| ends(&trails[i].arcs) == Some(0))
        .collect();
    let mut first = vec![0u32; g.n + 1];
    let mut stops = Vec::new();
    for &i in &poor {
        g.stops(&trails[i].arcs, &mut stops);
        for &v in &stops {
            first[v as usize + 1] += 1;
        }
    }
    for v in 0..g.n {
        first[v + 1] += first[v];
    }
    let mut fill = first.clone();
    let mut visits = vec![(0u32, 0u32); first[g.n] as usize];
    for &i in &poor {
        g.stops(&trails[i].arcs, &mut stops);
        for (k, &v) in stops.iter().enumerate() {
            visits[fill[v as usize] as usize] = (i as u32, k as u32);
            fill[v as usize] += 1;
        }
    }
    let at = |v: u32| &visits[first[v as usize] as usize..first[v as usize + 1] as usize];
    let mut taken = vec![false; trails.len()];
    let mut left = poor.len();
    for r in rich {
        if left == 0 {
            break;
        }
        g.stops(&trails[r].arcs, &mut stops);
        let lr = trails[r].arcs.len();
        // (longer result, rich position, poor trail, poor position)
        let mut best: Option<(usize, usize, usize, usize)> = None;
        for (p, &v) in stops.iter().enumerate() {
            for &(u, q) in at(v) {
                let (u, q) = (u as usize, q as usize);
                if taken[u] {
                    continue;
                }
                let lu = trails[u].arcs.len();
                // rich[..p] + poor[q..] and poor[..q] + rich[p..]
                let (a, b) = (p + lu - q, q + lr - p);
                let pieces = |x: usize| x.div_ceil(limit);
                if a == 0
                    || b == 0
                    || a.max(b) > lr.max(lu)
                    || pieces(a) + pieces(b) > pieces(lr) + pieces(lu)
                {
                    continue;
                }
                let longer = a.max(b);
                if best.is_none_or(|b| longer < b.0) {
                    best = Some((longer, p, u, q));
                }
            }
        }
        let Some((_, p, u, q)) = best else { continue };
        taken[u] = true;
        left -= 1;
        let (tr, tu) = (&trails[r].arcs, &trails[u].arcs);
        let (nr, nu) = ([&tr[..p], &tu[q..]].concat(), [&tu[..q], &tr[p..]].concat());
        trails[r].arcs = nr;
        trails[u].arcs = nu;
    }
}

/// Turns every open piece to start at its hosted end if only the far end
/// is hosted.
pub(crate) fn orient(g: &Graph, pieces: &mut [Vec<u32>], prefer: &[bool]) {
    for arcs in pieces {
        if let (Some(&f), Some(&l)) = (arcs.first(), arcs.last()) {
            if !prefer[g.tail(f) as usize] && prefer[g.head(l) as usize] {
                *arcs = reversed(arcs);
            }
        }
    }
}

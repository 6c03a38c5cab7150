//! The minimum trail decomposition in linear time: pair the odd vertices of
//! each component with virtual edges, walk one Euler circuit per component,
//! cut it at the virtual edges. A component with `2k > 0` odd vertices
//! gives exactly `k` trails, an even one a single closed trail.

use super::graph::{walk, Graph, NONE};
use super::Trail;

/// Per component: where its walk starts. Odd vertices must be trail ends;
/// a closed trail may start anywhere, so it starts where probes can be
/// injected (`prefer`) if the component has such a vertex.
pub(crate) fn starts(g: &Graph, comp: &[u32], ncomp: usize, prefer: &[bool]) -> Vec<u32> {
    let mut first = vec![NONE; ncomp];
    let mut best = vec![NONE; ncomp];
    for v in 0..g.n {
        let c = comp[v];
        if c == NONE {
            continue;
        }
        if first[c as usize] == NONE {
            first[c as usize] = v as u32;
        }
        if prefer[v] && best[c as usize] == NONE {
            best[c as usize] = v as u32;
        }
    }
    first
        .iter()
        .zip(best)
        .map(|(&f, b)| if b != NONE { b } else { f })
        .collect()
}

pub(crate) fn decompose(
    g: &Graph,
    comp: &[u32],
    ncomp: usize,
    directed: bool,
    prefer: &[bool],
) -> Vec<Trail> {
    let begin = starts(g, comp, ncomp, prefer);
    if directed {
        // Every link both ways: in- and out-degree agree everywhere.
        let mut used = vec![false; g.ends.len() * 2];
        let mut next = g.start[..g.n].to_vec();
        return begin
            .iter()
            .enumerate()
            .map(|(c, &s)| {
                let mut arcs = Vec::new();
                walk(g, s, true, &mut used, &mut next, &mut arcs);
                Trail::new(arcs, c as u32)
            })
            .collect();
    }

    // Pair odd vertices component by component, in vertex order.
    let mut ends = Vec::new();
    let mut pending = vec![NONE; ncomp];
    let mut odd_start = vec![NONE; ncomp];
    for (v, &c) in comp.iter().enumerate() {
        if g.degree(v) % 2 == 1 {
            let c = c as usize;
            if odd_start[c] == NONE {
                odd_start[c] = v as u32;
            }
            if pending[c] == NONE {
                pending[c] = v as u32;
            } else {
                if ends.is_empty() {
                    ends.reserve(g.ends.len() + g.n / 2);
                    ends.extend_from_slice(&g.ends);
                }
                ends.push([pending[c], v as u32]);
                pending[c] = NONE;
            }
        }
    }
    // Without odd vertices the graph itself is Eulerian: no copy to build.
    let augmented;
    let h = if ends.is_empty() {
        g
    } else {
        augmented = Graph::new(g.n, ends, g.real);
        &augmented
    };
    let mut used = vec![false; h.ends.len()];
    let mut next = h.start[..h.n].to_vec();
    let mut trails = Vec::new();
    let mut circuit = Vec::new();
    for c in 0..ncomp {
        let s = if odd_start[c] != NONE {
            odd_start[c]
        } else {
            begin[c]
        };
        circuit.clear();
        walk(h, s, false, &mut used, &mut next, &mut circuit);
        let Some(first_virtual) = circuit.iter().position(|&a| h.is_virtual(a)) else {
            trails.push(Trail::new(std::mem::take(&mut circuit), c as u32));
            continue;
        };
        // Start right after a virtual edge, cut at every virtual edge.
        let rotated = circuit[first_virtual + 1..]
            .iter()
            .chain(&circuit[..=first_virtual]);
        let mut cur = Vec::new();
        for &a in rotated {
            if h.is_virtual(a) {
                trails.push(Trail::new(std::mem::take(&mut cur), c as u32));
            } else {
                cur.push(a);
            }
        }
    }
    trails
}

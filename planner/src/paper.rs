//! The INT-path paper's balancing heuristic (§III-E), for comparison:
//! while a component has more than two odd vertices, take the two odd
//! vertices farthest apart and remove a shortest path between them as one
//! probe path; a component with two odd vertices becomes one Euler trail;
//! a left-over even component is walked as a circuit and spliced into a
//! path that touches it. Quadratic or worse: meant for evaluation sizes.

use super::graph::{walk, Graph, NONE};
use super::Trail;
use std::collections::VecDeque;

pub(crate) fn decompose(g: &Graph, comp: &[u32], prefer: &[bool]) -> Vec<Trail> {
    let mut used = vec![false; g.ends.len()];
    let mut next = g.start[..g.n].to_vec();
    let mut degree: Vec<usize> = (0..g.n).map(|v| g.degree(v)).collect();
    let mut paths: Vec<Vec<u32>> = Vec::new();
    let mut rc = vec![NONE; g.n];
    let mut dist = vec![NONE; g.n];
    let mut via = vec![NONE; g.n];
    let mut queue = VecDeque::new();
    let mut stops = Vec::new();
    loop {
        // Components of what is left.
        let members = g.components_where(|e| !used[e], &mut rc);
        if members.is_empty() {
            break;
        }
        for list in &members {
            let odd: Vec<u32> = list
                .iter()
                .copied()
                .filter(|&v| degree[v as usize] % 2 == 1)
                .collect();
            let arcs = if odd.is_empty() {
                // Splice the circuit into a path through one of its vertices.
                let r = rc[list[0] as usize];
                let host = paths.iter().enumerate().find_map(|(i, p)| {
                    g.stops(p, &mut stops);
                    stops
                        .iter()
                        .position(|&v| rc[v as usize] == r)
                        .map(|k| (i, k, stops[k]))
                });
                let start = host.map_or_else(
                    || {
                        *list
                            .iter()
                            .find(|&&v| prefer[v as usize])
                            .unwrap_or(&list[0])
                    },
                    |(_, _, v)| v,
                );
                let mut circuit = Vec::new();
                walk(g, start, false, &mut used, &mut next, &mut circuit);
                if let Some((i, k, _)) = host {
                    paths[i].splice(k..k, circuit);
                    None
                } else {
                    Some(circuit)
                }
            } else if odd.len() == 2 {
                let mut trail = Vec::new();
                walk(g, odd[0], false, &mut used, &mut next, &mut trail);
                Some(trail)
            } else {
                // The farthest pair of odd vertices, by hops.
                let mut far = (0, odd[0], odd[1]);
                for &s in &odd {
                    bfs(g, s, &used, &mut dist, &mut via, &mut queue);
                    for &t in &odd {
                        let d = dist[t as usize];
                        if d != NONE && d > far.0 {
                            far = (d, s, t);
                        }
                    }
                    for &v in list {
                        dist[v as usize] = NONE;
                    }
                }
                bfs(g, far.1, &used, &mut dist, &mut via, &mut queue);
                let mut path = Vec::new();
                let mut v = far.2;
                while v != far.1 {
                    let a = via[v as usize];
                    path.push(a);
                    v = g.tail(a);
                }
                for &v in list {
                    dist[v as usize] = NONE;
                }
                path.reverse();
                Some(path)
            };
            if let Some(arcs) = arcs {
                for &a in &arcs {
                    used[(a >> 1) as usize] = true;
                    degree[g.tail(a) as usize] -= 1;
                    degree[g.head(a) as usize] -= 1;
                }
                paths.push(arcs);
            } else {
                // Spliced: its edges are already marked; fix degrees.
                for (v, d) in degree.iter_mut().enumerate() {
                    *d = g
                        .out(v)
                        .iter()
                        .filter(|&&a| !used[(a >> 1) as usize])
                        .count();
                }
            }
        }
    }
    paths
        .into_iter()
        .map(|p| {
            let c = comp[g.tail(p[0]) as usize];
            Trail::new(p, c)
        })
        .collect()
}

/// Hop distances from `s` over unused edges; `via[v]` is the arc into `v`.
fn bfs(
    g: &Graph,
    s: u32,
    used: &[bool],
    dist: &mut [u32],
    via: &mut [u32],
    queue: &mut VecDeque<u32>,
) {
    dist[s as usize] = 0;
    queue.push_back(s);
    while let Some(v) = queue.pop_front() {
        for &a in g.out(v as usize) {
            let w = g.head(a) as usize;
            if !used[(a >> 1) as usize] && dist[w] == NONE {
                dist[w] = dist[v as usize] + 1;
                via[w] = a;
                queue.push_back(w as u32);
            }
        }
    }
}

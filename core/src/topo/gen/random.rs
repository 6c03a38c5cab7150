//! Random connected graphs with a chosen number of odd-degree switches.

use super::{add_host, add_switches, too_big, TopoError, Topology, TopologyBuilder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// A connected simple graph with `n` switches and `m` links; with `odd`,
/// exactly that many switches have odd degree (the paper's Fig. 8 varies
/// it). A random spanning tree keeps it connected; the other links are
/// random, then rewired one end at a time to reach the odd count.
pub(super) fn random(
    spec: &str,
    n: usize,
    m: usize,
    odd: Option<usize>,
    seed: usize,
    hosts: usize,
) -> Result<Topology, TopoError> {
    let bad = |why: String| Err(TopoError::invalid(spec, why));
    if n == 0 || n > 10_000_000 {
        return bad("n must be from 1 to 10000000".into());
    }
    let max_m = n * (n - 1) / 2;
    if m + 1 < n || m > max_m {
        return bad(format!(
            "m must be from n-1 (connected) to n(n-1)/2 = {max_m}, got {m}"
        ));
    }
    if let Some(o) = odd {
        if o % 2 != 0 || o > n {
            return bad(format!("odd must be even and at most n, got {o}"));
        }
    }
    if n.saturating_mul(hosts) > 1_000_000 {
        return Err(too_big(spec, "host count"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed as u64);
    let mut g = RandomGraph::new(n, m);
    for v in 1..n {
        let u = rng.random_range(0..v);
        g.add(u as u32, v as u32, true);
    }
    if m - (n - 1) > (max_m - (n - 1)) / 2 {
        // Dense: pick from the complement of the tree.
        let mut rest: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|u| (u + 1..n as u32).map(move |v| (u, v)))
            .filter(|&e| !g.has(e.0, e.1))
            .collect();
        for i in 0..m - (n - 1) {
            let j = rng.random_range(i..rest.len());
            rest.swap(i, j);
            g.add(rest[i].0, rest[i].1, false);
        }
    } else {
        while g.edges.len() < m {
            let (u, v) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
            if u != v && !g.has(u, v) {
                g.add(u, v, false);
            }
        }
    }
    if let Some(o) = odd {
        if !g.fix_parity(o, &mut rng) {
            return bad(format!(
                "could not reach {o} odd-degree switches with n={n}, m={m}; try other values"
            ));
        }
    }
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, n);
    for (u, v, _) in &g.edges {
        b.link(format!("s{}", u + 1), None, format!("s{}", v + 1), None);
    }
    for s in 1..=n {
        for _ in 0..hosts {
            add_host(&mut b, s, None);
        }
    }
    b.build()
}

/// The edge set of [`random`] while it is being shaped.
struct RandomGraph {
    /// (u, v, in the spanning tree); u < v.
    edges: Vec<(u32, u32, bool)>,
    set: HashSet<(u32, u32)>,
    /// Non-tree edges incident to each vertex (indices into `edges`).
    free: Vec<Vec<u32>>,
    degree: Vec<u32>,
}

impl RandomGraph {
    fn new(n: usize, m: usize) -> Self {
        RandomGraph {
            edges: Vec::with_capacity(m),
            set: HashSet::with_capacity(m),
            free: vec![Vec::new(); n],
            degree: vec![0; n],
        }
    }

    fn key(u: u32, v: u32) -> (u32, u32) {
        (u.min(v), u.max(v))
    }

    fn has(&self, u: u32, v: u32) -> bool {
        self.set.contains(&Self::key(u, v))
    }

    fn add(&mut self, u: u32, v: u32, tree: bool) {
        let (u, v) = Self::key(u, v);
        let i = self.edges.len() as u32;
        self.edges.push((u, v, tree));
        self.set.insert((u, v));
        self.degree[u as usize] += 1;
        self.degree[v as usize] += 1;
        if !tree {
            self.free[u as usize].push(i);
            self.free[v as usize].push(i);
        }
    }

    /// Moves the `from` end of non-tree edge `i` to `to`, flipping the
    /// parity of both; false if that would duplicate an edge.
    fn move_end(&mut self, i: u32, from: u32, to: u32) -> bool {
        let (u, v, _) = self.edges[i as usize];
        let other = if u == from { v } else { u };
        if other == to || self.has(other, to) {
            return false;
        }
        self.set.remove(&(u, v));
        let (a, b) = Self::key(other, to);
        self.edges[i as usize] = (a, b, false);
        self.set.insert((a, b));
        let list = &mut self.free[from as usize];
        let pos = list.iter().position(|&e| e == i).expect("incident edge");
        list.swap_remove(pos);
        self.free[to as usize].push(i);
        self.degree[from as usize] -= 1;
        self.degree[to as usize] += 1;
        true
    }

    /// Rewires non-tree edges until exactly `target` vertices have odd degree.
    fn fix_parity(&mut self, target: usize, rng: &mut ChaCha8Rng) -> bool {
        let n = self.degree.len() as u32;
        let mut odd: Vec<u32> = (0..n)
            .filter(|&v| self.degree[v as usize] % 2 == 1)
            .collect();
        let mut pos = vec![u32::MAX; n as usize];
        for (i, &v) in odd.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
        let toggle = |v: u32, odd: &mut Vec<u32>, pos: &mut Vec<u32>| {
            if pos[v as usize] == u32::MAX {
                pos[v as usize] = odd.len() as u32;
                odd.push(v);
            } else {
                let i = pos[v as usize] as usize;
                let last = *odd.last().expect("non-empty");
                odd.swap_remove(i);
                if last != v {
                    pos[last as usize] = i as u32;
                }
                pos[v as usize] = u32::MAX;
            }
        };
        if self.edges.iter().all(|e| e.2) {
            // A tree: its parity is fixed by its shape.
            return odd.len() == target;
        }
        let mut budget = 200 * (odd.len().abs_diff(target) + 1) + 100_000;
        while odd.len() != target {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let want_odd = odd.len() > target;
            // Two vertices of the parity to flip, the first with a free edge.
            let pick = |rng: &mut ChaCha8Rng, odd: &Vec<u32>| -> Option<u32> {
                if want_odd {
                    (odd.len() >= 2).then(|| odd[rng.random_range(0..odd.len())])
                } else {
                    let v = rng.random_range(0..n);
                    (pos[v as usize] == u32::MAX).then_some(v)
                }
            };
            let (Some(u), Some(v)) = (pick(rng, &odd), pick(rng, &odd)) else {
                continue;
            };
            if u == v {
                continue;
            }
            // Best: one edge end moves from u to v, fixing both.
            let mut moved = [u, v].into_iter().find_map(|x| {
                let y = if x == u { v } else { u };
                let free = &self.free[x as usize];
                let e = *free.get(rng.random_range(0..free.len().max(1)))?;
                self.move_end(e, x, y).then_some((x, y))
            });
            // Otherwise hand u's wrong parity to a random vertex: never
            // further from the target, and the walk soon meets a partner.
            if moved.is_none() {
                let w = rng.random_range(0..n);
                moved = if let Some(&e) = self.free[u as usize].first() {
                    self.move_end(e, u, w).then_some((u, w))
                } else {
                    let e = rng.random_range(0..self.edges.len() as u32);
                    let (a, b, tree) = self.edges[e as usize];
                    let x = if rng.random_bool(0.5) { a } else { b };
                    (!tree && x != u && self.move_end(e, x, u)).then_some((x, u))
                };
            }
            if let Some((x, y)) = moved {
                toggle(x, &mut odd, &mut pos);
                toggle(y, &mut odd, &mut pos);
            }
        }
        true
    }
}

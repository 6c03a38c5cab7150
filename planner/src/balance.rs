//! Shortening the longest trail without adding trails: after the halving
//! pass (`halve.rs`) has cut the very long trails down, a local search over
//! two moves that keep every trail a valid, edge-disjoint trail.
//!
//! * Tail exchange: trails `T = A·B` and `U = C·D` that meet at a vertex
//!   become `A·D` and `C·B`, or `A·rev(C)` and `rev(B)·D`.
//! * Cycle transfer: a closed piece of `T` (between two visits of one
//!   vertex) is cut out and spliced into `U` where `U` touches it.
//!
//! A move is taken when it makes the pair better: fewer pieces under the
//! hop limit, then a shorter longer trail, then closer lengths. Every move
//! lowers (pieces, sum of squared lengths), so the search ends.

use super::graph::{Graph, NONE};
use super::halve::halve;
use super::Trail;

/// Candidates (the shortest trails meeting `T`) tried per step.
const CANDIDATES: usize = 12;
/// Visits of one vertex considered as cycle ends.
const CYCLE_VISITS: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key(usize, usize, usize);

#[derive(Clone, Copy)]
enum Move {
    /// Exchange at `T` position `p`, `U` position `q`; `reversed` is the
    /// second pairing.
    Tails { p: usize, q: usize, reversed: bool },
    /// Move `T[a..b]` (closed) into `U`.
    Cycle { a: usize, b: usize },
}

struct Search<'g> {
    g: &'g Graph,
    limit: Option<usize>,
    trails: Vec<Vec<u32>>,
    stops: Vec<Vec<u32>>,
    /// Trails that visit each vertex (may hold stale or repeated ids).
    at: Vec<Vec<u32>>,
    // Scratch, indexed by vertex / position, reset by stamping.
    stamp: Vec<u32>,
    first: Vec<u32>,
    next: Vec<u32>,
    in_u: Vec<u32>,
    /// Per trail, for collecting candidates.
    mark: Vec<u32>,
    tick: u32,
}

fn key(limit: Option<usize>, a: usize, b: usize) -> Key {
    let pieces = limit.map_or(0, |n| a.div_ceil(n) + b.div_ceil(n));
    Key(pieces, a.max(b), a * a + b * b)
}

impl Search<'_> {
    fn bump(&mut self) -> u32 {
        self.tick = self.tick.wrapping_add(1);
        if self.tick == 0 {
            self.stamp.fill(0);
            self.in_u.fill(0);
            self.mark.fill(0);
            self.tick = 1;
        }
        self.tick
    }

    fn index(&mut self, t: usize) {
        let tick = self.bump();
        for &v in &self.stops[t] {
            if self.stamp[v as usize] != tick {
                self.stamp[v as usize] = tick;
                self.at[v as usize].push(t as u32);
            }
        }
    }

    /// The best move between `t` and `u` and the pair's key after it.
    fn best(&mut self, t: usize, u: usize) -> Option<(Key, Move)> {
        let (lt, lu) = (self.trails[t].len(), self.trails[u].len());
        let limit = self.limit;
        let tick = self.bump();
        let st = &self.stops[t];
        if self.next.len() < st.len() {
            self.next.resize(st.len(), NONE);
        }
        for (k, &v) in st.iter().enumerate().rev() {
            let v = v as usize;
            if self.stamp[v] != tick {
                self.stamp[v] = tick;
                self.first[v] = NONE;
            }
            self.next[k] = self.first[v];
            self.first[v] = k as u32;
        }
        let mut best: Option<(Key, Move)> = None;
        let mut consider = |k: Key, m: Move| {
            if best.is_none_or(|(b, _)| k < b) {
                best = Some((k, m));
            }
        };
        for (q, &v) in self.stops[u].iter().enumerate() {
            self.in_u[v as usize] = tick;
            if self.stamp[v as usize] != tick {
                continue;
            }
            let mut p = self.first[v as usize];
            while p != NONE {
                let pu = p as usize;
                // Both pairings of the exchange, with the lengths they leave.
                for (a, b, reversed) in [
                    (pu + lu - q, q + lt - pu, false),
                    (pu + q, lt - pu + lu - q, true),
                ] {
                    if a > 0 && b > 0 {
                        consider(key(limit, a, b), Move::Tails { p: pu, q, reversed });
                    }
                }
                p = self.next[pu];
            }
        }
        // Cycles of T that U touches: prefix counts of T stops on U.
        let mut touch = Vec::with_capacity(st.len() + 1);
        touch.push(0u32);
        for &v in st {
            let last = *touch.last().expect("non-empty");
            touch.push(last + u32::from(self.in_u[v as usize] == tick));
        }
        for (k, &v) in st.iter().enumerate() {
            if self.first[v as usize] != k as u32 {
                continue;
            }
            let mut visits = Vec::with_capacity(CYCLE_VISITS);
            let mut p = k as u32;
            while p != NONE && visits.len() < CYCLE_VISITS {
                visits.push(p as usize);
                p = self.next[p as usize];
            }
            for (i, &a) in visits.iter().enumerate() {
                for &b in &visits[i + 1..] {
                    let c = b - a;
                    if c < lt && touch[b + 1] > touch[a] {
                        consider(key(limit, lt - c, lu + c), Move::Cycle { a, b });
                    }
                }
            }
        }
        best
    }

    fn apply(&mut self, t: usize, u: usize, m: Move) {
        // Where a moved cycle enters U: its first stop that U visits.
        let splice = match m {
            Move::Cycle { a, b } => {
                let tick = self.bump();
                for &v in &self.stops[u] {
                    self.stamp[v as usize] = tick;
                }
                let st = &self.stops[t];
                let r = (a..b)
                    .find(|&r| self.stamp[st[r] as usize] == tick)
                    .expect("U touches the cycle");
                let q = self.stops[u]
                    .iter()
                    .position(|&x| x == st[r])
                    .expect("visited by U");
                Some((r, q))
            }
            Move::Tails { .. } => None,
        };
        let rev = |s: &[u32]| s.iter().rev().map(|a| a ^ 1).collect::<Vec<u32>>();
        let (tt, uu) = (&self.trails[t], &self.trails[u]);
        let (nt, nu): (Vec<u32>, Vec<u32>) = match (m, splice) {
            (
                Move::Tails {
                    p,
                    q,
                    reversed: false,
                },
                _,
            ) => ([&tt[..p], &uu[q..]].concat(), [&uu[..q], &tt[p..]].concat()),
            (
                Move::Tails {
                    p,
                    q,
                    reversed: true,
                },
                _,
            ) => (
                [&tt[..p], &rev(&uu[..q])[..]].concat(),
                [&rev(&tt[p..])[..], &uu[q..]].concat(),
            ),
            (Move::Cycle { a, b }, Some((r, q))) => (
                [&tt[..a], &tt[b..]].concat(),
                [&uu[..q], &tt[r..b], &tt[a..r], &uu[q..]].concat(),
            ),
            (Move::Cycle { .. }, None) => unreachable!("cycle moves have a splice point"),
        };
        self.trails[t] = nt;
        self.trails[u] = nu;
        for x in [t, u] {
            let mut s = std::mem::take(&mut self.stops[x]);
            self.g.stops(&self.trails[x], &mut s);
            self.stops[x] = s;
            self.index(x);
        }
    }

    /// Trails meeting `t`, shortest first.
    fn candidates(&mut self, t: usize) -> Vec<usize> {
        let tick = self.bump();
        let mut c = Vec::new();
        for &v in &self.stops[t] {
            for &u in &self.at[v as usize] {
                let u = u as usize;
                if u != t && self.mark[u] != tick {
                    self.mark[u] = tick;
                    c.push(u);
                }
            }
        }
        c.sort_by_key(|&u| self.trails[u].len());
        c.truncate(CANDIDATES);
        c
    }
}

/// Improves `trails` in place; trails of different components never meet,
/// so each component is balanced on its own.
pub(crate) fn improve(g: &Graph, trails: &mut [Trail], limit: Option<usize>) {
    if trails.len() < 2 {
        return;
    }
    // Per component: the length no trail can stay under.
    let ncomp = trails
        .iter()
        .map(|t| t.comp as usize + 1)
        .max()
        .unwrap_or(0);
    let mut total = vec![0usize; ncomp];
    let mut count = vec![0usize; ncomp];
    for t in trails.iter() {
        total[t.comp as usize] += t.arcs.len();
        count[t.comp as usize] += 1;
    }
    let ideal: Vec<usize> = total
        .iter()
        .zip(&count)
        .map(|(&e, &k)| e.div_ceil(k.max(1)))
        .collect();
    let comp: Vec<usize> = trails.iter().map(|t| t.comp as usize).collect();
    let mut arcs: Vec<Vec<u32>> = trails
        .iter_mut()
        .map(|t| std::mem::take(&mut t.arcs))
        .collect();
    let target: Vec<usize> = comp
        .iter()
        .map(|&c| limit.unwrap_or(2 * ideal[c]))
        .collect();
    halve(g, &mut arcs, &target);
    let mut s = Search {
        g,
        limit,
        trails: arcs,
        stops: Vec::new(),
        at: vec![Vec::new(); g.n],
        stamp: vec![0; g.n],
        first: vec![NONE; g.n],
        next: Vec::new(),
        in_u: vec![0; g.n],
        mark: vec![0; trails.len()],
        tick: 0,
    };
    s.stops = s
        .trails
        .iter()
        .map(|a| {
            let mut v = Vec::new();
            g.stops(a, &mut v);
            v
        })
        .collect();
    for t in 0..s.trails.len() {
        s.index(t);
    }

    let mut queue: std::collections::VecDeque<usize> = {
        let mut order: Vec<usize> = (0..s.trails.len()).collect();
        order.sort_by_key(|&t| std::cmp::Reverse(s.trails[t].len()));
        order.into()
    };
    let mut queued = vec![true; s.trails.len()];
    let mut budget = 20 * s.trails.len() + 1000;
    while let Some(t) = queue.pop_front() {
        queued[t] = false;
        let lt = s.trails[t].len();
        let worth = match limit {
            // A trail within the limit is one piece already: moving
            // links onto it could only lengthen the short trails that
            // the long ones need as partners.
            Some(n) => lt > n && !lt.is_multiple_of(n),
            None => lt > ideal[comp[t]],
        };
        if !worth || count[comp[t]] < 2 {
            continue;
        }
        if budget == 0 {
            break;
        }
        budget -= 1;
        let mut chosen: Option<(Key, usize, Move)> = None;
        for u in s.candidates(t) {
            let now = key(limit, lt, s.trails[u].len());
            if let Some((key, m)) = s.best(t, u) {
                if key < now && chosen.is_none_or(|(k, _, _)| key < k) {
                    chosen = Some((key, u, m));
                }
            }
        }
        if let Some((_, u, m)) = chosen {
            s.apply(t, u, m);
            for x in [t, u] {
                if !queued[x] {
                    queued[x] = true;
                    queue.push_back(x);
                }
            }
        }
    }
    for (t, a) in trails.iter_mut().zip(s.trails) {
        t.arcs = a;
    }
}

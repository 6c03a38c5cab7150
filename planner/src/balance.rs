//! Balanced plans at the lower-bound path count, within the hop limit.
//!
//! A component with `2k` odd vertices and `m` links, under a hop limit of
//! `H` links, needs `P = max(k, ceil(m / H))` paths (at least one), and no
//! plan of `P` paths has a longest path under `L = ceil(m / P)`. The
//! Euler decomposition gives `k` trails (one closed trail if `k = 0`) of
//! very uneven lengths. A trail of `s` links cut into pieces of at most
//! `T` links makes `ceil(s / T)` of them, so the plan has `P` paths, none
//! over `T`, exactly when the trails' `sum ceil(s / T) = P`. With
//! `T = min(H, max(L, floor(5 L / 4)))`:
//!
//! 1. Reshape the trails until `sum ceil(s / T) = P` (goal
//!    [`Goal::Pieces`]): halve the long trails, to `T` and then to the
//!    mean (`halve.rs`); then a local search over pairs of trails that
//!    meet. A move is taken if the pair then needs fewer pieces of `T`;
//!    or as many, with less slack (`ceil(s / T) T - s`) in one-piece
//!    trails (that slack is dead: such a trail cannot give its piece up)
//!    and then the slack of longer trails gathered into fewer of them
//!    (where another trail's overflow can go). When no move improves, a
//!    sideways move hands a trail's overflow on to a partner, so it can
//!    travel to a trail with room (a short memory keeps it from going
//!    back). A small component still over the count is kicked (random
//!    tail exchanges) and searched again, a few times. If all this fails
//!    the component takes pieces of `H` instead, from the reshaped or the
//!    Euler trails, whichever needs fewer pieces (the count is kept at
//!    the bound if that search gets there; the balance is left to 3).
//! 2. Cut every trail into its `ceil(s / T)` near-equal pieces, cuts moved
//!    onto hosted vertices where `T` leaves room (`split.rs`).
//! 3. Polish the pieces (goal [`Goal::Balance`]): the same search over
//!    pairs, a move taken if it shortens the longer piece of the pair,
//!    none over `H`; pieces longer than `L` give, pieces shorter take.
//!    Pieces of one trail meet at their cut, so moving a cut is one of its
//!    moves.
//!
//! The moves keep every trail a trail and the links covered once:
//!
//! * Tail exchange: trails `T = A·B` and `U = C·D` that meet at a vertex
//!   become `A·D` and `C·B`, or `A·rev(C)` and `rev(B)·D`.
//! * Cycle transfer: a closed piece of `T` (between two visits of one
//!   vertex) is cut out and spliced into `U` where `U` touches it.
//!
//! Every improving move lowers a potential (pieces, dead slack, minus the
//! summed squared live slack; or the summed squared lengths), and the
//! sideways moves and the search steps are budgeted, so each search ends.
//! With `directed` every component is one closed walk whose even cut is
//! already the best plan, and reversing a piece would walk links the wrong
//! way: no search runs.
//!
//! Where it falls short: the search is local. At the 44-link limit it
//! reached the bound and 1.25 × `L` on every fat tree k = 6…16, every
//! leaf-spine up to 12 × 40 and 40,000 random graphs with 10–40 odd
//! switches and average degree 4–12 (`examples/hoplimit.rs`, `sweep`).
//! Under other limits (4…44) 1 plan in 60,000 needed a path more than the
//! bound, where the limit leaves under a link of slack per path
//! (`P H - m < P`: the trails must come out at exact lengths). On sparse
//! graphs (average degree 2–3, long chains of degree-2 switches) about 1
//! plan in 40 ends over 1.25 × `L`, still at the bound.

use super::graph::{Graph, NONE};
use super::halve::halve;
use super::split::split_by;
use super::Trail;

/// Partners (trails meeting `T`) tried per step.
const CANDIDATES: usize = 12;
/// Visits of one vertex considered as cycle ends.
const CYCLE_VISITS: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key(usize, u128, u128);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Goal {
    /// Fewest pieces of at most `unit[c]` links, then the slack in fewer
    /// trails. No length limit: the trails are cut afterwards.
    Pieces,
    /// The longer of the pair shorter, neither over `cap`.
    Balance,
}

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
    goal: Goal,
    /// Per component: the piece length (`Pieces`), the length worth
    /// shortening to (`Balance`), the paths wanted.
    unit: Vec<usize>,
    target: Vec<usize>,
    want: Vec<usize>,
    /// Per component under `Pieces`: pieces now.
    pieces: Vec<usize>,
    cap: usize,
    comp: Vec<usize>,
    trails: Vec<Vec<u32>>,
    stops: Vec<Vec<u32>>,
    /// Trails that visit each vertex, with the trail's version when it
    /// was indexed: an entry whose trail has changed since is stale, and
    /// dropped when met.
    at: Vec<Vec<(u32, u32)>>,
    version: Vec<u32>,
    /// Scratch: candidates, and prefix counts for `best`.
    found: Vec<usize>,
    touch: Vec<u32>,
    // Scratch, indexed by vertex / position, reset by stamping.
    stamp: Vec<u32>,
    first: Vec<u32>,
    next: Vec<u32>,
    in_u: Vec<u32>,
    /// Per trail, for collecting candidates.
    mark: Vec<u32>,
    tick: u32,
    /// Steps taken (a clock for the sideways moves' memory).
    steps: usize,
}

fn slack(len: usize, unit: usize) -> usize {
    len.div_ceil(unit) * unit - len
}

impl<'g> Search<'g> {
    fn new(
        g: &'g Graph,
        goal: Goal,
        trails: &mut [Trail],
        unit: Vec<usize>,
        target: Vec<usize>,
        want: Vec<usize>,
        cap: usize,
    ) -> Search<'g> {
        let comp: Vec<usize> = trails.iter().map(|t| t.comp as usize).collect();
        let arcs: Vec<Vec<u32>> = trails
            .iter_mut()
            .map(|t| std::mem::take(&mut t.arcs))
            .collect();
        let mut pieces = vec![0; unit.len()];
        if goal == Goal::Pieces {
            for (a, &c) in arcs.iter().zip(&comp) {
                pieces[c] += a.len().div_ceil(unit[c]);
            }
        }
        let n = arcs.len();
        let mut s = Search {
            g,
            goal,
            unit,
            target,
            want,
            pieces,
            cap,
            comp,
            stops: Vec::with_capacity(arcs.len()),
            mark: vec![0; arcs.len()],
            trails: arcs,
            at: vec![Vec::new(); g.n],
            version: vec![0; n],
            found: Vec::new(),
            touch: Vec::new(),
            stamp: vec![0; g.n],
            first: vec![NONE; g.n],
            next: Vec::new(),
            in_u: vec![0; g.n],
            tick: 0,
            steps: 0,
        };
        for a in &s.trails {
            let mut v = Vec::new();
            g.stops(a, &mut v);
            s.stops.push(v);
        }
        for t in 0..s.trails.len() {
            s.index(t);
        }
        s
    }

    /// Gives the trails back to `out` (same order as taken).
    fn finish(self, out: &mut [Trail]) {
        for (t, a) in out.iter_mut().zip(self.trails) {
            t.arcs = a;
        }
    }

    /// How good a pair of lengths `a`, `b` in component `c` is (lower is
    /// better); `None` if `check` and a length is over the cap.
    fn key(&self, c: usize, a: usize, b: usize, check: bool) -> Option<Key> {
        match self.goal {
            Goal::Pieces => {
                // Slack in a one-piece trail is dead (that trail cannot
                // give its piece up); in a longer one it is where another
                // trail's overflow can go, the more in one trail the better.
                let u = self.unit[c];
                let (mut dead, mut live) = (0u128, 0u128);
                for x in [a, b] {
                    let w = slack(x, u) as u128;
                    if x <= u {
                        dead += w;
                    } else {
                        live += w * w;
                    }
                }
                Some(Key(a.div_ceil(u) + b.div_ceil(u), dead, u128::MAX - live))
            }
            Goal::Balance => {
                if check && a.max(b) > self.cap {
                    return None;
                }
                let (a2, b2) = (a as u128, b as u128);
                Some(Key(a.max(b), a2 * a2 + b2 * b2, 0))
            }
        }
    }

    /// Whether moving links off trail `t` can help.
    fn worth(&self, t: usize) -> bool {
        let c = self.comp[t];
        let lt = self.trails[t].len();
        match self.goal {
            Goal::Pieces => {
                let u = self.unit[c];
                self.pieces[c] > self.want[c] && lt > u
            }
            // Long pieces give, short ones take.
            Goal::Balance => lt > self.target[c] || lt + 1 < self.target[c],
        }
    }

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
        let entry = (t as u32, self.version[t]);
        for &v in &self.stops[t] {
            if self.stamp[v as usize] != tick {
                self.stamp[v as usize] = tick;
                self.at[v as usize].push(entry);
            }
        }
    }

    /// The best move between `t` and `u` and the pair's key after it;
    /// and a move that leaves the key at `now` but shortens `t` (a
    /// sideways move: it hands `t`'s overflow on to `u`).
    fn best(&mut self, t: usize, u: usize, now: Key) -> (Option<(Key, Move)>, Option<Move>) {
        let (lt, lu) = (self.trails[t].len(), self.trails[u].len());
        let c = self.comp[t];
        let tick = self.bump();
        let st = std::mem::take(&mut self.stops[t]);
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
        let mut aside: Option<Move> = None;
        let mut consider = |k: Option<Key>, m: Move, a: usize| {
            if let Some(k) = k {
                if best.is_none_or(|(b, _)| k < b) {
                    best = Some((k, m));
                }
                if k == now && a < lt && aside.is_none() {
                    aside = Some(m);
                }
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
                        consider(
                            self.key(c, a, b, true),
                            Move::Tails { p: pu, q, reversed },
                            a,
                        );
                    }
                }
                p = self.next[pu];
            }
        }
        // Cycles of T that U touches: prefix counts of T stops on U.
        let mut touch = std::mem::take(&mut self.touch);
        touch.clear();
        touch.push(0u32);
        for &v in &st {
            let last = *touch.last().expect("non-empty");
            touch.push(last + u32::from(self.in_u[v as usize] == tick));
        }
        let mut visits = Vec::with_capacity(CYCLE_VISITS);
        for (k, &v) in st.iter().enumerate() {
            if self.first[v as usize] != k as u32 {
                continue;
            }
            visits.clear();
            let mut p = k as u32;
            while p != NONE && visits.len() < CYCLE_VISITS {
                visits.push(p as usize);
                p = self.next[p as usize];
            }
            for (i, &a) in visits.iter().enumerate() {
                for &b in &visits[i + 1..] {
                    let n = b - a;
                    if n < lt && touch[b + 1] > touch[a] {
                        consider(
                            self.key(c, lt - n, lu + n, true),
                            Move::Cycle { a, b },
                            lt - n,
                        );
                    }
                }
            }
        }
        self.stops[t] = st;
        self.touch = touch;
        (best, aside)
    }

    fn apply(&mut self, t: usize, u: usize, m: Move) {
        let before = self.trails[t].len().div_ceil(self.unit[self.comp[t]])
            + self.trails[u].len().div_ceil(self.unit[self.comp[t]]);
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
        if self.goal == Goal::Pieces {
            let c = self.comp[t];
            let after = self.trails[t].len().div_ceil(self.unit[c])
                + self.trails[u].len().div_ceil(self.unit[c]);
            self.pieces[c] = self.pieces[c] + after - before;
        }
        for x in [t, u] {
            let mut s = std::mem::take(&mut self.stops[x]);
            self.g.stops(&self.trails[x], &mut s);
            self.stops[x] = s;
            self.version[x] = self.version[x].wrapping_add(1);
            self.index(x);
        }
    }

    /// Up to [`CANDIDATES`] trails meeting `t`, the most promising first:
    /// the shortest (or longest, for a short `t`), or under `Pieces` those
    /// with the most slack. Left in `self.found`.
    fn candidates(&mut self, t: usize) {
        let tick = self.bump();
        let mut c = std::mem::take(&mut self.found);
        c.clear();
        for i in 0..self.stops[t].len() {
            let v = self.stops[t][i] as usize;
            let (version, mark) = (&self.version, &mut self.mark);
            self.at[v].retain(|&(u, ver)| {
                let fresh = version[u as usize] == ver;
                if fresh && u as usize != t && mark[u as usize] != tick {
                    mark[u as usize] = tick;
                    c.push(u as usize);
                }
                fresh
            });
        }
        let lt = self.trails[t].len();
        let ct = self.comp[t];
        let rank = |u: usize| -> usize {
            let lu = self.trails[u].len();
            match self.goal {
                Goal::Pieces => usize::MAX - slack(lu, self.unit[ct]),
                Goal::Balance if lt > self.target[ct] => lu,
                Goal::Balance => usize::MAX - lu,
            }
        };
        if c.len() > CANDIDATES {
            c.select_nth_unstable_by_key(CANDIDATES, |&u| (rank(u), u));
            c.truncate(CANDIDATES);
        }
        c.sort_unstable_by_key(|&u| (rank(u), u));
        self.found = c;
    }

    fn run(&mut self) {
        let n = self.trails.len();
        let mut queue: std::collections::VecDeque<usize> = {
            let mut order: Vec<usize> = (0..n).filter(|&t| self.worth(t)).collect();
            order.sort_by_key(|&t| std::cmp::Reverse(self.trails[t].len()));
            order.into()
        };
        let mut queued = vec![false; n];
        for &t in &queue {
            queued[t] = true;
        }
        let mut budget = 20 * n + 1000;
        // Sideways moves hand an overflow on when no move improves: at
        // most this many, never back to a trail that handed one on lately.
        let mut sideways = if self.goal == Goal::Pieces {
            4 * n + 100
        } else {
            0
        };
        let mut handed = vec![0usize; n];
        while let Some(t) = queue.pop_front() {
            queued[t] = false;
            if !self.worth(t) {
                continue;
            }
            if budget == 0 {
                break;
            }
            budget -= 1;
            self.steps += 1;
            let c = self.comp[t];
            let lt = self.trails[t].len();
            let mut chosen: Option<(Key, usize, Move)> = None;
            let mut aside: Option<(usize, Move)> = None;
            self.candidates(t);
            let found = std::mem::take(&mut self.found);
            for &u in &found {
                let now = self
                    .key(c, lt, self.trails[u].len(), false)
                    .expect("unchecked");
                let (better, level) = self.best(t, u, now);
                if let Some((key, m)) = better {
                    if key < now && chosen.is_none_or(|(k, _, _)| key < k) {
                        chosen = Some((key, u, m));
                    }
                }
                let fresh = handed[u] == 0 || self.steps > handed[u] + 2 * CANDIDATES;
                if let (None, Some(m), true) = (aside, level, fresh) {
                    aside = Some((u, m));
                }
            }
            self.found = found;
            if let Some((_, u, m)) = chosen {
                self.apply(t, u, m);
                for x in [t, u] {
                    if !queued[x] && self.worth(x) {
                        queued[x] = true;
                        queue.push_back(x);
                    }
                }
            } else if let (Some((u, m)), true) = (aside, sideways > 0) {
                sideways -= 1;
                self.apply(t, u, m);
                handed[t] = self.steps;
                for x in [t, u] {
                    if !queued[x] && self.worth(x) {
                        queued[x] = true;
                        queue.push_front(x);
                    }
                }
            }
        }
    }
}

/// Searches restarted from a kicked state when the first fails.
const RESTARTS: usize = 8;
/// Largest component (links) restarted.
const KICKED: usize = 5_000;

/// Random tail exchanges between trails that meet, about one for every
/// two trails, each trail in at most one: another starting point for the
/// search. Deterministic in `seed`.
fn kick(g: &Graph, trails: &mut [Trail], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    // Every visit, by vertex: (trail, position).
    let mut at: Vec<Vec<(u32, u32)>> = vec![Vec::new(); g.n];
    let mut stops = Vec::new();
    for (t, trail) in trails.iter().enumerate() {
        g.stops(&trail.arcs, &mut stops);
        for (p, &v) in stops.iter().enumerate() {
            at[v as usize].push((t as u32, p as u32));
        }
    }
    let rev = |s: &[u32]| s.iter().rev().map(|a| a ^ 1).collect::<Vec<u32>>();
    let mut touched = vec![false; trails.len()];
    for _ in 0..trails.len() {
        let t = rnd(trails.len());
        if touched[t] || trails[t].arcs.is_empty() {
            continue;
        }
        let p = rnd(trails[t].arcs.len() + 1);
        let v = if p == 0 {
            g.tail(trails[t].arcs[0])
        } else {
            g.head(trails[t].arcs[p - 1])
        };
        let here = &at[v as usize];
        let (u, q) = here[rnd(here.len())];
        let (u, q) = (u as usize, q as usize);
        if u == t || touched[u] {
            continue;
        }
        let (tt, uu) = (&trails[t].arcs, &trails[u].arcs);
        let (nt, nu) = if rnd(2) == 0 {
            ([&tt[..p], &uu[q..]].concat(), [&uu[..q], &tt[p..]].concat())
        } else {
            (
                [&tt[..p], &rev(&uu[..q])[..]].concat(),
                [&rev(&tt[p..])[..], &uu[q..]].concat(),
            )
        };
        if nt.is_empty() || nu.is_empty() {
            continue;
        }
        trails[t].arcs = nt;
        trails[u].arcs = nu;
        touched[t] = true;
        touched[u] = true;
    }
}

/// Per component: links, trails, pieces of `unit[c]` links.
fn tally(trails: &[Trail], unit: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut links = vec![0; unit.len()];
    let mut pieces = vec![0; unit.len()];
    for t in trails {
        let c = t.comp as usize;
        links[c] += t.arcs.len();
        pieces[c] += t.arcs.len().div_ceil(unit[c]);
    }
    (links, pieces)
}

/// Reshapes the trails of the components in `work` until they make
/// `want[c]` pieces of `unit[c]` links, where the search can.
fn shape(g: &Graph, trails: &mut [Trail], work: &[bool], unit: &[usize], want: &[usize]) {
    // Halving first where trails of `unit` links can hold the component.
    let (links, _) = tally(trails, unit);
    let mut count = vec![0usize; unit.len()];
    for t in trails.iter() {
        count[t.comp as usize] += 1;
    }
    let feasible = |c: usize| work[c] && count[c].saturating_mul(unit[c]) >= links[c];
    // To the unit, then down to the mean where it can (trails near the
    // unit would leave the polish all the work); in two steps as halving
    // straight to the mean fails often, and a failure on a long trail
    // scans all of it.
    let to_unit: Vec<usize> = trails
        .iter()
        .map(|t| {
            let c = t.comp as usize;
            if feasible(c) {
                unit[c]
            } else {
                usize::MAX
            }
        })
        .collect();
    let to_mean: Vec<usize> = trails
        .iter()
        .map(|t| {
            let c = t.comp as usize;
            if feasible(c) {
                links[c].div_ceil(count[c]).clamp(1, unit[c])
            } else {
                usize::MAX
            }
        })
        .collect();
    let mut arcs: Vec<Vec<u32>> = trails
        .iter_mut()
        .map(|t| std::mem::take(&mut t.arcs))
        .collect();
    halve(g, &mut arcs, &to_unit);
    halve(g, &mut arcs, &to_mean);
    for (t, a) in trails.iter_mut().zip(arcs) {
        t.arcs = a;
    }
    // Components not worked on want what they have: nothing to do there.
    let (_, have) = tally(trails, unit);
    let want: Vec<usize> = (0..unit.len())
        .map(|c| if work[c] { want[c] } else { have[c] })
        .collect();
    if (0..unit.len()).all(|c| have[c] <= want[c]) {
        return;
    }
    let mut s = Search::new(
        g,
        Goal::Pieces,
        trails,
        unit.to_vec(),
        Vec::new(),
        want,
        usize::MAX,
    );
    s.run();
    s.finish(trails);
}

/// The balanced plan's pieces: `trails` (Euler trails of the components
/// `0..bound.len()`) reshaped and cut into `bound[c]` paths per component
/// where the search finds a way, none over `limit` links (`usize::MAX`
/// for none).
pub(crate) fn balanced(
    g: &Graph,
    trails: Vec<Trail>,
    limit: usize,
    bound: &[usize],
    directed: bool,
    prefer: &[bool],
) -> Vec<Trail> {
    let ncomp = bound.len();
    let mut links = vec![0usize; ncomp];
    for t in &trails {
        links[t.comp as usize] += t.arcs.len();
    }
    // The ideal longest path, and the piece length aimed for.
    let ideal: Vec<usize> = (0..ncomp)
        .map(|c| links[c].div_ceil(bound[c].max(1)).max(1))
        .collect();
    let mut unit: Vec<usize> = ideal.iter().map(|&l| limit.min(l.max(l * 5 / 4))).collect();
    if directed {
        return split_by(g, trails, |c| unit[c], prefer);
    }
    let over = |trails: &[Trail], unit: &[usize]| -> Vec<bool> {
        let (_, pieces) = tally(trails, unit);
        (0..ncomp).map(|c| pieces[c] > bound[c]).collect()
    };
    let work = over(&trails, &unit);
    let mut shaped = trails;
    if work.contains(&true) {
        let original: Vec<Option<Vec<u32>>> = shaped
            .iter()
            .map(|t| work[t.comp as usize].then(|| t.arcs.clone()))
            .collect();
        shape(g, &mut shaped, &work, &unit, bound);
        let mut failed = over(&shaped, &unit);
        // Small components the search left over the count: kicked out of
        // the local optimum (random tail exchanges) and searched again.
        let mut attempt = 0;
        while attempt < RESTARTS
            && failed
                .iter()
                .enumerate()
                .any(|(c, &f)| f && links[c] <= KICKED)
        {
            attempt += 1;
            let retry: Vec<bool> = (0..ncomp)
                .map(|c| failed[c] && links[c] <= KICKED)
                .collect();
            let mut trial: Vec<Trail> = shaped
                .iter()
                .filter(|t| retry[t.comp as usize])
                .map(|t| Trail::new(t.arcs.clone(), t.comp))
                .collect();
            kick(g, &mut trial, attempt as u64);
            shape(g, &mut trial, &retry, &unit, bound);
            let (_, before) = tally(&shaped, &unit);
            let (_, after) = tally(&trial, &unit);
            let mut fresh = trial.into_iter();
            for t in shaped.iter_mut().filter(|t| retry[t.comp as usize]) {
                let n = fresh.next().expect("as many trails");
                if after[t.comp as usize] < before[t.comp as usize] {
                    t.arcs = n.arcs;
                }
            }
            failed = over(&shaped, &unit);
        }
        if failed.contains(&true) {
            // Pieces of the hop limit instead: the path count first, the
            // balance left to the polish. From the reshaped trails or the
            // Euler ones, whichever needs fewer pieces, then has the
            // shorter longest trail (the polish never lengthens it).
            for c in 0..ncomp {
                if failed[c] {
                    unit[c] = limit;
                }
            }
            let score = |trails: &[Trail]| {
                let mut s = vec![(0usize, 0usize); ncomp];
                for t in trails.iter().filter(|t| failed[t.comp as usize]) {
                    let c = t.comp as usize;
                    s[c].0 += t.arcs.len().div_ceil(limit);
                    s[c].1 = s[c].1.max(t.arcs.len());
                }
                s
            };
            let euler: Vec<Trail> = shaped
                .iter()
                .zip(&original)
                .filter(|(t, _)| failed[t.comp as usize])
                .map(|(t, o)| Trail::new(o.clone().expect("worked on"), t.comp))
                .collect();
            let (now, then) = (score(&shaped), score(&euler));
            for (t, o) in shaped.iter_mut().zip(original) {
                let c = t.comp as usize;
                if failed[c] && then[c] < now[c] {
                    t.arcs = o.expect("worked on");
                }
            }
            let again: Vec<bool> = over(&shaped, &unit);
            if limit != usize::MAX && again.contains(&true) {
                shape(g, &mut shaped, &again, &unit, bound);
            }
        }
    }
    let mut pieces = split_by(g, shaped, |c| unit[c], prefer);
    polish(g, &mut pieces, &ideal, limit);
    pieces
}

/// Shortens the longest pieces toward `ideal[c]` without adding pieces,
/// none over `cap` links.
fn polish(g: &Graph, pieces: &mut [Trail], ideal: &[usize], cap: usize) {
    // Within a link of the ideal (an even cut moved onto a hosted vertex)
    // is as good as the search would make it.
    if !pieces
        .iter()
        .any(|t| t.arcs.len() > ideal[t.comp as usize] + 1)
    {
        return;
    }
    // Very long trails (no hop limit) are halved first.
    let halve_to: Vec<usize> = pieces.iter().map(|t| 2 * ideal[t.comp as usize]).collect();
    let mut arcs: Vec<Vec<u32>> = pieces
        .iter_mut()
        .map(|t| std::mem::take(&mut t.arcs))
        .collect();
    halve(g, &mut arcs, &halve_to);
    for (t, a) in pieces.iter_mut().zip(arcs) {
        t.arcs = a;
    }
    let mut s = Search::new(
        g,
        Goal::Balance,
        pieces,
        vec![1; ideal.len()],
        ideal.to_vec(),
        Vec::new(),
        cap,
    );
    s.run();
    s.finish(pieces);
}

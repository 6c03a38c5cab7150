//! The fast first pass of balancing: cut every trail longer than its
//! target near its middle and hand one half to a short trail that passes
//! there (a tail exchange, `A·B` + `C·D` -> `A·D` + `C·B` or the reversed
//! pairing). The Euler decomposition of a random graph leaves a few
//! trails with thousands of links next to thousands of trails of a few
//! links; halving gets each link through O(log length) exchanges, where
//! the local search would need one step per partner and several partners
//! per step.
//!
//! A move is taken only if it lowers the summed excess over the target
//! (`max(0, len - target)`), so the pass ends; what it cannot finish is
//! left to the local search.

use super::graph::Graph;

/// Shortens every trail `t` longer than `target[t]` where it can.
pub(crate) fn halve(g: &Graph, trails: &mut [Vec<u32>], target: &[usize]) {
    let excess = |len: usize, t: usize| len.saturating_sub(target[t]);
    let mut work: Vec<usize> = (0..trails.len())
        .filter(|&t| excess(trails[t].len(), t) > 0)
        .collect();
    if work.is_empty() {
        return;
    }
    let mut stops: Vec<Vec<u32>> = trails
        .iter()
        .map(|a| {
            let mut s = Vec::new();
            g.stops(a, &mut s);
            s
        })
        .collect();
    // Visits of trails within their target, by vertex: (trail, position,
    // the trail's version then). An entry whose trail has changed since
    // is stale, and skipped.
    let mut version = vec![0u32; trails.len()];
    let mut at: Vec<Vec<Visit>> = vec![Vec::new(); g.n];
    let index = |at: &mut Vec<Vec<Visit>>, s: &[u32], t: usize, ver: u32| {
        for (q, &v) in s.iter().enumerate() {
            at[v as usize].push(Visit {
                trail: t as u32,
                pos: q as u32,
                version: ver,
            });
        }
    };
    for (t, s) in stops.iter().enumerate() {
        if excess(trails[t].len(), t) == 0 {
            index(&mut at, s, t, 0);
        }
    }
    while let Some(t) = work.pop() {
        let l = trails[t].len();
        if excess(l, t) == 0 {
            continue;
        }
        let Some((p, u, q, reversed)) = find(&stops, trails, &at, &version, t, &excess) else {
            continue;
        };
        let rev = |s: &[u32]| s.iter().rev().map(|a| a ^ 1).collect::<Vec<u32>>();
        let (tt, uu) = (&trails[t], &trails[u]);
        let (nt, nu) = if reversed {
            (
                [&tt[..p], &rev(&uu[..q])[..]].concat(),
                [&rev(&tt[p..])[..], &uu[q..]].concat(),
            )
        } else {
            ([&tt[..p], &uu[q..]].concat(), [&uu[..q], &tt[p..]].concat())
        };
        trails[t] = nt;
        trails[u] = nu;
        for x in [t, u] {
            g.stops(&trails[x], &mut stops[x]);
            version[x] = version[x].wrapping_add(1);
            if excess(trails[x].len(), x) == 0 {
                index(&mut at, &stops[x], x, version[x]);
            } else {
                work.push(x);
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Visit {
    trail: u32,
    pos: u32,
    version: u32,
}

/// A short partner for `t` and where to exchange: positions scanned from
/// the middle of `t` outwards, the first exchange that lowers the excess.
fn find(
    stops: &[Vec<u32>],
    trails: &[Vec<u32>],
    at: &[Vec<Visit>],
    version: &[u32],
    t: usize,
    excess: &impl Fn(usize, usize) -> usize,
) -> Option<(usize, usize, usize, bool)> {
    let l = trails[t].len();
    let before = excess(l, t);
    let mid = l / 2;
    for d in 0..=mid {
        for p in [mid - d, mid + d]
            .into_iter()
            .take(if d == 0 { 1 } else { 2 })
        {
            if p == 0 || p >= l {
                continue;
            }
            let v = stops[t][p];
            for visit in &at[v as usize] {
                let u = visit.trail as usize;
                if u == t || version[u] != visit.version {
                    continue;
                }
                let (lu, q) = (trails[u].len(), visit.pos as usize);
                let straight = (p + lu - q, q + l - p);
                let reversed = (p + q, l - p + lu - q);
                for (i, (a, b)) in [straight, reversed].into_iter().enumerate() {
                    if a > 0 && b > 0 && excess(a, t) + excess(b, u) < before {
                        return Some((p, u, q, i == 1));
                    }
                }
            }
        }
    }
    None
}

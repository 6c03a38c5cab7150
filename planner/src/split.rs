//! Enforcing the hop limit: a trail longer than the limit is cut into as
//! few pieces as the limit allows, of near-equal length, with cuts moved
//! onto switches that have a host where the limit leaves room (a cut
//! switch is the sink of one probe and the generator of the next).

use super::graph::Graph;
use super::Trail;

pub(crate) fn split(g: &Graph, trails: Vec<Trail>, limit: usize, prefer: &[bool]) -> Vec<Vec<u32>> {
    split_by(g, trails, |_| limit, prefer)
        .into_iter()
        .map(|t| t.arcs)
        .collect()
}

/// Cuts each trail into pieces of at most `unit(component)` links: as few
/// as that allows, near-equal, cuts on hosted vertices where the unit
/// leaves room. Empty trails are dropped.
pub(crate) fn split_by(
    g: &Graph,
    trails: Vec<Trail>,
    unit: impl Fn(usize) -> usize,
    prefer: &[bool],
) -> Vec<Trail> {
    let mut out = Vec::with_capacity(trails.len());
    let mut stops = Vec::new();
    for t in trails {
        let comp = t.comp;
        let mut arcs = t.arcs;
        if arcs.is_empty() {
            continue;
        }
        let limit = unit(comp as usize);
        let len = arcs.len();
        let pieces = len.div_ceil(limit);
        let closed = g.tail(arcs[0]) == g.head(arcs[len - 1]);
        if pieces == 1 && !closed {
            out.push(Trail::new(arcs, comp));
            continue;
        }
        g.stops(&arcs, &mut stops);
        if closed && !prefer[stops[0] as usize] {
            // A closed trail can start anywhere: start at a host's switch.
            if let Some(r) = stops.iter().position(|&v| prefer[v as usize]) {
                arcs.rotate_left(r);
                g.stops(&arcs, &mut stops);
            }
        }
        let mut from = 0;
        for j in 1..pieces {
            let target = (j * len + pieces / 2) / pieces;
            let lo = (from + 1).max(len - (pieces - j) * limit);
            let hi = (from + limit).min(len - (pieces - j));
            let at = nearest(lo, hi, target.clamp(lo, hi), |x| prefer[stops[x] as usize]);
            out.push(Trail::new(arcs[from..at].to_vec(), comp));
            from = at;
        }
        if from == 0 {
            out.push(Trail::new(arcs, comp));
        } else {
            out.push(Trail::new(arcs[from..].to_vec(), comp));
        }
    }
    out
}

/// The position in `lo..=hi` closest to `target` where `good` holds, or
/// `target` if there is none.
fn nearest(lo: usize, hi: usize, target: usize, good: impl Fn(usize) -> bool) -> usize {
    for d in 0..=(hi - lo) {
        if target >= lo + d && good(target - d) {
            return target - d;
        }
        if target + d <= hi && good(target + d) {
            return target + d;
        }
        if target < lo + d && target + d > hi {
            break;
        }
    }
    target
}

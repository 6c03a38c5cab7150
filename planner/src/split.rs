//! Enforcing the hop limit: a trail longer than the limit is cut into as
//! few pieces as the limit allows, of near-equal length, with cuts moved
//! onto switches that have a host where the limit leaves room (a cut
//! switch is the sink of one probe and the generator of the next).

use super::graph::Graph;
use super::Trail;

pub(crate) fn split(g: &Graph, trails: Vec<Trail>, limit: usize, prefer: &[bool]) -> Vec<Vec<u32>> {
    let mut out = Vec::with_capacity(trails.len());
    let mut stops = Vec::new();
    for t in trails {
        let mut arcs = t.arcs;
        if arcs.is_empty() {
            continue;
        }
        g.stops(&arcs, &mut stops);
        if stops[0] == stops[stops.len() - 1] && !prefer[stops[0] as usize] {
            // A closed trail can start anywhere: start at a host's switch.
            if let Some(r) = stops.iter().position(|&v| prefer[v as usize]) {
                arcs.rotate_left(r);
                g.stops(&arcs, &mut stops);
            }
        }
        let len = arcs.len();
        let pieces = len.div_ceil(limit);
        let mut from = 0;
        for j in 1..pieces {
            let target = (j * len + pieces / 2) / pieces;
            let lo = (from + 1).max(len - (pieces - j) * limit);
            let hi = (from + limit).min(len - (pieces - j));
            let at = nearest(lo, hi, target.clamp(lo, hi), |x| prefer[stops[x] as usize]);
            out.push(arcs[from..at].to_vec());
            from = at;
        }
        if from == 0 {
            out.push(arcs);
        } else {
            out.push(arcs[from..].to_vec());
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

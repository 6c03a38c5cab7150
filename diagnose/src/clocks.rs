//! Clocks and legs: per host pair, the clock offset and the one-way delays
//! with INT's measured queueing asymmetry removed, and which leg of a lost
//! RPC retransmitted.

use crate::attribution::{Attribution, Verdict};
use crate::baseline::median;
use crate::rpc::Edge;
use std::collections::HashMap;

/// Which leg each loss was on: the one whose one-way delay (clock offset
/// removed) exceeds its pair's median more. Separates a lossy link from
/// its reverse direction, which the same requests cross.
pub fn loss_legs(edges: &[Edge], attr: &mut [Attribution], clocks: &[ClockPair]) {
    let pair: HashMap<(u16, u16), &ClockPair> = clocks
        .iter()
        .map(|c| ((c.client_host, c.server_host), c))
        .collect();
    for (e, a) in edges.iter().zip(attr.iter_mut()) {
        if a.verdict() != Verdict::Loss {
            continue;
        }
        if let Some(c) = pair.get(&(e.client_host, e.server_host)) {
            let fwd = (e.sr - e.cs) as f64 - c.offset_ns - c.forward_ns;
            let rev = (e.cr - e.ss) as f64 + c.offset_ns - c.reverse_ns;
            a.loss_forward = Some(fwd >= rev);
        }
    }
}

/// Clock offset and one-way delays of one (client host, server host) pair.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ClockPair {
    pub client_host: u16,
    pub server_host: u16,
    /// Server clock minus client clock, ns.
    pub offset_ns: f64,
    pub forward_ns: f64,
    pub reverse_ns: f64,
    pub edges: usize,
}

/// Per host pair: the offset that makes the two one-way delays differ by
/// exactly what INT saw queued in each direction (WAP5 assumes the two
/// equal; INT measures the asymmetry), medians over the pair's edges.
pub fn clock_offsets(edges: &[Edge], attr: &[Attribution]) -> Vec<ClockPair> {
    let mut by: HashMap<(u16, u16), Vec<usize>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        by.entry((e.client_host, e.server_host))
            .or_default()
            .push(i);
    }
    let mut out: Vec<ClockPair> = by
        .into_iter()
        .map(|((c, s), idx)| {
            let theta = |i: usize| {
                let (e, a) = (&edges[i], &attr[i]);
                (((e.sr - e.cs) - (e.cr - e.ss)) as f64 - (a.queue_fwd - a.queue_rev)) / 2.0
            };
            let mut th: Vec<i64> = idx.iter().map(|&i| theta(i) as i64).collect();
            let offset = median(&mut th);
            let mut fwd: Vec<i64> = idx
                .iter()
                .map(|&i| (edges[i].sr - edges[i].cs) - offset as i64)
                .collect();
            let mut rev: Vec<i64> = idx
                .iter()
                .map(|&i| (edges[i].cr - edges[i].ss) + offset as i64)
                .collect();
            ClockPair {
                client_host: c,
                server_host: s,
                offset_ns: offset,
                forward_ns: median(&mut fwd),
                reverse_ns: median(&mut rev),
                edges: idx.len(),
            }
        })
        .collect();
    out.sort_by_key(|p| (p.client_host, p.server_host));
    out
}

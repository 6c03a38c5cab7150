//! Clocks and legs: per host pair, the clock offset and the one-way delays
//! with INT's measured queueing asymmetry removed; which leg of a lost RPC
//! retransmitted, and which leg an end-host residual sat on.

use super::baseline::median;
use super::{Attribution, Verdict};
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
use std::collections::HashMap;

/// Share of an edge's one-way excess that must sit on one leg for its host
/// residual to count as that leg's network delay.
const ONE_LEG: f64 = 0.8;

/// How far each leg of `e` is over its pair's median one-way delay.
fn leg_excess(e: &Edge, c: &ClockPair) -> (f64, f64) {
    let fwd = (e.sr - e.cs) as f64 - c.offset_ns - c.forward_ns;
    let rev = (e.cr - e.ss) as f64 + c.offset_ns - c.reverse_ns;
    (fwd, rev)
}

fn pairs(clocks: &[ClockPair]) -> HashMap<(u16, u16), &ClockPair> {
    clocks
        .iter()
        .map(|c| ((c.client_host, c.server_host), c))
        .collect()
}

/// An end-host residual on one leg only is network time on that leg's
/// unmeasured host links (an incast queue on the receiver's downlink, say),
/// and the edge becomes a network edge with its fabric interval widened by
/// it. A slow stack delays its host's sending and receiving alike: the
/// host's residual then shows on legs into it and out of it, and stays the
/// host's. One edge can catch a stack fault on one leg only (a burst that
/// ends between them), so the test is per receiving host first: over all
/// its host-verdict edges, the excess on legs into it must be one-sided.
pub fn host_legs(
    edges: &[Edge],
    attr: &mut [Attribution],
    clocks: &[ClockPair],
    paths: &[Option<&HostPath>],
    index: &LinkIndex,
) {
    let pair = pairs(clocks);
    let hosts = edges
        .iter()
        .map(|e| usize::from(e.client_host.max(e.server_host)) + 1)
        .max()
        .unwrap_or(0);
    // Per edge, its host residual's (forward, reverse) one-way excess.
    let legs: Vec<Option<(f64, f64)>> = edges
        .iter()
        .zip(attr.iter())
        .map(|(e, a)| {
            let c = pair.get(&(e.client_host, e.server_host))?;
            let (fwd, rev) = leg_excess(e, c);
            (a.verdict() == Verdict::Host).then_some((fwd.max(0.0), rev.max(0.0)))
        })
        .collect();
    let (mut into, mut out) = (vec![0.0; hosts], vec![0.0; hosts]);
    for (e, leg) in edges.iter().zip(&legs) {
        let Some((fwd, rev)) = *leg else { continue };
        let (client, server) = (usize::from(e.client_host), usize::from(e.server_host));
        into[server] += fwd;
        out[client] += fwd;
        into[client] += rev;
        out[server] += rev;
    }
    let one_sided = |h: usize| into[h] >= ONE_LEG * (into[h] + out[h]);
    for (((e, a), path), leg) in edges.iter().zip(attr.iter_mut()).zip(paths).zip(&legs) {
        let (Some(p), Some((fwd, rev))) = (path, *leg) else {
            continue;
        };
        let (on_leg, links, receiver) = match fwd >= rev {
            true => (fwd, &p.forward, e.server_host),
            false => (rev, &p.reverse, e.client_host),
        };
        if on_leg < ONE_LEG * (fwd + rev)
            || on_leg < a.host / 2.0
            || !one_sided(usize::from(receiver))
        {
            continue;
        }
        let Some(&downlink) = links.iter().rev().find(|&&l| index.unmeasured_host_link(l)) else {
            continue;
        };
        a.unmeasured = a.host;
        a.unmeasured_link = Some(downlink);
        a.fabric += a.host;
        a.fabric_hi += a.host;
        a.host = 0.0;
        a.verdict = Some(Verdict::Network);
    }
}

/// Which leg each loss was on: the one whose one-way delay (clock offset
/// removed) exceeds its pair's median more. Separates a lossy link from
/// its reverse direction, which the same requests cross.
pub fn loss_legs(edges: &[Edge], attr: &mut [Attribution], clocks: &[ClockPair]) {
    let pair = pairs(clocks);
    for (e, a) in edges.iter().zip(attr.iter_mut()) {
        if a.verdict() != Verdict::Loss {
            continue;
        }
        if let Some(c) = pair.get(&(e.client_host, e.server_host)) {
            let (fwd, rev) = leg_excess(e, c);
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

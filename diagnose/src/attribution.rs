//! Attribution per RPC edge: a slow edge's excess over its baseline split
//! into service (ΔS, less the excess of the calls it waited on), fabric
//! queueing on its forward and reverse links (an interval from INT), loss
//! (a lossy link on its path and an RTO-sized gap) and the end-host / stack
//! residual, with a verdict and a confidence.

use crate::evidence::Evidence;
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
use std::collections::HashMap;

/// What a slow edge is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Not slow.
    Ok,
    Service,
    Network,
    Loss,
    Host,
    /// Slow because a call it waited on was slow.
    Downstream,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Service => "service",
            Verdict::Network => "network",
            Verdict::Loss => "loss",
            Verdict::Host => "host",
            Verdict::Downstream => "downstream",
        }
    }
}

/// Thresholds of the attribution.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// An edge is slow when its excess over the median of its class is over
    /// both this and `mad_factor` median absolute deviations.
    pub min_excess_ns: i64,
    pub mad_factor: f64,
    /// A network residual at least this long on a lossy path is a
    /// retransmission (Linux's minimum RTO is 200 ms).
    pub loss_gap_ns: i64,
    /// A component of the edge's own (service, fabric, loss, host) at least
    /// this large is its cause even when a call it waited on added more:
    /// the edge is then slow on its own account, and the call below gets
    /// its own verdict.
    pub local_ns: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_excess_ns: 1_000_000,
            mad_factor: 4.0,
            loss_gap_ns: 150_000_000,
            local_ns: 500_000,
        }
    }
}

/// The attribution of one edge; components in ns of excess.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Attribution {
    pub slow: bool,
    pub excess: f64,
    pub service: f64,
    pub fabric: f64,
    pub fabric_lo: f64,
    pub fabric_hi: f64,
    pub loss: f64,
    pub host: f64,
    pub downstream: f64,
    /// INT queueing delay (absolute, not excess) forward and reverse.
    pub queue_fwd: f64,
    pub queue_rev: f64,
    pub verdict: Option<Verdict>,
    pub confidence: f32,
    /// The link that added the most queueing, and the lossiest link.
    pub hot_link: Option<u32>,
    pub lossy_link: Option<u32>,
    /// For a loss: whether the retransmission was on the request's leg
    /// (`true`) or the response's (set by [`loss_legs`]).
    pub loss_forward: Option<bool>,
    /// Measured share of the switch links on the path.
    pub coverage: f32,
    pub stale: bool,
}

impl Attribution {
    pub fn verdict(&self) -> Verdict {
        self.verdict.unwrap_or(Verdict::Ok)
    }
}

/// Medians of a class of edges, and the spread that makes one slow.
#[derive(Debug, Clone, Copy, Default)]
struct Baseline {
    total: f64,
    mad: f64,
    service: f64,
    network: f64,
}

fn median(v: &mut [i64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.len() / 2;
    *v.select_nth_unstable(m).1 as f64
}

fn baselines(edges: &[Edge]) -> HashMap<(u16, u16), Baseline> {
    let mut by: HashMap<(u16, u16), Vec<&Edge>> = HashMap::new();
    for e in edges {
        by.entry((e.caller, e.callee)).or_default().push(e);
    }
    by.into_iter()
        .map(|(k, es)| {
            let mut t: Vec<i64> = es.iter().map(|e| e.total()).collect();
            let total = median(&mut t);
            let mut dev: Vec<i64> = t.iter().map(|&x| (x as f64 - total).abs() as i64).collect();
            let mut s: Vec<i64> = es.iter().map(|e| e.service()).collect();
            let mut n: Vec<i64> = es.iter().map(|e| e.network()).collect();
            let b = Baseline {
                total,
                mad: median(&mut dev),
                service: median(&mut s),
                network: median(&mut n),
            };
            (k, b)
        })
        .collect()
}

/// Excess of the children each edge waited on: children overlapping in time
/// ran in parallel (the slowest counts), disjoint ones in sequence (they add).
fn waited_on(edges: &[Edge], excess: &[f64]) -> Vec<f64> {
    let mut kids: Vec<Vec<u32>> = vec![Vec::new(); edges.len()];
    for (i, e) in edges.iter().enumerate() {
        if let Some(p) = e.parent {
            kids[p as usize].push(i as u32);
        }
    }
    kids.into_iter()
        .map(|mut k| {
            k.sort_unstable_by_key(|&c| edges[c as usize].cs);
            let (mut sum, mut group_max, mut group_end) = (0.0, 0.0f64, i64::MIN);
            for c in k {
                let e = &edges[c as usize];
                if e.cs > group_end {
                    sum += group_max;
                    group_max = 0.0;
                }
                group_end = group_end.max(e.cr);
                group_max = group_max.max(excess[c as usize]);
            }
            sum + group_max
        })
        .collect()
}

/// Attributes every edge. `paths[i]` is edge `i`'s path (`None`: no route).
pub fn attribute(
    edges: &[Edge],
    paths: &[Option<&HostPath>],
    index: &LinkIndex,
    ev: &Evidence,
    o: &Options,
) -> Vec<Attribution> {
    let base = baselines(edges);
    let excess: Vec<f64> = edges
        .iter()
        .map(|e| e.total() as f64 - base[&(e.caller, e.callee)].total)
        .collect();
    let waited = waited_on(edges, &excess);
    edges
        .iter()
        .zip(paths)
        .enumerate()
        .map(|(i, (e, path))| {
            let b = base[&(e.caller, e.callee)];
            let mut a = Attribution {
                excess: excess[i],
                ..Default::default()
            };
            a.downstream = waited[i].max(0.0);
            a.service = (e.service() as f64 - b.service - a.downstream).max(0.0);
            let d_net = e.network() as f64 - b.network;
            if let Some(p) = path {
                fabric(&mut a, p, e, index, ev);
            }
            let residual = d_net - a.fabric;
            if a.lossy_link.is_some() && residual >= o.loss_gap_ns as f64 {
                a.loss = residual;
            }
            a.host = (residual - a.loss).max(0.0);
            a.slow = a.excess > (o.min_excess_ns as f64).max(o.mad_factor * b.mad);
            if a.slow {
                verdict(&mut a, o.local_ns as f64);
            }
            a
        })
        .collect()
}

/// Sums INT excess over the path's links and finds its hot and lossy links.
fn fabric(a: &mut Attribution, p: &HostPath, e: &Edge, index: &LinkIndex, ev: &Evidence) {
    let (mut switch_links, mut measured, mut hot) = (0u32, 0u32, 0.0f64);
    let mut worst_loss = 0.0f32;
    let legs = [(&p.forward, e.cs, true), (&p.reverse, e.ss, false)];
    for (links, mut at, fwd) in legs {
        for &l in links.iter() {
            if !index.host_link[l as usize] {
                switch_links += 1;
            }
            if !index.measured[l as usize] {
                continue;
            }
            let Some(est) = ev.at(l, at) else { continue };
            // The packet reaches the next link after this one's queue.
            at += est.mean as i64;
            measured += 1;
            a.stale |= est.stale;
            let base = ev.baseline[l as usize];
            let x = est.mean - base;
            a.fabric += x;
            a.fabric_lo += est.lo - base;
            a.fabric_hi += est.hi - base;
            if fwd {
                a.queue_fwd += est.mean;
            } else {
                a.queue_rev += est.mean;
            }
            if x > hot {
                hot = x;
                a.hot_link = Some(l);
            }
            let loss = ev.loss(l, at);
            if loss > worst_loss {
                worst_loss = loss;
                a.lossy_link = Some(l);
            }
        }
    }
    a.fabric = a.fabric.max(0.0);
    a.fabric_lo = a.fabric_lo.max(0.0);
    a.fabric_hi = a.fabric_hi.max(a.fabric);
    a.coverage = if switch_links == 0 {
        0.0
    } else {
        (measured as f32 / switch_links as f32).min(1.0)
    };
}

/// The largest of the edge's own components wins when it is at least
/// `local` (else the largest of all, the calls waited on included);
/// confidence is its share of the explained excess, discounted for
/// unmeasured links and stale samples.
fn verdict(a: &mut Attribution, local: f64) {
    let parts = [
        (Verdict::Service, a.service),
        (Verdict::Network, a.fabric),
        (Verdict::Loss, a.loss),
        (Verdict::Host, a.host),
        (Verdict::Downstream, a.downstream),
    ];
    let sum: f64 = parts.iter().map(|(_, x)| x.max(0.0)).sum();
    let largest = |ps: &[(Verdict, f64)]| {
        ps.iter().copied().fold(
            (Verdict::Ok, 0.0),
            |acc, p| if p.1 > acc.1 { p } else { acc },
        )
    };
    let own = largest(&parts[..4]);
    let (v, best) = if own.1 >= local { own } else { largest(&parts) };
    a.verdict = Some(v);
    let share = if sum > 0.0 { best / sum } else { 0.0 };
    let fresh = if a.stale { 0.5 } else { 1.0 };
    a.confidence = (share * f64::from(a.coverage) * fresh) as f32;
}

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

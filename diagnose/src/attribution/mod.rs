//! Attribution per RPC edge: a slow edge's excess over its baseline split
//! into service (the callee's own work, its service time less the time it
//! waited on its own calls, over that work's median), fabric
//! queueing on its forward and reverse links (an interval from INT), loss
//! (a lossy link on its path and an RTO-sized gap) and the end-host / stack
//! residual, with a verdict and a confidence.

mod baseline;
mod clocks;

use crate::evidence::{Estimate, Evidence};
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
pub(crate) use baseline::waiting;
use baseline::{baselines, dependency_waits, service_noise, waited_on};
pub use clocks::ClockPair;
use clocks::{clock_offsets, host_legs, loss_legs};

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
    /// Slow because a callee that records no spans (a database) was slow.
    Dependency,
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
            Verdict::Dependency => "dependency",
            Verdict::Downstream => "downstream",
        }
    }
}

/// Thresholds of the attribution.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// An edge is slow when its excess over its class's normal total (the
    /// median service plus the median network time) is over both this and
    /// `mad_factor` median absolute deviations.
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
    /// For the service component the bar is also the callee's noise: this
    /// quantile of its own service excess on edges that are not slow (a
    /// cached service's misses, a lognormal tail), so that a caller's
    /// ordinary variation does not hide the slow call below it.
    pub noise_quantile: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_excess_ns: 1_000_000,
            mad_factor: 4.0,
            loss_gap_ns: 150_000_000,
            local_ns: 500_000,
            noise_quantile: 0.99,
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
    /// What its server's calls to callees without spans added, and the
    /// callee that added the most (an index into the diagnosis'
    /// dependencies).
    pub dependency: f64,
    pub dependency_id: Option<u16>,
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
    /// (`true`) or the response's (set by `clocks::loss_legs`).
    pub loss_forward: Option<bool>,
    /// Of `fabric`, the excess on host links no probe measures, and the
    /// last such link of the leg it was on (the receiver's downlink; set by
    /// `clocks::host_legs`). `hot_link` stays INT's hottest link.
    pub unmeasured: f64,
    pub unmeasured_link: Option<u32>,
    /// Measured share of the switch links on the path.
    pub coverage: f32,
    pub stale: bool,
}

impl Attribution {
    pub fn verdict(&self) -> Verdict {
        self.verdict.unwrap_or(Verdict::Ok)
    }
}

/// [`attribute`], then the clock offsets of every host pair and, with
/// them, the leg each loss and each one-sided host residual was on: what
/// `diagnose` runs.
pub fn attribute_with_clocks(
    edges: &[Edge],
    paths: &[Option<&HostPath>],
    index: &LinkIndex,
    ev: &Evidence,
    o: &Options,
) -> (Vec<Attribution>, Vec<ClockPair>) {
    let mut attr = attribute(edges, paths, index, ev, o);
    let clocks = clock_offsets(edges, &attr);
    loss_legs(edges, &mut attr, &clocks);
    host_legs(edges, &mut attr, &clocks, paths, index);
    (attr, clocks)
}

/// Attributes every edge. `paths[i]` is edge `i`'s path (`None`: no route).
pub fn attribute(
    edges: &[Edge],
    paths: &[Option<&HostPath>],
    index: &LinkIndex,
    ev: &Evidence,
    o: &Options,
) -> Vec<Attribution> {
    let wait = waiting(edges);
    let base = baselines(edges, &wait);
    let excess: Vec<f64> = edges
        .iter()
        .map(|e| e.total() as f64 - base[&(e.caller, e.callee)].total())
        .collect();
    let waited = waited_on(edges, &excess, &base);
    let dependencies = dependency_waits(edges);
    let mut out: Vec<Attribution> = edges
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
            (a.dependency, a.dependency_id) = dependencies[i];
            a.dependency = a.dependency.max(0.0);
            a.service = ((e.service() - wait[i]) as f64 - b.own).max(0.0);
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
            a
        })
        .collect();
    let service: Vec<f64> = out.iter().map(|a| a.service).collect();
    let slow: Vec<bool> = out.iter().map(|a| a.slow).collect();
    let noise = service_noise(edges, &service, &slow, o.noise_quantile);
    let local = o.local_ns as f64;
    for (e, a) in edges.iter().zip(&mut out) {
        if a.slow {
            let service_bar = local.max(noise.get(&e.callee).copied().unwrap_or(0.0));
            verdict(a, local, service_bar);
        }
    }
    out
}

/// Every measured link an edge's request and response crossed, with the
/// moment each reached it (the send time plus the queueing met before it
/// on the way) and INT's estimate there.
pub(crate) fn crossings<'a>(
    p: &'a HostPath,
    e: &Edge,
    index: &'a LinkIndex,
    ev: &'a Evidence,
) -> impl Iterator<Item = (u32, bool, Estimate)> + 'a {
    let legs = [(&p.forward, e.cs, true), (&p.reverse, e.ss, false)];
    legs.into_iter().flat_map(move |(links, start, fwd)| {
        let mut at = start;
        links.iter().filter_map(move |&l| {
            if !index.measured[l as usize] {
                return None;
            }
            let est = ev.at(l, at)?;
            // The packet reaches the next link after this one's queue.
            at += est.mean as i64;
            Some((l, fwd, est))
        })
    })
}

/// Sums INT excess over the path's links and finds its hot and lossy links.
fn fabric(a: &mut Attribution, p: &HostPath, e: &Edge, index: &LinkIndex, ev: &Evidence) {
    let switch_links = p.all().filter(|&l| !index.host_link[l as usize]).count() as u32;
    let (mut measured, mut hot) = (0u32, 0.0f64);
    let mut worst_loss = 0.0f32;
    // Probes are few next to requests: when none was lost near this
    // moment, a link that lost probes during the run still explains an
    // RTO-sized gap better than the end hosts do.
    let (mut run_lossy, mut worst_run_loss) = (None, 0.0f64);
    for (l, fwd, est) in crossings(p, e, index, ev) {
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
        let loss = ev.loss(l, if fwd { e.cs } else { e.ss });
        if loss > worst_loss {
            worst_loss = loss;
            a.lossy_link = Some(l);
        }
        let run_loss = ev.mean_loss(l);
        if run_loss > worst_run_loss {
            worst_run_loss = run_loss;
            run_lossy = Some(l);
        }
    }
    a.lossy_link = a.lossy_link.or(run_lossy);
    a.fabric = a.fabric.max(0.0);
    a.fabric_lo = a.fabric_lo.max(0.0);
    a.fabric_hi = a.fabric_hi.max(a.fabric);
    a.coverage = if switch_links == 0 {
        0.0
    } else {
        (measured as f32 / switch_links as f32).min(1.0)
    };
}

/// The largest of the edge's own components wins when it is over its bar
/// (`local`; `service_bar` for the service, which also covers its noise),
/// else the largest of all, the calls waited on included; confidence is its
/// share of the explained excess, discounted for unmeasured links and stale
/// samples.
fn verdict(a: &mut Attribution, local: f64, service_bar: f64) {
    let parts = [
        (Verdict::Service, a.service),
        (Verdict::Network, a.fabric),
        (Verdict::Loss, a.loss),
        (Verdict::Host, a.host),
        (Verdict::Dependency, a.dependency),
        (Verdict::Downstream, a.downstream),
    ];
    let sum: f64 = parts.iter().map(|(_, x)| x.max(0.0)).sum();
    let largest = |ps: &mut dyn Iterator<Item = (Verdict, f64)>| {
        ps.fold(
            (Verdict::Ok, 0.0),
            |acc, p| if p.1 > acc.1 { p } else { acc },
        )
    };
    let bar = |v: Verdict| {
        if v == Verdict::Service {
            service_bar
        } else {
            local
        }
    };
    // A callee without spans has nothing below it to pass the blame to:
    // its wait is the edge's own, as its service's work is.
    let own = largest(&mut parts[..5].iter().copied().filter(|&(v, x)| x >= bar(v)));
    let (v, best) = if own.0 == Verdict::Ok {
        largest(&mut parts.iter().copied())
    } else {
        own
    };
    a.verdict = Some(v);
    let share = if sum > 0.0 { best / sum } else { 0.0 };
    let fresh = if a.stale { 0.5 } else { 1.0 };
    a.confidence = (share * f64::from(a.coverage) * fresh) as f32;
}

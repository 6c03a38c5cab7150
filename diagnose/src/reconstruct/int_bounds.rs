//! Where one end of an RPC is an uninstrumented service, its times are the
//! other end's moved across the network: clock offset plus one-way delay.
//! [`Mode::Symmetric`] is what a tracer without INT can do (WAP5 §5.2:
//! offsets assuming equal delays both ways, delay = half the typical
//! network time, bounds as wide as any seen); [`Mode::Int`] takes the
//! offsets that agree with INT's per-direction queueing and, per RPC, the
//! queueing INT saw on that direction's links at that moment, corrected by
//! what the visible RPCs over the same link measured then
//! (`int_legs`).

use super::int_legs::{Base, Legs};
use super::model::Rpcs;
use super::view::{Shift, Transfer};
use crate::hosts::Hosts;
use crate::path::Resolver;
use crate::spans::Span;
use crate::Diagnosis;
use std::collections::{BTreeMap, HashMap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Symmetric,
    Int,
}

/// Request and response shifts of each RPC with a hidden end.
#[derive(Debug, Default)]
pub struct Bounds {
    shifts: HashMap<u32, (Shift, Shift)>,
}

const ZERO: Shift = Shift {
    t: 0.0,
    lo: 0.0,
    hi: 0.0,
    sd: 0.0,
};

impl Transfer for Bounds {
    fn request(&self, rpc: u32) -> Shift {
        self.shifts.get(&rpc).map_or(ZERO, |s| s.0)
    }
    fn response(&self, rpc: u32) -> Shift {
        self.shifts.get(&rpc).map_or(ZERO, |s| s.1)
    }
}

pub(super) fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Shifts for every RPC of `rpcs` with a hidden end, from the instrumented
/// RPCs (and their INT evidence) of `dg`, leaving out those of `hidden`.
pub fn bounds(
    spans: &[Span],
    rpcs: &Rpcs,
    dg: &Diagnosis,
    hidden: &[String],
    mode: Mode,
) -> Bounds {
    let visible: Vec<usize> = (0..dg.edges.len())
        .filter(|&i| {
            let e = &dg.edges[i];
            ![e.caller, e.callee]
                .iter()
                .any(|&s| hidden.contains(&dg.services[s as usize]))
        })
        .collect();
    // Per host pair: server clock minus client clock. In a fixed order:
    // which pairs `absolute` walks first decides the offsets where the
    // pairs disagree, and the run must not depend on a hash seed.
    let mut pair: BTreeMap<(u16, u16), Vec<f64>> = BTreeMap::new();
    for &i in &visible {
        let (e, a) = (&dg.edges[i], &dg.attr[i]);
        let asym = match mode {
            Mode::Symmetric => 0.0,
            Mode::Int => a.queue_fwd - a.queue_rev,
        };
        let theta = (((e.sr - e.cs) - (e.cr - e.ss)) as f64 - asym) / 2.0;
        pair.entry((e.client_host, e.server_host))
            .or_default()
            .push(theta);
    }
    let offsets = absolute(pair, dg.hosts.len());
    let off = |h: Option<u16>| h.and_then(|h| offsets[h as usize]).unwrap_or(0.0);
    // One-way delay outside the queues INT sees (stacks, propagation), or
    // all of it for the symmetric estimate.
    let mut base: Vec<f64> = visible
        .iter()
        .map(|&i| {
            let (e, a) = (&dg.edges[i], &dg.attr[i]);
            match mode {
                Mode::Symmetric => e.network() as f64 / 2.0,
                Mode::Int => (e.network() as f64 - a.queue_fwd - a.queue_rev) / 2.0,
            }
        })
        .collect();
    let b = match mode {
        Mode::Symmetric => Base {
            lo: 0.0,
            mid: quantile(&mut base, 0.5),
            hi: 2.0 * quantile(&mut base, 1.0),
        },
        // Where INT saw more queueing than an RPC's network time holds (a
        // probe in a burst, the RPC just outside it) the base comes out
        // negative; a one-way delay never is. Bounds below zero let a
        // hidden service's call leave after its request arrived, which
        // put calls under requests that had not begun (BENCHMARKS,
        // issue 33: 22 % of traces right where tw got 46 %).
        Mode::Int => Base {
            lo: quantile(&mut base, 0.02).max(0.0),
            mid: quantile(&mut base, 0.5),
            hi: quantile(&mut base, 0.98),
        },
    };
    // Bounds follow the routes of a topology: a diagnosis without one
    // bounds nothing.
    let Some(topo) = &dg.topo else {
        return Bounds::default();
    };
    let mut hosts = Hosts::of_topology(topo, &HashMap::new()).ok();
    let mut host = |i: usize| hosts.as_mut().and_then(|h| h.place(&spans[i], None));
    let mut res = Resolver::new(topo);
    let legs = match mode {
        Mode::Symmetric => None,
        Mode::Int => dg
            .evidence
            .as_ref()
            .map(|ev| Legs::new(ev, b, dg, &visible, &mut res, &off)),
    };
    let delay = |links: &[u32], t: i64| -> Shift {
        match &legs {
            None => Shift {
                t: b.mid,
                lo: b.lo,
                hi: b.hi,
                sd: 0.0,
            },
            Some(l) => l.corrected(links, t),
        }
    };
    let mut out = Bounds::default();
    for (i, r) in rpcs.rpcs.iter().enumerate() {
        let Some(h) = r.hidden else { continue };
        let (client, server) = match (r.client, r.server) {
            (Some(c), None) => (host(c.span), host(h)),
            (None, Some(s)) => (host(h), host(s.span)),
            _ => continue,
        };
        let hidden_is_server = r.server.is_none();
        let (oc, os) = (
            if hidden_is_server { off(client) } else { 0.0 },
            if hidden_is_server { 0.0 } else { off(server) },
        );
        let path = client
            .zip(server)
            .and_then(|(c, s)| res.path(&dg.index, c, s).ok().cloned())
            .unwrap_or_default();
        // Each direction's queues as its packet met them: the request's
        // when it was sent, the response's when it came back (as the
        // attribution reads an RPC's crossings).
        let (sent, answered) = r.client.or(r.server).map_or((0, 0), |s| (s.start, s.end));
        let (fwd, rev) = (delay(&path.forward, sent), delay(&path.reverse, answered));
        let plus = |s: Shift, d: f64| Shift {
            t: s.t + d,
            lo: s.lo + d,
            hi: s.hi + d,
            sd: s.sd,
        };
        out.shifts
            .insert(i as u32, (plus(fwd, os - oc), plus(rev, oc - os)));
    }
    out
}

/// Each host's clock relative to the first host of its connected group,
/// from pairwise offsets (medians), by breadth-first search.
fn absolute(pair: BTreeMap<(u16, u16), Vec<f64>>, hosts: usize) -> Vec<Option<f64>> {
    let mut adj: Vec<Vec<(u16, f64)>> = vec![Vec::new(); hosts];
    for ((c, s), mut v) in pair {
        let m = quantile(&mut v, 0.5);
        if (c as usize) < hosts && (s as usize) < hosts {
            adj[c as usize].push((s, m));
            adj[s as usize].push((c, -m));
        }
    }
    let mut out = vec![None; hosts];
    for start in 0..hosts {
        if out[start].is_some() || adj[start].is_empty() {
            continue;
        }
        out[start] = Some(0.0);
        let mut q = VecDeque::from([start]);
        while let Some(h) = q.pop_front() {
            let base = out[h].unwrap_or(0.0);
            for &(n, d) in &adj[h] {
                if out[n as usize].is_none() {
                    out[n as usize] = Some(base + d);
                    q.push_back(n as usize);
                }
            }
        }
    }
    out
}

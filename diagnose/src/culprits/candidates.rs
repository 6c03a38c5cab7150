//! Every candidate culprit and its evidence per block of time: what each
//! call says about a service, a pair of hosts, a host or a link.
//!
//! - A service: its own work per call (server time less the time it waited
//!   on its own calls), so a slow callee below it is not its doing; for
//!   the service a request entered by, per request too.
//! - A callee without spans of its own (a database): how long each call
//!   to it took, from its caller's client span.
//! - A pair of hosts: the network time of the calls between them (client
//!   time less server time), less what INT measured queued on their path
//!   and any retransmission gap: what the two stacks and the unmeasured
//!   wire added.
//! - A host: the same residual, over every call it makes or answers.
//! - A link INT measures: the queueing delay each crossing met.
//! - A lossy link: the retransmission gaps of the calls crossing it, split
//!   among the lossy links of their path by how often each loses.

use super::silence::{self, Silence};
use super::timeline::{Series, Timeline};
use super::{CulpritKind, Inputs};
use crate::attribution::{crossings, waiting, Attribution, Verdict};
use crate::rpc::{Callee, Unjoined};
use std::collections::BTreeMap;

/// One candidate and its evidence.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub kind: CulpritKind,
    pub name: String,
    pub series: Series,
    /// Which load slows it with the rest of its kind (service work, stack
    /// time): that kind's common factor is divided out before the test.
    /// Queues and gaps are the network's and are tested as measured.
    pub load: Option<Load>,
    /// For a host or a pair: the hosts it is about; for a link: its id.
    pub hosts: Vec<u16>,
    pub link: Option<u32>,
    /// For a service: the calls to it that it never answered, whose
    /// callers' waits its series holds.
    pub silence: Silence,
}

/// What a loaded machine slows, by how it slows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Load {
    /// Services' own work.
    Work,
    /// The hosts' stacks and what lies between them: the time from a
    /// client span's start to its server span's.
    Stack,
}

impl Candidate {
    pub(super) fn new(kind: CulpritKind, name: String, t: &Timeline, load: Option<Load>) -> Self {
        Candidate {
            kind,
            name,
            series: Series::new(t),
            load,
            hosts: Vec::new(),
            link: None,
            silence: Silence::default(),
        }
    }
}

/// A call without a server span is its callee's evidence: a dependency's
/// time, or all of the wait on a traced service that never answered (the
/// spans cannot tell its process from its host or the wire to it; the
/// service is the one name they give).
fn charge(
    call: &Unjoined,
    block: usize,
    services: &mut [Candidate],
    dependencies: &mut [Candidate],
) {
    let took = (call.cr - call.cs) as f64;
    match call.callee {
        Callee::Dependency(d) => dependencies[d as usize].series.add(block, took),
        Callee::Silent { service, .. } => services[service as usize].series.add(block, took),
        Callee::Unknown => {}
    }
}

/// The candidates of every kind with evidence in the run.
pub(super) fn collect(inp: &Inputs<'_>, t: &Timeline) -> Vec<Candidate> {
    let wait = waiting(inp.edges);
    let mut services: Vec<Candidate> = inp
        .services
        .iter()
        .map(|s| Candidate::new(CulpritKind::Service, s.clone(), t, Some(Load::Work)))
        .collect();
    let mut dependencies: Vec<Candidate> = (inp.dependencies.iter())
        .map(|d| Candidate::new(CulpritKind::Dependency, d.clone(), t, Some(Load::Work)))
        .collect();
    let mut hosts: Vec<Candidate> = inp
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut c = Candidate::new(CulpritKind::Host, h.clone(), t, Some(Load::Stack));
            c.hosts = vec![i as u16];
            c
        })
        .collect();
    for entry in inp.entries {
        services[entry.service as usize]
            .series
            .add(t.block(entry.sr), entry.own() as f64);
    }
    for call in inp.entry_calls {
        charge(call, t.block(call.cs), &mut services, &mut dependencies);
    }
    let mut pairs: BTreeMap<(u16, u16), Candidate> = BTreeMap::new();
    let n_links = inp.index.links.len();
    let mut queues: Vec<Option<Candidate>> = vec![None; n_links];
    let mut losses: Vec<Option<Candidate>> = vec![None; n_links];
    let loss_share = loss_shares(inp);

    for (i, (e, a)) in inp.edges.iter().zip(inp.attr).enumerate() {
        let block = t.block(e.cs);
        services[e.callee as usize]
            .series
            .add(block, own(e, wait[i]));
        for u in &e.unjoined {
            charge(u, block, &mut services, &mut dependencies);
        }
        let residual = (e.network() as f64 - a.fabric - a.loss).max(0.0);
        let key = (
            e.client_host.min(e.server_host),
            e.client_host.max(e.server_host),
        );
        pairs
            .entry(key)
            .or_insert_with(|| {
                let name = pair_name(inp.hosts, key);
                let mut c = Candidate::new(CulpritKind::Network, name, t, Some(Load::Stack));
                c.hosts = vec![key.0, key.1];
                c
            })
            .series
            .add(block, residual);
        hosts[e.client_host as usize].series.add(block, residual);
        if e.server_host != e.client_host {
            hosts[e.server_host as usize].series.add(block, residual);
        }
        // A queue on a host link no probe measures (an incast on a host's
        // downlink) shows as one-way delay into the host, which the
        // attribution put on that link; every call crossing it says how
        // much (most: nothing).
        if let (Some(p), Some(_)) = (inp.paths[i].as_ref(), inp.evidence) {
            for l in p.all().filter(|&l| inp.index.unmeasured_host_link(l)) {
                queues[l as usize]
                    .get_or_insert_with(|| {
                        let mut c = Candidate::new(CulpritKind::Link, inp.index.name(l), t, None);
                        c.link = Some(l);
                        c
                    })
                    .series
                    .add(block, unmeasured_queue(a, l));
            }
        }
        let (Some(p), Some(ev)) = (inp.paths[i].as_ref(), inp.evidence) else {
            continue;
        };
        for (l, _, est) in crossings(p, e, inp.index, ev) {
            let c = queues[l as usize].get_or_insert_with(|| {
                let mut c = Candidate::new(CulpritKind::Link, inp.index.name(l), t, None);
                c.link = Some(l);
                c
            });
            c.series.add(block, est.mean);
        }
        for l in p.all() {
            if inp.link_loss[l as usize] <= 0.0 {
                continue;
            }
            let gap = loss_share.get(&(i as u32, l)).copied().unwrap_or(0.0);
            let c = losses[l as usize].get_or_insert_with(|| {
                let mut c = Candidate::new(CulpritKind::Loss, inp.index.name(l), t, None);
                c.link = Some(l);
                c
            });
            c.series.add(block, gap);
        }
    }
    for (c, silence) in services.iter_mut().zip(silence::of(inp)) {
        c.silence = silence;
    }
    let busy = |c: &Candidate| c.series.calls() > 0;
    // With one host (everything on loopback) the host's stack is the
    // machine, whose load no other host can be compared with: neither it
    // nor its only pair is a candidate.
    let one_host = hosts.iter().filter(|c| busy(c)).count() <= 1;
    services
        .into_iter()
        .chain(dependencies)
        .chain(hosts.into_iter().filter(|_| !one_host))
        .chain(pairs.into_values().filter(|_| !one_host))
        .chain(queues.into_iter().flatten())
        .chain(losses.into_iter().flatten())
        .filter(busy)
        .collect()
}

/// "h5 <-> h9", or "h5" for the calls a host makes to itself.
fn pair_name(hosts: &[String], (a, b): (u16, u16)) -> String {
    let (a, b) = (&hosts[a as usize], &hosts[b as usize]);
    match a == b {
        true => format!("{a} <-> {a}"),
        false => format!("{a} <-> {b}"),
    }
}

/// Per (edge, link): the part of the edge's retransmission gap put on that
/// link, split among the lossy links of its leg by their loss rates (the
/// expectation–maximisation of loss tomography, [`super::split_by_rate`]).
fn loss_shares(inp: &Inputs<'_>) -> BTreeMap<(u32, u32), f64> {
    let mut obs = Vec::new();
    let mut who = Vec::new();
    let mut crossing = vec![0u64; inp.index.links.len()];
    for (i, (a, p)) in inp.attr.iter().zip(inp.paths).enumerate() {
        let Some(p) = p else { continue };
        let mut seen: Vec<u32> = p.all().collect();
        seen.sort_unstable();
        seen.dedup();
        for &l in &seen {
            crossing[l as usize] += 1;
        }
        if a.verdict() != Verdict::Loss && a.loss <= 0.0 {
            continue;
        }
        let leg: Vec<u32> = match a.loss_forward {
            Some(true) => p.forward.clone(),
            Some(false) => p.reverse.clone(),
            None => seen,
        };
        let mut cand: Vec<u32> = leg
            .into_iter()
            .filter(|&l| inp.link_loss[l as usize] > 0.0)
            .collect();
        cand.sort_unstable();
        cand.dedup();
        obs.push((a.loss, cand.clone()));
        who.push(i as u32);
    }
    let shares = super::split_by_rate_each(&obs, &crossing);
    who.into_iter()
        .zip(obs.iter().zip(shares))
        .flat_map(|(i, ((_, cand), share))| {
            cand.iter()
                .zip(share)
                .map(move |(&l, s)| ((i, l), s))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What a call queued on host link `l`, which no probe measures: the
/// one-way delay into its host the attribution put there, if any.
fn unmeasured_queue(a: &Attribution, l: u32) -> f64 {
    match a.unmeasured_link == Some(l) {
        true => a.unmeasured,
        false => 0.0,
    }
}

/// The evidence of host link `l`, which no probe measures, from the calls
/// crossing it that `keep` takes, by edge index.
pub(super) fn unmeasured_without(
    inp: &Inputs<'_>,
    t: &Timeline,
    l: u32,
    keep: impl Fn(usize) -> bool,
) -> Series {
    let mut s = Series::new(t);
    for (i, ((e, a), p)) in inp.edges.iter().zip(inp.attr).zip(inp.paths).enumerate() {
        if keep(i) && p.as_ref().is_some_and(|p| p.all().any(|x| x == l)) {
            s.add(t.block(e.cs), unmeasured_queue(a, l));
        }
    }
    s
}

/// Host `h`'s evidence without the calls between hosts `a` and `b`: what
/// its other calls say.
pub(super) fn host_without(inp: &Inputs<'_>, t: &Timeline, h: u16, (a, b): (u16, u16)) -> Series {
    residuals(inp, t, |_, e| {
        let touches = e.client_host == h || e.server_host == h;
        touches && !between(e, (a, b))
    })
}

/// Whether `e` is a call between hosts `a` and `b`, either way.
pub(super) fn between(e: &crate::rpc::Edge, (a, b): (u16, u16)) -> bool {
    (e.client_host, e.server_host) == (a, b) || (e.client_host, e.server_host) == (b, a)
}

/// A call's service time less what its server waited on its own calls
/// (`wait`, from [`waiting`]): the service's own work for it.
fn own(e: &crate::rpc::Edge, wait: i64) -> f64 {
    (e.service() - wait).max(0) as f64
}

/// Service `s`'s own work on the requests it served (edges and entries)
/// whose server span `keep` takes (`sr`, `ss`); `wait` from [`waiting`].
pub(super) fn own_work_where(
    inp: &Inputs<'_>,
    t: &Timeline,
    wait: &[i64],
    s: u16,
    keep: impl Fn(i64, i64) -> bool,
) -> Series {
    let mut series = Series::new(t);
    for (e, &w) in inp.edges.iter().zip(wait) {
        if e.callee == s && keep(e.sr, e.ss) {
            series.add(t.block(e.cs), own(e, w));
        }
    }
    for entry in inp.entries.iter().filter(|x| x.service == s) {
        if keep(entry.sr, entry.ss) {
            series.add(t.block(entry.sr), entry.own() as f64);
        }
    }
    series
}

/// The hosts' residual (what neither the fabric nor loss explains) of the
/// calls `keep` takes, by edge index.
pub(super) fn residuals(
    inp: &Inputs<'_>,
    t: &Timeline,
    keep: impl Fn(usize, &crate::rpc::Edge) -> bool,
) -> Series {
    let mut s = Series::new(t);
    for (i, (e, at)) in inp.edges.iter().zip(inp.attr).enumerate() {
        if keep(i, e) {
            s.add(
                t.block(e.cs),
                (e.network() as f64 - at.fabric - at.loss).max(0.0),
            );
        }
    }
    s
}

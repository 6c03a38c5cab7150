//! Culprits that another named culprit explains: a pair of hosts and one
//! of its hosts, a host and the host it only talked to, a host whose
//! change was all in its calls with one other host, hosts behind a named
//! link. Each is judged by what its other calls show; a service's
//! unanswered calls behind a named link are that link's.

use super::candidates;
use super::change::{self, Change};
use super::decide::{Tested, FDR};
use super::timeline::{Series, Timeline};
use super::{CulpritKind, Inputs};
use crate::rpc::Callee;
use rand::rngs::StdRng;
use std::collections::HashMap;

/// How a set of calls is judged: changed when its residual, divided by
/// the stacks' load, changed beyond its own variation by as much as a
/// culprit must add. Without the size, a flat series passes one time in
/// twenty by chance alone and keeps a host named that its other calls
/// clear.
pub(super) struct Judge<'a, 'i> {
    pub inp: &'a Inputs<'i>,
    pub t: &'a Timeline,
    pub load: &'a [f64],
    /// The least a culprit adds over the run, ns.
    pub min_effect_ns: f64,
}

impl Judge<'_, '_> {
    /// Whether hosts' residuals changed, the stacks' load divided out.
    pub(super) fn changed(&self, calls: &Series, rng: &mut StdRng) -> Option<Change> {
        self.measured(calls, rng).filter(|test| self.counts(test))
    }

    pub(super) fn changed_as_is(&self, calls: &Series, rng: &mut StdRng) -> Option<Change> {
        Self::test(calls, rng).filter(|test| self.counts(test))
    }

    /// How much hosts' residuals changed, the stacks' load divided out,
    /// whether or not that is a change that counts; `None` without calls.
    fn measured(&self, calls: &Series, rng: &mut StdRng) -> Option<Change> {
        Self::test(&calls.scaled(self.t, self.load), rng)
    }

    fn test(calls: &Series, rng: &mut StdRng) -> Option<Change> {
        (calls.calls() > 0).then(|| change::test(calls, None, 1, FDR, rng))
    }

    /// Whether a test's change is one: beyond its own variation, and by as
    /// much as a culprit must add.
    fn counts(&self, test: &Change) -> bool {
        test.p <= FDR && test.effect >= self.min_effect_ns
    }
}

/// A pair of hosts whose calls added no more than this many times, per
/// call, what one of its hosts added on its other calls is that host's.
const SPECIFIC: f64 = 2.0;

/// A change's effect per call, for comparing sets of calls of any size.
fn per_call(effect: f64, calls: u64) -> f64 {
    effect / calls.max(1) as f64
}

/// A pair of hosts and one of its hosts both named: the pair explains the
/// host when the host's other calls show no change of their own; the host
/// explains the pair when the pair's calls added no more per call than
/// the host's other calls did. A host whose every call is with the other
/// host is what the pair comes down to when the other host's own other
/// calls are unchanged (the host is named), and is explained by the other
/// host when they changed too (the other host is named).
pub(super) fn explain_away(judge: &Judge<'_, '_>, named: &mut Vec<Tested>, rng: &mut StdRng) {
    let (inp, t) = (judge.inp, judge.t);
    let pairs: Vec<(usize, u16, u16)> = named
        .iter()
        .enumerate()
        .filter(|(_, x)| x.c.kind == CulpritKind::Network && x.c.hosts[0] != x.c.hosts[1])
        .map(|(i, x)| (i, x.c.hosts[0], x.c.hosts[1]))
        .collect();
    let mut drop = vec![false; named.len()];
    for (pi, a, b) in pairs {
        for h in [a, b] {
            let Some(hi) = named
                .iter()
                .position(|x| x.c.kind == CulpritKind::Host && x.c.hosts == [h])
            else {
                continue;
            };
            let rest = candidates::host_without(inp, t, h, (a, b));
            if rest.calls() == 0 {
                let peer = if h == a { b } else { a };
                let peer_rest = candidates::host_without(inp, t, peer, (a, b));
                let peer_changed = judge.changed(&peer_rest, rng).is_some();
                let peer_named = named
                    .iter()
                    .any(|x| x.c.kind == CulpritKind::Host && x.c.hosts == [peer]);
                if !peer_changed {
                    drop[pi] = true;
                } else if peer_named {
                    // The peer's other calls changed too: the peer is the
                    // culprit, and this host only talked to it.
                    drop[hi] = true;
                }
                continue;
            }
            let Some(other) = judge.changed(&rest, rng) else {
                drop[hi] = true;
                continue;
            };
            let pair = &named[pi];
            if per_call(pair.test.effect, pair.c.series.calls())
                <= SPECIFIC * per_call(other.effect, rest.calls())
            {
                drop[pi] = true;
            }
        }
    }
    let mut i = 0;
    named.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
}

/// A host named for a change that was all in its calls with one other
/// host is cleared by its other calls, when they were at least as many
/// and did not change: a slow stack slows every call through it. "Did not
/// change" is more than a test that missed: their change, measured as it
/// is, must also be well below the pair's, per call ([`SPECIFIC`]), or a
/// host that slowed all its calls is put on whichever pair's test passed
/// first. The
/// change is then the other host's, when that host talked to no one else
/// or its own other calls changed too, and otherwise the pair's (the two
/// stacks and the wire between them). The one named instead keeps the
/// host's q-value: the host's test found the change, and its other calls
/// only placed it.
pub(super) fn to_one_pair(
    judge: &Judge<'_, '_>,
    tested: &[Tested],
    named: &mut Vec<Tested>,
    rng: &mut StdRng,
) {
    let (inp, t) = (judge.inp, judge.t);
    let mut instead: Vec<Option<Tested>> = vec![None; named.len()];
    for (x, instead) in named.iter().zip(&mut instead) {
        if x.c.kind != CulpritKind::Host {
            continue;
        }
        let h = x.c.hosts[0];
        let in_named_pair = |y: &Tested| y.c.kind == CulpritKind::Network && y.c.hosts.contains(&h);
        if named.iter().any(in_named_pair) {
            continue;
        }
        // The pair whose calls changed most, as its own test found.
        let Some(pair) = (tested.iter())
            .filter(|y| y.c.kind == CulpritKind::Network && y.c.hosts.contains(&h))
            .filter(|y| y.c.hosts[0] != y.c.hosts[1])
            .filter(|y| judge.counts(&y.test))
            .max_by(|a, b| a.test.effect.total_cmp(&b.test.effect))
        else {
            continue;
        };
        let peer = pair.c.hosts[usize::from(pair.c.hosts[0] == h)];
        let pair_calls = pair.c.series.calls();
        let rest = candidates::host_without(inp, t, h, (h, peer));
        if rest.calls() < pair_calls {
            continue;
        }
        if judge.measured(&rest, rng).is_some_and(|other| {
            judge.counts(&other)
                || per_call(pair.test.effect, pair_calls)
                    <= SPECIFIC * per_call(other.effect, rest.calls())
        }) {
            continue;
        }
        let peer_rest = candidates::host_without(inp, t, peer, (h, peer));
        let (kind, hosts) = match peer_rest.calls() == 0 || judge.changed(&peer_rest, rng).is_some()
        {
            true => (CulpritKind::Host, vec![peer]),
            false => (CulpritKind::Network, vec![h.min(peer), h.max(peer)]),
        };
        *instead = (tested.iter())
            .find(|y| y.c.kind == kind && y.c.hosts == hosts)
            .map(|y| y.found_by(x));
    }
    let mut kept: Vec<Tested> = Vec::with_capacity(named.len());
    for (x, instead) in named.drain(..).zip(instead) {
        let x = instead.unwrap_or(x);
        if !kept
            .iter()
            .any(|y| y.c.kind == x.c.kind && y.c.name == x.c.name)
        {
            kept.push(x);
        }
    }
    *named = kept;
}

/// A host, a pair of hosts or a host link no probe measures, named, whose
/// calls crossed another named link, and whose other calls show no change:
/// the link is what slowed them. A queue or loss that INT saw only in part
/// leaves the rest in the hosts' residual, and a link's wire delay shows in
/// its probes a little after it starts and before it ends, which leaves
/// the calls of those moments' one-way delay on the host link.
pub(super) fn behind_links(judge: &Judge<'_, '_>, named: &mut Vec<Tested>, rng: &mut StdRng) {
    let inp = judge.inp;
    let links: Vec<u32> = named.iter().filter_map(|x| x.c.link).collect();
    named.retain(|x| {
        let hosts = &x.c.hosts;
        let others: Vec<u32> = links
            .iter()
            .copied()
            .filter(|&l| Some(l) != x.c.link)
            .collect();
        let crosses = |i: usize| {
            inp.paths[i]
                .as_ref()
                .is_some_and(|p| p.all().any(|l| others.contains(&l)))
        };
        let ours = |i: usize, e: &crate::rpc::Edge| match (x.c.kind, x.c.link) {
            (CulpritKind::Host, _) => e.client_host == hosts[0] || e.server_host == hosts[0],
            (CulpritKind::Network, _) => candidates::between(e, (hosts[0], hosts[1])),
            (CulpritKind::Link, Some(l)) if inp.index.unmeasured_host_link(l) => inp.paths[i]
                .as_ref()
                .is_some_and(|p| p.all().any(|y| y == l)),
            _ => false,
        };
        let behind = (inp.edges.iter().enumerate()).any(|(i, e)| ours(i, e) && crosses(i));
        if !behind {
            return true;
        }
        match x.c.link {
            Some(l) => {
                let rest = candidates::unmeasured_without(inp, judge.t, l, |i| !crosses(i));
                judge.changed_as_is(&rest, rng).is_some()
            }
            None => {
                let rest = candidates::residuals(inp, judge.t, |i, e| ours(i, e) && !crosses(i));
                judge.changed(&rest, rng).is_some()
            }
        }
    });
}

/// A service named with calls it left unanswered, most of which went where
/// its answered calls from the same host crossed another named link that
/// INT measures: that link may have held or lost them (a throttled link
/// times calls out as a silent callee does, and delivers some after their
/// callers gave up), and it is the one named. A host link no probe
/// measures is named from the one-way delay into its host, which a stalled
/// process on that host makes too: it explains nothing the service's
/// silence does not.
pub(super) fn silence_behind_links(judge: &Judge<'_, '_>, named: &mut Vec<Tested>) {
    let inp = judge.inp;
    let links: Vec<u32> = (named.iter())
        .filter_map(|x| x.c.link)
        .filter(|&l| !inp.index.unmeasured_host_link(l))
        .collect();
    if links.is_empty() {
        return;
    }
    named.retain(|x| {
        let service = inp.services.iter().position(|n| *n == x.c.name);
        let (Some(s), CulpritKind::Service) = (service, x.c.kind) else {
            return true;
        };
        let mut crossed: HashMap<u16, bool> = HashMap::new();
        let (mut calls, mut behind) = (0, 0);
        let unjoined = inp.edges.iter().flat_map(|e| &e.unjoined);
        for u in unjoined.chain(inp.entry_calls) {
            let Callee::Silent { service, from } = u.callee else {
                continue;
            };
            if usize::from(service) != s {
                continue;
            }
            calls += 1;
            let Some(from) = from else { continue };
            let on_link = *crossed.entry(from).or_insert_with(|| {
                (inp.edges.iter().zip(inp.paths)).any(|(answered, path)| {
                    answered.callee as usize == s
                        && answered.client_host == from
                        && (path.as_ref()).is_some_and(|p| p.all().any(|l| links.contains(&l)))
                })
            });
            behind += usize::from(on_link);
        }
        behind == 0 || 2 * behind < calls
    });
}

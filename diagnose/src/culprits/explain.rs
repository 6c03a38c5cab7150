//! Culprits that another named culprit explains: a pair of hosts and one
//! of its hosts, a host and the host it only talked to, hosts behind a
//! named link. Each is judged by what its other calls show.

use super::candidates;
use super::change;
use super::decide::{Tested, FDR};
use super::timeline::Timeline;
use super::{CulpritKind, Inputs};
use rand::rngs::StdRng;

/// A pair of hosts whose calls added no more than this many times, per
/// call, what one of its hosts added on its other calls is that host's.
const SPECIFIC: f64 = 2.0;

/// A pair of hosts and one of its hosts both named: the pair explains the
/// host when the host's other calls show no change of their own; the host
/// explains the pair when the pair's calls added no more per call than
/// the host's other calls did. A host whose every call is with the other
/// host is what the pair comes down to when the other host's own other
/// calls are unchanged (the host is named), and is explained by the other
/// host when they changed too (the other host is named).
pub(super) fn explain_away(
    inp: &Inputs<'_>,
    t: &Timeline,
    load: &[f64],
    named: &mut Vec<Tested>,
    rng: &mut StdRng,
) {
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
            let rest = candidates::host_without(inp, t, h, (a, b)).scaled(t, load);
            if rest.calls() == 0 {
                let peer = if h == a { b } else { a };
                let peer_rest = candidates::host_without(inp, t, peer, (a, b));
                let peer_changed = peer_rest.calls() > 0
                    && change::test(&peer_rest.scaled(t, load), &[], 1, FDR, rng).p <= FDR;
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
            let other = change::test(&rest, &[], 1, FDR, rng);
            if other.p > FDR {
                drop[hi] = true;
                continue;
            }
            let per_call = |effect: f64, calls: u64| effect / calls.max(1) as f64;
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

/// A host or pair of hosts named whose calls crossed a named link, and
/// whose other calls show no change: the link is what slowed them (a
/// queue or loss that INT saw only in part leaves the rest in the hosts'
/// residual).
pub(super) fn behind_links(
    inp: &Inputs<'_>,
    t: &Timeline,
    load: &[f64],
    named: &mut Vec<Tested>,
    rng: &mut StdRng,
) {
    let links: Vec<u32> = named.iter().filter_map(|x| x.c.link).collect();
    if links.is_empty() {
        return;
    }
    let crosses = |i: usize| {
        inp.paths[i]
            .as_ref()
            .is_some_and(|p| p.all().any(|l| links.contains(&l)))
    };
    named.retain(|x| {
        let hosts = &x.c.hosts;
        let ours = |e: &crate::rpc::Edge| match x.c.kind {
            CulpritKind::Host => e.client_host == hosts[0] || e.server_host == hosts[0],
            CulpritKind::Network => candidates::between(e, (hosts[0], hosts[1])),
            _ => false,
        };
        if !matches!(x.c.kind, CulpritKind::Host | CulpritKind::Network)
            || !inp
                .edges
                .iter()
                .enumerate()
                .any(|(i, e)| ours(e) && crosses(i))
        {
            return true;
        }
        let rest = candidates::residuals(inp, t, |i, e| ours(e) && !crosses(i)).scaled(t, load);
        rest.calls() > 0 && change::test(&rest, &[], 1, FDR, rng).p <= FDR
    });
}

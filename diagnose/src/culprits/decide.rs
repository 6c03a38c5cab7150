//! Which candidates are culprits: tested, adjusted for how many were
//! tested, large enough to matter, and not explained by a more specific
//! one.

use super::candidates::{self, Candidate, Load};
use super::change::{self, Change};
use super::stats::{benjamini_hochberg, normal_upper_tail, poisson_at_least};
use super::timeline::{self, Timeline};
use super::{ms, Culprit, CulpritKind, Inputs};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;

/// False discovery rate of the culprits named.
pub const FDR: f64 = 0.05;
/// A culprit adds at least this share of the mean request's time...
const MIN_SHARE: f64 = 0.001;
/// ... and at least this much per request, ms.
const MIN_EFFECT_MS: f64 = 0.01;
/// Candidates with fewer calls in the run are not tested.
const MIN_CALLS: u64 = 20;
/// The shuffles are seeded: the same input gives the same culprits.
const SEED: u64 = 0x1a7e_5eed;
/// A pair of hosts whose calls added no more than this many times, per
/// call, what one of its hosts added on its other calls is that host's.
const SPECIFIC: f64 = 2.0;

/// One tested candidate.
struct Tested {
    c: Candidate,
    test: Change,
    /// The p-value the decision uses (the change test's, or for a lossy
    /// link the better of it and the probes', Bonferroni-corrected).
    p: f64,
    q: f64,
    effect_ms: f64,
    evidence: serde_json::Value,
}

/// The culprits, and every candidate tested (culprits included), each as
/// a [`Culprit`] with its test's outcome.
pub(super) fn assess(inp: &Inputs<'_>) -> (Vec<Culprit>, Vec<Culprit>) {
    let Some(requests) = Requests::of(inp) else {
        return (Vec::new(), Vec::new());
    };
    let t = Timeline::new(requests.first, requests.last, requests.count);
    let cands: Vec<Candidate> = candidates::collect(inp, &t)
        .into_iter()
        .filter(|c| c.series.calls() >= MIN_CALLS)
        // A candidate that added nothing on any call (a host link INT
        // never saw queue) cannot be a culprit, and counting it among the
        // tests would only raise every other candidate's q-value.
        .filter(|c| c.series.sum.iter().any(|&s| s != 0.0))
        .collect();
    // Services' own work and the hosts' stacks feel a loaded machine each
    // in their own measure (an interpreter's request handling far more
    // than a service waiting on its database): each is divided by the
    // factor its own kind shares.
    let of = |group: Load, pairs: bool| -> Vec<&timeline::Series> {
        cands
            .iter()
            .filter(|c| c.load == Some(group) && (c.kind == CulpritKind::Network) == pairs)
            .map(|c| &c.series)
            .collect()
    };
    let work_load = timeline::common_factor(&t, &of(Load::Work, false));
    // Pairs of hosts share the stacks' factor but do not set it: a busy
    // host is in most pairs, and its fault would pass for load.
    let stacks = of(Load::Stack, false);
    // The stacks' own factor where it agrees with the services' (a
    // synthetic fabric's stacks, microseconds apart, would otherwise
    // divide noise by noise), and where three in four pairs of hosts were
    // slowed at least twice as much as the services were: a stall of the
    // whole machine, which an interpreter's stack feels and a service's
    // work does not. Pairs, not hosts: a slow host that every other host
    // calls slows every host's calls, but not the pairs without it. And
    // the other way round, where three in four pairs were at most half as
    // slow: a lull of a machine loaded for most of the run.
    let pairs = of(Load::Stack, true);
    let stalled = timeline::factor_at(&t, &pairs, 0.25);
    let lull = timeline::factor_at(&t, &pairs, 0.75);
    let stack_load = timeline::common_factor(&t, &stacks)
        .into_iter()
        .zip(&work_load)
        .zip(stalled.into_iter().zip(lull))
        .map(|((s, w), (low, high))| {
            if (0.5..=2.0).contains(&(s / w)) || low >= 2.0 * w || high <= 0.5 * w {
                s
            } else {
                *w
            }
        })
        .collect::<Vec<f64>>();
    let mut rng = StdRng::seed_from_u64(SEED);
    let m = cands.len();
    let typical = QueueLevels::of(&cands);
    let mut tested: Vec<Tested> = cands
        .into_iter()
        .map(|c| {
            let series = match c.load {
                Some(Load::Work) => c.series.scaled(&t, &work_load),
                Some(Load::Stack) => c.series.scaled(&t, &stack_load),
                None => c.series.clone(),
            };
            let test = change::test(&series, m, FDR, &mut rng);
            tracing::debug!(
                "{} {}: window means {:?} (divided by the {:?} load), p {}",
                c.kind,
                c.name,
                series.window_means_ms(),
                c.load,
                test.p
            );
            let (p, effect, evidence) = evidence(inp, &c, &test, typical);
            Tested {
                effect_ms: effect / requests.count as f64 / 1e6,
                c,
                test,
                p,
                q: 1.0,
                evidence,
            }
        })
        .collect();
    let p: Vec<f64> = tested.iter().map(|x| x.p).collect();
    for (x, q) in tested.iter_mut().zip(benjamini_hochberg(&p)) {
        x.q = q;
    }
    let min_effect = MIN_EFFECT_MS.max(MIN_SHARE * requests.mean_ms);
    let all: Vec<Culprit> = tested.iter().map(Tested::culprit).collect();
    let mut named: Vec<Tested> = tested
        .into_iter()
        .filter(|x| x.q <= FDR && x.effect_ms >= min_effect)
        .collect();
    explain_away(inp, &t, &stack_load, &mut named, &mut rng);
    behind_links(inp, &t, &stack_load, &mut named, &mut rng);
    one_per_link(&mut named);
    (named.iter().map(Tested::culprit).collect(), all)
}

impl Tested {
    fn culprit(&self) -> Culprit {
        Culprit {
            kind: self.c.kind,
            name: self.c.name.clone(),
            score: round3(self.effect_ms),
            q_value: Some(self.q),
            effect_ms: Some(round3(self.effect_ms)),
            evidence: self.evidence.clone(),
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// The run's requests: how many, when, how long on average.
struct Requests {
    count: usize,
    first: i64,
    last: i64,
    mean_ms: f64,
}

impl Requests {
    fn of(inp: &Inputs<'_>) -> Option<Self> {
        let traces = inp.edges.iter().map(|e| e.trace as usize + 1).max()?;
        let mut span = vec![(i64::MAX, i64::MIN); traces];
        for e in inp.edges {
            let s = &mut span[e.trace as usize];
            *s = (s.0.min(e.cs), s.1.max(e.cr));
        }
        let seen: Vec<(i64, i64)> = span.into_iter().filter(|s| s.0 <= s.1).collect();
        let mean_ms =
            seen.iter().map(|s| (s.1 - s.0) as f64).sum::<f64>() / seen.len() as f64 / 1e6;
        Some(Requests {
            count: seen.len(),
            first: seen.iter().map(|s| s.0).min()?,
            last: seen.iter().map(|s| s.0).max()?,
            mean_ms,
        })
    }
}

/// The p-value a candidate is judged by, the time it added over the run
/// (ns), and the evidence printed with them.
fn evidence(
    inp: &Inputs<'_>,
    c: &Candidate,
    t: &Change,
    typical: QueueLevels,
) -> (f64, f64, serde_json::Value) {
    let mut ev = json!({
        "calls": c.series.calls(),
        "quiet_ms": ms(t.floor),
        "p_change": t.p,
    });
    let (mut p, mut effect) = (t.p, t.effect);
    if let (Some(l), Some(e)) = (c.link, inp.evidence) {
        match c.kind {
            CulpritKind::Loss => {
                // A healthy link loses (almost) no probe: probes lost on
                // this link against the fabric's typical loss rate.
                let (sent, lost) = e.loss_counts(l);
                let floor = typical_loss(inp);
                let p_probes = poisson_at_least(lost, sent as f64 * floor);
                // A link that loses all the time leaves no quiet windows
                // to measure a change from: what its probes prove is its
                // loss above the fabric's, and the gaps it caused are
                // that share of all those put on it.
                if p_probes < t.p && lost > 0 {
                    let above = 1.0 - floor * sent as f64 / lost as f64;
                    effect = effect.max(c.series.sum.iter().sum::<f64>() * above.max(0.0));
                }
                p = (2.0 * p.min(p_probes)).min(1.0);
                ev["probes_sent"] = json!(sent);
                ev["probes_lost"] = json!(lost);
                ev["p_probes"] = json!(p_probes);
            }
            _ => {
                // INT measures a link's queue whenever requests cross it:
                // a link whose crossings queued more than the fabric's
                // links do is hot while it is used, whether or not that is
                // concentrated in time (an incast that recurs all run
                // long); then the time it added is its queueing above the
                // typical link's.
                let p_queue = typical.p_above(&c.series);
                if p_queue < t.p {
                    let calls = c.series.calls() as f64;
                    let level = c.series.sum.iter().sum::<f64>() - calls * typical.median;
                    effect = effect.max(level);
                }
                p = (2.0 * p.min(p_queue)).min(1.0);
                ev["mean_queue_us"] = json!((inp.link_heat[l as usize] / 1e3).round());
                ev["p_queue"] = json!(p_queue);
            }
        }
    }
    (p, effect, ev)
}

/// The loss rate of the cleanest link probes cross, at least 10⁻⁴ so that
/// a fabric that lost nothing still gives a finite expectation. (Not the
/// median: a plan of few paths leaves half the links on the lossy one.)
fn typical_loss(inp: &Inputs<'_>) -> f64 {
    (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l])
        .map(|l| inp.link_loss[l])
        .fold(f64::INFINITY, f64::min)
        .max(1e-4)
}

/// A pair of hosts and one of its hosts both named: the pair explains the
/// host when the host's other calls show no change of their own; the host
/// explains the pair when the pair's calls added no more per call than
/// the host's other calls did. A host whose every call is with the other
/// host is what the pair comes down to when the other host's own other
/// calls are unchanged (the host is named), and is explained by the other
/// host when they changed too (the other host is named).
fn explain_away(
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
                    && change::test(&peer_rest.scaled(t, load), 1, FDR, rng).p <= FDR;
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
            let other = change::test(&rest, 1, FDR, rng);
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
fn behind_links(
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
        rest.calls() > 0 && change::test(&rest, 1, FDR, rng).p <= FDR
    });
}

/// A link named for its queue and for its loss is one culprit, of the kind
/// that added more time. Lossy links that only the same probes measure
/// (the links of one path that no other path crosses) lost the same
/// probes; the requests' gaps say which of them it was, so only the one
/// with the most time to its name is kept.
fn one_per_link(named: &mut Vec<Tested>) {
    named.sort_by(|a, b| b.effect_ms.total_cmp(&a.effect_ms));
    let mut seen = std::collections::HashSet::new();
    let mut probes = std::collections::HashSet::new();
    named.retain(|x| match x.c.link {
        Some(l) if x.c.kind == CulpritKind::Loss => {
            let same = (&x.evidence["probes_sent"], &x.evidence["probes_lost"]);
            seen.insert(l) && probes.insert(same.0.to_string() + "/" + &same.1.to_string())
        }
        Some(l) => seen.insert(l),
        None => true,
    });
}

/// What the fabric's links queue per crossing when nothing is wrong with
/// them: the median of the links' means, and how far links' means spread
/// around it, on a log scale (queueing grows with a link's load many times
/// over, so busier links differ from the rest by a factor, not by a
/// constant): the MAD of the log means, scaled to a normal σ. A link is
/// compared with the other links, not only with its own sampling error:
/// with thousands of crossings, that error alone would call half the
/// fabric hot.
#[derive(Debug, Clone, Copy)]
struct QueueLevels {
    /// Median of the links' mean queueing per crossing, ns.
    median: f64,
    /// Spread of the links' log means.
    sigma: f64,
}

/// Means below this (ns) are taken as this on the log scale: an idle link
/// is not infinitely cooler than one queueing a packet now and then.
const QUEUE_FLOOR_NS: f64 = 1_000.0;

impl QueueLevels {
    fn of(cands: &[Candidate]) -> Self {
        let mut logs: Vec<f64> = cands
            .iter()
            .filter(|c| c.kind == CulpritKind::Link && c.series.calls() > 0)
            .map(|c| mean_of(&c.series).max(QUEUE_FLOOR_NS).ln())
            .collect();
        let median = timeline::median(&mut logs);
        let mut dev: Vec<f64> = logs.iter().map(|m| (m - median).abs()).collect();
        QueueLevels {
            median: median.exp(),
            sigma: 1.4826 * timeline::median(&mut dev),
        }
    }

    /// One-sided p-value that the calls of `s` crossed a link hotter than
    /// the fabric's links: their log mean against the links' spread and
    /// its own standard error.
    fn p_above(&self, s: &timeline::Series) -> f64 {
        let n = s.calls() as f64;
        if n < 2.0 {
            return 1.0;
        }
        let mean = mean_of(s);
        let var = (s.sumsq.iter().sum::<f64>() / n - mean * mean).max(0.0);
        let m = mean.max(QUEUE_FLOOR_NS);
        let sd = (self.sigma * self.sigma + var / n / (m * m)).sqrt();
        let z = m.ln() - self.median.max(QUEUE_FLOOR_NS).ln();
        if sd <= 0.0 {
            return if z > 0.0 { 0.0 } else { 1.0 };
        }
        normal_upper_tail(z / sd)
    }
}

fn mean_of(s: &timeline::Series) -> f64 {
    s.sum.iter().sum::<f64>() / s.calls().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link whose 2000 crossings queued `mean_us` on average, ±20 %.
    fn link(t: &Timeline, mean_us: f64) -> Candidate {
        let mut c = Candidate::new(CulpritKind::Link, format!("{mean_us}"), t, None);
        for i in 0..2000 {
            let wobble = if i % 2 == 0 { 0.8 } else { 1.2 };
            c.series.add(i % t.blocks(), mean_us * 1e3 * wobble);
        }
        c
    }

    #[test]
    fn a_link_is_hot_against_the_other_links_not_its_own_error_alone() {
        let t = Timeline::new(0, 9_999_999_999, 400);
        // Links carry different traffic: 20–40 µs is the fabric's spread.
        let mut links: Vec<Candidate> = (0..21).map(|i| link(&t, 20.0 + i as f64)).collect();
        links.push(link(&t, 1000.0));
        let levels = QueueLevels::of(&links);
        // The busiest ordinary link, thousands of crossings past the
        // median, is within the spread; an incast's link is not.
        assert!(levels.p_above(&links[20].series) > 0.01, "{levels:?}");
        assert!(levels.p_above(&links[21].series) < 1e-6, "{levels:?}");
    }
}

//! Which candidates are culprits: tested, adjusted for how many were
//! tested, large enough to matter, and not explained by a more specific
//! one.

use super::candidates::{self, Candidate, Load};
use super::change::{self, Change};
use super::explain;
use super::healthy::{Compared, Healthy};
use super::held;
use super::levels::{self, QueueLevels};
use super::load_factor;
use super::requests::Requests;
use super::stats::{benjamini_hochberg, poisson_at_least};
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
/// The share of a service's calls, its slowest in the run, that its tail
/// view counts. A fault on a share of the calls moves them into the tail
/// whatever the rest's noise, where a window's mean weighs one stalled
/// call like many slowed ones. A tenth keeps a fault on a fifth of the
/// calls in view (a fifth missed a +2 ms fault on 20 % of a service's
/// calls in the synth matrix).
const TAIL_SHARE: f64 = 0.1;
/// The shuffles are seeded: the same input gives the same culprits.
const SEED: u64 = 0x1a7e_5eed;

/// A candidate's own shuffles, seeded by its kind and name: its p-value
/// does not move when another candidate joins or leaves the tests, as it
/// would if all drew from one stream in turn (a p-value near a bound then
/// crossed it with the Monte Carlo error alone). FNV-1a, stable across
/// builds and platforms, unlike the standard library's hasher.
fn shuffles_of(c: &Candidate) -> StdRng {
    let text = format!("{} {}", c.kind, c.name);
    let hash = (text.bytes()).fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    StdRng::seed_from_u64(SEED ^ hash)
}

/// One tested candidate.
#[derive(Clone)]
pub(super) struct Tested {
    pub c: Candidate,
    pub test: Change,
    /// The p-value the decision uses (the change test's, or for a lossy
    /// link the better of it and the probes', Bonferroni-corrected).
    p: f64,
    q: f64,
    pub effect_ms: f64,
    evidence: serde_json::Value,
}

/// The culprits, and every candidate tested (culprits included), each as
/// a [`Culprit`] with its test's outcome.
pub(super) fn assess(inp: &Inputs<'_>) -> (Vec<Culprit>, Vec<Culprit>) {
    let Some(requests) = Requests::of(inp.edges, inp.entries) else {
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
    // Callees without spans (a database) are divided by the services'
    // factor but do not set it: one slow database among few services would
    // pass for the machine's load. Unless there are too few services to
    // set one (a monolith and its stores): then all of them set it, or a
    // loaded machine would pass for a fault of each.
    let of = |group: Load, pairs: bool, stores: bool| -> Vec<&timeline::Series> {
        cands
            .iter()
            .filter(|c| c.load == Some(group) && (c.kind == CulpritKind::Network) == pairs)
            .filter(|c| stores || c.kind != CulpritKind::Dependency)
            .map(|c| &c.series)
            .collect()
    };
    let services = of(Load::Work, false, false);
    let work_load = match services.len() >= load_factor::MIN_SAYING {
        true => load_factor::common_factor(&t, &services),
        false => load_factor::common_factor(&t, &of(Load::Work, false, true)),
    };
    // Pairs of hosts share the stacks' factor but do not set it: a busy
    // host is in most pairs, and its fault would pass for load.
    let stacks = of(Load::Stack, false, false);
    // The stacks' own factor where it agrees with the services' (a
    // synthetic fabric's stacks, microseconds apart, would otherwise
    // divide noise by noise), and where three in four pairs of hosts were
    // slowed at least twice as much as the services were: a stall of the
    // whole machine, which an interpreter's stack feels and a service's
    // work does not. Pairs, not hosts: a slow host that every other host
    // calls slows every host's calls, but not the pairs without it. And
    // the other way round, where three in four pairs were at most half as
    // slow: a lull of a machine loaded for most of the run.
    let pairs = of(Load::Stack, true, false);
    let stalled = load_factor::factor_at(&t, &pairs, 0.25);
    let lull = load_factor::factor_at(&t, &pairs, 0.75);
    let stack_load = load_factor::common_factor(&t, &stacks)
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
    let typical = QueueLevels::of(&cands);
    let healthy = Healthy::of(inp, &t, &cands, TAIL_SHARE);
    let min_effect = MIN_EFFECT_MS.max(MIN_SHARE * requests.mean_ms);
    let ns_per_request_ms = requests.count as f64 * 1e6;
    // Each candidate as it is tested, and only those whose evidence could
    // add enough to be named in some order of its blocks: the others
    // cannot be culprits, and counting them would raise every q-value.
    // Those a baseline compares are all tested: their evidence is also how
    // far they stand above the baseline, which is the comparison's own
    // statistic and cannot be filtered on.
    let scaled: Vec<(Candidate, timeline::Series)> = cands
        .into_iter()
        .map(|c| {
            let series = match c.load {
                Some(Load::Work) => c.series.unloaded(&t, &work_load),
                Some(Load::Stack) => c.series.scaled(&t, &stack_load),
                None => c.series.clone(),
            };
            (c, series)
        })
        .filter(|(c, series)| {
            healthy.as_ref().is_some_and(|h| h.compares(c))
                || potential(c, series, typical) / ns_per_request_ms >= min_effect
        })
        .collect();
    // Services, and callees without spans, are also tested on their tails
    // ([`CulpritKind::has_tail`]). A loaded machine moves every service's
    // tail, and more than their means (a stall lands whole in the few calls
    // it hits): the services' tails' own common factor divides it out.
    let tails: Vec<Option<timeline::Series>> = (scaled.iter())
        .map(|(c, s)| c.kind.has_tail().then(|| s.tail(TAIL_SHARE)))
        .collect();
    let services_tails: Vec<&timeline::Series> = (scaled.iter().zip(&tails))
        .filter(|((c, _), _)| c.kind == CulpritKind::Service)
        .filter_map(|(_, tail)| tail.as_ref())
        .collect();
    let tail_load = load_factor::tail_factor(&t, &services_tails);
    let tails: Vec<Option<timeline::Series>> = (tails.into_iter())
        .map(|x| x.map(|s| s.scaled(&t, &tail_load)))
        .collect();
    // A host that talks to one other host only has the evidence of that
    // pair: one test for both, counted once among the tests.
    let twin: Vec<usize> = (0..scaled.len())
        .map(|i| {
            let (c, s) = &scaled[i];
            (0..i)
                .find(|&j| c.link.is_none() && scaled[j].0.link.is_none() && scaled[j].1 == *s)
                .unwrap_or(i)
        })
        .collect();
    let m = twin.iter().enumerate().filter(|&(i, &j)| i == j).count();
    let mut tested: Vec<Tested> = Vec::with_capacity(scaled.len());
    for (i, ((c, series), tail)) in scaled.into_iter().zip(&tails).enumerate() {
        let mut shuffles = shuffles_of(&c);
        let test = match twin[i] < i {
            true => tested[twin[i]].test,
            false => change::test(&series, tail.as_ref(), m, FDR, &mut shuffles),
        };
        let compared = (healthy.as_ref()).and_then(|b| b.compare(&c, m, FDR, &mut shuffles));
        tracing::debug!(
            "{} {}: window means {:?} (divided by the {:?} load), p {}",
            c.kind,
            c.name,
            series.window_means_ms(),
            c.load,
            test.p
        );
        let (p, effect, evidence) = evidence(inp, &c, &test, compared, typical, &t);
        tested.push(Tested {
            effect_ms: effect / ns_per_request_ms,
            c,
            test,
            p,
            q: 1.0,
            evidence,
        });
    }
    // Benjamini-Hochberg over the distinct tests; a twin takes its q-value.
    let firsts: Vec<usize> = (0..tested.len()).filter(|&i| twin[i] == i).collect();
    let p: Vec<f64> = firsts.iter().map(|&i| tested[i].p).collect();
    let mut q = vec![1.0; tested.len()];
    for (&i, qi) in firsts.iter().zip(benjamini_hochberg(&p)) {
        q[i] = qi;
    }
    for (i, x) in tested.iter_mut().enumerate() {
        x.q = q[twin[i]];
    }
    let all: Vec<Culprit> = tested.iter().map(Tested::culprit).collect();
    let mut named: Vec<Tested> = (tested.iter())
        .filter(|x| x.q <= FDR && x.effect_ms >= min_effect)
        .cloned()
        .collect();
    let judge = explain::Judge {
        inp,
        t: &t,
        load: &stack_load,
        min_effect_ns: min_effect * ns_per_request_ms,
    };
    explain::explain_away(&judge, &mut named, &mut rng);
    explain::to_one_pair(&judge, &tested, &mut named, &mut rng);
    explain::behind_links(&judge, &mut named, &mut rng);
    explain::silence_behind_links(&judge, &mut named);
    held::held_by_stuck_calls(&judge, &mut named, &mut rng);
    one_per_link(&mut named);
    (named.iter().map(Tested::culprit).collect(), all)
}

impl Tested {
    /// This candidate, named for the change `by`'s test found and another
    /// test placed on it ([`explain::to_one_pair`]): `by`'s q-value where
    /// it is the smaller.
    pub(super) fn found_by(&self, by: &Tested) -> Tested {
        let mut x = self.clone();
        if by.q < x.q {
            (x.p, x.q) = (by.p, by.q);
        }
        x.evidence["found_by"] = json!(format!("{} {}", by.c.kind, by.c.name));
        x
    }

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

/// The most time (ns) a candidate's evidence could be found to add, in any
/// order of its blocks: what its blocks hold above their lower quartile
/// (the change test's quiet level at its lowest), and for a link what it
/// queued above the fabric's typical link, for a lossy link all its gaps.
/// It does not depend on when the blocks came, which is all the change
/// test looks at, so leaving out the candidates it rules out keeps that
/// test's false discovery bound (independent filtering).
fn potential(c: &Candidate, series: &timeline::Series, typical: QueueLevels) -> f64 {
    // Blocks of a few calls set the quartile where there are any.
    let least = match series.n.iter().any(|&n| n >= 3) {
        true => 3,
        false => 1,
    };
    let mut means: Vec<f64> = (series.sum.iter().zip(&series.n))
        .filter(|(_, &n)| n >= least)
        .map(|(s, &n)| s / f64::from(n))
        .collect();
    let k = means.len().saturating_sub(1) / 4;
    let floor = match means.is_empty() {
        true => 0.0,
        false => *means.select_nth_unstable_by(k, f64::total_cmp).1,
    };
    let blocks: f64 = (series.sum.iter().zip(&series.n))
        .map(|(s, &n)| (s - floor * f64::from(n)).max(0.0))
        .sum();
    let beyond = match c.kind {
        CulpritKind::Link => series.total() - series.calls() as f64 * typical.median,
        CulpritKind::Loss => series.total(),
        CulpritKind::Service => c.silence.excess_ns,
        _ => 0.0,
    };
    blocks.max(beyond)
}

/// The p-value a candidate is judged by, the time it added over the run
/// (ns), and the evidence printed with them.
fn evidence(
    inp: &Inputs<'_>,
    c: &Candidate,
    t: &Change,
    compared: Option<Compared>,
    typical: QueueLevels,
    timeline: &Timeline,
) -> (f64, f64, serde_json::Value) {
    let mut ev = json!({
        "calls": c.series.calls(),
        "quiet_ms": ms(t.floor),
        "p_change": t.p,
    });
    if let Some((first, last)) = t.during {
        ev["during_s"] = json!([
            timeline.window_start_s(first),
            timeline.window_start_s(last + 1)
        ]);
    }
    let (mut p, mut effect) = (t.p, t.effect);
    if let Some(b) = compared {
        // Two tests of one candidate: either may find it, at twice its
        // p-value (Bonferroni).
        if b.p < t.p {
            effect = effect.max(b.effect);
            ev["during_s"] = json!([0.0, timeline.window_start_s(timeline.windows)]);
        }
        p = (2.0 * p.min(b.p)).min(1.0);
        ev["baseline_ms"] = json!(ms(b.level));
        ev["p_baseline"] = json!(b.p);
    }
    let silence = c.silence;
    if silence.calls > 0 {
        // Unanswered calls gathered on this service beyond its share of the
        // calls: what their waits cost over an answer is its effect.
        if silence.p < t.p {
            effect = effect.max(silence.excess_ns);
        }
        p = (2.0 * p.min(silence.p)).min(1.0);
        ev["unanswered_calls"] = json!(silence.calls);
        ev["p_unanswered"] = json!(silence.p);
    }
    if let (Some(l), Some(e)) = (c.link, inp.evidence) {
        match c.kind {
            CulpritKind::Loss => {
                // A healthy link loses (almost) no probe: probes lost on
                // this link against the fabric's typical loss rate.
                let (sent, lost) = e.loss_counts(l);
                let floor = levels::typical_loss(inp);
                let p_probes = poisson_at_least(lost, sent as f64 * floor);
                // A link that loses all the time leaves no quiet windows
                // to measure a change from: what its probes prove is its
                // loss above the fabric's, and the gaps it caused are
                // that share of all those put on it.
                if p_probes < t.p && lost > 0 {
                    let above = 1.0 - floor * sent as f64 / lost as f64;
                    effect = effect.max(c.series.total() * above.max(0.0));
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
                    let level = c.series.total() - calls * typical.median;
                    effect = effect.max(level);
                }
                p = (2.0 * p.min(p_queue)).min(1.0);
                ev["mean_queue_us"] = json!((inp.link_heat[l as usize] / 1e3).round());
                ev["mean_wire_us"] = json!((e.mean_wire(l) / 1e3).round());
                ev["p_queue"] = json!(p_queue);
            }
        }
    }
    (p, effect, ev)
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

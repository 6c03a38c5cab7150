//! Candidate mappings of one incoming request: one outgoing call per slot
//! of a call-graph variant, each inside the request's window and after the
//! stage before it answered (TraceWeaver §4.1, step 1), ranked by the
//! log-likelihood of the gaps between consecutive events (step 4).
//!
//! A stage's first call is scored from the stage's start (the request's
//! arrival, or the answer that ended the stage before); each further call
//! of the stage from the call sent before it. Parallel calls leave together
//! whatever the request waited in the service's queue, so that gap stays
//! narrow where the one from the arrival spreads with the queue.

use super::callgraph::{Arrival, CallGraph};
use super::scoring::Mixture;
use super::view::{Ev, In, View};

/// Partial mappings kept per slot while enumerating.
const BEAM: usize = 48;

/// A service's variants with callee ids, and the gap distribution of each
/// slot plus one for the last answer → response gap.
#[derive(Debug, Clone)]
pub struct Shape {
    pub stages: Vec<Vec<u16>>,
    pub ln_share: f64,
    pub gaps: Vec<Mixture>,
    /// Expected wait (ns) per request queued ahead: the first call's gap
    /// from the arrival is scored after taking this much per queued
    /// request off it, since a queue's wait is what spreads that gap.
    pub wait_per_queued: f64,
    /// The calling service whose requests take this variant (`None`: any).
    pub caller: Option<u16>,
    /// At a service that gathers: the requests that take it by where they
    /// arrived among their request's visits, whatever their caller.
    pub arrival: Option<Arrival>,
}

impl Shape {
    pub fn slots(&self) -> usize {
        self.stages.iter().map(Vec::len).sum()
    }

    /// The variants of `service` whose callees all occur in the input.
    pub fn of(cg: &CallGraph, service: &str, ids: &[String]) -> Vec<Shape> {
        let id = |n: &str| ids.iter().position(|s| s == n).map(|i| i as u16);
        cg.services
            .get(service)
            .into_iter()
            .flatten()
            .filter_map(|v| {
                let caller = match &v.caller {
                    Some(c) => Some(id(c)?),
                    None => None,
                };
                let stages = v
                    .stages
                    .iter()
                    .map(|s| s.iter().map(|c| id(c)).collect::<Option<Vec<_>>>())
                    .collect::<Option<Vec<_>>>()?;
                let n: usize = stages.iter().map(Vec::len).sum();
                Some(Shape {
                    stages,
                    ln_share: v.share.max(1e-6).ln(),
                    gaps: vec![Mixture::gaussian(0.0, 1e6); n + 1],
                    wait_per_queued: 0.0,
                    caller,
                    arrival: v.arrival,
                })
            })
            .collect()
    }
}

/// The variants request `x` may take: at a service that gathers, where
/// its arrival is known and variants were learned for it, those; else
/// those learned for its caller; for a caller the call graph never saw
/// with this service, every caller's (caller-blind, as before callers were
/// told apart).
pub fn applicable<'a>(shapes: &'a [Shape], x: &In) -> impl Iterator<Item = (usize, &'a Shape)> {
    let (caller, arrival) = (x.caller, x.arrival);
    let by_arrival = arrival.is_some() && shapes.iter().any(|s| s.arrival == arrival);
    let own = shapes
        .iter()
        .any(|s| s.arrival.is_none() && s.caller == caller);
    shapes
        .iter()
        .enumerate()
        .filter(move |(_, s)| match by_arrival {
            true => s.arrival == arrival,
            false => s.arrival.is_none() && (!own || s.caller == caller),
        })
}

/// One candidate: the variant and the outgoing call (index into
/// [`View::outs`]) of each of its slots.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    pub variant: u16,
    pub children: Vec<usize>,
    /// Sum of gap log-likelihoods plus the variant's log share.
    pub score: f64,
    /// `score` measured from each gap's implausibility floor, so a mapping
    /// that explains more calls plausibly weighs more (MWIS weight).
    pub weight: f64,
}

#[derive(Clone)]
struct Partial {
    children: Vec<usize>,
    score: f64,
    weight: f64,
    anchor: Ev,
    /// The stage's last call sent so far: the next call's gap starts there.
    sibling: Option<Ev>,
    stage_end: Option<Ev>,
}

fn later(a: Option<Ev>, b: Ev) -> Ev {
    match a {
        None => b,
        Some(a) => Ev {
            t: a.t.max(b.t),
            lo: a.lo.max(b.lo),
            hi: a.hi.max(b.hi),
            sd: a.sd.max(b.sd),
        },
    }
}

/// The best `k` feasible mappings of `x`, best first, and besides them
/// the best `k` of each variant whose calls are the best mapping's
/// variant's with some skipped (that variant included); calls marked in
/// `used` are not candidates.
///
/// A `rating` upload at `compose-review` stores the review with three
/// calls, or two when the movie's review list is cached, or none when it
/// failed: the three-call variant's near-misses (a neighbour's call glued
/// in) fill the `k` and the request's true two-call mapping is no
/// candidate unless it keeps its own. A variant that is no such subset
/// (a search request at HotelReservation's `frontend` against a login's
/// `user`, `reservation`) gets no places of its own: its mappings use
/// other requests' calls, and past capacity, where every gap is plausible,
/// the MWIS gives them to a request that lost its own calls, which then
/// leaves the other request with nothing.
pub fn candidates(view: &View, shapes: &[Shape], x: &In, used: &[bool], k: usize) -> Vec<Mapping> {
    let mut all = Vec::new();
    let min_share = applicable(shapes, x)
        .map(|(_, s)| s.ln_share)
        .fold(0.0, f64::min);
    for (vi, shape) in applicable(shapes, x) {
        let mut beam = vec![Partial {
            children: Vec::new(),
            score: shape.ln_share,
            weight: 1.0 + shape.ln_share - min_share,
            anchor: x.start,
            sibling: None,
            stage_end: None,
        }];
        let mut slot = 0;
        for stage in &shape.stages {
            for &callee in stage {
                let gap = Gap {
                    dist: &shape.gaps[slot],
                    wait: if slot == 0 {
                        shape.wait_per_queued * f64::from(x.queued)
                    } else {
                        0.0
                    },
                };
                let mut next = Vec::new();
                for p in &beam {
                    extend(view, x, p, callee, &gap, used, &mut next);
                }
                next.sort_by(|a, b| b.score.total_cmp(&a.score));
                next.truncate(BEAM);
                beam = next;
                slot += 1;
            }
            for p in &mut beam {
                p.anchor = p.stage_end.take().unwrap_or(p.anchor);
                p.sibling = None;
            }
        }
        let last = &shape.gaps[slot];
        let mut own = Vec::new();
        for p in beam {
            if p.anchor.lo > x.end.hi {
                continue;
            }
            let (ll, floor) = match slot {
                0 => (0.0, 0.0),
                _ => last.ln_pdf_within((x.end.t - p.anchor.t) as f64, apart(x.end, p.anchor)),
            };
            own.push(Mapping {
                variant: vi as u16,
                children: p.children,
                score: p.score + ll,
                weight: p.weight + ll - floor,
            });
        }
        own.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        own.truncate(k);
        all.append(&mut own);
    }
    all.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    if let Some(best) = all.first().map(|m| &shapes[m.variant as usize]) {
        let mut rank = 0;
        all.retain(|m| {
            rank += 1;
            rank <= k || skips(&shapes[m.variant as usize], best)
        });
    }
    for m in &mut all {
        m.weight = m.weight.max(1e-6);
    }
    all
}

/// Whether `a`'s callees are `b`'s with some (or none) left out, counted
/// with repeats: `a` is `b` with calls skipped.
fn skips(a: &Shape, b: &Shape) -> bool {
    let mut left: Vec<u16> = b.stages.iter().flatten().copied().collect();
    a.stages.iter().flatten().all(|c| {
        let found = left.iter().position(|x| x == c);
        found.map(|p| left.swap_remove(p)).is_some()
    })
}

/// The standard error of the time between two estimated moments.
fn apart(a: Ev, b: Ev) -> f64 {
    (a.sd as f64).hypot(b.sd as f64)
}

/// How one slot's gap is scored: its distribution, after taking off the
/// wait expected from the queue.
struct Gap<'a> {
    dist: &'a Mixture,
    wait: f64,
}

/// Every feasible call to `callee` after `p`'s anchor and inside `x`.
fn extend(
    view: &View,
    x: &In,
    p: &Partial,
    callee: u16,
    gap: &Gap,
    used: &[bool],
    next: &mut Vec<Partial>,
) {
    let Some(list) = view.by_callee.get(&callee) else {
        return;
    };
    let from = p.anchor.lo - view.slack;
    let first = list.partition_point(|&o| view.outs[o].req.t < from);
    // The gap runs from the call sent before this one in the stage, or
    // from the stage's start.
    let gap_start = p.sibling.unwrap_or(p.anchor);
    for &o in &list[first..] {
        let out = &view.outs[o];
        if out.req.t > x.end.hi + view.slack {
            break;
        }
        let fits = out.req.hi >= p.anchor.lo
            && out.req.hi >= x.start.lo
            && out.resp.lo <= x.end.hi
            && out.may_serve(x)
            && !used[o]
            && !p.children.contains(&o);
        if !fits {
            continue;
        }
        let (ll, floor) = (gap.dist).ln_pdf_within(
            (out.req.t - gap_start.t) as f64 - gap.wait,
            apart(out.req, gap_start),
        );
        let mut children = p.children.clone();
        children.push(o);
        next.push(Partial {
            children,
            score: p.score + ll,
            weight: p.weight + ll - floor,
            anchor: p.anchor,
            sibling: Some(out.req),
            stage_end: Some(later(p.stage_end, out.resp)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconstruct::view::{Ev, Out};

    /// Service 0 calls 1 and then 2 (two stages); gaps centred on 10.
    fn setup(outs: &[(u16, i64, i64)]) -> (View, Vec<Shape>) {
        let mut v = View::default();
        for (k, &(callee, a, b)) in outs.iter().enumerate() {
            v.outs.push(Out {
                rpc: k as u32,
                callee,
                req: Ev::exact(a),
                resp: Ev::exact(b),
                unit: None,
            });
            v.by_callee.entry(callee).or_default().push(k);
        }
        let shape = Shape {
            stages: vec![vec![1], vec![2]],
            ln_share: 0.0,
            gaps: vec![Mixture::gaussian(10_000.0, 5_000.0); 3],
            wait_per_queued: 0.0,
            caller: None,
            arrival: None,
        };
        (v, vec![shape])
    }

    fn x(a: i64, b: i64) -> In {
        In {
            rpc: 99,
            caller: None,
            start: Ev::exact(a),
            end: Ev::exact(b),
            queued: 0,
            unit: None,
            arrival: None,
        }
    }

    #[test]
    fn calls_outside_the_window_are_never_candidates() {
        // Call 0 to service 1 starts before the request; call 2 to service
        // 2 answers after the response: only 1 and 3 fit.
        let (v, shapes) = setup(&[
            (1, -5_000, 20_000),
            (1, 10_000, 30_000),
            (2, 40_000, 200_000),
            (2, 40_000, 90_000),
        ]);
        let ms = candidates(&v, &shapes, &x(0, 100_000), &[false; 4], 5);
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].children, vec![1, 3]);
    }

    #[test]
    fn a_stage_starts_only_after_the_one_before_answered() {
        // Call 1 to service 2 is sent before call 0 to service 1 answered.
        let (v, shapes) = setup(&[
            (1, 10_000, 50_000),
            (2, 30_000, 60_000),
            (2, 55_000, 80_000),
        ]);
        let ms = candidates(&v, &shapes, &x(0, 100_000), &[false; 3], 5);
        assert!(ms.iter().all(|m| m.children != vec![0, 1]), "{ms:?}");
        assert_eq!(ms[0].children, vec![0, 2]);
        // A used call is no candidate.
        assert!(candidates(&v, &shapes, &x(0, 100_000), &[false, false, true], 5).is_empty());
    }

    #[test]
    fn closer_gaps_rank_first() {
        let (v, shapes) = setup(&[
            (1, 10_000, 20_000),
            (1, 40_000, 45_000),
            (2, 55_000, 80_000),
        ]);
        let ms = candidates(&v, &shapes, &x(0, 90_000), &[false; 3], 5);
        assert_eq!(ms.len(), 2);
        // 0 → 10 µs gap then 35 µs to call 2; 1 → 40 µs then 10 µs: the
        // first is nearer the 10 µs the distribution expects on the whole.
        assert!(ms[0].score > ms[1].score);
    }

    #[test]
    fn a_request_takes_only_its_own_callers_variants() {
        // Service 0 is called by 5 and 6; only 6's requests call 1 and 2.
        let (v, mut shapes) = setup(&[(1, 10_000, 20_000), (2, 30_000, 40_000)]);
        shapes[0].caller = Some(6);
        let mut leaf = shapes[0].clone();
        leaf.stages.clear();
        leaf.caller = Some(5);
        shapes.push(leaf);
        let mut r = x(0, 60_000);
        r.caller = Some(5);
        let ms = candidates(&v, &shapes, &r, &[false; 2], 5);
        assert_eq!(ms.len(), 1);
        assert!(ms[0].children.is_empty() && ms[0].variant == 1);
        r.caller = Some(6);
        let ms = candidates(&v, &shapes, &r, &[false; 2], 5);
        assert_eq!((ms.len(), ms[0].children.clone()), (1, vec![0, 1]));
        // A caller the call graph never saw with this service may take any.
        r.caller = Some(7);
        assert_eq!(candidates(&v, &shapes, &r, &[false; 2], 5).len(), 2);
    }

    #[test]
    fn only_a_variant_with_calls_skipped_keeps_its_own_best() {
        // Variant 0 calls 1 then 2, variant 1 calls only 1 (variant 0 with
        // a call skipped), variant 2 calls only 3; one candidate kept.
        let (v, mut shapes) = setup(&[
            (1, 10_000, 20_000),
            (3, 12_000, 22_000),
            (2, 30_000, 40_000),
        ]);
        let mut skipped = shapes[0].clone();
        skipped.stages = vec![vec![1]];
        skipped.gaps.truncate(2);
        let mut other = skipped.clone();
        other.stages = vec![vec![3]];
        shapes.extend([skipped, other]);
        let picked = |end: i64| -> Vec<(u16, Vec<usize>)> {
            candidates(&v, &shapes, &x(0, end), &[false; 3], 1)
                .into_iter()
                .map(|m| (m.variant, m.children))
                .collect()
        };
        // Variant 0 fits best: variant 1 keeps its best beside it, variant
        // 2 (another call altogether) does not.
        assert_eq!(picked(50_000), vec![(0, vec![0, 2]), (1, vec![0])]);
        // Call 2 answers after the response: variant 2 fits best (12 and
        // 13 µs against 10 and 15) and variant 1 is no subset of it.
        assert_eq!(picked(35_000), vec![(2, vec![1])]);
        let mut a = shapes[1].clone();
        a.stages = vec![vec![1, 1]];
        let mut b = shapes[1].clone();
        b.stages = vec![vec![2], vec![1]];
        assert!(skips(&shapes[1], &shapes[0]) && !skips(&shapes[0], &shapes[1]));
        assert!(!skips(&a, &b), "two calls to 1 are not b's one");
    }

    #[test]
    fn a_parallel_call_is_scored_from_the_call_before_it() {
        // One stage of two parallel calls; the request waited 3 queued
        // requests × 50 µs before its first call.
        let (mut v, mut shapes) = setup(&[(1, 160_000, 400_000), (2, 180_000, 450_000)]);
        v.by_callee.clear();
        v.by_callee.insert(1, vec![0]);
        v.by_callee.insert(2, vec![1]);
        let s = &mut shapes[0];
        s.stages = vec![vec![1, 2]];
        s.gaps = vec![
            Mixture::gaussian(10_000.0, 5_000.0),
            Mixture::gaussian(20_000.0, 5_000.0),
            Mixture::gaussian(50_000.0, 5_000.0),
        ];
        s.wait_per_queued = 50_000.0;
        let mut r = x(0, 500_000);
        r.queued = 3;
        let ms = candidates(&v, &shapes, &r, &[false; 2], 5);
        assert_eq!(ms[0].children, vec![0, 1]);
        // 160 µs less 150 µs of queue, then 20 µs from the first call (not
        // 180 µs from the arrival), then 50 µs from the last answer.
        let g = &shapes[0].gaps;
        let want = g[0].ln_pdf(10_000.0) + g[1].ln_pdf(20_000.0) + g[2].ln_pdf(50_000.0);
        assert!(
            (ms[0].score - want).abs() < 1e-9,
            "{} vs {want}",
            ms[0].score
        );
    }
}

//! Calls a request skips that the call graph did not see skipped
//! (TraceWeaver §4.2): a cache that warmed up, a callee that failed, a
//! call made only for some requests. A call graph learned from a short
//! capture misses the rarer ways a service fans out, and a request that
//! took one has no candidate of its own: the MWIS gives it a neighbour's
//! call in the missing slot, or nothing, and either way its trace is
//! wrong.
//!
//! Like TraceWeaver, skipping is allowed only where the service's own
//! calls say it happened: per callee, the calls the learned variants
//! expect of the service's requests against the calls it made. Where
//! fewer were made, by more than counting noise, each variant gains its
//! versions with those callees' slots dropped, weighted by how often
//! the shortfall says a slot of that callee goes unmade. TraceWeaver
//! spreads a budget of phantom "skip" spans over its batches; a version
//! of the variant with the slot gone is the same choice in the form our
//! candidates take, and its share keeps it behind the variants that were
//! seen. Where the calls made match what the call graph expects (every
//! variant seen in training), nothing is added.

use super::candidates::{applicable, Shape};
use super::view::View;
use std::collections::HashMap;

/// Standard deviations (Poisson, of the calls expected) the shortfall must
/// exceed: shares learned from a few hundred requests miss the test's by
/// a few per cent, which must not open skips.
const NOISE_SDS: f64 = 3.0;
/// ... and this share of the calls expected.
const MIN_SHORTFALL: f64 = 0.05;
/// A variant's slots that may be dropped at most (those whose callees
/// fall shortest): versions are subsets of them.
const MAX_DROPPABLE: usize = 6;
/// Versions kept per variant, the likeliest: each is a variant the
/// candidates search, and a graph that expects far more calls than were
/// made (every callee short) would otherwise multiply the work by the
/// subsets.
const MAX_VERSIONS: usize = 8;

/// `shapes` and, where the service made fewer calls to a callee than its
/// requests' variants expect, their versions with such calls skipped;
/// said in the log, by `names` (service names by id), since the result
/// then rests on what the call graph did not show.
pub fn allow(view: &View, mut shapes: Vec<Shape>, names: &[String]) -> Vec<Shape> {
    let skip = skip_rates(view, &shapes);
    if skip.is_empty() {
        return shapes;
    }
    let mut added = Vec::new();
    for shape in &shapes {
        for version in versions(shape, &skip) {
            let seen = |s: &Shape| {
                (s.caller, s.arrival) == (version.caller, version.arrival)
                    && s.stages == version.stages
            };
            if !shapes.iter().chain(&added).any(seen) {
                added.push(version);
            }
        }
    }
    let name = |id: u16| names.get(usize::from(id)).map_or("?", String::as_str);
    let mut short: Vec<String> = (skip.iter())
        .map(|(&c, r)| format!("{} {:.0} %", name(c), r * 100.0))
        .collect();
    short.sort();
    tracing::info!(
        "{}: fewer calls than its call graph's variants expect ({}): its requests may skip them \
         (variants added with calls skipped: {})",
        name(view.service),
        short.join(", "),
        added.len()
    );
    shapes.extend(added);
    shapes
}

/// Per callee whose calls fall short of what the variants expect: the
/// share of its slots that went unmade. Expected two ways, and the larger
/// shortfall taken: from the variants' shares over the service's
/// requests, and from a callee that, in every variant that has it, comes
/// with this one (a variant learned without the skip makes one imply the
/// other, and the shares alone may not show it: with a login's `user`-only
/// variant missing, the graph expects fewer `user` calls, not more
/// `reservation` calls).
fn skip_rates(view: &View, shapes: &[Shape]) -> HashMap<u16, f64> {
    let mut expected: HashMap<u16, f64> = HashMap::new();
    for x in &view.ins {
        for (_, s) in applicable(shapes, x) {
            let share = s.ln_share.exp();
            for &callee in s.stages.iter().flatten() {
                *expected.entry(callee).or_default() += share;
            }
        }
    }
    let made_of = |c: u16| view.by_callee.get(&c).map_or(0.0, |o| o.len() as f64);
    let mut rates: HashMap<u16, f64> = HashMap::new();
    let mut short = |callee: u16, e: f64| {
        let short = e - made_of(callee);
        if short > NOISE_SDS * e.sqrt() && short > MIN_SHORTFALL * e {
            let r = rates.entry(callee).or_default();
            *r = r.max((short / e).min(1.0));
        }
    };
    for (&callee, &e) in &expected {
        short(callee, e);
    }
    for (&callee, with) in &implied(shapes) {
        for &(other, per) in with {
            short(callee, made_of(other) * per);
        }
    }
    rates
}

/// Per callee, the callees every variant that has them also has it with,
/// and how many of its slots come with each of theirs (the fewest over
/// those variants).
fn implied(shapes: &[Shape]) -> HashMap<u16, Vec<(u16, f64)>> {
    let count = |s: &Shape, c: u16| s.stages.iter().flatten().filter(|&&x| x == c).count();
    let callees: std::collections::BTreeSet<u16> = shapes
        .iter()
        .flat_map(|s| s.stages.iter().flatten().copied())
        .collect();
    let mut out: HashMap<u16, Vec<(u16, f64)>> = HashMap::new();
    for &c in &callees {
        for &other in callees.iter().filter(|&&o| o != c) {
            let per = (shapes.iter())
                .filter(|s| count(s, other) > 0)
                .map(|s| count(s, c) as f64 / count(s, other) as f64)
                .fold(f64::INFINITY, f64::min);
            if per > 0.0 && per.is_finite() {
                out.entry(c).or_default().push((other, per));
            }
        }
    }
    out
}

/// The versions of `shape` with some of its skippable slots dropped, each
/// with its share: the variant's, times each dropped slot's skip rate and
/// each kept skippable slot's complement. Gap distributions are the
/// variant's for the slots kept, until the rounds refit them.
fn versions(shape: &Shape, skip: &HashMap<u16, f64>) -> Vec<Shape> {
    let slots: Vec<u16> = shape.stages.iter().flatten().copied().collect();
    let mut droppable: Vec<usize> = (0..slots.len())
        .filter(|&i| skip.contains_key(&slots[i]))
        .collect();
    droppable.sort_by(|&a, &b| skip[&slots[b]].total_cmp(&skip[&slots[a]]).then(a.cmp(&b)));
    droppable.truncate(MAX_DROPPABLE);
    let mut out: Vec<Shape> = Vec::new();
    for mask in 1u32..(1 << droppable.len()) {
        let dropped = |i: usize| {
            (droppable.iter().position(|&d| d == i)).is_some_and(|k| mask & (1 << k) != 0)
        };
        let mut ln_share = shape.ln_share;
        for &i in &droppable {
            let rate = skip[&slots[i]];
            ln_share += if dropped(i) { rate } else { 1.0 - rate }.max(1e-6).ln();
        }
        let mut stages = Vec::new();
        let mut gaps = Vec::new();
        let mut slot = 0;
        for stage in &shape.stages {
            let mut kept = Vec::new();
            for &callee in stage {
                if !dropped(slot) {
                    kept.push(callee);
                    gaps.push(shape.gaps[slot].clone());
                }
                slot += 1;
            }
            if !kept.is_empty() {
                stages.push(kept);
            }
        }
        gaps.push(shape.gaps[slot].clone());
        // Dropping either of two calls to one callee leaves the same
        // variant: one version, as likely as both ways together.
        match out.iter_mut().find(|v| v.stages == stages) {
            Some(v) => v.ln_share = (v.ln_share.exp() + ln_share.exp()).ln(),
            None => out.push(Shape {
                stages,
                ln_share,
                gaps,
                ..shape.clone()
            }),
        }
    }
    out.sort_by(|a, b| b.ln_share.total_cmp(&a.ln_share));
    out.truncate(MAX_VERSIONS);
    out
}

#[cfg(test)]
mod tests {
    use super::super::scoring::Mixture;
    use super::super::view::{Ev, In, Out};
    use super::*;

    fn shape(stages: Vec<Vec<u16>>, share: f64) -> Shape {
        let n = stages.iter().map(Vec::len).sum::<usize>();
        Shape {
            stages,
            ln_share: share.ln(),
            gaps: (0..=n).map(|i| Mixture::gaussian(i as f64, 1.0)).collect(),
            wait_per_queued: 0.0,
            caller: None,
            arrival: None,
        }
    }

    /// `requests` incoming requests and `made` calls per callee.
    fn view(requests: usize, made: &[(u16, usize)]) -> View {
        let ev = Ev::exact(0);
        let mut by_callee: HashMap<u16, Vec<usize>> = HashMap::new();
        let callees = made.iter().flat_map(|&(c, n)| std::iter::repeat_n(c, n));
        for (k, c) in callees.enumerate() {
            by_callee.entry(c).or_default().push(k);
        }
        View {
            by_callee,
            ins: (0..requests)
                .map(|i| In {
                    rpc: i as u32,
                    caller: None,
                    start: ev,
                    end: ev,
                    queued: 0,
                    unit: None,
                    arrival: None,
                })
                .collect(),
            outs: (made.iter())
                .flat_map(|&(callee, n)| std::iter::repeat_n(callee, n))
                .map(|callee| Out {
                    rpc: 0,
                    callee,
                    req: ev,
                    resp: ev,
                    unit: None,
                })
                .collect(),
            ..View::default()
        }
    }

    #[test]
    fn calls_made_as_the_variants_expect_open_no_skips() {
        // Callee 1 in every request, callee 2 in 70 %: 1000 and ≈ 700.
        let shapes = vec![shape(vec![vec![1, 2]], 0.7), shape(vec![vec![1]], 0.3)];
        let v = view(1000, &[(1, 1000), (2, 680)]);
        assert_eq!(allow(&v, shapes.clone(), &[]).len(), 2);
    }

    #[test]
    fn a_callee_made_less_often_than_expected_may_be_skipped() {
        // Every request calls 1 then 2 (in parallel) then 3; but a quarter
        // of the requests never called 2.
        let shapes = vec![shape(vec![vec![1, 2], vec![3]], 1.0)];
        let v = view(1000, &[(1, 1000), (2, 750), (3, 1000)]);
        let all = allow(&v, shapes, &[]);
        assert_eq!(all.len(), 2);
        let skip = &all[1];
        assert_eq!(skip.stages, vec![vec![1], vec![3]]);
        assert!((skip.ln_share.exp() - 0.25).abs() < 1e-9);
        // Slot 1 (callee 2) is gone: the others keep their distributions,
        // the end gap too.
        let means: Vec<f64> = skip.gaps.iter().map(|g| g.parts[0].1).collect();
        assert_eq!(means, vec![0.0, 2.0, 3.0]);
        // A stage left empty goes.
        let v = view(1000, &[(1, 1000), (2, 1000), (3, 500)]);
        let all = allow(&v, vec![shape(vec![vec![1, 2], vec![3]], 1.0)], &[]);
        assert_eq!(all[1].stages, vec![vec![1, 2]]);
    }

    #[test]
    fn a_callee_that_always_came_with_another_but_now_does_not_may_be_skipped() {
        // The graph has 1 with 2 (10 %) and 3 alone (90 %); 1 is made
        // 200 times but 2 only 110: the shares expect 100 of each, so only
        // the pair says that 2 was skipped, by 90 of the 200.
        let shapes = vec![
            shape(vec![vec![1], vec![2]], 0.1),
            shape(vec![vec![3]], 0.9),
        ];
        let v = view(1000, &[(1, 200), (2, 110), (3, 880)]);
        let all = allow(&v, shapes, &[]);
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].stages, vec![vec![1]]);
        assert!((all[2].ln_share.exp() - 0.1 * 0.45).abs() < 1e-9);
    }

    #[test]
    fn dropping_either_of_two_calls_to_one_callee_is_one_version() {
        // Two calls to 1 per request, but only 1500 of the 2000 made.
        let shapes = vec![shape(vec![vec![1, 1]], 1.0)];
        let v = view(1000, &[(1, 1500)]);
        let all = allow(&v, shapes, &[]);
        let shares: Vec<(usize, f64)> = (all.iter())
            .map(|s| (s.slots(), (s.ln_share.exp() * 1e6).round() / 1e6))
            .collect();
        // Rate 0.25 a slot: both kept (the learned variant), one dropped
        // 2 × 0.25 × 0.75, both dropped 0.25².
        assert_eq!(shares, vec![(2, 1.0), (1, 0.375), (0, 0.0625)]);
    }

    #[test]
    fn a_version_the_call_graph_already_has_is_not_added_twice() {
        let shapes = vec![shape(vec![vec![1, 2]], 0.9), shape(vec![vec![1]], 0.1)];
        // Callee 2 in half the requests, not 90 %: dropping it gives the
        // learned one-call variant, nothing new.
        let v = view(1000, &[(1, 1000), (2, 500)]);
        assert_eq!(allow(&v, shapes, &[]).len(), 2);
    }
}

//! TraceWeaver's reconstruction at one service: seed gap distributions
//! from WAP5's links (§4.2: the seed when call graphs are dynamic), then
//! rounds of candidates → batches → MWIS → refit of a BIC-chosen mixture
//! per gap (§4.1, steps 3–6).

use super::batches::{batches, MAX_BATCH};
use super::candidates::{applicable, candidates, Mapping, Shape};
use super::mwis::{solve, Choice};
use super::scoring::{Mixture, MAX_COMPONENTS};
use super::view::{In, View};
use super::wap5;

/// Candidates kept per request (Table 1, K = 5), and as many again for
/// each variant that is the best one's with calls skipped. TraceWeaver
/// keeps K per request; where a request may take several such variants
/// (two storage fan-outs and a failed upload at `compose-review`), the
/// common variant's near-misses would crowd the others out of the K, and
/// a request whose true variant is missing takes another's calls.
pub const TOP_K: usize = 5;

/// What tw decided at one service.
#[derive(Debug, Clone, Default)]
pub struct Solved {
    /// Per call: parent request and confidence.
    pub parent: Vec<Option<(usize, f64)>>,
    /// Per request: its top mappings with their probabilities.
    pub alternatives: Vec<Vec<(Vec<usize>, f64)>>,
}

/// Rounds at the most, unless more are asked for: the refits go on past
/// the rounds asked for while any call changes its request. Past a
/// service's capacity, where every gap is long, they start from WAP5's
/// poor seed and take five to seven rounds to settle (three left
/// HotelReservation at 3000 req/s 87 % right, and settled it is 100 %).
const MAX_ROUNDS: usize = 8;

/// Runs at least `rounds` refinement rounds at one service, and more
/// while they still move calls, up to [`MAX_ROUNDS`].
pub fn weave(view: &View, mut shapes: Vec<Shape>, rounds: usize) -> Solved {
    if shapes.iter().all(|s| s.slots() == 0) || view.ins.is_empty() {
        return Solved {
            parent: vec![None; view.outs.len()],
            alternatives: vec![Vec::new(); view.ins.len()],
        };
    }
    let seed = wap5::link(view);
    refit(view, &mut shapes, &seed, Mixture::fit_gaussian);
    let mut solved = round(view, &shapes);
    for r in 1..rounds.max(MAX_ROUNDS) {
        refit(view, &mut shapes, &solved.parent, |xs| {
            Mixture::fit_bic(xs, MAX_COMPONENTS)
        });
        let next = round(view, &shapes);
        let settled =
            (next.parent.iter().zip(&solved.parent)).all(|(a, b)| a.map(|x| x.0) == b.map(|x| x.0));
        solved = next;
        if settled && r + 1 >= rounds {
            break;
        }
    }
    solved
}

/// One pass: candidates, batches and the MWIS of each batch.
fn round(view: &View, shapes: &[Shape]) -> Solved {
    let mut used = vec![false; view.outs.len()];
    let mut cands: Vec<Vec<Mapping>> = view
        .ins
        .iter()
        .map(|x| candidates(view, shapes, x, &used, TOP_K))
        .collect();
    let calls: Vec<Vec<usize>> = cands
        .iter()
        .map(|ms| {
            let mut c: Vec<usize> = ms.iter().flat_map(|m| m.children.iter().copied()).collect();
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let mut out = Solved {
        parent: vec![None; view.outs.len()],
        alternatives: vec![Vec::new(); view.ins.len()],
    };
    for b in batches(&view.ins, &calls, MAX_BATCH) {
        for i in b.clone() {
            if cands[i].iter().any(|m| m.children.iter().any(|&c| used[c])) {
                cands[i] = candidates(view, shapes, &view.ins[i], &used, TOP_K);
            }
        }
        let options: Vec<Vec<Choice>> = cands[b.clone()]
            .iter()
            .map(|ms| {
                ms.iter()
                    .map(|m| Choice {
                        weight: m.weight,
                        calls: m.children.clone(),
                    })
                    .collect()
            })
            .collect();
        for (i, pick) in b.clone().zip(solve(&options)) {
            let probs = softmax(&cands[i]);
            out.alternatives[i] = cands[i]
                .iter()
                .zip(&probs)
                .map(|(m, &p)| (m.children.clone(), p))
                .collect();
            let Some(k) = pick else { continue };
            for &c in &cands[i][k].children {
                used[c] = true;
                out.parent[c] = Some((i, probs[k]));
            }
        }
    }
    out
}

/// Probabilities of a request's mappings from their weights.
fn softmax(ms: &[Mapping]) -> Vec<f64> {
    let top = ms.iter().map(|m| m.weight).fold(f64::MIN, f64::max);
    let e: Vec<f64> = ms.iter().map(|m| (m.weight - top).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|x| x / total).collect()
}

/// Refits every gap distribution from the requests whose links match a
/// variant's callees exactly, slot by slot in send order; gaps measured
/// as [`candidates`] scores them.
fn refit(
    view: &View,
    shapes: &mut [Shape],
    parent: &[Option<(usize, f64)>],
    fit: impl Fn(&[f64]) -> Option<Mixture>,
) {
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); view.ins.len()];
    for (o, p) in parent.iter().enumerate() {
        if let Some((i, _)) = p {
            kids[*i].push(o);
        }
    }
    let mut samples: Vec<Vec<Vec<f64>>> = shapes
        .iter()
        .map(|s| vec![Vec::new(); s.slots() + 1])
        .collect();
    // Per variant, each first call's queue length, beside samples[vi][0].
    let mut queued: Vec<Vec<f64>> = vec![Vec::new(); shapes.len()];
    for (i, ks) in kids.iter().enumerate() {
        let x = &view.ins[i];
        let Some((vi, slots)) = match_shape(view, shapes, x, ks) else {
            continue;
        };
        queued[vi].push(f64::from(x.queued));
        let mut anchor = x.start.t;
        let mut slot = 0;
        for stage in &shapes[vi].stages {
            let mut end = anchor;
            let mut from = anchor;
            for _ in stage {
                let o = &view.outs[slots[slot]];
                samples[vi][slot].push((o.req.t - from) as f64);
                from = o.req.t;
                end = end.max(o.resp.t);
                slot += 1;
            }
            anchor = end;
        }
        samples[vi][slot].push((x.end.t - anchor) as f64);
    }
    for ((shape, mut per_slot), q) in shapes.iter_mut().zip(samples).zip(queued) {
        if let Some(first) = per_slot.first_mut().filter(|xs| !xs.is_empty()) {
            shape.wait_per_queued = slope(&q, first);
            for (x, q) in first.iter_mut().zip(&q) {
                *x -= shape.wait_per_queued * q;
            }
        }
        for (g, xs) in shape.gaps.iter_mut().zip(per_slot) {
            if let Some(m) = fit(&xs) {
                *g = m;
            }
        }
    }
}

/// Least-squares slope of `ys` on `xs`, never negative: a queue only adds
/// wait. Zero where `xs` does not vary.
fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
    }
    if sxx > 0.0 {
        (sxy / sxx).max(0.0)
    } else {
        0.0
    }
}

/// The variant whose slots `calls` fill exactly, and the call of each slot.
fn match_shape(
    view: &View,
    shapes: &[Shape],
    x: &In,
    calls: &[usize],
) -> Option<(usize, Vec<usize>)> {
    if calls.is_empty() {
        return None;
    }
    'shape: for (vi, s) in applicable(shapes, x) {
        if s.slots() != calls.len() {
            continue;
        }
        let mut left: Vec<usize> = calls.to_vec();
        let mut slots = Vec::with_capacity(calls.len());
        for &callee in s.stages.iter().flatten() {
            let Some(pos) = left.iter().position(|&o| view.outs[o].callee == callee) else {
                continue 'shape;
            };
            slots.push(left.remove(pos));
        }
        return Some((vi, slots));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::slope;

    #[test]
    fn queue_slope_is_least_squares_and_never_negative() {
        let q = [0.0, 1.0, 2.0, 3.0];
        assert_eq!(slope(&q, &[10.0, 12.0, 14.0, 16.0]), 2.0);
        assert_eq!(slope(&q, &[16.0, 14.0, 12.0, 10.0]), 0.0);
        assert_eq!(slope(&[2.0; 4], &[1.0, 5.0, 3.0, 9.0]), 0.0);
    }
}

//! TraceWeaver's reconstruction at one service: seed gap distributions
//! from WAP5's links (§4.2: the seed when call graphs are dynamic), then
//! rounds of candidates → batches → MWIS → refit of a BIC-chosen mixture
//! per gap (§4.1, steps 3–6).

use super::batches::{batches, MAX_BATCH};
use super::candidates::{candidates, Mapping, Shape};
use super::mwis::{solve, Choice};
use super::scoring::{Mixture, MAX_COMPONENTS};
use super::view::View;
use super::wap5;

/// Candidates kept per request (Table 1, K = 5).
pub const TOP_K: usize = 5;

/// What tw decided at one service.
#[derive(Debug, Clone, Default)]
pub struct Solved {
    /// Per call: parent request and confidence.
    pub parent: Vec<Option<(usize, f64)>>,
    /// Per request: its top mappings with their probabilities.
    pub alternatives: Vec<Vec<(Vec<usize>, f64)>>,
}

/// Runs `rounds` refinement rounds at one service.
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
    for _ in 1..rounds {
        refit(view, &mut shapes, &solved.parent, |xs| {
            Mixture::fit_bic(xs, MAX_COMPONENTS)
        });
        solved = round(view, &shapes);
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
/// variant's callees exactly, slot by slot in send order.
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
    for (i, ks) in kids.iter().enumerate() {
        let Some((vi, slots)) = match_shape(view, shapes, ks) else {
            continue;
        };
        let x = &view.ins[i];
        let mut anchor = x.start.t;
        let mut slot = 0;
        for stage in &shapes[vi].stages {
            let mut end = anchor;
            for _ in stage {
                let o = &view.outs[slots[slot]];
                samples[vi][slot].push((o.req.t - anchor) as f64);
                end = end.max(o.resp.t);
                slot += 1;
            }
            anchor = end;
        }
        samples[vi][slot].push((x.end.t - anchor) as f64);
    }
    for (shape, per_slot) in shapes.iter_mut().zip(samples) {
        for (g, xs) in shape.gaps.iter_mut().zip(per_slot) {
            if let Some(m) = fit(&xs) {
                *g = m;
            }
        }
    }
}

/// The variant whose slots `calls` fill exactly, and the call of each slot.
fn match_shape(view: &View, shapes: &[Shape], calls: &[usize]) -> Option<(usize, Vec<usize>)> {
    if calls.is_empty() {
        return None;
    }
    'shape: for (vi, s) in shapes.iter().enumerate() {
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

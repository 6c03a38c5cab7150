//! WAP5's message linking (§5.1) as a baseline: a call is caused by one of
//! the requests in progress at its service when it was sent, with an
//! exponential prior on the causal delay; the most likely parent is the
//! most recent one. Confidence is the prior's share of the chosen parent,
//! with the rate set from the chosen delays' mean.

use super::view::View;

/// Per call (index into `view.outs`): parent (index into `view.ins`) and
/// confidence.
pub fn link(view: &View) -> Vec<Option<(usize, f64)>> {
    let max_dur = view
        .ins
        .iter()
        .map(|x| x.end.hi - x.start.lo)
        .max()
        .unwrap_or(0);
    let options: Vec<Vec<(usize, f64)>> = view
        .outs
        .iter()
        .map(|o| {
            let upto = view.ins.partition_point(|x| x.start.lo <= o.req.hi);
            view.ins[..upto]
                .iter()
                .enumerate()
                .rev()
                .take_while(|(_, x)| o.req.hi - x.start.lo <= max_dur + view.slack)
                .filter(|(_, x)| x.end.hi >= o.resp.lo)
                .map(|(i, x)| (i, (o.req.t - x.start.t).max(0) as f64))
                .collect()
        })
        .collect();
    let chosen: Vec<f64> = options
        .iter()
        .filter_map(|c| c.iter().map(|x| x.1).reduce(f64::min))
        .collect();
    let mean = (chosen.iter().sum::<f64>() / chosen.len().max(1) as f64).max(1.0);
    options
        .iter()
        .map(|c| {
            let best = c.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
            let total: f64 = c.iter().map(|x| (-(x.1 - best.1) / mean).exp()).sum();
            Some((best.0, 1.0 / total))
        })
        .collect()
}

//! What a change added, and when: the size a culprit is ranked by and
//! the moment it is shown at, once [`super::change`] found the change.
//!
//! The effect is the calls of the windows whose mean stands out of the
//! quiet level (by two standard errors, from the calls' own spread), times
//! how far. The quiet level is the mean of the other windows, found by a
//! few rounds of setting the standing-out windows aside; noise leaves few
//! windows out and adds next to nothing. A fault present for most of the
//! run makes its level the windows' usual one: then the calls before the
//! steepest step, within two of their standard errors, set the quiet level
//! instead.

use super::change::steepest;
use super::timeline::{floor_of, Moments, Series, BLOCKS_PER_WINDOW};

/// Standard errors a window's mean must stand above the quiet level by to
/// count as changed.
pub(super) const STANDS_OUT: f64 = 2.0;

/// Time the standing-out windows added over the quiet level, and the
/// windows holding the middle 80 % of it. The quiet level and the calls'
/// spread come from the windows that do not stand out, starting from the
/// lower quartile of the window means, which a fault present in up to
/// three quarters of the run does not reach.
pub(super) fn added(series: &Series) -> (f64, Option<(usize, usize)>) {
    let w: Vec<Moments> = (0..series.n.len() / BLOCKS_PER_WINDOW)
        .map(|k| {
            let mut m = Moments::default();
            for b in k * BLOCKS_PER_WINDOW..(k + 1) * BLOCKS_PER_WINDOW {
                m.add(series, b);
            }
            m
        })
        .collect();
    // Windows without calls say nothing; `at` keeps where the others are.
    let at: Vec<usize> = (0..w.len()).filter(|&k| w[k].calls > 0.0).collect();
    let w: Vec<Moments> = at.iter().map(|&k| w[k]).collect();
    if w.is_empty() {
        return (0.0, None);
    }
    let floor = floor_of(&mut w.iter().map(|x| x.mean()).collect::<Vec<f64>>());
    let mut out: Vec<bool> = w.iter().map(|x| x.mean() > floor).collect();
    let stands_out = |out: &mut [bool], level: f64, var: f64| {
        for (o, x) in out.iter_mut().zip(&w) {
            *o = x.mean() > level + STANDS_OUT * (var / x.calls).sqrt();
        }
    };
    let mut level = 0.0;
    for _ in 0..5 {
        let quiet = (w.iter().zip(&out))
            .filter(|(_, o)| !**o)
            .fold(Moments::default(), |all, (x, _)| all.plus(*x));
        if quiet.calls <= 0.0 {
            break;
        }
        level = quiet.mean();
        stands_out(&mut out, level, quiet.var());
    }
    if let Some(before) = before_the_step(series).filter(|m| m.calls > 0.0) {
        let bound = before.mean() + STANDS_OUT * (before.var() / before.calls).sqrt();
        if bound < level {
            level = bound;
            stands_out(&mut out, level, before.var());
        }
    }
    let per_window: Vec<f64> = (w.iter().zip(&out))
        .map(|(x, &o)| if o { x.sum - level * x.calls } else { 0.0 })
        .collect();
    let total: f64 = per_window.iter().sum();
    let during = middle(&per_window, total).map(|(a, b)| (at[a], at[b]));
    (total, during)
}

/// The calls before the series' steepest step up; none without a step.
fn before_the_step(series: &Series) -> Option<Moments> {
    let blocks = (series.sum.iter().copied()).zip(series.n.iter().copied());
    let step = steepest(blocks, (series.total(), series.calls() as f64), 0.0)?;
    let mut before = Moments::default();
    for b in 0..step.at {
        before.add(series, b);
    }
    Some(before)
}

/// The first and last windows of the middle 80 % of `total`, added up in
/// time order; none when nothing was added.
fn middle(per_window: &[f64], total: f64) -> Option<(usize, usize)> {
    if total <= 0.0 {
        return None;
    }
    let mut sum = 0.0;
    let (mut first, mut last) = (None, 0);
    for (k, &x) in per_window.iter().enumerate() {
        sum += x;
        if first.is_none() && sum > 0.1 * total {
            first = Some(k);
        }
        if sum - x < 0.9 * total {
            last = k;
        }
    }
    Some((first?, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_middle_of_the_time_added_skips_its_thin_ends() {
        assert_eq!(middle(&[0.0, 0.5, 5.0, 4.0, 0.5], 10.0), Some((2, 3)));
        assert_eq!(middle(&[0.0, 0.0], 0.0), None);
    }
}

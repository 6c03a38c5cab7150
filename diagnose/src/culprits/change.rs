//! Is a candidate's evidence concentrated in time, beyond what its own
//! noise puts there? A block permutation test against the candidate's
//! quietest windows.
//!
//! The statistic is the excess over the quiet level: per window, its calls
//! times how far their mean lies above the candidate's floor (the lower
//! quartile of its window means, so a fault present in up to three
//! quarters of the run still leaves quiet windows to set it). The p-value
//! is the share of shuffles of the blocks between windows that give as much
//! excess as the real order.
//!
//! The effect is what the change added: the calls of the windows whose
//! mean stands out of the quiet level (by two standard errors, from the
//! calls' own spread), times how far. The quiet level is the mean of the
//! other windows, found by a few rounds of setting the standing-out windows
//! aside; noise leaves few windows out and adds next to nothing.

use super::timeline::{Series, BLOCKS_PER_WINDOW};
use rand::seq::SliceRandom;
use rand::Rng;

/// Shuffles per test: the smallest p-value is 1 / (SHUFFLES + 1).
pub const SHUFFLES: usize = 1999;

/// A window's mean counts towards the floor only with this many calls.
const FLOOR_MIN_CALLS: u32 = 3;

/// One candidate's test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// One-sided permutation p-value.
    pub p: f64,
    /// Excess over the quiet level beyond what the shuffles give, in the
    /// series' value units summed over the run.
    pub effect: f64,
    /// The quiet level: mean value per call in the quiet windows.
    pub floor: f64,
}

/// Excess of the windows `order` forms over their lower-quartile mean.
fn excess(series: &Series, order: &[usize]) -> (f64, f64) {
    let windows = series.windows(order);
    let mut means: Vec<f64> = windows
        .iter()
        .filter(|(_, n)| *n >= FLOOR_MIN_CALLS)
        .map(|(s, n)| s / f64::from(*n))
        .collect();
    if means.is_empty() {
        return (0.0, 0.0);
    }
    means.sort_by(f64::total_cmp);
    let floor = means[(means.len() - 1) / 4];
    let e = windows
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| (s - floor * f64::from(*n)).max(0.0))
        .sum();
    (e, floor)
}

/// Tests `series` (blocks in time order, [`BLOCKS_PER_WINDOW`] a window).
pub fn test(series: &Series, rng: &mut impl Rng) -> Change {
    let blocks = series.n.len();
    debug_assert_eq!(blocks % BLOCKS_PER_WINDOW, 0);
    let mut order: Vec<usize> = (0..blocks).collect();
    let (observed, floor) = excess(series, &order);
    if observed <= 0.0 {
        return Change {
            p: 1.0,
            effect: 0.0,
            floor,
        };
    }
    let mut at_least = 0usize;
    for _ in 0..SHUFFLES {
        order.shuffle(rng);
        at_least += usize::from(excess(series, &order).0 >= observed);
    }
    Change {
        p: (at_least + 1) as f64 / (SHUFFLES + 1) as f64,
        effect: added(series),
        floor,
    }
}

/// Standard errors a window's mean must stand above the quiet level by to
/// count as changed.
const STANDS_OUT: f64 = 2.0;

/// Time the standing-out windows added over the quiet level. The quiet
/// level and the calls' spread come from the windows that do not stand
/// out, starting from the lower quartile of the window means, which a
/// fault present in up to three quarters of the run does not reach.
fn added(series: &Series) -> f64 {
    // Per window: sum, sum of squares, calls.
    let w: Vec<(f64, f64, f64)> = (0..series.n.len() / BLOCKS_PER_WINDOW)
        .map(|k| {
            (k * BLOCKS_PER_WINDOW..(k + 1) * BLOCKS_PER_WINDOW).fold(
                (0.0, 0.0, 0.0),
                |(s, q, n), i| {
                    (
                        s + series.sum[i],
                        q + series.sumsq[i],
                        n + f64::from(series.n[i]),
                    )
                },
            )
        })
        .filter(|x| x.2 > 0.0)
        .collect();
    if w.is_empty() {
        return 0.0;
    }
    let mut means: Vec<f64> = w.iter().map(|x| x.0 / x.2).collect();
    means.sort_by(f64::total_cmp);
    let mut out: Vec<bool> = w
        .iter()
        .map(|x| x.0 / x.2 > means[(means.len() - 1) / 4])
        .collect();
    let mut level = 0.0;
    for _ in 0..5 {
        let (s, q, n) = w
            .iter()
            .zip(&out)
            .filter(|(_, o)| !**o)
            .fold((0.0, 0.0, 0.0), |(a, b, c), (x, _)| {
                (a + x.0, b + x.1, c + x.2)
            });
        if n == 0.0 {
            break;
        }
        level = s / n;
        let var = (q / n - level * level).max(0.0);
        for (o, &(s, _, n)) in out.iter_mut().zip(&w) {
            *o = s / n > level + STANDS_OUT * (var / n).sqrt();
        }
    }
    w.iter()
        .zip(&out)
        .filter(|(_, o)| **o)
        .map(|(x, _)| x.0 - level * x.2)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::timeline::Timeline;
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, LogNormal};

    /// Heavy-tailed calls (lognormal, σ 1), `extra` added to `share` of
    /// them from window `from` on; and the time added in all.
    fn series(seed: u64, from: usize, extra: f64, share: f64) -> (Series, f64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let t = Timeline::new(0, 999, 800);
        let noise = LogNormal::new(0.0, 1.0).unwrap();
        let mut s = Series::new(&t);
        let mut added = 0.0;
        for b in 0..t.blocks() {
            for _ in 0..5 {
                let mut v: f64 = noise.sample(&mut rng);
                if t.window_of_block(b) >= from && rng.gen_bool(share) {
                    v += extra;
                    added += extra;
                }
                s.add(b, v);
            }
        }
        (s, added)
    }

    #[test]
    fn noise_alone_is_rarely_a_change_and_its_effect_is_near_zero() {
        let mut rng = StdRng::seed_from_u64(7);
        let runs = 200;
        let mut small = 0;
        let mut effects = Vec::new();
        for seed in 0..runs {
            let (s, _) = series(seed, usize::MAX, 0.0, 0.0);
            let c = test(&s, &mut rng);
            small += usize::from(c.p < 0.05);
            effects.push(c.effect / s.calls() as f64);
        }
        // Calibrated: about 5 % of noise-only runs under 0.05.
        assert!(small <= runs as usize / 10, "{small} of {runs}");
        effects.sort_by(f64::total_cmp);
        // Per call, a small fraction of the noise's own mean (1.65): under a
        // tenth at the median, under a quarter nine times in ten.
        let at = |q: f64| effects[((runs - 1) as f64 * q) as usize];
        assert!(at(0.5) < 0.165 && at(0.9) < 0.41, "{effects:?}");
    }

    #[test]
    fn a_share_of_calls_slowed_from_halfway_is_found_with_its_size() {
        let mut rng = StdRng::seed_from_u64(1);
        // 30 % of calls +20 from window 10 of 20, then from window 5 (three
        // quarters of the run): a change, and within 30 % of its size.
        for (seed, from) in [(3, 10), (4, 5), (5, 10), (6, 5)] {
            let (s, truth) = series(seed, from, 20.0, 0.3);
            let c = test(&s, &mut rng);
            assert!(c.p < 0.005, "{c:?}");
            assert!(
                (c.effect - truth).abs() < 0.3 * truth,
                "{c:?} against {truth}"
            );
        }
    }
}

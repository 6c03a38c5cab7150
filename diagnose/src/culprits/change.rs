//! Is a candidate's evidence concentrated in time, beyond what its own
//! noise puts there? A block permutation test against the candidate's own
//! blocks in other orders.
//!
//! Three shapes of change, each with its statistic, judged on the same
//! shuffles and combined by the smallest of their p-values, itself judged
//! against the shuffles' smallest p-values (so the shapes cost less than
//! Bonferroni's multiplying where they agree, and never more):
//! - **bursts** (a link congested now and then, a fault that comes and
//!   goes): the excess over the quiet level, per window its calls times
//!   how far their mean lies above the candidate's floor (the lower
//!   quartile of its window means, so a fault present in up to three
//!   quarters of the run still leaves quiet windows to set it);
//! - **runs** (bursts that windows cut in two: a fault on for half a
//!   second in every second and a half, over windows of 0.4 s): the excess
//!   of each block over that floor times its next block's. Slow blocks
//!   side by side are what a fault that lasts leaves; shuffled, they part.
//!   A lone stalled block adds nothing;
//! - **a step** (a service slowed from some moment on): how much slower
//!   the calls after some moment were than those before it, twice: as the
//!   running sum of the blocks' excess over the run's mean (most powerful
//!   for a moment halfway), and scaled as a two-sample statistic, so that
//!   a moment near either end (a fault present for most of the run) counts
//!   as one halfway does. Only slower-after counts: a machine warming up
//!   is slow first and fast after, and is no fault.
//!
//! A candidate whose faults slow a share of its calls (a service, a store)
//! is also tested for that shape, on the same shuffles and in the same
//! min-P, so that it adds power where the means miss it and costs little
//! where they agree:
//! - **its tail** (which of its calls are among its slowest): its step.
//!   Only its step: a burst of arrivals at a busy service crowds its tail
//!   for a while (the queue's calls are its slowest), which a tail's burst
//!   statistic takes for a change far more readily than the means' does;
//! - **the step against each side's own spread** (Welch's two-sample
//!   statistic): slowing a share of the calls also spreads them, so after
//!   the fault the calls vary far more than before, and a statistic that
//!   pools the two spreads judges the quiet calls by the fault's noise. A
//!   host's or a link's spread follows the machine's load, which swells
//!   and ebbs; there this statistic named load as a change (BENCHMARKS).
//!
//! The p-value is the share of shuffles of the blocks that give as much as
//! the real order ([`permutation`]).
//!
//! The effect, what the change added and when, is [`effect`]'s.

use super::effect;
use super::permutation;
use super::timeline::{floor_of, Moments, Series, BLOCKS_PER_WINDOW};
use rand::Rng;

/// A window's mean counts towards the floor only with this many calls.
pub(super) const FLOOR_MIN_CALLS: u32 = 3;

/// One candidate's test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// One-sided permutation p-value of the smallest of the shapes'
    /// p-values.
    pub p: f64,
    /// Excess over the quiet level beyond what the shuffles give, in the
    /// series' value units summed over the run.
    pub effect: f64,
    /// The quiet level: mean value per call in the quiet windows.
    pub floor: f64,
    /// The windows (first, last) that hold the middle 80 % of the time
    /// added: when the change was, for the user to look at.
    pub during: Option<(usize, usize)>,
}

/// Scratch space for [`excess`], reused across shuffles.
#[derive(Default)]
struct Scratch {
    /// Per position in time: (sum, calls) of the block placed there.
    at: Vec<(f64, u32)>,
    /// Per window: (sum, calls).
    windows: Vec<(f64, u32)>,
    means: Vec<f64>,
}

/// How far the windows of the blocks in `order` (block `b` at position
/// `order[b]`) stand above their lower-quartile mean (per window, its
/// calls times the square of its mean's excess), how far neighbouring
/// blocks stand above it together (per pair of neighbours, the product of
/// their excesses over their calls), and that mean. Windows are the same
/// as the load factors' ([`BLOCKS_PER_WINDOW`] positions from the start):
/// windows that slide a block at a time found more bursts but also named
/// load the factors divided out of one window and not its neighbour's
/// (BENCHMARKS).
fn excess(series: &Series, order: &[usize], sc: &mut Scratch) -> Excess {
    sc.at.clear();
    sc.at.resize(order.len(), (0.0, 0u32));
    for (b, &pos) in order.iter().enumerate() {
        sc.at[pos] = (series.sum[b], series.n[b]);
    }
    sc.windows.clear();
    sc.windows.extend(sc.at.chunks(BLOCKS_PER_WINDOW).map(|w| {
        w.iter()
            .fold((0.0, 0u32), |(s, n), &(bs, bn)| (s + bs, n + bn))
    }));
    sc.means.clear();
    sc.means.extend(
        sc.windows
            .iter()
            .filter(|(_, n)| *n >= FLOOR_MIN_CALLS)
            .map(|(s, n)| s / f64::from(*n)),
    );
    if sc.means.is_empty() {
        return Excess::default();
    }
    let floor = floor_of(&mut sc.means);
    let above = |(s, n): (f64, u32)| (s - floor * f64::from(n)).max(0.0);
    // Squared, so that the same excess gathered in a few windows counts
    // for more than spread thin over many: a shuffle keeps the floor (most
    // windows still hold some quiet blocks) and with it the plain sum.
    let windows = (sc.windows.iter())
        .filter(|(_, n)| *n > 0)
        .map(|&w| above(w).powi(2) / f64::from(w.1))
        .sum();
    let runs = (sc.at.windows(2))
        .filter(|pair| pair[0].1 + pair[1].1 > 0)
        .map(|pair| above(pair[0]) * above(pair[1]) / f64::from(pair[0].1 + pair[1].1))
        .sum();
    Excess {
        windows,
        runs,
        floor,
    }
}

/// The burst statistics of one order of the blocks, and the floor.
#[derive(Default)]
struct Excess {
    windows: f64,
    runs: f64,
    floor: f64,
}

/// How much slower the blocks after some moment were than those before
/// it, with the blocks in time order `at` ([`place`]): the deepest the
/// running sum of excess over the run's mean goes below zero (which weighs
/// a moment by the calls on either side, most halfway), and the steepest
/// step up ([`steepest`], which weighs every moment alike).
fn steps(series: &Series, total: (f64, f64), at: &[usize]) -> [f64; 2] {
    let mean = total.0 / total.1.max(1.0);
    let mut run = 0.0f64;
    let mut deepest = 0.0f64;
    for &b in at.iter() {
        run += series.sum[b] - mean * f64::from(series.n[b]);
        deepest = deepest.min(run);
    }
    let blocks = at.iter().map(|&b| (series.sum[b], series.n[b]));
    [
        -deepest,
        steepest(blocks, total, TRIM).map_or(0.0, |s| s.size),
    ]
}

/// `at[pos]`: the block `order` places at position `pos` (block `b` at
/// position `order[b]`), so that the step statistics read the blocks in
/// time order.
fn place(order: &[usize], at: &mut [usize]) {
    for (b, &pos) in order.iter().enumerate() {
        at[pos] = b;
    }
}

/// Calls at the run's own spread that each side of a moment counts beside
/// its own, so that a side of a few alike calls does not pass for one that
/// never varies (a variance drawn towards the run's, as moderated
/// t-statistics do).
const PRIOR_CALLS: f64 = 5.0;

/// How far the mean of the calls `after` lies above that of the calls
/// `before`, in standard errors of the difference from each side's own
/// spread (Welch's statistic), each side's variance drawn towards `var`,
/// that of all the calls, by [`PRIOR_CALLS`]; 0 where a side has no calls.
fn rise_against_spread(before: Moments, after: Moments, var: f64) -> f64 {
    if before.calls <= 0.0 || after.calls <= 0.0 {
        return 0.0;
    }
    let side = |m: Moments| {
        let mean = m.mean();
        let own = (m.sumsq - m.sum * mean).max(0.0);
        (
            mean,
            (own + var * PRIOR_CALLS) / (m.calls + PRIOR_CALLS) / m.calls,
        )
    };
    let ((b, var_b), (a, var_a)) = (side(before), side(after));
    match var_b + var_a > 0.0 {
        true => (a - b) / (var_b + var_a).sqrt(),
        false => 0.0,
    }
}

/// The largest [`rise_against_spread`] among the moments [`steepest`]
/// looks at, with the blocks in time order `at`; `all` is the whole
/// series'.
fn step_against_spread(series: &Series, all: Moments, at: &[usize]) -> f64 {
    let var = all.var();
    let trim = trimmed(at.len(), TRIM);
    let last = at.len().saturating_sub(trim);
    let mut before = Moments::default();
    let mut best = 0.0f64;
    for (i, &b) in at.iter().enumerate() {
        if i >= trim && i <= last {
            best = best.max(rise_against_spread(before, all.minus(before), var));
        }
        before.add(series, b);
    }
    best
}

/// The blocks at either end of `blocks` where no step is looked for:
/// `share` of them, and at least a window's.
fn trimmed(blocks: usize, share: f64) -> usize {
    BLOCKS_PER_WINDOW.max((blocks as f64 * share).ceil() as usize)
}

/// A step up in a series: where, and how large.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    /// The first block after it.
    pub at: usize,
    /// How far the calls' mean after it lies above their mean before it,
    /// times √(N_before · N_after / N).
    size: f64,
}

/// The share of the blocks at either end where no step is looked for.
/// Scaled as it is, the steepest step is otherwise one window from an
/// end more often than anywhere else: a run's first moments, before its
/// load has built up, are quieter than the rest on every host, and one
/// quiet first window passed for a fault in a loaded world without one.
/// Tests for a change at an unknown moment trim 5 to 15 % (Andrews'
/// sup-F); at 15 % a fault from a tenth into the run on was found about
/// as rarely as without this statistic.
const TRIM: f64 = 0.1;

/// The largest step up among the moments at least [`TRIM`] of the blocks
/// (and a window's) from either end, of `blocks` ((sum, calls) in time
/// order) whose sum and calls in all are `total`. Scaled by the calls on
/// either side as a two-sample statistic is, so that a step a fifth into
/// the run (a fault present for most of it, its usual level the fault's)
/// weighs as much as one halfway does.
pub(super) fn steepest(
    blocks: impl ExactSizeIterator<Item = (f64, u32)>,
    total: (f64, f64),
    trim: f64,
) -> Option<Step> {
    let (sum, calls) = total;
    let trim = trimmed(blocks.len(), trim);
    let last = blocks.len().checked_sub(trim)?;
    let (mut s_before, mut n_before) = (0.0, 0.0);
    let mut best: Option<Step> = None;
    for (i, (s, n)) in blocks.enumerate() {
        if i >= trim && i <= last && n_before > 0.0 && n_before < calls {
            let n_after = calls - n_before;
            let rise = (sum - s_before) / n_after - s_before / n_before;
            let size = rise * (n_before * n_after / calls).sqrt();
            if size > best.map_or(0.0, |b| b.size) {
                best = Some(Step { at: i, size });
            }
        }
        s_before += s;
        n_before += f64::from(n);
    }
    best
}

/// Tests `series` (blocks in time order, [`BLOCKS_PER_WINDOW`] a window),
/// one of `candidates` tested at false discovery rate `fdr`. `tail` is
/// the tail view of a candidate whose faults slow a share of its calls
/// (see the module's doc): with it, its step and the means' step against
/// each side's spread join the test. The effect and the floor are the
/// series' own.
pub fn test(
    series: &Series,
    tail: Option<&Series>,
    candidates: usize,
    fdr: f64,
    rng: &mut impl Rng,
) -> Change {
    let blocks = series.n.len();
    debug_assert_eq!(blocks % BLOCKS_PER_WINDOW, 0);
    let views: Vec<&Series> = std::iter::once(series).chain(tail).collect();
    let totals: Vec<(f64, f64)> = (views.iter())
        .map(|v| (v.total(), v.calls() as f64))
        .collect();
    let spread = tail.map(|_| Moments::of(series));
    let mut order: Vec<usize> = (0..blocks).collect();
    let mut at = vec![0usize; blocks];
    let mut sc = Scratch::default();
    let floor = excess(series, &order, &mut sc).floor;
    let shapes = |order: &[usize], sc: &mut Scratch, at: &mut [usize]| -> Vec<f64> {
        let bursts = excess(series, order, sc);
        let mut x = vec![bursts.windows, bursts.runs];
        place(order, at);
        x.extend(
            views
                .iter()
                .zip(&totals)
                .flat_map(|(v, &total)| steps(v, total, at)),
        );
        x.extend(spread.map(|all| step_against_spread(series, all, at)));
        x
    };
    let real = shapes(&order, &mut sc, &mut at);
    if real.iter().all(|&x| x <= 0.0) {
        return Change {
            p: 1.0,
            effect: 0.0,
            floor,
            during: None,
        };
    }
    let p = permutation::p_value(real, candidates, fdr, &mut order, rng, |order| {
        shapes(order, &mut sc, &mut at)
    });
    let (effect, during) = effect::added(series);
    Change {
        p,
        effect,
        floor,
        during,
    }
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
        let t = Timeline::new(0, 59_999_999_999, 800);
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
            let c = test(&s, None, 1, 0.05, &mut rng);
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
            let c = test(&s, None, 1, 0.05, &mut rng);
            assert!(c.p < 0.005, "{c:?}");
            assert!(
                (c.effect - truth).abs() < 0.3 * truth,
                "{c:?} against {truth}"
            );
            // It says when: from about `from` to the end (window 19).
            let (first, last) = c.during.unwrap();
            assert!((from..=from + 3).contains(&first) && last >= 16, "{c:?}");
        }
    }

    #[test]
    fn a_share_of_calls_slowed_for_nine_tenths_of_the_run_is_found_with_its_size() {
        let mut rng = StdRng::seed_from_u64(2);
        // 30 % of calls +20 from window 2 of 20: the fault's level is the
        // windows' usual one, and only the first 40 calls were quiet.
        let (mut found, mut strong, mut sized) = (0, 0, 0);
        for seed in 20..40 {
            let (s, truth) = series(seed, 2, 20.0, 0.3);
            let c = test(&s, None, 1, 0.05, &mut rng);
            found += usize::from(c.p < 0.02);
            strong += usize::from(c.p < 0.005);
            sized += usize::from((c.effect - truth).abs() < 0.3 * truth);
        }
        // Measured: 20, 14 and 16; the running sum alone and the windows'
        // usual level as the quiet one: 4, 4 and 0. (From window 3 on, the
        // old test found all 20 too, 11 under 0.005, and sized 18.)
        assert!(
            found >= 17 && strong >= 10 && sized >= 13,
            "{found} {strong} {sized} of 20"
        );
    }

    /// A rarely called service: one to five calls a block (lognormal, σ
    /// 0.6), 30 % of them `extra` more from window `from` of 20 on.
    fn sparse(seed: u64, from: usize, extra: f64) -> Series {
        let mut rng = StdRng::seed_from_u64(seed);
        let t = Timeline::new(0, 59_999_999_999, 800);
        let noise = LogNormal::new(0.0, 0.6).unwrap();
        let mut s = Series::new(&t);
        for b in 0..t.blocks() {
            for _ in 0..rng.gen_range(1..6) {
                let mut v: f64 = noise.sample(&mut rng);
                if t.window_of_block(b) >= from && rng.gen_bool(0.3) {
                    v += extra;
                }
                s.add(b, v);
            }
        }
        s
    }

    #[test]
    fn a_share_of_a_sparse_services_calls_slowed_early_is_judged_by_each_sides_spread() {
        let mut rng = StdRng::seed_from_u64(9);
        // +10 (ten times the median) on 30 % of the calls from window 2
        // of 20: about 24 calls before, whose spread is a thirtieth of the
        // calls' after. Small enough a p-value to pass first among 30
        // candidates (p < 0.05 / 30).
        let found = (40..60)
            .filter(|&seed| {
                let s = sparse(seed, 2, 10.0);
                test(&s, Some(&s.tail(0.1)), 30, 0.05, &mut rng).p < 0.05 / 30.0
            })
            .count();
        // Measured: 12; the means and the tail without each side's own
        // spread: 0 (from window 3: 19 against 5).
        assert!(found >= 9, "{found} of 20");
        // Without the fault, still calibrated.
        let runs = 60;
        let small = (100..100 + runs)
            .filter(|&seed| {
                let s = sparse(seed, usize::MAX, 0.0);
                test(&s, Some(&s.tail(0.1)), 1, 0.05, &mut rng).p < 0.05
            })
            .count();
        assert!(small <= runs as usize / 10, "{small} of {runs}");
    }

    /// Calls of a steady service (lognormal, σ 0.3) with rare stalls
    /// (one call in `1/stall` waits 30 times as long, a pause of its host);
    /// `extra` added to `share` of the calls from window 10 of 20 on.
    fn stalled(seed: u64, stall: f64, extra: f64, share: f64) -> Series {
        let mut rng = StdRng::seed_from_u64(seed);
        let t = Timeline::new(0, 59_999_999_999, 800);
        let noise = LogNormal::new(0.0, 0.3).unwrap();
        let mut s = Series::new(&t);
        for b in 0..t.blocks() {
            for _ in 0..5 {
                let mut v: f64 = noise.sample(&mut rng);
                if rng.gen_bool(stall) {
                    v *= 30.0;
                }
                if t.window_of_block(b) >= 10 && rng.gen_bool(share) {
                    v += extra;
                }
                s.add(b, v);
            }
        }
        s
    }

    #[test]
    fn a_share_of_calls_slowed_under_rare_stalls_is_found_by_the_tail() {
        let mut rng = StdRng::seed_from_u64(5);
        // +1 (about the calls' median) on a fifth of the calls, where one
        // call in fifty stalls 30 times as long: the stalls drown it in the
        // window means, the tail finds it.
        let (mut by_means, mut by_tail) = (0, 0);
        for seed in 10..30 {
            let s = stalled(seed, 0.02, 1.0, 0.2);
            by_means += usize::from(test(&s, None, 1, 0.05, &mut rng).p < 0.01);
            by_tail += usize::from(test(&s, Some(&s.tail(0.1)), 1, 0.05, &mut rng).p < 0.01);
        }
        assert!(by_means <= 3 && by_tail >= 17, "{by_means} {by_tail} of 20");
        // And with the tail, stalls alone are still calibrated.
        let runs = 60;
        let small = (100..100 + runs)
            .filter(|&seed| {
                let s = stalled(seed, 0.02, 0.0, 0.0);
                test(&s, Some(&s.tail(0.1)), 1, 0.05, &mut rng).p < 0.05
            })
            .count();
        assert!(small <= runs as usize / 10, "{small} of {runs}");
    }

    /// A fault on for 4 blocks in every 13 (half a second in every second
    /// and a half, a host stalling on and off), over 11 windows of 4
    /// blocks: its bursts straddle windows. `extra` on every call in them.
    fn on_and_off(seed: u64, extra: f64) -> Series {
        let mut rng = StdRng::seed_from_u64(seed);
        let t = Timeline::new(0, 4_999_999_999, 440);
        let noise = LogNormal::new(0.0, 1.0).unwrap();
        let phase = rng.gen_range(0..13);
        let mut s = Series::new(&t);
        for b in 0..t.blocks() {
            for _ in 0..3 {
                let on = (b + phase) % 13 < 4;
                s.add(b, noise.sample(&mut rng) + if on { extra } else { 0.0 });
            }
        }
        s
    }

    #[test]
    fn a_fault_that_comes_and_goes_across_windows_is_found_by_its_runs() {
        let mut rng = StdRng::seed_from_u64(11);
        // Small enough a p-value to pass first among 50 candidates, in 7
        // runs of 10 or more (8 measured; the windows alone: none, their
        // p-values 0.004 to 0.2).
        let found = (0..10)
            .filter(|&seed| test(&on_and_off(seed, 10.0), None, 50, 0.05, &mut rng).p < 0.001)
            .count();
        assert!(found >= 7, "{found} of 10");
        // And the same noise without the fault stays calibrated.
        let runs = 100;
        let small = (100..100 + runs)
            .filter(|&seed| test(&on_and_off(seed, 0.0), None, 1, 0.05, &mut rng).p < 0.05)
            .count();
        assert!(small <= runs as usize / 10, "{small} of {runs}");
    }
}

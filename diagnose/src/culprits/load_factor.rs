//! What slows every candidate at once, the machine's load, per window;
//! and how much of it reaches each candidate.

use super::timeline::{median, quantile, Series, Timeline};

/// Candidates that must say how slow a window was for a factor there.
pub const MIN_SAYING: usize = 3;
/// A window's mean counts towards a load factor, or a candidate's
/// exposure to it, only with this many calls.
const FACTOR_MIN_CALLS: u32 = 3;
/// Two windows whose load differs by less (in the logarithm: about 10 %)
/// say nothing of how a candidate follows it.
const MIN_LOAD_SPREAD: f64 = 0.1;
/// Fewer pairs of windows that far apart leave the exposure at 1.
const MIN_SLOPES: usize = 5;
/// Only windows this close in time are paired: a fault that began at
/// some moment moves one or two near pairs, where over all pairs it would
/// pass for load wherever the load happened to trend.
const MAX_LAG: usize = 2;
/// How far candidates' exposures spread around the whole factor's 1: an
/// estimate is trusted as far as its own error is small against it.
const EXPOSURE_SPREAD: f64 = 0.3;
/// An exposure above this is a fault that came with the load, not the
/// load alone.
const MAX_EXPOSURE: f64 = 2.0;

/// What slows every candidate at once, per window: the machine's load.
/// For each candidate with calls in at least half the windows, its window
/// means over its own median window mean; the factor is the median of
/// those ratios across candidates (1 where fewer than [`MIN_SAYING`] say). A fault
/// moves one candidate, and the median across candidates ignores it; a
/// loaded machine moves them all, and dividing it out keeps it from
/// passing for a fault of each.
pub fn common_factor(t: &Timeline, series: &[&Series]) -> Vec<f64> {
    factor_at(t, series, 0.5)
}

/// As [`common_factor`], with the `q` quantile of the candidates' ratios
/// in place of their median: at `q` = 0.25 a window's factor is what three
/// in four candidates were slowed by at least, which a fault of a few
/// never reaches.
pub fn factor_at(t: &Timeline, series: &[&Series], q: f64) -> Vec<f64> {
    let identity: Vec<usize> = (0..t.blocks()).collect();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); t.windows];
    for s in series {
        let w = s.windows(&identity);
        let means: Vec<Option<f64>> = w
            .iter()
            .map(|&(sum, n)| (n >= FACTOR_MIN_CALLS).then(|| sum / f64::from(n)))
            .collect();
        let mut present: Vec<f64> = means.iter().flatten().copied().collect();
        if present.len() * 2 < t.windows {
            continue;
        }
        let level = median(&mut present);
        if level <= 0.0 {
            continue;
        }
        for (r, m) in ratios.iter_mut().zip(&means) {
            if let Some(m) = m {
                r.push(m / level);
            }
        }
    }
    across(ratios, q).into_iter().map(|f| f.max(1e-3)).collect()
}

/// [`common_factor`] for tails ([`Series::tail`]): per window, the median
/// across candidates of how many of their calls were in their tails over
/// how many their share there would put, each count given one more call
/// in the tail. A tail holds a few calls a window; without that one call
/// a window where most candidates happen to have none would divide by
/// zero, and with it a window of few calls stays near 1, leaving the
/// factor to the windows whose counts say something.
pub fn tail_factor(t: &Timeline, tails: &[&Series]) -> Vec<f64> {
    let identity: Vec<usize> = (0..t.blocks()).collect();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); t.windows];
    for s in tails {
        let share = s.mean();
        for (r, (k, n)) in ratios.iter_mut().zip(s.windows(&identity)) {
            if n >= 3 {
                r.push((k + 1.0) / (share * f64::from(n) + 1.0));
            }
        }
    }
    across(ratios, 0.5)
}

/// Per window, the `q` quantile of the candidates' ratios; 1 (no load)
/// where fewer than three candidates say.
fn across(ratios: Vec<Vec<f64>>, q: f64) -> Vec<f64> {
    ratios
        .into_iter()
        .map(|mut r| match r.len() >= MIN_SAYING {
            true => quantile(&mut r, q),
            false => 1.0,
        })
        .collect()
}

impl Series {
    /// Divided by as much of the machine's load `factor` as reaches it
    /// ([`Series::exposure`]).
    pub fn unloaded(&self, t: &Timeline, factor: &[f64]) -> Series {
        let exposure = self.exposure(factor);
        let felt: Vec<f64> = factor.iter().map(|f| f.powf(exposure)).collect();
        self.scaled(t, &felt)
    }

    /// How much of the machine's load `factor` (per window) reaches this
    /// series: the slope of its window means' logarithms on the factor's.
    /// Candidates feel a loaded machine each in their own measure: a
    /// service whose many request threads contend for one interpreter far
    /// more than a worker handling one job at a time. Dividing each by
    /// the whole factor over-corrects the less exposed ones, printing the
    /// others' load onto them in reverse, which the change test then takes
    /// for a fault (a shop worker named in a run with no fault). The slope
    /// is Theil–Sen's, the median of the slopes between pairs of windows,
    /// so a fault in some windows moves it little; 1 (the whole factor)
    /// where the factor moved too little to say.
    pub fn exposure(&self, factor: &[f64]) -> f64 {
        let identity: Vec<usize> = (0..self.n.len()).collect();
        let points: Vec<Option<(f64, f64)>> = (self.windows(&identity).into_iter().zip(factor))
            .map(|((s, n), f)| {
                (n >= FACTOR_MIN_CALLS && s > 0.0).then(|| (f.ln(), (s / f64::from(n)).ln()))
            })
            .collect();
        let mut slopes: Vec<f64> = Vec::new();
        for (i, &p0) in points.iter().enumerate() {
            for &p1 in points.iter().skip(i + 1).take(MAX_LAG) {
                if let (Some((x0, y0)), Some((x1, y1))) = (p0, p1) {
                    if (x1 - x0).abs() >= MIN_LOAD_SPREAD {
                        slopes.push((y1 - y0) / (x1 - x0));
                    }
                }
            }
        }
        if slopes.len() < MIN_SLOPES {
            return 1.0;
        }
        let slope = median(&mut slopes);
        let mut spread: Vec<f64> = slopes.iter().map(|s| (s - slope).abs()).collect();
        // The median's standard error, from the slopes' own spread (MAD
        // as a standard deviation, times the median's 1.25 against the
        // mean's): a fault's windows scatter the slopes, and its estimate
        // then leans back to the whole factor.
        let se = 1.25 * 1.4826 * median(&mut spread) / (slopes.len() as f64).sqrt();
        let trust = EXPOSURE_SPREAD.powi(2) / (EXPOSURE_SPREAD.powi(2) + se * se);
        (1.0 + trust * (slope - 1.0)).clamp(0.0, MAX_EXPOSURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_on_every_candidate_is_the_common_factor_and_one_fault_is_not() {
        let t = Timeline::new(0, 9_999_999_999, 240);
        let mut all = Vec::new();
        for c in 0..5 {
            let mut s = Series::new(&t);
            for b in 0..t.blocks() {
                let w = t.window_of_block(b);
                // Windows 3 and 4 are twice as slow for everyone; candidate
                // 0 is also 5× slower from window 4 on.
                let load = if (3..5).contains(&w) { 2.0 } else { 1.0 };
                let fault = if c == 0 && w >= 4 { 5.0 } else { 1.0 };
                for _ in 0..3 {
                    s.add(b, 10.0 * (c + 1) as f64 * load * fault);
                }
            }
            all.push(s);
        }
        let refs: Vec<&Series> = all.iter().collect();
        let g = common_factor(&t, &refs);
        assert_eq!(g.len(), t.windows);
        assert!(
            (g[3] - 2.0).abs() < 1e-9 && (g[4] - 2.0).abs() < 1e-9,
            "{g:?}"
        );
        assert!(
            (g[0] - 1.0).abs() < 1e-9 && (g[5] - 1.0).abs() < 1e-9,
            "{g:?}"
        );
    }

    /// A series whose window `w` is `level × load[w]^exposure`, times
    /// `fault` from window `from` on, a little noise on each call.
    fn exposed(t: &Timeline, load: &[f64], exposure: f64, fault: (usize, f64)) -> Series {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut s = Series::new(t);
        for b in 0..t.blocks() {
            let w = t.window_of_block(b);
            let f = if w >= fault.0 { fault.1 } else { 1.0 };
            for _ in 0..3 {
                s.add(
                    b,
                    10.0 * load[w].powf(exposure) * f * rng.gen_range(0.95..1.05),
                );
            }
        }
        s
    }

    /// The largest window mean over the smallest.
    fn spread(s: &Series) -> f64 {
        let identity: Vec<usize> = (0..s.n.len()).collect();
        let means = s
            .windows(&identity)
            .into_iter()
            .map(|(sum, n)| sum / f64::from(n));
        let (lo, hi) = means.fold((f64::MAX, 0.0f64), |(l, h), m| (l.min(m), h.max(m)));
        hi / lo
    }

    #[test]
    fn each_series_is_divided_by_as_much_of_the_load_as_reaches_it() {
        let t = Timeline::new(0, 9_999_999_999, 240);
        // The machine's load wanders between 1 and 2.6.
        let load: Vec<f64> = (0..t.windows)
            .map(|w| 1.0 + 0.8 * (1.0 + (w as f64 * 1.3).sin()))
            .collect();
        // A worker that feels half of it: its own exposure, and nothing
        // of the load left once divided by that much.
        let worker = exposed(&t, &load, 0.5, (t.windows, 1.0));
        let e = worker.exposure(&load);
        assert!((e - 0.5).abs() < 0.1, "{e}");
        let means = spread(&worker.unloaded(&t, &load));
        assert!(means < 1.15, "{means}");
        // Divided by the whole factor, it would swing the other way.
        let whole = spread(&worker.scaled(&t, &load));
        assert!(whole > 1.4, "{whole}");
        // A service that feels all of it and is 3× slower from halfway:
        // the fault does not pass for exposure.
        let slowed = exposed(&t, &load, 1.0, (t.windows / 2, 3.0));
        let e = slowed.exposure(&load);
        assert!((e - 1.0).abs() < 0.25, "{e}");
        // A load that hardly moves says nothing: the whole factor.
        let flat = vec![1.02; t.windows];
        assert_eq!(worker.exposure(&flat), 1.0);
    }

    #[test]
    fn a_stall_of_most_is_the_low_quantile_and_a_fault_of_a_few_is_not() {
        let t = Timeline::new(0, 9_999_999_999, 240);
        let mut all = Vec::new();
        for c in 0..8 {
            let mut s = Series::new(&t);
            for b in 0..t.blocks() {
                let w = t.window_of_block(b);
                // Window 2 stalls all eight 5×; from window 4 on, two of
                // them (one in four) are 5× slower on their own.
                let stall = if w == 2 { 5.0 } else { 1.0 };
                let fault = if c < 2 && w >= 4 { 5.0 } else { 1.0 };
                for _ in 0..3 {
                    s.add(b, 10.0 * stall * fault);
                }
            }
            all.push(s);
        }
        let refs: Vec<&Series> = all.iter().collect();
        let low = factor_at(&t, &refs, 0.25);
        assert!((low[2] - 5.0).abs() < 1e-9, "{low:?}");
        assert!((low[4] - 1.0).abs() < 1e-9, "{low:?}");
        assert!((low[0] - 1.0).abs() < 1e-9, "{low:?}");
    }

    #[test]
    fn stalls_on_every_service_leave_the_tails_factor_and_one_fault_in_a_tail() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let t = Timeline::new(0, 19_999_999_999, 800);
        let mut rng = StdRng::seed_from_u64(9);
        // Six services, calls near 10; from window 10 of 20 one call in
        // ten stalls 30× on every one of them, and service 0 also adds 15
        // to a fifth of its calls.
        let tails: Vec<Series> = (0..6)
            .map(|c| {
                let mut s = Series::new(&t);
                for b in 0..t.blocks() {
                    let late = t.window_of_block(b) >= 10;
                    for _ in 0..20 {
                        let mut v = 10.0 + rng.gen::<f64>();
                        if late && rng.gen_bool(0.1) {
                            v *= 30.0;
                        }
                        if late && c == 0 && rng.gen_bool(0.2) {
                            v += 15.0;
                        }
                        s.add(b, v);
                    }
                }
                s.tail(0.1)
            })
            .collect();
        let factor = tail_factor(&t, &tails.iter().collect::<Vec<_>>());
        // The share in the tail per window, and early and late.
        let identity: Vec<usize> = (0..t.blocks()).collect();
        let shares = |s: &Series| -> Vec<f64> {
            (s.windows(&identity).iter())
                .map(|&(sum, n)| sum / f64::from(n))
                .collect()
        };
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let halves = |s: &Series| {
            let m = shares(&s.scaled(&t, &factor));
            (mean(&m[..10]), mean(&m[10..]))
        };
        // Unscaled, the stalls alone double the others' late tails; the
        // factor takes most of that out.
        for s in &tails[1..] {
            let raw = shares(s);
            assert!(mean(&raw[10..]) > 2.0 * mean(&raw[..10]), "{raw:?}");
            let (early, late) = halves(s);
            assert!(late < 1.3 * early, "{early} {late}");
        }
        let (early, late) = halves(&tails[0]);
        assert!(late > 2.0 * early, "{early} {late}");
    }
}

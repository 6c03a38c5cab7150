//! A healthy period to compare with. A fault present for the whole run
//! leaves no quiet moment in it to be measured from, and the change test
//! ([`super::change`]) rightly finds nothing; the same services' calls in
//! a period the user knows was healthy are that quiet moment.
//!
//! Only services and stores are compared: their measure (a service's own
//! work, a store's call time) is the same with INT or without, and a
//! baseline is read from its traces alone. A host's residual is not: with
//! INT the fabric's time is taken out of it, without INT it is not.
//!
//! Two captures of the same healthy application differ: another load on
//! the machine, another moment of the day. What slows every service alike
//! is divided out as the run's own load is ([`load_factor`]), over the
//! baseline's windows and the run's together. What is left still differs
//! by a few per cent a service, and with hundreds of calls a few per cent
//! is significant: a service counts as slower only beyond a margin
//! ([`MARGIN`]). It is compared by a block permutation test of the run's
//! blocks against the baseline's (the blocks of both shuffled between the
//! two periods), on the calls' mean and on the share of them in the
//! slowest tail, the smaller p-value taken as the change test takes its
//! shapes' ([`super::permutation`]).

use super::candidates::{self, Candidate};
use super::load_factor::{self, MIN_SAYING};
use super::permutation;
use super::requests::Requests;
use super::timeline::{Series, Timeline, BLOCKS_PER_WINDOW};
use super::{CulpritKind, Inputs};
use rand::Rng;
use std::collections::HashMap;

/// A baseline longer than this many of the run's windows is cut into
/// longer blocks: the test's cost grows with the blocks.
const MAX_WINDOWS_PER_RUN_WINDOW: usize = 4;

/// How much slower than the baseline a service's calls may be and still
/// count as the same: the run's calls are divided by 1 + this before they
/// are compared. Captures of the console app minutes and hours apart
/// (BENCHMARKS) differed by up to 5 % in a service's mean work, which
/// passed the test without a margin in two of twelve pairs.
pub const MARGIN: f64 = 0.1;

/// What comparing a candidate with the baseline found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Compared {
    /// One-sided: the run's calls slower than the baseline's.
    pub p: f64,
    /// The run's calls' mean over the baseline's, times the run's calls
    /// (ns); 0 where the run was not slower.
    pub effect: f64,
    /// The baseline's mean per call, ns.
    pub level: f64,
}

/// The baseline's services and stores, each on the baseline's blocks, and
/// the load both periods share.
pub(super) struct Healthy {
    series: HashMap<(CulpritKind, String), Series>,
    /// The baseline's windows, then the run's.
    both: Timeline,
    /// Where the run's blocks begin.
    split: usize,
    /// Per window of `both`: what slowed every service.
    load: Vec<f64>,
    /// Per window of `both`: 1 + [`MARGIN`] in the run's, 1 in the
    /// baseline's.
    margin: Vec<f64>,
    /// The share of a candidate's slowest calls its tail view counts.
    tail: f64,
    /// Per window of `both`: what fattened every service's tail.
    tail_load: Vec<f64>,
}

/// Whether a candidate's measure is the same with INT and without.
fn comparable(kind: CulpritKind) -> bool {
    matches!(kind, CulpritKind::Service | CulpritKind::Dependency)
}

impl Healthy {
    /// The baseline of `inp`, if it was given and holds requests, on
    /// blocks as long as the run's timeline `t`'s; `run` are the run's
    /// candidates, and `tail` the share of a candidate's slowest calls its
    /// tail view counts.
    pub fn of(inp: &Inputs<'_>, t: &Timeline, run: &[Candidate], tail: f64) -> Option<Self> {
        let healthy = inp.baseline.as_deref()?;
        let requests = Requests::of(healthy.edges, healthy.entries)?;
        let max_windows = t.windows * MAX_WINDOWS_PER_RUN_WINDOW;
        let tb = Timeline::with_blocks(requests.first, requests.last, t.block_ns, max_windows);
        let series: HashMap<(CulpritKind, String), Series> = candidates::collect(healthy, &tb)
            .into_iter()
            .filter(|c| comparable(c.kind) && c.series.calls() > 0)
            .map(|c| ((c.kind, c.name), c.series))
            .collect();
        let both = Timeline {
            start: tb.start,
            block_ns: t.block_ns,
            windows: tb.windows + t.windows,
        };
        let split = tb.blocks();
        let margin = (0..both.windows)
            .map(|w| match w * BLOCKS_PER_WINDOW >= split {
                true => 1.0 + MARGIN,
                false => 1.0,
            })
            .collect();
        let mut h = Healthy {
            series,
            both,
            split,
            load: vec![1.0; both.windows],
            margin,
            tail,
            tail_load: vec![1.0; both.windows],
        };
        let joined = |kinds: &[CulpritKind]| -> Vec<Series> {
            (run.iter())
                .filter(|c| kinds.contains(&c.kind))
                .filter_map(|c| h.joined(c))
                .collect()
        };
        // Set by the services, as the run's own factor is; by their stores
        // too where there are too few services to say.
        let mut sayers = joined(&[CulpritKind::Service]);
        if sayers.len() < MIN_SAYING {
            sayers = joined(&[CulpritKind::Service, CulpritKind::Dependency]);
        }
        let load = load_factor::common_factor(&h.both, &sayers.iter().collect::<Vec<_>>());
        h.load = load;
        // A loaded machine fattens every service's tail more than it moves
        // their means: the tails' own factor, as for the run's tails.
        let tails: Vec<Series> = (run.iter())
            .filter(|c| c.kind == CulpritKind::Service)
            .filter_map(|c| Some(h.within(&h.unloaded(c)?).tail(tail)))
            .collect();
        h.tail_load = load_factor::tail_factor(&h.both, &tails.iter().collect::<Vec<_>>());
        Some(h)
    }

    /// Whether `c` is compared with the baseline: a service or a store that
    /// made calls there.
    pub fn compares(&self, c: &Candidate) -> bool {
        comparable(c.kind) && self.series.contains_key(&(c.kind, c.name.clone()))
    }

    /// `c`'s calls in the baseline, then in the run.
    fn joined(&self, c: &Candidate) -> Option<Series> {
        let before = self.series.get(&(c.kind, c.name.clone()))?;
        Some(before.then(&c.series))
    }

    /// [`Self::joined`], the load divided out.
    fn unloaded(&self, c: &Candidate) -> Option<Series> {
        Some(self.joined(c)?.unloaded(&self.both, &self.load))
    }

    /// `unloaded`, the run's calls divided by the margin.
    fn within(&self, unloaded: &Series) -> Series {
        unloaded.scaled(&self.both, &self.margin)
    }

    /// `c` compared with its calls in the baseline (`None` where it made
    /// none there or is not of a kind compared); one of `candidates`
    /// tested at false discovery rate `fdr`.
    pub fn compare(
        &self,
        c: &Candidate,
        candidates: usize,
        fdr: f64,
        rng: &mut impl Rng,
    ) -> Option<Compared> {
        if !self.compares(c) || c.series.calls() == 0 {
            return None;
        }
        let unloaded = self.unloaded(c)?;
        let within = self.within(&unloaded);
        let tail = within.tail(self.tail).scaled(&self.both, &self.tail_load);
        let views = [tail, within];
        let mut order: Vec<usize> = (0..self.both.blocks()).collect();
        let rises = |order: &[usize]| -> Vec<f64> {
            (views.iter()).map(|v| rise(v, order, self.split)).collect()
        };
        let real = rises(&order);
        let [healthy, run] = halves(&unloaded, &order, self.split);
        let level = healthy.0 / healthy.1.max(1.0);
        let effect = (run.0 - level * run.1).max(0.0);
        let p = match real.iter().any(|&x| x > 0.0) {
            true => permutation::p_value(real, candidates, fdr, &mut order, rng, rises),
            false => 1.0,
        };
        Some(Compared { p, effect, level })
    }
}

/// (sum, calls) of the blocks placed before position `split` by `order`
/// (block `b` at position `order[b]`), and of those after it.
fn halves(s: &Series, order: &[usize], split: usize) -> [(f64, f64); 2] {
    let mut h = [(0.0, 0.0); 2];
    for (b, &pos) in order.iter().enumerate() {
        let side = &mut h[usize::from(pos >= split)];
        side.0 += s.sum[b];
        side.1 += f64::from(s.n[b]);
    }
    h
}

/// How far the mean of the calls placed after `split` lies above that of
/// those before it, times √(N_before · N_after / N): a two-sample
/// statistic, whatever the two periods' lengths.
fn rise(s: &Series, order: &[usize], split: usize) -> f64 {
    let [(s0, n0), (s1, n1)] = halves(s, order, split);
    if n0 == 0.0 || n1 == 0.0 {
        return 0.0;
    }
    (s1 / n1 - s0 / n0) * (n0 * n1 / (n0 + n1)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// Calls of one candidate over `blocks` blocks, about `per_block` a
    /// block: work of 1 ms ± 30 %, and `share` of them `extra` ms more.
    fn calls(rng: &mut StdRng, blocks: usize, extra: f64, share: f64) -> Series {
        let mut s = Series {
            sum: vec![0.0; blocks],
            sumsq: vec![0.0; blocks],
            n: vec![0; blocks],
            values: Vec::new(),
        };
        for b in 0..blocks {
            for _ in 0..rng.gen_range(2..8) {
                let mut v = 1e6 * rng.gen_range(0.7..1.3);
                if rng.gen_bool(share) {
                    v += extra * 1e6;
                }
                s.add(b, v);
            }
        }
        s
    }

    /// What comparing found, and the run's calls.
    fn compared(seed: u64, extra: f64, share: f64) -> (Compared, f64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let t = Timeline::new(0, 20_000_000_000 - 1, 2000);
        let healthy = calls(&mut rng, 40, 0.0, 0.0);
        let mut c = Candidate::new(CulpritKind::Service, "c".into(), &t, None);
        c.series = calls(&mut rng, t.blocks(), extra, share);
        let windows = 10 + t.windows;
        let b = Healthy {
            series: HashMap::from([((c.kind, c.name.clone()), healthy)]),
            both: Timeline { windows, ..t },
            split: 40,
            load: vec![1.0; windows],
            margin: (0..windows)
                .map(|w| if w < 10 { 1.0 } else { 1.1 })
                .collect(),
            tail: 0.1,
            tail_load: vec![1.0; windows],
        };
        let calls = c.series.calls() as f64;
        (b.compare(&c, 1, 0.05, &mut rng).unwrap(), calls)
    }

    /// A service slowed by 5 ms on a fifth of its calls for the whole
    /// run: nothing in the run is quiet, the baseline is, and the time it
    /// added is found within a tenth.
    #[test]
    fn a_fault_present_for_the_whole_run_is_found_against_the_baseline() {
        for seed in 0..5 {
            let (found, calls) = compared(seed, 5.0, 0.2);
            assert!(found.p < 1e-3, "seed {seed}: {found:?}");
            let truth = 5e6 * 0.2 * calls;
            assert!(
                (found.effect - truth).abs() < 0.25 * truth,
                "seed {seed}: {} of {truth}",
                found.effect
            );
            assert!((found.level / 1e6 - 1.0).abs() < 0.05, "{found:?}");
        }
    }

    /// The same calls in both periods: p-values spread as chance spreads
    /// them, rarely below 5 %.
    #[test]
    fn the_same_service_in_both_periods_is_rarely_different() {
        let small = (0..40)
            .map(|seed| compared(100 + seed, 0.0, 0.0).0)
            .filter(|c| c.p < 0.05)
            .count();
        assert!(small <= 5, "{small} of 40 below 5 %");
    }
}

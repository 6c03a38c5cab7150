//! The analysed span of time cut into windows, and each window into
//! blocks: the units a culprit's evidence is summed over and compared.
//!
//! A fault changes something at a moment (a service slowed from halfway,
//! a link congested in bursts), so its evidence is concentrated in time;
//! noise, however heavy, is spread over the whole run. Windows are where
//! a candidate's level is compared with its quietest periods; blocks,
//! shorter, are what the permutation test moves between windows, so that
//! evidence correlated over a few hundred milliseconds (a request's calls,
//! a scheduler stall) moves together and does not pass for a change.

/// Blocks per window.
pub const BLOCKS_PER_WINDOW: usize = 4;
/// Requests a window should hold at the least (fewer windows otherwise).
const REQUESTS_PER_WINDOW: usize = 40;
const MIN_WINDOWS: usize = 6;
const MAX_WINDOWS: usize = 40;
/// A block lasts at least this long, ns: evidence stays correlated over
/// a request's calls and between INT probes (a queue is interpolated
/// between samples tens of ms apart), and blocks shorter than that would
/// carry it into their neighbours, which the shuffles do not keep.
const MIN_BLOCK_NS: i64 = 100_000_000;

/// Windows and blocks over `[start, start + blocks × block_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeline {
    pub start: i64,
    pub block_ns: i64,
    pub windows: usize,
}

impl Timeline {
    /// Enough windows that each holds about [`REQUESTS_PER_WINDOW`] of
    /// `requests` requests, spread over times `first..=last`.
    pub fn new(first: i64, last: i64, requests: usize) -> Self {
        let span = (last.saturating_sub(first)).max(1).saturating_add(1);
        let long = (span / (MIN_BLOCK_NS * BLOCKS_PER_WINDOW as i64)) as usize;
        let windows = (requests / REQUESTS_PER_WINDOW)
            .min(long)
            .clamp(MIN_WINDOWS, MAX_WINDOWS);
        let blocks = (windows * BLOCKS_PER_WINDOW) as i64;
        Timeline {
            start: first,
            block_ns: (span + blocks - 1) / blocks,
            windows,
        }
    }

    /// `[first, last]` cut into blocks of `block_ns` (another timeline's,
    /// so that blocks of both weigh alike), or longer ones where that
    /// would take more than `max_windows` windows.
    pub fn with_blocks(first: i64, last: i64, block_ns: i64, max_windows: usize) -> Self {
        let span = (last.saturating_sub(first)).max(0).saturating_add(1);
        let window_ns = block_ns.max(1) * BLOCKS_PER_WINDOW as i64;
        let windows = ((span + window_ns - 1) / window_ns).clamp(1, max_windows.max(1) as i64);
        let blocks = windows * BLOCKS_PER_WINDOW as i64;
        Timeline {
            start: first,
            block_ns: ((span + blocks - 1) / blocks).max(block_ns),
            windows: windows as usize,
        }
    }

    pub fn blocks(&self) -> usize {
        self.windows * BLOCKS_PER_WINDOW
    }

    /// The block holding time `t` (times outside the span go to its ends).
    pub fn block(&self, t: i64) -> usize {
        let b = (t.saturating_sub(self.start)) / self.block_ns.max(1);
        b.clamp(0, self.blocks() as i64 - 1) as usize
    }

    pub fn window_of_block(&self, b: usize) -> usize {
        b / BLOCKS_PER_WINDOW
    }

    /// When window `k` begins, in seconds after the first request (to
    /// 0.1 s).
    pub fn window_start_s(&self, k: usize) -> f64 {
        let ns = (k * BLOCKS_PER_WINDOW) as f64 * self.block_ns as f64;
        (ns / 1e8).round() / 10.0
    }
}

/// One candidate's evidence per block: the sum of its per-call values,
/// of their squares, and the number of calls; and each call's value with
/// its block, for the tests that look at calls rather than means.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub sum: Vec<f64>,
    pub sumsq: Vec<f64>,
    pub n: Vec<u32>,
    pub values: Vec<(u32, f64)>,
}

impl Series {
    pub fn new(t: &Timeline) -> Self {
        Series::zeros(t.blocks())
    }

    fn zeros(blocks: usize) -> Self {
        Series {
            sum: vec![0.0; blocks],
            sumsq: vec![0.0; blocks],
            n: vec![0; blocks],
            values: Vec::new(),
        }
    }

    pub fn add(&mut self, block: usize, value: f64) {
        self.sum[block] += value;
        self.sumsq[block] += value * value;
        self.n[block] += 1;
        self.values.push((block as u32, value));
    }

    pub fn calls(&self) -> u64 {
        self.n.iter().map(|&n| u64::from(n)).sum()
    }

    /// The sum of every call's value.
    pub fn total(&self) -> f64 {
        self.sum.iter().sum()
    }

    /// The mean value per call (0 without calls).
    pub fn mean(&self) -> f64 {
        self.total() / self.calls().max(1) as f64
    }

    /// Per window: (sum, calls), with block `b` in the window
    /// `order[b] / BLOCKS_PER_WINDOW` (the identity order is the real one).
    pub fn windows(&self, order: &[usize]) -> Vec<(f64, u32)> {
        let mut w = vec![(0.0, 0u32); order.len() / BLOCKS_PER_WINDOW];
        for (b, &at) in order.iter().enumerate() {
            let slot = &mut w[at / BLOCKS_PER_WINDOW];
            slot.0 += self.sum[b];
            slot.1 += self.n[b];
        }
        w
    }

    /// Each window's mean per call in ms (`None` for an empty window), for
    /// the debug log.
    pub fn window_means_ms(&self) -> Vec<Option<f64>> {
        let identity: Vec<usize> = (0..self.n.len()).collect();
        self.windows(&identity)
            .into_iter()
            .map(|(s, n)| (n > 0).then(|| (s / f64::from(n) / 1e4).round() / 1e2))
            .collect()
    }

    /// This series' blocks, then `after`'s: two periods on one line.
    pub fn then(&self, after: &Series) -> Series {
        let shift = self.n.len() as u32;
        let cat = |a: &[f64], b: &[f64]| [a, b].concat();
        Series {
            sum: cat(&self.sum, &after.sum),
            sumsq: cat(&self.sumsq, &after.sumsq),
            n: [&self.n[..], &after.n[..]].concat(),
            values: (self.values.iter().copied())
                .chain(after.values.iter().map(|&(b, v)| (b + shift, v)))
                .collect(),
        }
    }

    /// Each block's values divided by its window's factor.
    pub fn scaled(&self, t: &Timeline, factor: &[f64]) -> Series {
        let f = |b: usize| factor[t.window_of_block(b)];
        Series {
            sum: self.sum.iter().enumerate().map(|(b, s)| s / f(b)).collect(),
            sumsq: (self.sumsq.iter().enumerate())
                .map(|(b, s)| s / (f(b) * f(b)))
                .collect(),
            n: self.n.clone(),
            values: (self.values.iter())
                .map(|&(b, v)| (b, v / f(b as usize)))
                .collect(),
        }
    }

    /// The calls in the run's slowest `share`, per block: 1 for a call
    /// above the run's `1 - share` quantile, 0 for the others. A fault
    /// that slows a share of a candidate's calls moves them into its tail
    /// whatever the size of the rest's noise, where in a mean one heavy
    /// outlier weighs as much as many slowed calls.
    pub fn tail(&self, share: f64) -> Series {
        let mut sorted: Vec<f64> = self.values.iter().map(|&(_, v)| v).collect();
        let cut = quantile(&mut sorted, 1.0 - share);
        let mut tail = Series::zeros(self.n.len());
        for &(b, v) in &self.values {
            let above = f64::from(u8::from(v > cut));
            tail.sum[b as usize] += above;
            tail.sumsq[b as usize] += above;
            tail.n[b as usize] += 1;
        }
        tail
    }
}

/// Some calls' sum, sum of squares and number: what a mean and a spread
/// are read from, summed block by block.
#[derive(Debug, Clone, Copy, Default)]
pub struct Moments {
    pub sum: f64,
    pub sumsq: f64,
    pub calls: f64,
}

impl Moments {
    pub fn of(series: &Series) -> Self {
        Moments {
            sum: series.total(),
            sumsq: series.sumsq.iter().sum(),
            calls: series.calls() as f64,
        }
    }

    /// Adds block `b` of `series`.
    pub fn add(&mut self, series: &Series, b: usize) {
        self.sum += series.sum[b];
        self.sumsq += series.sumsq[b];
        self.calls += f64::from(series.n[b]);
    }

    pub fn plus(self, other: Moments) -> Moments {
        Moments {
            sum: self.sum + other.sum,
            sumsq: self.sumsq + other.sumsq,
            calls: self.calls + other.calls,
        }
    }

    pub fn minus(self, part: Moments) -> Moments {
        Moments {
            sum: self.sum - part.sum,
            sumsq: self.sumsq - part.sumsq,
            calls: self.calls - part.calls,
        }
    }

    /// The calls' mean (NaN without calls: callers look at `calls` first).
    pub fn mean(self) -> f64 {
        self.sum / self.calls
    }

    /// The calls' variance (0 without calls).
    pub fn var(self) -> f64 {
        match self.calls > 0.0 {
            true => (self.sumsq / self.calls - (self.sum / self.calls).powi(2)).max(0.0),
            false => 0.0,
        }
    }
}

/// The quiet level of some windows' levels: their lower quartile (rank
/// `(len - 1) / 4`), which a change present in up to three quarters of
/// them leaves quiet windows to set; 0 for none.
pub fn floor_of(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let k = (v.len() - 1) / 4;
    *v.select_nth_unstable_by(k, f64::total_cmp).1
}

pub fn median(v: &mut [f64]) -> f64 {
    quantile(v, 0.5)
}

/// The element at rank `q × len` (rounded down), 0 for an empty slice.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = ((v.len() as f64 * q) as usize).min(v.len() - 1);
    *v.select_nth_unstable_by(m, f64::total_cmp).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_span_and_windows_group_them() {
        const S: i64 = 1_000_000_000;
        let t = Timeline::new(0, 10 * S - 1, 400);
        assert_eq!(t.windows, 10);
        assert_eq!(t.blocks(), 40);
        assert_eq!(t.block(0), 0);
        assert_eq!(t.block(10 * S - 1), 39);
        assert_eq!(t.block(-5), 0);
        assert_eq!(t.block(50 * S), 39);
        assert_eq!(t.window_of_block(7), 1);
        // Many requests in a short run: blocks no shorter than 100 ms.
        let short = Timeline::new(0, 4_800_000_000 - 1, 4000);
        assert_eq!((short.windows, short.block_ns), (12, 100_000_000));
    }
}

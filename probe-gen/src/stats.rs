//! What a run did: counts, and how late packets left against their deadlines.

use std::time::Duration;

/// Log-scaled histogram of lateness (ns), cheap enough to update per packet.
///
/// Bucket `b` holds values in `[2^(b-1), 2^b)` (bucket 0 holds 0), so
/// quantiles are exact to within a factor of two: enough to tell a 2 µs
/// scheduler from a 200 µs one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lateness {
    buckets: [u64; 65],
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Self {
            buckets: [0; 65],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    pub fn record(&mut self, ns: u64) {
        self.buckets[(u64::BITS - ns.leading_zeros()) as usize] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.sum_ns as f64 / self.count as f64
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Upper bound of the bucket holding quantile `q` (0..=1).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        let rank = (q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64;
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank.max(1) {
                return if b == 0 { 0 } else { (1u64 << (b - 1)) * 2 - 1 }.min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// Counts so far; handed to the progress callback and returned at the end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub elapsed: Duration,
    /// Frames the transport accepted.
    pub sent: u64,
    /// Frames the transport refused (each is lost, not retried).
    pub errors: u64,
    /// Frames sent per flow (per path for probes).
    pub sent_per_flow: Vec<u64>,
    pub lateness: Lateness,
    /// True if the run ended because it was asked to stop (Ctrl-C).
    pub interrupted: bool,
}

impl Report {
    /// Achieved rate over the whole run.
    pub fn pps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.sent as f64 / s
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_factor_of_two() {
        let mut l = Lateness::default();
        for v in 1..=1000u64 {
            l.record(v * 1000);
        }
        l.record(0);
        assert_eq!(l.count(), 1001);
        assert_eq!(l.max_ns(), 1_000_000);
        let p50 = l.quantile_ns(0.5);
        assert!((500_000..=1_000_000).contains(&p50), "{p50}");
        let p99 = l.quantile_ns(0.99);
        assert!((990_000..=1_000_000).contains(&p99), "{p99}");
        assert_eq!(l.quantile_ns(0.0), 0);
        assert!((l.mean_ns() - 500_000.0).abs() < 1.0);
    }
}
